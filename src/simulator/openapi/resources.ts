/**
 * The resources of an OpenAPI description: collection/item path pairs (nested and composite ones
 * included), the sidecar's RPC-style declarations, and the resources only the sidecar names; each
 * operation classified as a list, create, get, update, delete or other action of one of them.
 */
import type { Description, Json, Operation } from '../description.ts';
import { declaredOperations, RESOURCE_ACTIONS, type ResourceDeclaration, type Sidecar } from '../sidecar.ts';
import { getPath } from '../core/values.ts';
import { idFieldFor } from './ids.ts';
import { pathShapes, sharedPrefix } from './path-shape.ts';
import { envelopeOf, exampleOf, listedEnvelopeOf, listKeyOf, pointerOfPath, pointerOfProperty, propertiesOf, singularOf } from './schema.ts';
import type { Classified, Kind, Resource } from './types.ts';

type CompositeItems = Map<string, { resource: string; params: string[] }>;

/** The description's resources by name, and every operation's classification. */
export function buildResources(d: Description, sidecar: Sidecar): { resources: Map<string, Resource>; classified: Map<string, Classified> } {
  // Paths by their shape: without a suffix every path has (.json) or a #fragment (path-shape.ts).
  const shape = pathShapes(d.operations.map((o) => o.path));
  const sp = (o: Operation): string => shape(o.path);
  const index = itemPaths(d, sp);
  const { itemNames } = index;
  const classified = new Map(d.operations.map((op) => [op.key, classify(d, op, index, sp)]));
  const resources = new Map<string, Resource>();
  declareRpcResources(d, sidecar, itemNames, classified, resources);
  for (const [name, idParam] of itemNames) {
    if (resources.has(name)) continue;
    const getOp = d.operations.find((o) => o.method === 'GET' && classified.get(o.key)?.resource === name && classified.get(o.key)?.kind === 'get');
    const recordRef = recordPointer(d, getOp?.responseRef, name);
    const recordProps = propertiesOf(d, d.schemaAt(recordRef));
    const props = Object.keys(recordProps);
    const stripped = idParam.replace(/^.*?_(?=[a-z]+$)/, '');
    // The id named the vendor's way ({Sid} → sid, {InvoiceID} → InvoiceID), else a usual id field.
    const idField =
      sidecar.resources?.[name]?.id_field ??
      compositeIdField(d, recordProps, idParam) ??
      idFieldFor(idParam, props, singularOf(name)) ??
      [stripped, 'id', 'gid', 'uuid'].find((f) => props.includes(f)) ??
      'id';
    resources.set(name, { name, idField, recordRef, records: new Map(), created: 0, lookup: sidecar.resources?.[name]?.lookup ?? [] });
  }
  for (const [name, listKey] of index.listOnly) {
    if (resources.has(name)) continue;
    const listOp = d.operations.find((o) => o.key === listKey) as Operation;
    const recordRef = itemsPointer(d, listOp.responseRef, name);
    const props = Object.keys(propertiesOf(d, d.schemaAt(recordRef)));
    const idField =
      sidecar.resources?.[name]?.id_field ?? ['id', 'gid', 'uuid'].find((f) => props.includes(f)) ?? props.find((f) => /(^|_)id$/i.test(f)) ?? 'id';
    resources.set(name, { name, idField, recordRef, records: new Map(), created: 0, lookup: sidecar.resources?.[name]?.lookup ?? [] });
  }
  sidecarResources(d, sidecar, classified, resources);
  checkResources(d, sidecar, resources);
  return { resources, classified };
}

/**
 * A composite id's part the item path names: a record whose `id` is an object of ids
 * (`{workspace_id, object_id, record_id}`) is keyed by the one `{record_id}` names, or `{list}`
 * as `list_id`: the dotted field `id.record_id`.
 */
function compositeIdField(d: Description, recordProps: Record<string, Json>, idParam: string): string | undefined {
  const id = recordProps['id'];
  if (id === undefined) return undefined;
  const parts = Object.keys(propertiesOf(d, id));
  const part = [idParam, `${idParam}_id`].find((p) => parts.includes(p));
  return part === undefined ? undefined : `id.${part}`;
}

