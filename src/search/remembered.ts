/**
 * A search of a remembered shape (shape-cache.ts): its SQL run with the query's values, in one
 * round trip (on SQLite, two statements run directly), and the page read from its rows.
 */
import { CompiledQuery } from 'kysely';
import { encodeCursor } from './cursor.ts';
import { projectDocument, projectFields } from './document.ts';
import type { SearchEntityDef, SearchQuery } from './query.ts';
import {
  unpackState,
  type CachedScope,
  type QueryIdentity,
  type RememberedPage,
  type RememberedRow,
  type ScopeStateRow,
  type ShapePlan,
  type StoreContext,
} from './store-context.ts';

/**
 * A page of a remembered shape in its scope, or undefined when the scope is gone or has gained
 * a field (the caller then drops the cached scope and searches the full way). Kept free of
 * closures: this runs for most searches, and each closure created costs a little.
 */
export function runRemembered(
  store: StoreContext,
  cached: CachedScope,
  plan: ShapePlan,
  slots: (string | number)[],
  def: SearchEntityDef,
  query: SearchQuery,
  identity: QueryIdentity,
): RememberedPage | undefined | null | Promise<RememberedPage | undefined | null> {
  const params: unknown[] = new Array(plan.layout.length);
  for (let i = 0; i < params.length; i++) {
    const s = plan.layout[i]!;
    params[i] = s < 0 ? plan.constants[i] : slots[s];
  }
  if (plan.split) {
    // The page, then the scope's state, synchronously on the connection unless it is inside
    // a transaction, whose uncommitted writes a read must not see (Kysely then waits for it).
    const state = cached.state!;
    const direct = store.sqlite;
    if (direct !== undefined && !direct.inTransaction) {
      const rows = direct.prepare(plan.sql).all(params) as RememberedRow[];
      const head = direct.prepare(state.sql).get(state.parameters) as ScopeStateRow | undefined;
      return rememberedPage(store, cached, rows, head, def, query, identity);
    }
    return (async () => {
      const { rows } = await store.db.executeQuery<RememberedRow>(CompiledQuery.raw(plan.sql, params));
      const head = (await store.db.executeQuery<ScopeStateRow>(CompiledQuery.raw(state.sql, state.parameters))).rows[0];
      return rememberedPage(store, cached, rows, head, def, query, identity);
    })();
  }
  const pgDirect = store.pg;
  if (plan.stateInRows === true) {
    const rows =
      pgDirect !== undefined
        ? pgDirect.query<RememberedRow & { s_state?: string | null }>(plan.sql, params)
        : store.db.executeQuery<RememberedRow & { s_state?: string | null }>(CompiledQuery.raw(plan.sql, params)).then((r) => r.rows);
    return rows.then((r) => rowsWithState(store, cached, plan, r, def, query, identity));
  }
  if (pgDirect !== undefined) {
    return pgDirect
      .query<ScopeStateRow & RememberedRow & { s_state?: string | null }>(plan.sql, params)
      .then((rows) =>
        rememberedPage(store, cached, rows, rows[0] === undefined || !('s_state' in rows[0]) ? rows[0] : unpackState(rows[0].s_state), def, query, identity),
      );
  }
  return store.db
    .executeQuery<ScopeStateRow & RememberedRow & { s_state?: string | null }>(CompiledQuery.raw(plan.sql, params))
    .then(({ rows }) =>
      rememberedPage(store, cached, rows, rows[0] === undefined || !('s_state' in rows[0]) ? rows[0] : unpackState(rows[0].s_state), def, query, identity),
    );
}

/**
 * The page of a shape whose rows carry the scope's state (ShapePlan.stateInRows): null when a
 * capped page reached its cap (the caller then searches the full way, which walks); after an
 * empty page, the state read by a statement of its own, as a search the full way does.
 */
function rowsWithState(
  store: StoreContext,
  cached: CachedScope,
  plan: ShapePlan,
  rows: (RememberedRow & { s_state?: string | null })[],
  def: SearchEntityDef,
  query: SearchQuery,
  identity: QueryIdentity,
): RememberedPage | undefined | null | Promise<RememberedPage | undefined> {
  const first = rows[0];
  if (first === undefined) {
    const state = cached.state!;
    const direct = store.pg;
    const read =
      direct !== undefined
        ? direct.query<ScopeStateRow>(state.sql, state.parameters)
        : store.db.executeQuery<ScopeStateRow>(CompiledQuery.raw(state.sql, state.parameters)).then((r) => r.rows);
    return read.then((head) => rememberedPage(store, cached, [], head[0], def, query, identity));
  }
  if (plan.cap !== undefined && Number(first.n) >= plan.cap) return null;
  return rememberedPage(store, cached, rows, unpackState(first.s_state), def, query, identity, plan.walk === true);
}

/** The documents of a remembered shape's rows (up to limit + 1, in rid order; a null rid when the page is empty), or undefined when the state read with them invalidates the cached scope. */
function rememberedPage(
  store: StoreContext,
  cached: CachedScope,
  rows: RememberedRow[],
  head: ScopeStateRow | undefined,
  def: SearchEntityDef,
  query: SearchQuery,
  identity: QueryIdentity,
  walk = false,
): RememberedPage | undefined {
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
    const doc = projectDocument(store.dialect.parseRecord(r.record), def);
    data.push(query.fields === undefined ? doc : projectFields(doc, query.fields));
    last = r;
  }
  const cursor = more ? encodeCursor(store.secret, identity.fingerprint(), { values: walk ? [last!.k0 ?? null] : [], rid: Number(last!.rid) }) : null;
  return { data, cursor, synced: noteState(store, cached, head) };
}

/** Record a scope's state as read with a search; returns its synced_at as ISO text. */
export function noteState(store: StoreContext, cached: CachedScope, row: ScopeStateRow): string | null {
  const raw = row.s_synced_at instanceof Date ? row.s_synced_at.getTime() : row.s_synced_at;
  let synced = cached.synced;
  if (synced === undefined || synced.raw !== raw || Number(row.s_record_count) !== cached.recordCount) {
    cached.counts?.clear();
    cached.placed?.clear();
    cached.leafCounts?.clear();
    cached.pairWalks?.clear();
  }
  cached.recordCount = Number(row.s_record_count);
  if (synced === undefined || synced.raw !== raw) synced = cached.synced = { raw, iso: store.dialect.parseTime(row.s_synced_at) };
  return synced.iso;
}
