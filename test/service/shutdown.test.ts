/**
 * Shutdown (issue 21, item 10), on both databases: close() stops the sync scheduler at once,
 * even while a request is still in flight, aborts a sync hung on its upstream, and ends within
 * the grace period (SWITCHBOARD_SHUTDOWN_GRACE_MS) instead of waiting out the upstream deadline.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect, fakeUpstream, startHarness } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';

let upstream: Awaited<ReturnType<typeof fakeUpstream>>;
let upstreamUrl: string;
const requests: { path: string; aborted: boolean }[] = [];
beforeAll(async () => {
  // Never answers: every call hangs until its caller gives up.
  upstream = await fakeUpstream((req, res) => {
    const seen = { path: req.url ?? '', aborted: false };
    requests.push(seen);
    res.on('close', () => (seen.aborted = !res.writableEnded));
  });
  upstreamUrl = upstream.url;
});
afterAll(() => upstream.close());

describeEachDialect('shutdown on %s', (dialect) => {
  it('close() stops scheduling at once, aborts a hung sync and ends within the grace period', async () => {
    requests.length = 0;
    const h = await startHarness(dialect, { config: { syncScheduler: true, shutdownGraceMs: 300, connectorTypes: { granola: { baseUrl: upstreamUrl } } } });
    const app = await h.createApp('acme');
    const token = await h.token(app);
    const created = await h.request('POST', `${CONNECTORS}?check=false`, {
      token,
      body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { api_key: 'grn_secret_key_1' } },
    });
    expect(created.status).toBe(201);
    // The connector's first sync is under way, hung on its upstream...
    await expect.poll(() => requests.length, { timeout: 10_000 }).toBe(1);
    // ...and an execute is in flight, which keeps the server from closing.
    const inFlight = h
      .request('POST', `${CONNECTORS}/${created.body.id as string}/execute`, { token, body: { entity: 'notes', action: 'list', params: {} } })
      .catch((e: unknown) => e);
    await expect.poll(() => requests.length, { timeout: 10_000 }).toBe(2);
    const sync = h.service.ctx.sync;
    const closing = h.close();
    // Scheduling stops at once, not when the in-flight request is done.
    await expect.poll(() => sync.stopped).toBe(true);
    await closing;
    // The sync's upstream call was aborted, not left to its 60 s deadline.
    await expect.poll(() => requests[0]?.aborted).toBe(true);
    await inFlight;
  });
});
