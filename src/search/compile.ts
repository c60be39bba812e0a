/**
 * The validated query tree → parameterized SQL. Field references become integer field ids looked
 * up in the scope's field dictionary (never SQL text); values are always bound parameters; the
 * only SQL text built here comes from closed sets (operators, directions, fixed table aliases).
 *
 * Each condition compiles to two forms: a per-record check correlated on `r.rid` (an index
 * probe) and, where the condition can enumerate its records, a set of rids (an index range).
 * The store picks the page plan — drive from the smallest set, or walk an index in result order
 * checking each record — from bounded counts, instead of leaving it to each database's planner,
 * which cannot estimate these subqueries and would otherwise pick different (and slow) plans.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { CursorPosition } from './cursor.ts';
import { elementPairSort, type SearchDialect } from './dialect.ts';
import type { FieldRef, Filter, ScalarValue, SortKey, ValueKind } from './query.ts';
import { gramToken, likeToGlob, likeToSqlLike, likeTrigrams, type LikePart } from './text.ts';

/** A predicate, or a constant when the condition can be decided without the database. */
export type Pred = boolean | RawBuilder<SqlBool>;

export interface FieldRow {
  field_id: number;
  path: string;
  kind: string;
}

/** A scope's field dictionary: (path, kind) → field id. */
export class FieldIndex {
  readonly #rows: FieldRow[];
  constructor(rows: FieldRow[]) {
    this.#rows = rows;
  }

  /**
   * Field ids a reference covers: the field itself for scalar fields; for object/array fields
   * and paths inside them, every leaf path at or below it. `kind` undefined: any kind.
   */
  ids(ref: FieldRef, kind?: ValueKind, exact = false): number[] {
    const p = ref.name;
    return this.#rows
      .filter((r) => (kind === undefined ? r.kind !== 'a' : r.kind === kind) && (r.path === p || (ref.multi && !exact && r.path.length > p.length && r.path.startsWith(p) && r.path[p.length] === '.')))
      .map((r) => r.field_id);
  }

  /** Field ids of the values strictly below `path` (any kind): the values of the elements of the array at `path`. */
  below(path: string): number[] {
    return this.#rows.filter((r) => r.kind !== 'a' && r.path.length > path.length && r.path.startsWith(path) && r.path[path.length] === '.').map((r) => r.field_id);
  }

  /**
   * True when element positions (search_values.e) number exactly the elements at `path` for
   * every value below it in the scope: no first array of any record lies above `path` (then e
   * numbers outer elements) or below it (then e numbers inner ones, while `path` is a plain
   * object). Fields of kind `a` name the first arrays seen (IndexEntries.arrays).
   */
  elementsExact(path: string): boolean {
    for (const r of this.#rows) {
      if (r.kind !== 'a' || r.path === path) continue;
      if ((path.startsWith(r.path) && path[r.path.length] === '.') || (r.path.startsWith(path) && r.path[path.length] === '.')) return false;
    }
    return true;
  }
}

/** A single-token form of a field's word that every tokenizer keeps whole: [0-9a-z_] only. */
export function wordToken(fieldId: number, word: string): string {
  return /^[a-z0-9]+$/.test(word) ? `${fieldId}_${word}` : `${fieldId}__${Buffer.from(word, 'utf8').toString('hex')}`;
}

export interface CompileContext {
  dialect: SearchDialect;
  fields: FieldIndex;
  /** Vocabulary words within the allowed typo distance of each fuzzy query word (itself included). */
  fuzzy: Map<string, string[]>;
  /**
   * `any` compiles to SQL on element positions (see elementCompilable); the caller has checked
   * that its conditions are compilable and that the scope's positions are exact for its paths.
   * Without it an `any` must have been relaxed away (relax.ts).
   */
  exactAny?: boolean;
  /**
   * The rows `r` the checks are correlated on are sort pair rows (schema.ts, 0004), whose
   * `sig` column holds an entry for each (field id, value) of the record: an equality's check is
   * answered there (short values) or first looks there and probes only records that may match.
   */
  signature?: true;
  /**
   * PostgreSQL: the scope's pairs ("key field,sort field" → pair id), among them its element
   * pairs (elementPairSort in dialect.ts), through which an `any` of two equalities reads its
   * range instead of probing (see ElementCompiler.pairRange).
   */
  pairs?: ReadonlyMap<string, number>;
}

const RID = sql.ref('r.rid');
const G0_RID = sql.ref('g0.rid');
const G0_E = sql.ref('g0.e');
const X_E = sql.ref('x.e');
const COMPARATORS = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

function and(preds: Pred[]): Pred {
  if (preds.includes(false)) return false;
  const rest = preds.filter((p): p is RawBuilder<SqlBool> => p !== true);
  if (rest.length === 0) return true;
  return rest.length === 1 ? rest[0]! : sql<SqlBool>`(${sql.join(rest, sql` AND `)})`;
}

function or(preds: Pred[]): Pred {
  if (preds.includes(true)) return true;
  const rest = preds.filter((p): p is RawBuilder<SqlBool> => p !== false);
  if (rest.length === 0) return false;
  return rest.length === 1 ? rest[0]! : sql<SqlBool>`(${sql.join(rest, sql` OR `)})`;
}

function not(p: Pred): Pred {
  return typeof p === 'boolean' ? !p : sql<SqlBool>`NOT ${p}`;
}

export function sqlValue(kind: ValueKind, value: string | number | boolean): string | number {
  return typeof value === 'boolean' ? (value ? 1 : 0) : value;
}

/** A compiled condition: its per-record check, and the set of records it matches when it can list them. */
export interface Compiled {
  check: Pred;
  /** A subquery with a `rid` column listing exactly the matching records (possibly repeated). */
  set?: RawBuilder<unknown>;
  /**
   * The set as disjoint arms, each listing a record at most once in rid order straight from an
   * index (one value of a scalar field: the (field_id, value, rid) index; SQLite FTS5 rowids),
   * so the first page of an unsorted query is read from them directly, each arm stopping at the
   * limit: no count, one pass.
   */
  ordered?: RawBuilder<unknown>[];
  /**
   * The set's best plan depends on its values (a like pattern: its trigrams decide whether the
   * trigram index helps), so its statements are planned with the values every time rather than
   * kept prepared (see SearchDialect.repeated).
   */
  planByValue?: true;
}

