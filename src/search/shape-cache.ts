/**
 * Remembered query shapes: which queries have a shape (shapeQueryOf, shapeOf), and the SQL a
 * search learns for one (learnShape), compiled once with the query's values and once with
 * markers, so that later searches of that shape run it with their own values (remembered.ts).
 */
import { sql, type RawBuilder } from 'kysely';
import { PREPARED_SQL } from '../store/database.ts';
import { elementCompilable } from './compile-elements.ts';
import { compileConjuncts } from './compile.ts';
import type { CursorPosition } from './cursor.ts';
import { KEYLESS_PAIR, type ParameterKind } from './dialect.ts';
import { cappedSetPage, pageQuery } from './page-query.ts';
import { andPreds, pairKeyCandidates, splitFieldConditions } from './predicates.ts';
import type { Filter, SearchQuery } from './query.ts';
import { queryShape, textArrayLiteral } from './query-shape.ts';
import { hasAny } from './relax.ts';
import { exactInSignature } from './signature.ts';
import {
  cappedLimit,
  countCap,
  maxFieldOf,
  packedState,
  scopeState,
  stateColumns,
  type CachedScope,
  type MarkedShape,
  type Shape,
  type ShapeKind,
  type ShapePlan,
  type StoreContext,
} from './store-context.ts';

/** Query shapes whose SQL is kept per scope. */
const SHAPE_CACHE_LIMIT = 256;

/**
 * The query whose shape may be remembered: the query itself without `any`; with `any`, the
 * query with each `any`'s leaves in the order smallestLeavesFirst gives them, provided that
 * order and the `any`'s element positions are known for the cached scope (its leaf counts and
 * elementsPlaced's probe, both forgotten when the scope changes), so that a remembered `any`
 * is always one on element positions. Undefined when not known yet (the search then runs the
 * full way and learns them).
 */
