/**
 * Tables of the synced-record store and its search indexes, for SQLite and PostgreSQL.
 *
 * Design (docs/search.md has the long form):
 *
 * - `search_scopes` names each (connector_id, entity) once with a small integer, and keeps the
 *   time data last arrived from a sync (`synced_at`, reported in search meta) and the number of
 *   records (the query planner's denominator).
 * - `search_records` holds each synced record keyed by (scope, record_id) — i.e. by
 *   (connector_id, entity, record_id) — with the full upstream record (JSON text on SQLite,
 *   JSONB on PostgreSQL), a hash of its search document (an upsert whose document did not
 *   change skips reindexing), `synced_at`, and `sync_run` for full-refresh deletion detection.
 *   `rid`, an integer assigned on first insert and never changed, is what every index points at
 *   and the last key of every ordering (so keyset cursors stay valid while records change).
 * - `search_fields` gives each searchable (scope, path, kind) an integer id. Scalar fields have
 *   one path (`email`); object/array fields get one per leaf path (`custom_attributes.plan`).
 *   Kind is s(tring), n(umber) or b(oolean), so a path holding both strings and numbers has two ids.
 * - `search_values` is the typed value index: one row per (record, field id, value), with
 *   B-tree indexes on (field_id, value, rid) for eq/neq/in/range and index-ordered sort, and on
 *   (rid, field_id) for reindexing and per-record checks. Strings also carry a lower-cased copy
 *   (`low`, when it differs) that `like` patterns are checked against, and values below an item
 *   of an array of objects the item's number `e` (migration 0005), so that `any` compiles to
 *   conditions on one element.
 * - Per record, a word index for keyword and fuzzy — the words of every string value as tokens
 *   `<field_id>_<word>` — and, per field, a trigram index over its lower-cased string values that
 *   finds like candidates: on SQLite two contentless FTS5 tables with rowid = rid
 *   (`search_words`, and `search_grams` with tokens `<field_id>_<trigram>`); on PostgreSQL one
 *   `search_text` row (text[] with a GIN index) and a pg_trgm GIN index on the string values
 *   of search_values, whose field_id is checked on the matching values (migration 0002).
 *   Words are computed in JavaScript (see text.ts), so neither database's tokenizer decides
 *   what a word is, and a like match is always confirmed on the field's own values.
 * - `search_vocab` / `search_variants`: each scope's distinct letter-only words and their
 *   deletion variants (symmetric-delete typo index): fuzzy finds the vocabulary words within the
 *   allowed typo distance of a query word by exact lookups, then matches them as keywords.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';
import type { MigrationGroup } from '../store/database.ts';
import { signatureBits } from './signature.ts';
import { gramTokens, textTrigrams } from './text.ts';

async function sqliteUp(db: Kysely<unknown>): Promise<void> {
  const statements = [
    sql`CREATE TABLE search_scopes (
      scope_id INTEGER PRIMARY KEY AUTOINCREMENT,
      connector_id TEXT NOT NULL,
      entity TEXT NOT NULL,
      synced_at TEXT,
      record_count INTEGER NOT NULL DEFAULT 0,
      UNIQUE (connector_id, entity))`,
    // AUTOINCREMENT: ids are never reused, so an id cached by another store instance can never
    // come to mean a different scope or field after a delete.
    sql`CREATE TABLE search_fields (
      field_id INTEGER PRIMARY KEY AUTOINCREMENT,
      scope_id INTEGER NOT NULL,
      path TEXT NOT NULL,
      kind TEXT NOT NULL,
      UNIQUE (scope_id, path, kind))`,
    sql`CREATE TABLE search_records (
      rid INTEGER PRIMARY KEY,
      scope_id INTEGER NOT NULL,
      record_id TEXT NOT NULL,
      record TEXT NOT NULL,
      doc_hash TEXT NOT NULL,
      synced_at TEXT NOT NULL,
      sync_run TEXT,
      UNIQUE (scope_id, record_id))`,
    // Ordered by rid within a scope (SQLite appends the rowid to every index).
    sql`CREATE INDEX search_records_scope ON search_records (scope_id)`,
    // `v` has no declared type on purpose: no affinity, so numbers stay numbers and the string
    // "123" stays a string. A field id has one kind, so one column serves every kind. WITHOUT
    // ROWID clusters a record's values together (reindexing and per-record checks are one range)
    // and saves the separate rowid table. `n` tells apart two long strings of one path that agree
    // on their compared prefix; `low` is null when the lower-cased text equals `v`.
    sql`CREATE TABLE search_values (
      rid INTEGER NOT NULL,
      field_id INTEGER NOT NULL,
      v NOT NULL,
      n INTEGER NOT NULL,
      low TEXT,
      PRIMARY KEY (rid, field_id, v, n)) WITHOUT ROWID`,
    // Implicitly (field_id, v, rid, n): eq/in/range lookups and index-ordered sort.
    sql`CREATE INDEX search_values_fv ON search_values (field_id, v)`,
    // Tokens are [0-9a-z_] only (see wordToken), so the ascii tokenizer with '_' as a token
    // character keeps each token whole; detail=none because only token presence is queried.
    sql`CREATE VIRTUAL TABLE search_words USING fts5(words, content='', contentless_delete=1, tokenize="ascii tokenchars '_'", detail=none)`,
    // One row per record (rowid = rid): its lower-cased string values. A like pattern's trigrams
    // select candidate records here; the pattern itself is then checked on the field's values.
    sql`CREATE VIRTUAL TABLE search_like USING fts5(text, content='', contentless_delete=1, tokenize='trigram case_sensitive 1', detail=none)`,
    sql`CREATE TABLE search_vocab (
      scope_id INTEGER NOT NULL,
      word TEXT NOT NULL,
      PRIMARY KEY (scope_id, word)) WITHOUT ROWID`,
    sql`CREATE TABLE search_variants (
      scope_id INTEGER NOT NULL,
      variant TEXT NOT NULL,
      word TEXT NOT NULL,
      PRIMARY KEY (scope_id, variant, word)) WITHOUT ROWID`,
  ];
  for (const s of statements) await s.execute(db);
}

/** The schema holding pg_trgm's operator classes, installing the extension when allowed; undefined if unavailable. */
async function trigramSchema(db: Kysely<unknown>): Promise<string | undefined> {
  const find = async (): Promise<string | undefined> =>
    (
      await sql<{
        schema: string;
      }>`SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`.execute(db)
    ).rows[0]?.schema;
  const installed = await find();
  if (installed !== undefined) return installed;
  // pg_trgm is a trusted extension: a role with CREATE on the database may install it. Check
  // first, because a failed CREATE EXTENSION would abort the migration's transaction.
  const { rows } = await sql<{ available: boolean; allowed: boolean }>`
    SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') AS available,
           (has_database_privilege(current_database(), 'CREATE') OR (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)) AS allowed`.execute(db);
  if (rows[0]?.available !== true || rows[0].allowed !== true) return undefined;
  await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`.execute(db);
  return find();
}

async function postgresUp(db: Kysely<unknown>): Promise<void> {
  const statements = [
    sql`CREATE TABLE search_scopes (
      scope_id serial PRIMARY KEY,
      connector_id text NOT NULL,
      entity text NOT NULL,
      synced_at timestamptz,
      record_count bigint NOT NULL DEFAULT 0,
      UNIQUE (connector_id, entity))`,
    sql`CREATE TABLE search_fields (
      field_id serial PRIMARY KEY,
      scope_id integer NOT NULL,
      path text NOT NULL,
      kind text NOT NULL,
      UNIQUE (scope_id, path, kind))`,
    sql`CREATE TABLE search_records (
      rid bigserial PRIMARY KEY,
      scope_id integer NOT NULL,
      record_id text NOT NULL,
      record jsonb NOT NULL,
      doc_hash text NOT NULL,
      synced_at timestamptz NOT NULL,
      sync_run text,
      UNIQUE (scope_id, record_id))`,
    sql`CREATE INDEX search_records_scope ON search_records (scope_id, rid)`,
    // Strings compare in the "C" collation: code point order, the same as SQLite's BINARY.
    sql`CREATE TABLE search_values (
      rid bigint NOT NULL,
      field_id integer NOT NULL,
      num double precision,
      txt text COLLATE "C",
      n integer NOT NULL,
      low text COLLATE "C")`,
    sql`CREATE INDEX search_values_rid ON search_values (rid, field_id)`,
    sql`CREATE INDEX search_values_num ON search_values (field_id, num, rid) WHERE num IS NOT NULL`,
    sql`CREATE INDEX search_values_txt ON search_values (field_id, txt, rid) WHERE txt IS NOT NULL`,
    // Per record: its word tokens (keyword, fuzzy) and its lower-cased string values, one per
    // line (like candidates through pg_trgm).
    sql`CREATE TABLE search_text (
      rid bigint PRIMARY KEY,
      words text[] NOT NULL,
      liketext text COLLATE "C" NOT NULL)`,
    sql`CREATE INDEX search_text_words ON search_text USING gin (words)`,
    sql`CREATE TABLE search_vocab (
      scope_id integer NOT NULL,
      word text NOT NULL,
      PRIMARY KEY (scope_id, word))`,
    sql`CREATE TABLE search_variants (
      scope_id integer NOT NULL,
      variant text NOT NULL,
      word text NOT NULL,
      PRIMARY KEY (scope_id, variant, word))`,
  ];
  for (const s of statements) await s.execute(db);
  const trgm = await trigramSchema(db);
  // Without pg_trgm, like still works (same SQL), scanning instead of using the index.
  if (trgm !== undefined) await sql`CREATE INDEX search_text_like ON search_text USING gin (liketext ${sql.id(trgm, 'gin_trgm_ops')})`.execute(db);
}

/** Records whose values are read per statement while migration 0002 fills the SQLite trigram tokens. */
const REINDEX_BATCH = 2000;

/**
 * 0002, SQLite: the record-level trigram table `search_like` (every string value of a record in
 * one text, so a like on `name` also found records whose email matched) becomes `search_grams`,
 * one row per record holding `<field id>_<trigram>` tokens: a like looks only at its field's
 * trigrams. Existing records get their tokens from their indexed string values (the lower-cased
 * like text is exactly COALESCE(low, v)), in rid batches.
 */
async function sqliteGrams(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE VIRTUAL TABLE search_grams USING fts5(grams, content='', contentless_delete=1, tokenize="ascii tokenchars '_'", detail=none)`.execute(db);
  let after = 0;
  for (;;) {
    const { rows: bound } = await sql<{
      rid: number;
    }>`SELECT rid FROM search_records WHERE rid > ${after} ORDER BY rid LIMIT 1 OFFSET ${REINDEX_BATCH - 1}`.execute(db);
    const upto = bound[0]?.rid;
    const { rows } = await sql<{ rid: number; field_id: number; text: string }>`
      SELECT rid, field_id, COALESCE(low, v) AS text FROM search_values
      WHERE rid > ${after} ${upto === undefined ? sql`` : sql`AND rid <= ${upto}`} AND typeof(v) = 'text' ORDER BY rid`.execute(db);
    const byRid = new Map<number, Map<number, Set<string>>>();
    for (const r of rows) {
      let byField = byRid.get(r.rid);
      if (byField === undefined) byRid.set(r.rid, (byField = new Map()));
      let trigrams = byField.get(r.field_id);
      if (trigrams === undefined) byField.set(r.field_id, (trigrams = new Set()));
      textTrigrams(r.text, trigrams);
    }
    const grams = [...byRid].map(([rid, byField]) => [rid, gramTokens(byField).join(' ')] as const).filter(([, g]) => g !== '');
    if (grams.length > 0) await sql`INSERT INTO search_grams (rowid, grams) SELECT value->>0, value->>1 FROM json_each(${JSON.stringify(grams)})`.execute(db);
    if (upto === undefined) break;
    after = upto;
  }
  await sql`DROP TABLE search_like`.execute(db);
}

