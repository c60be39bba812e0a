/**
 * The search conformance suite's store operations, on SQLite and (when
 * SWITCHBOARD_TEST_POSTGRES_URL is set) PostgreSQL: isolation, reindexing, deletions, caches shared
 * with other store instances, remembered query shapes, PostgreSQL's pool clients. The rest of the
 * suite is in conformance.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordStore } from '../../src/search/index.ts';
import { DEF, RECORDS } from './fixtures.ts';
import { countingCompiles, dialectCases, type TestDatabase } from './helpers.ts';
import { allIds, C, E, openConformanceStore, type Params } from './conformance-helpers.ts';

for (const [dialect, open, skipped] of dialectCases()) {
  describe.skipIf(skipped !== undefined)(`search conformance on ${dialect}${skipped !== undefined ? ` (${skipped})` : ''}`, () => {
    let t: TestDatabase;
    let store: RecordStore;

    beforeAll(async () => {
      ({ t, store } = await openConformanceStore(open));
    });
    afterAll(async () => {
      await t?.close();
    });

    describe('store operations', () => {
      it('isolates connectors and entities, and upserts idempotently', async () => {
        const rows = [{ id: 'r01', name: 'Other Connector' }];
        await store.upsert('conn-iso', E, DEF, rows);
        await store.upsert('conn-iso', E, DEF, rows);
        await store.upsert(C, 'other-entity', DEF, rows);
        expect(await store.count('conn-iso', E)).toBe(1);
        expect(await allIds(store, { query: { filter: { keyword: { name: 'connector' } } } })).toEqual([]);
        expect(await allIds(store, { query: { filter: { keyword: { name: 'connector' } } } }, E, 'conn-iso')).toEqual(['r01']);
        // Re-upserting unchanged records changes nothing.
        await store.upsert(C, E, DEF, RECORDS, 'run-1');
        expect(await store.count(C, E)).toBe(RECORDS.length);
        expect(await allIds(store, { query: { filter: { keyword: { name: 'smith' } } } })).toEqual(['r01', 'r10']);
        expect(await store.deleteConnector('conn-iso')).toBe(1);
        expect(await store.count('conn-iso', E)).toBe(0);
        expect(await store.count(C, E)).toBe(RECORDS.length);
      });

      it('reindexes changed records, keeps the full record, strips NUL characters', async () => {
        const entity = 'changes';
        await store.upsert(C, entity, DEF, [
          { id: 'a', name: 'First Name', extra: { kept: true }, contact: { email: 'a@x.io' } },
          { id: 'b', name: 'Second' },
        ]);
        await store.upsert(C, entity, DEF, [
          { id: 'a', name: 'Renamed Person', extra: { kept: 'still' }, contact: { email: 'a@x.io' } },
          { id: 'c', name: 'nul\u0000char' },
          { id: 'c', name: 'last copy wins' },
        ]);
        expect(await allIds(store, { query: { filter: { keyword: { name: 'first' } } } }, entity)).toEqual([]);
        expect(await allIds(store, { query: { filter: { keyword: { name: 'renamed' } } } }, entity)).toEqual(['a']);
        expect(await allIds(store, { query: { filter: { eq: { name: 'last copy wins' } } } }, entity)).toEqual(['c']);
        expect(await store.getRecord(C, entity, 'a')).toEqual({ id: 'a', name: 'Renamed Person', extra: { kept: 'still' }, contact: { email: 'a@x.io' } });
        expect(await store.getRecord(C, entity, 'zzz')).toBeUndefined();
        await store.upsert(C, entity, DEF, [{ id: 'd', name: 'nul\u0000in\u0000name', nested: { 'k\u0000': 'v\u0000' } }]);
        expect(await store.getRecord(C, entity, 'd')).toEqual({ id: 'd', name: 'nulinname', nested: { k: 'v' } });
        expect(await allIds(store, { query: { filter: { eq: { name: 'nulinname' } } } }, entity)).toEqual(['d']);
        expect(await store.deleteRecords(C, entity, ['b', 'missing'])).toBe(1);
        expect(await store.count(C, entity)).toBe(3);
      });

      it('detects deletions after a full refresh (deleteMissing)', async () => {
        const entity = 'refresh';
        await store.upsert(C, entity, DEF, [{ id: '1' }, { id: '2' }, { id: '3' }], 'run-a');
        await store.upsert(C, entity, DEF, [{ id: '4' }], 'run-b');
        await store.upsert(C, entity, DEF, [{ id: '1', name: 'seen again' }, { id: '3' }], 'run-b');
        // An upsert without a run (e.g. an incremental update) keeps the record's mark.
        await store.upsert(C, entity, DEF, [{ id: '3', name: 'touched' }]);
        expect(await store.deleteMissing(C, entity, 'run-b')).toBe(1);
        expect(await allIds(store, { query: {} }, entity)).toEqual(['1', '3', '4']);
        expect(await allIds(store, { query: { filter: { keyword: { name: 'touched' } } } }, entity)).toEqual(['3']);
        expect(await store.deleteMissing(C, entity, 'run-b')).toBe(0);
      });

      it('sees fields and scopes that another store instance adds or removes (cached field ids are checked)', async () => {
        const entity = 'cache';
        const other = new RecordStore(t.database, { cursorSecret: 'test-cursor-secret' });
        await other.upsert('conn-cache', entity, DEF, [{ id: 'a', custom: { plan: 'pro' } }]);
        expect(await allIds(store, { query: { filter: { eq: { 'custom.tier': 'gold' } } } }, entity, 'conn-cache')).toEqual([]);
        const first = await store.search('conn-cache', entity, DEF, { query: {} });
        // A new path, added by another instance: the next search sees it.
        await other.upsert('conn-cache', entity, DEF, [{ id: 'b', custom: { tier: 'gold' } }]);
        expect(await allIds(store, { query: { filter: { eq: { 'custom.tier': 'gold' } } } }, entity, 'conn-cache')).toEqual(['b']);
        const later = await store.search('conn-cache', entity, DEF, { query: {} });
        expect(later.meta.synced_at! >= first.meta.synced_at!).toBe(true);
        // The scope deleted and created again (a new scope id) by the other instance.
        await other.deleteConnector('conn-cache');
        expect(await allIds(store, { query: {} }, entity, 'conn-cache')).toEqual([]);
        await other.upsert('conn-cache', entity, DEF, [{ id: 'c', custom: { tier: 'gold' } }]);
        expect(await allIds(store, { query: { filter: { eq: { 'custom.tier': 'gold' } } } }, entity, 'conn-cache')).toEqual(['c']);
      });

      it('remembers at most maxRememberedShapes query shapes across all scopes, and answers the same after forgetting', async () => {
        const bounded = new RecordStore(t.database, { cursorSecret: 'test-cursor-secret', maxRememberedShapes: 3 });
        const records = [
          { id: 'a', name: 'odd', age: 1 },
          { id: 'b', name: 'even', age: 2 },
        ];
        for (const c of ['conn-bound-1', 'conn-bound-2']) await bounded.upsert(c, 'bound', DEF, records);
        let most = 0;
        for (let round = 0; round < 2; round++) {
          for (const c of ['conn-bound-1', 'conn-bound-2']) {
            for (const limit of [1, 2, 3]) {
              expect(await allIds(bounded, { query: { filter: { eq: { name: 'odd' } } }, limit }, 'bound', c)).toEqual(['a']);
              expect(await allIds(bounded, { query: { filter: { in: { age: [2] } } }, limit }, 'bound', c)).toEqual(['b']);
              most = Math.max(most, bounded.rememberedShapes);
            }
          }
        }
        expect(most).toBeGreaterThan(0);
        expect(most).toBeLessThanOrEqual(3);
      });

      it("answers a repeated query shape from its remembered SQL with each query's own values, and sees every committed write at once", async () => {
        const entity = 'shapes';
        const cs = 'conn-shapes';
        const other = new RecordStore(t.database, { cursorSecret: 'test-cursor-secret' });
        const records = Array.from({ length: 7 }, (_, i) => ({ id: `r${i}`, name: i % 2 === 1 ? 'odd' : 'even', age: i % 3, active: i % 2 === 0 }));
        await store.upsert(cs, entity, DEF, records);
        const queries: [Params, string[]][] = [
          [{ query: { filter: { eq: { name: 'odd' } } }, limit: 2 }, ['r1', 'r3', 'r5']],
          [{ query: { filter: { eq: { name: 'even' } } }, limit: 2 }, ['r0', 'r2', 'r4', 'r6']],
          [{ query: { filter: { eq: { name: 'none' } } }, limit: 2 }, []],
          [{ query: { filter: { eq: { age: 1 } } } }, ['r1', 'r4']],
          [{ query: { filter: { eq: { age: 2 } } } }, ['r2', 'r5']],
          [{ query: { filter: { eq: { active: true } } }, limit: 3 }, ['r0', 'r2', 'r4', 'r6']],
          [{ query: { filter: { eq: { active: false } } }, limit: 3 }, ['r1', 'r3', 'r5']],
          [{ query: { filter: { in: { age: [0, 2] } } }, limit: 1 }, ['r0', 'r2', 'r3', 'r5', 'r6']],
          [{ query: { filter: { in: { age: [1, 0] } } }, limit: 1 }, ['r0', 'r1', 'r3', 'r4', 'r6']],
          [{ query: { filter: { in: { name: ['even', 'x'] } } }, limit: 5 }, ['r0', 'r2', 'r4', 'r6']],
          // keyword and like (with trigrams) reach SQL transformed: remembered with derived values on SQLite.
          [{ query: { filter: { keyword: { name: 'odd' } } }, limit: 2 }, ['r1', 'r3', 'r5']],
          [{ query: { filter: { keyword: { name: 'even nothing' } } }, limit: 2 }, ['r0', 'r2', 'r4', 'r6']],
          [{ query: { filter: { keyword: { name: 'Odd EVEN' } } }, limit: 4 }, ['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r6']],
          [{ query: { filter: { like: { name: '%dd' } } }, limit: 2 }, ['r1', 'r3', 'r5']],
          [{ query: { filter: { like: { name: 'EVE%' } } }, limit: 2 }, ['r0', 'r2', 'r4', 'r6']],
          [{ query: { filter: { like: { name: '%v_n%' } } }, limit: 3 }, ['r0', 'r2', 'r4', 'r6']],
          [{ query: { filter: { like: { name: '%ven%' } } }, limit: 3 }, ['r0', 'r2', 'r4', 'r6']],
          [{ query: { filter: { like: { name: 'o*d' } } }, limit: 3 }, []],
        ];
        // The first round compiles each shape; the later ones reuse its SQL with other values and cursors.
        for (let round = 0; round < 3; round++) {
          for (const [params, ids] of queries) expect(await allIds(store, params, entity, cs), JSON.stringify(params)).toEqual(ids);
        }
        // Writes committed by another instance show in the very next search of a remembered shape.
        const before = await store.search(cs, entity, DEF, { query: { filter: { eq: { name: 'odd' } } } });
        await other.upsert(cs, entity, DEF, [{ id: 'r7', name: 'odd', age: 1 }]);
        expect(await allIds(store, queries[0]![0], entity, cs)).toEqual(['r1', 'r3', 'r5', 'r7']);
        expect(await allIds(store, { query: { filter: { eq: { age: 1 } } } }, entity, cs)).toEqual(['r1', 'r4', 'r7']);
        expect(await allIds(store, { query: { filter: { keyword: { name: 'odd' } } }, limit: 2 }, entity, cs)).toEqual(['r1', 'r3', 'r5', 'r7']);
        expect(await allIds(store, { query: { filter: { like: { name: '%dd' } } }, limit: 2 }, entity, cs)).toEqual(['r1', 'r3', 'r5', 'r7']);
        const after = await store.search(cs, entity, DEF, { query: { filter: { eq: { name: 'odd' } } } });
        expect(after.meta.synced_at! >= before.meta.synced_at!).toBe(true);
        await other.deleteRecords(cs, entity, ['r1']);
        expect(await allIds(store, queries[0]![0], entity, cs)).toEqual(['r3', 'r5', 'r7']);
        await other.upsert(cs, entity, DEF, [{ id: 'r3', name: 'even' }]);
        expect(await allIds(store, queries[0]![0], entity, cs)).toEqual(['r5', 'r7']);
        // A field gaining its first value after the shape was remembered (a new field id).
        expect(await allIds(store, { query: { filter: { eq: { title: 'boss' } } } }, entity, cs)).toEqual([]);
        expect(await allIds(store, { query: { filter: { eq: { title: 'boss' } } } }, entity, cs)).toEqual([]);
        await other.upsert(cs, entity, DEF, [{ id: 'r8', title: 'boss' }]);
        expect(await allIds(store, { query: { filter: { eq: { title: 'boss' } } } }, entity, cs)).toEqual(['r8']);
        // The scope removed and created again by the other instance.
        await other.deleteConnector(cs);
        expect(await allIds(store, queries[0]![0], entity, cs)).toEqual([]);
        await other.upsert(cs, entity, DEF, [{ id: 'z', name: 'odd' }]);
        expect(await allIds(store, queries[0]![0], entity, cs)).toEqual(['z']);
      });

      it.skipIf(dialect !== 'postgres')('runs search statements on a pool client directly (PostgreSQL), not over a transaction', async () => {
        const cs = 'conn-direct';
        await store.upsert(cs, E, DEF, [
          { id: 'a', name: 'odd' },
          { id: 'b', name: 'even' },
          { id: 'c', name: 'odd' },
        ]);
        const direct: string[] = [];
        const pool = t.database.postgres!;
        const counted = new RecordStore(
          { ...t.database, postgres: { query: (text, values) => (direct.push(text), pool.query(text, values)) } },
          { cursorSecret: 'test-cursor-secret' },
        );
        const odd = { query: { filter: { eq: { name: 'odd' } } }, limit: 1 };
        expect(await allIds(counted, odd, E, cs)).toEqual(['a', 'c']); // learns the shape (with and without a cursor)
        direct.length = 0;
        expect(await allIds(counted, odd, E, cs)).toEqual(['a', 'c']);
        expect(await allIds(counted, { query: { filter: { eq: { name: 'even' } } }, limit: 1 }, E, cs)).toEqual(['b']);
        expect(direct.length).toBe(3); // one statement per page: each a remembered shape's own
        expect(direct.every((text) => text.includes('s_state'))).toBe(true);
        // Statements of searches that are not remembered shapes (a sorted page) go the same way.
        direct.length = 0;
        expect((await counted.search(cs, E, DEF, { query: { sort: [{ name: 'desc' }] }, fields: ['id'] })).data).toEqual([
          { id: 'c' },
          { id: 'a' },
          { id: 'b' },
        ]); // ties by record, descending too
        expect(direct.length).toBeGreaterThan(0);
        // A store over a transaction reads through it (its uncommitted writes), never the pool.
        await t.database.db.transaction().execute(async (trx) => {
          const inTrx = new RecordStore(
            { db: trx, dialect: 'postgres', postgres: { query: () => Promise.reject(new Error('pool used in a transaction')) } },
            { cursorSecret: 'test-cursor-secret' },
          );
          await inTrx.upsert(cs, E, DEF, [{ id: 'd', name: 'odd' }]);
          for (let round = 0; round < 2; round++) expect(await allIds(inTrx, odd, E, cs)).toEqual(['a', 'c', 'd']);
        });
        expect(await allIds(counted, odd, E, cs)).toEqual(['a', 'c', 'd']);
      });

      it.skipIf(dialect !== 'postgres')(
        'remembers sorted walks and GIN-backed keyword and like pages (PostgreSQL): later searches of the shape compile no SQL',
        async () => {
          const entity = 'walks';
          const cs = 'conn-walks';
          const records = Array.from({ length: 7 }, (_, i) => ({
            id: `w${i}`,
            name: i % 2 === 1 ? 'odd' : 'even',
            age: 10 - i,
            title: i === 3 ? 'solo' : 'many',
          }));
          await store.upsert(cs, entity, DEF, records);
          // Counts Kysely compiles of this store's statements: a search answered from remembered SQL compiles none.
          const { db: counting, counter } = countingCompiles(t.database.db);
          const watched = new RecordStore({ ...t.database, db: counting }, { cursorSecret: 'test-cursor-secret' });
          const queries: [Params, string[]][] = [
            // A walk of age's index bounded by conditions on age only, in both directions, with cursors.
            [{ query: { filter: { gte: { age: 5 }, lt: { age: 9 } }, sort: [{ age: 'desc' }] }, limit: 2 }, ['w2', 'w3', 'w4', 'w5']],
            [{ query: { filter: { gte: { age: 4 }, lt: { age: 8 } }, sort: [{ age: 'desc' }] }, limit: 2 }, ['w3', 'w4', 'w5', 'w6']],
            [{ query: { filter: { gt: { age: 7 } }, sort: [{ age: 'asc' }] }, limit: 1 }, ['w2', 'w1', 'w0']],
            [{ query: { filter: { gt: { age: 10 } }, sort: [{ age: 'asc' }] }, limit: 1 }, []],
            // GIN-backed pages below their cap (4 at 7 records and a page of 1).
            [{ query: { filter: { keyword: { name: 'odd' } } }, limit: 2 }, ['w1', 'w3', 'w5']],
            [{ query: { filter: { keyword: { title: 'solo' } } }, limit: 2 }, ['w3']],
            [{ query: { filter: { keyword: { title: 'none' } } }, limit: 2 }, []],
            [{ query: { filter: { like: { name: '%odd%' } } }, limit: 2 }, ['w1', 'w3', 'w5']],
            [{ query: { filter: { like: { name: 'eve%' } } }, limit: 3 }, ['w0', 'w2', 'w4', 'w6']],
          ];
          // Two rounds teach every shape (a capped one needs the scope's record count first).
          for (let round = 0; round < 2; round++) {
            for (const [params, ids] of queries) expect(await allIds(watched, params, entity, cs), JSON.stringify(params)).toEqual(ids);
          }
          counter.compiles = 0;
          for (const [params, ids] of queries) expect(await allIds(watched, params, entity, cs), JSON.stringify(params)).toEqual(ids);
          const empty = await watched.search(cs, entity, DEF, { query: { filter: { keyword: { title: 'nothing' } } }, limit: 2 });
          expect(empty.meta.synced_at).not.toBeNull(); // the scope's state read on its own after an empty page
          expect(counter.compiles).toBe(0);
          // A set reaching its cap (4 evens at a page of 1) is walked the full way instead; still the same pages.
          expect(await allIds(watched, { query: { filter: { keyword: { name: 'even' } } }, limit: 1 }, entity, cs)).toEqual(['w0', 'w2', 'w4', 'w6']);
          counter.compiles = 0;
          expect(await allIds(watched, { query: { filter: { keyword: { name: 'even' } } }, limit: 1 }, entity, cs)).toEqual(['w0', 'w2', 'w4', 'w6']);
          expect(counter.compiles).toBeGreaterThan(0);
          // Writes by another instance show at once; a new field drops the remembered SQL with the scope.
          const other = new RecordStore(t.database, { cursorSecret: 'test-cursor-secret' });
          await other.upsert(cs, entity, DEF, [
            { id: 'w7', name: 'odd', age: 6 },
            { id: 'w1', name: 'even', age: 9 },
          ]);
          expect(await allIds(watched, queries[0]![0], entity, cs)).toEqual(['w2', 'w3', 'w7', 'w4', 'w5']);
          expect(await allIds(watched, queries[4]![0], entity, cs)).toEqual(['w3', 'w5', 'w7']);
          expect(await allIds(watched, queries[7]![0], entity, cs)).toEqual(['w3', 'w5', 'w7']);
          await other.upsert(cs, entity, DEF, [{ id: 'w8', name: 'odd', age: 7, score: 1 }]);
          expect(await allIds(watched, queries[4]![0], entity, cs)).toEqual(['w3', 'w5', 'w7', 'w8']);
          expect(await allIds(watched, queries[0]![0], entity, cs)).toEqual(['w2', 'w8', 'w3', 'w7', 'w4', 'w5']); // ties by record, descending
        },
      );

      it('reports an entity never synced as empty with synced_at null', async () => {
        const result = await store.search('nobody', E, DEF, { query: { filter: { eq: { name: 'x' } } } });
        expect(result).toMatchObject({ data: [], meta: { has_more: false, cursor: null, synced_at: null } });
      });

      it('rejects a record without its primary key', async () => {
        await expect(store.upsert(C, 'bad', DEF, [{ name: 'no id' }])).rejects.toMatchObject({ code: 'upstream_protocol_error' });
      });
    });
  });
}