export function shapeQueryOf(store: StoreContext, query: SearchQuery, cached: CachedScope | undefined): SearchQuery | undefined {
  if (!hasAny(query.filter)) return query;
  if (cached === undefined || query.sort.length > 0 || store.dialect.name !== 'postgres') return undefined;
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
export function shapeOf(
  store: StoreContext,
  query: SearchQuery,
  position: CursorPosition | undefined,
  scope: CachedScope | undefined,
  marking?: false,
): Shape | undefined;
export function shapeOf(
  store: StoreContext,
  query: SearchQuery,
  position: CursorPosition | undefined,
  scope: CachedScope | undefined,
  marking: true,
): MarkedShape | undefined;
export function shapeOf(
  store: StoreContext,
  query: SearchQuery,
  position: CursorPosition | undefined,
  scope: CachedScope | undefined,
  marking = false,
): Shape | MarkedShape | undefined {
  const filter = query.filter;
  if (filter === undefined) return undefined;
  const postgres = store.dialect.name === 'postgres';
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
      const choice = scope === undefined ? undefined : pairChoiceKey(store, query, split.rest);
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
  const match = store.dialect.tokenMatch;
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
 * planPage's counts and pairWalk's choice depend on); undefined when `rest` has no shape.
 */
export function pairChoiceKey(store: StoreContext, query: SearchQuery, rest: Filter): string | undefined {
  if (!store.dialect.sortPairs || query.sort.length !== 1) return undefined;
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
 * see shapeQueryOf). A shape whose two compiles disagree in anything but the values is
 * remembered as not reusable.
 */
export function learnShape(
  store: StoreContext,
  scope: CachedScope,
  connectorId: string,
  entity: string,
  query: SearchQuery,
  position: CursorPosition | undefined,
  known: Shape | undefined,
): void {
  if (known === undefined || scope.shapes.has(known.key)) return;
  const shape = shapeOf(store, query, position, scope, true);
  // The record count may have moved the cap since the search began: learn the shape next time.
  if (shape === undefined || shape.key !== known.key) return;
  if (scope.shapes.size >= SHAPE_CACHE_LIMIT) scope.shapes.clear();
  if (store.shapesRemembered >= store.maxShapes) {
    for (const s of store.scopeCache.values()) s.shapes.clear();
    store.shapesRemembered = 0;
  }
  store.shapesRemembered++;
  const want = query.limit + 1;
  const split = store.sqlite !== undefined;
  const build = (filter: Filter, at: CursorPosition | undefined): RawBuilder<unknown> | undefined =>
    shape.kind === 'walk'
      ? walkPage(store, scope, connectorId, entity, query, filter, want, at)
      : shape.kind === 'pair'
        ? pairPage(store, scope, connectorId, entity, query, filter, want, at, shape.pairId!)
        : shape.kind === 'capped'
          ? cappedPage(store, scope, connectorId, entity, filter, want, shape.cap, at)
          : split
            ? orderedPage(store, scope, filter, want, at)
            : orderedPageWithState(store, scope, connectorId, entity, filter, want, at);
  const real = build(query.filter!, position);
  const marked = build(shape.marked, shape.markedPosition);
  let plan: ShapePlan | null = null;
  if (real !== undefined && marked !== undefined) {
    const r = real.compile(store.db);
    const m = marked.compile(store.db);
    // A list reaches SQL as one parameter: compared, and found among the markers, as its array literal's text.
    const keyOf = (p: unknown): unknown => (Array.isArray(p) ? textArrayLiteral(p) : p);
    const layout = m.parameters.map((p) => shape.markers.get(keyOf(p) as string | number) ?? -1);
    const cursorSlot = position === undefined ? -1 : shape.slots.length - 1;
    const kinds = layout.map((s): ParameterKind => (s < 0 ? 'constant' : s === cursorSlot ? 'cursor' : 'value'));
    const text = r.sql.startsWith(PREPARED_SQL) ? r.sql.slice(PREPARED_SQL.length) : r.sql;
    const candidate: ShapePlan = { sql: store.dialect.reusableSql(text, r.parameters, kinds), layout, constants: r.parameters };
    if (shape.kind !== 'ordered') candidate.stateInRows = true;
    if (shape.kind === 'walk' || shape.kind === 'pair') candidate.walk = true;
    if (shape.kind === 'capped') candidate.cap = shape.cap;
    const same =
      r.sql === m.sql &&
      r.parameters.length === layout.length &&
      layout.every((s, i) => (s < 0 ? keyOf(m.parameters[i]) === keyOf(r.parameters[i]) : keyOf(shape.slots[s]) === keyOf(r.parameters[i])));
    if (same) plan = candidate;
    if (plan !== null && (split || plan.stateInRows === true)) {
      if (split) plan.split = true;
      if (scope.state === undefined) {
        const st = scopeState(scope.scopeId, connectorId, entity).compile(store.db);
        scope.state = {
          sql: store.dialect.reusableSql(
            st.sql,
            st.parameters,
            st.parameters.map((): ParameterKind => 'constant'),
          ),
          parameters: [...st.parameters],
        };
      }
    }
  }
  scope.shapes.set(shape.key, plan);
}

/** PostgreSQL: the walk of a `walk` shape (see ShapeKind), as searchIn runs it, with the scope's state on every row; undefined when the sort field has no values in the scope. */
function walkPage(
  store: StoreContext,
  scope: CachedScope,
  connectorId: string,
  entity: string,
  query: SearchQuery,
  filter: Filter,
  want: number,
  position: CursorPosition | undefined,
): RawBuilder<unknown> | undefined {
  const key = query.sort[0]!;
  const fieldId = scope.fields.ids(key.field, key.kind)[0];
  if (fieldId === undefined) return undefined;
  const { leaves, rest } = splitFieldConditions(filter, key.field.name);
  if (rest !== undefined || leaves.length === 0) return undefined;
  const keyless = scope.pairs?.get(`${KEYLESS_PAIR},${fieldId}`);
  const pair = keyless === undefined ? undefined : { pairId: keyless, value: '' };
  return pageQuery(
    store.dialect,
    scope.scopeId,
    andPreds([]),
    [{ key, fieldId }],
    'values',
    position,
    want,
    leaves,
    undefined,
    undefined,
    stateColumns(scope.scopeId, connectorId, entity),
    pair,
  );
}

/**
 * PostgreSQL: the walk of a `pair` shape (see ShapeKind), as searchIn runs it when planPage
 * chose no driving set and pairWalk the sort pair `pairId`, with the scope's state on every
 * row; undefined unless the query's first pair key with a pair is that pair's.
 */
function pairPage(
  store: StoreContext,
  scope: CachedScope,
  connectorId: string,
  entity: string,
  query: SearchQuery,
  filter: Filter,
  want: number,
  position: CursorPosition | undefined,
  pairId: number,
): RawBuilder<unknown> | undefined {
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
    const check =
      c.rest === undefined
        ? true
        : andPreds(compileConjuncts(c.rest, { dialect: store.dialect, fields: scope.fields, fuzzy: new Map(), signature: true }).map((x) => x.check));
    return pageQuery(
      store.dialect,
      scope.scopeId,
      check,
      [{ key, fieldId }],
      'values',
      position,
      want,
      leaves,
      undefined,
      undefined,
      stateColumns(scope.scopeId, connectorId, entity),
      { pairId: id, value: c.value },
    );
  }
  return undefined;
}

