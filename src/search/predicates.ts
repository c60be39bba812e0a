/**
 * The pieces every part of the SQL compiler shares (compile.ts, compile-elements.ts,
 * page-query.ts): predicates folded with constants, the scope's field dictionary, the compile
 * context and a compiled condition's two forms (see compile.ts), and the scalar conditions a
 * sorted walk applies to its own index scan.
 */
import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { SearchDialect } from './dialect.ts';
import type { FieldRef, Filter, ValueKind } from './query.ts';

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
      .filter(
        (r) =>
          (kind === undefined ? r.kind !== 'a' : r.kind === kind) &&
          (r.path === p || (ref.multi && !exact && r.path.length > p.length && r.path.startsWith(p) && r.path[p.length] === '.')),
      )
      .map((r) => r.field_id);
  }

  /** Field ids of the values strictly below `path` (any kind): the values of the elements of the array at `path`. */
  below(path: string): number[] {
    return this.#rows
      .filter((r) => r.kind !== 'a' && r.path.length > path.length && r.path.startsWith(path) && r.path[path.length] === '.')
      .map((r) => r.field_id);
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

/** The record a check is correlated on. */
export const RID = sql.ref('r.rid');
export const COMPARATORS = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

export function and(preds: Pred[]): Pred {
  if (preds.includes(false)) return false;
  const rest = preds.filter((p): p is RawBuilder<SqlBool> => p !== true);
  if (rest.length === 0) return true;
  return rest.length === 1 ? rest[0]! : sql<SqlBool>`(${sql.join(rest, sql` AND `)})`;
}

export function or(preds: Pred[]): Pred {
  if (preds.includes(true)) return true;
  const rest = preds.filter((p): p is RawBuilder<SqlBool> => p !== false);
  if (rest.length === 0) return false;
  return rest.length === 1 ? rest[0]! : sql<SqlBool>`(${sql.join(rest, sql` OR `)})`;
}

export function not(p: Pred): Pred {
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

export function isScalarLeaf(f: Filter): f is ScalarLeaf {
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