/** A comparison or `in` on a scalar field: at most one value per record, so conditions on it can share one index lookup. */
export type ScalarLeaf = Extract<Filter, { op: 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' }>;

function isScalarLeaf(f: Filter): f is ScalarLeaf {
  return (f.op === 'eq' || f.op === 'neq' || f.op === 'gt' || f.op === 'gte' || f.op === 'lt' || f.op === 'lte' || f.op === 'in') && !f.field.multi;
}

/** A scalar leaf as a condition on the value column `col` of its field's value row. */
export function leafCondition(dialect: SearchDialect, leaf: ScalarLeaf, col: RawBuilder<unknown>): RawBuilder<SqlBool> {
  if (leaf.op === 'in') {
    const kind = leaf.values[0]!.kind;
    const values = leaf.values.map((v) => sqlValue(v.kind, v.value));
    return values.length === 1 ? sql<SqlBool>`${col} = ${values[0]}` : dialect.inList(col, values, kind === 's' ? 'text' : 'float');
  }
  return sql<SqlBool>`${col} ${sql.raw(COMPARATORS[leaf.op])} ${sqlValue(leaf.kind, leaf.value)}`;
}

/**
 * Split off the scalar conditions on `field` at the top level of a filter (the filter itself or
 * the items of a top-level and). A sorted query applies them to the sort key's own index scan.
 */
export function splitFieldConditions(filter: Filter | undefined, field: string): { leaves: ScalarLeaf[]; rest: Filter | undefined } {
  if (filter === undefined) return { leaves: [], rest: undefined };
  const items = filter.op === 'and' ? filter.items : [filter];
  const leaves = items.filter((i): i is ScalarLeaf => isScalarLeaf(i) && i.field.name === field);
  if (leaves.length === 0) return { leaves, rest: filter };
  const others = items.filter((i) => !leaves.includes(i as ScalarLeaf));
  return { leaves, rest: others.length === 0 ? undefined : others.length === 1 ? others[0] : { op: 'and', items: others } };
}

/**
 * The equalities on scalar string fields at the top level of a filter (the filter itself or the
 * items of a top-level and), each with the filter without it: a sorted walk may read only the
 * records with that value from a sort pair (schema.ts, 0004), and check the rest.
 */
export function pairKeyCandidates(filter: Filter | undefined): { field: FieldRef; value: string; rest: Filter | undefined }[] {
  if (filter === undefined) return [];
  const items = filter.op === 'and' ? filter.items : [filter];
  const out: { field: FieldRef; value: string; rest: Filter | undefined }[] = [];
  for (const item of items) {
    if (item.op !== 'eq' || item.field.multi || item.kind !== 's' || typeof item.value !== 'string') continue;
    const others = items.filter((i) => i !== item);
    out.push({ field: item.field, value: item.value, rest: others.length === 0 ? undefined : others.length === 1 ? others[0] : { op: 'and', items: others } });
  }
  return out;
}

/**
 * The signature of the record `rid` (an expression) from its indexed values, null above 64 values:
 * its values' entries (signatureEntry), each followed by a \x01 and the first preceded by one
 * (`\x014:lead\x015=105\x01…`), so that a value is there when its entry, \x01 on both sides, is
 * found in it. Computed in SQL from search_values the same way when a pair is filled, when a
 * record is written and when a search looks for a value (signatureCheck).
 */
export function recordSignature(rid: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`(SELECT CASE WHEN count(*) <= ${sql.lit(SIGNATURE_MAX)} THEN chr(1) || string_agg(${signatureEntry(sql`x.field_id`, sql`x.txt`, sql`x.num`)}, chr(1)) || chr(1) END FROM search_values x WHERE x.rid = ${rid})`;
}

/**
 * The bloom bits of a signature (an expression; schema.ts, 0006): the OR of entryBits over its
 * entries, null for a null signature. A walked row whose bits lack an entry's two bits cannot
 * hold that entry, so signatureCheck looks for the entry in the text only when they are all set.
 * The same expression of a needle (`\x01entry\x01`) is that entry's bits.
 */
export function signatureBits(sig: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`(SELECT bit_or((1::bigint << (b.h & 63)::integer) | (1::bigint << ((b.h >> 6) & 63)::integer)) FROM (SELECT hashtextextended(e.v, 0) AS h FROM unnest(string_to_array(${sig}, chr(1))) AS e(v) WHERE e.v <> '') b)`;
}

/**
 * A value's signature entry: its field id, then the value itself where that is short — a string
 * of at most SIGNATURE_EXACT_BYTES bytes without a \x01 (`12:lead`), a number (`9=1`: an integer
 * below 10^15 in decimal, any other by its 8 bytes in hex, -0 as 0) — so that finding the entry
 * is finding the value; any other string by 32 bits of its hash (`3#5f0e21c4`, hashtextextended
 * of its bytes seeded with the field id), which a search confirms by a probe. The separator tells
 * the three apart (a field id is digits), and a field id has one kind.
 */
function signatureEntry(fieldId: RawBuilder<unknown>, txt: RawBuilder<unknown>, num: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`CASE WHEN ${txt} IS NOT NULL THEN CASE WHEN octet_length(${txt}) <= ${sql.lit(SIGNATURE_EXACT_BYTES)} AND strpos(${txt}, chr(1)) = 0 THEN ${fieldId}::text || ':' || ${txt} ELSE ${fieldId}::text || '#' || to_hex((hashtextextended(${txt}, ${fieldId}) % 2147483647)::integer) END
    ELSE ${fieldId}::text || '=' || CASE WHEN ${num} = trunc(${num}) AND abs(${num}) < 1e15 THEN (${num})::bigint::text ELSE encode(float8send(${num} + 0::float8), 'hex') END END`;
}

/** Strings of at most this many bytes are held in a signature as themselves; a longer one by a hash, and confirmed by a probe. */
export const SIGNATURE_EXACT_BYTES = 16;

/** Values a sort pair row's signature holds at most; a record with more has none and is always probed. */
const SIGNATURE_MAX = 64;

/** Whether a value's signature entry is the value itself (see signatureEntry). */
export function exactInSignature(value: ScalarValue): boolean {
  return typeof value !== 'string' || (Buffer.byteLength(value, 'utf8') <= SIGNATURE_EXACT_BYTES && !value.includes('\x01'));
}

/**
 * The check of "the record has one of `values` under one of `ids`" on a walked sort pair row `r`
 * whose `probe` asks the value index. When every value's signature entry is the value itself
 * (exactInSignature), a row with a signature is answered by it alone: no probe. Otherwise the
 * signature only rules records out (a hash entry may collide): a row probes when one of the
 * entries is there. A row without a signature (more than 64 values) always probes. Each entry,
 * and the complement of its bits (signatureBits), is computed once per statement (uncorrelated
 * subqueries). An entry is looked for in the text only on rows whose bits hold all of its bits
 * (two bigint operations, where `strpos` reads about 150 bytes): the bits never rule out an
 * entry the row holds, since they are the OR of its entries' bits; a row without bits (written
 * before 0006, or by a writer that does not know the column) reads as all bits set.
 */
function signatureCheck(ids: number[], values: { kind: ValueKind; value: ScalarValue }[], probe: RawBuilder<SqlBool>): RawBuilder<SqlBool> {
  const found = ids.flatMap((id) =>
    values.map((v) => {
      const x = sqlValue(v.kind, v.value);
      const entry = typeof x === 'string' ? signatureEntry(sql`${id}::integer`, sql`(${x}::text COLLATE "C")`, sql`NULL::float8`) : signatureEntry(sql`${id}::integer`, sql`NULL::text`, sql`${x}::float8`);
      return sql<SqlBool>`((COALESCE(r.bits, -1::bigint) | (SELECT ~${signatureBits(sql`chr(1) || ${entry} || chr(1)`)})) = -1::bigint AND strpos(r.sig, (SELECT chr(1) || ${entry} || chr(1))) > 0)`;
    }),
  );
  const has = found.length === 1 ? found[0]! : sql<SqlBool>`(${sql.join(found, sql` OR `)})`;
  if (values.every((v) => exactInSignature(v.value))) return sql<SqlBool>`(CASE WHEN r.sig IS NOT NULL THEN ${has} ELSE ${probe} END)`;
  return sql<SqlBool>`((r.sig IS NULL OR ${has}) AND ${probe})`;
}

/** At most this many values of an `in` are read as separate index-ordered arms. */
const MAX_ORDERED_ARMS = 16;

class Compiler {
  constructor(readonly ctx: CompileContext) {}

  /** A compiled condition whose set is read in rid order as it stands. */
  ordered(c: Compiled): Compiled {
    return c.set === undefined ? c : { ...c, ordered: [c.set] };
  }

  get dialect(): SearchDialect {
    return this.ctx.dialect;
  }

  fieldIds(ids: number[]): RawBuilder<SqlBool> {
    return ids.length === 1 ? sql<SqlBool>`x.field_id = ${ids[0]}` : this.dialect.inList(sql.ref('x.field_id'), ids, 'int');
  }

  /**
   * Records with a value row under one of `ids` satisfying `cond`. `equal`: cond holds exactly
   * for these values (an equality), so that a check on sort pair rows (CompileContext.signature)
   * can look for them in the row's signature (signatureCheck).
   */
  hasValue(ids: number[], cond?: RawBuilder<SqlBool>, equal?: { kind: ValueKind; value: ScalarValue }[]): Compiled {
    if (ids.length === 0) return { check: false };
    const where = cond === undefined ? this.fieldIds(ids) : sql<SqlBool>`${this.fieldIds(ids)} AND ${cond}`;
    const probe = this.dialect.exists(sql`SELECT 1 FROM search_values x WHERE x.rid = ${RID} AND ${where}`);
    return {
      check: equal !== undefined && this.ctx.signature ? signatureCheck(ids, equal, probe) : probe,
      set: sql`SELECT x.rid FROM search_values x WHERE ${where}`,
    };
  }

  /** `any` on element positions (see ElementCompiler). */
  anyOf(array: FieldRef, item: Filter): Compiled {
    return new ElementCompiler(this, array).compile(item);
  }

  compare(field: FieldRef, kind: ValueKind, op: keyof typeof COMPARATORS, value: string | number | boolean): Compiled {
    const ids = this.ctx.fields.ids(field, kind);
    return this.hasValue(ids, sql<SqlBool>`${this.dialect.valueColumn('x', kind)} ${sql.raw(COMPARATORS[op])} ${sqlValue(kind, value)}`, op === 'eq' ? [{ kind, value }] : undefined);
  }

  /**
   * The conjuncts of a filter, compiled: the items of an and (or the filter itself), with the
   * conditions on one scalar field merged into one lookup (they hold for its one value, so a
   * range becomes one index range instead of two half-open ones).
   */
  conjuncts(f: Filter): Compiled[] {
    if (f.op !== 'and') return [this.node(f)];
    const groups = new Map<string, ScalarLeaf[]>();
    const others: Filter[] = [];
    for (const item of f.items) {
      if (isScalarLeaf(item)) groups.set(item.field.name, [...(groups.get(item.field.name) ?? []), item]);
      else others.push(item);
    }
    const merged = [...groups.values()].map((leaves) => {
      if (leaves.length === 1) return this.node(leaves[0]!);
      const first = leaves[0]!;
      const kind = first.op === 'in' ? first.values[0]!.kind : first.kind;
      const col = this.dialect.valueColumn('x', kind);
      return this.hasValue(this.ctx.fields.ids(first.field, kind), sql<SqlBool>`${sql.join(leaves.map((l) => leafCondition(this.dialect, l, col)), sql` AND `)}`);
    });
    return [...merged, ...others.map((i) => this.node(i))];
  }

  node(f: Filter): Compiled {
    const { dialect, ctx } = this;
    switch (f.op) {
      case 'and': {
        const parts = this.conjuncts(f);
        return { check: and(parts.map((p) => p.check)) };
      }
      case 'or':
        return { check: or(f.items.map((i) => this.node(i).check)) };
      case 'not':
        return { check: not(this.node(f.item).check) };
      case 'present': {
        const has = this.hasValue(ctx.fields.ids(f.field));
        return f.present ? has : { check: not(has.check) };
      }
      case 'neq':
        // Scalar fields: a value that differs. Object/array fields: some value, and none equal.
        if (!f.field.multi) return this.compare(f.field, f.kind, 'neq', f.value);
        return { check: and([this.hasValue(ctx.fields.ids(f.field)).check, not(this.compare(f.field, f.kind, 'eq', f.value).check)]) };
      case 'eq':
        if (f.field.multi) return this.compare(f.field, f.kind, f.op, f.value);
        return this.ordered(this.compare(f.field, f.kind, f.op, f.value));
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        return this.compare(f.field, f.kind, f.op, f.value);
      case 'in': {
        if (!f.field.multi && f.values.length <= MAX_ORDERED_ARMS) {
          // A scalar field has one value per record: the values' index ranges are disjoint and
          // each is in rid order, so the set is their union, readable arm by arm.
          const kind = f.values[0]!.kind;
          const ids = ctx.fields.ids(f.field, kind);
          const whole = this.hasValue(ids, leafCondition(dialect, f, dialect.valueColumn('x', kind)), f.values);
          if (ids.length !== 1) return whole;
          const col = dialect.valueColumn('x', kind);
          return { ...whole, ordered: f.values.map((v) => sql`SELECT x.rid FROM search_values x WHERE x.field_id = ${ids[0]} AND ${col} = ${sqlValue(v.kind, v.value)}`) };
        }
        // Object/array fields may mix kinds in one list: one lookup per kind.
        const byKind = new Map<ValueKind, ScalarLeaf & { op: 'in' }>();
        for (const v of f.values) {
          const leaf = byKind.get(v.kind) ?? { op: 'in', field: f.field, values: [] };
          leaf.values.push(v);
          byKind.set(v.kind, leaf);
        }
        const parts = [...byKind].map(([kind, leaf]) => this.hasValue(ctx.fields.ids(f.field, kind), leafCondition(dialect, leaf, dialect.valueColumn('x', kind)), leaf.values));
        return parts.length === 1 ? parts[0]! : { check: or(parts.map((p) => p.check)) };
      }
      case 'like': {
        const ids = ctx.fields.ids(f.field, 's');
        // "%" alone matches every string value.
        if (f.parts.every((p) => p.kind === 'any')) return this.hasValue(ids);
        if (ids.length === 0) return { check: false };
        const cond = dialect.likeCondition(f.parts);
        const perRecord = dialect.likeCondition(f.parts, true);
        const confirm = (rid: RawBuilder<unknown>): RawBuilder<SqlBool> => dialect.exists(sql`SELECT 1 FROM search_values x WHERE x.rid = ${rid} AND ${this.fieldIds(ids)} AND ${perRecord}`);
        // A record's own values are checked directly; listing matches goes through the field's
        // trigram tokens (SQLite) when the pattern has a 3-character literal, else through the
        // field's values (on PostgreSQL, their pg_trgm index).
        const candidates = dialect.likeCandidates(f.parts, ids, confirm);
        // A pattern with a 3-character literal is looked up by its trigrams whatever they are; one
        // without has no index to use, and is planned with its values every time.
        const compiled: Compiled = { check: confirm(RID), set: candidates ?? this.hasValue(ids, cond).set!, ...(likeTrigrams(f.parts).length === 0 ? { planByValue: true as const } : {}) };
        return candidates !== undefined ? this.ordered(compiled) : compiled;
      }
      case 'contains': {
        // Values exactly at the path (an array's own elements), not values below it.
        const ids = ctx.fields.ids(f.field, f.kind, true);
        const col = dialect.valueColumn('x', f.kind);
        const compiled = this.hasValue(ids, sql<SqlBool>`${col} = ${sqlValue(f.kind, f.value)}`, [{ kind: f.kind, value: f.value }]);
        if (ids.length !== 1 || dialect.name !== 'postgres') return compiled;
        // PostgreSQL: one (field_id, value) range of the (field_id, value, rid) index lists its
        // records in rid order, a record twice when an array holds the value twice; DISTINCT
        // over the range keeps that order, so the page is read straight from it, stopping at
        // the limit (one statement, which the store remembers), rather than a capped read of
        // the whole set and then, for a set past the cap, a walk of every record.
        return { ...compiled, ordered: [sql`SELECT DISTINCT x.rid FROM search_values x WHERE x.field_id = ${ids[0]} AND ${col} = ${sqlValue(f.kind, f.value)}`] };
      }
      case 'any':
        if (ctx.exactAny === true) return this.anyOf(f.field, f.item);
        // Otherwise the store compiles a relaxed filter without `any` (see relax.ts) and confirms each candidate.
        throw new Error('any reached the SQL compiler; relax the filter first');
      case 'keyword':
      case 'fuzzy': {
        const ids = ctx.fields.ids(f.field, 's');
        if (ids.length === 0) return { check: false };
        // keyword: any word (one group); fuzzy: every word (a group each) within its typo distance.
        const groups =
          f.op === 'keyword'
            ? [ids.flatMap((id) => f.words.map((w) => wordToken(id, w)))]
            : f.words.map((w) => ids.flatMap((id) => (ctx.fuzzy.get(w) ?? [w]).map((c) => wordToken(id, c))));
        const compiled = { check: dialect.exists(dialect.wordsQuery(groups, RID)), set: dialect.wordsQuery(groups) };
        return dialect.name === 'sqlite' ? this.ordered(compiled) : compiled;
      }
    }
  }
}

/** A condition inside an `any` as value rows: the field ids and the condition on the row under its alias. */
interface ElementRows {
  ids: number[];
  cond: RawBuilder<SqlBool> | undefined;
  /** An equality: its rows are one (field_id, value) range of the (field_id, value, rid) index, in rid order. */
  point?: true;
}

/**
 * `any` on element positions. Every value below an element carries the element's number
 * (search_values.e), so "one element satisfies C" is: some value row g0 under the array,
 * generated by C's first positive leaf (the store puts the leaf with the fewest values first, see
 * elementLeafSet), such that the rest of C holds for the values with g0's rid and e, each checked
 * by an index probe per g0 row. No candidate is confirmed afterwards. (A self-join of the
 * leaves' ranges on (rid, e) was tried: with the values hidden from the planner, PostgreSQL
 * estimates one row a side and nests a scan of the whole second range in each row of the first,
 * 80 ms where the probes take 0.7.)
 */
class ElementCompiler {
  constructor(
    readonly c: Compiler,
    readonly array: FieldRef,
  ) {}

  ref(inner: FieldRef): FieldRef {
    return elementPath(this.array, inner);
  }

  idsIn(alias: string, ids: number[]): RawBuilder<SqlBool> {
    return ids.length === 1 ? sql<SqlBool>`${sql.ref(`${alias}.field_id`)} = ${ids[0]}` : this.c.dialect.inList(sql.ref(`${alias}.field_id`), ids, 'int');
  }

  /** A positive leaf as the value rows that satisfy it, under `alias`; undefined for other conditions. */
  rows(f: Filter, alias: string): ElementRows | undefined {
    const { dialect, ctx } = this.c;
    switch (f.op) {
      case 'eq':
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
        return { ids: ctx.fields.ids(this.ref(f.field), f.kind), cond: sql<SqlBool>`${dialect.valueColumn(alias, f.kind)} ${sql.raw(COMPARATORS[f.op])} ${sqlValue(f.kind, f.value)}`, ...(f.op === 'eq' ? { point: true as const } : {}) };
      case 'contains':
        return { ids: ctx.fields.ids(this.ref(f.field), f.kind, true), cond: sql<SqlBool>`${dialect.valueColumn(alias, f.kind)} = ${sqlValue(f.kind, f.value)}`, point: true };
      case 'in': {
        const kind = f.values[0]!.kind;
        if (f.values.some((v) => v.kind !== kind)) return undefined;
        return { ids: ctx.fields.ids(this.ref(f.field), kind), cond: leafCondition(dialect, { ...f, field: this.ref(f.field) }, dialect.valueColumn(alias, kind)) };
      }
      case 'present':
        return f.present ? { ids: ctx.fields.ids(this.ref(f.field)), cond: undefined } : undefined;
      default:
        return undefined;
    }
  }

  /** The element (`rid`, `e`) has a value row among `ids` satisfying `cond` (on alias x). */
  has(ids: number[], cond: RawBuilder<SqlBool> | undefined, rid: RawBuilder<unknown>, e: RawBuilder<unknown>): Pred {
    if (ids.length === 0) return false;
    const dialect = this.c.dialect;
    return dialect.exists(sql`SELECT 1 FROM search_values x WHERE x.rid = ${rid} AND ${this.idsIn('x', ids)}${cond === undefined ? sql`` : sql` AND ${cond}`} AND ${dialect.sameElement(X_E, e)}`);
  }

  /** Whether the element (`rid`, `e`) satisfies `f`. */
  check(f: Filter, rid: RawBuilder<unknown>, e: RawBuilder<unknown>): Pred {
    const { dialect, ctx } = this.c;
    switch (f.op) {
      case 'and':
        return and(f.items.map((i) => this.check(i, rid, e)));
      case 'or':
        return or(f.items.map((i) => this.check(i, rid, e)));
      case 'not':
        return not(this.check(f.item, rid, e));
      case 'present': {
        const has = this.has(ctx.fields.ids(this.ref(f.field)), undefined, rid, e);
        return f.present ? has : not(has);
      }
      case 'neq': {
        // Some value at the path, and none equal, within the element.
        const ref = this.ref(f.field);
        return and([this.has(ctx.fields.ids(ref), undefined, rid, e), not(this.has(ctx.fields.ids(ref, f.kind), sql<SqlBool>`${dialect.valueColumn('x', f.kind)} = ${sqlValue(f.kind, f.value)}`, rid, e))]);
      }
      case 'in': {
        const byKind = new Map<ValueKind, { kind: ValueKind; value: ScalarValue }[]>();
        for (const v of f.values) byKind.set(v.kind, [...(byKind.get(v.kind) ?? []), v]);
        return or([...byKind].map(([kind, values]) => this.has(ctx.fields.ids(this.ref(f.field), kind), leafCondition(dialect, { op: 'in', field: f.field, values }, dialect.valueColumn('x', kind)), rid, e)));
      }
      case 'like': {
        const ids = ctx.fields.ids(this.ref(f.field), 's');
        if (f.parts.every((p) => p.kind === 'any')) return this.has(ids, undefined, rid, e);
        return this.has(ids, dialect.likeCondition(f.parts, true), rid, e);
      }
      case 'eq':
      case 'gt':
      case 'gte':
      case 'lt':
      case 'lte':
      case 'contains': {
        const rows = this.rows(f, 'x')!;
        return this.has(rows.ids, rows.cond, rid, e);
      }
      default:
        throw new Error(`${f.op} inside any has no element-position form`);
    }
  }

  /**
   * An `any` whose condition is two equalities, one on a string, when the scope has their element
   * pair (elementPairSort in dialect.ts): the matching records are one range of the pair's index
   * (pair, key value, other value, rid), read in rid order (a record twice when two of its
   * elements match, hence DISTINCT). Undefined otherwise.
   */
  pairRange(items: Filter[]): Compiled | undefined {
    const { dialect, ctx } = this.c;
    if (ctx.pairs === undefined || dialect.name !== 'postgres' || items.length !== 2) return undefined;
    for (const [key, other] of [items, [items[1]!, items[0]!]] as const) {
      if (key.op !== 'eq' || other.op !== 'eq' || key.kind !== 's') continue;
      const keyIds = ctx.fields.ids(this.ref(key.field), 's');
      const otherIds = ctx.fields.ids(this.ref(other.field), other.kind);
      if (keyIds.length !== 1 || otherIds.length !== 1) continue;
      const pairId = ctx.pairs.get(`${keyIds[0]},${elementPairSort(otherIds[0]!)}`);
      if (pairId === undefined) continue;
      const where = sql<SqlBool>`p.pair_id = ${pairId} AND p.kv = ${sqlValue(key.kind, key.value)} AND ${dialect.valueColumn('p', other.kind)} = ${sqlValue(other.kind, other.value)}`;
      return {
        check: dialect.exists(sql`SELECT 1 FROM search_pairs p WHERE ${where} AND p.rid = ${RID}`),
        set: sql`SELECT p.rid FROM search_pairs p WHERE ${where}`,
        ordered: [sql`SELECT DISTINCT p.rid FROM search_pairs p WHERE ${where}`],
      };
    }
    return undefined;
  }

  /** The `any` as a compiled condition: a check correlated on r.rid and the set of matching records. */
  compile(item: Filter): Compiled {
    const { dialect, ctx } = this.c;
    const items = item.op === 'and' ? item.items : [item];
    const viaPair = this.pairRange(items);
    if (viaPair !== undefined) return viaPair;
    const gens: ElementRows[] = [];
    const rest: Filter[] = [];
    for (const i of items) {
      const rows = gens.length === 0 ? this.rows(i, 'g0') : undefined;
      if (rows === undefined) rest.push(i);
      else gens.push(rows);
    }
    // No positive leaf at the top: the elements are enumerated by their values (the condition
    // requires one, see elementCompilable), i.e. by every value strictly below the array.
    if (gens.length === 0) gens.push({ ids: ctx.fields.below(this.array.name), cond: undefined });
    if (gens.some((g) => g.ids.length === 0)) return { check: false };
    const rid = G0_RID;
    const e = G0_E;
    const g0 = gens[0]!;
    const predicate = and([this.idsIn('g0', g0.ids), g0.cond ?? true, this.check({ op: 'and', items: rest }, rid, e)]);
    if (predicate === false) return { check: false };
    const from = sql`search_values g0`;
    const body = (extra: Pred): RawBuilder<unknown> => {
      const all = and([extra, predicate]);
      return sql`FROM ${from} WHERE ${all === true ? sql`1 = 1` : (all as RawBuilder<SqlBool>)}`;
    };
    const compiled: Compiled = {
      check: dialect.exists(sql`SELECT 1 ${body(sql<SqlBool>`g0.rid = ${RID}`)}`),
      set: sql`SELECT g0.rid ${body(true)}`,
    };
    // PostgreSQL: read from g0's (field_id, value, rid) range, the set comes in rid order (a
    // record twice when two of its elements match, hence DISTINCT): the page is read straight
    // from it, stopping at the limit, as for contains.
    if (dialect.name === 'postgres' && gens[0]!.point === true && gens[0]!.ids.length === 1) compiled.ordered = [sql`SELECT DISTINCT g0.rid ${body(true)}`];
    return compiled;
  }
}

/**
 * The value rows of a positive leaf inside an `any` over `array` (undefined for other
 * conditions), as a set to count: the store counts each such leaf of an `any`'s and (bounded,
 * as the planner's counts) and puts the smallest first, so that it generates the elements.
 */
export function elementLeafSet(ctx: CompileContext, array: FieldRef, leaf: Filter): Compiled | undefined {
  const rows = new ElementCompiler(new Compiler(ctx), array).rows(leaf, 'x');
  if (rows === undefined) return undefined;
  if (rows.ids.length === 0) return { check: false };
  const ids = rows.ids.length === 1 ? sql<SqlBool>`x.field_id = ${rows.ids[0]}` : ctx.dialect.inList(sql.ref('x.field_id'), rows.ids, 'int');
  return { check: false, set: sql`SELECT x.rid FROM search_values x WHERE ${ids}${rows.cond === undefined ? sql`` : sql` AND ${rows.cond}`}` };
}

/** The path of `inner`, a reference inside the elements of `array`, as a path of the record. */
export function elementPath(array: FieldRef, inner: FieldRef): FieldRef {
  return { name: `${array.name}.${inner.name}`, root: array.root, type: array.type, multi: true, ...(array.inner ? { inner: true as const } : {}) };
}

/**
 * Whether an `any`'s condition compiles on element positions: made of and/or/not over
 * comparisons, in, present, contains and like (not keyword or fuzzy, whose word index is per
 * record, nor a nested any), and satisfiable only by an element having a value (elements are
 * known by their values: an element without one, `{}`, is not in the index).
 */
export function elementCompilable(f: Filter): boolean {
  const supported = (g: Filter): boolean => {
    switch (g.op) {
      case 'and':
      case 'or':
        return g.items.every(supported);
      case 'not':
        return supported(g.item);
      case 'keyword':
      case 'fuzzy':
      case 'any':
        return false;
      default:
        return true;
    }
  };
  const requires = (g: Filter): boolean => {
    switch (g.op) {
      case 'and':
        return g.items.some(requires);
      case 'or':
        return g.items.every(requires);
      case 'not':
        return false;
      case 'present':
        return g.present;
      default:
        return true;
    }
  };
  return supported(f) && requires(f);
}

/** Compile a filter to its conjuncts (each with a check and, if listable, a set of rids). */
export function compileConjuncts(f: Filter, ctx: CompileContext): Compiled[] {
  return new Compiler(ctx).conjuncts(f);
}

/** AND of predicates, folding constants. */
export { and as andPreds };

/** True when every record the filter matches must have a value for the scalar field `name`. */
export function requiresValue(f: Filter | undefined, name: string): boolean {
  if (f === undefined) return false;
  switch (f.op) {
    case 'and':
      return f.items.some((i) => requiresValue(i, name));
    case 'or':
      return f.items.every((i) => requiresValue(i, name));
    case 'not':
      return false;
    case 'present':
      return f.present && f.field.name === name;
    default:
      return f.field.name === name && !f.field.multi;
  }
}

/**
 * `LIMIT n` with n as a literal. A bound LIMIT costs SQLite about 10 µs per run of a statement
 * (measured with better-sqlite3 on a one-row page: 15 µs with `LIMIT ?`, 6 µs with `LIMIT 1001`),
 * more than the rest of an indexed eq lookup. Page sizes are few (limit + 1, confirm batches),
 * so the statements stay few; n is checked to be a non-negative safe integer.
 */
export function limitClause(n: number): RawBuilder<unknown> {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`invalid LIMIT ${n}`);
  return sql`LIMIT ${sql.lit(n)}`;
}