/** PostgreSQL: the capped page of a `capped` shape (see ShapeKind), as searchIn runs it, with the scope's state on every row; undefined unless the filter compiles to one listable condition read by a plan that does not depend on its values. */
function cappedPage(
  store: StoreContext,
  scope: CachedScope,
  connectorId: string,
  entity: string,
  filter: Filter,
  want: number,
  cap: number,
  position: CursorPosition | undefined,
): RawBuilder<unknown> | undefined {
  const live = compileConjuncts(filter, { dialect: store.dialect, fields: scope.fields, fuzzy: new Map() }).filter((c) => c.check !== true);
  const only = live.length === 1 && live[0]!.check !== false ? live[0]! : undefined;
  if (only === undefined || only.set === undefined || only.ordered !== undefined || only.planByValue === true) return undefined;
  return cappedSetPage(store.dialect, scope.scopeId, only.set, position?.rid, cap, want, false, stateColumns(scope.scopeId, connectorId, entity));
}

/** The single index-ordered pass of an unsorted one-condition query (undefined when the query is not one). */
function orderedPage(
  store: StoreContext,
  scope: CachedScope,
  filter: Filter,
  want: number,
  position: CursorPosition | undefined,
): RawBuilder<unknown> | undefined {
  // An `any` here is one on element positions (see shapeQueryOf).
  const conjuncts = compileConjuncts(filter, {
    dialect: store.dialect,
    fields: scope.fields,
    fuzzy: new Map(),
    exactAny: hasAny(filter),
    ...(scope.pairs !== undefined ? { pairs: scope.pairs } : {}),
  });
  const live = conjuncts.filter((c) => c.check !== true);
  const only = live.length === 1 && live[0]!.check !== false ? live[0]!.ordered : undefined;
  if (only === undefined) return undefined;
  return pageQuery(store.dialect, scope.scopeId, true, [], 'none', position, want, [], undefined, only);
}

/** The single index-ordered pass of an unsorted one-condition query, with the scope's state as extra columns (one row with a null rid when the page is empty). */
function orderedPageWithState(
  store: StoreContext,
  scope: CachedScope,
  connectorId: string,
  entity: string,
  filter: Filter,
  want: number,
  position: CursorPosition | undefined,
): RawBuilder<unknown> | undefined {
  const page = orderedPage(store, scope, filter, want, position);
  if (page === undefined) return undefined;
  // PostgreSQL: the state as one text column (see stateColumns), repeated on every row.
  const state =
    store.dialect.name === 'postgres'
      ? sql`${packedState(sql`${scope.scopeId}`)} AS s_state`
      : sql`s.synced_at AS s_synced_at, s.record_count AS s_record_count, (${maxFieldOf(sql`${scope.scopeId}`)}) AS s_max_field`;
  return sql`SELECT ${state}, p.rid AS rid, p.record AS record
    FROM search_scopes s LEFT JOIN (${page}) p ON 1 = 1
    WHERE s.scope_id = ${scope.scopeId} AND s.connector_id = ${connectorId} AND s.entity = ${entity}
    ORDER BY p.rid`;
}
