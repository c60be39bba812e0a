/**
 * A sync writes a page while it fetches the next (run.ts): the write's round trips no longer
 * hold the upstream's requests back (issue 25's fleet bench on PostgreSQL, where 100 syncs spent
 * about a fifth of their time writing). Pages are still written in order, one at a time, and a
 * page's checkpoint is stored only once its records are.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorRuntime } from '../../src/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { getConnector } from '../../src/manifest/index.ts';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations, type RecordSink } from '../../src/sync/index.ts';
import { Slots } from '../../src/sync/run.ts';
import { dialectCases, type TestDatabase } from '../search/helpers.ts';

const granola = getConnector('granola');
const [, openSqlite] = dialectCases()[0]!;

describe('sync page writes', () => {
  let tdb: TestDatabase;
  let sim: GranolaSimulator;
  let store: RecordStore;

  beforeAll(async () => {
    tdb = await openSqlite();
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test-secret' });
    sim = await startGranolaSimulator({ size: 45, rateLimit: false });
  });
  afterAll(async () => {
    await sim.close();
    await tdb.close();
  });

  /** The store as a sync sink, with its upsert replaced. */
  const sinkWith = (upsert: RecordSink['upsert']): RecordSink => ({
    upsert,
    deleteMissing: (c, e, r) => store.deleteMissing(c, e, r),
    deleteRecords: (c, e, ids) => store.deleteRecords(c, e, ids),
    deleteConnector: (c) => store.deleteConnector(c),
    count: (c, e) => store.count(c, e),
  });

  it('fetches and hydrates the next page while a page is written, and writes the pages in order', async () => {
    const urls: string[] = [];
    const recording: FetchLike = (url, init) => {
      urls.push(String(url));
      return fetch(url, init);
    };
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const writes: string[] = [];
    const sink = sinkWith(async (connectorId, entity, def, list, syncRun) => {
      writes.push(`start ${list.length}`);
      if (writes.length === 1) await held;
      const c = await store.upsert(connectorId, entity, def, list, syncRun);
      writes.push(`end ${list.length}`);
      return c;
    });
    const engine = new SyncEngine({
      database: tdb.database,
      sink,
      runtimeFor: async () => ({
        manifest: granola,
        runtime: new ConnectorRuntime(granola, { api_key: sim.apiKey }, { baseUrl: sim.url, limiter: null, fetch: recording }),
      }),
      hydrateConcurrency: 2,
      // Whole pages here; parts of pages below.
      hydrateWriteRecords: 0,
    });
    await engine.register('c-pipe');
    const run = engine.runOnce('c-pipe');
    const gets = (): number => urls.filter((u) => /\/v1\/notes\/[^/?]+/.test(u)).length;
    // While the first page (30 notes) is held in its write, the second page (15) is listed and hydrated.
    await expect.poll(gets, { timeout: 10_000 }).toBe(45);
    expect(urls.filter((u) => /\/v1\/notes\?.*cursor=/.test(u))).toHaveLength(1);
    // ...but not written, and no checkpoint past the first page is stored before its records are.
    expect(writes).toEqual(['start 30']);
    const db = tdb.database.db as unknown as import('kysely').Kysely<import('../../src/sync/sync-migrations.ts').SyncTables>;
    const row = await db.selectFrom('sync_entities').selectAll().where('connector_id', '=', 'c-pipe').executeTakeFirst();
    expect(row?.records_seen ?? 0).toBe(0);
    release();
    const result = await run;
    expect(writes).toEqual(['start 30', 'end 30', 'start 15', 'end 15']);
    expect(result.entities['notes']).toEqual({ records: 45, deleted: 0, added: 45, updated: 0 });
    expect(await store.count('c-pipe', 'notes')).toBe(45);
    await engine.stop();
  });

  it('a failed page write fails the run, and the next run resumes from the last page written', async () => {
    let fail = true;
    let writes = 0;
    const sink = sinkWith(async (connectorId, entity, def, list, syncRun) => {
      writes++;
      if (writes === 2 && fail) throw new Error('disk full');
      return store.upsert(connectorId, entity, def, list, syncRun);
    });
    const engine = new SyncEngine({
      database: tdb.database,
      sink,
      runtimeFor: async () => ({ manifest: granola, runtime: new ConnectorRuntime(granola, { api_key: sim.apiKey }, { baseUrl: sim.url, limiter: null }) }),
      hydrateConcurrency: 2,
      // Whole pages here; parts of pages below.
      hydrateWriteRecords: 0,
    });
    await engine.register('c-fail');
    await expect(engine.runOnce('c-fail')).rejects.toThrow('disk full');
    expect(await store.count('c-fail', 'notes')).toBe(30);
    fail = false;
    const r = await engine.runOnce('c-fail');
    expect(r.resumed).toBe(true);
    expect(r.entities['notes']?.records).toBe(45);
    expect(await store.count('c-fail', 'notes')).toBe(45);
    await engine.stop();
  });

  it('pageWriteSlots: at most that many pages are written at once across runs, the others in order of arrival', async () => {
    let inFlight = 0;
    let most = 0;
    const releases: (() => void)[] = [];
    const started: string[] = [];
    const sink = sinkWith(async (connectorId, entity, def, list, syncRun) => {
      inFlight++;
      most = Math.max(most, inFlight);
      started.push(`${connectorId} ${list.length}`);
      await new Promise<void>((r) => releases.push(r));
      const c = await store.upsert(connectorId, entity, def, list, syncRun);
      inFlight--;
      return c;
    });
    const engine = new SyncEngine({
      database: tdb.database,
      sink,
      runtimeFor: async () => ({ manifest: granola, runtime: new ConnectorRuntime(granola, { api_key: sim.apiKey }, { baseUrl: sim.url, limiter: null }) }),
      hydrateConcurrency: 2,
      // Whole pages here; parts of pages below.
      hydrateWriteRecords: 0,
      pageWriteSlots: 1,
    });
    for (const c of ['c-slot-a', 'c-slot-b', 'c-slot-c']) await engine.register(c);
    const runs = ['c-slot-a', 'c-slot-b', 'c-slot-c'].map((c) => engine.runOnce(c));
    // Release writes one at a time as they start; only ever one is in flight.
    let released = 0;
    while (released < 6) {
      await expect.poll(() => releases.length, { timeout: 10_000 }).toBeGreaterThan(released);
      expect(inFlight).toBe(1);
      releases[released++]!();
    }
    const results = await Promise.all(runs);
    expect(results.map((r) => r.entities['notes']?.records)).toEqual([45, 45, 45]);
    expect(most).toBe(1);
    expect(started).toHaveLength(6);
    await engine.stop();
  });

  it("writes a hydrated page's records in parts as they are hydrated, its checkpoint only with the last part", async () => {
    const writes: number[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const engine = new SyncEngine({
      database: tdb.database,
      sink: sinkWith(async (connectorId, entity, def, list, syncRun) => {
        writes.push(list.length);
        // The first page's last part waits.
        if (writes.length === 4) await held;
        return store.upsert(connectorId, entity, def, list, syncRun);
      }),
      runtimeFor: async () => ({ manifest: granola, runtime: new ConnectorRuntime(granola, { api_key: sim.apiKey }, { baseUrl: sim.url, limiter: null }) }),
      hydrateConcurrency: 2,
      hydrateWriteRecords: 8,
    });
    await engine.register('c-parts');
    const run = engine.runOnce('c-parts');
    await expect.poll(() => writes.length, { timeout: 10_000 }).toBe(4);
    // Three parts of the first page (30 notes) are stored; no checkpoint past it yet.
    expect(await store.count('c-parts', 'notes')).toBe(24);
    const db = tdb.database.db as unknown as import('kysely').Kysely<import('../../src/sync/sync-migrations.ts').SyncTables>;
    const row = await db.selectFrom('sync_entities').selectAll().where('connector_id', '=', 'c-parts').executeTakeFirstOrThrow();
    expect([row.checkpoint, row.records_seen]).toEqual([null, 0]);
    release();
    const result = await run;
    expect(writes).toEqual([8, 8, 8, 6, 8, 7]);
    expect(result.entities['notes']).toEqual({ records: 45, deleted: 0, added: 45, updated: 0 });
    expect(await store.count('c-parts', 'notes')).toBe(45);
    await engine.stop();
  });

  it('a failed part fails the run; the next run resumes at the start of that page and stores every record once', async () => {
    let writes = 0;
    const engine = new SyncEngine({
      database: tdb.database,
      sink: sinkWith(async (connectorId, entity, def, list, syncRun) => {
        writes++;
        if (writes === 6) throw new Error('disk full');
        return store.upsert(connectorId, entity, def, list, syncRun);
      }),
      runtimeFor: async () => ({ manifest: granola, runtime: new ConnectorRuntime(granola, { api_key: sim.apiKey }, { baseUrl: sim.url, limiter: null }) }),
      hydrateConcurrency: 2,
      hydrateWriteRecords: 8,
    });
    await engine.register('c-parts-fail');
    // Page 1: parts 1-4 (30); page 2: part 5 (8) stored, part 6 fails.
    await expect(engine.runOnce('c-parts-fail')).rejects.toThrow('disk full');
    expect(await store.count('c-parts-fail', 'notes')).toBe(38);
    const r = await engine.runOnce('c-parts-fail');
    expect(r.resumed).toBe(true);
    expect(r.entities['notes']?.records).toBe(45);
    expect(await store.count('c-parts-fail', 'notes')).toBe(45);
    // The full refresh deleted nothing: the resumed run's records all carry the run's marker.
    expect(r.entities['notes']?.deleted).toBe(0);
    await engine.stop();
  });
});

describe('Slots', () => {
  it('holds at most its size, and hands a freed slot to the first caller waiting', async () => {
    const slots = new Slots(2);
    const order: string[] = [];
    const gates = new Map<string, () => void>();
    const job = (name: string) => () =>
      new Promise<void>((r) => {
        order.push(`start ${name}`);
        gates.set(name, () => {
          order.push(`end ${name}`);
          r();
        });
      });
    const all = ['a', 'b', 'c', 'd'].map((n) => slots.run(job(n)));
    await Promise.resolve();
    expect(order).toEqual(['start a', 'start b']);
    expect([slots.held, slots.queued]).toEqual([2, 2]);
    gates.get('b')!();
    await expect.poll(() => order.length).toBe(4);
    expect(order).toEqual(['start a', 'start b', 'end b', 'start c']);
    gates.get('a')!();
    await expect.poll(() => order.length).toBe(6);
    expect(order.slice(4)).toEqual(['end a', 'start d']);
    gates.get('c')!();
    gates.get('d')!();
    await Promise.all(all);
    expect([slots.held, slots.queued]).toEqual([0, 0]);
  });
});