const ID_FIELDS: ReadonlySet<string> = new Set(['id', 'gid', 'uuid']);

/** The record's schema in a get's answer: the answer, its envelope's value, or the items of a one-record array (`{"Invoices": [{...}]}`, `{data: [{id, ...}], info}`). */
function recordPointer(d: Description, responseRef: string | undefined, name: string): string | undefined {
  if (responseRef === undefined) return undefined;
  const env = envelopeOf(d, d.schemaAt(responseRef), name);
  if (env !== undefined) return pointerOfPath(d, responseRef, env);
  const listed = listedEnvelopeOf(d, d.schemaAt(responseRef), name, ID_FIELDS);
  const arrayRef = listed === undefined ? undefined : pointerOfProperty(d, responseRef, listed);
  if (arrayRef === undefined) return responseRef;
  const items = d.resolve<Json>(d.at(arrayRef)).items as Json | undefined;
  return typeof items?.$ref === 'string' ? items.$ref : `${arrayRef}/items`;
}

/** The pointer of a list answer's items (its records). */
function itemsPointer(d: Description, responseRef: string | undefined, name: string): string | undefined {
  const key = listKeyOf(d, d.schemaAt(responseRef), name);
  const arrayRef = responseRef === undefined || key === undefined ? undefined : key === '' ? responseRef : pointerOfPath(d, responseRef, key);
  if (arrayRef === undefined) return undefined;
  const items = d.resolve<Json>(d.at(arrayRef)).items as Json | undefined;
  return typeof items?.$ref === 'string' ? items.$ref : `${arrayRef}/items`;
}

const isParam = (seg: string | undefined): boolean => seg?.startsWith('{') === true;

/** Item paths' resources and where their collections are (PathIndex), composite item paths (several ids after a word). */
interface PathIndex {
  /** resource → its item path's id param. */
  itemNames: Map<string, string>;
  compositeItems: CompositeItems;
  /** Collections (params unnamed) of a word whose item paths sit under several (a list's members, a segment's members): each its own resource. */
  qualified: Map<string, string>;
  /** Nested collections without item paths of their own (a folder's items): resource → its list operation's key. */
  listOnly: Map<string, string>;
}

const unnamed = (segs: string[]): string => segs.join('/').replace(/\{[^}]+\}/g, '{}');

