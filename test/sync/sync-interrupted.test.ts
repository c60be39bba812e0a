/**
 * Truthful sync status after a crash (issue 11, finding 8): once a run's lease has expired
 * without the run finishing, status says `interrupted` (not `running`, not `idle` with
 * last_finished_at null) and shows the checkpoint the next run resumes from.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorRuntime } from '../../src/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { hostInstanceName } from '../../src/sync/lease-owner.ts';
import { getConnector } from '../../src/manifest/index.ts';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations, type SyncEngineOptions } from '../../src/sync/index.ts';
import { dialectCases, type TestDatabase } from '../search/helpers.ts';

const granola = getConnector('granola');

for (const [name, open, skipped] of dialectCases())
  describe.skipIf(skipped !== undefined)(`sync status after a crash on ${name}${skipped !== undefined ? ` (${skipped})` : ''}`, () => {
    let tdb: TestDatabase;
    let sim: GranolaSimulator;
    let store: RecordStore;

    beforeAll(async () => {
      tdb = await open();
      await migrate(tdb.database, [syncMigrations]);
      store = new RecordStore(tdb.database, { cursorSecret: 'test-secret' });
      sim = await startGranolaSimulator({ size: 45, rateLimit: false });
    });
    afterAll(async () => {
      await sim.close();
      await tdb.close();
    });

    const engine = (instanceId: string, leaseMs?: number): SyncEngine =>
      new SyncEngine({
        database: tdb.database,
        sink: store,
        instanceId,
        ...(leaseMs !== undefined ? { leaseMs } : {}),
        runtimeFor: async () => ({ manifest: granola, runtime: new ConnectorRuntime(granola, { api_key: sim.apiKey }, { baseUrl: sim.url, limiter: null }) }),
        hydrateConcurrency: 2,
      });

    it('an expired lease of an unfinished run is `interrupted`, with where it resumes', async () => {
      const a = engine('crashed', 200);
      await a.register('c-crash');
      const controller = new AbortController();
      await expect(a.runOnce('c-crash', { signal: controller.signal, onProgress: (p) => p.pages === 1 && controller.abort() })).rejects.toThrow();
      const b = engine('observer');
      await expect.poll(async () => (await b.status('c-crash', granola))?.status, { timeout: 5000, interval: 50 }).toBe('interrupted');
      const s = await b.status('c-crash', granola);
      expect(s?.last_finished_at).toBeNull();
      expect(s?.resume_from?.entities['notes']).toMatchObject({ done: false, records_seen: 30, params: { cursor: expect.any(String) } });
      // The next run resumes it, and then the status is idle again.
      const r = await b.runOnce('c-crash');
      expect(r.resumed).toBe(true);
      expect(r.run_id).toBe(s?.resume_from?.run_id);
      expect(await b.status('c-crash', granola)).toMatchObject({ status: 'idle' });
      expect((await b.status('c-crash', granola))?.resume_from).toBeUndefined();
    });

    const node = (o: Partial<SyncEngineOptions>, fetchImpl?: FetchLike): SyncEngine =>
      new SyncEngine({
        database: tdb.database,
        sink: store,
        runtimeFor: async () => ({
          manifest: granola,
          runtime: new ConnectorRuntime(granola, { api_key: sim.apiKey }, { baseUrl: sim.url, limiter: null, ...(fetchImpl ? { fetch: fetchImpl } : {}) }),
        }),
        hydrateConcurrency: 2,
        ...o,
      });

    /** A run killed after its first page, its 10-minute lease left behind as by kill -9. */
    async function killedRun(a: SyncEngine, connectorId: string): Promise<void> {
      await a.register(connectorId);
      const controller = new AbortController();
      await expect(a.runOnce(connectorId, { signal: controller.signal, onProgress: (p) => p.pages === 1 && controller.abort() })).rejects.toThrow();
    }

    it('after kill -9, the restarted instance (same SWITCHBOARD_INSTANCE_ID) knows the run is dead: interrupted, POST sync accepted, resumed at once', async () => {
      await killedRun(node({ instanceName: 'node-1', leaseMs: 600_000 }), 'c-restart');
      // Another instance cannot know: for it the lease is live.
      const other = node({ instanceName: 'node-2' });
      expect((await other.status('c-restart', granola))?.status).toBe('running');
      await expect(other.request('c-restart')).rejects.toMatchObject({ code: 'sync_running' });
      // The same instance, restarted (a new boot).
      const restarted = node({ instanceName: 'node-1' });
      expect((await restarted.status('c-restart', granola))?.status).toBe('interrupted');
      await expect(restarted.request('c-restart')).resolves.toBeUndefined();
      expect(await restarted.reclaim()).toBe(1);
      const r = await restarted.runOnce('c-restart');
      expect([r.resumed, r.entities['notes']?.records]).toEqual([true, 45]);
      expect((await restarted.status('c-restart', granola))?.status).toBe('idle');
    });

    it('without an instance id, a previous boot on this host is dead when its process is gone (a live one is not)', async () => {
      const gone = spawnSync(process.execPath, ['-e', '']).pid;
      await killedRun(node({ instanceId: `${hostInstanceName()}#${gone}#old-boot`, leaseMs: 600_000 }), 'c-gone');
      await killedRun(node({ instanceId: `${hostInstanceName()}#${process.pid}#other-boot`, leaseMs: 600_000 }), 'c-alive');
      const restarted = node({});
      expect((await restarted.status('c-gone', granola))?.status).toBe('interrupted');
      expect((await restarted.status('c-alive', granola))?.status).toBe('running');
      await expect(restarted.request('c-alive')).rejects.toMatchObject({ code: 'sync_running' });
      expect(await restarted.reclaim()).toBe(1);
      expect((await restarted.runOnce('c-gone')).resumed).toBe(true);
    });

    it('stop() ends a run hung on its upstream at once and hands its lease back: another instance resumes without waiting', async () => {
      let calls = 0;
      const hanging: FetchLike = (_url, init) => {
        calls++;
        return new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error)));
      };
      const a = node({ instanceName: 'node-stop', pollMs: 20 }, hanging);
      a.start();
      await a.register('c-stop');
      await expect.poll(() => calls, { timeout: 10_000 }).toBe(1);
      await a.stop();
      expect(a.stopped).toBe(true);
      const b = node({ instanceName: 'node-other' });
      expect((await b.status('c-stop', granola))?.status).toBe('interrupted');
      expect((await b.runOnce('c-stop')).entities['notes']?.records).toBe(45);
    });
  });
