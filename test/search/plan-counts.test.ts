/**
 * What a search remembers of its scope between searches. The planner's counts (how many records a condition matches, read to choose between driving
 * from a set and walking in result order) are remembered per scope between searches. They only
 * choose a plan: pages are always read live, so records written or deleted since, by this store
 * or another instance, show in the next page, and a condition that matched nothing before is
 * looked up again rather than answered empty. The scope's synced_at, which PostgreSQL reads with
 * the search's own statements (as text), is the same exact time on every path a search takes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RecordStore } from '../../src/search/index.ts';
import { DEF } from './fixtures.ts';
import { dialectCases, type TestDatabase } from './helpers.ts';

const C = 'conn-1';
const E = 'people';

function person(i: number, title: string, tags: string[]): Record<string, unknown> {
  return {
    id: `p${String(i).padStart(3, '0')}`,
    name: `Person ${i}`,
    title,
    age: 20 + (i % 50),
    created_at: 1_000 + i,
    tags,
    contact: { email: `p${i}@example.com` },
  };
}

async function ids(store: RecordStore, params: Record<string, unknown>): Promise<string[]> {
  return (await store.search(C, E, DEF, params)).data.map((d) => String(d['id']));
}

describe.each(dialectCases())('planner counts on %s', (_dialect, open, skip) => {
  let t: TestDatabase | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it.skipIf(skip !== undefined)(`a condition that matched nothing finds the records written since${skip === undefined ? '' : ` (${skip})`}`, async () => {
    t = await open();
    const store = new RecordStore(t.database, { cursorSecret: 'test-secret' });
    await store.upsert(
      C,
      E,
      DEF,
      Array.from({ length: 60 }, (_, i) => person(i, i % 3 === 0 ? 'engineer' : 'sales', i % 4 === 0 ? ['vip'] : ['beta'])),
    );
    // Sorted with one listable condition (one count), and with two (counted together on PostgreSQL).
    const one = { query: { filter: { eq: { title: 'founder' } }, sort: [{ created_at: 'asc' }] }, limit: 5 };
    const two = { query: { filter: { and: [{ eq: { title: 'founder' } }, { contains: { tags: 'vip' } }] }, sort: [{ created_at: 'desc' }] }, limit: 5 };
    for (let k = 0; k < 3; k++) {
      expect(await ids(store, one)).toEqual([]);
      expect(await ids(store, two)).toEqual([]);
    }
    // Another instance writes: this store's cached scope sees the records on its next search.
    const other = new RecordStore(t.database, { cursorSecret: 'test-secret' });
    await other.upsert(C, E, DEF, [person(100, 'founder', ['vip']), person(101, 'founder', ['beta'])]);
    expect(await ids(store, one)).toEqual(['p100', 'p101']);
    expect(await ids(store, two)).toEqual(['p100']);
  });

  it.skipIf(skip !== undefined)(`pages follow writes after counts were remembered${skip === undefined ? '' : ` (${skip})`}`, async () => {
    t = await open();
    const store = new RecordStore(t.database, { cursorSecret: 'test-secret' });
    await store.upsert(
      C,
      E,
      DEF,
      Array.from({ length: 60 }, (_, i) => person(i, i % 3 === 0 ? 'engineer' : 'sales', i % 4 === 0 ? ['vip'] : ['beta'])),
    );
    const params = { query: { filter: { and: [{ eq: { title: 'engineer' } }, { contains: { tags: 'vip' } }] }, sort: [{ created_at: 'asc' }] }, limit: 3 };
    for (let k = 0; k < 3; k++) expect(await ids(store, params)).toEqual(['p000', 'p012', 'p024']);
    // Unsorted, paged with cursors: the smaller set drives (on PostgreSQL its rows are checked
    // before their records are read), the other condition is checked per record.
    const unsorted = { query: { filter: { and: [{ eq: { title: 'engineer' } }, { contains: { tags: 'vip' } }] } }, limit: 2 };
    const all: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await store.search(C, E, DEF, cursor === null ? unsorted : { ...unsorted, cursor });
      all.push(...page.data.map((d) => String(d['id'])));
      cursor = page.meta.cursor;
    } while (cursor !== null);
    expect(all).toEqual(['p000', 'p012', 'p024', 'p036', 'p048']);
    const other = new RecordStore(t.database, { cursorSecret: 'test-secret' });
    await other.deleteRecords(C, E, ['p000', 'p024']);
    expect(await ids(store, params)).toEqual(['p012', 'p036', 'p048']);
    await other.upsert(C, E, DEF, [person(12, 'sales', ['vip'])]);
    expect(await ids(store, params)).toEqual(['p036', 'p048']);
  });

  it.skipIf(skip !== undefined)(`synced_at is the write's time on every search path${skip === undefined ? '' : ` (${skip})`}`, async () => {
    t = await open();
    const at = Date.parse('2026-03-04T05:06:07.089Z');
    const store = new RecordStore(t.database, { cursorSecret: 'test-secret', now: () => at });
    await store.upsert(
      C,
      E,
      DEF,
      Array.from({ length: 30 }, (_, i) => person(i, i % 3 === 0 ? 'engineer' : 'sales', ['vip'])),
    );
    const iso = new Date(at).toISOString();
    const reader = new RecordStore(t.database, { cursorSecret: 'test-secret' });
    const searches = [
      { query: { filter: { eq: { title: 'engineer' } }, sort: [{ created_at: 'asc' }] }, limit: 2 }, // first: the scope read whole
      { query: { filter: { eq: { title: 'engineer' } }, sort: [{ created_at: 'asc' }] }, limit: 2 }, // cached scope, state with the page
      { query: { filter: { eq: { email: 'p3@example.com' } } } }, // a shape learned
      { query: { filter: { eq: { email: 'p6@example.com' } } } }, // the remembered shape
      { query: { filter: { eq: { email: 'nobody@example.com' } } } }, // remembered, empty page
      { query: { filter: { eq: { title: 'nobody' } }, sort: [{ created_at: 'asc' }] } }, // no row: the state read on its own
    ];
    for (const params of searches) expect((await reader.search(C, E, DEF, params)).meta.synced_at, JSON.stringify(params)).toBe(iso);
  });
});