/**
 * 0002, PostgreSQL: like candidates come from a pg_trgm index over each string value (field_id
 * is checked on the few values whose trigrams match, before any record is read) instead of one
 * text per record of all its string values. The per-record text column and its index are
 * dropped. (A GIN key on field_id through btree_gin was tried: intersecting with a field's
 * posting list, which lists every record, cost several times more than the recheck.)
 */
async function postgresGrams(db: Kysely<unknown>): Promise<void> {
  const trgm = await trigramSchema(db);
  if (trgm !== undefined)
    await sql`CREATE INDEX search_values_like ON search_values USING gin ((COALESCE(low, txt)) ${sql.id(trgm, 'gin_trgm_ops')}) WHERE txt IS NOT NULL`.execute(
      db,
    );
  await sql`DROP INDEX IF EXISTS search_text_like`.execute(db);
  await sql`ALTER TABLE search_text DROP COLUMN liketext`.execute(db);
}

/**
 * 0003: the change log of the change feed (changes.ts), one row per record of a scope, kept
 * after a deletion as its tombstone. Times are ISO 8601 text on both databases. Records stored
 * before it get a row each, seen first and last modified when last synced, with an empty
 * payload hash: their next upsert counts as an update once (the payload before is unknown).
 */
async function recordChanges(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await sql`CREATE TABLE record_changes (
    scope_id integer NOT NULL,
    record_id text NOT NULL,
    seq bigint NOT NULL,
    action text NOT NULL,
    payload_hash text NOT NULL,
    first_seen_at text NOT NULL,
    last_modified_at text NOT NULL,
    deleted_at text,
    tombstone text,
    PRIMARY KEY (scope_id, record_id))`.execute(db);
  await sql`CREATE UNIQUE INDEX record_changes_seq ON record_changes (scope_id, seq)`.execute(db);
  await sql`CREATE INDEX record_changes_deleted ON record_changes (scope_id, deleted_at) WHERE deleted_at IS NOT NULL`.execute(db);
  const synced = postgres ? sql`to_char(synced_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')` : sql`synced_at`;
  await sql`INSERT INTO record_changes (scope_id, record_id, seq, action, payload_hash, first_seen_at, last_modified_at)
    SELECT scope_id, record_id, row_number() OVER (PARTITION BY scope_id ORDER BY rid), 'added', '', ${synced}, ${synced} FROM search_records`.execute(db);
}