function itemPaths(d: Description, sp: (o: Operation) => string): PathIndex {
  const itemNames = new Map<string, string>();
  const segsOf = (o: Operation): string[] =>
    sp(o)
      .split('/')
      .filter((s) => s !== '');
  // A word and one id that only lists, under which a second id names the item (Bitbucket's
  // GET /repositories/{workspace} beside /repositories/{workspace}/{repo_slug}), is no item path:
  // the longer one is the item, named by both ids, and the shorter its collection.
  const shapes = new Map<string, Set<string>>();
  for (const o of d.operations) shapes.set(unnamed(segsOf(o)), (shapes.get(unnamed(segsOf(o))) ?? new Set()).add(o.method));
  const listsUnderId = (segs: string[]): boolean =>
    [...(shapes.get(unnamed(segs)) ?? [])].every((m) => m === 'GET') && shapes.get(`${unnamed(segs)}/{}`)?.has('GET') === true;
  const isItem = (segs: string[]): boolean => isParam(segs.at(-1)) && segs.length > 1 && !isParam(segs.at(-2)) && !(segs.length === 2 && listsUnderId(segs));
  // A word whose item paths sit under different collections is one resource per collection, named by the word before it too.
  const collections = new Map<string, Set<string>>();
  for (const op of d.operations) {
    const segs = segsOf(op);
    if (isItem(segs)) collections.set(segs.at(-2)!, (collections.get(segs.at(-2)!) ?? new Set()).add(unnamed(segs.slice(0, -1))));
  }
  const qualified = new Map<string, string>();
  // The static segments every path starts with (Okta's /api/v1) name no parent: /api/v1/users stays users beside /api/v1/groups/{id}/users.
  const prefix = sharedPrefix(d.operations.map((o) => segsOf(o)));
  for (const [word, shapes] of collections) {
    if (shapes.size < 2) continue;
    for (const shape of shapes)
      qualified.set(
        shape,
        shape
          .split('/')
          .slice(prefix)
          .filter((s) => s !== '{}')
          .slice(-2)
          .join('_') || word,
      );
  }
  for (const op of d.operations) {
    const segs = segsOf(op);
    if (isItem(segs)) itemNames.set(qualified.get(unnamed(segs.slice(0, -1))) ?? segs.at(-2)!, segs.at(-1)!.slice(1, -1));
  }
  // Item paths with several ids after a word (/repos/{owner}/{repo}) whose collection is elsewhere
  // (/user/repos): the resource named by the word, its records found by the ids' key fields.
  const compositeItems = new Map<string, { resource: string; params: string[] }>();
  for (const op of d.operations) {
    const segs = segsOf(op);
    if (!isParam(segs[segs.length - 1]) || !isParam(segs[segs.length - 2])) continue;
    let word = segs.length - 1;
    while (word >= 0 && isParam(segs[word])) word--;
    const name = segs[word];
    if (word !== 0 || name === undefined || itemNames.has(name)) continue;
    const hasCollection = d.operations.some(
      (o) =>
        sp(o) !== sp(op) &&
        (o.method === 'GET' || o.method === 'POST') &&
        (segsOf(o).at(-1) === name || (segs.length === 3 && unnamed(segsOf(o)) === unnamed(segs.slice(0, -1)) && listsUnderId(segs.slice(0, -1)))),
    );
    if (hasCollection) compositeItems.set(sp(op), { resource: name, params: segs.slice(word + 1).map((x) => x.slice(1, -1)) });
  }
  for (const { resource, params } of compositeItems.values()) itemNames.set(resource, params.join(','));
  // A nested collection with no item path (/folders/{folder_id}/items) lists records of its own under its parent's records.
  const itemShapes = new Set(d.operations.map(segsOf).filter(isItem).map(unnamed));
  const listOnly = new Map<string, string>();
  for (const op of d.operations) {
    const segs = segsOf(op);
    const word = segs.at(-1);
    if (
      op.method !== 'GET' ||
      word === undefined ||
      isParam(word) ||
      !isParam(segs.at(-2)) ||
      itemNames.has(word) ||
      collections.has(word) ||
      listOnly.has(word)
    )
      continue;
    if (!itemShapes.has(unnamed(segs.slice(0, -1)))) continue;
    const key = listKeyOf(d, d.schemaAt(op.responseRef), word);
    const items = key === undefined ? undefined : key === '' ? d.schemaAt(op.responseRef)?.items : propertiesOf(d, d.schemaAt(op.responseRef))[key]?.items;
    if (items !== undefined && Object.keys(propertiesOf(d, d.resolve(items))).length > 0) listOnly.set(word, op.key);
  }
  return { itemNames, compositeItems, qualified, listOnly };
}

/** The resource a collection path lists or creates: its own qualified one, else the resource of its word. */
function collectionResource(segs: string[], index: PathIndex): string | undefined {
  const word = segs.at(-1) ?? '';
  const own = index.qualified.get(unnamed(segs));
  if (own !== undefined) return own;
  if ([...index.qualified.keys()].some((shape) => shape.split('/').at(-1) === word)) return undefined;
  return index.itemNames.has(word) || index.listOnly.has(word) ? word : undefined;
}

