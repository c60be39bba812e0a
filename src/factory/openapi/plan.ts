/**
 * Which entities a description offers: collection/item path pairs, RPC-style methods grouped by
 * their prefix, or the resources a simulator sidecar declares.
 */
import { SwitchboardError } from '../../errors/index.ts';
import { declaredOperations, type Sidecar } from '../../simulator/sidecar.ts';
import { safeName } from '../scaffold.ts';
import { betterItemKey } from './id-like.ts';
import { isFragmentPath, pathShapes, sharedPrefix } from '../../simulator/openapi/path-shape.ts';
import { isObj, merged, type Operation, type Parameter, type PathItem } from './document.ts';

export interface EntityPlan {
  name: string;
  collection?: string;
  item?: string;
  itemParam?: string;
  ops: Partial<Record<'list' | 'get' | 'create' | 'update', { path: string; method: string; op: Operation; pathParams: Parameter[] }>>;
  /** RPC methods (`/x.list`): ids and parents are query or body params, not path segments. */
  rpc?: boolean;
  /** From the sidecar: the response property holding one record, and the record's id field. */
  recordKey?: string;
  idField?: string;
  /** Other item paths of the collection, keyed by something less like the id (a number, a code): not scaffolded. */
  otherItems?: string[];
}

/** RPC verbs (`/conversations.list`) and the action each is. */
const RPC_VERBS: Record<string, 'list' | 'get' | 'create' | 'update'> = {
  list: 'list',
  info: 'get',
  get: 'get',
  retrieve: 'get',
  create: 'create',
  add: 'create',
  update: 'update',
  edit: 'update',
};
const RPC_PATH = /^\/([a-z][A-Za-z0-9_]*(?:\.[a-z][A-Za-z0-9_]*)*)\.([a-z][A-Za-z]*)$/;

/**
 * Collection/item path pairs → entities with the operations they offer; RPC-style methods
 * (`/x.list`, `/x.info`...) grouped by their prefix, or as the sidecar's resources declare them.
 */
export function planEntities(paths: Record<string, PathItem>, declared: Sidecar['resources'] = {}): EntityPlan[] {
  const rpc = new Map<string, EntityPlan>();
  const claimed = new Set<string>();
  declaredEntities(paths, declared, rpc, claimed);
  rpcEntities(paths, declared, rpc, claimed);
  const byCollection = restEntities(paths, claimed);
  return named(rpc, byCollection);
}

/** The sidecar's resources: each kind's first declared operation; every declared one is claimed. */
function declaredEntities(
  paths: Record<string, PathItem>,
  declared: NonNullable<Sidecar['resources']>,
  rpc: Map<string, EntityPlan>,
  claimed: Set<string>,
): void {
  const opAt = (key: string): { path: string; method: string; op: Operation; pathParams: Parameter[] } | undefined => {
    const [method, path] = key.split(' ') as [string, string];
    const item = paths[path];
    const op = item?.[method.toLowerCase() as 'get'];
    return item === undefined || op === undefined ? undefined : { path, method, op, pathParams: merged(item, op) };
  };
  for (const [name, r] of Object.entries(declared)) {
    const e: EntityPlan = {
      name: safeName(name),
      ops: {},
      rpc: true,
      ...(r.record !== undefined ? { recordKey: r.record } : {}),
      ...(r.id_field !== undefined ? { idField: r.id_field } : {}),
    };
    for (const kind of ['list', 'get', 'create', 'update'] as const) {
      const key = declaredOperations(r, kind)[0];
      if (key === undefined) continue;
      const found = opAt(key);
      if (found === undefined) throw new SwitchboardError('invalid_params', `sidecar resources.${name}.${kind}: the description has no operation ${key}`);
      e.ops[kind] = found;
      for (const k of declaredOperations(r, kind)) claimed.add(k);
    }
    if (Object.keys(e.ops).length > 0) rpc.set(e.name, e);
  }
}