/**
 * 0008: each scope's change counter (changes.ts), so a seq is never handed out twice even when
 * the tombstone that held the highest one is pruned; it starts at the log's highest seq.
 */
async function changeSeq(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE search_scopes ADD COLUMN change_seq bigint NOT NULL DEFAULT 0`.execute(db);
  await sql`UPDATE search_scopes SET change_seq = COALESCE((SELECT max(seq) FROM record_changes c WHERE c.scope_id = search_scopes.scope_id), 0)`.execute(db);
}

/**
 * 0004: sort pairs. A pair (key field L, sort field S) of a scope, both scalar, L holding strings,
 * lists every record with a value for both as one row (L's value, S's value, rid), indexed by
 * (pair, L's value, S's value, rid): a sorted search with an equality on L walks only the records
 * with that value, in S's order, where a walk of S's own index examines every record. Pairs are
 * learned from searches (RecordStore: when a search with an equality on L walks S's index) and
 * built from search_values, so existing stores need no reindexing; a scope starts without pairs.
 * `search_pair_defs` names each pair of a scope once (ids never reused); `search_pairs` holds its
 * rows, with the value columns of search_values (num for numbers and booleans, txt for strings).
 * On PostgreSQL each row also has `sig`, an entry for each (field id, value) of the record (up to
 * 64; compile.ts, recordSignature and signatureEntry): short values held as themselves, so a walk
 * answers an equality on them from the signature without probing the value index, longer strings
 * by a hash, for which the walk probes the value index only on the records that may match.
 */
async function sortPairs(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const statements = postgres
    ? [
        sql`CREATE TABLE search_pair_defs (
          pair_id serial PRIMARY KEY,
          scope_id integer NOT NULL,
          key_field integer NOT NULL,
          sort_field integer NOT NULL,
          UNIQUE (scope_id, key_field, sort_field))`,
        sql`CREATE TABLE search_pairs (
          pair_id integer NOT NULL,
          kv text COLLATE "C" NOT NULL,
          num double precision,
          txt text COLLATE "C",
          rid bigint NOT NULL,
          sig text COLLATE "C")`,
        sql`CREATE INDEX search_pairs_num ON search_pairs (pair_id, kv, num, rid) WHERE num IS NOT NULL`,
        sql`CREATE INDEX search_pairs_txt ON search_pairs (pair_id, kv, txt, rid) WHERE txt IS NOT NULL`,
        sql`CREATE INDEX search_pairs_rid ON search_pairs (rid)`,
      ]
    : [
        sql`CREATE TABLE search_pair_defs (
          pair_id INTEGER PRIMARY KEY AUTOINCREMENT,
          scope_id INTEGER NOT NULL,
          key_field INTEGER NOT NULL,
          sort_field INTEGER NOT NULL,
          UNIQUE (scope_id, key_field, sort_field))`,
        sql`CREATE TABLE search_pairs (
          pair_id INTEGER NOT NULL,
          kv TEXT NOT NULL,
          v NOT NULL,
          rid INTEGER NOT NULL,
          PRIMARY KEY (pair_id, kv, v, rid)) WITHOUT ROWID`,
        sql`CREATE INDEX search_pairs_rid ON search_pairs (rid)`,
      ];
  for (const s of statements) await s.execute(db);
}

/**
 * 0005: element positions. `search_values.e` numbers the element a value belongs to (see
 * ValueEntry.e in document.ts: the plain object, an item of the first array on the value's path,
 * it is below; null for values in no such element), so that an `any` over comparisons compiles to
 * a self-join on (rid, e) instead of a relaxed filter confirmed in JavaScript. Values stored
 * before have no position: the column's default, -1, marks them (no table rewrite: both databases
 * keep a constant default in the catalog), and a partial index lists them by field, so a search
 * can tell cheaply whether an `any`'s fields still hold such values (it then runs the confirmed
 * plan). They are rewritten as their records are reindexed (INDEX_VERSION 2: each record on its
 * next upsert); the index empties as they go. A writer that does not know the column (an older
 * instance during a rolling deploy) writes the default, and so still marks its values.
 */
async function elementPositions(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE search_values ADD COLUMN e integer DEFAULT -1`.execute(db);
  await sql`CREATE INDEX search_values_unplaced ON search_values (field_id) WHERE e = -1`.execute(db);
}