/** One sort key as joined into a page query; `expr` null when the field has never had a value. */
interface JoinedKey {
  expr: RawBuilder<unknown> | null;
  dir: 'asc' | 'desc';
  nullable: boolean;
}

/** "After the cursor" for keys ordered with nulls last, then rid in `tieDir`. */
function keysetPredicate(keys: JoinedKey[], values: (string | number | null)[], rid: RawBuilder<unknown>, afterRid: number, tieDir: 'asc' | 'desc'): Pred {
  const ridAfter = sql<SqlBool>`${rid} ${sql.raw(tieDir === 'asc' ? '>' : '<')} ${afterRid}`;
  const only = keys[0];
  const v0 = values[0];
  // One non-null key in the tie direction: a row-value comparison both databases can answer
  // with a range scan of the (field_id, value, rid) index.
  if (keys.length === 1 && only !== undefined && only.expr !== null && !only.nullable && v0 !== null && v0 !== undefined && only.dir === tieDir) {
    return sql<SqlBool>`(${only.expr}, ${rid}) ${sql.raw(tieDir === 'asc' ? '>' : '<')} (${v0}, ${afterRid})`;
  }
  const terms: Pred[] = [];
  const prefix: Pred[] = [];
  keys.forEach((key, i) => {
    const c = values[i] ?? null;
    let after: Pred;
    let equal: Pred;
    if (key.expr === null) {
      // Every record is null here: null sorts after any value and equals only null.
      after = c !== null;
      equal = c === null;
    } else if (c === null) {
      after = false;
      equal = sql<SqlBool>`${key.expr} IS NULL`;
    } else {
      const beyond = sql<SqlBool>`${key.expr} ${sql.raw(key.dir === 'asc' ? '>' : '<')} ${c}`;
      after = key.nullable ? or([beyond, sql<SqlBool>`${key.expr} IS NULL`]) : beyond;
      equal = sql<SqlBool>`${key.expr} = ${c}`;
    }
    terms.push(and([...prefix, after]));
    prefix.push(equal);
  });
  terms.push(and([...prefix, ridAfter]));
  return or(terms);
}

