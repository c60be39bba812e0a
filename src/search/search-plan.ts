/**
 * Query planning: the bounded counts that choose a page's driving set (or a walk in result
 * order), the order of an `any`'s leaves, whether an `any` runs on element positions, and the
 * prepared form of the statements they run.
 */
import { CompiledQuery, sql, type RawBuilder } from 'kysely';
import { PREPARED_SQL } from '../store/database.ts';
import { elementCompilable, elementLeafSet } from './compile-elements.ts';
import type { ParameterKind } from './dialect.ts';
import { boundedCount } from './page-query.ts';
import { andPreds, type CompileContext, type Compiled } from './predicates.ts';
import type { Filter } from './query.ts';
import { learnElementPair } from './sort-pairs.ts';
import { COUNT_CACHE_LIMIT, countCap, noteSink, type CachedScope, type StateSink, type StoreContext } from './store-context.ts';

/** Statement texts whose prepared form reused keeps (a few kB each: about 2 MB at most). */
const REUSABLE_TEXT_LIMIT = 512;

/**
 * Run a page statement. On PostgreSQL, unless its plan depends on its values, as a named
 * prepared statement with its values read through one-row subqueries (SearchDialect.reusableSql):
 * parsed once per connection and, after its first runs, no longer planned (a sorted walk's
 * planning alone took 0.2 ms at 20,000 contacts, as long as the page's range scan).
 */
export function reused<R>(store: StoreContext, query: RawBuilder<R>, byValue: boolean): Promise<{ rows: R[] }> {
  if (store.dialect.name !== 'postgres') return query.execute(store.db);
  const direct = store.pg;
  const compiled = query.compile(store.db);
  let text = compiled.sql;
  if (!byValue) {
    // The rewrite depends on the text and on each parameter's type only: kept per both, so a
    // page or count of a known text is not scanned again (a regex pass over 2-4 kB each time).
    let types = '';
    for (const p of compiled.parameters)
      types += typeof p === 'string' ? 's' : typeof p === 'number' ? (Number.isSafeInteger(p) ? 'i' : 'd') : Array.isArray(p) ? 'a' : 'o';
    const key = `${types}\u0000${text}`;
    let reusable = store.reusableTexts.get(key);
    if (reusable === undefined) {
      const bare = text.startsWith(PREPARED_SQL) ? text.slice(PREPARED_SQL.length) : text;
      reusable = store.dialect.reusableSql(
        bare,
        compiled.parameters,
        compiled.parameters.map((): ParameterKind => 'constant'),
      );
      if (store.reusableTexts.size >= REUSABLE_TEXT_LIMIT) store.reusableTexts.clear();
      store.reusableTexts.set(key, reusable);
    }
    text = reusable;
  }
  // Outside a caller's transaction, on a pool client directly (see Database.postgres).
  if (direct !== undefined) return direct.query<R>(text, [...compiled.parameters]).then((rows) => ({ rows }));
  return store.db.executeQuery<R>(CompiledQuery.raw(text, [...compiled.parameters]));
}

/**
 * Choose how to compute a page: drive from the conjunct with the fewest matches when that is
 * fewer than the records a walk in result order would expect to examine (want divided by the
 * estimated selectivity), else walk, checking every conjunct per record. Matches are counted
 * up to countCap (at most ESTIMATE_CAP); a conjunct at the cap is never a driver (its true size is unknown).
 */
export async function planPage(
  store: StoreContext,
  conjuncts: Compiled[],
  scope: CachedScope,
  want: number,
  sink?: StateSink,
): Promise<'empty' | { filter: ReturnType<typeof andPreds>; driver: Compiled['set']; byValue?: true }> {
  const total = scope.recordCount;
  const listable = conjuncts.filter((c) => c.set !== undefined);
  let driver: Compiled | undefined;
  if (listable.length > 1 && store.dialect.name === 'postgres' && !store.db.isTransaction) {
    const decided = await concurrentCounts(store, listable, scope, want, sink);
    if (decided === 'empty') return 'empty';
    driver = decided;
  } else if (listable.length > 0) {
    const cap = countCap(listable.length, total, want);
    const counts: number[] = [];
    for (const c of listable) {
      counts.push(await conditionCount(store, scope, c, cap, sink));
    }
    if (counts.includes(0)) return 'empty';
    const selectivity = counts.reduce((p, n) => p * Math.min(1, n / Math.max(1, total)), 1);
    const best = counts.indexOf(Math.min(...counts));
    if (counts[best]! < cap && counts[best]! <= want / selectivity) driver = listable[best];
  }
  return {
    filter: andPreds(conjuncts.filter((c) => c !== driver).map((c) => c.check)),
    driver: driver?.set,
    ...(driver?.planByValue ? { byValue: true as const } : {}),
  };
}

