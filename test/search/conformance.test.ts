/**
 * One conformance suite for the search store, run on SQLite and (when
 * SWITCHBOARD_TEST_POSTGRES_URL is set) PostgreSQL: hand-checked operator cases, sort,
 * projection, cursors, injection attempts, store operations, paging while records change, and
 * a seeded differential test against the in-memory reference semantics.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/errors/index.ts';
import { parseSearchParams, projectDocument, RecordStore, searchInMemory, type RefDoc } from '../../src/search/index.ts';
import { DEF, randomFilter, randomRecords, randomSort, RECORDS, rng } from './fixtures.ts';
import { allSearchIds, countingCompiles, dialectCases, referenceIds, type TestDatabase } from './helpers.ts';

const C = 'conn-1';
const E = 'people';
const allIds = (store: RecordStore, params: Params, entity = E, connector = C): Promise<string[]> => allSearchIds(store, connector, entity, DEF, params);
const reference = (records: Record<string, unknown>[], params: Params): string[] => referenceIds(records, DEF, params);

type Params = Record<string, unknown>;

async function expectError(p: Promise<unknown>, code: string): Promise<{ path: string; message: string }[]> {
  try {
    await p;
  } catch (e) {
    expect(isSwitchboardError(e), String(e)).toBe(true);
    if (isSwitchboardError(e)) {
      expect(e.code).toBe(code);
      expect(e.status).toBe(400);
      return e.errors;
    }
  }
  throw new Error(`expected ${code}`);
}

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
      t = await open();
      store = new RecordStore(t.database, { cursorSecret: 'test-cursor-secret' });
      await store.upsert(C, E, DEF, RECORDS, 'run-1');
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
