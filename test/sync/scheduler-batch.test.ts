/**
 * The scheduler starts every due connector in one tick, not 16 per poll: with 100 connectors due
 * at once (issue 25's fleet bench) the last ones waited seven polls (30 s) to start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations, type RecordSink } from '../../src/sync/index.ts';
import { dialectCases, type TestDatabase } from '../search/helpers.ts';

const sink: RecordSink = {
  upsert: async () => undefined,
  deleteMissing: async () => 0,
  deleteRecords: async () => 0,
  deleteConnector: async () => 0,
  count: async () => 0,
};

for (const [name, open, skipped] of dialectCases())
  describe.skipIf(skipped !== undefined)(`scheduler batches on ${name}${skipped !== undefined ? ` (${skipped})` : ''}`, () => {
    let tdb: TestDatabase;
    beforeAll(async () => {
      tdb = await open();
      await migrate(tdb.database, [syncMigrations]);
    });
    afterAll(async () => {
      await tdb.close();
    });

    it('starts all of 40 due connectors in its first tick, each once, though a query reads 16 at a time', { timeout: 30_000 }, async () => {
      const ids = Array.from({ length: 40 }, (_, i) => `due-${String(i).padStart(2, '0')}`);
      const asked: string[] = [];
      let allAsked!: () => void;
      const everyone = new Promise<void>((resolve) => (allAsked = resolve));
      // The next poll is an hour away: only the first tick can start them.
      const engine = new SyncEngine({
        database: tdb.database,
        sink,
        pollMs: 3_600_000,
        runtimeFor: async (id) => {
          asked.push(id);
          if (asked.length === ids.length) allAsked();
          return undefined;
        },
      });
      for (const id of ids) await engine.register(id);
      engine.start();
      try {
        await everyone;
        expect([...asked].sort()).toEqual(ids);
      } finally {
        await engine.stop();
      }
    });

    it('goes on past a batch of connectors refused by canRun (paused), asking each once, a batch per call', { timeout: 30_000 }, async () => {
      const ids = Array.from({ length: 20 }, (_, i) => `refused-${String(i).padStart(2, '0')}`);
      const refused: string[] = [];
      const batches: number[] = [];
      let allRefused!: () => void;
      const everyone = new Promise<void>((resolve) => (allRefused = resolve));
      const engine = new SyncEngine({
        database: tdb.database,
        sink,
        pollMs: 3_600_000,
        runtimeFor: async () => undefined,
        canRun: async (batch) =>
          (batches.push(batch.length), batch).map((id) => {
            if (!id.startsWith('refused-')) return true;
            refused.push(id);
            if (refused.length === ids.length) allRefused();
            return false;
          }),
      });
      for (const id of ids) await engine.register(id);
      engine.start();
      try {
        await everyone;
        // Each asked once: a paused connector is no longer due, and the loop ends on a short batch.
        expect([...refused].sort()).toEqual(ids);
        // One call per batch of up to 16 (other connectors of the file may be due too), not one per connector.
        const asked = batches.reduce((a, b) => a + b, 0);
        expect(asked).toBeGreaterThanOrEqual(ids.length);
        expect(batches.every((n) => n <= 16)).toBe(true);
        expect(batches.length).toBe(Math.ceil(asked / 16));
      } finally {
        await engine.stop();
      }
    });

    it('starts every due connector in its first tick while the runs it started have not claimed their leases yet', { timeout: 30_000 }, async () => {
      // A claim can wait its turn (behind running syncs' writes): the connectors it started are
      // then still due, and must not fill the next batch.
      const ids = Array.from({ length: 40 }, (_, i) => `unclaimed-${String(i).padStart(2, '0')}`);
      const engine = new SyncEngine({ database: tdb.database, sink, pollMs: 3_600_000, runtimeFor: async () => undefined });
      for (const id of ids) await engine.register(id);
      const internals = engine as unknown as { leases: { claim(id: string): Promise<boolean> }; tickDone?: Promise<void> };
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const claim = internals.leases.claim.bind(internals.leases);
      internals.leases.claim = async (id) => {
        await held;
        return claim(id);
      };
      const started: string[] = [];
      const runOnce = engine.runOnce.bind(engine);
      engine.runOnce = (id, options) => {
        started.push(id);
        return runOnce(id, options);
      };
      engine.start();
      try {
        await internals.tickDone;
        // (Connectors an earlier test left due may start too.)
        expect(started.filter((id) => id.startsWith('unclaimed-')).sort()).toEqual(ids);
      } finally {
        release();
        await engine.stop();
      }
    });
  });
