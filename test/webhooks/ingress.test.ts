/**
 * Vendor webhook ingress bounds (issue 37, item 4), over HTTP: a body larger than
 * SWITCHBOARD_WEBHOOK_BODY_LIMIT_BYTES is 413 before any signature check; at most
 * SWITCHBOARD_WEBHOOK_QUEUE_LIMIT webhook requests are in flight per process, counted from their
 * arrival — requests still sending their (unverified) bodies count — and more are 503
 * webhook_queue_full with Retry-After without their bodies being read; slots free up when the
 * held requests go away. Not storage-related: SQLite only.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../service/helpers.ts';

const HOOK = '/api/v1/webhooks/intercom';

describe('webhook ingress bounds', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('sqlite', {
      config: {
        webhookQueueLimit: 2,
        webhookBodyLimitBytes: 2048,
        connectorTypes: { intercom: { oauth: { clientId: 'c', clientSecret: 's' } }, dropbox: { oauth: { clientId: 'c', clientSecret: 's' } } },
      },
    });
  }, 120_000);
  afterAll(async () => h?.close());

  it('a HEAD probe of an ingress URL is 200 for a type that takes webhooks, 404 for one that does not', async () => {
    expect((await h.request('HEAD', HOOK)).status).toBe(200);
    expect((await h.request('HEAD', `${HOOK}/33333333-3333-4333-8333-333333333333`)).status).toBe(200);
    expect((await h.request('HEAD', '/api/v1/webhooks/granola')).status).toBe(404);
  });

  it('a GET verifying the URL with a challenge in its query gets it back as text/plain (nosniff); a GET without one is refused by the signature check', async () => {
    const ok = await h.request('GET', '/api/v1/webhooks/dropbox?challenge=kT7xQ2vN9p');
    expect([ok.status, ok.text, ok.headers.get('content-type'), ok.headers.get('x-content-type-options')]).toEqual([
      200,
      'kT7xQ2vN9p',
      'text/plain',
      'nosniff',
    ]);
    expect((await h.request('GET', '/api/v1/webhooks/dropbox')).status).toBe(401);
    expect((await h.request('HEAD', '/api/v1/webhooks/dropbox')).status).toBe(200);
  });

  it('a body over the webhook limit is 413 before its signature is checked; one under it reaches the check', async () => {
    const big = await h.request('POST', HOOK, { raw: JSON.stringify({ pad: 'x'.repeat(4096) }), headers: { 'x-hub-signature': 'sha1=00' } });
    expect(big.status, big.text).toBe(413);
    expect(big.body.code).toBe('payload_too_large');
    const small = await h.request('POST', HOOK, { raw: JSON.stringify({ pad: 'x'.repeat(1024) }), headers: { 'x-hub-signature': 'sha1=00' } });
    expect(small.status, small.text).toBe(401);
  });

  it('requests still sending their bodies count: beyond the limit, 503 webhook_queue_full with Retry-After at once; slots free when they go away', async () => {
    const { hostname, port } = new URL(h.url);
    const held: Socket[] = [];
    for (let i = 0; i < 2; i++) {
      const s = connect(Number(port), hostname);
      await new Promise<void>((resolve) => s.once('connect', () => resolve()));
      // Headers and part of the body: the request is in flight until the rest comes (it never does).
      s.write(
        `POST ${HOOK} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nX-Hub-Signature: sha1=00\r\n\r\n{"pad":"`,
      );
      held.push(s);
    }
    const probe = () => h.request('POST', HOOK, { raw: '{}', headers: { 'x-hub-signature': 'sha1=00' } });
    // The held requests are counted once the server has read their headers: probe until it says so (bounded).
    let refused;
    for (let i = 0; i < 500 && refused === undefined; i++) {
      const r = await probe();
      if (r.status === 503) refused = r;
      else expect(r.status, r.text).toBe(401);
    }
    expect(refused, 'the held requests were never counted').toBeDefined();
    expect(refused!.body.code).toBe('webhook_queue_full');
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    for (const s of held) s.destroy();
    let after;
    for (let i = 0; i < 500; i++) {
      after = await probe();
      if (after.status !== 503) break;
    }
    expect(after!.status, after!.text).toBe(401);
  });
});
