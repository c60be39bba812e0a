/**
 * The dialect seam of the search store: the few places where SQLite and PostgreSQL need
 * different SQL (typed value columns, list parameters, the word and like indexes, bulk writes
 * from one JSON parameter, and how rows come back). Everything else is shared SQL.
 */
import type { Kysely, RawBuilder, SqlBool } from 'kysely';
import type { DialectName } from '../store/database.ts';
import type { ValueKind } from './query.ts';
import type { LikePart } from './text.ts';

/**
 * Anything that runs queries: the Kysely instance or a transaction. The search store only runs
 * raw SQL over its own tables, so it accepts a Kysely instance of any schema type.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Executor = Kysely<any>;

/**
 * One value row to index: rid, field id, value (booleans as 0/1; a string exactly when the
 * field id's kind is s), ordinal, lower-cased text if it differs, element (ValueEntry.e).
 */
export type ValueRow = [rid: number, fieldId: number, v: string | number, n: number, low: string | null, e: number | null];

/**
 * A record's text-index row: rid, word tokens, and trigram tokens `<field id>_<trigram>` of its
 * string values (empty when the dialect has no trigram token index, see `gramTokens`).
 */
export type TextRow = [rid: number, tokens: string[], grams: string[]];

/** One row of a sort pair (see schema.ts, 0004): pair id, the key field's string value, the sort field's value, rid. */
export type PairRow = [pairId: number, kv: string, v: string | number, rid: number];

/** What a parameter of a remembered shape's SQL is (see SearchDialect.reusableSql). */
export type ParameterKind = 'constant' | 'value' | 'cursor';

export interface SearchDialect {
  readonly name: DialectName;
  /** The search_values column holding values of `kind`, under a table alias. */
  valueColumn(alias: string, kind: ValueKind): RawBuilder<unknown>;
  /** `expr IN (values)` with the whole list as one bound parameter. */
  inList(expr: RawBuilder<unknown>, values: readonly (string | number)[], type: 'text' | 'int' | 'bigint' | 'float'): RawBuilder<SqlBool>;
  /**
   * Records (column `rid`) whose word index has, for every group, at least one of the group's
   * tokens; with `rid` given, the same as a check on that one record.
   */
  wordsQuery(groups: string[][], rid?: RawBuilder<unknown>): RawBuilder<unknown>;
  /** `pattern` (parsed, lower-cased) against the string value of search_values alias x; `perRecord`: as a check of one record's values (read by rid, never through a text index). */
  likeCondition(parts: LikePart[], perRecord?: boolean): RawBuilder<SqlBool>;
  /** True when insertText indexes trigram tokens (SQLite); PostgreSQL indexes the values themselves (pg_trgm). */
  readonly gramTokens: boolean;
  /**
   * Candidate records (column `rid`, each once, in rid order) for a like pattern on fields
   * `fieldIds` from the per-field trigram token index, each confirmed by `confirm` (a condition
   * correlated on the candidate's rid, given as the rid expression); undefined when the pattern
   * has no 3-character literal to look up or the dialect has no such index (then the field's
   * values are searched directly, which PostgreSQL answers from its pg_trgm index).
   */
  likeCandidates(parts: LikePart[], fieldIds: number[], confirm: (rid: RawBuilder<unknown>) => RawBuilder<SqlBool>): RawBuilder<unknown> | undefined;
  /**
   * SQLite: the one bound parameter (an FTS5 query) through which wordsQuery and likeCandidates
   * look up their token groups, so that a remembered query shape can compute it for new values.
   * Undefined where token lookups are not one parameter (PostgreSQL).
   */
  tokenMatch?(groups: string[][]): string;
  /** EXISTS over a correlated subquery, evaluated per outer row (never turned into a join). */
  exists(subquery: RawBuilder<unknown>): RawBuilder<SqlBool>;
  /** A subquery used as the driving relation of a page query, kept as the outer loop. */
  driver(subquery: RawBuilder<unknown>): RawBuilder<unknown>;
  /** The join keyword that keeps the left side as the outer loop. */
  readonly orderedJoin: RawBuilder<unknown>;
  /**
   * The SQL text of a statement run many times with other values (a remembered query shape),
   * written so that a new value never makes the database plan it again. `parameters` are its
   * bound parameters as compiled with the query that taught the shape, `kinds` says what each is:
   * a constant of the shape (ids, names), a value of the query, or the cursor's rid.
   */
  reusableSql(text: string, parameters: readonly unknown[], kinds: readonly ParameterKind[]): string;
  /**
   * Put at the start of a statement whose text repeats with other values and whose plan does not
   * depend on them (PostgreSQL: kept as a named prepared statement per connection); empty on SQLite,
   * whose statements the database layer caches anyway.
   */
  readonly repeated: RawBuilder<unknown>;
  /** Two element positions (search_values.e, null for values in no element) are the same element. */
  sameElement(a: RawBuilder<unknown>, b: RawBuilder<unknown>): RawBuilder<SqlBool>;
  /** The stored upstream record as a JavaScript object. */
  parseRecord(value: unknown): Record<string, unknown>;
  /** A stored timestamp as an ISO 8601 string. */
  parseTime(value: unknown): string | null;

