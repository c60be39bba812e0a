/**
 * What the parts of the record store share (record-store.ts composes them): the store's state
 * (StoreContext, one per RecordStore), a scope as searches cache it, the shapes whose SQL they
 * remember, and the scope's state as a search statement carries it.
 */
import { sql, type RawBuilder } from 'kysely';
import type { PostgresStatements, SqliteStatements } from '../store/database.ts';
import { queryFingerprint } from './cursor.ts';
import type { CursorPosition } from './cursor.ts';
import type { Executor, SearchDialect } from './dialect.ts';
import type { FieldIndex } from './predicates.ts';
import type { Filter, SearchQuery } from './query.ts';

/** A RecordStore's connections, settings and caches, passed to the functions that make up its methods. */
export interface StoreContext {
  readonly db: Executor;
  /** SQLite's statements, for remembered shapes run synchronously (see Database.sqlite); undefined over a transaction or PostgreSQL. */
  readonly sqlite: SqliteStatements | undefined;
  /** PostgreSQL's pool, for remembered shapes run without Kysely (see Database.postgres); undefined over a transaction or SQLite. */
  readonly pg: PostgresStatements | undefined;
  readonly dialect: SearchDialect;
  readonly secret: Buffer;
  /** scope id → "kind:path" → field id. Ids are never reused, so entries stay true while the scope exists. */
  readonly fieldCache: Map<number, Map<string, number>>;
  readonly vocabCache: Map<number, Set<string>>;
  readonly scopeCache: Map<string, CachedScope>;
  readonly maxShapes: number;
  readonly tombstoneMs: number;
  readonly now: () => number;
  /** Statement text → its PostgreSQL prepared form (see reused), by parameter types and text. */
  readonly reusableTexts: Map<string, string>;
  /** Shapes remembered since the last store-wide clear: an over-count (shapes of evicted scopes are not subtracted), so the bound holds. */
  shapesRemembered: number;
  /** Sort pairs being built in the background, by "scope,key field,sort field" (see buildPair). */
  readonly building: Map<string, Promise<void>>;
}

/** Planner: matches counted per condition at most (each count reads at most this many index entries). */
const ESTIMATE_CAP = 20_000;
/** Planner counts remembered per scope (CachedScope.counts; keys of a few hundred bytes: about 20 kB at most per scope searched). */
export const COUNT_CACHE_LIMIT = 64;

/**
 * The SQL of one query shape (see queryShape) in a scope: the page and the scope's state in one
 * statement, with where each parameter comes from — slot i of the query's values (the cursor's
 * rid last), or the constant at the same position.
 */
