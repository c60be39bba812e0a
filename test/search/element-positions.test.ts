/**
 * `any` on element positions (search_values.e, migration 0005), on SQLite and (when
 * SWITCHBOARD_TEST_POSTGRES_URL is set) PostgreSQL: results equal to the reference semantics for
 * and/or/not/ranges inside, arrays of scalars, arrays in arrays, arrays above the `any`'s path
 * (confirmed plan), records indexed before the migration (confirmed plan until reindexed), and
 * the positions themselves.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { indexEntries } from '../../src/search/document.ts';
import { projectDocument, RecordStore, searchMigrations, type SearchEntityDef } from '../../src/search/index.ts';
import { migrate } from '../../src/store/database.ts';
import { DEF, randomRecords, rng } from './fixtures.ts';
import { allSearchIds, dialectCases, referenceIds, type TestDatabase } from './helpers.ts';

const C = 'conn-e';
const allIds = (store: RecordStore, entity: string, def: SearchEntityDef, params: Record<string, unknown>): Promise<string[]> =>
  allSearchIds(store, C, entity, def, params);
const reference = (records: Record<string, unknown>[], def: SearchEntityDef, params: Record<string, unknown>): string[] => referenceIds(records, def, params);

/** Fields with an array below an object (`orders.items`), an array of arrays and an array of scalars and objects. */
const ODEF: SearchEntityDef = {
  primaryKey: 'id',
  fields: { id: 'string', orders: 'object', lines: 'array' },
};

const ORECORDS: Record<string, unknown>[] = [
  {
    id: 'o1',
    orders: {
      items: [
        { sku: 'a', qty: 1 },
        { sku: 'b', qty: 5 },
      ],
    },
    lines: [
      { k: 'x', v: 1 },
      { k: 'y', v: 2 },
    ],
  },
  { id: 'o2', orders: { items: [{ sku: 'a', qty: 5 }] }, lines: [[{ k: 'x', v: 2 }], [{ k: 'y', v: 1 }]] },
  { id: 'o3', orders: { items: { sku: 'b', qty: 1 } }, lines: ['x', { k: 'x' }, { v: 1 }] },
  { id: 'o4', orders: { items: [{ sku: 'a', qty: 1, tags: ['p', 'q'] }, { sku: 'a', qty: 1 }, {}] }, lines: [{ k: 'x', v: 1, sub: [{ k: 'z' }] }] },
  { id: 'o5', orders: { items: [{ sku: 'c' }, { qty: 3 }] }, lines: [] },
  {
    id: 'o6',
    orders: null,
    lines: [
      { k: 'y', v: 3 },
      { k: 'x', v: 3 },
    ],
  },
];

/** The same shapes with `orders` an array of objects: the first array lies above `orders.items`. */
const ABOVE: Record<string, unknown>[] = [
  ...ORECORDS,
  {
    id: 'o7',
    orders: [
      {
        items: [
          { sku: 'a', qty: 9 },
          { sku: 'b', qty: 2 },
        ],
      },
      { items: [{ sku: 'b', qty: 1 }] },
    ],
    lines: [],
  },
];

const FILTERS: Record<string, unknown>[] = [
  { any: { 'orders.items': { and: [{ eq: { sku: 'a' } }, { eq: { qty: 1 } }] } } },
  { any: { 'orders.items': { and: [{ eq: { sku: 'b' } }, { eq: { qty: 1 } }] } } },
  { any: { 'orders.items': { and: [{ eq: { sku: 'a' } }, { gt: { qty: 2 } }] } } },
  { any: { 'orders.items': { and: [{ gte: { qty: 1 } }, { lte: { qty: 3 } }, { not: { eq: { sku: 'a' } } }] } } },
  { any: { 'orders.items': { or: [{ eq: { sku: 'c' } }, { and: [{ eq: { sku: 'a' } }, { eq: { qty: 5 } }] }] } } },
  { any: { 'orders.items': { and: [{ in: { sku: ['a', 'b'] } }, { neq: { qty: 1 } }] } } },
  { any: { 'orders.items': { and: [{ eq: { sku: 'a' } }, { eq: { tags: null } }] } } },
  { any: { 'orders.items': { and: [{ contains: { tags: 'q' } }, { eq: { qty: 1 } }] } } },
  { any: { 'orders.items': { and: [{ like: { sku: '%' } }, { eq: { qty: null } }] } } },
  { any: { 'orders.items': { and: [{ like: { sku: 'a%' } }, { in: { qty: [1, 5, 'x'] } }] } } },
  { any: { 'orders.items': { not: { eq: { sku: 'a' } } } } },
  { any: { 'orders.items': { eq: { sku: 'zzz' } } } },
  { not: { any: { 'orders.items': { and: [{ eq: { sku: 'a' } }, { eq: { qty: 1 } }] } } } },
  { or: [{ any: { 'orders.items': { eq: { qty: 9 } } } }, { any: { lines: { and: [{ eq: { k: 'y' } }, { eq: { v: 1 } }] } } }] },
  { any: { lines: { and: [{ eq: { k: 'x' } }, { eq: { v: 1 } }] } } },
  { any: { lines: { and: [{ eq: { k: 'x' } }, { eq: { v: 2 } }] } } },
  { any: { lines: { and: [{ eq: { k: 'x' } }, { eq: { v: null } }] } } },
  { any: { lines: { and: [{ eq: { k: 'x' } }, { eq: { 'sub.k': 'z' } }] } } },
  { any: { lines: { and: [{ eq: { k: 'x' } }, { lt: { v: 3 } }, { gt: { v: 1 } }] } } },
  { any: { lines: { neq: { k: 'x' } } } },
  { any: { lines: { any: { sub: { eq: { k: 'z' } } } } } },
];

