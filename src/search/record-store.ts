/**
 * RecordStore: the synced records of every connector and entity, and search over them.
 *
 * The sync engine writes through upsert / deleteMissing / deleteRecords / deleteConnector; the
 * service answers the `search` action through search(). Each write batch is one transaction,
 * and writing the same batch twice leaves the store exactly as writing it once.
 */
import { createHash } from 'node:crypto';
import { CompiledQuery, sql, type RawBuilder } from 'kysely';
import { PREPARED_SQL, type DialectName, type PostgresStatements, type SqliteStatements } from '../store/database.ts';
import { andPreds, boundedCount, cappedSetPage, compileConjuncts, elementCompilable, elementLeafSet, elementPath, exactInSignature, FieldIndex, pageQuery, pairKeyCandidates, queryShape, requiresValue, splitFieldConditions, textArrayLiteral, wordToken, type CompileContext, type Compiled, type FieldRow, type PageRow, type Pred, type SortPlan } from './compile.ts';
import { decodeCursor, encodeCursor, queryFingerprint, type CursorPosition } from './cursor.ts';
import { elementPairSort, KEYLESS_PAIR, type Executor, type PairRow, type ParameterKind, type SearchDialect, type TextRow, type ValueRow } from './dialect.ts';
import { indexEntries, projectDocument, projectFields, recordIdOf, type Doc } from './document.ts';
import { postgresSearchDialect } from './postgres-dialect.ts';
import { parseSearchParams, type FieldRef, type Filter, type SearchEntityDef, type SearchQuery } from './query.ts';
import { matches } from './reference.ts';
import { MAX_CHANGES_LIMIT } from './change-limits.ts';
import { dropChanges, lastChangeSeq, noteDeletes, noteUpserts, parseChangeCursor, payloadHash, readChanges, type ChangeCounts, type ChangePage } from './changes.ts';
import { SwitchboardError } from '../errors/index.ts';
import { hasAny, relaxFilter } from './relax.ts';
import { sqliteSearchDialect } from './sqlite-dialect.ts';
import { withinDepth } from './record-depth.ts';
import { allowedTypos, deletionVariants, gramTokens, isFuzzyWord, textTrigrams, typoDistance, vocabularyDepth } from './text.ts';

/** Bump when what gets indexed for a document changes: every document is then reindexed on its next upsert. */
const INDEX_VERSION = '2';
/** Records deleted per statement group when deleting many. */
const DELETE_CHUNK = 5000;
/** Known vocabulary words remembered per scope, to skip re-inserting them on every batch. */
const VOCAB_CACHE_LIMIT = 200_000;
/** Planner: matches counted per condition at most (each count reads at most this many index entries). */
const ESTIMATE_CAP = 20_000;
/** Candidates read per statement while confirming an `any` filter. */
const CONFIRM_BATCH = 1000;
/** (connector, entity) scopes whose ids and field dictionaries are kept between searches. */
const SCOPE_CACHE_LIMIT = 10_000;
/** Planner counts remembered per scope (CachedScope.counts; keys of a few hundred bytes: about 20 kB at most per scope searched). */
const COUNT_CACHE_LIMIT = 64;
/** Statement texts whose prepared form #reused keeps (a few kB each: about 2 MB at most). */
const REUSABLE_TEXT_LIMIT = 512;
/** Query shapes whose SQL is kept per scope. */
const SHAPE_CACHE_LIMIT = 256;
/**
 * Sort pairs (schema.ts, 0004) a scope may have, keyed, key-less and element pairs alike: a sort
 * pair costs one row per record holding both fields (the sort field, for a key-less pair), with
 * its signature, bits, a copy of the record (0006) and two B-tree entries (about 1,200 B per
 * record on PostgreSQL with the benchmark's contacts, see docs/search.md), so at most 4 pairs,
 * 4.8 kB a record; an element pair (0007) one row per element holding both fields, without
 * signature or copy (88 B per record for the benchmark's tags).
 */
const MAX_SORT_PAIRS = 4;
/** Query shapes kept across all scopes of one store (default of RecordStoreOptions.maxRememberedShapes). */
const SHAPE_CACHE_TOTAL = 8_192;

/**
 * The SQL of one query shape (see queryShape) in a scope: the page and the scope's state in one
 * statement, with where each parameter comes from — slot i of the query's values (the cursor's
 * rid last), or the constant at the same position.
 */
interface ShapePlan {
  sql: string;
  /**
   * SQLite with direct statements: `sql` is the page alone and the scope's state is read by a
   * second statement (CachedScope.state) right after it — two small statements run without
   * Kysely cost less than the page joined to the state in one (which SQLite materializes and
   * sorts): 2.7 + 2.5 µs against 6.5 µs for an eq page of one record.
   */
  split?: true;
  /** Per parameter: a slot index, or -1 for `constants[i]`. */
  layout: number[];
  constants: readonly unknown[];
  /**
   * PostgreSQL, a shape whose statement carries the scope's state on its rows (StateSink), as a
   * search the full way runs it, rather than one row joined to the scope: after an empty page
   * the state is read by a statement of its own. Set for the walk of a sort key and the capped
   * page (see ShapeKind).
   */
  stateInRows?: true;
  /** A capped page (ShapeKind): the cap it was compiled with; a page whose set reached it is searched the full way (a walk). */
  cap?: number;
  /** A walk of the sort key: rows carry the key as `k0`, which cursors keep. */
  walk?: true;
}

/**
 * Which statement answers a remembered shape: `ordered`, an unsorted one-condition page read in
 * rid order from its index (eq, in, contains; on SQLite keyword and like); on PostgreSQL `walk`,
 * a query sorted by one field whose conditions are all on that field (bounds of its index walk,
 * no plan to choose: one statement), and `capped`, an unsorted keyword or like (with a
 * 3-character literal) read from its GIN index up to a cap (cappedSetPage).
 */
type ShapeKind = 'ordered' | 'walk' | 'capped' | 'pair';

/** A query's shape key and its values in slot order (the cursor's sort value and rid last). */
interface Shape {
  key: string;
  slots: (string | number)[];
  kind: ShapeKind;
  /** `capped`: the cap for the scope's record count when the shape was taken (part of the key). */
  cap: number;
  /** `pair`: the sort pair walked (part of the key). */
  pairId?: number | undefined;
}

/** A shape with the filter and cursor carrying markers in place of the values, and marker → slot. */
interface MarkedShape extends Shape {
  marked: Filter;
  markedPosition: CursorPosition | undefined;
  markers: Map<string | number, number>;
}

/** A scope as searches use it: its id, field dictionary (valid while no field is added) and record count (an estimate). */
interface CachedScope {
  scopeId: number;
  fields: FieldIndex;
  maxField: number;
  recordCount: number;
  /** The scope's synced_at as last read (a string, or a Date's time on PostgreSQL) and as ISO text: converted once per change. */
  synced?: { raw: unknown; iso: string | null };
  /** Shape key → its SQL, or null when the shape's SQL cannot be reused (its plan depends on the data, or its values are transformed). */
  shapes: Map<string, ShapePlan | null>;
  /**
   * The planner's bounded counts (see countCap) of conditions searched before, by the count's
   * cap, SQL and values; only counts above 0. Forgotten when the scope's synced_at or record
   * count changes. A count only chooses a plan: the page is always read live, and a count of 0,
   * which answers a search without reading a page, is never taken from here.
   */
  counts?: Map<string, number>;
  /** The scope state query (see ShapePlan.split and ShapePlan.stateInRows), compiled once. */
  state?: { sql: string; parameters: unknown[] };
  /**
   * Per set of field ids (those below an `any`'s array): whether none of their values lacks an
   * element position (written before migration 0005, or by a writer that does not know it).
   * Forgotten with `counts`, when the scope's synced_at or record count changes.
   */
  placed?: Map<string, boolean>;
  /** The scope's state as a column of search statements (stateColumns), built once: the scope is cached per (connector, entity). */
  stateColumns?: RawBuilder<unknown>;
  /** Bounded counts of `any` leaves (#leafCount), 0 included; forgotten with `counts`. */
  leafCounts?: Map<string, number>;
  /**
   * Sorted queries a search the full way answered by walking a sort pair with no driving set
   * (#plan's choice from its counts), by the shape and values of their conditions other than
   * on the sort field (#pairChoiceKey) → the pair walked: a `pair` shape (ShapeKind) is taken
   * only for these. Forgotten with `counts`, from which #plan chose.
   */
  pairWalks?: Map<string, number>;
  /**
   * The scope's sort pairs (schema.ts, 0004), "key field,sort field" → pair id, read when first
   * needed. A pair another instance builds later is found when this one tries to build it. Pair
   * ids are never reused and a pair is only dropped with its scope, so an id here stays valid.
   */
  pairs?: Map<string, number>;
  /** True once the scope has MAX_SORT_PAIRS pairs: no more are built. */
  pairsFull?: true;
}

export interface RecordStoreOptions {
  /** Secret for signing search cursors (HMAC-SHA256); use a random value of 32+ bytes, stable across restarts and instances. */
  cursorSecret: string | Buffer;
  /** Most query shapes whose SQL is remembered across all scopes (memory bound; default 8192). */
  maxRememberedShapes?: number;
  /** How long deleted records stay in the change feed as tombstones; default 30 days. */
  tombstoneRetentionMs?: number;
  /** Clock (epoch ms) of change-log times and tombstone expiry; default Date.now. */
  now?: () => number;
}

/** Default of RecordStoreOptions.tombstoneRetentionMs. */
export const DEFAULT_TOMBSTONE_RETENTION_MS = 30 * 86_400_000;
/** Most entries per change feed page (declared in change-limits.ts, which the OpenAPI document reads). */
export { MAX_CHANGES_LIMIT } from './change-limits.ts';

export interface SearchResult {
  data: Record<string, unknown>[];
  meta: {
    has_more: boolean;
    cursor: string | null;
    took_ms: number;
    /** When a sync last wrote this entity (upsert or deletion pass); null if never. */
    synced_at: string | null;
  };
}

interface Prepared {
  id: string;
  recordJson: string;
  doc: Doc;
  hash: string;
}

/** A string as the store keeps it: NUL characters removed, lone surrogates replaced by U+FFFD. */
function storableString(s: string): string {
  const t = s.includes('\u0000') ? s.replaceAll('\u0000', '') : s;
  return (t as unknown as WellFormed).isWellFormed() ? t : (t as unknown as WellFormed).toWellFormed();
}

/** String.prototype.isWellFormed / toWellFormed (Node 20; not in the ES2023 lib this project compiles against). */
interface WellFormed {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/**
 * The record as the store keeps it, on both databases alike: every string (keys included)
 * without NUL characters (PostgreSQL text and json cannot hold them) and with each lone UTF-16
 * surrogate replaced by U+FFFD (PostgreSQL json refuses the escape "\ud800", SQLite would store
 * bytes that are not UTF-8). Upstreams send such strings; one of them must not stop a sync.
 */
function storableDeep(v: unknown): unknown {
  if (typeof v === 'string') return storableString(v);
  if (Array.isArray(v)) return v.map(storableDeep);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [storableString(k), storableDeep(x)]));
  return v;
}

/** True when JSON.stringify's text may hold a NUL or a lone surrogate (it writes both as \u escapes). */
const NEEDS_CLEANING = /\\u(?:0000|d[89a-f])/;

/** The scope's state as a search reads it. */
interface ScopeStateRow {
  s_synced_at: unknown;
  s_record_count: number | string;
  s_max_field: number | string | null;
}

