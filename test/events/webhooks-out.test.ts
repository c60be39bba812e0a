/**
 * Signed webhooks out from the durable outbox, with two service instances on one database: a
 * registered endpoint receives sync.completed (per-entity counts) and records.changed, each
 * correctly signed and exactly once across both instances; an endpoint that answers 500 twice
 * gets the event again on the third attempt, after the backoff (driven by the injected clock,
 * never by waiting); the delivery log shows every attempt; egress rules refuse metadata
 * addresses. SQLite always, PostgreSQL when configured.
 */
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { describeEachDialect, openApiErrors, startHarness, type Harness } from '../service/helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const ENDPOINTS = '/api/v1/webhook-endpoints';

interface Received {
  body: { id: string; type: string; created_at: string; organization_id: string; data: Record<string, unknown> };
  raw: string;
  signature: string;
  eventId: string;
}

/** A receiver recording every request; `failFirst` answers 500 to the first n attempts of each event. */
async function startReceiver(): Promise<{ url: string; received: Received[]; failFirst: { n: number }; close(): Promise<void> }> {
  const received: Received[] = [];
  const failFirst = { n: 0 };
  const seen = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const body = JSON.parse(raw) as Received['body'];
      received.push({ body, raw, signature: String(req.headers['switchboard-signature']), eventId: String(req.headers['switchboard-event-id']) });
      const n = (seen.get(body.id) ?? 0) + 1;
      seen.set(body.id, n);
      res.statusCode = n <= failFirst.n ? 500 : 200;
      res.end(n <= failFirst.n ? 'boom' : 'ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    failFirst,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** The recipe in docs/hosted.md: HMAC-SHA256 of "<t>.<raw body>" with the endpoint secret, compared with v1. */
function verifies(secret: string, r: Received): boolean {
  const parts = Object.fromEntries(r.signature.split(',').map((p) => p.split('=') as [string, string]));
  const expected = createHmac('sha256', secret).update(`${parts['t']}.${r.raw}`).digest('hex');
  return parts['v1'] === expected && /^\d+$/.test(parts['t'] ?? '');
}

describeEachDialect('signed webhooks out on %s', (dialect) => {
  let sim: GranolaSimulator;
  let a: Harness;
  let b: Harness;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let token: string;
  let id: string;
  let endpoint: { id: string; secret: string };
  let app: Awaited<ReturnType<Harness['createApp']>>;

  /**
   * Both instances deliver, twice over; returns the attempts made. On PostgreSQL at once; on
   * SQLite one after the other: two SQLite instances in one process would block each other's
   * transactions in the one thread (SQLite deployments run one instance; PostgreSQL several).
   */
  const deliverBoth = async (): Promise<number> => {
    let n = 0;
    for (let i = 0; i < 2; i++) {
      if (dialect === 'postgres') n += (await Promise.all([a.service.ctx.outbox.deliverDue(), b.service.ctx.outbox.deliverDue()])).reduce((x, y) => x + y, 0);
      else n += (await a.service.ctx.outbox.deliverDue()) + (await b.service.ctx.outbox.deliverDue());
    }
    return n;
  };
  const advance = (ms: number): void => {
    a.clock.offsetMs += ms;
    b.clock.offsetMs += ms;
  };

  beforeAll(async () => {
    sim = await startGranolaSimulator({ size: 6, rateLimit: false });
    receiver = await startReceiver();
    // Delivery is driven by the test (deliverDue) rather than the background timer.
    const config = { upstreamThrottle: false, eventsDelivery: false, webhookAllowPrivateAddresses: true, connectorTypes: { granola: { baseUrl: sim.url } } };
    a = await startHarness(dialect, { config });
    b = await startHarness(dialect, { config, database: a.db });
    app = await a.createApp('org-out');
    token = await a.token(app);
    const r = await a.request('POST', ENDPOINTS, { token, body: { url: receiver.url, events: ['sync.completed', 'records.changed'] } });
    expect(r.status, r.text).toBe(201);
    expect(openApiErrors('POST', ENDPOINTS, r)).toEqual([]);
    expect(r.body.secret).toMatch(/^whsec_/);
    endpoint = r.body;
    const c = await a.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'c1', connector_type: 'granola', name: 'g', credentials: { api_key: sim.apiKey } },
    });
    expect(c.status, c.text).toBe(201);
    id = c.body.id;
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await receiver?.close();
    await sim?.close();
  });

  it('sync.completed and records.changed arrive signed, exactly once across two instances', async () => {
    await a.service.ctx.sync.runOnce(id, { full: true });
    await deliverBoth();
    const types = receiver.received.map((r) => r.body.type).sort();
    expect(types).toEqual(['records.changed', 'sync.completed']);
    for (const r of receiver.received) {
      expect(verifies(endpoint.secret, r), r.signature).toBe(true);
      expect(verifies('whsec_wrong', r)).toBe(false);
      expect(r.eventId).toBe(r.body.id);
    }
    const completed = receiver.received.find((r) => r.body.type === 'sync.completed')!.body;
    expect(completed.data).toMatchObject({ connector_id: id, full: true, entities: { notes: { records: 6, added: 6, updated: 0, deleted: 0 } } });
    const changed = receiver.received.find((r) => r.body.type === 'records.changed')!.body;
    expect(changed.data).toMatchObject({ connector_id: id, entity: 'notes', added: 6, updated: 0, deleted: 0 });
    // Nothing left: more passes send nothing again.
    expect(await deliverBoth()).toBe(0);
    expect(receiver.received).toHaveLength(2);
  });

  it('an endpoint answering 500 twice gets the event on the third attempt, after the backoff; the log shows each attempt', async () => {
    receiver.received.length = 0;
    receiver.failFirst.n = 2;
    sim.touch(sim.ids()[0]!, { title: 'Changed for the webhook test' });
    await b.service.ctx.sync.runOnce(id, { full: true });
    await deliverBoth();
    expect(receiver.received.map((r) => r.body.type).sort()).toEqual(['records.changed', 'sync.completed']);
    // Not due yet: no attempt without the clock moving.
    expect(await deliverBoth()).toBe(0);
    advance(30_000);
    await deliverBoth();
    expect(receiver.received).toHaveLength(4);
    advance(30_000);
    expect(await deliverBoth()).toBe(0); // the second retry waits 60 s
    advance(30_000);
    await deliverBoth();
    expect(receiver.received).toHaveLength(6);
    expect(await deliverBoth()).toBe(0);
    const ids = [...new Set(receiver.received.map((r) => r.body.id))];
    expect(ids).toHaveLength(2);
    for (const eid of ids) expect(receiver.received.filter((r) => r.body.id === eid)).toHaveLength(3);
    expect(receiver.received.every((r) => verifies(endpoint.secret, r))).toBe(true);
    const changed = receiver.received.find((r) => r.body.type === 'records.changed')!.body;
    expect(changed.data).toMatchObject({ entity: 'notes', added: 0, updated: 1, deleted: 0 });

    const log = await a.request('GET', `${ENDPOINTS}/${endpoint.id}/deliveries`, { token });
    expect(log.status, log.text).toBe(200);
    expect(openApiErrors('GET', `${ENDPOINTS}/{endpoint_id}/deliveries`, log)).toEqual([]);
    const retried = log.body.data.filter((d: { event_id: string }) => ids.includes(d.event_id));
    expect(retried).toHaveLength(2);
    for (const d of retried) {
      expect(d).toMatchObject({ status: 'delivered', attempts: 3, last_status: 200 });
      expect(d.attempt_log.map((x: { status_code: number }) => x.status_code)).toEqual([500, 500, 200]);
    }
    receiver.failFirst.n = 0;
  });

  it('an endpoint that never answers 2xx is given up a day after the event', async () => {
    receiver.received.length = 0;
    receiver.failFirst.n = 1000;
    await a.service.ctx.events.syncCompleted({ connector_id: id, run_id: `manual-${dialect}`, full: false, resumed: false, entities: {} });
    for (let i = 0; i < 40; i++) {
      await deliverBoth();
      advance(3_600_000);
    }
    token = await a.token(app); // the clock moved past the old token's lifetime
    const log = await a.request('GET', `${ENDPOINTS}/${endpoint.id}/deliveries?limit=1`, { token });
    expect(log.body.data[0]).toMatchObject({ status: 'failed', last_status: 500, next_attempt_at: null });
    const attempts = log.body.data[0].attempts as number;
    expect(attempts).toBe(receiver.received.length);
    expect(attempts).toBeGreaterThan(3);
    expect(attempts).toBeLessThan(40);
    receiver.failFirst.n = 0;
  });

  it('an event reported twice (same id) is sent once', async () => {
    receiver.received.length = 0;
    const result = { connector_id: id, run_id: `twice-${dialect}`, full: false, resumed: false, entities: {} };
    if (dialect === 'postgres') await Promise.all([a.service.ctx.events.syncCompleted(result), b.service.ctx.events.syncCompleted(result)]);
    else for (const x of [a, b]) await x.service.ctx.events.syncCompleted(result);
    await deliverBoth();
    expect(receiver.received).toHaveLength(1);
  });

  it('events, deliveries and their log are pruned 30 days after the event', async () => {
    const log = async (): Promise<unknown[]> => (await a.request('GET', `${ENDPOINTS}/${endpoint.id}/deliveries?limit=200`, { token })).body.data;
    expect((await log()).length).toBeGreaterThan(0);
    advance(31 * 86_400_000);
    await a.service.ctx.outbox.prune();
    token = await a.token(app);
    expect(await log()).toEqual([]);
  });

  it.each([
    ['a metadata address', { url: 'http://169.254.169.254/latest', events: ['sync.completed'] }, 400, 'webhook_url_refused'],
    ['not a URL', { url: 'nope', events: ['sync.completed'] }, 400, 'invalid_request'],
    ['an unknown event type', { url: 'https://example.com/h', events: ['sync.exploded'] }, 400, 'invalid_request'],
  ])('registering %s is %d %s', async (_n, body, status, code) => {
    const r = await a.request('POST', ENDPOINTS, { token, body });
    expect(r.status, r.text).toBe(status);
    expect(r.body.code).toBe(code);
  });

  it('another organization cannot see or delete the endpoint; its owner can', async () => {
    const other = await a.token(await a.createApp('org-other-out'));
    expect((await a.request('GET', `${ENDPOINTS}/${endpoint.id}`, { token: other })).status).toBe(404);
    expect((await a.request('DELETE', `${ENDPOINTS}/${endpoint.id}`, { token: other })).status).toBe(404);
    const list = await a.request('GET', ENDPOINTS, { token });
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([endpoint.id]);
    expect(JSON.stringify(list.body)).not.toContain(endpoint.secret);
    expect((await a.request('DELETE', `${ENDPOINTS}/${endpoint.id}`, { token })).status).toBe(204);
    expect((await a.request('GET', `${ENDPOINTS}/${endpoint.id}`, { token })).status).toBe(404);
  });
});