export interface SortPlan {
  key: SortKey;
  /** The field id holding this key's values, if the field has ever had one. */
  fieldId: number | undefined;
}

export interface PageRow {
  rid: number;
  record: unknown;
  keys: (string | number | null)[];
}

/**
 * The SQL of one page segment. Sorting puts records without a value for a key after the others
 * (asc and desc alike), and breaks ties by rid in the last key's direction. So that the first
 * sort key can be read from its index in order, a sorted query runs in two segments: records
 * having a value for the first key (phase "values"), then those without (phase "nulls").
 *
 * With a `driver` set, the page is computed from that set's records (then sorted); without, by
 * walking records in result order — the first sort key's index, or rids — checking each.
 */
export function pageQuery(
  dialect: SearchDialect,
  scopeId: number,
  filter: Pred,
  sort: SortPlan[],
  phase: 'none' | 'values' | 'nulls',
  after: CursorPosition | undefined,
  limit: number,
  /** Conditions on the first sort key, applied to its index scan in the values phase. */
  sortLeaves: ScalarLeaf[] = [],
  driver?: RawBuilder<unknown>,
  /** Instead of `driver`, the `ordered` arms (see Compiled) of an unsorted query: each read in rid order up to the limit. */
  driverArms?: RawBuilder<unknown>[],
  /** Further columns of every row, uncorrelated (the scope's state, see RecordStore.search). */
  extra?: RawBuilder<unknown>,
  /**
   * The values phase of a walk: walk this sort pair's rows with key value `value` (schema.ts,
   * 0004) instead of the first sort key's index; `filter` then omits the equality it stands for.
   */
  pair?: { pairId: number; value: string },
): RawBuilder<Record<string, unknown>> {
  if (dialect.name === 'sqlite' && driverArms?.length === 1 && sort.length === 0 && phase === 'none') return sqliteArmPage(scopeId, filter, after, limit, driverArms[0]!);
  const tieDir = sort.at(-1)?.key.dir ?? 'asc';
  const where: Pred[] = [filter];
  const joins: RawBuilder<unknown>[] = [];
  const columns: RawBuilder<unknown>[] = [];
  const keys: JoinedKey[] = [];
  sort.forEach((s, i) => {
    const alias = `s${i}`;
    const col = dialect.valueColumn(alias, s.key.kind);
    if (i === 0 && phase === 'nulls') {
      columns.push(sql`NULL AS ${sql.ref(`k${i}`)}`);
      return;
    }
    if (s.fieldId === undefined) {
      columns.push(sql`NULL AS ${sql.ref(`k${i}`)}`);
      keys.push({ expr: null, dir: s.key.dir, nullable: true });
      return;
    }
    if (i > 0) joins.push(sql`LEFT JOIN search_values ${sql.table(alias)} ON ${sql.ref(`${alias}.rid`)} = r.rid AND ${sql.ref(`${alias}.field_id`)} = ${s.fieldId}`);
    columns.push(sql`${col} AS ${sql.ref(`k${i}`)}`);
    keys.push({ expr: col, dir: s.key.dir, nullable: i > 0 });
  });
  const order = keys
    .filter((k) => k.expr !== null)
    .map((k) => sql`${k.expr} ${sql.raw(k.dir === 'asc' ? 'ASC' : 'DESC')}${k.nullable ? sql` NULLS LAST` : sql``}`);

  const join = dialect.orderedJoin;
  let driving: RawBuilder<unknown> | undefined;
  if (driverArms !== undefined && driverArms.length > 0 && sort.length === 0) {
    const afterRid = after === undefined ? sql`` : sql` WHERE a.rid > ${after.rid}`;
    const arms = driverArms.map((arm) => sql`SELECT a.rid FROM (${arm}) a${afterRid} ORDER BY a.rid ${limitClause(limit)}`);
    // Several arms: each limited, wrapped (SQLite takes no ORDER BY in a compound's arm), then merged.
    const merged =
      arms.length === 1
        ? arms[0]!
        : sql`SELECT u.rid FROM (${sql.join(arms.map((a, i) => sql`SELECT * FROM (${a}) ${sql.table(`a${i}`)}`), sql` UNION ALL `)}) u ORDER BY u.rid ${limitClause(limit)}`;
    driving = sql`${dialect.driver(merged)} d`;
  } else if (driver !== undefined) driving = sql`${dialect.driver(sql`SELECT DISTINCT dd.rid FROM (${driver}) dd`)} d`;
  let from: RawBuilder<unknown>;
  let rid: RawBuilder<unknown>;
  let record = sql`r.record`;
  if (phase === 'values' && driving === undefined && dialect.name === 'postgres') {
    // PostgreSQL, a walk of the first sort key's index: the walked value rows are aliased `r`,
    // so the checks (correlated on r.rid) filter the index scan itself, and the record is read
    // by a subquery for the rows kept only. Joined to search_records instead, PostgreSQL
    // evaluates the checks at the join, reading the record of every row walked (7.5 vs 3.0 ms
    // for the benchmark's nested query at 20,000 contacts, 1,100 rows walked for 101 kept).
    // A sort pair row carries a copy of its record (schema.ts, 0006), read where it is there
    // (COALESCE reads search_records only for a row without one, from an older writer).
    const first = sort[0]!;
    const col = dialect.valueColumn('r', first.key.kind);
    columns[0] = sql`${col} AS ${sql.ref('k0')}`;
    keys[0] = { ...keys[0]!, expr: col };
    order[0] = sql`${col} ${sql.raw(first.key.dir === 'asc' ? 'ASC' : 'DESC')}`;
    from = pair === undefined ? sql`search_values r` : sql`search_pairs r`;
    rid = sql.ref('r.rid');
    record = pair === undefined ? sql`(SELECT rec.record FROM search_records rec WHERE rec.rid = r.rid)` : sql`COALESCE(r.record, (SELECT rec.record FROM search_records rec WHERE rec.rid = r.rid))`;
    const walked = pair === undefined ? sql<SqlBool>`r.field_id = ${first.fieldId!}` : sql<SqlBool>`r.pair_id = ${pair.pairId} AND r.kv = ${pair.value}`;
    where.unshift(sql<SqlBool>`${walked} AND ${col} IS NOT NULL`, ...sortLeaves.map((l) => leafCondition(dialect, l, col)));
  } else if (phase === 'values') {
    const first = sort[0]!;
    const col = dialect.valueColumn('s0', first.key.kind);
    // Walking s0 reads the (field_id, value, rid) index in sort order and stops at the limit.
    const walkPair = pair !== undefined && driving === undefined;
    from = driving === undefined
      ? sql`${walkPair ? sql`search_pairs` : sql`search_values`} s0 ${join} search_records r ON r.rid = s0.rid`
      : sql`${driving} ${join} search_values s0 ON s0.rid = d.rid ${join} search_records r ON r.rid = d.rid`;
    rid = sql.ref('s0.rid');
    const walked = walkPair ? sql<SqlBool>`s0.pair_id = ${pair.pairId} AND s0.kv = ${pair.value}` : sql<SqlBool>`s0.field_id = ${first.fieldId!}`;
    where.unshift(sql<SqlBool>`${walked} AND ${col} IS NOT NULL`, ...sortLeaves.map((l) => leafCondition(dialect, l, col)));
  } else if (phase === 'none' && sort.length === 0 && driver !== undefined && driverArms === undefined && dialect.name === 'postgres') {
    // PostgreSQL, an unsorted page driven by a set: as for walks above, the set's rows are
    // aliased `r`, so the checks filter them before any record is read, and records are read
    // for the rows kept only (an `any` over a tag name and id: 502 records read for 202 kept
    // before). Every driving set lists records of this scope only (its field ids and word
    // tokens are the scope's), so no scope check is needed.
    from = sql`${dialect.driver(sql`SELECT DISTINCT dd.rid FROM (${driver}) dd`)} r`;
    rid = sql.ref('r.rid');
    record = sql`(SELECT rec.record FROM search_records rec WHERE rec.rid = r.rid)`;
  } else {
    from = driving === undefined ? sql`search_records r` : sql`${driving} ${join} search_records r ON r.rid = d.rid`;
    rid = sql.ref('r.rid');
    where.unshift(sql<SqlBool>`r.scope_id = ${scopeId}`);
    const first = sort[0];
    if (phase === 'nulls' && first?.fieldId !== undefined) {
      where.push(not(dialect.exists(sql`SELECT 1 FROM search_values z WHERE z.rid = r.rid AND z.field_id = ${first.fieldId}`)));
    }
  }
  if (after !== undefined) {
    const values = phase === 'nulls' ? after.values.slice(1) : after.values;
    where.push(keysetPredicate(keys, values, rid, after.rid, tieDir));
  }
  order.push(sql`${rid} ${sql.raw(tieDir === 'asc' ? 'ASC' : 'DESC')}`);
  const predicate = and(where);
  if (extra !== undefined) columns.push(extra);
  return sql<Record<string, unknown>>`SELECT ${rid} AS rid, ${record} AS record${columns.length ? sql`, ${sql.join(columns)}` : sql``}
    FROM ${from} ${sql.join(joins, sql` `)}
    WHERE ${predicate === true ? sql`1 = 1` : predicate === false ? sql`1 = 0` : predicate}
    ORDER BY ${sql.join(order)}
    ${limitClause(limit)}`;
}

