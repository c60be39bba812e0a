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
import { ElementCompiler } from './compile-elements.ts';
import type { SearchDialect } from './dialect.ts';
import {
  and,
  COMPARATORS,
  isScalarLeaf,
  leafCondition,
  not,
  or,
  RID,
  sqlValue,
  wordToken,
  type CompileContext,
  type Compiled,
  type ScalarLeaf,
} from './predicates.ts';
import type { FieldRef, Filter, ScalarValue, ValueKind } from './query.ts';
import { signatureCheck } from './signature.ts';
import { likeTrigrams } from './text.ts';

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
    return this.hasValue(
      ids,
      sql<SqlBool>`${this.dialect.valueColumn('x', kind)} ${sql.raw(COMPARATORS[op])} ${sqlValue(kind, value)}`,
      op === 'eq' ? [{ kind, value }] : undefined,
    );
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
      return this.hasValue(
        this.ctx.fields.ids(first.field, kind),
        sql<SqlBool>`${sql.join(
          leaves.map((l) => leafCondition(this.dialect, l, col)),
          sql` AND `,
        )}`,
      );
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
          return {
            ...whole,
            ordered: f.values.map((v) => sql`SELECT x.rid FROM search_values x WHERE x.field_id = ${ids[0]} AND ${col} = ${sqlValue(v.kind, v.value)}`),
          };
        }
        // Object/array fields may mix kinds in one list: one lookup per kind.
        const byKind = new Map<ValueKind, ScalarLeaf & { op: 'in' }>();
        for (const v of f.values) {
          const leaf = byKind.get(v.kind) ?? { op: 'in', field: f.field, values: [] };
          leaf.values.push(v);
          byKind.set(v.kind, leaf);
        }
        const parts = [...byKind].map(([kind, leaf]) =>
          this.hasValue(ctx.fields.ids(f.field, kind), leafCondition(dialect, leaf, dialect.valueColumn('x', kind)), leaf.values),
        );
        return parts.length === 1 ? parts[0]! : { check: or(parts.map((p) => p.check)) };
      }
      case 'like': {
        const ids = ctx.fields.ids(f.field, 's');
        // "%" alone matches every string value.
        if (f.parts.every((p) => p.kind === 'any')) return this.hasValue(ids);
        if (ids.length === 0) return { check: false };
        const cond = dialect.likeCondition(f.parts);
        const perRecord = dialect.likeCondition(f.parts, true);
        const confirm = (rid: RawBuilder<unknown>): RawBuilder<SqlBool> =>
          dialect.exists(sql`SELECT 1 FROM search_values x WHERE x.rid = ${rid} AND ${this.fieldIds(ids)} AND ${perRecord}`);
        // A record's own values are checked directly; listing matches goes through the field's
        // trigram tokens (SQLite) when the pattern has a 3-character literal, else through the
        // field's values (on PostgreSQL, their pg_trgm index).
        const candidates = dialect.likeCandidates(f.parts, ids, confirm);
        // A pattern with a 3-character literal is looked up by its trigrams whatever they are; one
        // without has no index to use, and is planned with its values every time.
        const compiled: Compiled = {
          check: confirm(RID),
          set: candidates ?? this.hasValue(ids, cond).set!,
          ...(likeTrigrams(f.parts).length === 0 ? { planByValue: true as const } : {}),
        };
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
        return {
          ...compiled,
          ordered: [sql`SELECT DISTINCT x.rid FROM search_values x WHERE x.field_id = ${ids[0]} AND ${col} = ${sqlValue(f.kind, f.value)}`],
        };
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

/** Compile a filter to its conjuncts (each with a check and, if listable, a set of rids). */
export function compileConjuncts(f: Filter, ctx: CompileContext): Compiled[] {
  return new Compiler(ctx).conjuncts(f);
}