function classify(d: Description, op: Operation, index: PathIndex, sp: (o: Operation) => string): Classified {
  const { itemNames, compositeItems } = index;
  const segs = sp(op)
    .split('/')
    .filter((s) => s !== '');
  const last = segs[segs.length - 1] ?? '';
  const prev = segs[segs.length - 2];
  const composite = compositeItems.get(sp(op));
  if (composite !== undefined) {
    // A POST beside a PUT creates the record the path's ids name (Bitbucket's POST /repositories/{workspace}/{repo_slug}).
    const postCreates = op.method === 'POST' && d.operations.some((o) => sp(o) === sp(op) && o.method === 'PUT');
    const kind: Kind =
      op.method === 'GET'
        ? 'get'
        : op.method === 'PUT' || op.method === 'PATCH'
          ? 'update'
          : op.method === 'DELETE'
            ? 'delete'
            : postCreates
              ? 'create'
              : 'action';
    return { kind, resource: composite.resource, keyParams: composite.params };
  }
  const itemOf = prev === undefined || isParam(prev) ? undefined : (index.qualified.get(unnamed(segs.slice(0, -1))) ?? prev);
  if (last.startsWith('{') && itemOf !== undefined && itemNames.get(itemOf) === last.slice(1, -1)) {
    // POST on the item path updates it when the path has no PUT or PATCH (e.g. POST /v1/customers/{customer}).
    const postUpdates = op.method === 'POST' && !d.operations.some((o) => sp(o) === sp(op) && (o.method === 'PUT' || o.method === 'PATCH'));
    const kind: Kind =
      op.method === 'GET' ? 'get' : op.method === 'PUT' || op.method === 'PATCH' || postUpdates ? 'update' : op.method === 'DELETE' ? 'delete' : 'action';
    return { kind, resource: itemOf, idParam: last.slice(1, -1) };
  }
  // A PUT or PATCH on a word after an item path, where nothing is read (Lever's PUT /opportunities/{opportunity}/stage):
  // an update of that item with the body's fields.
  const owner = segs[segs.length - 3];
  if ((op.method === 'PUT' || op.method === 'PATCH') && prev !== undefined && isParam(prev) && !isParam(last) && owner !== undefined && !isParam(owner)) {
    const ownerOf = index.qualified.get(unnamed(segs.slice(0, -2))) ?? owner;
    const read = d.operations.some((o) => sp(o) === sp(op) && o.method === 'GET');
    // A word that names an object field of the record (Graph's listItem /fields) is that field's update: the body merges into it, the answer is it.
    const itemGet = d.operations.find((o) => o.method === 'GET' && sp(o) === `/${segs.slice(0, -1).join('/')}`);
    const field = objectField(d, itemGet, ownerOf, last);
    if (!read && itemNames.get(ownerOf) === prev.slice(1, -1))
      return { kind: 'update', resource: ownerOf, idParam: prev.slice(1, -1), ...(field !== undefined ? { field } : {}) };
  }
  const listed = last.startsWith('{') ? undefined : collectionResource(segs, index);
  if (listed !== undefined && (op.method === 'GET' || op.method === 'POST')) return { kind: op.method === 'GET' ? 'list' : 'create', resource: listed };
  // A search path beside an item path lists that resource when its collection path has no GET
  // (e.g. GET /rest/api/3/project/search beside /project/{projectIdOrKey}), as init reads it; so
  // does a POST query, its filter and page in the body (POST /objects/{object}/records/query).
  const parentPath = `/${segs.slice(0, -1).join('/')}`;
  if (
    ((last === 'search' && op.method === 'GET') || (last === 'query' && op.method === 'POST')) &&
    prev !== undefined &&
    itemNames.has(prev) &&
    !d.operations.some((o) => o.method === 'GET' && sp(o) === parentPath)
  )
    return { kind: 'list', resource: prev };
  return { kind: 'action' };
}

/** `word` when the resource's record (its item get's answer) declares an object field of that name. */
function objectField(d: Description, getOp: Operation | undefined, resource: string, word: string): string | undefined {
  const prop = propertiesOf(d, d.schemaAt(recordPointer(d, getOp?.responseRef, resource)))[word];
  if (prop === undefined) return undefined;
  const resolved = d.resolve<Json>(prop);
  const alternatives = [resolved, ...((resolved.anyOf as Json[] | undefined) ?? []).map((x) => d.resolve<Json>(x))];
  return alternatives.some((x) => x.type === 'object' || x.properties !== undefined || x.allOf !== undefined) ? word : undefined;
}

/**
 * RPC-style methods (/conversations.list) are no collection/item pairs: the sidecar says which
 * operation lists, gets, creates, updates or deletes which resource.
 */