/** A row of a remembered shape's page (rid null: the page is empty, in the one-statement form). */
interface RememberedRow {
  rid: number | string | null;
  record: unknown;
  /** A walk's sort value. */
  k0?: string | number | null;
  /** A capped page's count of set entries read. */
  n?: number | string;
}

interface RememberedPage {
  data: Record<string, unknown>[];
  cursor: string | null;
  synced: string | null;
}

/** A query's identity for its cursors (connector, entity, filter and sort), hashed when first needed. */
class QueryIdentity {
  #hashed: string | undefined;
  constructor(
    readonly connectorId: string,
    readonly entity: string,
    readonly query: SearchQuery,
  ) {}

  fingerprint(): string {
    this.#hashed ??= queryFingerprint([this.connectorId, this.entity, this.query.filter ?? null, this.query.sort.map((s) => [s.field.name, s.dir])]);
    return this.#hashed;
  }
}

function searchResult(started: number, data: Record<string, unknown>[], syncedAt: string | null, cursor: string | null): SearchResult {
  return { data, meta: { has_more: cursor !== null, cursor, took_ms: Math.round((performance.now() - started) * 1000) / 1000, synced_at: syncedAt } };
}

/** The scope's state as a search reads it, by id, provided it still belongs to (connector, entity). */
function scopeState(scopeId: number, connectorId: string, entity: string, repeated: RawBuilder<unknown> = sql``): RawBuilder<ScopeStateRow> {
  return sql<ScopeStateRow>`${repeated}
        SELECT s.synced_at AS s_synced_at, s.record_count AS s_record_count, (${maxFieldOf(sql.ref('s.scope_id'))}) AS s_max_field
        FROM search_scopes s WHERE s.scope_id = ${scopeId} AND s.connector_id = ${connectorId} AND s.entity = ${entity}`;
}

/**
 * Where a search's statements leave the scope's state (PostgreSQL): `columns`, added to each
 * statement, read it by uncorrelated subqueries (computed once per statement); `row` is the
 * first state a statement returned, null when the scope no longer belongs to (connector, entity).
 */
interface StateSink {
  columns: RawBuilder<unknown>;
  row?: ScopeStateRow | null;
}

/**
 * The scope's state as one extra column of a search statement (see StateSink): synced_at (epoch
 * milliseconds), record count and highest field id as text, `ms|count|field` (empty where
 * null), or null when the scope no longer belongs to (connector, entity). It repeats on every
 * row of a page, and pg parses every column of every row: one short text costs less than three
 * numbers (three doubles added 0.06–0.1 ms to a page of 100 records).
 */
function stateColumns(scopeId: number, connectorId: string, entity: string): RawBuilder<unknown> {
  return sql`(SELECT ${packedState(sql.ref('s.scope_id'))} FROM search_scopes s WHERE s.scope_id = ${scopeId} AND s.connector_id = ${connectorId} AND s.entity = ${entity}) AS s_state`;
}

/** The state of the search_scopes row `s` (whose id is `scopeId`) as `ms|count|field` (see stateColumns). */
function packedState(scopeId: RawBuilder<unknown>): RawBuilder<unknown> {
  const text = (e: RawBuilder<unknown>): RawBuilder<unknown> => sql`coalesce((${e})::text, '')`;
  return sql`${text(sql`floor(extract(epoch FROM s.synced_at) * 1000)::bigint`)} || '|' || s.record_count::text || '|' || ${text(maxFieldOf(scopeId))}`;
}

/** A scope's state from `ms|count|field` text (see stateColumns); undefined when absent (null). */
function unpackState(state: string | null | undefined): ScopeStateRow | undefined {
  if (typeof state !== 'string') return undefined;
  const [ms, count, field] = state.split('|');
  return { s_synced_at: ms === '' || ms === undefined ? null : Number(ms), s_record_count: Number(count), s_max_field: field === '' || field === undefined ? null : Number(field) };
}

/** Keep the scope's state from the first row a search statement returned (see StateSink). */
function noteSink(sink: StateSink | undefined, rows: readonly unknown[]): void {
  if (sink === undefined || sink.row !== undefined || rows.length === 0) return;
  sink.row = unpackState((rows[0] as { s_state?: string | null }).s_state) ?? null;
}

/**
 * How far #plan counts each of k listable conditions (ESTIMATE_CAP at most). The smallest, of
 * n_b records, drives when n_b × Π (n_i / total) <= want, i.e. when a walk in result order would
 * examine more records than the set holds. Once every count reaches C = (want × total^k)^(1/(k+1))
 * (and want), that product is at least C^(k+1) / total^k >= want: the walk is chosen, as it would
 * be with exact counts. For one condition this decides exactly as exact counts do; for several,
 * a count stopped at C can only make a set below C drive where exact counts would walk, which
 * reads fewer than C records. Rounded up to a power of two, so that the count statements' text
 * changes rarely. At 20,000 contacts and a page of 100: 2,048 for one condition (the nested
 * benchmark query's 6,000 leads were counted whole before), 4,096 for two.
 */
function countCap(k: number, total: number, want: number): number {
  const needed = Math.max(want + 1, Math.ceil((want * Math.max(1, total) ** k) ** (1 / (k + 1))) + 1);
  return Math.min(ESTIMATE_CAP, 2 ** Math.ceil(Math.log2(needed)));
}

/** The cap of a one-pass capped page of `want` rows (see #searchIn): sqrt(want × records), at least want + 1, at most ESTIMATE_CAP. */
function cappedLimit(want: number, records: number): number {
  return Math.min(ESTIMATE_CAP, Math.max(want + 1, Math.ceil(Math.sqrt(want * Math.max(1, records)))));
}

/** The highest field id of the scope `scopeId` (an expression), as a scalar subquery body. */
function maxFieldOf(scopeId: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`SELECT max(f.field_id) FROM search_fields f WHERE f.scope_id = ${scopeId}`;
}

function fuzzyWords(f: Filter | undefined, out: Set<string>): Set<string> {
  if (f === undefined) return out;
  if (f.op === 'and' || f.op === 'or') for (const i of f.items) fuzzyWords(i, out);
  else if (f.op === 'not') fuzzyWords(f.item, out);
  else if (f.op === 'fuzzy') for (const w of f.words) if (allowedTypos(w) > 0) out.add(w);
  return out;
}

export class RecordStore {
  readonly #db: Executor;
  /** SQLite's statements, for remembered shapes run synchronously (see Database.sqlite); undefined over a transaction or PostgreSQL. */
  readonly #sqlite: SqliteStatements | undefined;
  /** PostgreSQL's pool, for remembered shapes run without Kysely (see Database.postgres); undefined over a transaction or SQLite. */
  readonly #pg: PostgresStatements | undefined;
  readonly #dialect: SearchDialect;
  readonly #secret: Buffer;
  /** scope id → "kind:path" → field id. Ids are never reused, so entries stay true while the scope exists. */
  readonly #fieldCache = new Map<number, Map<string, number>>();
  readonly #vocabCache = new Map<number, Set<string>>();
  readonly #scopeCache = new Map<string, CachedScope>();
  readonly #maxShapes: number;
  readonly #tombstoneMs: number;
  readonly #now: () => number;
  /** Statement text → its PostgreSQL prepared form (see #reused), by parameter types and text. */
  readonly #reusableTexts = new Map<string, string>();
  /** Shapes remembered since the last store-wide clear: an over-count (shapes of evicted scopes are not subtracted), so the bound holds. */
  #shapesRemembered = 0;
  /** Sort pairs being built in the background, by "scope,key field,sort field" (see #buildPair). */
  readonly #building = new Map<string, Promise<void>>();

