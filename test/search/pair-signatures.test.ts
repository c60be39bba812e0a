/**
 * Sort pair signatures (schema.ts, 0004; compile.ts, recordSignature): a walked pair row answers
 * an equality on a short value (a string of at most 16 bytes, any number or boolean) from its
 * signature alone, and looks up longer strings by a hash it confirms with a probe. Results equal
 * the in-memory reference for values at and around each edge (16 bytes, multi-byte characters,
 * a \x01 in a string, fractions, -0, large numbers, records without a signature); on PostgreSQL
 * the page statement probes the value index only where a signature cannot answer. Each row's
 * signature bits (migration 0006, compile.ts signatureBits) never rule out an entry the row
 * holds; a value whose bits a row holds without holding the value (a false positive), and rows
 * without bits, are answered by the signature's text. Each row's copy of its record (0006)
 * follows every change of the record, including one that leaves the search document alone and
 * one written in SQL by another writer; a row without a copy reads the record. Migration 0006
 * gives the rows of pairs built before it the bits and copies a writer gives them.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { signatureBits } from '../../src/search/signature.ts';
import { RecordStore, searchMigrations } from '../../src/search/index.ts';
import { migrate } from '../../src/store/database.ts';
import { DEF, rng } from './fixtures.ts';
import { allSearchIds, dialectCases, referenceIds, type TestDatabase } from './helpers.ts';

const C = 'conn-sig';
const E = 'people';
type Params = Record<string, unknown>;
const allIds = (store: RecordStore, params: Params): Promise<string[]> => allSearchIds(store, C, E, DEF, params);
const reference = (list: Record<string, unknown>[], params: Params): string[] => referenceIds(list, DEF, params);

const EXACT16 = 'sixteen-bytes-ok'; // 16 bytes: held as itself
const LONG17 = 'seventeen-bytes-x'; // 17 bytes: held by a hash
const WIDE = 'éééééééé'; // 8 characters, 16 bytes
const WIDER = 'ééééééééé'; // 9 characters, 18 bytes
const SOH = 'a\x01b'; // contains the separator: held by a hash
const PLANS = [EXACT16, LONG17, WIDE, WIDER, SOH, 'pro', ''];
const SCORES = [2.5, -1.25, 0, -0, 1e15, 123456789012345, 1e300, 7];

function records(seed: number, count: number, unsigned = true): Record<string, unknown>[] {
  const r = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)]!;
  return Array.from({ length: count }, (_, i) => ({
    id: `s${String(i).padStart(4, '0')}`,
    title: r() < 0.9 ? pick(['lead', 'user']) : null,
    created_at: r() < 0.9 ? 1_600_000_000 + Math.floor(r() * 40) * 60 : null,
    score: r() < 0.85 ? pick(SCORES) : null,
    active: r() < 0.8 ? r() < 0.5 : null,
    age: r() < 0.8 ? Math.floor(r() * 6) - 2 : null,
    // Every 40th record has more values than a signature holds (64): it has none, and is probed.
    tags: unsigned && i % 40 === 3 ? Array.from({ length: 70 }, (_, k) => `t${k}`) : r() < 0.6 ? [pick(PLANS)] : [],
    custom: { plan: pick(PLANS) },
  }));
}

const pairQuery = (filter: unknown, dir: 'asc' | 'desc' = 'asc', limit = 6): Params => ({
  query: { filter: { and: [{ eq: { title: 'lead' } }, filter] }, sort: [{ created_at: dir }] },
  limit,
});

const QUERIES: Params[] = [
  ...PLANS.map((p) => pairQuery({ eq: { 'custom.plan': p } })),
  ...PLANS.map((p) => pairQuery({ not: { contains: { tags: p } } }, 'desc')),
  pairQuery({ in: { 'custom.plan': [EXACT16, WIDE, 'pro'] } }),
  pairQuery({ in: { 'custom.plan': [LONG17, 'pro'] } }, 'desc'),
  pairQuery({ or: [{ eq: { 'custom.plan': WIDER } }, { contains: { tags: SOH } }] }),
  ...SCORES.map((s) => pairQuery({ eq: { score: s } }, 'desc', 5)),
  pairQuery({ in: { score: [2.5, -0, 1e300] } }),
  pairQuery({ not: { in: { age: [-2, 0, 3] } } }),
  pairQuery({ and: [{ eq: { active: false } }, { not: { eq: { age: -1 } } }] }),
  pairQuery({ contains: { tags: 't65' } }, 'asc', 2),
];

describe.each(dialectCases())('sort pair signatures on %s', (dialect, open, skip) => {
  let t: TestDatabase | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  const note = skip === undefined ? '' : ` (${skip})`;

  it.skipIf(skip !== undefined)(`walked equalities on short, long and odd values equal the reference${note}`, async () => {
    t = await open();
    const store = new RecordStore(t.database, { cursorSecret: 'test-secret' });
    const list = records(11, 300);
    await store.upsert(C, E, DEF, list);
    for (let round = 0; round < 2; round++) {
      for (const q of QUERIES) expect(await allIds(store, q), JSON.stringify(q)).toEqual(reference(list, q));
      await store.settled();
    }
  });

  it.skipIf(skip !== undefined || dialect !== 'postgres')(
    `a walk probes the value index only for values its signatures do not hold exactly${note}`,
    async () => {
      t = await open();
      const pool = t.database.postgres!;
      const pages: { text: string; values: unknown[] }[] = [];
      const store = new RecordStore(
        {
          ...t.database,
          postgres: { query: (text, values) => (text.includes('FROM search_pairs r') && pages.push({ text, values: values ?? [] }), pool.query(text, values)) },
        },
        { cursorSecret: 'test-secret' },
      );
      // Every record has a signature here (none has more than 64 values).
      const list = records(12, 300, false);
      await store.upsert(C, E, DEF, list);
      // A walk of created_at with the equality on title (no other condition lists records) teaches the pair.
      await allIds(store, pairQuery({ not: { eq: { active: true } } }));
      await store.settled();
      /** Loops of the probes (scans of search_values) in the statement of the first page of `q`, which walks the pair. */
      const probeLoops = async (q: Params): Promise<number> => {
        pages.length = 0;
        expect((await store.search(C, E, DEF, q)).data.map((d) => String(d['id']))).toEqual(reference(list, q).slice(0, 5));
        expect(pages.length).toBe(1);
        const page = pages[0]!;
        const rows = await pool.query<Record<string, { Plan: Record<string, unknown> }[]>>(
          `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, FORMAT JSON) ${page.text}`,
          page.values,
        );
        let loops = 0;
        const visit = (node: Record<string, unknown>): void => {
          if (node['Relation Name'] === 'search_values') loops += Number(node['Actual Loops'] ?? 0);
          for (const child of (node['Plans'] as Record<string, unknown>[] | undefined) ?? []) visit(child);
        };
        visit(rows[0]!['QUERY PLAN']![0]!.Plan);
        return loops;
      };
      // Short values, numbers and booleans: answered by the signatures, no probe.
      for (const filter of [
        { not: { eq: { 'custom.plan': EXACT16 } } },
        { not: { eq: { 'custom.plan': WIDE } } },
        { not: { eq: { score: 2.5 } } },
        { not: { eq: { active: true } } },
        { not: { in: { age: [-2, 3] } } },
        { not: { contains: { tags: 'pro' } } },
        { or: [{ eq: { 'custom.plan': EXACT16 } }, { eq: { age: 99 } }] },
      ]) {
        expect(await probeLoops(pairQuery(filter, 'asc', 5)), JSON.stringify(filter)).toBe(0);
      }
      // A string of more than 16 bytes, or with a \x01: each walked record holding its hash is probed
      // (an `or` lists no records, so the page walks the pair and keeps only records holding it).
      for (const value of [LONG17, WIDER, SOH]) {
        const q = pairQuery({ or: [{ eq: { 'custom.plan': value } }, { eq: { age: 99 } }] }, 'asc', 5);
        const kept = reference(list, q).slice(0, 5).length;
        expect(kept, value).toBeGreaterThan(0);
        expect(await probeLoops(q), value).toBeGreaterThanOrEqual(kept);
      }
    },
  );

  it.skipIf(skip !== undefined || dialect !== 'postgres')(
    `signature bits never rule out a value a row holds; false positives and rows without bits are answered by the signature${note}`,
    async () => {
      t = await open();
      const db = t.database.db;
      const store = new RecordStore(t.database, { cursorSecret: 'test-secret' });
      // 120 short plans, a few records each: some plan a record lacks has all its bits set in the
      // record's 64 bits (about one in eight for a signature of 15 entries).
      const plans = Array.from({ length: 120 }, (_, i) => `p${i}`);
      const list = records(13, 300, false).map((rec, i) => ({ ...rec, custom: { plan: plans[(i * 7) % plans.length]! } }));
      await store.upsert(C, E, DEF, list);
      await allIds(store, pairQuery({ not: { eq: { active: true } } }));
      await store.settled();
      const count = async (q: ReturnType<typeof sql>): Promise<number> =>
        Number((await sql<{ n: string }>`SELECT count(*) AS n FROM (${q}) q`.execute(db)).rows[0]!.n);
      expect(await count(sql`SELECT 1 FROM search_pairs WHERE sig IS NOT NULL`)).toBeGreaterThan(100);
      expect(await count(sql`SELECT 1 FROM search_pairs WHERE sig IS NOT NULL AND bits IS NULL`)).toBe(0);
      // Every entry of every signature has both its bits in the row's bits.
      expect(
        await count(
          sql`SELECT 1 FROM search_pairs p CROSS JOIN LATERAL unnest(string_to_array(p.sig, chr(1))) AS e(v) WHERE e.v <> '' AND (p.bits | ~${signatureBits(sql`chr(1) || e.v || chr(1)`)}) <> -1`,
        ),
      ).toBe(0);
      // Plans that some lead's row lacks although its bits hold all of the plan's bits.
      const field = (await sql<{ field_id: number }>`SELECT field_id FROM search_fields WHERE path = 'custom.plan' AND kind = 's'`.execute(db)).rows[0]!
        .field_id;
      const { rows } = await sql<{ v: string }>`SELECT DISTINCT v.v FROM search_pairs p CROSS JOIN unnest(${plans}::text[]) AS v(v)
      WHERE p.kv = 'lead' AND strpos(p.sig, chr(1) || ${field}::text || ':' || v.v || chr(1)) = 0
        AND (p.bits | ~${signatureBits(sql`chr(1) || ${field}::text || ':' || v.v || chr(1)`)}) = -1 ORDER BY 1`.execute(db);
      const falsePositives = rows.map((r) => r.v);
      expect(falsePositives.length).toBeGreaterThan(0);
      // An `or` lists no records and a `not` none either: each page walks the pair, checking every row.
      const queries = falsePositives
        .slice(0, 8)
        .flatMap((v) => [
          pairQuery({ or: [{ eq: { 'custom.plan': v } }, { eq: { age: 99 } }] }, 'asc', 4),
          pairQuery({ not: { eq: { 'custom.plan': v } } }, 'desc', 40),
        ]);
      for (const q of queries) expect(await allIds(store, q), JSON.stringify(q)).toEqual(reference(list, q));
      // Rows without bits (as an older writer leaves them) read as all bits set.
      await sql`UPDATE search_pairs SET bits = NULL WHERE rid % 2 = 0`.execute(db);
      for (const q of queries) expect(await allIds(store, q), JSON.stringify(q)).toEqual(reference(list, q));
    },
  );

  it.skipIf(skip !== undefined || dialect !== 'postgres')(
    `a pair row's copy of its record follows every change of the record; rows without a copy read it${note}`,
    async () => {
      t = await open();
      const db = t.database.db;
      const store = new RecordStore(t.database, { cursorSecret: 'test-secret' });
      const list = records(15, 200, false).map((rec, i) => ({ ...rec, phone: `+1-${i}` }));
      await store.upsert(C, E, DEF, list);
      await allIds(store, pairQuery({ not: { eq: { active: true } } }));
      await store.settled();
      const stale = async (): Promise<number> =>
        Number(
          (
            await sql<{
              n: string;
            }>`SELECT count(*) AS n FROM search_pairs p JOIN search_records r ON r.rid = p.rid WHERE p.record IS DISTINCT FROM r.record`.execute(db)
          ).rows[0]!.n,
        );
      expect(Number((await sql<{ n: string }>`SELECT count(*) AS n FROM search_pairs WHERE record IS NOT NULL`.execute(db)).rows[0]!.n)).toBeGreaterThan(50);
      expect(await stale()).toBe(0);
      // A change outside the search fields: the document, its hash and the index stay as they were.
      const changed = list.map((rec, i) => (i % 3 === 0 ? { ...rec, phone: `+2-${i}` } : rec));
      await store.upsert(C, E, DEF, changed);
      expect(await stale()).toBe(0);
      // Searched with a definition that shows that field (a manifest that gained it): the new values.
      const withPhone = { ...DEF, fields: { ...DEF.fields, phone: 'string' as const } };
      const q = pairQuery({ not: { eq: { active: true } } }, 'asc', 50);
      const docs = async (): Promise<unknown[]> => (await store.search(C, E, withPhone, q)).data;
      const expected = referenceIds(changed, withPhone, q)
        .slice(0, 50)
        .map((id) => changed.find((r: Record<string, unknown>) => r['id'] === id)!['phone']);
      expect((await docs()).map((d) => (d as { phone: string }).phone)).toEqual(expected);
      // Written in SQL by another writer (an older instance): copied too.
      await sql`UPDATE search_records SET record = jsonb_set(record, '{phone}', '"+3"') WHERE rid % 2 = 0`.execute(db);
      expect(await stale()).toBe(0);
      // Rows without a copy (an older writer's pair rows) read the record.
      await sql`UPDATE search_pairs SET record = NULL WHERE rid % 4 = 0`.execute(db);
      const now = (await sql<{ record: Record<string, unknown> }>`SELECT record FROM search_records ORDER BY rid`.execute(db)).rows.map((r) => r.record);
      const want = referenceIds(now, withPhone, q)
        .slice(0, 50)
        .map((id) => now.find((r) => r['id'] === id)!['phone']);
      expect((await docs()).map((d) => (d as { phone: string }).phone)).toEqual(want);
      expect(want.filter((p) => p === '+3').length).toBeGreaterThan(0);
    },
  );

  it.skipIf(skip !== undefined || dialect !== 'postgres')(
    `migration 0006 gives the rows of pairs built before it the bits and records a writer gives them${note}`,
    async () => {
      const upTo5 = { name: searchMigrations.name, migrations: Object.fromEntries(Object.entries(searchMigrations.migrations).filter(([k]) => k < '0006')) };
      t = await open([upTo5]);
      const db = t.database.db;
      // Pair rows written by this version's store into the schema before 0006 (through scratch
      // columns, dropped again): signatures without bits or records, as a store before 0006 left them.
      await sql`ALTER TABLE search_pairs ADD COLUMN bits bigint, ADD COLUMN record jsonb`.execute(db);
      await sql`ALTER TABLE search_scopes ADD COLUMN change_seq bigint NOT NULL DEFAULT 0`.execute(db); // 0008's counter, a scratch column too
      const list = records(14, 300);
      const before = new RecordStore(t.database, { cursorSecret: 'test-secret' });
      await before.upsert(C, E, DEF, list);
      await allIds(before, pairQuery({ not: { eq: { active: true } } }));
      await before.settled();
      await sql`ALTER TABLE search_pairs DROP COLUMN bits, DROP COLUMN record`.execute(db);
      await sql`ALTER TABLE search_scopes DROP COLUMN change_seq`.execute(db);
      await migrate(t.database, [searchMigrations]);
      const rows = async (): Promise<string> =>
        JSON.stringify(
          (
            await sql<{
              rid: string;
              sig: string | null;
              bits: string | null;
              record: unknown;
            }>`SELECT rid, sig, bits, record FROM search_pairs ORDER BY pair_id, rid`.execute(db)
          ).rows,
        );
      const migrated = await rows();
      const parsed = JSON.parse(migrated) as { sig: string | null; bits: string | null; record: unknown }[];
      expect(parsed.filter((r) => r.sig !== null && r.bits === null)).toEqual([]);
      expect(parsed.filter((r) => r.sig === null).length).toBeGreaterThan(0);
      expect(parsed.filter((r) => r.record === null)).toEqual([]);
      const store = new RecordStore(t.database, { cursorSecret: 'test-secret' });
      for (const q of QUERIES) expect(await allIds(store, q), JSON.stringify(q)).toEqual(reference(list, q));
      // Every record reindexed (a changed document hash): the writer's rows hold the same bits and records.
      await sql`UPDATE search_records SET doc_hash = 'changed'`.execute(db);
      await store.upsert(C, E, DEF, list);
      expect(await rows()).toEqual(migrated);
      for (const q of QUERIES) expect(await allIds(store, q), JSON.stringify(q)).toEqual(reference(list, q));
    },
  );
});
