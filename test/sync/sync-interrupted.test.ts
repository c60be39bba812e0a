/**
 * Truthful sync status after a crash (issue 11, finding 8): once a run's lease has expired
 * without the run finishing, status says `interrupted` (not `running`, not `idle` with
 * last_finished_at null) and shows the checkpoint the next run resumes from.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorRuntime } from '../../src/index.ts';
import { getConnector } from '../../src/manifest/index.ts';
import { startGranolaSimulator, type GranolaSimulator } from '../../src/sandbox/granola/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
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
});
