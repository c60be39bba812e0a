/**
 * SQLite side of the search store. Lists and bulk rows travel as one JSON parameter read with
 * json_each: Kysely's driver prepares every statement it runs, and a short statement with one
 * JSON parameter prepares in microseconds where a multi-row VALUES statement with thousands of
 * placeholders costs more to prepare than SQLite then spends reading the JSON.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Executor, SearchDialect, ValueRow } from './dialect.ts';
import type { ValueKind } from './query.ts';
import { gramToken, likeToGlob, likeTrigrams, type LikePart } from './text.ts';

/** The FTS5 query for records having, for every group, one of the group's tokens. */
function tokenMatch(groups: string[][]): string {
  // Tokens are [0-9a-z_] only (see wordToken, gramToken), so quoting each one is all the FTS5 query syntax needs.
  return groups.map((g) => `(${g.map((t) => `"${t}"`).join(' OR ')})`).join(' AND ');
}

/** Records (column `rid`, in rid order) of a token table having, for every group, one of the group's tokens; with `rid`, that one record. */
function tokenQuery(table: 'search_words' | 'search_grams', groups: string[][], rid?: RawBuilder<unknown>): RawBuilder<unknown> {
  const match = tokenMatch(groups);
  return sql`SELECT rowid AS rid FROM ${sql.table(table)} WHERE ${sql.table(table)} MATCH ${match}${rid === undefined ? sql`` : sql` AND rowid = ${rid}`}`;
}