/**
 * SQLite: an unsorted page read from one index-ordered arm, written flat — the arm joined to its
 * records and ordered by the arm's rid — so that SQLite flattens the arm into the join and reads
 * the (field_id, v, rid) index or the FTS5 rowids in order, stopping at the limit, without a
 * sorter (the nested form, the arm limited then joined and ordered by r.rid, sorts every page in
 * a temporary B-tree: 67 vs 45 µs for a keyword page of 25 records, 6.0 vs 4.7 µs for an eq).
 */
function sqliteArmPage(scopeId: number, filter: Pred, after: CursorPosition | undefined, limit: number, arm: RawBuilder<unknown>): RawBuilder<Record<string, unknown>> {
  const where = and([sql<SqlBool>`r.scope_id = ${scopeId}`, after === undefined ? true : sql<SqlBool>`a.rid > ${after.rid}`, filter]);
  return sql<Record<string, unknown>>`SELECT a.rid AS rid, r.record AS record
    FROM (${arm}) a CROSS JOIN search_records r ON r.rid = a.rid
    WHERE ${where === false ? sql`1 = 0` : (where as RawBuilder<SqlBool>)}
    ORDER BY a.rid
    ${limitClause(limit)}`;
}

/** A bounded count of a set's rows: the exact count below `cap`, else `cap`; kept prepared (SearchDialect.repeated) unless `planByValue`. */
export function boundedCount(set: RawBuilder<unknown>, cap: number, dialect?: SearchDialect, planByValue = false, extra?: RawBuilder<unknown>): RawBuilder<{ n: number | string }> {
  return sql<{ n: number | string }>`${dialect === undefined || planByValue ? sql`` : dialect.repeated}SELECT count(*) AS n${extra === undefined ? sql`` : sql`, ${extra}`} FROM (SELECT 1 AS one FROM (${set}) e ${limitClause(cap)}) c`;
}

