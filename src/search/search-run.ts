/**
 * Running a search: a remembered shape when the query has one (remembered.ts), else the full
 * way (searchIn) with the cached scope, planned (search-plan.ts), and its shape learned.
 */
import { sql } from 'kysely';
import { compileConjuncts } from './compile.ts';
import { decodeCursor, encodeCursor, type CursorPosition } from './cursor.ts';
import { projectDocument, projectFields, type Doc } from './document.ts';
import { cappedSetPage, pageQuery, type PageRow, type SortPlan } from './page-query.ts';
import { FieldIndex, requiresValue, splitFieldConditions, type CompileContext, type FieldRow } from './predicates.ts';
import { parseSearchParams, type SearchEntityDef, type SearchQuery } from './query.ts';
import { matches } from './reference.ts';
import { hasAny, relaxFilter } from './relax.ts';
import { noteState, runRemembered } from './remembered.ts';
import { elementsPlaced, planPage, reused, smallestLeavesFirst } from './search-plan.ts';
import { learnShape, pairChoiceKey, shapeOf, shapeQueryOf } from './shape-cache.ts';
import { pairsOf, pairWalk } from './sort-pairs.ts';
import {
  cappedLimit,
  COUNT_CACHE_LIMIT,
  noteSink,
  QueryIdentity,
  scopeState,
  stateColumns,
  type CachedScope,
  type ScopeStateRow,
  type StateSink,
  type StoreContext,
} from './store-context.ts';
import { fuzzyCandidates } from './vocabulary.ts';

/** Candidates read per statement while confirming an `any` filter. */
const CONFIRM_BATCH = 1000;
/** (connector, entity) scopes whose ids and field dictionaries are kept between searches. */
const SCOPE_CACHE_LIMIT = 10_000;

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

function searchResult(started: number, data: Record<string, unknown>[], syncedAt: string | null, cursor: string | null): SearchResult {
  return { data, meta: { has_more: cursor !== null, cursor, took_ms: Math.round((performance.now() - started) * 1000) / 1000, synced_at: syncedAt } };
}

/**
 * Run the `search` action: validate params (400 `invalid_search_query` / `invalid_cursor`),
 * query the synced records, and return one page of search documents.
 */