/** RPC-style methods (`/x.list`, `/x.info`...) not claimed by the sidecar, grouped by their prefix. */
function rpcEntities(paths: Record<string, PathItem>, declared: NonNullable<Sidecar['resources']>, rpc: Map<string, EntityPlan>, claimed: Set<string>): void {
  for (const [path, item] of Object.entries(paths)) {
    const m = RPC_PATH.exec(path);
    const kind = m === null ? undefined : RPC_VERBS[m[2] as string];
    if (m === null || kind === undefined || !isObj(item)) continue;
    const method = kind === 'list' || kind === 'get' ? (item.get ? 'GET' : item.post ? 'POST' : undefined) : item.post ? 'POST' : item.get ? 'GET' : undefined;
    if (method === undefined || claimed.has(`${method} ${path}`)) continue;
    const name = safeName((m[1] as string).split('.').join('_'));
    if (declared[name] !== undefined) continue;
    const e = rpc.get(name) ?? { name, ops: {}, rpc: true };
    const op = item[method.toLowerCase() as 'get'] as Operation;
    e.ops[kind] ??= { path, method, op, pathParams: merged(item, op) };
    rpc.set(name, e);
    claimed.add(`${method} ${path}`);
  }
}

/** Collection/item path pairs (a composite key's item matched to its collection), by collection path. */
function restEntities(paths: Record<string, PathItem>, claimed: Set<string>): Map<string, EntityPlan> {
  const byCollection = new Map<string, EntityPlan>();
  const plan = (collection: string): EntityPlan => {
    let e = byCollection.get(collection);
    if (e === undefined) {
      const last = collection.split('/').filter(Boolean).at(-1) ?? 'root';
      e = { name: safeName(last), collection, ops: {} };
      byCollection.set(collection, e);
    }
    return e;
  };
  // A suffix on every path (.json) and #fragment pseudo-paths are no part of a resource's path;
  // a fragment's operations come last and only add what the plain path lacks.
  const shape = pathShapes(Object.keys(paths));
  const ordered = Object.entries(paths).sort(([a], [b]) => Number(isFragmentPath(a)) - Number(isFragmentPath(b)));
  for (const [path, item] of ordered) {
    if (!isObj(item) || [...claimed].some((k) => k.endsWith(` ${path}`))) continue;
    const fragment = isFragmentPath(path);
    const put = (e: EntityPlan, kind: keyof EntityPlan['ops'], method: string, op: Operation | undefined): void => {
      if (op !== undefined && (!fragment || e.ops[kind] === undefined)) e.ops[kind] = { path, method, op, pathParams: merged(item, op) };
    };
    const segs = shape(path).split('/').filter(Boolean);
    const last = segs.at(-1);
    if (last === undefined) continue;
    const isParam = /^\{[^}]+\}$/.test(last);
    if (!isParam) {
      const e = plan(shape(path));
      put(e, 'list', 'GET', item.get);
      put(e, 'create', 'POST', item.post);
    } else {
      let collection = `/${segs.slice(0, -1).join('/')}`;
      let itemParam = last.slice(1, -1);
      if (segs.length < 2) continue;
      if (/^\{[^}]+\}$/.test(segs.at(-2) ?? '')) {
        // A composite key (/repos/{owner}/{repo}): the item of a collection named like the word
        // before the keys, found elsewhere (/user/repos; with several, the one with fewest params).
        const word = segs.findLastIndex((s) => !/^\{[^}]+\}$/.test(s));
        const name = segs[word];
        if (word < 0 || name === undefined) continue;
        const params = (p: string): number => (p.match(/\{/g) ?? []).length;
        const candidates = Object.keys(paths)
          .filter((p) => p !== path && shape(p).split('/').at(-1) === name && isObj(paths[p]) && (paths[p].get !== undefined || paths[p].post !== undefined))
          .sort((a, b) => params(a) - params(b) || a.length - b.length);
        const best = candidates[0];
        if (best === undefined || (candidates[1] !== undefined && params(candidates[1]) === params(best))) continue;
        collection = shape(best);
        itemParam = segs
          .slice(word + 1)
          .map((s) => s.slice(1, -1))
          .join(',');
      }
      const e = plan(collection);
      if (!fragment || e.item === undefined) {
        // Two item paths (/contacts/{ContactID}, /contacts/{ContactNumber}): the one keyed by the id.
        if (!fragment && e.item !== undefined && e.itemParam !== undefined) {
          const [kept, dropped] = betterItemKey(e.itemParam, itemParam, e.name) ? [e.item, path] : [path, e.item];
          e.otherItems = [...(e.otherItems ?? []), dropped];
          if (kept !== path) continue;
          delete e.ops.get;
          delete e.ops.update;
        }
        [e.item, e.itemParam] = [path, itemParam];
      }
      put(e, 'get', 'GET', item.get);
      // PATCH, else PUT, else POST on the item itself (Stripe: POST /v1/customers/{customer} updates).
      put(e, 'update', item.patch ? 'PATCH' : item.put ? 'PUT' : 'POST', item.patch ?? item.put ?? item.post);
    }
  }
  // A search path beside an item path (/project/search next to /project/{projectIdOrKey}) is the
  // entity's list when its collection path has no GET (Jira's /rest/api/3/project/search); a POST
  // search when the path has no GET (Apollo's POST /contacts/search, its filters and page in the body).
  for (const [collection, e] of [...byCollection]) {
    const search = e.ops.list ?? e.ops.create;
    if (!collection.endsWith('/search') || search === undefined || e.item !== undefined) continue;
    const parent = byCollection.get(collection.slice(0, -'/search'.length));
    if (parent === undefined || parent.ops.list !== undefined || parent.item === undefined) continue;
    parent.ops.list = search;
    byCollection.delete(collection);
  }
  return byCollection;
}

