/**
 * GET /metrics after real traffic (docs/operations.md): executes against the Granola simulator,
 * a sync whose pages run in the sync worker, vendor webhooks in (accepted, refused, an unknown
 * type), webhooks out (a delivery failed once, then delivered). Each family is there with
 * values that match the traffic, on the separate port and behind the token alike; no secret,
 * customer, organization or connector id appears in the output. SQLite always, PostgreSQL
 * when configured. The metrics are the process's: each check compares two scrapes.
 */
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { METRIC_FAMILIES } from '../../src/service/ops/metrics.ts';
import { describeEachDialect, startHosted, type Harness } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const METRICS_TOKEN = 'metrics-token-for-tests-3f9a1c';
const INTERCOM_SECRET = 'intercom-client-secret-for-metrics-test';

/** Every sample of a Prometheus text exposition: `name{labels}` → value. */
export function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

/** The sum of the samples of `name` whose labels include every one of `labels`. */
export function sample(m: Map<string, number>, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const [k, v] of m) {
    const brace = k.indexOf('{');
    if ((brace < 0 ? k : k.slice(0, brace)) !== name) continue;
    if (Object.entries(labels).every(([l, val]) => k.includes(`${l}="${val}"`))) sum += v;
  }
  return sum;
}

describeEachDialect('metrics on %s', (dialect) => {
  let sim: GranolaSimulator;
  let h: Harness;
  let receiver: Server;
  let receiverUrl: string;
  let attempts = 0;
  let token: string;
  let id: string;
  let orgId: string;
  let appId: string;
  let endpointSecret: string;

  beforeAll(async () => {
    sim = await startGranolaSimulator({ size: 6, rateLimit: false });
    // An endpoint that fails its first attempt, then accepts.
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        attempts++;
        res.writeHead(attempts === 1 ? 500 : 200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const hosted = await startHosted(dialect, {
      org: 'org-metrics-secret-name',
      upstreams: { granola: sim.url },
      config: {
        eventsDelivery: false,
        // The receiver is on loopback: tenant endpoints there need the operator's opt-in.
        webhookAllowPrivateAddresses: true,
        metricsPort: 0,
        metricsToken: METRICS_TOKEN,
        connectorTypes: { intercom: { oauth: { clientId: 'intercom-app', clientSecret: INTERCOM_SECRET } } },
      },
    });
    ({ h, token } = hosted);
    const app = hosted.app;
    appId = app.client_id;
    orgId = (await h.service.database.db.selectFrom('organizations').select('id').executeTakeFirstOrThrow()).id;
    const e = await h.request('POST', '/api/v1/webhook-endpoints', { token, body: { url: receiverUrl, events: ['sync.completed'] } });
    expect(e.status, e.text).toBe(201);
    endpointSecret = e.body.secret;
    const c = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'customer-metrics-secret', connector_type: 'granola', name: 'g', credentials: { api_key: sim.apiKey } },
    });
    expect(c.status, c.text).toBe(201);
    id = c.body.id;
  });
  afterAll(async () => {
    await h?.close();
    await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
    await sim?.close();
  });

  const scrape = async (): Promise<{ text: string; m: Map<string, number> }> => {
    const r = await fetch(`${h.service.app.metricsUrl()!}/metrics`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('text/plain');
    const text = await r.text();
    return { text, m: parseMetrics(text) };
  };

  it('counts requests, upstream calls, syncs and webhooks in and out by closed label sets, with nothing secret in them', async () => {
    const before = (await scrape()).m;
    const executes = 3;
    for (let i = 0; i < executes; i++) {
      const r = await h.request('POST', `${CONNECTORS}/${id}/execute`, { token, body: { entity: 'notes', action: 'list', params: {} } });
      expect(r.status, r.text).toBe(200);
    }
    // An execute the upstream answers 404.
    const missing = await h.request('POST', `${CONNECTORS}/${id}/execute`, {
      token,
      body: { entity: 'notes', action: 'get', params: { note_id: 'not_Missing0000000' } },
    });
    expect(missing.status, missing.text).toBe(404);
    // A sync: its pages run in the sync worker, which reports its upstream calls here.
    expect(h.service.ctx.syncWorker?.runsPages).toBe(true);
    const pagesBefore = h.service.ctx.syncWorker!.pagesRun;
    await h.service.ctx.sync.runOnce(id, { full: true });
    expect(h.service.ctx.syncWorker!.pagesRun).toBeGreaterThan(pagesBefore);
    // Webhooks in: a signed Intercom ping (accepted), a bad signature (refused), a type nobody knows (refused, not a label).
    const ping = JSON.stringify({
      type: 'notification_event',
      topic: 'ping',
      id: `notif_${dialect}`,
      app_id: 'x',
      data: { item: {} },
      created_at: Math.floor(Date.now() / 1000),
    });
    const sign = (raw: string, secret: string): string => `sha1=${createHmac('sha1', secret).update(raw).digest('hex')}`;
    const ok = await h.request('POST', '/api/v1/webhooks/intercom', { raw: ping, headers: { 'x-hub-signature': sign(ping, INTERCOM_SECRET) } });
    expect(ok.status, ok.text).toBe(200);
    const bad = await h.request('POST', '/api/v1/webhooks/intercom', { raw: ping, headers: { 'x-hub-signature': sign(ping, 'wrong') } });
    expect(bad.status).toBe(401);
    const unknown = await h.request('POST', `/api/v1/webhooks/${id}-customer-metrics-secret`, { raw: '{}' });
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    // Webhooks out: sync.completed fails once (retried), then is delivered once the backoff has passed.
    await h.service.ctx.outbox.deliverDue();
    h.clock.offsetMs += 60_000;
    await h.service.ctx.outbox.deliverDue();
    expect(attempts).toBe(2);

    const { text, m } = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}): number => sample(m, name, labels) - sample(before, name, labels);
    for (const family of Object.values(METRIC_FAMILIES)) expect(text, family).toContain(`# TYPE ${family} `);
    const execute = { method: 'POST', route: '/api/v1/integrations/connectors/:connector_id/execute' };
    expect(delta(`${METRIC_FAMILIES.http}_count`, { ...execute, status_code: '200' })).toBe(executes);
    expect(delta(`${METRIC_FAMILIES.http}_count`, { ...execute, status_code: '404' })).toBe(1);
    expect(delta(`${METRIC_FAMILIES.http}_sum`, execute)).toBeGreaterThan(0);
    // The executes' calls (by entity.action) and the sync's, made in the worker.
    expect(delta(METRIC_FAMILIES.upstreamCalls, { connector_type: 'granola', action: 'notes.list', outcome: '2xx' })).toBeGreaterThanOrEqual(executes + 1);
    expect(delta(METRIC_FAMILIES.upstreamCalls, { connector_type: 'granola', action: 'notes.get', outcome: '4xx' })).toBe(1);
    expect(delta(`${METRIC_FAMILIES.upstreamDuration}_count`, { connector_type: 'granola' })).toBeGreaterThanOrEqual(executes + 2);
    expect(delta(METRIC_FAMILIES.upstreamBytes, { connector_type: 'granola' })).toBeGreaterThan(100);
    expect(delta(METRIC_FAMILIES.syncRuns, { connector_type: 'granola', outcome: 'completed' })).toBe(1);
    expect(delta(METRIC_FAMILIES.syncRecords, { connector_type: 'granola', change: 'added' })).toBe(6);
    expect(delta(`${METRIC_FAMILIES.syncDuration}_count`, { connector_type: 'granola' })).toBe(1);
    expect(delta(METRIC_FAMILIES.webhooksIn, { connector_type: 'intercom', outcome: 'accepted' })).toBe(1);
    expect(delta(METRIC_FAMILIES.webhooksIn, { connector_type: 'intercom', outcome: 'refused' })).toBe(1);
    expect(delta(METRIC_FAMILIES.webhooksIn, { connector_type: 'unknown', outcome: 'refused' })).toBe(1);
    expect(delta(METRIC_FAMILIES.webhooksOut, { outcome: 'queued' })).toBe(1);
    expect(delta(METRIC_FAMILIES.webhooksOut, { outcome: 'retried' })).toBe(1);
    expect(delta(METRIC_FAMILIES.webhooksOut, { outcome: 'delivered' })).toBe(1);
    expect(delta(`${METRIC_FAMILIES.outboxLag}_count`)).toBe(2);
    expect(sample(m, METRIC_FAMILIES.outboxOldest)).toBe(0);
    expect(sample(m, METRIC_FAMILIES.eventLoopDelay)).toBeGreaterThan(0);
    // SQLite has no pool; on PostgreSQL the scrape's own outbox query may be waiting for a connection.
    if (dialect === 'sqlite') expect(sample(m, METRIC_FAMILIES.poolWaiting)).toBe(0);
    else expect(sample(m, METRIC_FAMILIES.poolConnections)).toBeGreaterThan(0);
    // Bounded cardinality: nothing of a customer, an organization, a connector, a credential or a URL.
    for (const secret of [
      sim.apiKey,
      token,
      id,
      orgId,
      appId,
      'org-metrics-secret-name',
      'customer-metrics-secret',
      endpointSecret,
      METRICS_TOKEN,
      INTERCOM_SECRET,
      receiverUrl,
      sim.url,
      'not_Missing0000000',
    ]) {
      expect(text.includes(secret), secret).toBe(false);
    }
  });

  it('on the API port, GET /metrics needs the metrics token; an API token is not it', async () => {
    const none = await h.request('GET', '/metrics');
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('unauthorized');
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    expect((await h.request('GET', '/metrics', { token })).status).toBe(401);
    const r = await h.request('GET', '/metrics', { token: METRICS_TOKEN });
    expect(r.status).toBe(200);
    expect(r.text).toContain(`# TYPE ${METRIC_FAMILIES.upstreamCalls} counter`);
    // The separate port serves nothing else.
    expect((await fetch(`${h.service.app.metricsUrl()!}/api/v1/integrations/connectors`)).status).toBe(404);
  });
});