/**
 * One pass over a set (a subquery with a `rid` column, possibly repeating a record): read at most
 * `cap` of its entries after `afterRid`, and return the first `limit` of their records in rid
 * order, each row also carrying `n`, the number of entries read. Below the cap the set was read
 * whole and the page is exact; at the cap the caller must not trust it.
 */
export function cappedSetPage(dialect: SearchDialect, scopeId: number, set: RawBuilder<unknown>, afterRid: number | undefined, cap: number, limit: number, planByValue = false, extra?: RawBuilder<unknown>): RawBuilder<{ rid: number | string; record: unknown; n: number | string }> {
  const after = afterRid === undefined ? sql`` : sql` WHERE e.rid > ${afterRid}`;
  return sql<{ rid: number | string; record: unknown; n: number | string }>`${planByValue ? sql`` : dialect.repeated}WITH c AS MATERIALIZED (SELECT e.rid FROM (${set}) e${after} LIMIT ${cap})
    SELECT r.rid AS rid, r.record AS record, (SELECT count(*) FROM c) AS n${extra === undefined ? sql`` : sql`, ${extra}`}
    FROM ${dialect.driver(sql`SELECT DISTINCT c.rid FROM c ORDER BY c.rid ${limitClause(limit)}`)} d ${dialect.orderedJoin} search_records r ON r.rid = d.rid
    WHERE r.scope_id = ${scopeId}
    ORDER BY r.rid
    ${limitClause(limit)}`;
}

