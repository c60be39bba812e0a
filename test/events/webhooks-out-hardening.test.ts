/**
 * Outgoing webhooks held to a tenant's URL (issue 37, items 6–8), on both databases:
 * - registration refuses loopback, private, CGNAT, unique-local, link-local and reserved
 *   addresses (IPv4 in IPv6 form included), `localhost`, and URLs with user:password; a cap per
 *   organization holds under parallel registrations; nothing refused is stored;
 * - at connect time a hostname resolving to loopback is refused (the receiver sees nothing);
 * - the delivery log shows a status and a generic reason: never the answer's body, never a
 *   connect error's detail;
 * - a redirect is not followed: a 3xx is a failed attempt;
 * - fairness: an organization's hanging endpoints do not hold another organization's delivery,
 *   and each endpoint and organization has a cap on sends in flight.
 * Private addresses are allowed (SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE_ADDRESSES) only on the
 * instance that delivers to the test's loopback receivers.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import type { EventsTables } from '../../src/events/migrations.ts';
import { createWebhookSender, DELIVERY_REASONS, DeliveryFailure } from '../../src/events/webhook-sender.ts';
import { describeEachDialect, startHarness, type Harness } from '../service/helpers.ts';

const ENDPOINTS = '/api/v1/webhook-endpoints';

interface Hit {
  method: string;
  path: string;
}

/** A receiver: `handle` decides each answer; every request is recorded. */
async function startReceiver(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ port: number; hits: Hit[]; close(): Promise<void> }> {
  const hits: Hit[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits.push({ method: req.method ?? '', path: req.url ?? '' });
      handle(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

describe('the webhook transport', () => {
  it('refuses a hostname that resolves to loopback, after DNS, without connecting', async () => {
    const rx = await startReceiver((_req, res) => res.end('ok'));
    const sender = createWebhookSender({});
    try {
      const e = await sender.send(`http://localhost:${rx.port}/hook`, { 'content-type': 'application/json' }, '{}', 5000).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(DeliveryFailure);
      expect((e as DeliveryFailure).reason).toBe(DELIVERY_REASONS.refused);
      expect(rx.hits).toEqual([]);
      // The same receiver is reached once the operator allows private addresses.
      const open = createWebhookSender({ allowPrivate: true });
      await expect(open.send(`http://localhost:${rx.port}/hook`, {}, '{}', 5000)).resolves.toEqual({ status: 200 });
      await open.close();
      expect(rx.hits).toHaveLength(1);
    } finally {
      await sender.close();
      await rx.close();
    }
  });

  it.each([
    'http://127.0.0.1:9/x',
    'http://[::ffff:127.0.0.1]:9/x',
    'http://[::ffff:a9fe:a9fe]/x',
    'http://10.0.0.1/x',
    'http://100.64.0.1/x',
    'http://[fd00::1]/x',
  ])('refuses the literal %s', async (url) => {
    const sender = createWebhookSender({});
    const e = await sender.send(url, {}, '{}', 5000).catch((x: unknown) => x);
    await sender.close();
    expect((e as DeliveryFailure).reason).toBe(DELIVERY_REASONS.refused);
  });
});

describeEachDialect('webhooks out, hardened, on %s', (dialect) => {
  let strict: Harness;
  let open: Harness;
  let token: string;
  let openToken: string;
  let openOrg: string;
  let db: Kysely<EventsTables>;

  beforeAll(async () => {
    strict = await startHarness(dialect, { config: { eventsDelivery: false, webhookEndpointsPerOrganization: 3 } });
    open = await startHarness(dialect, {
      database: strict.db,
      config: { eventsDelivery: false, webhookAllowPrivateAddresses: true, webhookEndpointsPerOrganization: 40 },
    });
    token = await strict.token(await strict.createApp('org-strict'));
    const app = await open.createApp('org-open');
    openOrg = app.organization_id;
    openToken = await open.token(app);
    db = open.service.ctx.database.db as unknown as Kysely<EventsTables>;
  });
  afterAll(async () => {
    await open?.close();
    await strict?.close();
  });

  it.each([
    ['http://127.0.0.1:8080/h', 'webhook_url_refused'],
    ['http://10.1.2.3/h', 'webhook_url_refused'],
    ['http://172.20.0.1/h', 'webhook_url_refused'],
    ['http://192.168.1.1/h', 'webhook_url_refused'],
    ['http://100.100.100.200/h', 'webhook_url_refused'],
    ['http://100.64.0.9/h', 'webhook_url_refused'],
    ['http://[::1]/h', 'webhook_url_refused'],
    ['http://[fd12:3456::1]/h', 'webhook_url_refused'],
    ['http://[fe80::1]/h', 'webhook_url_refused'],
    ['http://[::ffff:169.254.169.254]/h', 'webhook_url_refused'],
    ['http://[::ffff:0.0.0.0]:4000/h', 'webhook_url_refused'],
    ['http://[64:ff9b::10.0.0.1]/h', 'webhook_url_refused'],
    ['http://240.0.0.1/h', 'webhook_url_refused'],
    ['http://localhost:3000/h', 'webhook_url_refused'],
    ['http://api.localhost/h', 'webhook_url_refused'],
    ['https://user:pass@example.com/h', 'webhook_url_credentials'],
    ['https://token@example.com/h', 'webhook_url_credentials'],
  ])('registering %s is 400 %s, and nothing is stored', async (url, code) => {
    const r = await strict.request('POST', ENDPOINTS, { token, body: { url, events: ['sync.completed'] } });
    expect(r.status, r.text).toBe(400);
    expect(r.body.code).toBe(code);
    expect(r.text).not.toContain('pass@');
    expect((await strict.request('GET', ENDPOINTS, { token })).body.data).toEqual([]);
  });

  it('the cap per organization holds under parallel registrations', async () => {
    const org = await strict.token(await strict.createApp(`org-cap-${randomUUID()}`));
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        strict.request('POST', ENDPOINTS, { token: org, body: { url: `https://hooks.example.com/${i}`, events: ['sync.completed'] } }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 201, 409, 409, 409, 409, 409]);
    for (const a of answers.filter((x) => x.status === 409)) expect(a.body.code).toBe('webhook_endpoint_limit');
    expect((await strict.request('GET', ENDPOINTS, { token: org })).body.data).toHaveLength(3);
  });

  /** Register an endpoint of the open instance's organization (or another token's). */
  const register = async (url: string, t = openToken): Promise<string> => {
    const r = await open.request('POST', ENDPOINTS, { token: t, body: { url, events: ['sync.completed'] } });
    expect(r.status, r.text).toBe(201);
    return r.body.id as string;
  };
  const lastAttempt = async (
    endpointId: string,
    t = openToken,
  ): Promise<{ status: string; last_status: number | null; last_error: string | null; attempt_log: { error: string | null }[] }> =>
    (await open.request('GET', `${ENDPOINTS}/${endpointId}/deliveries?limit=1`, { token: t })).body.data[0];
  const removeAll = async (): Promise<void> => {
    for (const e of (await open.request('GET', ENDPOINTS, { token: openToken })).body.data as { id: string }[])
      await open.request('DELETE', `${ENDPOINTS}/${e.id}`, { token: openToken });
  };

  it('a hostname that resolves to loopback is refused at connect time when private addresses are not allowed; the receiver sees nothing', async () => {
    const rx = await startReceiver((_req, res) => res.end('ok'));
    try {
      // Registered while its name resolved to a public address; it now resolves to loopback (DNS rebinding).
      const sealed = strict.service.ctx.outbox;
      const real = await sealed.createEndpoint(openOrg, 'https://rebinding.example.com/hook', ['sync.completed']);
      await db
        .updateTable('webhook_endpoints')
        .set({ url: `http://localhost:${rx.port}/rebound` })
        .where('id', '=', real.id)
        .execute();
      await sealed.emit(openOrg, 'sync.completed', { n: 1 });
      await strict.service.ctx.outbox.deliverDue();
      const d = await lastAttempt(real.id);
      expect(d).toMatchObject({ status: 'pending', last_status: null, last_error: DELIVERY_REASONS.refused });
      expect(rx.hits).toEqual([]);
    } finally {
      await removeAll();
      await rx.close();
    }
  });

  it("the delivery log shows a status and a generic reason, never the answer's body nor a connect error's detail", async () => {
    const rx = await startReceiver((_req, res) => {
      res.statusCode = 500;
      res.end('internal banner: redis 6.2 on 10.0.0.7:6379');
    });
    // A port nothing listens on: closed right after it was bound.
    const dead = await startReceiver(() => undefined);
    await dead.close();
    try {
      const answering = await register(`http://127.0.0.1:${rx.port}/fail`);
      const closed = await register(`http://127.0.0.1:${dead.port}/closed`);
      await open.service.ctx.outbox.emit(openOrg, 'sync.completed', { n: 2 });
      await open.service.ctx.outbox.deliverDue();
      const a = await lastAttempt(answering);
      expect(a).toMatchObject({ last_status: 500, last_error: 'HTTP 500' });
      const c = await lastAttempt(closed);
      expect(c).toMatchObject({ last_status: null, last_error: DELIVERY_REASONS.connect });
      const text = JSON.stringify([a, c]);
      for (const leak of ['banner', 'redis', 'ECONNREFUSED', String(dead.port)]) expect(text).not.toContain(leak);
    } finally {
      await removeAll();
      await rx.close();
    }
  });

  it('a redirect is not followed: a 3xx is a failed attempt, and the receiver sees only the POST', async () => {
    const rx = await startReceiver((req, res) => {
      if (req.url === '/moved') {
        res.writeHead(302, { location: '/landing' }).end();
        return;
      }
      res.end('ok');
    });
    try {
      const id = await register(`http://127.0.0.1:${rx.port}/moved`);
      await open.service.ctx.outbox.emit(openOrg, 'sync.completed', { n: 3 });
      await open.service.ctx.outbox.deliverDue();
      expect(await lastAttempt(id)).toMatchObject({ status: 'pending', last_status: 302 });
      expect((await lastAttempt(id)).last_error).toMatch(/^HTTP 302/);
      expect(rx.hits).toEqual([{ method: 'POST', path: '/moved' }]);
    } finally {
      await removeAll();
      await rx.close();
    }
  });

  it("an organization's hanging endpoints do not hold another organization's delivery; sends in flight are capped per organization and per endpoint", async () => {
    let releaseA!: () => void;
    const released = new Promise<void>((r) => (releaseA = r));
    let bArrived!: () => void;
    const arrived = new Promise<void>((r) => (bArrived = r));
    let inFlightA = 0;
    let maxA = 0;
    const perPath = new Map<string, number>();
    let maxPerPath = 0;
    const rx = await startReceiver((req, res) => {
      if (req.url === '/b') {
        res.end('ok');
        bArrived();
        return;
      }
      inFlightA++;
      maxA = Math.max(maxA, inFlightA);
      const p = req.url ?? '';
      perPath.set(p, (perPath.get(p) ?? 0) + 1);
      maxPerPath = Math.max(maxPerPath, perPath.get(p)!);
      void released.then(() => {
        inFlightA--;
        perPath.set(p, perPath.get(p)! - 1);
        res.end('ok');
      });
    });
    const appB = await open.createApp(`org-b-${randomUUID()}`);
    const tokenB = await open.token(appB);
    try {
      // Organization A: 24 endpoints, and one of them gets 4 events.
      for (let i = 0; i < 24; i++) await register(`http://127.0.0.1:${rx.port}/a/${i}`);
      const outbox = open.service.ctx.outbox;
      for (let i = 0; i < 4; i++) await outbox.emit(openOrg, 'sync.completed', { n: i });
      // Organization B's event comes after all of A's.
      strict.clock.offsetMs += 1000;
      open.clock.offsetMs += 1000;
      const idB = await register(`http://127.0.0.1:${rx.port}/b`, tokenB);
      await outbox.emit(appB.organization_id, 'sync.completed', { n: 'b' });
      const pass = outbox.deliverDue();
      // A's sends hang until B's delivery has arrived: with B waiting behind A, this never returns.
      await arrived;
      releaseA();
      const attempts = await pass;
      expect(attempts).toBe(24 * 4 + 1);
      expect(maxA).toBeLessThanOrEqual(8);
      expect(maxA).toBeGreaterThan(1);
      expect(maxPerPath).toBeLessThanOrEqual(2);
      expect(await lastAttempt(idB, tokenB)).toMatchObject({ status: 'delivered', last_status: 200 });
    } finally {
      releaseA();
      await removeAll();
      await rx.close();
    }
  });
});
