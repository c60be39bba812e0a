/**
 * No request is cut without an answer (issue 21, item 2), on both databases (the in-process
 * throttle on SQLite, the shared one on PostgreSQL):
 * - a call behind a connector the upstream paused (Retry-After: 3600) answers at once with 429
 *   upstream_rate_limited and Retry-After instead of sitting in the throttle until the server
 *   cuts the connection;
 * - an upstream slower than the server's request-receiving timeout still ends in a problem
 *   answer at the call's deadline, never an empty reply.
 * Short configured deadlines and a moved Date stand in for the minutes of the real case.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import { describeEachDialect, fakeUpstream, startHarness, type Harness } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';

let upstream: Awaited<ReturnType<typeof fakeUpstream>>;
let upstreamUrl: string;
let mode: 'ok' | 'retry-after' | 'hang' = 'ok';
let seen = 0;
const hung: ServerResponse[] = [];
beforeAll(async () => {
  upstream = await fakeUpstream((req, res) => {
    seen++;
    if (mode === 'retry-after') return void res.writeHead(429, { 'retry-after': '3600', 'content-type': 'application/json' }).end('{"message":"slow down"}');
    if (mode === 'hang') return void hung.push(res);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(req.url?.startsWith('/v1/notes/') ? '{"id":"not_1","title":"t"}' : '{"notes":[],"hasMore":false,"cursor":null}');
  });
  upstreamUrl = upstream.url;
});
afterAll(() => upstream.close());
afterEach(() => {
  vi.useRealTimers();
  mode = 'ok';
  for (const r of hung.splice(0)) r.destroy();
});

async function connector(h: Harness): Promise<{ token: string; id: string }> {
  const app = await h.createApp('acme');
  const token = await h.token(app);
  const r = await h.request('POST', `${CONNECTORS}?check=false`, {
    token,
    body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { api_key: 'grn_secret_key_1' } },
  });
  expect(r.status).toBe(201);
  return { token, id: (r.body as { id: string }).id };
}

describeEachDialect('waits on %s', (dialect) => {
  it('a call behind a paused connector answers 429 upstream_rate_limited with Retry-After at once, and the upstream is not called', async () => {
    // The default 60 s deadline: the 60 s pause (Retry-After capped) fits inside it.
    const h = await startHarness(dialect, { config: { connectorTypes: { granola: { baseUrl: upstreamUrl } } } });
    try {
      const { token, id } = await connector(h);
      mode = 'retry-after';
      const first = await h.request('POST', `${CONNECTORS}/${id}/execute`, { token, body: { entity: 'notes', action: 'list', params: {} } });
      expect([first.status, first.body.code, first.headers.get('retry-after')]).toEqual([429, 'upstream_rate_limited', '3600']);
      mode = 'ok';
      const before = seen;
      // Ten seconds later the connector is still held back for ~50 s, inside the call's 60 s deadline:
      // the caller is told so at once rather than held (and, before, cut by the server at 30 s).
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 10_000 });
      const again = await h.request('POST', `${CONNECTORS}/${id}/execute`, {
        token,
        body: { entity: 'notes', action: 'get', params: { note_id: 'not_10000000000000' } },
      });
      expect([again.status, again.body.code]).toEqual([429, 'upstream_rate_limited']);
      expect(again.body.details.reason).toBe('paused');
      const retryAfter = Number(again.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(5);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(seen).toBe(before);
      // In parallel too: every caller gets its answer.
      const many = await Promise.all(
        Array.from({ length: 6 }, () => h.request('POST', `${CONNECTORS}/${id}/execute`, { token, body: { entity: 'notes', action: 'list', params: {} } })),
      );
      expect(many.map((r) => r.body.code)).toEqual(Array(6).fill('upstream_rate_limited'));
      expect(seen).toBe(before);
    } finally {
      vi.useRealTimers();
      await h.close();
    }
  });

  it('an upstream slower than the request timeout gets a 503 problem answer at the deadline, not a cut connection', async () => {
    // Receiving a request may take at most 200 ms; the upstream call may take 1.5 s.
    const h = await startHarness(dialect, {
      config: { requestTimeoutMs: 200, upstreamDeadlineMs: 1_500, connectorTypes: { granola: { baseUrl: upstreamUrl } } },
    });
    try {
      const { token, id } = await connector(h);
      mode = 'hang';
      const r = await h.request('POST', `${CONNECTORS}/${id}/execute`, { token, body: { entity: 'notes', action: 'list', params: {} } });
      expect([r.status, r.body.code, r.body.details.timeout]).toEqual([503, 'upstream_unavailable', true]);
      expect(r.headers.get('content-type')).toContain('application/problem+json');
    } finally {
      await h.close();
    }
  });
});
