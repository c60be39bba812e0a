/**
 * The sync worker (SWITCHBOARD_SYNC_IN_WORKER): a hosted sync's pages are fetched, hydrated and
 * stored in the record writer's worker thread, while the run's bookkeeping and the connector's
 * throttle stay on the main thread. Against Granola's simulator with its real rate limit, behind
 * a proxy that records every upstream answer: the same records and counts as a sync on the main
 * thread; the worker's requests and the API's executes of the same connector share one throttle
 * (no 429); a stop in the middle of a run ends it at once and it resumes from its checkpoint; an
 * OAuth 2 connector syncs on the main thread. SQLite always, PostgreSQL when configured.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { describeEachDialect, startHarness, type Harness } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';

/** A proxy to the simulator that records the status of every answer (and can hold the note reads back). */
async function recordingProxy(
  target: () => string,
): Promise<{ url: string; statuses: number[]; hold: { gets: Promise<void> | undefined }; close(): Promise<void> }> {
  const statuses: number[] = [];
  const hold: { gets: Promise<void> | undefined } = { gets: undefined };
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (hold.gets !== undefined && /^\/v1\/notes\/[^/?]+/.test(req.url ?? '')) await hold.gets;
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'connection') headers[k] = v;
      const r = await fetch(target() + (req.url ?? '/'), { method: req.method ?? 'GET', headers });
      statuses.push(r.status);
      const out: Record<string, string> = {};
      r.headers.forEach((v, k) => {
        if (k !== 'content-encoding' && k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection') out[k] = v;
      });
      res.writeHead(r.status, out).end(Buffer.from(await r.arrayBuffer()));
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    statuses,
    hold,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Proxy = Awaited<ReturnType<typeof recordingProxy>>;

describeEachDialect('the sync worker on %s', (dialect) => {
  let sim: GranolaSimulator;
  let proxy: Proxy;
  const harnesses: Harness[] = [];
  const closing: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    sim = await startGranolaSimulator({ size: 20, rateLimit: false });
    proxy = await recordingProxy(() => sim.url);
  });
  afterEach(async () => {
    await Promise.all(harnesses.splice(0).map((h) => h.close()));
    await Promise.all(closing.splice(0).map((c) => c()));
  });
  afterAll(async () => {
    await proxy?.close();
    await sim?.close();
  });

  async function service(
    syncInWorker: boolean,
    at: { sim: GranolaSimulator; proxy: Proxy } = { sim, proxy },
  ): Promise<{ h: Harness; id: string; token: string }> {
    const h = await startHarness(dialect, { config: { syncInWorker, connectorTypes: { granola: { baseUrl: at.proxy.url } } } });
    harnesses.push(h);
    const token = await h.token(await h.createApp('org-worker'));
    const r = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'c1', connector_type: 'granola', name: 'g', credentials: { api_key: at.sim.apiKey } },
    });
    expect(r.status, r.text).toBe(201);
    return { h, id: r.body.id as string, token };
  }

  /** Every stored note of the connector, by id. */
  async function stored(h: Harness, token: string, id: string): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    let cursor: string | undefined;
    do {
      const r = await h.request('POST', `${CONNECTORS}/${id}/execute`, {
        token,
        body: { entity: 'notes', action: 'search', params: { query: {}, limit: 100, ...(cursor !== undefined ? { cursor } : {}) } },
      });
      expect(r.status, r.text).toBe(200);
      for (const n of r.body.data as { id: string }[]) out[n.id] = n;
      cursor = r.body.meta.next_cursor ?? undefined;
    } while (cursor !== undefined);
    return out;
  }

  it('stores what a sync on the main thread stores, and the same counts', async () => {
    const worker = await service(true);
    expect(worker.h.service.ctx.syncWorker).toBeDefined();
    const result = await worker.h.service.ctx.sync.runOnce(worker.id, { full: true });
    expect(result.entities['notes']).toMatchObject({ records: 20, added: 20, updated: 0, deleted: 0 });
    expect(worker.h.service.ctx.syncWorker!.pagesRun).toBe(1);
    const inWorker = await stored(worker.h, worker.token, worker.id);

    const main = await service(false);
    expect(main.h.service.ctx.syncWorker).toBeUndefined();
    const mainResult = await main.h.service.ctx.sync.runOnce(main.id, { full: true });
    expect(mainResult.entities).toEqual(result.entities);
    const onMain = await stored(main.h, main.token, main.id);
    expect(Object.keys(inWorker).sort()).toEqual(sim.ids().sort());
    expect(inWorker).toEqual(onMain);
    // The run's checkpoints and counts are the main thread's, as they were.
    const status = await worker.h.request('GET', `${CONNECTORS}/${worker.id}/sync`, { token: worker.token });
    expect(status.body).toMatchObject({ status: 'idle', last_error: null, entities: { notes: { records: 20 } } });
    // An incremental run after an upstream change: the change, through the worker.
    const touched = sim.ids()[5]!;
    sim.touch(touched, { title: 'changed in the worker test' });
    const next = await worker.h.service.ctx.sync.runOnce(worker.id);
    expect(next.entities['notes']).toMatchObject({ added: 0, updated: 1, deleted: 0 });
    expect((await stored(worker.h, worker.token, worker.id))[touched]).toMatchObject({ title: 'changed in the worker test' });
  });

  it("the worker's requests and the API's executes of the same connector share its throttle: none over the upstream's limit", async () => {
    // Granola's own limit (25 at once, 5/s): a burst past the throttle is answered 429.
    const limited = await startGranolaSimulator({ size: 40, seed: 2 });
    const limitedProxy = await recordingProxy(() => limited.url);
    closing.push(
      () => limitedProxy.close(),
      () => limited.close(),
    );
    const worker = await service(true, { sim: limited, proxy: limitedProxy });
    const run = worker.h.service.ctx.sync.runOnce(worker.id, { full: true });
    const gets = await Promise.all(
      limited
        .ids()
        .slice(0, 8)
        .map((note) =>
          worker.h.request('POST', `${CONNECTORS}/${worker.id}/execute`, {
            token: worker.token,
            body: { entity: 'notes', action: 'get', params: { note_id: note } },
          }),
        ),
    );
    const result = await run;
    expect(gets.map((g) => g.status)).toEqual(gets.map(() => 200));
    expect(result.entities['notes']).toMatchObject({ records: 40, added: 40 });
    expect(worker.h.service.ctx.syncWorker!.pagesRun).toBe(1);
    // 40 hydrations, the list pages and 8 executes, past Granola's burst of 25: none refused.
    expect(limitedProxy.statuses.length).toBeGreaterThan(25 + 8);
    expect(limitedProxy.statuses.filter((s) => s !== 200)).toEqual([]);
  });

  it('a stop in the middle of a run ends its pages in the worker; the next run resumes from the checkpoint', async () => {
    const { h, id } = await service(true);
    let release!: () => void;
    proxy.hold.gets = new Promise<void>((resolve) => (release = resolve));
    h.service.ctx.sync.start();
    // The run is in the worker, its hydrations held at the proxy.
    const deadline = Date.now() + 30_000;
    while (h.service.ctx.syncWorker!.pagesRun === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(h.service.ctx.syncWorker!.pagesRun).toBe(1);
    const stopped = h.service.ctx.sync.stop();
    release();
    proxy.hold.gets = undefined;
    await stopped;
    const status = await h.service.ctx.sync.status(id);
    expect(status?.status).toBe('interrupted');
    // runOnce resumes the interrupted run (same run id) and finishes it.
    const resumed = await h.service.ctx.sync.runOnce(id);
    expect(resumed.resumed).toBe(true);
    expect(resumed.entities['notes']?.records).toBe(20);
    expect(h.service.ctx.syncWorker!.pagesRun).toBe(2);
  });

  it('a connector deleted while its pages run in the worker: the run ends, and none of its records stay', async () => {
    const { h, id, token } = await service(true);
    let release!: () => void;
    proxy.hold.gets = new Promise<void>((resolve) => (release = resolve));
    const run = h.service.ctx.sync.runOnce(id, { full: true });
    const ended = run.then(
      () => 'completed',
      (e: unknown) => (e as Error).constructor.name,
    );
    const deadline = Date.now() + 30_000;
    while (h.service.ctx.syncWorker!.pagesRun === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const deleted = await h.request('DELETE', `${CONNECTORS}/${id}`, { token });
    expect(deleted.status, deleted.text).toBe(204);
    release();
    proxy.hold.gets = undefined;
    // The first part stored after the deletion finds the lease gone: the run stops there.
    expect(await ended).toBe('LeaseLost');
    expect(await h.service.ctx.records.count(id, 'notes')).toBe(0);
  });
});