  /** Run `fn` in a transaction, or in the caller's when this store was built over one (the service deletes a connector and its records atomically). */
  #transaction<T>(fn: (trx: Executor) => Promise<T>): Promise<T> {
    return this.#db.isTransaction ? fn(this.#db) : this.#db.transaction().execute(fn);
  }

  /** A store over an open database whose "search" migrations have been applied. */
  constructor(database: { db: Executor; dialect: DialectName; sqlite?: SqliteStatements; postgres?: PostgresStatements }, options: RecordStoreOptions) {
    this.#db = database.db;
    this.#sqlite = database.dialect === 'sqlite' && !database.db.isTransaction ? database.sqlite : undefined;
    this.#pg = database.dialect === 'postgres' && !database.db.isTransaction ? database.postgres : undefined;
    this.#dialect = database.dialect === 'postgres' ? postgresSearchDialect : sqliteSearchDialect;
    this.#secret = Buffer.isBuffer(options.cursorSecret) ? options.cursorSecret : Buffer.from(options.cursorSecret, 'utf8');
    if (this.#secret.length === 0) throw new Error('RecordStore needs a non-empty cursorSecret');
    this.#maxShapes = options.maxRememberedShapes ?? SHAPE_CACHE_TOTAL;
    this.#tombstoneMs = options.tombstoneRetentionMs ?? DEFAULT_TOMBSTONE_RETENTION_MS;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Resolves once the sort pairs this store is building in the background (learned from searches,
   * see #pairWalk) are built or given up: for tests, and before closing the database.
   */
  async settled(): Promise<void> {
    while (this.#building.size > 0) await Promise.all(this.#building.values());
  }

  /** How many query shapes this store remembers now, across its cached scopes. */
  get rememberedShapes(): number {
    let n = 0;
    for (const scope of this.#scopeCache.values()) n += scope.shapes.size;
    return n;
  }

  /**
   * Insert or replace records (keyed by the entity's primary key) in one transaction. Records
   * whose search document did not change keep their index entries. `syncRun` marks the records
   * as seen by that sync run, for deleteMissing; without it a record keeps its previous mark.
   * Returns how many records were new (added) and how many had a changed payload (updated).
   */
  async upsert(connectorId: string, entity: string, def: SearchEntityDef, records: Record<string, unknown>[], syncRun?: string): Promise<ChangeCounts> {
    let counts: ChangeCounts = { added: 0, updated: 0 };
    if (records.length === 0) return counts;
    const byId = new Map<string, Prepared>();
    for (const given of records) {
      const raw = withinDepth(given);
      let recordJson = JSON.stringify(raw);
      let record = raw;
      if (NEEDS_CLEANING.test(recordJson)) {
        record = storableDeep(raw) as Record<string, unknown>;
        recordJson = JSON.stringify(record);
      }
      const id = recordIdOf(record, def);
      const doc = projectDocument(record, def);
      const hash = createHash('sha1').update(INDEX_VERSION).update(JSON.stringify(doc)).digest('base64');
      byId.delete(id); // the last copy of a duplicated id wins, in input order
      byId.set(id, { id, recordJson, doc, hash });
    }
    const batch = [...byId.values()];
    const now = new Date(this.#now()).toISOString();
    let scope: number | undefined;
    try {
      await this.#transaction(async (trx) => {
        const scopeId = await this.#ensureScope(trx, connectorId, entity, now);
        scope = scopeId;
        const existing = new Map<string, { rid: number; hash: string }>();
        const { rows } = await sql<{ rid: number | string; record_id: string; doc_hash: string }>`
          SELECT rid, record_id, doc_hash FROM search_records
          WHERE scope_id = ${scopeId} AND ${this.#dialect.inList(sql.ref('record_id'), batch.map((p) => p.id), 'text')}`.execute(trx);
        for (const r of rows) existing.set(r.record_id, { rid: Number(r.rid), hash: r.doc_hash });

        const returned = await this.#dialect.upsertRecords(trx, scopeId, batch.map((p) => [p.id, p.recordJson, p.hash]), now, syncRun ?? null);
        counts = await noteUpserts(trx, this.#dialect, scopeId, batch.map((p) => [p.id, payloadHash(p.recordJson)]), now);
        const ridOf = new Map(returned.map((r) => [r.record_id, Number(r.rid)]));
        const inserted = batch.length - existing.size;
        if (inserted > 0) await sql`UPDATE search_scopes SET record_count = record_count + ${inserted} WHERE scope_id = ${scopeId}`.execute(trx);

        const changed = batch.filter((p) => existing.get(p.id)?.hash !== p.hash);
        if (changed.length === 0) return;
        // Read after #ensureScope's write: a pair being built (#buildPair) holds the scope's row
        // until it commits, so this sees every pair whose rows were filled without this batch.
        const { rows: pairDefs } = await sql<{ pair_id: number; key_field: number; sort_field: number }>`SELECT pair_id, key_field, sort_field FROM search_pair_defs WHERE scope_id = ${scopeId}`.execute(trx);
        await this.#dialect.deleteIndex(trx, changed.flatMap((p) => { const e = existing.get(p.id); return e ? [e.rid] : []; }));

        const entries = changed.map((p) => ({ rid: ridOf.get(p.id)!, ...indexEntries(p.doc, def) }));
        const keys = new Set<string>();
        for (const e of entries) {
          for (const v of e.values) keys.add(v.key);
          for (const a of e.arrays) keys.add(a);
        }
        const fieldIds = await this.#fieldIds(trx, scopeId, keys);

        const valueRows: ValueRow[] = [];
        const textRows: TextRow[] = [];
        const pairRows: PairRow[] = [];
        const pairFields = new Set<number>();
        for (const d of pairDefs) pairFields.add(d.key_field).add(d.sort_field);
        const pairValues = new Map<number, string | number>();
        const vocabulary = new Set<string>();
        for (const e of entries) {
          for (const v of e.values) valueRows.push([e.rid, fieldIds.get(v.key)!, v.v, v.n, v.low, v.e]);
          if (pairDefs.length > 0) {
            pairValues.clear();
            for (const v of e.values) {
              const id = fieldIds.get(v.key)!;
              if (pairFields.has(id) && !pairValues.has(id)) pairValues.set(id, v.v);
            }
            // Element pairs (negative sort field, elementPairSort) get their rows from a trigger on search_values (schema.ts, 0007).
            for (const d of pairDefs) {
              if (Number(d.sort_field) < 0) continue;
              const kv = Number(d.key_field) === KEYLESS_PAIR ? '' : pairValues.get(d.key_field);
              const sv = pairValues.get(d.sort_field);
              if (typeof kv === 'string' && sv !== undefined) pairRows.push([Number(d.pair_id), kv, sv, e.rid]);
            }
          }
          let grams: string[] = [];
          if (this.#dialect.gramTokens) {
            const byField = new Map<number, Set<string>>();
            for (const l of e.likes) {
              const id = fieldIds.get(l.key)!;
              let trigrams = byField.get(id);
              if (trigrams === undefined) byField.set(id, (trigrams = new Set()));
              textTrigrams(l.text, trigrams);
            }
            grams = gramTokens(byField);
          }
          if (e.words.length > 0 || grams.length > 0) textRows.push([e.rid, e.words.map((w) => wordToken(fieldIds.get(w.key)!, w.word)), grams]);
          for (const w of e.words) if (isFuzzyWord(w.word)) vocabulary.add(w.word);
        }
        await this.#dialect.insertValues(trx, valueRows);
        await this.#dialect.insertPairs(trx, pairRows);
        await this.#dialect.insertText(trx, textRows);
        await this.#addVocabulary(trx, scopeId, vocabulary);
      });
    } catch (e) {
      // Ids cached during a rolled-back transaction may not exist: forget this scope's caches.
      if (scope !== undefined) {
        this.#fieldCache.delete(scope);
        this.#vocabCache.delete(scope);
      }
      throw e;
    }
    return counts;
  }

  /**
   * Full-refresh deletion: remove the entity's records not marked by `syncRun` (records deleted
   * upstream). Returns how many were removed.
   */
  async deleteMissing(connectorId: string, entity: string, syncRun: string): Promise<number> {
    const now = new Date().toISOString();
    return this.#transaction(async (trx) => {
      const scopeId = await this.#ensureScope(trx, connectorId, entity, now);
      return this.#deleteWhere(trx, scopeId, sql`SELECT rid FROM search_records WHERE scope_id = ${scopeId} AND (sync_run IS NULL OR sync_run <> ${syncRun})`);
    });
  }

  /** Remove records by id (records deleted upstream, when the API reports deletions). Returns how many existed. */
  async deleteRecords(connectorId: string, entity: string, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    // Ids as upsert stored them.
    const keys = ids.map(storableString);
    const now = new Date(this.#now()).toISOString();
    return this.#transaction(async (trx) => {
      // A write first (as #ensureScope), so the scope's writers take turns (see changes.ts).
      const { rows } = await sql<{ scope_id: number }>`UPDATE search_scopes SET synced_at = ${now} WHERE connector_id = ${connectorId} AND entity = ${entity} RETURNING scope_id`.execute(trx);
      const scopeId = rows[0]?.scope_id;
      if (scopeId === undefined) return 0;
      return this.#deleteWhere(trx, scopeId, sql`SELECT rid FROM search_records WHERE scope_id = ${scopeId} AND ${this.#dialect.inList(sql.ref('record_id'), keys, 'text')}`);
    });
  }

  /** Remove everything stored for a connector (all entities, indexes and vocabulary). Returns the records removed. */
  async deleteConnector(connectorId: string): Promise<number> {
    return this.#transaction(async (trx) => {
      // Locked (PostgreSQL), so that a sort pair being built (#buildPair) finishes first or finds the scope gone.
      const { rows } = await sql<{ scope_id: number }>`SELECT scope_id FROM search_scopes WHERE connector_id = ${connectorId}${this.#dialect.name === 'postgres' ? sql` FOR UPDATE` : sql``}`.execute(trx);
      let removed = 0;
      for (const { scope_id: scopeId } of rows) {
        const inScope = sql`SELECT rid FROM search_records WHERE scope_id = ${scopeId}`;
        await this.#dialect.deleteIndex(trx, inScope);
        const result = await sql`DELETE FROM search_records WHERE scope_id = ${scopeId}`.execute(trx);
        removed += Number(result.numAffectedRows ?? 0n);
        await sql`DELETE FROM search_fields WHERE scope_id = ${scopeId}`.execute(trx);
        await sql`DELETE FROM search_pair_defs WHERE scope_id = ${scopeId}`.execute(trx);
        await sql`DELETE FROM search_vocab WHERE scope_id = ${scopeId}`.execute(trx);
        await sql`DELETE FROM search_variants WHERE scope_id = ${scopeId}`.execute(trx);
        await sql`DELETE FROM search_scopes WHERE scope_id = ${scopeId}`.execute(trx);
        await dropChanges(trx, scopeId);
        this.#fieldCache.delete(scopeId);
        for (const [key, cached] of this.#scopeCache) if (cached.scopeId === scopeId) this.#scopeCache.delete(key);
        this.#vocabCache.delete(scopeId);
      }
      return removed;
    });
  }

  /**
   * The change feed of an entity: records added, updated or deleted after `cursor` (a previous
   * entry's `_metadata.cursor`; none: from the start), oldest change first, at most `limit`.
   * 400 invalid_cursor for a cursor this feed never gave.
   */
  async changes(connectorId: string, entity: string, options: { cursor?: string; limit?: number } = {}): Promise<ChangePage> {
    const after = parseChangeCursor(options.cursor);
    if (after === undefined) throw new SwitchboardError('invalid_cursor', 'modified_after is not a cursor of this change feed (use a _metadata.cursor it returned)');
    // Past every cursor the feed gave: a client holding it would silently skip every change to come.
    if (after > 0 && after > (await lastChangeSeq(this.#db, connectorId, entity))) {
      throw new SwitchboardError('invalid_cursor', 'modified_after is beyond every cursor this change feed has given (use a _metadata.cursor or next_cursor it returned)');
    }
    const limit = Math.max(1, Math.min(options.limit ?? 100, MAX_CHANGES_LIMIT));
    return readChanges(this.#db, this.#dialect, connectorId, entity, after, limit, new Date(this.#now() - this.#tombstoneMs).toISOString());
  }

  /** Number of records stored for an entity. */
  async count(connectorId: string, entity: string): Promise<number> {
    const { rows } = await sql<{ n: number | string }>`
      SELECT count(*) AS n FROM search_records r JOIN search_scopes s ON s.scope_id = r.scope_id
      WHERE s.connector_id = ${connectorId} AND s.entity = ${entity}`.execute(this.#db);
    return Number(rows[0]?.n ?? 0);
  }

  /** The full upstream record as last synced, or undefined. */
  async getRecord(connectorId: string, entity: string, id: string): Promise<Record<string, unknown> | undefined> {
    const { rows } = await sql<{ record: unknown }>`
      SELECT r.record FROM search_records r JOIN search_scopes s ON s.scope_id = r.scope_id
      WHERE s.connector_id = ${connectorId} AND s.entity = ${entity} AND r.record_id = ${id}`.execute(this.#db);
    return rows[0] === undefined ? undefined : this.#dialect.parseRecord(rows[0].record);
  }

  /**
   * Run the `search` action: validate params (400 `invalid_search_query` / `invalid_cursor`),
   * query the synced records, and return one page of search documents.
   */
  async search(connectorId: string, entity: string, def: SearchEntityDef, params: unknown): Promise<SearchResult> {
    const started = performance.now();
    const query = parseSearchParams(def, params);
    // Hashed only when a cursor is read or written: most searches have neither.
    const identity = new QueryIdentity(connectorId, entity, query);
    const position = query.cursor === undefined ? undefined : decodeCursor(this.#secret, identity.fingerprint(), query.sort, query.cursor);

    const key = `${connectorId}\u0000${entity}`;
    let cached = this.#scopeCache.get(key);
    // An `any` is remembered in the order of its leaves known for the scope (see #shapeQuery).
    const shapeQuery = this.#shapeQuery(query, cached);
    const shape = shapeQuery === undefined ? undefined : this.#shapeOf(shapeQuery, position, cached);
    const plan = shape === undefined ? undefined : cached?.shapes.get(shape.key);
    // A capped page that reached its cap is searched the full way, without reading it again.
    let capped = true;
    if (cached !== undefined && plan != null) {
      // A known shape: its SQL with this query's values; no compiling, one round trip (or, on
      // SQLite, two statements run directly: see ShapePlan.split).
      const page = await this.#remembered(cached, plan, shape!.slots, def, query, identity, connectorId, entity);
      if (page === null) capped = false;
      else if (page !== undefined) return searchResult(started, page.data, page.synced, page.cursor);
      else {
        this.#scopeCache.delete(key);
        cached = undefined;
      }
    }
    const fingerprint = (): string => identity.fingerprint();
    const done = (data: Record<string, unknown>[], syncedAt: string | null, cursor: string | null): SearchResult => searchResult(started, data, syncedAt, cursor);
    if (cached !== undefined) {
      // Searched with the cached scope and field ids, checking that the scope still exists and
      // has gained no field (field ids only ever grow). On PostgreSQL the search's statements
      // carry the scope's state as extra columns (StateSink), so a search is no longer one
      // statement more on a second connection; only when none of them returned a row (an empty
      // page) is the state read on its own, after. On SQLite, one small query, run beside.
      let page: PromiseSettledResult<{ data: Record<string, unknown>[]; cursor: string | null }>;
      let row: ScopeStateRow | undefined;
      const walked: { pair?: number } = {};
      if (this.#dialect.name === 'postgres') {
        const sink: StateSink = { columns: (cached.stateColumns ??= stateColumns(cached.scopeId, connectorId, entity)) };
        [page] = await Promise.allSettled([this.#searchIn(cached, def, query, fingerprint, position, sink, capped, walked)]);
        row = sink.row === undefined ? (await scopeState(cached.scopeId, connectorId, entity, this.#dialect.repeated).execute(this.#db)).rows[0] : (sink.row ?? undefined);
      } else {
        const state = scopeState(cached.scopeId, connectorId, entity, this.#dialect.repeated).execute(this.#db);
        let checked: PromiseSettledResult<{ rows: ScopeStateRow[] }>;
        [page, checked] = await Promise.allSettled([this.#searchIn(cached, def, query, fingerprint, position), state]);
        if (checked.status === 'rejected') throw checked.reason;
        row = checked.value.rows[0];
      }
      if (row !== undefined && Number(row.s_max_field ?? 0) === cached.maxField) {
        if (page.status === 'rejected') throw page.reason;
        // A sort pair walked by #plan's choice: noted before the state, which forgets it with the counts it came from.
        const choice = walked.pair !== undefined && shape === undefined && shapeQuery === query ? this.#pairChoiceKey(query, splitFieldConditions(query.filter, query.sort[0]!.field.name).rest!) : undefined;
        if (choice !== undefined) {
          cached.pairWalks ??= new Map();
          if (cached.pairWalks.size >= COUNT_CACHE_LIMIT) cached.pairWalks.clear();
          cached.pairWalks.set(choice, walked.pair!);
        }
        const synced = this.#noteState(cached, row);
        // A pair shape is learned only from a search that walked that pair.
        const learnt = choice !== undefined ? this.#shapeOf(shapeQuery!, position, cached) : shape;
        if (shapeQuery !== undefined && (learnt?.kind !== 'pair' || learnt.pairId === walked.pair)) this.#learnShape(cached, connectorId, entity, shapeQuery, position, learnt);
        return done(page.value.data, synced, page.value.cursor);
      }
      this.#scopeCache.delete(key);
    }
    const { rows: scopeRows } = await sql<{ scope_id: number; synced_at: unknown; record_count: number | string; field_id: number | null; path: string | null; kind: string | null }>`
      SELECT s.scope_id, s.synced_at, s.record_count, f.field_id, f.path, f.kind
      FROM search_scopes s LEFT JOIN search_fields f ON f.scope_id = s.scope_id
      WHERE s.connector_id = ${connectorId} AND s.entity = ${entity}`.execute(this.#db);
    const scope = scopeRows[0];
    if (scope === undefined) return done([], null, null);
    const fieldRows = scopeRows.filter((r): r is FieldRow & typeof r => r.field_id !== null);
    const entry: CachedScope = {
      scopeId: scope.scope_id,
      fields: new FieldIndex(fieldRows),
      maxField: fieldRows.reduce((m, r) => Math.max(m, Number(r.field_id)), 0),
      recordCount: Number(scope.record_count),
      shapes: new Map(),
    };
    if (this.#scopeCache.size >= SCOPE_CACHE_LIMIT) this.#scopeCache.clear();
    this.#scopeCache.set(key, entry);
    const page = await this.#searchIn(entry, def, query, fingerprint, position);
    // An `any` is learned only as one on element positions in the new scope's leaf order (which
    // the search just found), never from a shape taken with a scope since dropped.
    const fresh = hasAny(query.filter) ? this.#shapeQuery(query, entry) : query;
    if (fresh !== undefined) this.#learnShape(entry, connectorId, entity, fresh, position, fresh === query ? shape : this.#shapeOf(fresh, position, entry));
    return done(page.data, this.#dialect.parseTime(scope.synced_at), page.cursor);
  }

  /**
   * A page of a remembered shape in its scope, or undefined when the scope is gone or has gained
   * a field (the caller then drops the cached scope and searches the full way). Kept free of
   * closures: this runs for most searches, and each closure created costs a little.
   */
  #remembered(cached: CachedScope, plan: ShapePlan, slots: (string | number)[], def: SearchEntityDef, query: SearchQuery, identity: QueryIdentity, connectorId: string, entity: string): RememberedPage | undefined | null | Promise<RememberedPage | undefined | null> {
    const params: unknown[] = new Array(plan.layout.length);
    for (let i = 0; i < params.length; i++) {
      const s = plan.layout[i]!;
      params[i] = s < 0 ? plan.constants[i] : slots[s];
    }
    if (plan.split) {
      // The page, then the scope's state, synchronously on the connection unless it is inside
      // a transaction, whose uncommitted writes a read must not see (Kysely then waits for it).
      const state = cached.state!;
      const direct = this.#sqlite;
      if (direct !== undefined && !direct.inTransaction) {
        const rows = direct.prepare(plan.sql).all(params) as RememberedRow[];
        const head = direct.prepare(state.sql).get(state.parameters) as ScopeStateRow | undefined;
        return this.#rememberedPage(cached, rows, head, def, query, identity);
      }
      return (async () => {
        const { rows } = await this.#db.executeQuery<RememberedRow>(CompiledQuery.raw(plan.sql, params));
        const head = (await this.#db.executeQuery<ScopeStateRow>(CompiledQuery.raw(state.sql, state.parameters))).rows[0];
        return this.#rememberedPage(cached, rows, head, def, query, identity);
      })();
    }
    const pgDirect = this.#pg;
    if (plan.stateInRows === true) {
      const rows = pgDirect !== undefined ? pgDirect.query<RememberedRow & { s_state?: string | null }>(plan.sql, params) : this.#db.executeQuery<RememberedRow & { s_state?: string | null }>(CompiledQuery.raw(plan.sql, params)).then((r) => r.rows);
      return rows.then((r) => this.#rowsWithState(cached, plan, r, def, query, identity, connectorId, entity));
    }
    if (pgDirect !== undefined) {
      return pgDirect
        .query<ScopeStateRow & RememberedRow & { s_state?: string | null }>(plan.sql, params)
        .then((rows) => this.#rememberedPage(cached, rows, rows[0] === undefined || !('s_state' in rows[0]) ? rows[0] : unpackState(rows[0].s_state), def, query, identity));
    }
    return this.#db
      .executeQuery<ScopeStateRow & RememberedRow & { s_state?: string | null }>(CompiledQuery.raw(plan.sql, params))
      .then(({ rows }) => this.#rememberedPage(cached, rows, rows[0] === undefined || !('s_state' in rows[0]) ? rows[0] : unpackState(rows[0].s_state), def, query, identity));
  }

  /**
   * The page of a shape whose rows carry the scope's state (ShapePlan.stateInRows): null when a
   * capped page reached its cap (the caller then searches the full way, which walks); after an
   * empty page, the state read by a statement of its own, as a search the full way does.
   */
  #rowsWithState(cached: CachedScope, plan: ShapePlan, rows: (RememberedRow & { s_state?: string | null })[], def: SearchEntityDef, query: SearchQuery, identity: QueryIdentity, connectorId: string, entity: string): RememberedPage | undefined | null | Promise<RememberedPage | undefined> {
    const first = rows[0];
    if (first === undefined) {
      const state = cached.state!;
      const direct = this.#pg;
      const read = direct !== undefined ? direct.query<ScopeStateRow>(state.sql, state.parameters) : this.#db.executeQuery<ScopeStateRow>(CompiledQuery.raw(state.sql, state.parameters)).then((r) => r.rows);
      return read.then((head) => this.#rememberedPage(cached, [], head[0], def, query, identity));
    }
    if (plan.cap !== undefined && Number(first.n) >= plan.cap) return null;
    return this.#rememberedPage(cached, rows, unpackState(first.s_state), def, query, identity, plan.walk === true);
  }

  /** The documents of a remembered shape's rows (up to limit + 1, in rid order; a null rid when the page is empty), or undefined when the state read with them invalidates the cached scope. */
  #rememberedPage(cached: CachedScope, rows: RememberedRow[], head: ScopeStateRow | undefined, def: SearchEntityDef, query: SearchQuery, identity: QueryIdentity, walk = false): RememberedPage | undefined {
    if (head === undefined || Number(head.s_max_field ?? 0) !== cached.maxField) return undefined;
    const limit = query.limit;
    const data: Record<string, unknown>[] = [];
    let last: RememberedRow | undefined;
    let more = false;
    for (const r of rows) {
      if (r.rid === null) continue;
      if (data.length === limit) {
        more = true;
        break;
      }
      const doc = projectDocument(this.#dialect.parseRecord(r.record), def);
      data.push(query.fields === undefined ? doc : projectFields(doc, query.fields));
      last = r;
    }
    const cursor = more ? encodeCursor(this.#secret, identity.fingerprint(), { values: walk ? [last!.k0 ?? null] : [], rid: Number(last!.rid) }) : null;
    return { data, cursor, synced: this.#noteState(cached, head) };
  }

  /** Record a scope's state as read with a search; returns its synced_at as ISO text. */
  #noteState(cached: CachedScope, row: ScopeStateRow): string | null {
    const raw = row.s_synced_at instanceof Date ? row.s_synced_at.getTime() : row.s_synced_at;
    let synced = cached.synced;
    if (synced === undefined || synced.raw !== raw || Number(row.s_record_count) !== cached.recordCount) {
      cached.counts?.clear();
      cached.placed?.clear();
      cached.leafCounts?.clear();
      cached.pairWalks?.clear();
    }
    cached.recordCount = Number(row.s_record_count);
    if (synced === undefined || synced.raw !== raw) synced = cached.synced = { raw, iso: this.#dialect.parseTime(row.s_synced_at) };
    return synced.iso;
  }

  /**
   * The query whose shape may be remembered: the query itself without `any`; with `any`, the
   * query with each `any`'s leaves in the order #smallestLeavesFirst gives them, provided that
   * order and the `any`'s element positions are known for the cached scope (its leaf counts and
   * #elementsPlaced's probe, both forgotten when the scope changes), so that a remembered `any`
   * is always one on element positions. Undefined when not known yet (the search then runs the
   * full way and learns them).
   */
  #shapeQuery(query: SearchQuery, cached: CachedScope | undefined): SearchQuery | undefined {
    if (!hasAny(query.filter)) return query;
    if (cached === undefined || query.sort.length > 0 || this.#dialect.name !== 'postgres') return undefined;
    const cap = countCap(1, cached.recordCount, query.limit + 1);
    let known = true;
    const order = (f: Filter): Filter => {
      if (!known) return f;
      switch (f.op) {
        case 'and':
        case 'or':
          return { op: f.op, items: f.items.map(order) };
        case 'not':
          return { op: 'not', item: order(f.item) };
        case 'any': {
          const ids = cached.fields.below(f.field.name);
          if (!elementCompilable(f.item) || !cached.fields.elementsExact(f.field.name) || (ids.length > 0 && cached.placed?.get(ids.join(',')) !== true)) {
            known = false;
            return f;
          }
          if (f.item.op !== 'and') return f;
          const counts = f.item.items.map((i) => cached.leafCounts?.get(`${cap}\u0000${f.field.name}\u0000${JSON.stringify(i)}`));
          if (counts.some((n) => n === undefined)) {
            known = false;
            return f;
          }
          if (counts.filter((n) => n !== Infinity).length < 2) return f;
          const sorted = f.item.items.map((item, i) => ({ item, n: counts[i]! })).sort((a, b) => a.n - b.n);
          return { ...f, item: { op: 'and', items: sorted.map((o) => o.item) } };
        }
        default:
          return f;
      }
    };
    const filter = order(query.filter!);
    return known ? { ...query, filter } : undefined;
  }

  /**
   * The shape of a query whose values all reach SQL unchanged or derived (see queryShape), with
   * its values as slots; with `marking`, also its marked form. Unsorted queries (ShapeKind
   * `ordered`, and on PostgreSQL `capped` for a keyword or like), and on PostgreSQL a query sorted
   * by one field with every condition on that field (`walk`). Undefined for any other query.
   */
  #shapeOf(query: SearchQuery, position: CursorPosition | undefined, scope: CachedScope | undefined, marking?: false): Shape | undefined;
  #shapeOf(query: SearchQuery, position: CursorPosition | undefined, scope: CachedScope | undefined, marking: true): MarkedShape | undefined;
  #shapeOf(query: SearchQuery, position: CursorPosition | undefined, scope: CachedScope | undefined, marking = false): Shape | MarkedShape | undefined {
    const filter = query.filter;
    if (filter === undefined) return undefined;
    const postgres = this.#dialect.name === 'postgres';
    const fields = scope?.fields;
    let kind: ShapeKind = 'ordered';
    let prefix = '';
    let cap = 0;
    let pairId: number | undefined;
    if (query.sort.length > 0) {
      // A walk of the sort key's index bounded by the conditions, all on that key: no count and
      // no plan to choose, and no second segment of records without the key (each condition
      // requires a value). A cursor past the values (a null sort value) is not one.
      const first = query.sort[0]!;
      if (!postgres || query.sort.length !== 1 || (position !== undefined && position.values[0] == null)) return undefined;
      const split = splitFieldConditions(filter, first.field.name);
      if (split.leaves.length === 0) return undefined;
      if (split.rest === undefined) {
        kind = 'walk';
        // A walk of the sort field's key-less pair once it has one: another statement.
        const sortId = scope?.fields.ids(first.field, first.kind)[0];
        const keyless = sortId === undefined ? undefined : scope!.pairs?.get(`${KEYLESS_PAIR},${sortId}`);
        prefix = `walk(${JSON.stringify(first.field.name)},${first.kind},${first.dir})${keyless === undefined ? '' : `@${keyless}`}`;
      } else {
        // Other conditions too: a walk of the sort pair a search the full way chose for these
        // values of them (CachedScope.pairWalks), whose plan therefore is that walk.
        const choice = scope === undefined ? undefined : this.#pairChoiceKey(query, split.rest);
        pairId = choice === undefined ? undefined : scope!.pairWalks?.get(choice);
        if (pairId === undefined) return undefined;
        kind = 'pair';
        prefix = `pair(${pairId},${JSON.stringify(first.field.name)},${first.kind},${first.dir})`;
      }
    } else if (postgres && (filter.op === 'keyword' || filter.op === 'like')) {
      // Read from a GIN index up to a cap that follows the record count: part of the key.
      if (scope === undefined) return undefined;
      kind = 'capped';
      cap = cappedLimit(query.limit + 1, scope.recordCount);
      prefix = `capped(${cap})`;
    }
    const slots: (string | number)[] = [];
    const markers = marking ? new Map<string | number, number>() : undefined;
    const match = this.#dialect.tokenMatch;
    const derive = fields === undefined ? undefined : match !== undefined ? { fields, match } : kind === 'capped' ? { fields } : undefined;
    const shaped = queryShape(filter, slots, markers, derive);
    if (shaped === undefined) return undefined;
    // A pair's signature checks differ for a value held in it by a hash (exactInSignature).
    if (kind === 'pair') prefix += slots.every((v) => typeof v !== 'string' || exactInSignature(v)) ? ':exact' : ':hashed';
    let markedPosition: CursorPosition | undefined;
    if (position !== undefined) {
      const values: (string | number | null)[] = [];
      if (kind === 'walk' || kind === 'pair') {
        // The cursor's sort value is a value slot, like the conditions' (a marker in its place).
        const v = position.values[0]!;
        slots.push(v);
        const m = typeof v === 'string' ? `\u0000${slots.length - 1}\u0000` : -(slots.length - 1 + 1.5);
        markers?.set(m, slots.length - 1);
        values.push(m);
      }
      slots.push(position.rid);
      const m = -(slots.length - 1 + 1.5);
      markers?.set(m, slots.length - 1);
      markedPosition = { values, rid: m };
    }
    const key = `${prefix}${shaped.shape}|${query.limit}|${position === undefined ? 0 : 1}`;
    if (markers === undefined) return { key, slots, kind, cap, pairId };
    return { key, slots, kind, cap, pairId, marked: shaped.marked, markedPosition, markers };
  }

  /**
   * The key of CachedScope.pairWalks for a query sorted by one field on PostgreSQL: its sort,
   * limit, and the shape and values of `rest`, its conditions other than on the sort field (what
   * #plan's counts and #pairWalk's choice depend on); undefined when `rest` has no shape.
   */
  #pairChoiceKey(query: SearchQuery, rest: Filter): string | undefined {
    if (!this.#dialect.sortPairs || query.sort.length !== 1) return undefined;
    const slots: (string | number)[] = [];
    const shaped = queryShape(rest, slots);
    if (shaped === undefined) return undefined;
    const first = query.sort[0]!;
    return `${JSON.stringify(first.field.name)},${first.kind},${first.dir}|${query.limit}|${shaped.shape}|${JSON.stringify(slots)}`;
  }

  /**
   * After a search answered the slow way: remember its shape's SQL when its page is one
   * statement whatever the data (see ShapeKind), compiled once with the query's values and once
   * with markers in their place, so that each parameter is known to be a value slot or a
   * constant (an `any` only on element positions, its leaves in the order known for the scope,
   * see #shapeQuery). A shape whose two compiles disagree in anything but the values is
   * remembered as not reusable.
   */
  #learnShape(scope: CachedScope, connectorId: string, entity: string, query: SearchQuery, position: CursorPosition | undefined, known: Shape | undefined): void {
    if (known === undefined || scope.shapes.has(known.key)) return;
    const shape = this.#shapeOf(query, position, scope, true);
    // The record count may have moved the cap since the search began: learn the shape next time.
    if (shape === undefined || shape.key !== known.key) return;
    if (scope.shapes.size >= SHAPE_CACHE_LIMIT) scope.shapes.clear();
    if (this.#shapesRemembered >= this.#maxShapes) {
      for (const s of this.#scopeCache.values()) s.shapes.clear();
      this.#shapesRemembered = 0;
    }
    this.#shapesRemembered++;
    const want = query.limit + 1;
    const split = this.#sqlite !== undefined;
    const build = (filter: Filter, at: CursorPosition | undefined): RawBuilder<unknown> | undefined =>
      shape.kind === 'walk'
        ? this.#walkPage(scope, connectorId, entity, query, filter, want, at)
        : shape.kind === 'pair'
          ? this.#pairPage(scope, connectorId, entity, query, filter, want, at, shape.pairId!)
          : shape.kind === 'capped'
          ? this.#cappedPage(scope, connectorId, entity, filter, want, shape.cap, at)
          : split
            ? this.#orderedPage(scope, filter, want, at)
            : this.#orderedPageWithState(scope, connectorId, entity, filter, want, at);
    const real = build(query.filter!, position);
    const marked = build(shape.marked, shape.markedPosition);
    let plan: ShapePlan | null = null;
    if (real !== undefined && marked !== undefined) {
      const r = real.compile(this.#db);
      const m = marked.compile(this.#db);
      // A list reaches SQL as one parameter: compared, and found among the markers, as its array literal's text.
      const keyOf = (p: unknown): unknown => (Array.isArray(p) ? textArrayLiteral(p) : p);
      const layout = m.parameters.map((p) => shape.markers.get(keyOf(p) as string | number) ?? -1);
      const cursorSlot = position === undefined ? -1 : shape.slots.length - 1;
      const kinds = layout.map((s): ParameterKind => (s < 0 ? 'constant' : s === cursorSlot ? 'cursor' : 'value'));
      const text = r.sql.startsWith(PREPARED_SQL) ? r.sql.slice(PREPARED_SQL.length) : r.sql;
      const candidate: ShapePlan = { sql: this.#dialect.reusableSql(text, r.parameters, kinds), layout, constants: r.parameters };
      if (shape.kind !== 'ordered') candidate.stateInRows = true;
      if (shape.kind === 'walk' || shape.kind === 'pair') candidate.walk = true;
      if (shape.kind === 'capped') candidate.cap = shape.cap;
      const same = r.sql === m.sql && r.parameters.length === layout.length && layout.every((s, i) => (s < 0 ? keyOf(m.parameters[i]) === keyOf(r.parameters[i]) : keyOf(shape.slots[s]) === keyOf(r.parameters[i])));
      if (same) plan = candidate;
      if (plan !== null && (split || plan.stateInRows === true)) {
        if (split) plan.split = true;
        if (scope.state === undefined) {
          const st = scopeState(scope.scopeId, connectorId, entity).compile(this.#db);
          scope.state = { sql: this.#dialect.reusableSql(st.sql, st.parameters, st.parameters.map((): ParameterKind => 'constant')), parameters: [...st.parameters] };
        }
      }
    }
    scope.shapes.set(shape.key, plan);
  }

  /** PostgreSQL: the walk of a `walk` shape (see ShapeKind), as #searchIn runs it, with the scope's state on every row; undefined when the sort field has no values in the scope. */
  #walkPage(scope: CachedScope, connectorId: string, entity: string, query: SearchQuery, filter: Filter, want: number, position: CursorPosition | undefined): RawBuilder<unknown> | undefined {
    const key = query.sort[0]!;
    const fieldId = scope.fields.ids(key.field, key.kind)[0];
    if (fieldId === undefined) return undefined;
    const { leaves, rest } = splitFieldConditions(filter, key.field.name);
    if (rest !== undefined || leaves.length === 0) return undefined;
    const keyless = scope.pairs?.get(`${KEYLESS_PAIR},${fieldId}`);
    const pair = keyless === undefined ? undefined : { pairId: keyless, value: '' };
    return pageQuery(this.#dialect, scope.scopeId, andPreds([]), [{ key, fieldId }], 'values', position, want, leaves, undefined, undefined, stateColumns(scope.scopeId, connectorId, entity), pair);
  }

  /**
   * PostgreSQL: the walk of a `pair` shape (see ShapeKind), as #searchIn runs it when #plan
   * chose no driving set and #pairWalk the sort pair `pairId`, with the scope's state on every
   * row; undefined unless the query's first pair key with a pair is that pair's.
   */
  #pairPage(scope: CachedScope, connectorId: string, entity: string, query: SearchQuery, filter: Filter, want: number, position: CursorPosition | undefined, pairId: number): RawBuilder<unknown> | undefined {
    const key = query.sort[0]!;
    const fieldId = scope.fields.ids(key.field, key.kind)[0];
    if (fieldId === undefined || scope.pairs === undefined) return undefined;
    const { leaves, rest } = splitFieldConditions(filter, key.field.name);
    if (rest === undefined || leaves.length === 0) return undefined;
    for (const c of pairKeyCandidates(rest)) {
      const keyField = scope.fields.ids(c.field, 's')[0];
      if (keyField === undefined || keyField === fieldId) continue;
      const id = scope.pairs.get(`${keyField},${fieldId}`);
      if (id === undefined) continue;
      if (id !== pairId) return undefined;
      const check = c.rest === undefined ? true : andPreds(compileConjuncts(c.rest, { dialect: this.#dialect, fields: scope.fields, fuzzy: new Map(), signature: true }).map((x) => x.check));
      return pageQuery(this.#dialect, scope.scopeId, check, [{ key, fieldId }], 'values', position, want, leaves, undefined, undefined, stateColumns(scope.scopeId, connectorId, entity), { pairId: id, value: c.value });
    }
    return undefined;
  }

  /** PostgreSQL: the capped page of a `capped` shape (see ShapeKind), as #searchIn runs it, with the scope's state on every row; undefined unless the filter compiles to one listable condition read by a plan that does not depend on its values. */
  #cappedPage(scope: CachedScope, connectorId: string, entity: string, filter: Filter, want: number, cap: number, position: CursorPosition | undefined): RawBuilder<unknown> | undefined {
    const live = compileConjuncts(filter, { dialect: this.#dialect, fields: scope.fields, fuzzy: new Map() }).filter((c) => c.check !== true);
    const only = live.length === 1 && live[0]!.check !== false ? live[0]! : undefined;
    if (only === undefined || only.set === undefined || only.ordered !== undefined || only.planByValue === true) return undefined;
    return cappedSetPage(this.#dialect, scope.scopeId, only.set, position?.rid, cap, want, false, stateColumns(scope.scopeId, connectorId, entity));
  }

  /** The single index-ordered pass of an unsorted one-condition query (undefined when the query is not one). */
  #orderedPage(scope: CachedScope, filter: Filter, want: number, position: CursorPosition | undefined): RawBuilder<unknown> | undefined {
    // An `any` here is one on element positions (see #shapeQuery).
    const conjuncts = compileConjuncts(filter, { dialect: this.#dialect, fields: scope.fields, fuzzy: new Map(), exactAny: hasAny(filter), ...(scope.pairs !== undefined ? { pairs: scope.pairs } : {}) });
    const live = conjuncts.filter((c) => c.check !== true);
    const only = live.length === 1 && live[0]!.check !== false ? live[0]!.ordered : undefined;
    if (only === undefined) return undefined;
    return pageQuery(this.#dialect, scope.scopeId, true, [], 'none', position, want, [], undefined, only);
  }

  /** The single index-ordered pass of an unsorted one-condition query, with the scope's state as extra columns (one row with a null rid when the page is empty). */
  #orderedPageWithState(scope: CachedScope, connectorId: string, entity: string, filter: Filter, want: number, position: CursorPosition | undefined): RawBuilder<unknown> | undefined {
    const page = this.#orderedPage(scope, filter, want, position);
    if (page === undefined) return undefined;
    // PostgreSQL: the state as one text column (see stateColumns), repeated on every row.
    const state = this.#dialect.name === 'postgres'
      ? sql`${packedState(sql`${scope.scopeId}`)} AS s_state`
      : sql`s.synced_at AS s_synced_at, s.record_count AS s_record_count, (${maxFieldOf(sql`${scope.scopeId}`)}) AS s_max_field`;
    return sql`SELECT ${state}, p.rid AS rid, p.record AS record
      FROM search_scopes s LEFT JOIN (${page}) p ON 1 = 1
      WHERE s.scope_id = ${scope.scopeId} AND s.connector_id = ${connectorId} AND s.entity = ${entity}
      ORDER BY p.rid`;
  }

  /**
   * Run a page statement. On PostgreSQL, unless its plan depends on its values, as a named
   * prepared statement with its values read through one-row subqueries (SearchDialect.reusableSql):
   * parsed once per connection and, after its first runs, no longer planned (a sorted walk's
   * planning alone took 0.2 ms at 20,000 contacts, as long as the page's range scan).
   */
  #reused<R>(query: RawBuilder<R>, byValue: boolean): Promise<{ rows: R[] }> {
    if (this.#dialect.name !== 'postgres') return query.execute(this.#db);
    const direct = this.#pg;
    const compiled = query.compile(this.#db);
    let text = compiled.sql;
    if (!byValue) {
      // The rewrite depends on the text and on each parameter's type only: kept per both, so a
      // page or count of a known text is not scanned again (a regex pass over 2-4 kB each time).
      let types = '';
      for (const p of compiled.parameters) types += typeof p === 'string' ? 's' : typeof p === 'number' ? (Number.isSafeInteger(p) ? 'i' : 'd') : Array.isArray(p) ? 'a' : 'o';
      const key = `${types}\u0000${text}`;
      let reusable = this.#reusableTexts.get(key);
      if (reusable === undefined) {
        const bare = text.startsWith(PREPARED_SQL) ? text.slice(PREPARED_SQL.length) : text;
        reusable = this.#dialect.reusableSql(bare, compiled.parameters, compiled.parameters.map((): ParameterKind => 'constant'));
        if (this.#reusableTexts.size >= REUSABLE_TEXT_LIMIT) this.#reusableTexts.clear();
        this.#reusableTexts.set(key, reusable);
      }
      text = reusable;
    }
    // Outside a caller's transaction, on a pool client directly (see Database.postgres).
    if (direct !== undefined) return direct.query<R>(text, [...compiled.parameters]).then((rows) => ({ rows }));
    return this.#db.executeQuery<R>(CompiledQuery.raw(text, [...compiled.parameters]));
  }

  /** One page of a parsed query in a scope, with the scope's field dictionary. */
  async #searchIn(scope: CachedScope, def: SearchEntityDef, query: SearchQuery, fingerprint: () => string, position: CursorPosition | undefined, sink?: StateSink, capped = true, walked?: { pair?: number }): Promise<{ data: Record<string, unknown>[]; cursor: string | null }> {
    const empty = { data: [], cursor: null };
    const fields = scope.fields;
    // `any` compiles on element positions when every `any` can (#elementsPlaced); otherwise it
    // runs as a relaxed filter in SQL, each candidate confirmed in JavaScript (relax.ts).
    const withAny = hasAny(query.filter);
    const exactAny = withAny && (await this.#elementsPlaced(scope, query.filter));
    const confirm = withAny && !exactAny ? query.filter : undefined;
    let sqlFilter = confirm === undefined ? query.filter : relaxFilter(query.filter);
    const pairs = exactAny && this.#dialect.sortPairs ? await this.#pairsOf(scope) : undefined;
    const ctx: CompileContext = { dialect: this.#dialect, fields, fuzzy: await this.#fuzzyCandidates(scope.scopeId, sqlFilter), exactAny, ...(pairs !== undefined ? { pairs } : {}) };
    if (exactAny) sqlFilter = await this.#smallestLeavesFirst(scope, ctx, sqlFilter!, query.limit + 1, sink);
    const sort: SortPlan[] = query.sort.map((key) => ({ key, fieldId: fields.ids(key.field, key.kind)[0] }));
    const first = sort[0];
    // Conditions on the first sort key become bounds of its index scan rather than a lookup of
    // their own; records they match all have a value, so the nulls phase is not needed then.
    const { leaves, rest } = first === undefined ? { leaves: [], rest: sqlFilter } : splitFieldConditions(sqlFilter, first.key.field.name);
    const conjuncts = rest === undefined ? [] : compileConjuncts(rest, ctx);
    if (conjuncts.some((c) => c.check === false) || (leaves.length > 0 && first?.fieldId === undefined)) return empty;
    const want = query.limit + 1;
    const live = conjuncts.filter((c) => c.check !== true);
    // One condition whose set is read in rid order, no sort, nothing to confirm: the page comes
    // straight from its index in one pass (limit + 1 rows tell has_more), without a count.
    const single = live.length === 1 && sort.length === 0 && confirm === undefined ? live[0]! : undefined;
    const only = single?.ordered;
    // One condition that lists its records, though not in rid order (an object/array field's
    // values; PostgreSQL's GIN indexes): its set is read once, up to a cap, and the page taken
    // from it in the same statement. No separate count. A set of n records is worth reading
    // whole while n is below the records a walk in rid order would examine (want / (n / total)),
    // i.e. n below sqrt(want × total): that is the cap, and a set reaching it, whose rest is
    // unread, falls back to the walk.
    let early: PageRow[] | undefined;
    if (capped && single !== undefined && only === undefined && single.set !== undefined) {
      const cap = cappedLimit(want, scope.recordCount);
      const { rows } = await this.#reused(cappedSetPage(this.#dialect, scope.scopeId, single.set, position?.rid, cap, want, single.planByValue, sink?.columns), single.planByValue === true);
      noteSink(sink, rows);
      if (rows.length === 0 || Number(rows[0]!.n) < cap) early = rows.map((r) => ({ rid: Number(r.rid), record: r.record, keys: [] }));
    }
    const plan = only !== undefined ? { filter: true as const, driver: undefined } : single !== undefined ? { filter: single.check, driver: undefined } : await this.#plan(live, scope, want, sink);
    if (plan === 'empty') return empty;
    const { filter, driver } = plan;
    // The page's plan depends on its values only when they choose its driving set (a like pattern).
    const byValue = plan.byValue === true || (only !== undefined && live.some((c) => c.planByValue));
    // A walk of the first sort key's index with an equality on a scalar string field: walk the
    // records of that value in sort order from the scope's sort pair instead (learning the pair
    // when the scope has none yet, see #pairWalk).
    const pair = early === undefined && driver === undefined && first?.fieldId !== undefined ? await this.#pairWalk(scope, first.fieldId, rest, ctx) : undefined;
    // One statement, a walk of the pair bounded by the leaves: what a `pair` shape remembers.
    if (walked !== undefined && pair !== undefined && pair.keyless !== true && confirm === undefined && !exactAny && sort.length === 1 && leaves.length > 0) walked.pair = pair.pairId;

    // An `any` on element positions read in one pass (PostgreSQL): the page left-joined to one
    // row carrying the scope's state, so that an empty page (half the benchmark's tag pairs
    // match no contact) needs no statement of its own for it. The rows are put in rid order
    // here: an ORDER BY around the join made PostgreSQL sort the page's records (0.1 ms for 100).
    // Unsorted pages only, whose order is ascending rid.
    const stateRow = exactAny && only !== undefined && sink !== undefined && sort.length === 0;
    const fetch = async (phase: 'none' | 'values' | 'nulls', after: CursorPosition | undefined, limit: number): Promise<PageRow[]> => {
      const walkPair = phase === 'values' ? pair : undefined;
      const page = pageQuery(this.#dialect, scope.scopeId, walkPair === undefined ? filter : walkPair.filter, sort, phase, after, limit, phase === 'values' ? leaves : [], driver, only, stateRow ? undefined : sink?.columns, walkPair);
      const statement = stateRow ? sql<Record<string, unknown>>`SELECT p.rid AS rid, p.record AS record, ${sink.columns} FROM (SELECT 1 AS one) o LEFT JOIN (${page}) p ON true` : page;
      let { rows } = await this.#reused(statement, byValue);
      noteSink(sink, rows);
      if (stateRow) rows = rows.filter((r) => r['rid'] !== null).sort((a, b) => Number(a['rid']) - Number(b['rid']));
      return rows.map((r) => ({
        rid: Number(r['rid']),
        record: r['record'],
        keys: sort.map((_, i) => (r[`k${i}`] ?? null) as string | number | null),
      }));
    };
    const docs = new Map<number, Doc>();
    const docOf = (r: PageRow): Doc => {
      let doc = docs.get(r.rid);
      if (doc === undefined) docs.set(r.rid, (doc = projectDocument(this.#dialect.parseRecord(r.record), def)));
      return doc;
    };
    // Up to `limit` matching rows of a phase: with an `any` to confirm, read candidates in
    // result order in batches, keeping the confirmed ones, until enough or none are left.
    const run = async (phase: 'none' | 'values' | 'nulls', after: CursorPosition | undefined, limit: number): Promise<PageRow[]> => {
      if (confirm === undefined) return fetch(phase, after, limit);
      const out: PageRow[] = [];
      let from = after;
      for (;;) {
        const batch = Math.min(CONFIRM_BATCH, Math.max(limit * 2, 50));
        const rows = await fetch(phase, from, batch);
        for (const r of rows) {
          if (matches(docOf(r), def, confirm)) out.push(r);
          if (out.length === limit) return out;
        }
        const last = rows.at(-1);
        if (rows.length < batch || last === undefined) return out;
        from = { values: last.keys, rid: last.rid };
      }
    };
    let rows: PageRow[];
    if (early !== undefined) {
      rows = early;
    } else if (first === undefined) {
      rows = await run('none', position, want);
    } else {
      const inNulls = position !== undefined && position.values[0] === null;
      rows = !inNulls && first.fieldId !== undefined ? await run('values', position, want) : [];
      if (rows.length < want && leaves.length === 0 && (inNulls || first.fieldId === undefined || !requiresValue(query.filter, first.key.field.name))) {
        rows.push(...(await run('nulls', inNulls ? position : undefined, want - rows.length)));
      }
    }
    return this.#finishPage(rows, def, query, fingerprint, docOf);
  }

  /**
   * Whether every `any` of a filter compiles on element positions: its condition is one
   * (elementCompilable), not inside another `any`, the scope's element positions number exactly
   * its array's elements (FieldIndex.elementsExact), and no value below the array lacks a position
   * (one probe of the partial index search_values_unplaced per set of field ids, remembered until
   * the scope changes).
   */
  async #elementsPlaced(scope: CachedScope, f: Filter | undefined): Promise<boolean> {
    const arrays: string[] = [];
    const visit = (g: Filter): boolean => {
      switch (g.op) {
        case 'and':
        case 'or':
          return g.items.every(visit);
        case 'not':
          return visit(g.item);
        case 'any':
          if (!elementCompilable(g.item) || !scope.fields.elementsExact(g.field.name)) return false;
          arrays.push(g.field.name);
          return true;
        default:
          return true;
      }
    };
    if (f === undefined || !visit(f)) return false;
    for (const array of arrays) {
      const ids = scope.fields.below(array);
      if (ids.length === 0) continue;
      const key = ids.join(',');
      let placed = scope.placed?.get(key);
      if (placed === undefined) {
        // `e = -1` written out, so that the partial index's predicate is seen to hold.
        const { rows } = await sql`SELECT 1 AS one FROM search_values WHERE ${this.#dialect.inList(sql.ref('field_id'), ids, 'int')} AND e = -1 LIMIT 1`.execute(this.#db);
        placed = rows.length === 0;
        scope.placed ??= new Map();
        scope.placed.set(key, placed);
      }
      if (!placed) return false;
    }
    return true;
  }

  /**
   * The filter with the items of each `any`'s and reordered, the positive leaf with the fewest
   * values first (bounded counts, remembered as the planner's): the first such leaf generates the
   * elements an `any` on element positions examines (see ElementCompiler in compile.ts).
   */
  async #smallestLeavesFirst(scope: CachedScope, ctx: CompileContext, f: Filter, want: number, sink: StateSink | undefined): Promise<Filter> {
    switch (f.op) {
      case 'and':
      case 'or':
        return { op: f.op, items: await Promise.all(f.items.map((i) => this.#smallestLeavesFirst(scope, ctx, i, want, sink))) };
      case 'not':
        return { op: 'not', item: await this.#smallestLeavesFirst(scope, ctx, f.item, want, sink) };
      case 'any': {
        if (f.item.op !== 'and') return f;
        const cap = countCap(1, scope.recordCount, want);
        // Known counts by the leaf as parsed (no SQL built); the same leaf has the same field ids
        // while the scope's field dictionary stands, which the cached scope's life guarantees.
        const keys = f.item.items.map((i) => `${cap}\u0000${f.field.name}\u0000${JSON.stringify(i)}`);
        let counts = keys.map((k) => scope.leafCounts?.get(k));
        if (counts.some((n) => n === undefined)) {
          const sets = f.item.items.map((i) => elementLeafSet(ctx, f.field, i));
          if (sets.filter((c) => c?.set !== undefined).length < 2) return f;
          counts = await Promise.all(sets.map((c, i) => (c?.set === undefined ? Infinity : this.#leafCount(scope, keys[i]!, c.set, cap, sink))));
          for (let i = 0; i < keys.length; i++) if (sets[i]?.set === undefined) this.#noteLeafCount(scope, keys[i]!, Infinity);
        }
        if (counts.filter((n) => n !== Infinity).length < 2) return f;
        // Both leaves list at least a page of values: the probes would examine that many
        // elements, an element pair (elementPairSort) reads only the matching ones.
        if (f.item.items.length === 2 && Math.min(counts[0]!, counts[1]!) >= want) this.#learnElementPair(scope, ctx, f.field, f.item.items);
        const order = f.item.items.map((item, i) => ({ item, n: counts[i]! })).sort((a, b) => a.n - b.n);
        return { ...f, item: { op: 'and', items: order.map((o) => o.item) } };
      }
      default:
        return f;
    }
  }

  /** The page of up to limit + 1 rows in result order: its first `limit` documents, and a cursor when there is a further row. */
  #finishPage(rows: PageRow[], def: SearchEntityDef, query: SearchQuery, fingerprint: () => string, docOf = (r: PageRow): Doc => projectDocument(this.#dialect.parseRecord(r.record), def)): { data: Record<string, unknown>[]; cursor: string | null } {
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    const cursor = rows.length > query.limit && last !== undefined ? encodeCursor(this.#secret, fingerprint(), { values: last.keys, rid: last.rid }) : null;
    const data = page.map((r) => {
      const doc = docOf(r);
      return query.fields === undefined ? doc : projectFields(doc, query.fields);
    });
    return { data, cursor };
  }

  /**
   * Choose how to compute a page: drive from the conjunct with the fewest matches when that is
   * fewer than the records a walk in result order would expect to examine (want divided by the
   * estimated selectivity), else walk, checking every conjunct per record. Matches are counted
   * up to countCap (at most ESTIMATE_CAP); a conjunct at the cap is never a driver (its true size is unknown).
   */
  async #plan(conjuncts: Compiled[], scope: CachedScope, want: number, sink?: StateSink): Promise<'empty' | { filter: ReturnType<typeof andPreds>; driver: Compiled['set']; byValue?: true }> {
    const total = scope.recordCount;
    const listable = conjuncts.filter((c) => c.set !== undefined);
    let driver: Compiled | undefined;
    if (listable.length > 1 && this.#dialect.name === 'postgres' && !this.#db.isTransaction) {
      const decided = await this.#concurrentCounts(listable, scope, want, sink);
      if (decided === 'empty') return 'empty';
      driver = decided;
    } else if (listable.length > 0) {
      const cap = countCap(listable.length, total, want);
      const counts: number[] = [];
      for (const c of listable) {
        counts.push(await this.#count(scope, c, cap, sink));
      }
      if (counts.includes(0)) return 'empty';
      const selectivity = counts.reduce((p, n) => p * Math.min(1, n / Math.max(1, total)), 1);
      const best = counts.indexOf(Math.min(...counts));
      if (counts[best]! < cap && counts[best]! <= want / selectivity) driver = listable[best];
    }
    return { filter: andPreds(conjuncts.filter((c) => c !== driver).map((c) => c.check)), driver: driver?.set, ...(driver?.planByValue ? { byValue: true as const } : {}) };
  }

  /**
   * The sort pair (schema.ts, 0004) a walk of the sort field `sortField` can take instead: one
   * whose key field has an equality at the top level of `rest` (the filter without the sort
   * field's own conditions), with that value and the checks of the rest of the filter. When the
   * scope has no such pair, the first candidate's pair is built in the background (#buildPair),
   * and this walk takes the sort field's index. A pair is learned from the search that needs it:
   * the planner chose to walk although the equality could list its records, so that value is
   * common and the walk examines many records without it. With no condition but on the sort
   * field (`rest` undefined), the sort field's key-less pair likewise (`keyless`: a `walk` shape,
   * whose key names it, see #shapeOf, not a `pair` one).
   */
  async #pairWalk(scope: CachedScope, sortField: number, rest: Filter | undefined, ctx: CompileContext): Promise<{ pairId: number; value: string; filter: Pred; keyless?: true } | undefined> {
    if (!this.#dialect.sortPairs) return undefined;
    const candidates = pairKeyCandidates(rest);
    if (candidates.length === 0 && rest !== undefined) return undefined;
    const pairs = await this.#pairsOf(scope);
    if (rest === undefined) {
      // Only conditions on the sort field (or none): the sort field's key-less pair (key field
      // KEYLESS_PAIR, every row's key ''), whose rows carry the records, so a page reads no
      // record by its rid (range + sort at 1,000,000 contacts: 101 primary-key lookups a page).
      const pairId = pairs.get(`${KEYLESS_PAIR},${sortField}`);
      if (pairId !== undefined) return { pairId, value: '', filter: true, keyless: true };
      if (!scope.pairsFull && !this.#db.isTransaction) this.#buildPair(scope, KEYLESS_PAIR, sortField);
      return undefined;
    }
    let learn: number | undefined;
    for (const c of candidates) {
      const keyField = scope.fields.ids(c.field, 's')[0];
      if (keyField === undefined || keyField === sortField) continue;
      const pairId = pairs.get(`${keyField},${sortField}`);
      if (pairId === undefined) {
        learn ??= keyField;
        continue;
      }
      const filter = c.rest === undefined ? true : andPreds(compileConjuncts(c.rest, { ...ctx, ...(this.#dialect.name === 'postgres' ? { signature: true as const } : {}) }).map((x) => x.check));
      return { pairId, value: c.value, filter };
    }
    if (learn !== undefined && !scope.pairsFull && !this.#db.isTransaction) this.#buildPair(scope, learn, sortField);
    return undefined;
  }

  /**
   * Start building the element pair (elementPairSort) of an `any` whose condition is two
   * equalities, one on a string (the key; of two strings, the one with the lower field id, so
   * that both orders of a condition learn one pair, which pairRange reads either way), unless the
   * scope has it, has MAX_SORT_PAIRS pairs, or the search runs in a caller's transaction.
   */
  #learnElementPair(scope: CachedScope, ctx: CompileContext, array: FieldRef, items: Filter[]): void {
    if (ctx.pairs === undefined || scope.pairsFull || this.#db.isTransaction) return;
    const [a, b] = items;
    if (a?.op !== 'eq' || b?.op !== 'eq') return;
    const idA = scope.fields.ids(elementPath(array, a.field), a.kind);
    const idB = scope.fields.ids(elementPath(array, b.field), b.kind);
    if (idA.length !== 1 || idB.length !== 1) return;
    const aKey = a.kind === 's' && (b.kind !== 's' || idA[0]! < idB[0]!);
    if (!aKey && b.kind !== 's') return;
    const [keyField, other] = aKey ? [idA[0]!, idB[0]!] : [idB[0]!, idA[0]!];
    if (keyField === other || ctx.pairs.has(`${keyField},${elementPairSort(other)}`)) return;
    this.#buildPair(scope, keyField, elementPairSort(other));
  }

  /** The scope's pairs (CachedScope.pairs), read once. */
  async #pairsOf(scope: CachedScope): Promise<Map<string, number>> {
    if (scope.pairs === undefined) {
      const { rows } = await sql<{ pair_id: number; key_field: number; sort_field: number }>`SELECT pair_id, key_field, sort_field FROM search_pair_defs WHERE scope_id = ${scope.scopeId}`.execute(this.#db);
      scope.pairs ??= new Map(rows.map((r) => [`${r.key_field},${r.sort_field}`, Number(r.pair_id)]));
      if (rows.length >= MAX_SORT_PAIRS) scope.pairsFull = true;
    }
    return scope.pairs;
  }

  /**
   * Build a sort pair of the scope in the background: in one transaction, lock the scope's row
   * (writes to the scope lock it first, so none is half done; one starting later waits, then
   * reads the new pair and keeps its rows), add the pair unless it exists or the scope has
   * MAX_SORT_PAIRS, and fill its rows from search_values. Searches take it once it is committed.
   * A build that fails (the database closed, a conflict) leaves the scope as it was, and this
   * store stops building pairs for it until it reloads the scope.
   */
  #buildPair(scope: CachedScope, keyField: number, sortField: number): void {
    const key = `${scope.scopeId},${keyField},${sortField}`;
    if (this.#building.has(key)) return;
    const postgres = this.#dialect.name === 'postgres';
    const built = this.#db
      .transaction()
      .execute(async (trx) => {
        const lock = postgres
          ? sql`SELECT scope_id FROM search_scopes WHERE scope_id = ${scope.scopeId} FOR UPDATE`
          : sql`UPDATE search_scopes SET record_count = record_count WHERE scope_id = ${scope.scopeId} RETURNING scope_id`;
        if ((await lock.execute(trx)).rows.length === 0) return undefined;
        const { rows } = await sql<{ pair_id: number; key_field: number; sort_field: number }>`SELECT pair_id, key_field, sort_field FROM search_pair_defs WHERE scope_id = ${scope.scopeId}`.execute(trx);
        const found = rows.find((r) => Number(r.key_field) === keyField && Number(r.sort_field) === sortField);
        if (found !== undefined) return { id: Number(found.pair_id), count: rows.length };
        if (rows.length >= MAX_SORT_PAIRS) return { id: undefined, count: rows.length };
        const created = await sql<{ pair_id: number }>`INSERT INTO search_pair_defs (scope_id, key_field, sort_field) VALUES (${scope.scopeId}, ${keyField}, ${sortField}) RETURNING pair_id`.execute(trx);
        const id = Number(created.rows[0]!.pair_id);
        await this.#dialect.fillPair(trx, id, keyField, sortField);
        return { id, count: rows.length + 1 };
      })
      .then(
        (r) => {
          if (r === undefined) return;
          if (r.id !== undefined) {
            (scope.pairs ??= new Map()).set(`${keyField},${sortField}`, r.id);
            // An `any`'s remembered statements probe; compiled again, they read the element pair.
            if (sortField < 0) scope.shapes.clear();
          }
          if (r.count >= MAX_SORT_PAIRS) scope.pairsFull = true;
        },
        () => {
          scope.pairsFull = true;
        },
      )
      .finally(() => this.#building.delete(key));
    this.#building.set(key, built);
  }

  /**
   * PostgreSQL: #plan's counts, run concurrently (each on its own connection), deciding as soon as
   * the counts known so far settle the choice: a count of 0 means no match ('empty'); a count
   * below the cap that is at most want / (the product of the known selectivities) drives, since
   * the counts still running can only make the selectivity smaller and so keep that true. The
   * driver may then not be the smallest set (only a plan choice; results are the same). Counts
   * still running are left to finish on their connections, their results unused. With every
   * count known, the choice is #plan's own. Returns the driver, or undefined to walk.
   */
  async #concurrentCounts(listable: Compiled[], scope: CachedScope, want: number, sink?: StateSink): Promise<'empty' | Compiled | undefined> {
    const total = scope.recordCount;
    const cap = countCap(listable.length, total, want);
    const counts: (number | undefined)[] = listable.map(() => undefined);
    const running = new Map(
      listable.map((c, i) => {
        const p = this.#count(scope, c, cap, sink).then((n) => {
          counts[i] = n;
          return i;
        });
        p.catch(() => undefined); // a count left running must not become an unhandled rejection
        return [i, p] as const;
      }),
    );
    for (;;) {
      running.delete(await Promise.race(running.values()));
      const known = counts.flatMap((n, i) => (n === undefined ? [] : [[n, i] as const]));
      if (known.some(([n]) => n === 0)) return 'empty';
      const selectivity = known.reduce((p, [n]) => p * Math.min(1, n / Math.max(1, total)), 1);
      const [least, best] = known.reduce((a, b) => (b[0] < a[0] ? b : a));
      if (least < cap && least <= want / selectivity) return listable[best];
      if (running.size === 0) return undefined;
    }
  }

  /**
   * A bounded count of an `any` leaf's values, which only orders the leaves (it never answers a
   * search), so a count of 0 is remembered too (CachedScope.leafCounts).
   */
  #leafCount(scope: CachedScope, key: string, set: RawBuilder<unknown>, cap: number, sink: StateSink | undefined): Promise<number> {
    const known = scope.leafCounts?.get(key);
    if (known !== undefined) return Promise.resolve(known);
    return this.#reused(boundedCount(set, cap, this.#dialect, false, sink?.columns), false).then(({ rows }) => {
      noteSink(sink, rows);
      const n = Number(rows[0]?.n ?? 0);
      this.#noteLeafCount(scope, key, n);
      return n;
    });
  }

  #noteLeafCount(scope: CachedScope, key: string, n: number): void {
    scope.leafCounts ??= new Map();
    if (scope.leafCounts.size >= COUNT_CACHE_LIMIT) scope.leafCounts.clear();
    scope.leafCounts.set(key, n);
  }

  /** A condition's bounded count (see countCap), from CachedScope.counts when known there. */
  #count(scope: CachedScope, c: Compiled, cap: number, sink: StateSink | undefined): Promise<number> {
    const set = c.set!.compile(this.#db);
    const key = `${cap}\u0000${set.sql}\u0000${JSON.stringify(set.parameters)}`;
    const known = scope.counts?.get(key);
    if (known !== undefined) return Promise.resolve(known);
    return this.#reused(boundedCount(c.set!, cap, this.#dialect, c.planByValue, sink?.columns), c.planByValue === true).then(({ rows }) => {
      noteSink(sink, rows);
      const n = Number(rows[0]?.n ?? 0);
      if (n > 0) {
        scope.counts ??= new Map();
        if (scope.counts.size >= COUNT_CACHE_LIMIT) scope.counts.clear();
        scope.counts.set(key, n);
      }
      return n;
    });
  }

  async #scopeId(db: Executor, connectorId: string, entity: string): Promise<number | undefined> {
    const { rows } = await sql<{ scope_id: number }>`SELECT scope_id FROM search_scopes WHERE connector_id = ${connectorId} AND entity = ${entity}`.execute(db);
    return rows[0]?.scope_id;
  }

  /** The scope's id, created if needed, with synced_at set. A write first, so SQLite takes the write lock at once. */
  async #ensureScope(db: Executor, connectorId: string, entity: string, now: string): Promise<number> {
    const touched = await sql<{ scope_id: number }>`UPDATE search_scopes SET synced_at = ${now} WHERE connector_id = ${connectorId} AND entity = ${entity} RETURNING scope_id`.execute(db);
    if (touched.rows[0] !== undefined) return touched.rows[0].scope_id;
    await sql`INSERT INTO search_scopes (connector_id, entity, synced_at) VALUES (${connectorId}, ${entity}, ${now}) ON CONFLICT (connector_id, entity) DO UPDATE SET synced_at = excluded.synced_at`.execute(db);
    const id = await this.#scopeId(db, connectorId, entity);
    if (id === undefined) throw new Error('search scope vanished during its creation');
    return id;
  }

  async #fieldIds(db: Executor, scopeId: number, keys: Set<string>): Promise<Map<string, number>> {
    let cache = this.#fieldCache.get(scopeId);
    const missing = (c: Map<string, number> | undefined): string[] => [...keys].filter((k) => c?.get(k) === undefined);
    if (missing(cache).length > 0) {
      const absent = missing(cache);
      await this.#dialect.insertFields(db, scopeId, absent.map((k) => [k.slice(2), k[0]!]));
      const { rows } = await sql<FieldRow>`SELECT field_id, path, kind FROM search_fields WHERE scope_id = ${scopeId}`.execute(db);
      cache = new Map(rows.map((r) => [`${r.kind}:${r.path}`, r.field_id]));
      this.#fieldCache.set(scopeId, cache);
    }
    return cache!;
  }

  async #addVocabulary(db: Executor, scopeId: number, words: Set<string>): Promise<void> {
    let known = this.#vocabCache.get(scopeId);
    if (known === undefined || known.size > VOCAB_CACHE_LIMIT) {
      known = new Set();
      this.#vocabCache.set(scopeId, known);
    }
    const fresh = [...words].filter((w) => !known.has(w));
    if (fresh.length === 0) return;
    const added = await this.#dialect.insertVocabulary(db, scopeId, fresh);
    const pairs: [string, string][] = [];
    for (const w of added) for (const v of deletionVariants(w, vocabularyDepth(w))) pairs.push([v, w]);
    await this.#dialect.insertVariants(db, scopeId, pairs);
    for (const w of fresh) known.add(w);
  }

  /** For each fuzzy query word that allows typos: itself and the vocabulary words within its typo distance. */
  async #fuzzyCandidates(scopeId: number, filter: Filter | undefined): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    const queryWords = [...fuzzyWords(filter, new Set())];
    if (queryWords.length === 0) return out;
    const variants = new Set<string>();
    for (const w of queryWords) for (const v of deletionVariants(w, allowedTypos(w))) variants.add(v);
    const { rows } = await sql<{ word: string }>`
      SELECT DISTINCT word FROM search_variants WHERE scope_id = ${scopeId} AND ${this.#dialect.inList(sql.ref('variant'), [...variants], 'text')}`.execute(this.#db);
    for (const w of queryWords) {
      const d = allowedTypos(w);
      out.set(w, [w, ...rows.map((r) => r.word).filter((x) => x !== w && typoDistance(w, x, d) <= d)]);
    }
    return out;
  }

  /** Delete the records a rid subquery selects, with their index entries, leaving tombstones in the change log; returns how many. */
  async #deleteWhere(db: Executor, scopeId: number, ridQuery: RawBuilder<unknown>): Promise<number> {
    const { rows } = await sql<{ rid: number | string }>`${ridQuery}`.execute(db);
    const rids = rows.map((r) => Number(r.rid));
    const now = new Date(this.#now()).toISOString();
    const pruneBefore = new Date(this.#now() - this.#tombstoneMs).toISOString();
    if (rids.length === 0) await noteDeletes(db, this.#dialect, scopeId, [], now, pruneBefore);
    for (let i = 0; i < rids.length; i += DELETE_CHUNK) {
      const chunk = rids.slice(i, i + DELETE_CHUNK);
      const { rows: gone } = await sql<{ record_id: string; record: unknown }>`SELECT record_id, record FROM search_records WHERE ${this.#dialect.inList(sql.ref('rid'), chunk, 'bigint')}`.execute(db);
      await noteDeletes(db, this.#dialect, scopeId, gone.map((g) => [g.record_id, typeof g.record === 'string' ? g.record : JSON.stringify(g.record)]), now, pruneBefore);
      await this.#dialect.deleteIndex(db, chunk);
      await sql`DELETE FROM search_records WHERE ${this.#dialect.inList(sql.ref('rid'), chunk, 'bigint')}`.execute(db);
    }
    if (rids.length > 0) await sql`UPDATE search_scopes SET record_count = record_count - ${rids.length} WHERE scope_id = ${scopeId}`.execute(db);
    return rids.length;
  }
}
