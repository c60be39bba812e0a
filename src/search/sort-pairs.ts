/**
 * Sort pairs (schema.ts, 0004 and 0007): which pair a sorted walk or an `any` can read instead
 * of an index, and their building in the background once a search shows one is needed.
 */
import { sql } from 'kysely';
import { elementPath } from './compile-elements.ts';
import { compileConjuncts } from './compile.ts';
import { elementPairSort, KEYLESS_PAIR } from './dialect.ts';
import { andPreds, pairKeyCandidates, type CompileContext, type Pred } from './predicates.ts';
import type { FieldRef, Filter } from './query.ts';
import type { CachedScope, StoreContext } from './store-context.ts';

/**
 * Sort pairs (schema.ts, 0004) a scope may have, keyed, key-less and element pairs alike: a sort
 * pair costs one row per record holding both fields (the sort field, for a key-less pair), with
 * its signature, bits, a copy of the record (0006) and two B-tree entries (about 1,200 B per
 * record on PostgreSQL with the benchmark's contacts, see docs/search.md), so at most 4 pairs,
 * 4.8 kB a record; an element pair (0007) one row per element holding both fields, without
 * signature or copy (88 B per record for the benchmark's tags).
 */
const MAX_SORT_PAIRS = 4;

/**
 * The sort pair (schema.ts, 0004) a walk of the sort field `sortField` can take instead: one
 * whose key field has an equality at the top level of `rest` (the filter without the sort
 * field's own conditions), with that value and the checks of the rest of the filter. When the
 * scope has no such pair, the first candidate's pair is built in the background (buildPair),
 * and this walk takes the sort field's index. A pair is learned from the search that needs it:
 * the planner chose to walk although the equality could list its records, so that value is
 * common and the walk examines many records without it. With no condition but on the sort
 * field (`rest` undefined), the sort field's key-less pair likewise (`keyless`: a `walk` shape,
 * whose key names it, see shapeOf, not a `pair` one).
 */
export async function pairWalk(
  store: StoreContext,
  scope: CachedScope,
  sortField: number,
  rest: Filter | undefined,
  ctx: CompileContext,
): Promise<{ pairId: number; value: string; filter: Pred; keyless?: true } | undefined> {
  if (!store.dialect.sortPairs) return undefined;
  const candidates = pairKeyCandidates(rest);
  if (candidates.length === 0 && rest !== undefined) return undefined;
  const pairs = await pairsOf(store, scope);
  if (rest === undefined) {
    // Only conditions on the sort field (or none): the sort field's key-less pair (key field
    // KEYLESS_PAIR, every row's key ''), whose rows carry the records, so a page reads no
    // record by its rid (range + sort at 1,000,000 contacts: 101 primary-key lookups a page).
    const pairId = pairs.get(`${KEYLESS_PAIR},${sortField}`);
    if (pairId !== undefined) return { pairId, value: '', filter: true, keyless: true };
    if (!scope.pairsFull && !store.db.isTransaction) buildPair(store, scope, KEYLESS_PAIR, sortField);
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
    const filter =
      c.rest === undefined
        ? true
        : andPreds(compileConjuncts(c.rest, { ...ctx, ...(store.dialect.name === 'postgres' ? { signature: true as const } : {}) }).map((x) => x.check));
    return { pairId, value: c.value, filter };
  }
  if (learn !== undefined && !scope.pairsFull && !store.db.isTransaction) buildPair(store, scope, learn, sortField);
  return undefined;
}

/**
 * Start building the element pair (elementPairSort) of an `any` whose condition is two
 * equalities, one on a string (the key; of two strings, the one with the lower field id, so
 * that both orders of a condition learn one pair, which pairRange reads either way), unless the
 * scope has it, has MAX_SORT_PAIRS pairs, or the search runs in a caller's transaction.
 */
export function learnElementPair(store: StoreContext, scope: CachedScope, ctx: CompileContext, array: FieldRef, items: Filter[]): void {
  if (ctx.pairs === undefined || scope.pairsFull || store.db.isTransaction) return;
  const [a, b] = items;
  if (a?.op !== 'eq' || b?.op !== 'eq') return;
  const idA = scope.fields.ids(elementPath(array, a.field), a.kind);
  const idB = scope.fields.ids(elementPath(array, b.field), b.kind);
  if (idA.length !== 1 || idB.length !== 1) return;
  const aKey = a.kind === 's' && (b.kind !== 's' || idA[0]! < idB[0]!);
  if (!aKey && b.kind !== 's') return;
  const [keyField, other] = aKey ? [idA[0]!, idB[0]!] : [idB[0]!, idA[0]!];
  if (keyField === other || ctx.pairs.has(`${keyField},${elementPairSort(other)}`)) return;
  buildPair(store, scope, keyField, elementPairSort(other));
}

/** The scope's pairs (CachedScope.pairs), read once. */
export async function pairsOf(store: StoreContext, scope: CachedScope): Promise<Map<string, number>> {
  if (scope.pairs === undefined) {
    const { rows } = await sql<{
      pair_id: number;
      key_field: number;
      sort_field: number;
    }>`SELECT pair_id, key_field, sort_field FROM search_pair_defs WHERE scope_id = ${scope.scopeId}`.execute(store.db);
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
function buildPair(store: StoreContext, scope: CachedScope, keyField: number, sortField: number): void {
  const key = `${scope.scopeId},${keyField},${sortField}`;
  if (store.building.has(key)) return;
  const postgres = store.dialect.name === 'postgres';
  const built = store.db
    .transaction()
    .execute(async (trx) => {
      const lock = postgres
        ? sql`SELECT scope_id FROM search_scopes WHERE scope_id = ${scope.scopeId} FOR UPDATE`
        : sql`UPDATE search_scopes SET record_count = record_count WHERE scope_id = ${scope.scopeId} RETURNING scope_id`;
      if ((await lock.execute(trx)).rows.length === 0) return undefined;
      const { rows } = await sql<{
        pair_id: number;
        key_field: number;
        sort_field: number;
      }>`SELECT pair_id, key_field, sort_field FROM search_pair_defs WHERE scope_id = ${scope.scopeId}`.execute(trx);
      const found = rows.find((r) => Number(r.key_field) === keyField && Number(r.sort_field) === sortField);
      if (found !== undefined) return { id: Number(found.pair_id), count: rows.length };
      if (rows.length >= MAX_SORT_PAIRS) return { id: undefined, count: rows.length };
      const created = await sql<{
        pair_id: number;
      }>`INSERT INTO search_pair_defs (scope_id, key_field, sort_field) VALUES (${scope.scopeId}, ${keyField}, ${sortField}) RETURNING pair_id`.execute(trx);
      const id = Number(created.rows[0]!.pair_id);
      await store.dialect.fillPair(trx, id, keyField, sortField);
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
    .finally(() => store.building.delete(key));
  store.building.set(key, built);
}