export async function searchRecords(store: StoreContext, connectorId: string, entity: string, def: SearchEntityDef, params: unknown): Promise<SearchResult> {
  const started = performance.now();
  const query = parseSearchParams(def, params);
  // Hashed only when a cursor is read or written: most searches have neither.
  const identity = new QueryIdentity(connectorId, entity, query);
  const position = query.cursor === undefined ? undefined : decodeCursor(store.secret, identity.fingerprint(), query.sort, query.cursor);

  const key = `${connectorId}\u0000${entity}`;
  let cached = store.scopeCache.get(key);
  // An `any` is remembered in the order of its leaves known for the scope (see shapeQueryOf).
  const shapeQuery = shapeQueryOf(store, query, cached);
  const shape = shapeQuery === undefined ? undefined : shapeOf(store, shapeQuery, position, cached);
  const plan = shape === undefined ? undefined : cached?.shapes.get(shape.key);
  // A capped page that reached its cap is searched the full way, without reading it again.
  let capped = true;
  if (cached !== undefined && plan != null) {
    // A known shape: its SQL with this query's values; no compiling, one round trip (or, on
    // SQLite, two statements run directly: see ShapePlan.split).
    const page = await runRemembered(store, cached, plan, shape!.slots, def, query, identity);
    if (page === null) capped = false;
    else if (page !== undefined) return searchResult(started, page.data, page.synced, page.cursor);
    else {
      store.scopeCache.delete(key);
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
    if (store.dialect.name === 'postgres') {
      const sink: StateSink = { columns: (cached.stateColumns ??= stateColumns(cached.scopeId, connectorId, entity)) };
      [page] = await Promise.allSettled([searchIn(store, cached, def, query, fingerprint, position, sink, capped, walked)]);
      row =
        sink.row === undefined
          ? (await scopeState(cached.scopeId, connectorId, entity, store.dialect.repeated).execute(store.db)).rows[0]
          : (sink.row ?? undefined);
    } else {
      const state = scopeState(cached.scopeId, connectorId, entity, store.dialect.repeated).execute(store.db);
      let checked: PromiseSettledResult<{ rows: ScopeStateRow[] }>;
      [page, checked] = await Promise.allSettled([searchIn(store, cached, def, query, fingerprint, position), state]);
      if (checked.status === 'rejected') throw checked.reason;
      row = checked.value.rows[0];
    }
    if (row !== undefined && Number(row.s_max_field ?? 0) === cached.maxField) {
      if (page.status === 'rejected') throw page.reason;
      // A sort pair walked by planPage's choice: noted before the state, which forgets it with the counts it came from.
      const choice =
        walked.pair !== undefined && shape === undefined && shapeQuery === query
          ? pairChoiceKey(store, query, splitFieldConditions(query.filter, query.sort[0]!.field.name).rest!)
          : undefined;
      if (choice !== undefined) {
        cached.pairWalks ??= new Map();
        if (cached.pairWalks.size >= COUNT_CACHE_LIMIT) cached.pairWalks.clear();
        cached.pairWalks.set(choice, walked.pair!);
      }
      const synced = noteState(store, cached, row);
      // A pair shape is learned only from a search that walked that pair.
      const learnt = choice !== undefined ? shapeOf(store, shapeQuery!, position, cached) : shape;
      if (shapeQuery !== undefined && (learnt?.kind !== 'pair' || learnt.pairId === walked.pair))
        learnShape(store, cached, connectorId, entity, shapeQuery, position, learnt);
      return done(page.value.data, synced, page.value.cursor);
    }
    store.scopeCache.delete(key);
  }
  const { rows: scopeRows } = await sql<{
    scope_id: number;
    synced_at: unknown;
    record_count: number | string;
    field_id: number | null;
    path: string | null;
    kind: string | null;
  }>`
    SELECT s.scope_id, s.synced_at, s.record_count, f.field_id, f.path, f.kind
    FROM search_scopes s LEFT JOIN search_fields f ON f.scope_id = s.scope_id
    WHERE s.connector_id = ${connectorId} AND s.entity = ${entity}`.execute(store.db);
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
  if (store.scopeCache.size >= SCOPE_CACHE_LIMIT) store.scopeCache.clear();
  store.scopeCache.set(key, entry);
  const page = await searchIn(store, entry, def, query, fingerprint, position);
  // An `any` is learned only as one on element positions in the new scope's leaf order (which
  // the search just found), never from a shape taken with a scope since dropped.
  const fresh = hasAny(query.filter) ? shapeQueryOf(store, query, entry) : query;
  if (fresh !== undefined) learnShape(store, entry, connectorId, entity, fresh, position, fresh === query ? shape : shapeOf(store, fresh, position, entry));
  return done(page.data, store.dialect.parseTime(scope.synced_at), page.cursor);
}

/** One page of a parsed query in a scope, with the scope's field dictionary. */
async function searchIn(
  store: StoreContext,
  scope: CachedScope,
  def: SearchEntityDef,
  query: SearchQuery,
  fingerprint: () => string,
  position: CursorPosition | undefined,
  sink?: StateSink,
  capped = true,
  walked?: { pair?: number },
): Promise<{ data: Record<string, unknown>[]; cursor: string | null }> {
  const empty = { data: [], cursor: null };
  const fields = scope.fields;
  // `any` compiles on element positions when every `any` can (elementsPlaced); otherwise it
  // runs as a relaxed filter in SQL, each candidate confirmed in JavaScript (relax.ts).
  const withAny = hasAny(query.filter);
  const exactAny = withAny && (await elementsPlaced(store, scope, query.filter));
  const confirm = withAny && !exactAny ? query.filter : undefined;
  let sqlFilter = confirm === undefined ? query.filter : relaxFilter(query.filter);
  const pairs = exactAny && store.dialect.sortPairs ? await pairsOf(store, scope) : undefined;
  const ctx: CompileContext = {
    dialect: store.dialect,
    fields,
    fuzzy: await fuzzyCandidates(store, scope.scopeId, sqlFilter),
    exactAny,
    ...(pairs !== undefined ? { pairs } : {}),
  };
  if (exactAny) sqlFilter = await smallestLeavesFirst(store, scope, ctx, sqlFilter!, query.limit + 1, sink);
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
    const { rows } = await reused(
      store,
      cappedSetPage(store.dialect, scope.scopeId, single.set, position?.rid, cap, want, single.planByValue, sink?.columns),
      single.planByValue === true,
    );
    noteSink(sink, rows);
    if (rows.length === 0 || Number(rows[0]!.n) < cap) early = rows.map((r) => ({ rid: Number(r.rid), record: r.record, keys: [] }));
  }
  const plan =
    only !== undefined
      ? { filter: true as const, driver: undefined }
      : single !== undefined
        ? { filter: single.check, driver: undefined }
        : await planPage(store, live, scope, want, sink);
  if (plan === 'empty') return empty;
  const { filter, driver } = plan;
  // The page's plan depends on its values only when they choose its driving set (a like pattern).
  const byValue = plan.byValue === true || (only !== undefined && live.some((c) => c.planByValue));
  // A walk of the first sort key's index with an equality on a scalar string field: walk the
  // records of that value in sort order from the scope's sort pair instead (learning the pair
  // when the scope has none yet, see pairWalk).
  const pair = early === undefined && driver === undefined && first?.fieldId !== undefined ? await pairWalk(store, scope, first.fieldId, rest, ctx) : undefined;
  // One statement, a walk of the pair bounded by the leaves: what a `pair` shape remembers.
  if (walked !== undefined && pair !== undefined && pair.keyless !== true && confirm === undefined && !exactAny && sort.length === 1 && leaves.length > 0)
    walked.pair = pair.pairId;

  // An `any` on element positions read in one pass (PostgreSQL): the page left-joined to one
  // row carrying the scope's state, so that an empty page (half the benchmark's tag pairs
  // match no contact) needs no statement of its own for it. The rows are put in rid order
  // here: an ORDER BY around the join made PostgreSQL sort the page's records (0.1 ms for 100).
  // Unsorted pages only, whose order is ascending rid.
  const stateRow = exactAny && only !== undefined && sink !== undefined && sort.length === 0;
  const fetch = async (phase: 'none' | 'values' | 'nulls', after: CursorPosition | undefined, limit: number): Promise<PageRow[]> => {
    const walkPair = phase === 'values' ? pair : undefined;
    const page = pageQuery(
      store.dialect,
      scope.scopeId,
      walkPair === undefined ? filter : walkPair.filter,
      sort,
      phase,
      after,
      limit,
      phase === 'values' ? leaves : [],
      driver,
      only,
      stateRow ? undefined : sink?.columns,
      walkPair,
    );
    const statement = stateRow
      ? sql<Record<string, unknown>>`SELECT p.rid AS rid, p.record AS record, ${sink.columns} FROM (SELECT 1 AS one) o LEFT JOIN (${page}) p ON true`
      : page;
    let { rows } = await reused(store, statement, byValue);
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
    if (doc === undefined) docs.set(r.rid, (doc = projectDocument(store.dialect.parseRecord(r.record), def)));
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
  return finishPage(store, rows, def, query, fingerprint, docOf);
}

/** The page of up to limit + 1 rows in result order: its first `limit` documents, and a cursor when there is a further row. */
function finishPage(
  store: StoreContext,
  rows: PageRow[],
  def: SearchEntityDef,
  query: SearchQuery,
  fingerprint: () => string,
  docOf = (r: PageRow): Doc => projectDocument(store.dialect.parseRecord(r.record), def),
): { data: Record<string, unknown>[]; cursor: string | null } {
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  const cursor = rows.length > query.limit && last !== undefined ? encodeCursor(store.secret, fingerprint(), { values: last.keys, rid: last.rid }) : null;
  const data = page.map((r) => {
    const doc = docOf(r);
    return query.fields === undefined ? doc : projectFields(doc, query.fields);
  });
  return { data, cursor };
}