/**
 * How a shape's derived values are computed: values that reach SQL transformed. On SQLite
 * (`match`, the dialect's FTS5 match syntax) a keyword's words as one match of the field's word
 * tokens, a like pattern as a match of the field's trigram tokens and a GLOB. On PostgreSQL (no
 * `match`) a keyword's words as the text of an array of the field's word tokens (see
 * textArrayLiteral) and a like pattern, when it has a 3-character literal, as its SQL LIKE
 * pattern: the GIN-backed pages whose SQL the store remembers (see RecordStore.search).
 */
export interface ShapeDerive {
  fields: FieldIndex;
  /** The bound parameter of a token query (SearchDialect.tokenMatch); absent on PostgreSQL. */
  match?(groups: string[][]): string;
}

/**
 * A list parameter as the text of a PostgreSQL array literal, each element quoted: what `pg`
 * sends for a JavaScript array, so a remembered shape can carry a list as one text slot (its SQL
 * reads every list as `(SELECT $n::text)::text[]`, see SearchDialect.reusableSql).
 */
export function textArrayLiteral(list: readonly unknown[]): string {
  let out = '{';
  for (let i = 0; i < list.length; i++) out += `${i === 0 ? '' : ','}"${String(list[i]).replace(/["\\]/g, (c) => `\\${c}`)}"`;
  return `${out}}`;
}

