/**
 * A run's lease is renewed from a timer (leases.ts keepLease), not only after each page: a page
 * slower than the lease (a throttled upstream, retries, a wait for a page-write slot) no longer
 * lets another instance take the run over beside it, and a renewal that finds the lease gone
 * stops the run at once, its pending upstream request aborted.
 *
 * Fake Date and setInterval (nothing else): the page is held by the test, time moves by
 * advanceTimersByTime, and each renewal is awaited on the database, so nothing depends on speed.
 */
import type { Kysely } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ConnectorRuntime } from '../../src/index.ts';
import { getConnector } from '../../src/manifest/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { LeaseLost, SyncLeases } from '../../src/sync/leases.ts';
import type { SyncTables } from '../../src/sync/sync-migrations.ts';
import { dialectCases, type TestDatabase } from '../search/helpers.ts';

const granola = getConnector('granola');
const [, openSqlite] = dialectCases()[0]!;
const LEASE_MS = 60_000;

describe('a sync run keeps its lease while a page is pending', () => {
  let tdb: TestDatabase;
  let store: RecordStore;
  let db: Kysely<SyncTables>;

  beforeAll(async () => {
    tdb = await openSqlite();
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test-secret' });
    db = tdb.database.db as unknown as Kysely<SyncTables>;
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  afterAll(async () => {
    await tdb.close();
  });

  /** An engine whose upstream holds its first page until `release`, and the signals its requests got. */
  const held = (): { engine: SyncEngine; release: () => void; signals: AbortSignal[]; asked: Promise<void> } => {
    let release!: () => void;
    let asked!: () => void;
    const askedP = new Promise<void>((r) => (asked = r));
    const signals: AbortSignal[] = [];
    const runtime = {
      async *pageSteps(_entity: string, _params: unknown, _from: unknown, _action: unknown, options: { signal?: AbortSignal }) {
        const signal = options.signal!;
        signals.push(signal);
        await new Promise<void>((resolve, reject) => {
          release = resolve;
          signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
          asked();
        });
        yield { page: { data: [{ id: 'n1', title: 'held', updated_at: '2026-11-01T00:00:00Z' }] }, next: null };
      },
      execute: () => Promise.resolve({ data: {} }),
      // The manifest's fixed params, as the real runtime gives them (no templates here).
      fixedParams: (params: unknown) => ({ ...((params ?? {}) as Record<string, unknown>) }),
    } as unknown as ConnectorRuntime;
    const engine = new SyncEngine({
      database: tdb.database,
      sink: {
        upsert: (c, e, def, list, run) => store.upsert(c, e, def, list, run),
        deleteMissing: (c, e, r) => store.deleteMissing(c, e, r),
        deleteRecords: (c, e, ids) => store.deleteRecords(c, e, ids),
        deleteConnector: (c) => store.deleteConnector(c),
        count: (c, e) => store.count(c, e),
      },
      runtimeFor: () => Promise.resolve({ runtime, manifest: granola }),
      instanceId: 'me',
      leaseMs: LEASE_MS,
    });
    return { engine, release: () => release(), signals, asked: askedP };
  };
  const leaseUntil = async (connectorId: string): Promise<string | null | undefined> =>
    (await db.selectFrom('sync_state').select('lease_until').where('connector_id', '=', connectorId).executeTakeFirst())?.lease_until;

  it('renews the lease every third of its length while the page waits, so no other instance can claim the run', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    const { engine, release, asked } = held();
    await engine.register('c-slow');
    const run = engine.runOnce('c-slow');
    await asked;
    // Three leases' worth of time pass while the page is pending; each renewal lands on the database.
    for (let i = 0; i < 9; i++) {
      await vi.advanceTimersByTimeAsync(LEASE_MS / 3);
      const expected = new Date(Date.now() + LEASE_MS).toISOString();
      await expect.poll(() => leaseUntil('c-slow')).toBe(expected);
    }
    expect(await new SyncLeases(db, 'other', LEASE_MS).claim('c-slow')).toBe(false);
    release();
    const result = await run;
    expect(result.entities['notes']?.records).toBe(1);
    expect(await store.count('c-slow', 'notes')).toBe(1);
    // The run handed its lease back; no timer is left renewing it.
    expect(await leaseUntil('c-slow')).toBeNull();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a renewal that finds the lease taken stops the run at once: its request aborted, nothing written', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'] });
    const { engine, signals, asked } = held();
    await engine.register('c-taken');
    const run = engine.runOnce('c-taken');
    run.catch(() => undefined);
    await asked;
    // Another instance holds it now (as after this one was thought dead).
    await db
      .updateTable('sync_state')
      .set({ lease_owner: 'other', lease_until: new Date(Date.now() + LEASE_MS).toISOString() })
      .where('connector_id', '=', 'c-taken')
      .execute();
    await vi.advanceTimersByTimeAsync(LEASE_MS / 3);
    await expect(run).rejects.toBeInstanceOf(LeaseLost);
    expect(signals[0]?.aborted).toBe(true);
    expect(await store.count('c-taken', 'notes')).toBe(0);
    const row = await db.selectFrom('sync_state').select(['lease_owner', 'status']).where('connector_id', '=', 'c-taken').executeTakeFirstOrThrow();
    expect(row.lease_owner).toBe('other');
    expect(vi.getTimerCount()).toBe(0);
  });
});