describe('element positions of index entries', () => {
  it('numbers the objects of the first array on a path, arrays in it flattened, and keeps a value per element', () => {
    const def: SearchEntityDef = { primaryKey: 'id', fields: { id: 'string', a: 'array', o: 'object' } };
    const doc = projectDocument({ id: '1', a: ['s', { k: 'x', in: [{ k: 'y' }] }, [{ k: 'x' }], 7], o: { p: 1, list: [{ q: 1 }] } }, def);
    const entries = indexEntries(doc, def);
    const rows = entries.values.map((v) => [v.key, v.v, v.e, v.n]);
    expect(rows).toEqual([
      ['s:id', '1', null, 0],
      ['s:a', 's', null, 0],
      ['s:a.k', 'x', 1, 0],
      ['s:a.in.k', 'y', 1, 0],
      // The same value in another element is a row of its own (n tells the rows apart).
      ['s:a.k', 'x', 2, 1],
      ['n:a', 7, null, 0],
      ['n:o.p', 1, null, 0],
      ['n:o.list.q', 1, 1, 0],
    ]);
    expect(entries.arrays.sort()).toEqual(['a:a', 'a:o.list']);
    // The trigram text of a value stays once per path.
    expect(entries.likes.filter((l) => l.key === 's:a.k')).toEqual([{ key: 's:a.k', text: 'x' }]);
  });
});

