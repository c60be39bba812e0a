/**
 * PostgreSQL side of the search store. Lists are typed array parameters (`= ANY($1::text[])`);
 * bulk index rows travel as one typed array per column expanded with unnest (about a third
 * faster than JSON rows), records as one JSON array — one statement per table per batch.
 */
import { sql, type SqlBool } from 'kysely';
import { PREPARED_SQL } from '../store/database.ts';
import { recordSignature, signatureBits } from './signature.ts';
import { KEYLESS_PAIR, type Executor, type PairRow, type SearchDialect, type ValueRow } from './dialect.ts';
import type { ValueKind } from './query.ts';
import { likeToSqlLike, type LikePart } from './text.ts';

const ARRAY_TYPES = { text: 'text[]', int: 'integer[]', bigint: 'bigint[]', float: 'double precision[]' } as const;

export const postgresSearchDialect: SearchDialect = {
  name: 'postgres',

  valueColumn(alias: string, kind: ValueKind) {
    return sql.ref(`${alias}.${kind === 's' ? 'txt' : 'num'}`);
  },

  inList(expr, values, type) {
    return sql<SqlBool>`${expr} = ANY(${values}::${sql.raw(ARRAY_TYPES[type])})`;
  },

  wordsQuery(groups, rid) {
    const conditions = groups.map((g) => sql<SqlBool>`t.words && ${g}::text[]`);
    if (rid !== undefined) conditions.unshift(sql<SqlBool>`t.rid = ${rid}`);
    return sql`SELECT t.rid FROM search_text t WHERE ${sql.join(conditions, sql` AND `)}`;
  },

  likeCondition(parts: LikePart[], perRecord = false) {
    // Case-sensitive LIKE over text lower-cased in JavaScript; `txt IS NOT NULL` lets the
    // planner use the partial pg_trgm index on COALESCE(low, txt). A per-record check is written
    // so that the index does not match it (COALESCE with a third argument, equal here since txt
    // is not null): it reads the record's own few values by rid, where PostgreSQL would otherwise
    // AND them with a trigram scan of the whole index on every record of a walk (generic plans:
    // 0.24 ms per record).
    return perRecord
      ? sql<SqlBool>`x.txt IS NOT NULL AND COALESCE(x.low, x.txt, '') LIKE ${likeToSqlLike(parts)}`
      : sql<SqlBool>`x.txt IS NOT NULL AND COALESCE(x.low, x.txt) LIKE ${likeToSqlLike(parts)}`;
  },

  gramTokens: false,

  likeCandidates() {
    return undefined;
  },

  exists(subquery) {
    // OFFSET 0 keeps the planner from turning the EXISTS into a semi-join over the whole
    // subquery: it stays a per-row index probe, which is the point when walking an index.
    return sql<SqlBool>`EXISTS (${subquery} OFFSET 0)`;
  },

  driver(subquery) {
    // OFFSET 0: an optimization fence, so the driving set is computed as written.
    return sql`(${subquery} OFFSET 0)`;
  },

  orderedJoin: sql`JOIN`,

  // A named prepared statement per connection (see PREPARED_SQL): parsed and analyzed once
  // rather than on every search of the shape. Each constant and value is also read through a
  // one-row subquery, `(SELECT $n::type)`, which the planner cannot look into: a plan made with
  // the values then costs the same as one made without, so after its five first runs PostgreSQL
  // keeps the generic plan and stops planning (with bare parameters it estimated the generic
  // plan dearer and planned every run: 0.31 vs 0.14 ms for an eq page at 200,000 records). The
  // plan does not need the values: the shape is one index range per value in rid order. The
  // cursor's rid stays a bare parameter (a bigint bounding the rid order). Our SQL has no
  // string literals, so every $n is a parameter; if the text does not have exactly one
  // placeholder per parameter, or a parameter has an unexpected type, it stays as it is.
  reusableSql(text, parameters, kinds) {
    let ok = true;
    const seen = new Set<number>();
    const hidden = text.replace(/\$(\d+)\b/g, (placeholder, n: string, at: number) => {
      const i = Number(n) - 1;
      seen.add(i);
      const value = parameters[i];
      const kind = kinds[i];
      if (kind === 'cursor') return placeholder;
      // A list (inList, wordsQuery) is always cast where it is used (`$n::text[]`): read as the
      // text of an array literal, which that cast then parses.
      if (Array.isArray(value) && text.startsWith('::', at + placeholder.length)) return `(SELECT ${placeholder}::text)`;
      // Values are compared with txt (text) or num (double precision); constants are ids and names.
      const type =
        typeof value === 'string'
          ? 'text'
          : typeof value === 'number'
            ? kind === 'constant' && Number.isSafeInteger(value)
              ? 'bigint'
              : 'double precision'
            : undefined;
      if (type === undefined || kind === undefined) ok = false;
      return `(SELECT ${placeholder}::${type})`;
    });
    const exact = ok && seen.size === parameters.length && [...seen].every((i) => i >= 0 && i < parameters.length);
    return PREPARED_SQL + (exact ? hidden : text);
  },

  repeated: sql.raw(PREPARED_SQL),

  sameElement(a, b) {
    return sql<SqlBool>`${a} IS NOT DISTINCT FROM ${b}`;
  },

  parseRecord(value) {
    return value as Record<string, unknown>;
  },

  parseTime(value) {
    if (value === null || value === undefined) return null;
    // Epoch milliseconds: how search statements read a scope's synced_at (see RecordStore).
    if (typeof value === 'number') return new Date(value).toISOString();
    return (value instanceof Date ? value : new Date(String(value))).toISOString();
  },

  async upsertRecords(db, scopeId, records, syncedAt, syncRun) {
    // Records as one JSON array (each record embedded as is), not a text[] of JSON strings:
    // escaping every record into an array literal costs more than parsing it once as JSON.
    const batch = `[${records.map(([id, json, hash]) => `[${JSON.stringify(id)},${json},${JSON.stringify(hash)}]`).join(',')}]`;
    const { rows } = await sql<{ rid: string; record_id: string }>`
      INSERT INTO search_records (scope_id, record_id, record, doc_hash, synced_at, sync_run)
      SELECT ${scopeId}, e.value->>0, (e.value->1)::jsonb, e.value->>2, ${syncedAt}::timestamptz, ${syncRun}::text
      FROM json_array_elements(${batch}::json) AS e(value)
      ON CONFLICT (scope_id, record_id) DO UPDATE SET
        record = excluded.record, doc_hash = excluded.doc_hash, synced_at = excluded.synced_at,
        sync_run = COALESCE(excluded.sync_run, search_records.sync_run)
      RETURNING rid, record_id`.execute(db);
    // bigint comes back as a string; rids stay far below 2^53.
    return rows.map((r) => ({ rid: Number(r.rid), record_id: r.record_id }));
  },

  async insertValues(db: Executor, rows: ValueRow[]) {
    if (rows.length === 0) return;
    // In index order, so each index page is visited once per batch rather than at random.
    const sorted = [...rows].sort((a, b) => a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0));
    const col = <T>(f: (r: ValueRow) => T): T[] => sorted.map(f);
    await sql`INSERT INTO search_values (rid, field_id, num, txt, n, low, e)
      SELECT * FROM unnest(${col((r) => r[0])}::bigint[], ${col((r) => r[1])}::integer[],
        ${col((r) => (typeof r[2] === 'string' ? null : r[2]))}::double precision[], ${col((r) => (typeof r[2] === 'string' ? r[2] : null))}::text[],
        ${col((r) => r[3])}::integer[], ${col((r) => r[4])}::text[], ${col((r) => r[5])}::integer[])`.execute(db);
  },

  async insertText(db, rows) {
    if (rows.length === 0) return;
    // Tokens never contain spaces (see wordToken), so a space-joined string carries the list.
    const words = rows.filter((r) => r[1].length > 0);
    if (words.length === 0) return;
    await sql`INSERT INTO search_text (rid, words)
      SELECT u.rid, string_to_array(u.words, ' ')
      FROM unnest(${words.map((r) => r[0])}::bigint[], ${words.map((r) => r[1].join(' '))}::text[]) AS u(rid, words)
      ON CONFLICT (rid) DO UPDATE SET words = excluded.words`.execute(db);
  },

  async deleteIndex(db, rids) {
    if (Array.isArray(rids) && rids.length === 0) return;
    const list = Array.isArray(rids) ? sql`SELECT unnest(${rids}::bigint[])` : rids;
    await sql`DELETE FROM search_values WHERE rid IN (${list})`.execute(db);
    await sql`DELETE FROM search_text WHERE rid IN (${list})`.execute(db);
    await sql`DELETE FROM search_pairs WHERE rid IN (${list})`.execute(db);
  },

  sortPairs: true,

  async insertPairs(db: Executor, rows: PairRow[]) {
    if (rows.length === 0) return;
    const sorted = [...rows].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    const col = <T>(f: (r: PairRow) => T): T[] => sorted.map(f);
    // After insertValues and upsertRecords: each row's signature is computed from the record's
    // indexed values, its bits from the signature (the lateral subquery is a fence: the signature
    // is computed once), and the record copied (schema.ts, 0006).
    await sql`INSERT INTO search_pairs (pair_id, kv, num, txt, rid, sig, bits, record)
      SELECT u.pair_id, u.kv, u.num, u.txt, u.rid, g.sig, ${signatureBits(sql`g.sig`)}, (SELECT rec.record FROM search_records rec WHERE rec.rid = u.rid)
      FROM unnest(${col((r) => r[0])}::integer[], ${col((r) => r[1])}::text[],
        ${col((r) => (typeof r[2] === 'string' ? null : r[2]))}::double precision[], ${col((r) => (typeof r[2] === 'string' ? r[2] : null))}::text[], ${col((r) => r[3])}::bigint[]) AS u(pair_id, kv, num, txt, rid)
      CROSS JOIN LATERAL (SELECT ${recordSignature(sql`u.rid`)} AS sig OFFSET 0) g`.execute(db);
  },

  async fillPair(db, pairId, keyField, sortField) {
    if (sortField < 0) {
      // An element pair (elementPairSort): the two fields' values in one element, as the trigger
      // of migration 0007 writes them. Values written before migration 0005 (e = -1) have no
      // position; a scope holding any is not searched on positions (RecordStore's
      // #elementsPlaced), so they are left out.
      await sql`INSERT INTO search_pairs (pair_id, kv, num, txt, rid)
        SELECT ${pairId}::integer, k.txt, s.num, s.txt, k.rid
        FROM search_values k JOIN search_values s ON s.rid = k.rid AND s.field_id = ${-sortField}::integer AND s.e IS NOT DISTINCT FROM k.e
        WHERE k.field_id = ${keyField}::integer AND k.txt IS NOT NULL AND k.e IS DISTINCT FROM -1
        ORDER BY 2, 3, 4, 5`.execute(db);
      return;
    }
    if (keyField === KEYLESS_PAIR) {
      // A key-less pair: a row for each value of the sort field, with the key ''.
      await sql`INSERT INTO search_pairs (pair_id, kv, num, txt, rid, sig, bits, record)
        SELECT ${pairId}::integer, '', s.num, s.txt, s.rid, g.sig, ${signatureBits(sql`g.sig`)}, (SELECT rec.record FROM search_records rec WHERE rec.rid = s.rid)
        FROM search_values s
        CROSS JOIN LATERAL (SELECT ${recordSignature(sql`s.rid`)} AS sig OFFSET 0) g
        WHERE s.field_id = ${sortField}::integer
        ORDER BY 3, 4, 5`.execute(db);
      return;
    }
    await sql`INSERT INTO search_pairs (pair_id, kv, num, txt, rid, sig, bits, record)
      SELECT ${pairId}::integer, k.txt, s.num, s.txt, k.rid, g.sig, ${signatureBits(sql`g.sig`)}, (SELECT rec.record FROM search_records rec WHERE rec.rid = k.rid)
      FROM search_values k JOIN search_values s ON s.rid = k.rid AND s.field_id = ${sortField}::integer
      CROSS JOIN LATERAL (SELECT ${recordSignature(sql`k.rid`)} AS sig OFFSET 0) g
      WHERE k.field_id = ${keyField}::integer AND k.txt IS NOT NULL
      ORDER BY 2, 3, 4, 5`.execute(db);
  },

  async insertFields(db, scopeId, keys) {
    await sql`INSERT INTO search_fields (scope_id, path, kind)
      SELECT ${scopeId}, e.value->>0, e.value->>1 FROM json_array_elements(${JSON.stringify(keys)}::json) AS e(value)
      ON CONFLICT DO NOTHING`.execute(db);
  },

  async insertVocabulary(db, scopeId, words) {
    if (words.length === 0) return [];
    const { rows } = await sql<{ word: string }>`INSERT INTO search_vocab (scope_id, word)
      SELECT ${scopeId}, w FROM unnest(${words}::text[]) AS w ON CONFLICT DO NOTHING RETURNING word`.execute(db);
    return rows.map((r) => r.word);
  },

  async insertVariants(db, scopeId, pairs) {
    if (pairs.length === 0) return;
    await sql`INSERT INTO search_variants (scope_id, variant, word)
      SELECT ${scopeId}, v, w FROM unnest(${pairs.map((p) => p[0])}::text[], ${pairs.map((p) => p[1])}::text[]) AS u(v, w)
      ON CONFLICT DO NOTHING`.execute(db);
  },
};