export const sqliteSearchDialect: SearchDialect = {
  name: 'sqlite',

  valueColumn(alias: string, _kind: ValueKind) {
    return sql.ref(`${alias}.v`);
  },

  inList(expr, values) {
    return sql<SqlBool>`${expr} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;
  },

  wordsQuery(groups, rid) {
    return tokenQuery('search_words', groups, rid);
  },

  likeCondition(parts: LikePart[]) {
    return sql<SqlBool>`COALESCE(x.low, x.v) GLOB ${likeToGlob(parts)}`;
  },

  gramTokens: true,

  tokenMatch,

  likeCandidates(parts: LikePart[], fieldIds: number[], confirm: (rid: RawBuilder<unknown>) => RawBuilder<SqlBool>) {
    const trigrams = likeTrigrams(parts);
    if (trigrams.length === 0) return undefined;
    // Records where one of the fields holds every trigram (for a path with several field ids,
    // each trigram in one of them), then the pattern checked on the fields' own values.
    const grams = tokenQuery(
      'search_grams',
      trigrams.map((t) => fieldIds.map((id) => gramToken(id, t))),
    );
    return sql`SELECT g.rid FROM (${grams}) g WHERE ${confirm(sql.ref('g.rid'))}`;
  },

  exists(subquery) {
    return sql<SqlBool>`EXISTS (${subquery})`;
  },

  driver(subquery) {
    return sql`(${subquery})`;
  },

  // SQLite never reorders the tables of a CROSS JOIN.
  orderedJoin: sql`CROSS JOIN`,

  reusableSql(text, parameters) {
    // With sqlite_stat4 statistics (after ANALYZE or PRAGMA optimize), SQLite reads the bound
    // value of a parameter compared with an indexed column to estimate rows, and re-prepares
    // the statement whenever that parameter is bound again: on every run (measured: an indexed
    // eq page 6 µs without statistics, 23–28 µs with). `+?` is the same value, hidden from the
    // estimate; the index is still used (the plus is on the value side). Our SQL has no string
    // literals, so every ? is a parameter; otherwise the text stays as it is.
    const marks = text.split('?').length - 1;
    return marks === parameters.length ? text.replaceAll('?', '+?') : text;
  },

  repeated: sql``,

  sameElement(a, b) {
    return sql<SqlBool>`${a} IS ${b}`;
  },

  parseRecord(value) {
    return JSON.parse(String(value)) as Record<string, unknown>;
  },

  parseTime(value) {
    return value === null || value === undefined ? null : new Date(String(value)).toISOString();
  },

  async upsertRecords(db, scopeId, records, syncedAt, syncRun) {
    // value->1 is the record's JSON text; `WHERE true` disambiguates ON CONFLICT from a join
    // constraint after INSERT ... SELECT.
    const batch = `[${records.map(([id, json, hash]) => `[${JSON.stringify(id)},${json},${JSON.stringify(hash)}]`).join(',')}]`;
    const { rows } = await sql<{ rid: number; record_id: string }>`
      INSERT INTO search_records (scope_id, record_id, record, doc_hash, synced_at, sync_run)
      SELECT ${scopeId}, value->>0, value->1, value->>2, ${syncedAt}, ${syncRun} FROM json_each(${batch}) WHERE true
      ON CONFLICT (scope_id, record_id) DO UPDATE SET
        record = excluded.record, doc_hash = excluded.doc_hash, synced_at = excluded.synced_at,
        sync_run = COALESCE(excluded.sync_run, search_records.sync_run)
      RETURNING rid, record_id`.execute(db);
    return rows;
  },

  async insertValues(db: Executor, rows: ValueRow[]) {
    if (rows.length === 0) return;
    // In (field_id, v) order: the secondary index is then written front to back, each page once
    // per batch, instead of at random (the primary key is written in rid order either way).
    const sorted = [...rows].sort((a, b) => a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0));
    await sql`INSERT INTO search_values (rid, field_id, v, n, low, e) SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5 FROM json_each(${JSON.stringify(sorted)})`.execute(
      db,
    );
  },

  async insertText(db, rows) {
    const words = rows.filter((r) => r[1].length > 0).map(([rid, tokens]) => [rid, tokens.join(' ')]);
    if (words.length > 0) await sql`INSERT INTO search_words (rowid, words) SELECT value->>0, value->>1 FROM json_each(${JSON.stringify(words)})`.execute(db);
    const grams = rows.filter((r) => r[2].length > 0).map(([rid, , g]) => [rid, g.join(' ')]);
    if (grams.length > 0) await sql`INSERT INTO search_grams (rowid, grams) SELECT value->>0, value->>1 FROM json_each(${JSON.stringify(grams)})`.execute(db);
  },

  async deleteIndex(db, rids) {
    if (Array.isArray(rids) && rids.length === 0) return;
    const list = Array.isArray(rids) ? sql`SELECT value FROM json_each(${JSON.stringify(rids)})` : rids;
    await sql`DELETE FROM search_values WHERE rid IN (${list})`.execute(db);
    await sql`DELETE FROM search_words WHERE rowid IN (${list})`.execute(db);
    await sql`DELETE FROM search_grams WHERE rowid IN (${list})`.execute(db);
    await sql`DELETE FROM search_pairs WHERE rid IN (${list})`.execute(db);
  },

  sortPairs: false,

  async insertPairs(db, rows) {
    if (rows.length === 0) return;
    await sql`INSERT INTO search_pairs (pair_id, kv, v, rid) SELECT value->>0, value->>1, value->>2, value->>3 FROM json_each(${JSON.stringify(rows)})`.execute(
      db,
    );
  },

  async fillPair(db, pairId, keyField, sortField) {
    await sql`INSERT INTO search_pairs (pair_id, kv, v, rid)
      SELECT ${pairId}, k.v, s.v, k.rid
      FROM search_values k CROSS JOIN search_values s ON s.rid = k.rid AND s.field_id = ${sortField}
      WHERE k.field_id = ${keyField} AND typeof(k.v) = 'text'`.execute(db);
  },

  async insertFields(db, scopeId, keys) {
    await sql`INSERT INTO search_fields (scope_id, path, kind) SELECT ${scopeId}, value->>0, value->>1 FROM json_each(${JSON.stringify(keys)}) WHERE true ON CONFLICT DO NOTHING`.execute(
      db,
    );
  },

  async insertVocabulary(db, scopeId, words) {
    if (words.length === 0) return [];
    const { rows } = await sql<{
      word: string;
    }>`INSERT INTO search_vocab (scope_id, word) SELECT ${scopeId}, value FROM json_each(${JSON.stringify(words)}) WHERE true ON CONFLICT DO NOTHING RETURNING word`.execute(
      db,
    );
    return rows.map((r) => r.word);
  },

  async insertVariants(db, scopeId, pairs) {
    if (pairs.length === 0) return;
    await sql`INSERT INTO search_variants (scope_id, variant, word) SELECT ${scopeId}, value->>0, value->>1 FROM json_each(${JSON.stringify(pairs)}) WHERE true ON CONFLICT DO NOTHING`.execute(
      db,
    );
  },
};