export interface ShapePlan {
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
export type ShapeKind = 'ordered' | 'walk' | 'capped' | 'pair';

/** A query's shape key and its values in slot order (the cursor's sort value and rid last). */
export interface Shape {
  key: string;
  slots: (string | number)[];
  kind: ShapeKind;
  /** `capped`: the cap for the scope's record count when the shape was taken (part of the key). */
  cap: number;
  /** `pair`: the sort pair walked (part of the key). */
  pairId?: number | undefined;
}

/** A shape with the filter and cursor carrying markers in place of the values, and marker → slot. */
export interface MarkedShape extends Shape {
  marked: Filter;
  markedPosition: CursorPosition | undefined;
  markers: Map<string | number, number>;
}

/** A scope as searches use it: its id, field dictionary (valid while no field is added) and record count (an estimate). */
export interface CachedScope {
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
  /** Bounded counts of `any` leaves (leafCount), 0 included; forgotten with `counts`. */
  leafCounts?: Map<string, number>;
  /**
   * Sorted queries a search the full way answered by walking a sort pair with no driving set
   * (planPage's choice from its counts), by the shape and values of their conditions other than
   * on the sort field (pairChoiceKey) → the pair walked: a `pair` shape (ShapeKind) is taken
   * only for these. Forgotten with `counts`, from which planPage chose.
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

/** The scope's state as a search reads it. */
export interface ScopeStateRow {
  s_synced_at: unknown;
  s_record_count: number | string;
  s_max_field: number | string | null;
}

/** A row of a remembered shape's page (rid null: the page is empty, in the one-statement form). */
export interface RememberedRow {
  rid: number | string | null;
  record: unknown;
  /** A walk's sort value. */
  k0?: string | number | null;
  /** A capped page's count of set entries read. */
  n?: number | string;
}

export interface RememberedPage {
  data: Record<string, unknown>[];
  cursor: string | null;
  synced: string | null;
}

/** A query's identity for its cursors (connector, entity, filter and sort), hashed when first needed. */
export class QueryIdentity {
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

/** The scope's state as a search reads it, by id, provided it still belongs to (connector, entity). */
export function scopeState(scopeId: number, connectorId: string, entity: string, repeated: RawBuilder<unknown> = sql``): RawBuilder<ScopeStateRow> {
  return sql<ScopeStateRow>`${repeated}
        SELECT s.synced_at AS s_synced_at, s.record_count AS s_record_count, (${maxFieldOf(sql.ref('s.scope_id'))}) AS s_max_field
        FROM search_scopes s WHERE s.scope_id = ${scopeId} AND s.connector_id = ${connectorId} AND s.entity = ${entity}`;
}

/**
 * Where a search's statements leave the scope's state (PostgreSQL): `columns`, added to each
 * statement, read it by uncorrelated subqueries (computed once per statement); `row` is the
 * first state a statement returned, null when the scope no longer belongs to (connector, entity).
 */
export interface StateSink {
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
export function stateColumns(scopeId: number, connectorId: string, entity: string): RawBuilder<unknown> {
  return sql`(SELECT ${packedState(sql.ref('s.scope_id'))} FROM search_scopes s WHERE s.scope_id = ${scopeId} AND s.connector_id = ${connectorId} AND s.entity = ${entity}) AS s_state`;
}

/** The state of the search_scopes row `s` (whose id is `scopeId`) as `ms|count|field` (see stateColumns). */
export function packedState(scopeId: RawBuilder<unknown>): RawBuilder<unknown> {
  const text = (e: RawBuilder<unknown>): RawBuilder<unknown> => sql`coalesce((${e})::text, '')`;
  return sql`${text(sql`floor(extract(epoch FROM s.synced_at) * 1000)::bigint`)} || '|' || s.record_count::text || '|' || ${text(maxFieldOf(scopeId))}`;
}

/** A scope's state from `ms|count|field` text (see stateColumns); undefined when absent (null). */
export function unpackState(state: string | null | undefined): ScopeStateRow | undefined {
  if (typeof state !== 'string') return undefined;
  const [ms, count, field] = state.split('|');
  return {
    s_synced_at: ms === '' || ms === undefined ? null : Number(ms),
    s_record_count: Number(count),
    s_max_field: field === '' || field === undefined ? null : Number(field),
  };
}

/** Keep the scope's state from the first row a search statement returned (see StateSink). */
export function noteSink(sink: StateSink | undefined, rows: readonly unknown[]): void {
  if (sink === undefined || sink.row !== undefined || rows.length === 0) return;
  sink.row = unpackState((rows[0] as { s_state?: string | null }).s_state) ?? null;
}

/**
 * How far planPage counts each of k listable conditions (ESTIMATE_CAP at most). The smallest, of
 * n_b records, drives when n_b × Π (n_i / total) <= want, i.e. when a walk in result order would
 * examine more records than the set holds. Once every count reaches C = (want × total^k)^(1/(k+1))
 * (and want), that product is at least C^(k+1) / total^k >= want: the walk is chosen, as it would
 * be with exact counts. For one condition this decides exactly as exact counts do; for several,
 * a count stopped at C can only make a set below C drive where exact counts would walk, which
 * reads fewer than C records. Rounded up to a power of two, so that the count statements' text
 * changes rarely. At 20,000 contacts and a page of 100: 2,048 for one condition (the nested
 * benchmark query's 6,000 leads were counted whole before), 4,096 for two.
 */
export function countCap(k: number, total: number, want: number): number {
  const needed = Math.max(want + 1, Math.ceil((want * Math.max(1, total) ** k) ** (1 / (k + 1))) + 1);
  return Math.min(ESTIMATE_CAP, 2 ** Math.ceil(Math.log2(needed)));
}

/** The cap of a one-pass capped page of `want` rows (see searchIn): sqrt(want × records), at least want + 1, at most ESTIMATE_CAP. */
export function cappedLimit(want: number, records: number): number {
  return Math.min(ESTIMATE_CAP, Math.max(want + 1, Math.ceil(Math.sqrt(want * Math.max(1, records)))));
}

/** The highest field id of the scope `scopeId` (an expression), as a scalar subquery body. */
export function maxFieldOf(scopeId: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`SELECT max(f.field_id) FROM search_fields f WHERE f.scope_id = ${scopeId}`;
}

/** Run `fn` in a transaction, or in the caller's when this store was built over one (the service deletes a connector and its records atomically). */
export function inTransaction<T>(store: StoreContext, fn: (trx: Executor) => Promise<T>): Promise<T> {
  return store.db.isTransaction ? fn(store.db) : store.db.transaction().execute(fn);
}