/**
 * 0006: what a walked sort pair row carries (PostgreSQL), so that a walk reads neither the
 * signature's text nor search_records for most rows.
 *
 * - `bits`: a 64-bit bloom filter of the signature's entries (compile.ts, signatureBits: two bits
 *   per entry, from a hash of the entry's text). A walk rules out a row lacking one of an entry's
 *   bits by two bigint operations, and looks for the entry in the signature (`strpos`) only on
 *   the others. A row without bits reads as all bits set: its signature decides, as before.
 * - `record`: a copy of the record (search_records.record), so a page reads each kept record from
 *   the row it walked instead of by the primary key of search_records (101 lookups, 303 buffer
 *   reads, for the benchmark's nested page). Writers copy it when they write pair rows (after the
 *   record, in the same transaction); the trigger `search_pairs_record` on search_records copies
 *   every later change of a record to its pair rows, whoever writes it (also a payload change
 *   that leaves the search document, and so the index, alone; also an older writer during a
 *   rolling deploy). A row without a copy (written by an older writer) is read by primary key.
 *   It costs the record's size once more per pair row (see docs/search.md, Storage).
 *
 * Rows written before are given both here. SQLite has neither signatures nor copies: nothing to do.
 */
async function pairRowBitsAndRecords(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`ALTER TABLE search_pairs ADD COLUMN bits bigint, ADD COLUMN record jsonb`.execute(db);
  // Unqualified search_pairs: resolved by the writing session's search_path, as the store's own
  // statements resolve search_records (each store's tables are found the same way).
  await sql`CREATE FUNCTION search_pairs_copy_record() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE search_pairs SET record = NEW.record WHERE rid = NEW.rid;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER search_pairs_record AFTER UPDATE OF record ON search_records
    FOR EACH ROW WHEN (OLD.record IS DISTINCT FROM NEW.record) EXECUTE FUNCTION search_pairs_copy_record()`.execute(db);
  await sql`UPDATE search_pairs p SET bits = CASE WHEN p.sig IS NOT NULL THEN ${signatureBits(sql`p.sig`)} END,
    record = (SELECT rec.record FROM search_records rec WHERE rec.rid = p.rid)`.execute(db);
}

