/**
 * Element pairs (elementPairSort in src/search/dialect.ts): an `any` of two equalities, one on a
 * string, learned from searches whose leaves each list at least a page of values, built in the
 * background, and then read as one range of the pair in rid order. Results equal the reference
 * before the pair exists, once built, through every page, for the values' other order, for
 * elements that are a lone object (no array), and after another instance's updates, deletions
 * and inserts; conditions the pair cannot answer still probe. PostgreSQL learns them; SQLite
 * answers the same searches without.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { RecordStore, type SearchEntityDef } from '../../src/search/index.ts';
import { rng } from './fixtures.ts';
import { allSearchIds, dialectCases, StoredRecords, type TestDatabase } from './helpers.ts';

const C = 'conn-element-pairs';
const E = 'orders';
// `box.items`: an array of items, or in a few orders one item object (its values in no array).
const DEF: SearchEntityDef = { primaryKey: 'id', fields: { id: 'string', box: 'object', note: 'string' } };
type Params = Record<string, unknown>;

const SKUS = ['a', 'b', 'c'];
const COLORS = ['red', 'blue'];

/** Orders of 0-4 items with common values, a few whose items are one object instead of an array. */
function orders(seed: number, count: number, prefix = 'o'): Record<string, unknown>[] {
  const r = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
  const item = (): Record<string, unknown> => ({ sku: pick(SKUS), qty: 1 + Math.floor(r() * 3), color: pick(COLORS), ...(r() < 0.1 ? { qty: null } : {}) });
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}${String(i).padStart(4, '0')}`,
    box: { items: i % 17 === 3 ? item() : Array.from({ length: Math.floor(r() * 5) }, item) },
    note: pick(['x', 'y']),
  }));
}

const any = (and: Record<string, unknown>[], limit: number): Params => ({ query: { filter: { any: { 'box.items': { and } } } }, limit });
const QUERIES: Params[] = [
  any([{ eq: { sku: 'a' } }, { eq: { qty: 2 } }], 7),
  any([{ eq: { qty: 1 } }, { eq: { sku: 'b' } }], 9),
  any([{ eq: { sku: 'c' } }, { eq: { color: 'red' } }], 8),
  any([{ eq: { color: 'blue' } }, { eq: { sku: 'a' } }], 6),
  any([{ eq: { sku: 'zzz' } }, { eq: { qty: 1 } }], 5),
  any([{ eq: { sku: 'b' } }, { eq: { qty: 7 } }], 5),
  // Inside a not, as a check per record.
  { query: { filter: { not: { any: { 'box.items': { and: [{ eq: { sku: 'a' } }, { eq: { qty: 2 } }] } } } } }, limit: 25 },
];
/** Conditions an element pair does not answer (three leaves, a range, a null): they probe. */
const OTHERS: Params[] = [
  any([{ eq: { sku: 'a' } }, { eq: { qty: 1 } }, { eq: { color: 'red' } }], 6),
  any([{ eq: { sku: 'a' } }, { gte: { qty: 2 } }], 7),
  any([{ eq: { sku: 'b' } }, { eq: { qty: null } }], 5),
];

describe.each(dialectCases())('element pairs on %s', (dialect, open, skip) => {
  let t: TestDatabase | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  const note = skip === undefined ? '' : ` (${skip})`;

  it.skipIf(skip !== undefined)(
    `an any of two equalities equals the reference before and after its element pair is built, and after another instance's writes${note}`,
    async () => {
      t = await open();
      const pool = t.database.postgres;
      const texts: string[] = [];
      // PostgreSQL: the texts of the store's direct statements (which table a page read).
      const store = new RecordStore(
        pool === undefined ? t.database : { ...t.database, postgres: { query: (text, values) => (texts.push(text), pool.query(text, values)) } },
        { cursorSecret: 'test-secret' },
      );
      const stored = new StoredRecords(DEF);
      const base = orders(1, 300);
      await store.upsert(C, E, DEF, base);
      stored.upsert(base);
      const check = async (s: RecordStore, q: Params): Promise<boolean> => {
        texts.length = 0;
        expect(await allSearchIds(s, C, E, DEF, q), JSON.stringify(q)).toEqual(stored.reference(q));
        return texts.some((text) => /FROM search_pairs p\b/.test(text));
      };
      // The first search of a pair's condition probes and starts building it; the pair may be there
      // for its later pages and for the next searches.
      texts.length = 0;
      expect((await store.search(C, E, DEF, QUERIES[0]!)).data.map((d) => String(d['id']))).toEqual(stored.reference(QUERIES[0]!).slice(0, 7));
      expect(texts.some((text) => /FROM search_pairs p\b/.test(text))).toBe(false);
      for (const q of [...QUERIES, ...OTHERS]) await check(store, q);
      await store.settled();
      const { rows: defs } = await sql<{ key_field: number; sort_field: number; n: string }>`
      SELECT d.key_field, d.sort_field, count(p.rid) AS n FROM search_pair_defs d LEFT JOIN search_pairs p ON p.pair_id = d.pair_id GROUP BY d.pair_id ORDER BY d.pair_id`.execute(
        t.database.db,
      );
      if (dialect === 'sqlite') {
        expect(defs).toEqual([]);
        for (const q of [...QUERIES, ...OTHERS]) expect(await check(store, q)).toBe(false);
        return;
      }
      // (sku, qty) and (sku, color): element pairs, each a row per element holding both values.
      expect(defs.map((d) => Number(d.sort_field) < 0)).toEqual([true, true]);
      const elements = (other: string): number =>
        stored.list
          .flatMap((rec) => [(rec['box'] as { items: unknown }).items].flat() as Record<string, unknown>[])
          .filter((i) => typeof i['sku'] === 'string' && i[other] !== null && i[other] !== undefined).length;
      expect(defs.map((d) => Number(d.n))).toEqual([elements('qty'), elements('color')]);
      // Then the two-equality searches read their pair, in both orders, remembered or not (two rounds).
      for (let round = 0; round < 2; round++) {
        for (const q of QUERIES) expect(await check(store, q), JSON.stringify(q)).toBe(true);
        for (const q of OTHERS) expect(await check(store, q), JSON.stringify(q)).toBe(false);
      }
      // Another instance writes: items change, orders go and come; its writes keep the pairs current.
      const other = new RecordStore(t.database, { cursorSecret: 'test-secret' });
      const changed = orders(2, 100).map((rec, i) => ({ ...rec, id: base[i * 3]!['id'] }));
      await other.upsert(C, E, DEF, changed);
      stored.upsert(changed);
      const gone = base.filter((_, i) => i % 7 === 1).map((rec) => String(rec['id']));
      await other.deleteRecords(C, E, gone);
      stored.delete(gone);
      const added = orders(3, 60, 'n');
      await other.upsert(C, E, DEF, added);
      stored.upsert(added);
      for (const s of [store, other]) for (const q of [...QUERIES, ...OTHERS]) await check(s, q);
      for (const q of QUERIES) expect(await check(store, q)).toBe(true);
      // A change outside the search document leaves the index alone; the record copy trigger
      // (0006) updates sort pair rows, not element rows, which carry no copy.
      const kept = stored.list.slice(0, 20).map((rec) => ({ ...rec, extra: 'changed' }));
      await other.upsert(C, E, DEF, kept);
      stored.upsert(kept);
      const { rows: copies } = await sql<{
        n: string;
      }>`SELECT count(*) AS n FROM search_pairs p JOIN search_pair_defs d ON d.pair_id = p.pair_id WHERE d.sort_field < 0 AND p.record IS NOT NULL`.execute(
        t.database.db,
      );
      expect(Number(copies[0]!.n)).toBe(0);
      for (const q of QUERIES) expect(await check(store, q)).toBe(true);
    },
  );
});
