/**
 * The record store's change log (the change feed behind GET .../connectors/{id}/records), on
 * SQLite and PostgreSQL: added / updated / deleted in commit order with cursors, an unchanged
 * payload is no change, tombstones carry the last payload and expire, concurrent writers of one
 * scope never skip a cursor, and migration 0003 gives records stored before it a change row.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { RecordStore, searchMigrations } from '../../src/search/index.ts';
import { migrate } from '../../src/store/database.ts';
import { DEF } from './fixtures.ts';
import { dialectCases, type TestDatabase } from './helpers.ts';

const C = 'conn-1';
const E = 'people';
const DAY = 86_400_000;

describe.each(dialectCases())('change log on %s', (_dialect, open, skip) => {
  let t: TestDatabase | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });
  const title = (s: string): string => `${s}${skip === undefined ? '' : ` (${skip})`}`;

  it.skipIf(skip !== undefined)(title('added, updated (payload changed only) and deleted, in order, with cursors; tombstones expire'), async () => {
    t = await open();
    let clock = Date.parse('2026-01-01T00:00:00Z');
    const store = new RecordStore(t.database, { cursorSecret: 's', tombstoneRetentionMs: 7 * DAY, now: () => clock });
    expect(
      await store.upsert(C, E, DEF, [
        { id: 'a', name: 'Ann' },
        { id: 'b', name: 'Bob' },
      ]),
    ).toEqual({ added: 2, updated: 0 });
    const first = await store.changes(C, E);
    expect(first.data.map((d) => [d.record['id'], d._metadata.action])).toEqual([
      ['a', 'added'],
      ['b', 'added'],
    ]);
    expect(first.has_more).toBe(false);
    const cursor = first.next_cursor!;
    expect(cursor).toBe(first.data[1]!._metadata.cursor);

    clock += 1000;
    // The same payload again is no change; a changed payload is an update.
    expect(
      await store.upsert(C, E, DEF, [
        { id: 'a', name: 'Ann' },
        { id: 'b', name: 'Bobby' },
      ]),
    ).toEqual({ added: 0, updated: 1 });
    expect(await store.deleteRecords(C, E, ['a'])).toBe(1);
    const next = await store.changes(C, E, { cursor });
    expect(next.data).toEqual([
      {
        record: { id: 'b', name: 'Bobby' },
        _metadata: {
          action: 'updated',
          first_seen_at: '2026-01-01T00:00:00.000Z',
          last_modified_at: '2026-01-01T00:00:01.000Z',
          deleted_at: null,
          cursor: expect.any(String),
        },
      },
      {
        record: { id: 'a', name: 'Ann' },
        _metadata: {
          action: 'deleted',
          first_seen_at: '2026-01-01T00:00:00.000Z',
          last_modified_at: '2026-01-01T00:00:01.000Z',
          deleted_at: '2026-01-01T00:00:01.000Z',
          cursor: expect.any(String),
        },
      },
    ]);
    // Paging by one gives the same entries.
    const one = await store.changes(C, E, { cursor, limit: 1 });
    expect(one.has_more).toBe(true);
    expect((await store.changes(C, E, { cursor: one.next_cursor!, limit: 1 })).data.map((d) => d.record['id'])).toEqual(['a']);
    // Nothing new after the last cursor: an empty page that keeps the cursor.
    expect(await store.changes(C, E, { cursor: next.next_cursor! })).toEqual({ data: [], next_cursor: next.next_cursor, has_more: false });

    // Back again after the deletion: added.
    expect(await store.upsert(C, E, DEF, [{ id: 'a', name: 'Ann' }])).toEqual({ added: 1, updated: 0 });
    expect(await store.deleteRecords(C, E, ['a'])).toBe(1);
    // After the retention the tombstone is no longer returned, and the next deletion prunes it.
    clock += 8 * DAY;
    expect((await store.changes(C, E)).data.map((d) => [d.record['id'], d._metadata.action])).toEqual([['b', 'updated']]);
    await store.deleteRecords(C, E, ['b']);
    const { rows } = await sql<{ record_id: string }>`SELECT record_id FROM record_changes ORDER BY record_id`.execute(t.database.db);
    expect(rows.map((r) => r.record_id)).toEqual(['b']);
    await expect(store.changes(C, E, { cursor: 'not-a-cursor' })).rejects.toMatchObject({ code: 'invalid_cursor' });
    // Full-refresh deletion leaves tombstones too; deleting the connector drops its log.
    await store.upsert(C, E, DEF, [{ id: 'x' }, { id: 'y' }], 'run-1');
    await store.upsert(C, E, DEF, [{ id: 'x' }], 'run-2');
    expect(await store.deleteMissing(C, E, 'run-2')).toBe(1);
    expect((await store.changes(C, E)).data.map((d) => [d.record['id'], d._metadata.action]).at(-1)).toEqual(['y', 'deleted']);
    await store.deleteConnector(C);
    expect(Number((await sql<{ n: number | string }>`SELECT count(*) AS n FROM record_changes`.execute(t.database.db)).rows[0]!.n)).toBe(0);
  });

  it.skipIf(skip !== undefined)(
    title('pruning the newest tombstone never hands its seq out again; a cursor past every one given is invalid_cursor (issue 37 item 11)'),
    async () => {
      t = await open();
      let clock = Date.parse('2026-01-01T00:00:00Z');
      const store = new RecordStore(t.database, { cursorSecret: 's', tombstoneRetentionMs: 7 * DAY, now: () => clock });
      // Nothing synced yet: only the start is a cursor.
      await expect(store.changes(C, E, { cursor: '1' })).rejects.toMatchObject({ code: 'invalid_cursor' });
      await store.upsert(C, E, DEF, [
        { id: 'a', name: 'Ann' },
        { id: 'b', name: 'Bob' },
      ]);
      await store.deleteRecords(C, E, ['b']);
      // A consumer reads everything and holds the last cursor: b's tombstone, the newest change.
      const held = (await store.changes(C, E)).next_cursor!;
      expect(await store.changes(C, E, { cursor: held })).toEqual({ data: [], next_cursor: held, has_more: false });
      await expect(store.changes(C, E, { cursor: String(Number(held) + 1) })).rejects.toMatchObject({ code: 'invalid_cursor' });
      await expect(store.changes(C, E, { cursor: '999999999' })).rejects.toMatchObject({ code: 'invalid_cursor' });
      // Past the retention, the next deletion prunes b's tombstone, then records a's deletion: after the held cursor.
      clock += 8 * DAY;
      await store.deleteRecords(C, E, ['a']);
      const next = await store.changes(C, E, { cursor: held });
      expect(next.data.map((d) => [d.record['id'], d._metadata.action])).toEqual([['a', 'deleted']]);
      expect(Number(next.next_cursor)).toBeGreaterThan(Number(held));
      // And an upsert after that too.
      await store.upsert(C, E, DEF, [{ id: 'c', name: 'Cy' }]);
      expect((await store.changes(C, E, { cursor: next.next_cursor! })).data.map((d) => [d.record['id'], d._metadata.action])).toEqual([['c', 'added']]);
    },
  );

  it.skipIf(skip !== undefined)(title('parallel writers of one scope: every change appears once, cursors strictly increasing'), async () => {
    t = await open();
    const store = new RecordStore(t.database, { cursorSecret: 's' });
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        store.upsert(
          C,
          E,
          DEF,
          Array.from({ length: 20 }, (_, k) => ({ id: `w${i}-${k}`, name: `n${k}` })),
        ),
      ),
    );
    const seen: string[] = [];
    const cursors: number[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await store.changes(C, E, { ...(cursor !== undefined ? { cursor } : {}), limit: 37 });
      seen.push(...page.data.map((d) => String(d.record['id'])));
      cursors.push(...page.data.map((d) => Number(d._metadata.cursor)));
      if (!page.has_more) break;
      cursor = page.next_cursor!;
    }
    expect(seen.length).toBe(240);
    expect(new Set(seen).size).toBe(240);
    expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
  });

  it.skipIf(skip !== undefined)(title('migration 0003 gives records stored before it a change row each'), async () => {
    const before = { name: searchMigrations.name, migrations: Object.fromEntries(Object.entries(searchMigrations.migrations).filter(([k]) => k < '0003')) };
    t = await open([before]);
    await sql`INSERT INTO search_scopes (connector_id, entity, synced_at) VALUES (${C}, ${E}, ${'2026-02-03T04:05:06.000Z'})`.execute(t.database.db);
    await sql`INSERT INTO search_records (scope_id, record_id, record, doc_hash, synced_at) SELECT scope_id, 'old', '{"id":"old","name":"Old"}', 'h', synced_at FROM search_scopes`.execute(
      t.database.db,
    );
    await migrate(t.database, [searchMigrations]);
    const store = new RecordStore(t.database, { cursorSecret: 's' });
    const page = await store.changes(C, E);
    expect(page.data).toEqual([
      {
        record: { id: 'old', name: 'Old' },
        _metadata: { action: 'added', first_seen_at: '2026-02-03T04:05:06.000Z', last_modified_at: '2026-02-03T04:05:06.000Z', deleted_at: null, cursor: '1' },
      },
    ]);
  });
});