/**
 * 0007, PostgreSQL: element pairs (elementPairSort in dialect.ts), sort pairs whose sort field is
 * a negated field id: a row (pair, key value, other value, rid) for each element holding a
 * string value of the key field and a value of the other one. A statement trigger on
 * search_values writes them from the values each insert adds (its transition table), joined on
 * (rid, e) for the scope's element pairs, so every writer keeps them current, an older instance
 * during a rolling deploy included; deleting a record's index entries deletes its pair rows by
 * rid, as for sort pairs. The record copy trigger of 0006 now skips them: element rows carry no
 * copy (a record with many elements would be copied as many times), their pages read records by
 * rid. Existing scopes have no element pairs: nothing to fill. SQLite does not learn them.
 */
async function elementPairs(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  // The trigger's join reads the element pairs only (few: learned from `any` searches), not every scope's sort pairs.
  await sql`CREATE INDEX search_pair_defs_elements ON search_pair_defs (key_field) INCLUDE (pair_id, sort_field) WHERE sort_field < 0`.execute(db);
  // Unqualified tables: resolved by the writing session's search_path (see 0006).
  await sql`CREATE FUNCTION search_pairs_elements() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO search_pairs (pair_id, kv, num, txt, rid)
        SELECT d.pair_id, k.txt, s.num, s.txt, k.rid
        FROM search_values_added k
        JOIN search_pair_defs d ON d.key_field = k.field_id AND d.sort_field < 0
        JOIN search_values_added s ON s.rid = k.rid AND s.field_id = -d.sort_field AND s.e IS NOT DISTINCT FROM k.e
        WHERE k.txt IS NOT NULL AND k.e IS DISTINCT FROM -1;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER search_values_element_pairs AFTER INSERT ON search_values
    REFERENCING NEW TABLE AS search_values_added FOR EACH STATEMENT EXECUTE FUNCTION search_pairs_elements()`.execute(db);
  await sql`CREATE OR REPLACE FUNCTION search_pairs_copy_record() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE search_pairs p SET record = NEW.record
        WHERE p.rid = NEW.rid AND NOT EXISTS (SELECT 1 FROM search_pair_defs d WHERE d.pair_id = p.pair_id AND d.sort_field < 0);
      RETURN NULL;
    END $$`.execute(db);
}

/** Migration group "search": the record store and search index tables of the detected dialect. */
export const searchMigrations: MigrationGroup = {
  name: 'search',
  migrations: {
    '0001_search_store': {
      up: async (db) => {
        if (db.getExecutor().adapter instanceof PostgresAdapter) await postgresUp(db);
        else await sqliteUp(db);
      },
    },
    '0002_per_field_trigrams': {
      up: async (db) => {
        if (db.getExecutor().adapter instanceof PostgresAdapter) await postgresGrams(db);
        else await sqliteGrams(db);
      },
    },
    '0003_record_changes': { up: recordChanges },
    '0004_sort_pairs': { up: sortPairs },
    '0005_element_positions': { up: elementPositions },
    '0006_pair_row_bits_and_records': { up: pairRowBitsAndRecords },
    '0007_element_pairs': { up: elementPairs },
    '0008_change_seq': { up: changeSeq },
  },
};