/**
 * PostgreSQL: planPage's counts, run concurrently (each on its own connection), deciding as soon as
 * the counts known so far settle the choice: a count of 0 means no match ('empty'); a count
 * below the cap that is at most want / (the product of the known selectivities) drives, since
 * the counts still running can only make the selectivity smaller and so keep that true. The
 * driver may then not be the smallest set (only a plan choice; results are the same). Counts
 * still running are left to finish on their connections, their results unused. With every
 * count known, the choice is planPage's own. Returns the driver, or undefined to walk.
 */
async function concurrentCounts(
  store: StoreContext,
  listable: Compiled[],
  scope: CachedScope,
  want: number,
  sink?: StateSink,
): Promise<'empty' | Compiled | undefined> {
  const total = scope.recordCount;
  const cap = countCap(listable.length, total, want);
  const counts: (number | undefined)[] = listable.map(() => undefined);
  const running = new Map(
    listable.map((c, i) => {
      const p = conditionCount(store, scope, c, cap, sink).then((n) => {
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
function leafCount(store: StoreContext, scope: CachedScope, key: string, set: RawBuilder<unknown>, cap: number, sink: StateSink | undefined): Promise<number> {
  const known = scope.leafCounts?.get(key);
  if (known !== undefined) return Promise.resolve(known);
  return reused(store, boundedCount(set, cap, store.dialect, false, sink?.columns), false).then(({ rows }) => {
    noteSink(sink, rows);
    const n = Number(rows[0]?.n ?? 0);
    noteLeafCount(scope, key, n);
    return n;
  });
}

function noteLeafCount(scope: CachedScope, key: string, n: number): void {
  scope.leafCounts ??= new Map();
  if (scope.leafCounts.size >= COUNT_CACHE_LIMIT) scope.leafCounts.clear();
  scope.leafCounts.set(key, n);
}

/** A condition's bounded count (see countCap), from CachedScope.counts when known there. */
function conditionCount(store: StoreContext, scope: CachedScope, c: Compiled, cap: number, sink: StateSink | undefined): Promise<number> {
  const set = c.set!.compile(store.db);
  const key = `${cap}\u0000${set.sql}\u0000${JSON.stringify(set.parameters)}`;
  const known = scope.counts?.get(key);
  if (known !== undefined) return Promise.resolve(known);
  return reused(store, boundedCount(c.set!, cap, store.dialect, c.planByValue, sink?.columns), c.planByValue === true).then(({ rows }) => {
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

/**
 * Whether every `any` of a filter compiles on element positions: its condition is one
 * (elementCompilable), not inside another `any`, the scope's element positions number exactly
 * its array's elements (FieldIndex.elementsExact), and no value below the array lacks a position
 * (one probe of the partial index search_values_unplaced per set of field ids, remembered until
 * the scope changes).
 */
export async function elementsPlaced(store: StoreContext, scope: CachedScope, f: Filter | undefined): Promise<boolean> {
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
      const { rows } = await sql`SELECT 1 AS one FROM search_values WHERE ${store.dialect.inList(sql.ref('field_id'), ids, 'int')} AND e = -1 LIMIT 1`.execute(
        store.db,
      );
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
 * elements an `any` on element positions examines (see ElementCompiler in compile-elements.ts).
 */
export async function smallestLeavesFirst(
  store: StoreContext,
  scope: CachedScope,
  ctx: CompileContext,
  f: Filter,
  want: number,
  sink: StateSink | undefined,
): Promise<Filter> {
  switch (f.op) {
    case 'and':
    case 'or':
      return { op: f.op, items: await Promise.all(f.items.map((i) => smallestLeavesFirst(store, scope, ctx, i, want, sink))) };
    case 'not':
      return { op: 'not', item: await smallestLeavesFirst(store, scope, ctx, f.item, want, sink) };
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
        counts = await Promise.all(sets.map((c, i) => (c?.set === undefined ? Infinity : leafCount(store, scope, keys[i]!, c.set, cap, sink))));
        for (let i = 0; i < keys.length; i++) if (sets[i]?.set === undefined) noteLeafCount(scope, keys[i]!, Infinity);
      }
      if (counts.filter((n) => n !== Infinity).length < 2) return f;
      // Both leaves list at least a page of values: the probes would examine that many
      // elements, an element pair (elementPairSort) reads only the matching ones.
      if (f.item.items.length === 2 && Math.min(counts[0]!, counts[1]!) >= want) learnElementPair(store, scope, ctx, f.field, f.item.items);
      const order = f.item.items.map((item, i) => ({ item, n: counts[i]! })).sort((a, b) => a.n - b.n);
      return { ...f, item: { op: 'and', items: order.map((o) => o.item) } };
    }
    default:
      return f;
  }
}