function declareRpcResources(
  d: Description,
  sidecar: Sidecar,
  itemNames: Map<string, string>,
  classified: Map<string, Classified>,
  resources: Map<string, Resource>,
): void {
  const declared = Object.entries(sidecar.resources ?? {}).filter(([, r]) => RESOURCE_ACTIONS.some((a) => declaredOperations(r, a).length > 0));
  for (const [name, r] of declared) {
    if (r.parent !== undefined && !declared.some(([n]) => n === r.parent?.resource) && !itemNames.has(r.parent.resource))
      throw new Error(`sidecar: resources.${name}.parent names no resource ${r.parent.resource}`);
    for (const kind of RESOURCE_ACTIONS) {
      for (const key of declaredOperations(r, kind)) {
        if (!d.operations.some((o) => o.key === key)) throw new Error(`sidecar: resources.${name}.${kind}: the description has no operation ${key}`);
        const idParams = r.id_param === undefined ? [] : Array.isArray(r.id_param) ? r.id_param : [r.id_param];
        classified.set(key, {
          kind,
          resource: name,
          ...(idParams.length > 0 ? { idParam: idParams[0], ...(idParams.length > 1 ? { idParams } : {}) } : {}),
          rpc: true,
        });
      }
    }
  }
  for (const [name, r] of declared) resources.set(name, declaredResource(d, name, r));
}

function declaredResource(d: Description, name: string, r: ResourceDeclaration): Resource {
  const opOf = (kind: (typeof RESOURCE_ACTIONS)[number]): Operation | undefined => d.operations.find((o) => declaredOperations(r, kind)[0] === o.key);
  // The record's schema: the get's (or create's) response property `record`, else the list's items.
  const one = opOf('get') ?? opOf('create') ?? opOf('update');
  let recordRef =
    one?.responseRef === undefined
      ? undefined
      : r.record !== undefined
        ? (pointerOfProperty(d, one.responseRef, r.record) ?? one.responseRef)
        : envelopeOf(d, d.schemaAt(one.responseRef)) === undefined
          ? one.responseRef
          : pointerOfPath(d, one.responseRef, envelopeOf(d, d.schemaAt(one.responseRef)) as string);
  // A `record` property that is an array holds the record as its one item ({signers: [{...}]}).
  if (recordRef !== undefined && r.record !== undefined && d.resolve(d.schemaAt(recordRef)).type === 'array') recordRef = `${recordRef}/items`;
  const listOp = opOf('list');
  if (recordRef === undefined && listOp?.responseRef !== undefined) {
    const key = listKeyOf(d, d.schemaAt(listOp.responseRef), name);
    const arr = key === undefined || key === '' ? undefined : pointerOfPath(d, listOp.responseRef, key);
    if (arr !== undefined) recordRef = `${arr}/items`;
  }
  // The vendor's own examples of records: the list's items, then the one of each other method.
  const examples: Json[] = [];
  const listKey = listOp === undefined ? undefined : listKeyOf(d, d.schemaAt(listOp.responseRef), name);
  const listed = listOp === undefined || listKey === undefined ? undefined : listKey === '' ? exampleOf(d, listOp) : getPath(exampleOf(d, listOp), listKey);
  if (Array.isArray(listed)) examples.push(...listed.filter((x): x is Json => x !== null && typeof x === 'object' && !Array.isArray(x)));
  for (const kind of ['get', 'create', 'update'] as const) {
    const op = opOf(kind);
    const body = op === undefined ? undefined : (exampleOf(d, op) as Json | undefined);
    const one = body === undefined ? undefined : r.record !== undefined ? body[r.record] : body;
    if (one !== null && typeof one === 'object' && !Array.isArray(one)) examples.push(one as Json);
  }
  const props = Object.keys(propertiesOf(d, d.schemaAt(recordRef)));
  const idField =
    r.id_field ??
    [[r.id_param ?? []].flat()[0], 'id', 'gid', 'uuid'].find((f) => f !== undefined && (props.includes(f) || examples.some((e) => f in e))) ??
    'id';
  return { name, idField, recordRef, records: new Map(), created: 0, lookup: r.lookup ?? [], declared: r, ...(examples.length > 0 ? { examples } : {}) };
}