/** Where a shape walk puts its values, and with `markers`, the marker of each slot (marker → slot). */
interface ShapeWalk {
  slots: (string | number)[];
  markers: Map<string | number, number> | undefined;
  derive: ShapeDerive | undefined;
}

/** A marker for slot i that no constant parameter equals: a string with NULs, or a negative non-integer. */
function slotMarker(i: number, value: string | number): string | number {
  return typeof value === 'string' ? `\u0000${i}\u0000` : -(i + 1.5);
}

function fieldShape(ref: FieldRef): string {
  return `${JSON.stringify(ref.name)},${ref.type},${ref.multi ? 1 : 0}`;
}

/** Add a value slot; returns the value the marked filter carries in its place. */
function addSlot(w: ShapeWalk, kind: ValueKind, value: ScalarValue): ScalarValue {
  const v = sqlValue(kind, value);
  w.slots.push(v);
  if (w.markers === undefined) return value;
  const m = slotMarker(w.slots.length - 1, v);
  w.markers.set(m, w.slots.length - 1);
  return m;
}

/** Add a derived slot: `real` as it reaches SQL, and `marked` (computed from the marker text) as the marked filter's compile will show it. */
function addDerived(w: ShapeWalk, real: string, marked: (text: string) => string): string {
  w.slots.push(real);
  const i = w.slots.length - 1;
  const text = `\u0000${i}\u0000`;
  w.markers?.set(marked(text), i);
  return text;
}

/**
 * A filter's shape without its values, for caching the SQL of a query shape: the shape as text
 * (operators, fields, kinds and nesting), the values as SQL parameters in walk order (`slots`),
 * and with `markers`, the same filter with each value replaced by a marker for its slot, so a
 * compile of it shows where each value lands among the parameters (`markers`: marker → slot).
 * With `derive` (SQLite), a keyword and a like with trigrams also have a shape: their values
 * reach SQL transformed, as derived slots. Undefined when a condition's values cannot be
 * slotted (fuzzy, whose SQL depends on the vocabulary; like without trigrams). An `any` has a
 * shape; the store asks for it only when the `any` runs on element positions in a known leaf order.
 */
export function queryShape(f: Filter, slots: (string | number)[], markers?: Map<string | number, number>, derive?: ShapeDerive): { shape: string; marked: Filter } | undefined {
  return shapeOf(f, { slots, markers, derive });
}

function shapeOf(f: Filter, w: ShapeWalk): { shape: string; marked: Filter } | undefined {
  const marking = w.markers !== undefined;
  switch (f.op) {
    case 'and':
    case 'or': {
      let shape = `${f.op}(`;
      const items: Filter[] = [];
      for (const i of f.items) {
        const part = shapeOf(i, w);
        if (part === undefined) return undefined;
        shape += `${part.shape},`;
        items.push(part.marked);
      }
      return { shape: `${shape})`, marked: marking ? { op: f.op, items } : f };
    }
    case 'not': {
      const inner = shapeOf(f.item, w);
      return inner === undefined ? undefined : { shape: `not(${inner.shape})`, marked: marking ? { op: 'not', item: inner.marked } : f };
    }
    case 'present':
      return { shape: `present(${fieldShape(f.field)},${f.present})`, marked: f };
    case 'any': {
      // The caller remembers only an `any` on element positions (RecordStore's #shapeQuery).
      const inner = shapeOf(f.item, w);
      return inner === undefined ? undefined : { shape: `any(${fieldShape(f.field)},${inner.shape})`, marked: marking ? { ...f, item: inner.marked } : f };
    }
    case 'eq':
    case 'neq':
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
    case 'contains': {
      const value = addSlot(w, f.kind, f.value);
      return { shape: `${f.op}(${fieldShape(f.field)},${f.kind})`, marked: marking ? { ...f, value } : f };
    }
    case 'in': {
      let kinds = '';
      const values: { kind: ValueKind; value: ScalarValue }[] = [];
      for (const v of f.values) {
        kinds += v.kind;
        values.push({ kind: v.kind, value: addSlot(w, v.kind, v.value) });
      }
      return { shape: `in(${fieldShape(f.field)},${kinds})`, marked: marking ? { ...f, values } : f };
    }
    case 'keyword': {
      const d = w.derive;
      const ids = d?.fields.ids(f.field, 's');
      if (d === undefined || ids === undefined || ids.length === 0) return undefined;
      const match = d.match;
      const words = (list: string[]): string => {
        const tokens = ids.flatMap((id) => list.map((word) => wordToken(id, word)));
        return match === undefined ? textArrayLiteral(tokens) : match([tokens]);
      };
      const text = addDerived(w, words(f.words), (t) => words([t]));
      return { shape: `keyword(${fieldShape(f.field)})`, marked: marking ? { ...f, words: [text] } : f };
    }
    case 'like': {
      const d = w.derive;
      const ids = d?.fields.ids(f.field, 's');
      const trigrams = likeTrigrams(f.parts);
      if (d === undefined || ids === undefined || ids.length === 0 || trigrams.length === 0) return undefined;
      const textParts = (t: string): LikePart[] => [{ kind: 'any' }, { kind: 'text', text: t }, { kind: 'any' }];
      const match = d.match;
      if (match === undefined) {
        // PostgreSQL: the pattern is the one value (likeCondition); with a 3-character literal the
        // statement is the same whatever the pattern (a trigram index scan).
        const text = addDerived(w, likeToSqlLike(f.parts), (t) => likeToSqlLike(textParts(t)));
        return { shape: `like(${fieldShape(f.field)})`, marked: marking ? { ...f, pattern: text, parts: textParts(text) } : f };
      }
      const grams = (list: string[]): string => match(list.map((t) => ids.map((id) => gramToken(id, t))));
      const text = addDerived(w, grams(trigrams), (t) => grams(likeTrigrams(textParts(t))));
      addDerived(w, likeToGlob(f.parts), () => likeToGlob(textParts(text)));
      return { shape: `like(${fieldShape(f.field)})`, marked: marking ? { ...f, pattern: text, parts: textParts(text) } : f };
    }
    default:
      return undefined;
  }
}