  /** Insert or update records given as [record_id, record JSON, doc_hash]; returns their rids. */
  upsertRecords(
    db: Executor,
    scopeId: number,
    rows: [id: string, json: string, hash: string][],
    syncedAt: string,
    syncRun: string | null,
  ): Promise<{ rid: number; record_id: string }[]>;
  insertValues(db: Executor, rows: ValueRow[]): Promise<void>;
  insertText(db: Executor, rows: TextRow[]): Promise<void>;
  /** Remove the index entries (values, words, like text, sort pairs) of these records: a rid list or a subquery yielding rids. */
  deleteIndex(db: Executor, rids: number[] | RawBuilder<unknown>): Promise<void>;
  /**
   * Whether searches learn and walk sort pairs (schema.ts, 0004). Both dialects keep the pairs a
   * scope has up to date on writes; only a dialect with this set learns new ones.
   */
  readonly sortPairs: boolean;
  insertPairs(db: Executor, rows: PairRow[]): Promise<void>;
  /**
   * Fill the rows of a new pair from the scope's indexed values: every record with a string value
   * of `keyField` and a value of `sortField` (both scalar); for KEYLESS_PAIR, every value of
   * `sortField`; PostgreSQL, for an element pair (`sortField` negative, see elementPairSort),
   * every element holding a string value of `keyField` and a value of the other field.
   */
  fillPair(db: Executor, pairId: number, keyField: number, sortField: number): Promise<void>;
  insertFields(db: Executor, scopeId: number, keys: [path: string, kind: string][]): Promise<void>;
  /** Add words to a scope's vocabulary; returns those that were not there yet. */
  insertVocabulary(db: Executor, scopeId: number, words: string[]): Promise<string[]>;
  insertVariants(db: Executor, scopeId: number, pairs: [variant: string, word: string][]): Promise<void>;
}

/** The key field of a sort field's key-less pair (no field has id 0): its rows all have the key ''. */
export const KEYLESS_PAIR = 0;

/**
 * An element pair (PostgreSQL) is stored as a sort pair whose sort field is the negated id of
 * its second field (field ids are positive): a row for each element of an array holding a string
 * value of the key field and a value of the second field, the two values in one element (equal
 * `e`, or both outside any array), so that `any(array, key = a and other = b)` is one range of
 * the pair's index in rid order. PostgreSQL only: learned from such searches (RecordStore) and
 * built as sort pairs are, sharing their slots; kept current by a trigger on search_values
 * (schema.ts, 0007), whoever writes; its rows carry no signature and no record copy.
 */
export function elementPairSort(otherField: number): number {
  return -otherField;
}