/** The entities with a list or a get, names qualified where they clash, twins merged. */
function named(rpc: Map<string, EntityPlan>, byCollection: Map<string, EntityPlan>): EntityPlan[] {
  const entities = [...rpc.values(), ...[...byCollection.values()].filter((e) => !rpc.has(e.name))].filter(
    (e) => e.ops.list !== undefined || e.ops.get !== undefined,
  );
  // Same last segment under different parents (/a/{id}/notes, /b/{id}/notes): qualify by the parent,
  // not by the static segments every path starts with (Okta's /api/v1: /api/v1/users stays users).
  const counts = new Map<string, number>();
  for (const e of entities) counts.set(e.name, (counts.get(e.name) ?? 0) + 1);
  const prefix = sharedPrefix(entities.map((e) => (e.collection ?? '').split('/').filter((s) => s !== '')));
  for (const e of entities) {
    if ((counts.get(e.name) ?? 0) < 2) continue;
    const statics = (e.collection ?? '')
      .split('/')
      .filter((s) => s !== '')
      .slice(prefix)
      .filter((s) => !s.startsWith('{'));
    if (statics.length > 1) e.name = safeName(statics.slice(-2).join('_'));
  }
  // Still the same name (/r/{id}/issues/comments with items, /r/{id}/issues/{n}/comments that only
  // lists and creates under one issue): one entity, the one with items completed by the other's
  // create (and list, when it has none).
  const out: EntityPlan[] = [];
  for (const e of entities) {
    const twin = out.find((o) => o.name === e.name);
    if (twin === undefined) {
      out.push(e);
      continue;
    }
    const [base, other] = twin.item !== undefined || e.item === undefined ? [twin, e] : [e, twin];
    if (other.item !== undefined) {
      out.push(e); // both have items: left apart (their names clash; --entities picks the first)
      continue;
    }
    for (const k of ['list', 'create'] as const) if (base.ops[k] === undefined && other.ops[k] !== undefined) base.ops[k] = other.ops[k];
    if (base !== twin) out[out.indexOf(twin)] = base;
  }
  return out;
}