/**
 * What the sidecar adds: resources no item path implies (by their get, or by their lists: a
 * collection listed per parent), gets by a query parameter, and more operations that list a
 * resource (exports).
 */
function sidecarResources(d: Description, sidecar: Sidecar, classified: Map<string, Classified>, resources: Map<string, Resource>): void {
  const opByKey = (key: string, what: string): Operation => {
    const op = d.operations.find((o) => o.key === key);
    if (op === undefined) throw new Error(`simulator sidecar: resources.${what} names ${key}, which is not an operation of the description`);
    return op;
  };
  for (const [name, rs] of Object.entries(sidecar.resources ?? {})) {
    // a vendor's get by a query parameter ({operation, id_query}); an RPC get (an operation key) is declared above.
    if (rs.get !== undefined && typeof rs.get === 'object' && !Array.isArray(rs.get)) {
      const getOp = opByKey(rs.get.operation, `${name}.get`);
      if (!resources.has(name)) {
        const env = envelopeOf(d, d.schemaAt(getOp.responseRef), name);
        const recordRef = getOp.responseRef === undefined ? undefined : env === undefined ? getOp.responseRef : pointerOfPath(d, getOp.responseRef, env);
        resources.set(name, { name, idField: rs.id_field ?? rs.get.id_query ?? 'id', recordRef, records: new Map(), created: 0, lookup: rs.lookup ?? [] });
      }
      // Without id_query, the path's parameters name the record by its key fields (resources.<name>.key).
      const byPath = getOp.params.filter((p) => p.in === 'path').map((p) => p.name);
      classified.set(
        getOp.key,
        rs.get.id_query !== undefined ? { kind: 'get', resource: name, idQuery: rs.get.id_query } : { kind: 'get', resource: name, keyParams: byPath },
      );
    }
    for (const key of rs.lists ?? []) {
      const listOp = opByKey(key, `${name}.lists`);
      if (!resources.has(name)) {
        // No item path and no get: the records are the items of the list's array.
        const arrayKey = listKeyOf(d, d.schemaAt(listOp.responseRef), name);
        const arrayRef =
          listOp.responseRef === undefined || arrayKey === undefined
            ? undefined
            : arrayKey === ''
              ? listOp.responseRef
              : pointerOfPath(d, listOp.responseRef, arrayKey);
        const items = arrayRef === undefined ? undefined : (d.at(arrayRef).items as Json | undefined);
        if (items === undefined || arrayRef === undefined) throw new Error(`simulator sidecar: resources.${name}.lists: ${key} answers no array of records`);
        const recordRef = typeof items.$ref === 'string' ? items.$ref : `${arrayRef}/items`;
        resources.set(name, { name, idField: rs.id_field ?? 'id', recordRef, records: new Map(), created: 0, lookup: rs.lookup ?? [] });
      }
      classified.set(key, { kind: 'list', resource: name });
    }
  }
}

function checkResources(d: Description, sidecar: Sidecar, resources: Map<string, Resource>): void {
  for (const [key, o] of Object.entries(sidecar.operations ?? {}))
    for (const name of Object.values(o.collections ?? {}))
      if (!resources.has(name)) throw new Error(`simulator sidecar: operations.${key}.collections names no resource ${name}`);
  for (const [name, rs] of Object.entries(sidecar.resources ?? {})) {
    if (!resources.has(name))
      throw new Error(`simulator sidecar: resources.${name}: the description has no resource ${name} (it has ${[...resources.keys()].join(', ') || 'none'})`);
    if (rs.parent !== undefined && !resources.has(rs.parent.resource))
      throw new Error(`simulator sidecar: resources.${name}.parent names no resource ${rs.parent.resource}`);
    if (
      rs.soft_delete !== undefined &&
      rs.template === undefined &&
      !Object.keys(propertiesOf(d, d.schemaAt(resources.get(name)?.recordRef))).includes(rs.soft_delete.field)
    ) {
      throw new Error(`simulator sidecar: resources.${name}.soft_delete.field: the record has no field ${rs.soft_delete.field}`);
    }
  }
}