for (const [dialect, open, skipped] of dialectCases()) {
  describe.skipIf(skipped !== undefined)(`any on element positions on ${dialect}${skipped !== undefined ? ` (${skipped})` : ''}`, () => {
    let t: TestDatabase | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });

    it('answers any as the reference does: ranges, and/or/not inside, arrays in arrays, arrays of scalars', async () => {
      t = await open();
      const store = new RecordStore(t.database, { cursorSecret: 's' });
      await store.upsert(C, 'orders', ODEF, ORECORDS);
      for (const filter of FILTERS) {
        for (const limit of [1, 100]) {
          const params = { query: { filter }, limit };
          expect(await allIds(store, 'orders', ODEF, params), JSON.stringify(filter)).toEqual(reference(ORECORDS, ODEF, params));
        }
      }
    });

    it('remembers the shape of an any on positions and answers it with other values as the reference does', async () => {
      t = await open();
      const store = new RecordStore(t.database, { cursorSecret: 's' });
      await store.upsert(C, 'orders', ODEF, ORECORDS);
      const pairs: [string, number][] = [
        ['a', 1],
        ['b', 5],
        ['a', 5],
        ['c', 3],
        ['b', 1],
        ['zzz', 1],
        ['a', 9],
      ];
      for (let round = 0; round < 3; round++) {
        for (const [sku, qty] of pairs) {
          for (const limit of [1, 100]) {
            const params = { query: { filter: { any: { 'orders.items': { and: [{ eq: { sku } }, { eq: { qty } }] } } } }, limit };
            expect(await allIds(store, 'orders', ODEF, params), `${sku}/${qty}`).toEqual(reference(ORECORDS, ODEF, params));
          }
        }
      }
      // PostgreSQL runs it as a remembered statement; SQLite has no one-pass form of it.
      expect(store.rememberedShapes > 0).toBe(dialect === 'postgres');
    });

    it('answers from the positions, without confirming candidates', async () => {
      t = await open();
      const store = new RecordStore(t.database, { cursorSecret: 's' });
      await store.upsert(C, 'orders', ODEF, ORECORDS);
      const both = { query: { filter: { any: { 'orders.items': { and: [{ eq: { sku: 'b' } }, { eq: { qty: 5 } }] } } } } };
      expect(await allIds(store, 'orders', ODEF, both)).toEqual(['o1']);
      // Merge o5's two items ({sku c} and {qty 3}) into one element behind the store's back: a
      // search confirming its candidates against the record would still not answer o5; one on
      // positions does.
      const c3 = { query: { filter: { any: { 'orders.items': { and: [{ eq: { sku: 'c' } }, { eq: { qty: 3 } }] } } } } };
      expect(await allIds(store, 'orders', ODEF, c3)).toEqual([]);
      await sql`UPDATE search_values SET e = 1 WHERE e IS NOT NULL AND rid = (SELECT rid FROM search_records WHERE record_id = 'o5')`.execute(t.database.db);
      expect(await allIds(store, 'orders', ODEF, c3)).toEqual(['o5']);
    });

    it('confirms candidates where a first array lies above the any path, and matches the reference', async () => {
      t = await open();
      const store = new RecordStore(t.database, { cursorSecret: 's' });
      await store.upsert(C, 'orders', ODEF, ABOVE);
      const { rows } = await sql<{ path: string }>`SELECT path FROM search_fields WHERE kind = 'a' ORDER BY path`.execute(t.database.db);
      expect(rows.map((r) => r.path)).toEqual(['lines', 'orders', 'orders.items']);
      for (const filter of FILTERS) {
        const params = { query: { filter } };
        expect(await allIds(store, 'orders', ODEF, params), JSON.stringify(filter)).toEqual(reference(ABOVE, ODEF, params));
      }
      // o7: sku a with qty 9 and sku b with qty 2 in two items of one order; positions number
      // orders, not items, so a/2 needs the confirmed plan to be excluded.
      const a9 = { query: { filter: { any: { 'orders.items': { and: [{ eq: { sku: 'a' } }, { eq: { qty: 9 } }] } } } } };
      expect(await allIds(store, 'orders', ODEF, a9)).toEqual(['o7']);
      const a2 = { query: { filter: { any: { 'orders.items': { and: [{ eq: { sku: 'a' } }, { eq: { qty: 2 } }] } } } } };
      expect(await allIds(store, 'orders', ODEF, a2)).toEqual([]);
    });

    it('matches the reference on random records and any filters', async () => {
      t = await open();
      const store = new RecordStore(t.database, { cursorSecret: 's' });
      const records = randomRecords(7, 300);
      await store.upsert(C, 'people', DEF, records);
      const r = rng(11);
      const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
      const leaf = (): Record<string, unknown> =>
        pick([
          () => ({ eq: { role: pick(['host', 'guest', 'Host']) } }),
          () => ({ eq: { email: `${pick(['ada', 'bob', 'cy'])}@${pick(['example.com', 'test.org'])}` } }),
          () => ({ [pick(['gt', 'gte', 'lt', 'lte', 'eq'])]: { seats: Math.floor(r() * 4) } }),
          () => ({ in: { role: ['host', pick(['guest', 'Host'])] } }),
          () => ({ contains: { tags: pick(['x', 'y', 'z']) } }),
          () => ({ neq: { role: 'host' } }),
          () => ({ eq: { seats: null } }),
          () => ({ like: { email: pick(['ada%', '%@test.org']) } }),
        ])();
      for (let i = 0; i < 60; i++) {
        const inner = { and: [leaf(), r() < 0.3 ? { not: leaf() } : r() < 0.5 ? { or: [leaf(), leaf()] } : leaf()] };
        const filter = r() < 0.2 ? { not: { any: { attendees: inner } } } : { any: { attendees: inner } };
        const params = { query: { filter }, limit: 7 };
        expect(await allIds(store, 'people', DEF, params), JSON.stringify(filter)).toEqual(reference(records, DEF, params));
      }
    });

    it('after migration 0005, answers any over values stored before it by confirming, until they are reindexed', async () => {
      const upTo4 = { name: searchMigrations.name, migrations: Object.fromEntries(Object.entries(searchMigrations.migrations).filter(([k]) => k < '0005')) };
      t = await open([upTo4]);
      const db = t.database.db;
      // Records written by this version's store into the schema before 0005 (through a scratch
      // column e, dropped again): values without positions, as a store before 0005 left them.
      await sql`ALTER TABLE search_values ADD COLUMN e integer`.execute(db);
      await sql`ALTER TABLE search_scopes ADD COLUMN change_seq bigint NOT NULL DEFAULT 0`.execute(db); // 0008's counter, a scratch column too
      await new RecordStore(t.database, { cursorSecret: 's' }).upsert(C, 'orders', ODEF, ORECORDS);
      await sql`ALTER TABLE search_values DROP COLUMN e`.execute(db);
      await sql`ALTER TABLE search_scopes DROP COLUMN change_seq`.execute(db);
      await sql`DELETE FROM search_fields WHERE kind = 'a'`.execute(db);
      // Their documents' hashes as INDEX_VERSION 1 left them: not this version's.
      await sql`UPDATE search_records SET doc_hash = 'index version 1'`.execute(db);
      await migrate(t.database, [searchMigrations]);
      const count = async (): Promise<number> =>
        Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM search_values WHERE e = -1`.execute(db)).rows[0]?.n);
      expect(await count()).toBeGreaterThan(0);

      const store = new RecordStore(t.database, { cursorSecret: 's' });
      for (const filter of FILTERS) {
        const params = { query: { filter } };
        expect(await allIds(store, 'orders', ODEF, params), JSON.stringify(filter)).toEqual(reference(ORECORDS, ODEF, params));
      }
      // The next upsert reindexes every record (INDEX_VERSION): no value is left without a position.
      await store.upsert(C, 'orders', ODEF, ORECORDS);
      expect(await count()).toBe(0);
      for (const filter of FILTERS) {
        const params = { query: { filter } };
        expect(await allIds(store, 'orders', ODEF, params), JSON.stringify(filter)).toEqual(reference(ORECORDS, ODEF, params));
      }
    });
  });
}
