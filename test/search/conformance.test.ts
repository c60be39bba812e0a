/**
 * One conformance suite for the search store, run on SQLite and (when
 * SWITCHBOARD_TEST_POSTGRES_URL is set) PostgreSQL: hand-checked operator cases, sort,
 * projection, cursors, injection attempts, paging while records change, and a seeded differential
 * test against the in-memory reference semantics. Store operations are in conformance-store.test.ts.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSearchParams, projectDocument, RecordStore, searchInMemory, type RefDoc } from '../../src/search/index.ts';
import { DEF, randomFilter, randomRecords, randomSort, RECORDS, rng } from './fixtures.ts';
import { dialectCases, type TestDatabase } from './helpers.ts';
import { allIds, C, E, expectError, openConformanceStore, reference, type Params } from './conformance-helpers.ts';

// [name, filter, expected ids]: expectations worked out by hand from RECORDS (see fixtures.ts).
const OPERATOR_CASES: [string, Params, string[]][] = [
  ['eq string is exact and case-sensitive', { eq: { name: 'John Smith' } }, ['r01']],
  ['eq string other case', { eq: { name: 'john smith' } }, []],
  ['eq reads a source path', { eq: { email: 'jane@example.org' } }, ['r02']],
  ['eq integer', { eq: { created_at: 1_600_000_000 } }, ['r01', 'r07']],
  ['eq number', { eq: { score: 7.5 } }, ['r01', 'r07']],
  ['eq number coerced from a string', { eq: { score: 3.5 } }, ['r06']],
  ['eq null: no value', { eq: { active: null } }, ['r03']],
  ['neq null: has a value', { neq: { age: null } }, ['r01', 'r02', 'r04', 'r05', 'r06', 'r07', 'r08', 'r09', 'r10', 'r11', 'r12']],
  ['neq excludes nulls', { neq: { active: true } }, ['r02', 'r06', 'r07', 'r12']],
  ['not includes nulls', { not: { eq: { active: true } } }, ['r02', 'r03', 'r06', 'r07', 'r12']],
  ['gt integer', { gt: { age: 40 } }, ['r02', 'r05', 'r08', 'r09', 'r12']],
  ['range in one condition object', { gte: { age: 34 }, lte: { age: 41 } }, ['r01', 'r02', 'r07', 'r10']],
  ['lt number', { lt: { score: 0 } }, ['r04']],
  ['in integer (with a coerced value)', { in: { age: [27, 29] } }, ['r04', 'r06']],
  ['gt string by code point', { gt: { name: 'Straße' } }, ['r04', 'r05', 'r10']],
  ['like infix, case-insensitive', { like: { name: '%smith%' } }, ['r01', 'r10', 'r11']],
  ['like prefix', { like: { name: 'j%' } }, ['r01', 'r02', 'r10', 'r11']],
  ['like escaped %', { like: { name: '%100\\%%' } }, ['r06']],
  ['like escaped _', { like: { name: '%under\\_score%' } }, ['r06']],
  ['like literal % in the middle', { like: { email: '%d\\%n%' } }, ['r06']],
  ['like _ is one character', { like: { name: '_ob' } }, ['r03']],
  ['like anchors both ends', { like: { name: 'b_' } }, []],
  ['like escaped backslash', { like: { title: 'back\\\\slash' } }, ['r06']],
  ['like non-Latin, no trigram', { like: { name: '%東京%' } }, ['r05']],
  ['like non-ASCII lower-casing', { like: { name: '%STRASSE%' } }, []],
  ['like ß', { like: { name: '%straße%' } }, ['r05']],
  ['like diacritics', { like: { name: '%zoë%' } }, ['r04']],
  ['like sees long strings whole', { like: { title: '%tail-one' } }, ['r08']],
  ['keyword whole word', { keyword: { name: 'smith' } }, ['r01', 'r10']],
  ['keyword any word, case-insensitive', { keyword: { name: 'SMITH bob' } }, ['r01', 'r03', 'r10']],
  ['keyword splits emails', { keyword: { email: 'example' } }, ['r01', 'r02', 'r03', 'r05', 'r06', 'r07', 'r08', 'r09', 'r11', 'r12']],
  ['keyword keeps diacritics', { keyword: { name: 'ångström' } }, ['r04']],
  ['keyword without diacritics', { keyword: { name: 'zoe' } }, []],
  ['keyword in long strings', { keyword: { title: 'tail' } }, ['r08', 'r09']],
  ['keyword over an object', { keyword: { owner: 'ada' } }, ['r01', 'r04', 'r08', 'r09', 'r10', 'r11', 'r12']],
  ['keyword over a path', { keyword: { 'custom.notes': 'quarter' } }, ['r01']],
  ['fuzzy one typo', { fuzzy: { name: 'smyth' } }, ['r01', 'r02', 'r10']],
  ['fuzzy transpositions, every word', { fuzzy: { name: 'jhon smiht' } }, ['r01', 'r10']],
  ['fuzzy two typos for long words', { fuzzy: { name: 'kristopher' } }, ['r12']],
  ['fuzzy short words are exact', { fuzzy: { name: 'bob' } }, ['r03']],
  ['fuzzy short word with a typo', { fuzzy: { name: 'bib' } }, []],
  ['eq on an array: contains', { eq: { tags: 'beta' } }, ['r01', 'r02', 'r12']],
  ['eq on an array is case-sensitive', { eq: { tags: 'vip' } }, ['r01', 'r11', 'r12']],
  ['eq on an array: number element', { eq: { tags: 1 } }, ['r08']],
  ['eq on an array: boolean element', { eq: { tags: true } }, ['r08']],
  ['neq on an array: some values, none equal', { neq: { tags: 'beta' } }, ['r04', 'r05', 'r06', 'r07', 'r08', 'r09', 'r11']],
  ['eq null on an array: no values', { eq: { tags: null } }, ['r03', 'r10']],
  ['eq on an object path', { eq: { 'custom.plan': 'pro' } }, ['r01', 'r04', 'r06', 'r08', 'r09', 'r10']],
  ['path values keep their JSON type', { eq: { 'custom.seats': 10 } }, ['r01', 'r08']],
  ['path string value', { eq: { 'custom.seats': '7' } }, ['r06']],
  ['gt on a path', { gt: { 'custom.seats': 5 } }, ['r01', 'r05', 'r08', 'r10']],
  ['eq on a nested path', { eq: { 'owner.name': 'Ada' } }, ['r01', 'r04', 'r08', 'r09', 'r12']],
  ['deep path', { eq: { 'custom.nested.deep.deeper': 'bottom' } }, ['r08']],
  ['eq on a whole object: any value inside', { eq: { custom: 'bottom' } }, ['r08']],
  ['boolean inside an object', { eq: { 'custom.flags.beta': true } }, ['r04']],
  ['in on a path', { in: { 'custom.plan': ['free', 'starter'] } }, ['r02', 'r07', 'r11', 'r12']],
  ['eq compares the first 512 characters', { eq: { title: `${'a'.repeat(600)} tail-one` } }, ['r08', 'r09']],
  ['nested and/or/not', { and: [{ or: [{ eq: { active: true } }, { lt: { age: 30 } }] }, { not: { eq: { 'custom.plan': 'pro' } } }] }, ['r05', 'r11']],
  ['injection text in a value matches literally', { eq: { name: "O'Brien; DROP TABLE search_records; --" } }, ['r07']],
  ['injection text in another value', { eq: { title: "name'; DROP TABLE records; --" } }, ['r07']],
  ['injection text in a like pattern', { like: { title: "%'; drop%" } }, ['r07']],
  ['unknown path matches nothing', { eq: { "custom.x'; DROP TABLE search_records; --": 'y' } }, []],
  ['contains: an array holds the value (case-sensitive)', { contains: { tags: 'vip' } }, ['r01', 'r11', 'r12']],
  ['contains a number element', { contains: { tags: 1 } }, ['r08']],
  ['contains looks at elements, not inside them', { contains: { tags: 'x' } }, []],
  ['eq looks inside elements', { eq: { tags: 'x' } }, ['r09']],
  ['contains on a path through an array of objects', { contains: { 'attendees.tags': 'x' } }, ['r02']],
  ['contains on a path, nested arrays flattened', { contains: { 'attendees.role': 'host' } }, ['r01', 'r02', 'r04', 'r05', 'r07']],
  ['any: both conditions on one element', { any: { attendees: { and: [{ eq: { email: 'ada@example.com' } }, { eq: { role: 'host' } }] } } }, ['r01']],
  [
    'without any: conditions on different elements',
    { and: [{ eq: { 'attendees.email': 'ada@example.com' } }, { eq: { 'attendees.role': 'host' } }] },
    ['r01', 'r04'],
  ],
  ['any with like', { any: { attendees: { like: { email: 'ada@%' } } } }, ['r01', 'r04', 'r05']],
  ['any with an ordering', { any: { attendees: { gt: { seats: 2 } } } }, ['r01', 'r04']],
  ['any with not: elements without the value count', { any: { attendees: { not: { eq: { role: 'host' } } } } }, ['r01', 'r04', 'r05', 'r07']],
  ['any with neq: elements with another value', { any: { attendees: { neq: { role: 'host' } } } }, ['r01', 'r04', 'r05']],
  ['any with eq null', { any: { attendees: { eq: { seats: null } } } }, ['r04', 'r05', 'r07']],
  ['any with keyword', { any: { attendees: { keyword: { email: 'ada' } } } }, ['r01', 'r04', 'r05']],
  ['any with contains', { any: { attendees: { contains: { tags: 'y' } } } }, ['r02']],
  ['nested any', { any: { attendees: { any: { badges: { eq: { kind: 'gold' } } } } } }, ['r05']],
  ['not any', { not: { any: { attendees: { eq: { role: 'host' } } } } }, ['r03', 'r06', 'r08', 'r09', 'r10', 'r11', 'r12']],
  ['any or a plain condition', { or: [{ any: { attendees: { eq: { seats: 2 } } } }, { eq: { name: 'Bob' } }] }, ['r02', 'r03']],
];

const SORT_CASES: [string, Params[], string[]][] = [
  ['integer asc, nulls last, ties by storage order', [{ age: 'asc' }], ['r06', 'r04', 'r11', 'r01', 'r07', 'r10', 'r02', 'r12', 'r05', 'r08', 'r09', 'r03']],
  [
    'integer desc, nulls last, ties in the same direction',
    [{ age: 'desc' }],
    ['r09', 'r08', 'r05', 'r12', 'r02', 'r10', 'r07', 'r01', 'r11', 'r04', 'r06', 'r03'],
  ],
  ['boolean then string', [{ active: 'desc' }, { name: 'asc' }], ['r01', 'r11', 'r08', 'r09', 'r05', 'r04', 'r10', 'r12', 'r02', 'r07', 'r06', 'r03']],
  ['number asc with nulls', [{ score: 'asc' }], ['r04', 'r05', 'r11', 'r06', 'r12', 'r01', 'r07', 'r02', 'r08', 'r09', 'r03', 'r10']],
];

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

    describe('operators', () => {
      it.each(OPERATOR_CASES)('%s', async (_name, filter, expected) => {
        const params = { query: { filter } };
        expect(await allIds(store, params)).toEqual(expected);
        // The hand-worked expectation is also what the reference semantics say.
        expect(reference(RECORDS, params)).toEqual(expected);
      });
    });

    describe('sort', () => {
      it.each(SORT_CASES)('%s', async (_name, sort, expected) => {
        const params = { query: { sort } };
        expect(await allIds(store, params)).toEqual(expected);
        expect(await allIds(store, { ...params, limit: 2 })).toEqual(expected);
        expect(reference(RECORDS, params)).toEqual(expected);
      });

      it('defaults to storage order', async () => {
        expect(await allIds(store, { query: {} })).toEqual(RECORDS.map((r) => r['id']));
      });
    });

    it('pages an any filter with cursors and sort', async () => {
      const params = {
        query: { filter: { any: { attendees: { or: [{ eq: { role: 'host' } }, { eq: { role: 'guest' } }] } } }, sort: [{ age: 'desc' }] },
        limit: 1,
      };
      const expected = reference(RECORDS, params);
      expect(expected).toEqual(['r05', 'r02', 'r07', 'r01', 'r04']);
      expect(await allIds(store, params)).toEqual(expected);
      expect(await allIds(store, { ...params, limit: 2 })).toEqual(expected);
    });

    it('answers a type mistake with 400 naming the field, the operator and the type', async () => {
      const errors = await expectError(store.search(C, E, DEF, { query: { filter: { gt: { attendees: 5 } } } }), 'invalid_search_query');
      expect(errors).toEqual([
        {
          path: '/query/filter/gt/attendees',
          message: expect.stringContaining(
            'gt does not apply to array field "attendees"; valid operators for array fields: eq, neq, in, like, keyword, fuzzy, contains, any',
          ),
        },
      ]);
      await expectError(store.search(C, E, DEF, { query: { filter: { keyword: { age: '34' } } } }), 'invalid_search_query');
      await expectError(store.search(C, E, DEF, { query: { filter: { contains: { name: 'x' } } } }), 'invalid_search_query');
    });

    it('returns search documents: search fields only, with search types', async () => {
      const { data, meta } = await store.search(C, E, DEF, { query: { filter: { in: { id: ['r06', 'r10'] } } } });
      expect(data).toEqual([projectDocument(RECORDS[5]!, DEF), projectDocument(RECORDS[9]!, DEF)]);
      expect(data[0]).toMatchObject({ age: 27, score: 3.5, active: false, email: 'odd%name_x@example.com' });
      expect(Object.keys(data[1]!)).toEqual(Object.keys(DEF.fields));
      expect(data[1]).toMatchObject({ email: null, score: null });
      expect(meta.has_more).toBe(false);
      expect(meta.cursor).toBeNull();
      expect(typeof meta.took_ms).toBe('number');
      expect(meta.synced_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    });

    it('projects fields, dotted paths into objects and through arrays', async () => {
      const { data } = await store.search(C, E, DEF, {
        query: { filter: { in: { id: ['r01', 'r03', 'r09'] } } },
        fields: ['name', 'custom.plan', 'owner.name', 'tags.k'],
      });
      expect(data).toEqual([
        { name: 'John Smith', custom: { plan: 'pro' }, owner: { name: 'Ada' }, tags: [] },
        { name: 'Bob', custom: null, owner: null, tags: [] },
        { name: 'Long Two', custom: { plan: 'pro' }, owner: { name: 'Ada' }, tags: [{ k: 'x' }, { k: 'y' }] },
      ]);
    });

    describe('cursors', () => {
      it('pages through the whole result exactly once', async () => {
        const params = { query: { filter: { neq: { age: null } }, sort: [{ created_at: 'desc' }, { name: 'asc' }] }, limit: 3 };
        const first = await store.search(C, E, DEF, params);
        expect(first.data).toHaveLength(3);
        expect(first.meta.has_more).toBe(true);
        expect(await allIds(store, params)).toEqual(reference(RECORDS, params));
      });

      it('rejects a tampered cursor', async () => {
        const params = { query: { sort: [{ age: 'asc' }] }, limit: 2 };
        const { meta } = await store.search(C, E, DEF, params);
        const cursor = meta.cursor!;
        const [payload, signature] = cursor.split('.') as [string, string];
        const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { k: unknown[]; r: number };
        decoded.r = 1; // try to skip ahead
        const forged = `${Buffer.from(JSON.stringify(decoded)).toString('base64url')}.${signature}`;
        await expectError(store.search(C, E, DEF, { ...params, cursor: forged }), 'invalid_cursor');
        const flipped = `${payload}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'AB' : 'AA'}`;
        await expectError(store.search(C, E, DEF, { ...params, cursor: flipped }), 'invalid_cursor');
        await expectError(store.search(C, E, DEF, { ...params, cursor: 'not-a-cursor' }), 'invalid_cursor');
      });

      it('rejects a cursor from another query, entity or connector', async () => {
        const params = { query: { sort: [{ age: 'asc' }] }, limit: 2 };
        const { meta } = await store.search(C, E, DEF, params);
        const cursor = meta.cursor!;
        const errors = await expectError(store.search(C, E, DEF, { query: { sort: [{ age: 'desc' }] }, limit: 2, cursor }), 'invalid_cursor');
        expect(errors[0]?.path).toBe('/cursor');
        await expectError(store.search(C, E, DEF, { query: { filter: { eq: { active: true } }, sort: [{ age: 'asc' }] }, cursor }), 'invalid_cursor');
        await expectError(store.search(C, 'other', DEF, { ...params, cursor }), 'invalid_cursor');
        await expectError(store.search('conn-2', E, DEF, { ...params, cursor }), 'invalid_cursor');
        // A different page size and projection keep the cursor valid.
        const next = await store.search(C, E, DEF, { query: { sort: [{ age: 'asc' }] }, limit: 5, fields: ['id'], cursor });
        expect(next.data.map((d) => d['id'])).toEqual(['r11', 'r01', 'r07', 'r10', 'r02']);
      });

      it('rejects a cursor signed with another secret', async () => {
        const other = new RecordStore(t.database, { cursorSecret: 'another-secret' });
        const { meta } = await other.search(C, E, DEF, { query: {}, limit: 1 });
        await expectError(store.search(C, E, DEF, { query: {}, limit: 1, cursor: meta.cursor }), 'invalid_cursor');
      });
    });

    describe('injection attempts', () => {
      it('rejects field names that are not search fields, changing nothing', async () => {
        const evil = "name'; DROP TABLE search_records; --";
        await expectError(store.search(C, E, DEF, { query: { filter: { eq: { [evil]: 'x' } } } }), 'invalid_search_query');
        await expectError(store.search(C, E, DEF, { query: { sort: [{ [evil]: 'asc' }] } }), 'invalid_search_query');
        await expectError(store.search(C, E, DEF, { query: { sort: [{ name: 'asc; DROP TABLE search_records' }] } }), 'invalid_search_query');
        await expectError(store.search(C, E, DEF, { query: {}, fields: [evil] }), 'invalid_search_query');
        await expectError(store.search(C, E, DEF, { query: { filter: { [`eq"; --`]: { name: 'x' } } } }), 'invalid_search_query');
        expect(await store.count(C, E)).toBe(RECORDS.length);
      });

      it('treats values as data: SQL, FTS and LIKE syntax match literally or not at all', async () => {
        const attempts: Params[] = [
          { eq: { name: "' OR '1'='1" } },
          { like: { name: "%'; DELETE FROM search_records; --%" } },
          { keyword: { name: '" OR * NEAR(a b) NOT' } },
          { fuzzy: { name: '"*" OR -- ;' } },
          { in: { name: ["x') OR 1=1 --", 'y'] } },
          { gt: { name: "z'; DROP TABLE search_values; --" } },
        ];
        for (const filter of attempts) {
          const params = { query: { filter } };
          expect(await allIds(store, params)).toEqual(reference(RECORDS, params));
        }
        expect(await store.count(C, E)).toBe(RECORDS.length);
        const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM search_values`.execute(t.database.db);
        expect(Number(rows[0]?.n)).toBeGreaterThan(0);
      });
    });

    it('pages through a search while records are updated, deleted and added: every surviving match exactly once', async () => {
      for (const [label, query] of [
        ['storage order', { filter: { neq: { age: null } } }],
        ['sorted', { filter: { gte: { age: 5 } }, sort: [{ age: 'asc' }, { name: 'desc' }] }],
        ['sorted with nulls', { sort: [{ score: 'desc' }] }],
      ] as const) {
        const entity = `mutating-${label}`;
        const records = randomRecords(99, 80, 'm');
        await store.upsert(C, entity, DEF, records, 'run-1');
        const initial = new Set(reference(records, { query }));
        const r = rng(5);
        const deleted = new Set<string>();
        const seen: string[] = [];
        let cursor: string | null = null;
        let added = 0;
        do {
          const page = await store.search(C, entity, DEF, { query, limit: 7, ...(cursor === null ? {} : { cursor }) });
          seen.push(...page.data.map((d) => String(d['id'])));
          cursor = page.meta.cursor;
          // A sync step: update some records (not their sort or filter fields), delete some, add some.
          const alive = records.filter((x) => !deleted.has(String(x['id'])));
          const updates = Array.from({ length: 5 }, () => alive[Math.floor(r() * alive.length)]!).map((x) => ({
            ...x,
            title: `updated ${r()}`,
            tags: ['changed'],
          }));
          await store.upsert(C, entity, DEF, updates, 'run-1');
          const victims = Array.from({ length: 2 }, () => String(alive[Math.floor(r() * alive.length)]!['id']));
          for (const v of victims) deleted.add(v);
          await store.deleteRecords(C, entity, victims);
          await store.upsert(C, entity, DEF, randomRecords(1000 + added, 2, `new${added++}-`), 'run-1');
        } while (cursor !== null);
        expect(new Set(seen).size, `${label}: no duplicates`).toBe(seen.length);
        const survivors = [...initial].filter((id) => !deleted.has(id));
        const seenSet = new Set(seen);
        expect(
          survivors.filter((id) => !seenSet.has(id)),
          `${label}: every surviving match seen`,
        ).toEqual([]);
      }
    });

    it('agrees with the reference semantics on random data and queries, page by page', async () => {
      const entity = 'random';
      const records = randomRecords(7, 150);
      await store.upsert(C, entity, DEF, records.slice(0, 100), 'run-1');
      await store.upsert(C, entity, DEF, records.slice(100), 'run-1');
      // Change some records (reindex path) and delete a few.
      const changed = randomRecords(8, 150).slice(0, 30);
      await store.upsert(C, entity, DEF, changed, 'run-2');
      const current = records.map((rec, i) => (i < 30 ? changed[i]! : rec));
      const removed = ['q005', 'q017', 'q120', 'q149'];
      await store.deleteRecords(C, entity, removed);
      const live = current.filter((x) => !removed.includes(String(x['id'])));
      const docs: RefDoc[] = current.map((rec, i) => ({ rid: i + 1, doc: projectDocument(rec, DEF) })).filter((d) => !removed.includes(String(d.doc['id'])));
      expect(await store.count(C, entity)).toBe(live.length);

      // SEARCH_FUZZ_RUNS / SEARCH_FUZZ_SEED widen the search for disagreements locally.
      const r = rng(Number(process.env['SEARCH_FUZZ_SEED'] ?? 2024));
      const runs = Number(process.env['SEARCH_FUZZ_RUNS'] ?? 120);
      for (let i = 0; i < runs; i++) {
        const query = { filter: randomFilter(r), ...(r() < 0.6 ? { sort: randomSort(r) } : {}) };
        const limit = 1 + Math.floor(r() * 12);
        const expected = searchInMemory(docs, DEF, parseSearchParams(DEF, { query })).map((d) => String(d.doc['id']));
        const got = await allIds(store, { query, limit: r() < 0.2 ? 1000 : limit }, entity);
        expect(got, JSON.stringify(query)).toEqual(expected);
      }
    });
  });
}
