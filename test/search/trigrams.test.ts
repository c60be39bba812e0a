/**
 * Per-field trigram indexes for `like`, on SQLite and (when SWITCHBOARD_TEST_POSTGRES_URL is
 * set) PostgreSQL: a like on one field reads only that field's trigrams, and migration 0002
 * upgrades a store written under 0001 (one trigram text per record) to them, existing records
 * included.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { RecordStore, searchMigrations } from '../../src/search/index.ts';
import { migrate } from '../../src/store/database.ts';
import { DEF, randomRecords, RECORDS } from './fixtures.ts';
import { allSearchIds, dialectCases, referenceIds, type TestDatabase } from './helpers.ts';

const C = 'conn-1';
const E = 'people';
const allIds = (store: RecordStore, params: Record<string, unknown>): Promise<string[]> => allSearchIds(store, C, E, DEF, params);
const reference = (records: Record<string, unknown>[], params: Record<string, unknown>): string[] => referenceIds(records, DEF, params);

/** Migration 0001 alone: the store as the previous version created it. */
const firstOnly = { name: searchMigrations.name, migrations: { '0001_search_store': searchMigrations.migrations['0001_search_store']! } };

/** Like patterns over scalar, source-path, nested and array fields, matching some records and not others. */
const PATTERNS: [field: string, pattern: string][] = [
  ['name', '%smith%'],
  ['name', '%example%'],
  ['email', '%smith%'],
  ['email', '%example.com'],
  ['email', '%exämple%'],
  ['title', '%sales%'],
  ['title', '%tail-two'],
  ['custom.notes', '%quarter%'],
  ['custom', '%ter%'],
  ['attendees.email', '%ada@%'],
  ['owner.name', '%lovelace%'],
  ['name', '%東京%'],
  ['name', '%100\\%%'],
  ['name', 'jo%smi%'],
  ['name', '%son%'],
  ['email', '%beta.%'],
];

async function expectLikesMatchReference(store: RecordStore, records: Record<string, unknown>[]): Promise<void> {
  for (const [field, pattern] of PATTERNS) {
    for (const limit of [1000, 7]) {
      const params = { query: { filter: { like: { [field]: pattern } } }, limit };
      expect(await allIds(store, params), `${field} like ${pattern}, limit ${limit}`).toEqual(reference(records, params));
    }
  }
}

describe.each(dialectCases())('per-field trigram index on %s', (dialect, open, skip) => {
  let t: TestDatabase | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it.skipIf(skip !== undefined)(`a like on one field reads only that field's trigrams${skip === undefined ? '' : ` (${skip})`}`, async () => {
    t = await open();
    const store = new RecordStore(t.database, { cursorSecret: 'test-secret' });
    // Every record's email contains "smith" or not independently of its name.
    const records = [
      { id: 'a', name: 'Ann Smith', contact: { email: 'ann@example.com' } },
      { id: 'b', name: 'Bob Jones', contact: { email: 'bob.smith@example.com' } },
      { id: 'c', name: 'Cy Smithers', contact: { email: 'cy.smithers@example.com' } },
      { id: 'd', name: 'Dee', contact: { email: 'dee@example.com' }, title: 'Smith & Co' },
    ];
    await store.upsert(C, E, DEF, records);
    expect(await allIds(store, { query: { filter: { like: { name: '%smith%' } } } })).toEqual(['a', 'c']);
    expect(await allIds(store, { query: { filter: { like: { email: '%smith%' } } } })).toEqual(['b', 'c']);
    const db = t.database.db;
    const { rows: fields } = await sql<{ field_id: number; path: string }>`SELECT field_id, path FROM search_fields WHERE kind = 's'`.execute(db);
    const nameId = fields.find((f) => f.path === 'name')!.field_id;
    if (dialect === 'sqlite') {
      // The name field's "smi" trigram lists only the records whose name holds it.
      const { rows } = await sql<{ rid: number }>`SELECT rowid AS rid FROM search_grams WHERE search_grams MATCH ${`"${nameId}_smi"`} ORDER BY rowid`.execute(
        db,
      );
      const { rows: named } = await sql<{ rid: number }>`SELECT rid FROM search_records WHERE record_id IN ('a', 'c') ORDER BY rid`.execute(db);
      expect(rows.map((r) => r.rid)).toEqual(named.map((r) => r.rid));
    } else {
      // The name field's values holding "smi", straight from the pg_trgm index: names only.
      const { rows } = await sql<{
        rid: string;
      }>`SELECT x.rid FROM search_values x WHERE x.field_id = ${nameId} AND x.txt IS NOT NULL AND COALESCE(x.low, x.txt) LIKE '%smi%' ORDER BY x.rid`.execute(
        db,
      );
      const { rows: named } = await sql<{ rid: string }>`SELECT rid FROM search_records WHERE record_id IN ('a', 'c') ORDER BY rid`.execute(db);
      expect(rows.map((r) => Number(r.rid))).toEqual(named.map((r) => Number(r.rid)));
      const { rows: indexes } = await sql<{
        indexdef: string;
      }>`SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'search_values_like'`.execute(db);
      expect(indexes[0]?.indexdef).toMatch(/USING gin \(COALESCE\(low, txt\) (\S+\.)?gin_trgm_ops\) WHERE \(txt IS NOT NULL\)/);
    }
  });

  it.skipIf(skip !== undefined)(`migration 0002 indexes the trigrams of records stored before it${skip === undefined ? '' : ` (${skip})`}`, async () => {
    t = await open([firstOnly]);
    const db = t.database.db;
    // Write records with this version's store into the 0001 schema, giving it what the new code
    // writes (SQLite: a scratch search_grams, dropped again below; PostgreSQL: a default for the
    // per-record text column 0001 requires), so that 0002 finds stored records with no trigram
    // index of the new kind.
    if (dialect === 'sqlite')
      await sql`CREATE VIRTUAL TABLE search_grams USING fts5(grams, content='', contentless_delete=1, tokenize="ascii tokenchars '_'", detail=none)`.execute(
        db,
      );
    else await sql`ALTER TABLE search_text ALTER COLUMN liketext SET DEFAULT ''`.execute(db);
    // and a scratch element position column (migration 0005's), dropped again below,
    await sql`ALTER TABLE search_values ADD COLUMN e integer`.execute(db);
    await sql`ALTER TABLE search_scopes ADD COLUMN change_seq bigint NOT NULL DEFAULT 0`.execute(db); // 0008's counter, a scratch column too
    // and a scratch change log (migration 0003's), dropped again below.
    await sql`CREATE TABLE record_changes (scope_id integer NOT NULL, record_id text NOT NULL, seq bigint NOT NULL, action text NOT NULL, payload_hash text NOT NULL,
      first_seen_at text NOT NULL, last_modified_at text NOT NULL, deleted_at text, tombstone text, PRIMARY KEY (scope_id, record_id))`.execute(db);
    // and scratch sort pair tables (migration 0004's, empty: the store reads the pair list), dropped again below.
    await sql`CREATE TABLE search_pair_defs (pair_id integer, scope_id integer, key_field integer, sort_field integer)`.execute(db);
    await sql`CREATE TABLE search_pairs (pair_id integer, rid bigint)`.execute(db);
    // More records than one reindexing batch (2,000), so the migration crosses a batch boundary.
    const records = [...RECORDS, ...randomRecords(15, 2100)];
    const store = new RecordStore(t.database, { cursorSecret: 'test-secret' });
    for (let i = 0; i < records.length; i += 500) await store.upsert(C, E, DEF, records.slice(i, i + 500));
    if (dialect === 'sqlite') await sql`DROP TABLE search_grams`.execute(db);
    await sql`DROP TABLE record_changes`.execute(db);
    await sql`ALTER TABLE search_values DROP COLUMN e`.execute(db);
    await sql`ALTER TABLE search_scopes DROP COLUMN change_seq`.execute(db);
    await sql`DROP TABLE search_pair_defs`.execute(db);
    await sql`DROP TABLE search_pairs`.execute(db);

    await migrate(t.database, [searchMigrations]);
    const { rows } = await sql<{ n: number | string }>`SELECT count(*) AS n FROM ${sql.table(dialect === 'sqlite' ? 'search_grams' : 'search_text')}`.execute(
      db,
    );
    expect(Number(rows[0]?.n)).toBeGreaterThan(2000);
    const upgraded = new RecordStore(t.database, { cursorSecret: 'test-secret' });
    await expectLikesMatchReference(upgraded, records);

    // Writes after the upgrade keep the index right: change and delete some records.
    const changed = records.map((r, i) => (i % 3 === 0 ? { ...r, name: `Renamed Smithson ${i}` } : r));
    await upgraded.upsert(C, E, DEF, changed);
    await upgraded.deleteRecords(C, E, ['r01', 'q007']);
    await expectLikesMatchReference(
      upgraded,
      changed.filter((r) => r['id'] !== 'r01' && r['id'] !== 'q007'),
    );
  });
});
