/**
 * The store's answers to a resource's operations (a request that passed every check): list, create,
 * get, update and delete, with the sidecar's write rules (store-rules.ts: unique fields, upserts, a
 * nested record's parent), RPC-style ids and parents, soft deletes and text-kept values.
 */
import { MAX_RECORDS, mintId, seedRandom } from '../core/store.ts';
import { getPath, idAt, isPlainObject, setIdAt, setPath } from '../core/values.ts';
import type { Json, Operation } from '../description.ts';
import { included } from '../record-views.ts';
import type { SimRequest, SimResponse } from '../sim-server.ts';
import { fill } from '../rules.ts';
import { appendToParent, conflictMessage, uniqueConflict, upsertTarget } from '../store-rules.ts';
import type { ErrorAnswers } from './errors.ts';
import { patchFields, removePath } from './json-patch.ts';
import { leavesAsText, newId } from './ids.ts';
import type { ListAnswer } from './lists.ts';
import type { RecordRules } from './records.ts';
import { declaresLocation, exampleOf } from './schema.ts';
import type { NestedLinks } from './seed.ts';
import type { Classified, Kind, OpenApiContext, Resource, StoredRecord } from './types.ts';
import type { Writes } from './writes.ts';

export interface StoreParts {
  errors: ErrorAnswers;
  records: RecordRules;
  writes: Writes;
  list: ListAnswer;
  nested: NestedLinks;
}

/** A checked request on a resource's operation. */
export interface StoreRequest {
  req: SimRequest;
  op: Operation;
  c: Classified;
  r: Resource;
  pathParams: Record<string, string>;
  query: Json;
  body: unknown;
  origin: string;
}

/** The request as the store reads it: the record's id, its parent, and how to find and write it. */
interface Call extends StoreRequest {
  id: string | undefined;
  rpcParent: string | undefined;
  parentOf: Record<string, string>;
  /** The live record the id names (by a lookup field too; not soft-deleted), under its parent for an RPC resource with one. */
  located(): StoredRecord | undefined;
  /** Write body fields onto a record (text_values kept as text). */
  write(record: Json, fields: Json, deep?: boolean): void;
  /** Records under a parent (messages in a channel) need that parent to exist. */
  parentMissing(): boolean;
}

export function storeOperation(ctx: OpenApiContext, parts: StoreParts, request: StoreRequest): SimResponse {
  const { sidecar, resources } = ctx;
  const { errorResponse, notFound } = parts.errors;
  const call = callOf(ctx, parts, request);
  const { op, c, r, pathParams, body } = call;
  // The sidecar's write rules (store-rules.ts): unique fields, upserts, a nested record's parent.
  const rules = sidecar.resources?.[r.name];
  let kind: Kind = c.kind;
  if (kind === 'create' && rules?.upsert !== undefined) {
    const target = upsertTarget(rules.upsert, r.records, parts.writes.unwrapBody(op, body));
    if (target !== undefined) [kind, call.id] = ['update', target];
  }
  if ((kind === 'create' || kind === 'update') && rules?.unique !== undefined) {
    const conflict = uniqueConflict(
      rules.unique,
      r.records,
      parts.writes.unwrapBody(op, body),
      kind === 'update' ? (idAt(call.located()?.record, r.idField) as string | number | undefined)?.toString() : undefined,
    );
    if (conflict !== undefined) return errorResponse({ status: 409, code: 'conflict', message: conflictMessage(rules.unique, conflict) }, op);
  }
  const restParent = c.rpc !== true && rules?.parent !== undefined ? rules.parent : undefined;
  const parentResource = restParent === undefined ? undefined : resources.get(restParent.resource);
  // By id or by an alias (/users/me/webinars: the token's own user), which the record's parent then names by id.
  const parentStored =
    parentResource === undefined || restParent === undefined ? undefined : parts.records.find(parentResource, pathParams[restParent.param] ?? '');
  if (parentStored !== undefined && restParent !== undefined && parentResource !== undefined)
    pathParams[restParent.param] = String(idAt(parentStored.record, parentResource.idField));
  const parentRecord = parentStored?.record;
  if (restParent !== undefined && parentRecord === undefined && (kind === 'create' || kind === 'list'))
    return notFound(op, pathParams[restParent.param] ?? '', restParent.param);
  // A nested collection under a parent that does not exist is the parent's 404 (a missing repository's issues), not an empty page.
  const link = c.rpc !== true && restParent === undefined ? parts.nested.links.get(op.key) : undefined;
  if (link !== undefined && (kind === 'create' || kind === 'list') && !parts.nested.parentExists(link, pathParams)) {
    const param = Object.keys(link.fields).at(-1) ?? '';
    return notFound(op, pathParams[param] ?? '', param);
  }
  // A parent named by a lookup field or an alias (/objects/people/records: the object by its slug) is
  // its id, as the records under it keep it.
  const linkedParent = link === undefined ? undefined : resources.get(link.resource);
  const [linkParam, linkField] = link === undefined ? [] : (Object.entries(link.fields)[0] ?? []);
  if (linkedParent !== undefined && linkParam !== undefined && linkField === linkedParent.idField && Object.keys(link?.fields ?? {}).length === 1) {
    const named = parts.records.find(linkedParent, pathParams[linkParam] ?? '');
    if (named !== undefined) pathParams[linkParam] = String(idAt(named.record, linkedParent.idField));
  }
  switch (kind) {
    case 'list':
      if (call.parentMissing()) return notFound(op, call.parentOf[call.rpcParent ?? ''] ?? '', call.rpcParent);
      return parts.list(
        op,
        r,
        call.parentOf,
        withBodyFilters(sidecar.filters, c.rpc === true ? { ...scalarsOf(body), ...call.query } : call.query, body, op, call.req.headers),
        call.origin,
        call.req,
        c.rpc === true ? [call.rpcParent ?? ''] : [],
      );
    case 'create':
      return create(ctx, parts, call, (record) => {
        if (restParent?.append !== undefined && parentRecord !== undefined) appendToParent(restParent.append, parentRecord, record);
      });
    case 'get':
      return get(ctx, parts, call);
    case 'update':
      return update(ctx, parts, call);
    case 'delete':
      return remove(ctx, parts, call);
  }
  return { status: op.successStatus, json: ctx.sample(op.responseRef) };
}

function callOf(ctx: OpenApiContext, parts: StoreParts, request: StoreRequest): Call {
  const { sidecar, resources } = ctx;
  const { c, r, pathParams, query, body } = request;
  const input: Json = { ...(body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Json) : {}), ...query };
  const rpcParent = c.rpc === true && r.declared?.parent !== undefined ? r.declared.parent.param : undefined;
  // A declared resource's id and parent come from the query or body, else from a path parameter of that name (GET /files/{file_key}/meta).
  const given = (name: string): unknown => input[name] ?? pathParams[name];
  // A parent named by an alias of its resource (Google's calendar "primary") is the record the alias names.
  const parentId = (v: unknown): string => {
    const q = resources.get(r.declared?.parent?.resource ?? '');
    const alias = q === undefined ? undefined : sidecar.resources?.[q.name]?.aliases?.[String(v)];
    return alias !== undefined && q !== undefined ? String([...q.records.keys()][alias - 1] ?? v) : String(v);
  };
  const parentOf: Record<string, string> =
    c.rpc !== true ? pathParams : rpcParent !== undefined && given(rpcParent) !== undefined ? { [rpcParent]: parentId(given(rpcParent)) } : {};
  // A parent named by an alias (/users/me/meetings: the token's own user) is that record.
  const parentRes = rpcParent === undefined ? undefined : resources.get(r.declared?.parent?.resource ?? '');
  const parentValue = rpcParent === undefined ? undefined : parentOf[rpcParent];
  if (parentRes !== undefined && parentValue !== undefined && sidecar.resources?.[parentRes.name]?.aliases?.[parentValue] !== undefined) {
    const s = parts.records.find(parentRes, parentValue);
    if (s !== undefined) parentOf[rpcParent as string] = String(idAt(s.record, parentRes.idField));
  }
  const idParam = c.idParams?.find((n) => given(n) !== undefined) ?? c.idParam;
  const rawId = c.idQuery !== undefined ? (query[c.idQuery] ?? '') : idParam === undefined ? undefined : c.rpc === true ? given(idParam) : pathParams[idParam];
  let id = rawId === undefined ? undefined : String(rawId);
  if (c.keyParams !== undefined) {
    // Several path ids (/repos/{owner}/{repo}): the record whose key fields they name.
    const key = sidecar.resources?.[r.name]?.key ?? {};
    const found = [...r.records.entries()].find(([, s]) => c.keyParams?.every((p) => String(getPath(s.record, key[p] ?? p)) === pathParams[p]));
    id = found?.[0] ?? Object.values(pathParams).join('/');
  }
  const call: Call = {
    ...request,
    // The param that named the record (a move's from_path), for its not_found answer.
    ...(idParam !== undefined && idParam !== c.idParam ? { c: { ...c, idParam } } : {}),
    id,
    rpcParent,
    parentOf,
    located: () => {
      const s = call.id === undefined ? undefined : parts.records.find(r, call.id);
      return s !== undefined && !parts.records.softDeleted(r, s.record) && (c.rpc !== true || Object.entries(parentOf).every(([k, v]) => s.parents[k] === v))
        ? s
        : undefined;
    },
    write: (record, fields, deep = false) => {
      writeFields(ctx, parts, call, record, fields, deep);
      // text_values: fields whose numbers and booleans the vendor keeps as text (amount 10000 → "10000").
      for (const f of sidecar.resources?.[r.name]?.text_values ?? []) {
        const v = getPath(record, f);
        if (v !== undefined) setPath(record, f, leavesAsText(v));
      }
    },
    parentMissing: () =>
      rpcParent !== undefined &&
      (parentOf[rpcParent] === undefined || resources.get(r.declared?.parent?.resource ?? '')?.records.has(parentOf[rpcParent]) !== true),
  };
  return call;
}

/** Write body fields onto a record: for RPC, not the id or parent, not the credential; declared ones (writes) at their record path. */
function writeFields(ctx: OpenApiContext, parts: StoreParts, call: Call, record: Json, fields: Json, deep: boolean): void {
  const { c, r, rpcParent } = call;
  const asSent = ctx.sidecar.resources?.[r.name]?.written_as_sent;
  if (c.rpc !== true) return parts.writes.merge(record, fields, r.recordRef, deep, asSent);
  const plain: Json = {};
  for (const [k, v] of Object.entries(fields)) {
    if (k === c.idParam || c.idParams?.includes(k) === true || k === r.idField || k === rpcParent || (ctx.sidecar.auth?.params ?? []).includes(k)) continue;
    const to = r.declared?.writes?.[k];
    if (to === undefined) plain[k] = v;
    else setPath(record, to, v);
  }
  parts.writes.merge(record, plain, r.recordRef, deep, asSent);
}

function create(ctx: OpenApiContext, parts: StoreParts, call: Call, appended: (record: Json) => void): SimResponse {
  const { d, options, seed } = ctx;
  const { op, c, r, pathParams } = call;
  const { errorResponse, notFound } = parts.errors;
  const { stamp, uniqueLookups, newRecord } = parts.records;
  const max = options.maxRecords ?? MAX_RECORDS;
  if (r.records.size >= max)
    return errorResponse({ status: 507, code: 'storage_full', message: `The simulator keeps at most ${String(max)} ${r.name}; delete some or restart it` }, op);
  if (call.parentMissing()) return notFound(op, call.parentOf[call.rpcParent ?? ''] ?? '', call.rpcParent);
  const fields = parts.writes.unwrapBody(op, call.body);
  const nested = parts.writes.takeNested(op, fields);
  // A new record starts from the sidecar's template; else a declared resource's from the create
  // method's own example (or the description's first example of the record); else from a sample
  // of the schema (newRecord); the body's fields over it.
  const created = r.declared === undefined ? undefined : (exampleOf(d, op) as Json | undefined);
  const base = r.declared?.record !== undefined ? created?.[r.declared.record] : created;
  const fromExample = ctx.sidecar.resources?.[r.name]?.template !== undefined ? undefined : isPlainObject(base) ? base : r.examples?.[0];
  // A nested record's template may name its parent ({{contact_id}}).
  const record = newRecord(
    r,
    (like) => mintId(seed, r.name, r, (rand) => newId(rand, like, true)),
    r.records.size + 1,
    undefined,
    undefined,
    fromExample,
    // A path parameter naming a record of this resource by an alias (a folder made under `root`) is that record's id.
    parts.records.unaliased(r, pathParams),
  );
  // A create that names its record in the path (PUT /groups/{groupId}/users/{userId}: Okta's membership) keeps that id.
  const named = c.rpc === true && c.idParam !== undefined ? pathParams[c.idParam] : undefined;
  if (named !== undefined && named !== '') setIdAt(record, r.idField, named);
  const newRecordId = idAt(record, r.idField);
  call.write(record, fields, c.rpc !== true);
  // Created at a path naming it by several ids: the record holds them in its key fields.
  const key = ctx.sidecar.resources?.[r.name]?.key ?? {};
  for (const p of c.keyParams ?? []) if (key[p] !== undefined && pathParams[p] !== undefined) setPath(record, key[p], pathParams[p]);
  setIdAt(record, r.idField, newRecordId);
  if (r.idField !== 'id' && (typeof record.id === 'number' || typeof record.id === 'string'))
    record.id = newId(seedRandom(seed, `${r.name}.id`, r.created), record.id);
  uniqueLookups(r, record, r.records.size + 1);
  const at = new Date().toISOString();
  stamp(r, record, 'created', at);
  stamp(r, record, 'updated', at);
  const stored = { record, parents: c.rpc === true ? call.parentOf : { ...pathParams } };
  r.records.set(String(newRecordId), stored);
  appended(record);
  // A create whose success declares no body but a Location header (201 Created) answers the new record's URL there, and no body.
  if (op.responseRef === undefined && declaresLocation(d, op)) {
    parts.writes.applyNested(nested, String(newRecordId), undefined);
    const itemPath = `${call.req.path.replace(/\/+$/, '')}/${encodeURIComponent(String(newRecordId))}`;
    return { status: op.successStatus, headers: { location: `${new URL(call.origin).origin}${itemPath}` }, json: undefined };
  }
  // A create whose success declares no content (Klaviyo's event: 202 Accepted) answers none; the record is kept.
  if (op.responseRef === undefined) return { status: op.successStatus };
  // A vendor answering a create with the new id only (Lever's note: {data: {noteId}}).
  const answer = ctx.sidecar.resources?.[r.name]?.created_answer;
  if (answer !== undefined) return { status: op.successStatus, json: fill(answer, record) as Json };
  const json = parts.writes.wrap(op, record, r, stored);
  parts.writes.applyNested(nested, String(newRecordId), json);
  return { status: op.successStatus, json };
}

function get(ctx: OpenApiContext, parts: StoreParts, call: Call): SimResponse {
  const { op, c, r, id, query } = call;
  const deletedParam = parts.records.softDeleteParam(r);
  // A soft-deleted record is gone, unless the get asks for it (archived=true).
  const s = deletedParam !== undefined && query[deletedParam] === true ? (id === undefined ? undefined : parts.records.find(r, id)) : call.located();
  if (s === undefined) return parts.errors.notFound(op, id ?? '', c.idParam ?? c.idQuery);
  return {
    status: op.successStatus,
    json: parts.writes.wrap(op, included(s.record, ctx.sidecar.resources?.[r.name]?.include, query), r.declared === undefined ? undefined : r, s),
  };
}

function update(ctx: OpenApiContext, parts: StoreParts, call: Call): SimResponse {
  const { op, c, r, id, query } = call;
  const s = call.located();
  if (s === undefined) return parts.errors.notFound(op, id ?? '', c.idParam);
  // JSON Patch operations write the fields their paths name, and remove others.
  const patch = patchFields(call.body, s.record);
  const fields = patch?.fields ?? parts.writes.unwrapBody(op, call.body);
  // The id is not written: a composite id's object (`id` of `id.record_id`) neither.
  delete fields[r.idField.split('.')[0] as string];
  const nested = parts.writes.takeNested(op, fields);
  // An update of one object field (Graph's listItem /fields): the body merges into it, and it is the answer.
  if (c.field !== undefined) {
    const held = s.record[c.field];
    s.record[c.field] = { ...(isPlainObject(held) ? held : {}), ...fields };
    parts.records.stamp(r, s.record, 'updated', new Date().toISOString());
    return { status: op.successStatus, json: s.record[c.field] as Json };
  }
  call.write(s.record, fields, true);
  for (const path of patch?.removals ?? []) removePath(s.record, path);
  parts.records.stamp(r, s.record, 'updated', new Date().toISOString());
  // no_content_unless: 204 without a body unless the request asks for the record (returnIssue=true).
  const ask = ctx.sidecar.operations?.[op.key]?.no_content_unless;
  const status = ask !== undefined && query[ask] !== true && query[ask] !== 'true' ? 204 : op.successStatus;
  // A vendor answering an update with its outcome and the id only ({data: [{code, details: {id}}]}).
  const answer = ctx.sidecar.resources?.[r.name]?.updated_answer;
  const json = status === 204 ? undefined : answer !== undefined ? (fill(answer, s.record) as Json) : parts.writes.wrap(op, s.record, r, s);
  parts.writes.applyNested(nested, String(idAt(s.record, r.idField)), json);
  return { status, json };
}

function remove(ctx: OpenApiContext, parts: StoreParts, call: Call): SimResponse {
  const { op, c, r, id } = call;
  const s = call.located();
  if (s === undefined) return parts.errors.notFound(op, id ?? '', c.idParam);
  // soft_delete keeps the record, marked (and stamped with `at`), for the lists and exports that report deletions.
  const sd = ctx.sidecar.resources?.[r.name]?.soft_delete;
  if (sd !== undefined) {
    const now = new Date().toISOString();
    setPath(s.record, sd.field, sd.value === undefined ? true : sd.value);
    if (sd.at !== undefined) setPath(s.record, sd.at, now);
    parts.records.stamp(r, s.record, 'updated', now);
    // An answer with a body shows the marked record (a deleted user, active false).
    return {
      status: op.successStatus,
      json: op.responseRef === undefined ? undefined : parts.writes.wrap(op, s.record, r.declared === undefined ? undefined : r, s),
    };
  }
  if (!r.records.delete(String(idAt(s.record, r.idField)))) return parts.errors.notFound(op, id ?? '', c.idParam);
  return { status: op.successStatus, json: op.responseRef === undefined ? undefined : ctx.sample(op.responseRef) };
}

/**
 * A list asked for with a JSON body (a report's `{filters: {lastChanged: {value}}}`) filters by the
 * sidecar's filters keyed `body.<dotted path>`: the body's value there joins the query under that
 * key; and by those keyed `header.<name>` (lower case), a request header's value (`If-Modified-Since`).
 */
function withBodyFilters(filters: Record<string, unknown> | undefined, query: Json, body: unknown, op: Operation, headers: SimRequest['headers'] = {}): Json {
  const isObject = body !== null && typeof body === 'object' && !Array.isArray(body);
  // A POST query's own page fields ({limit, offset}) are read as a GET's query parameters would be.
  const out: Json =
    isObject && op.method === 'POST'
      ? { ...Object.fromEntries(Object.entries(body).filter(([, v]) => typeof v === 'number' || typeof v === 'string')), ...query }
      : { ...query };
  for (const key of Object.keys(filters ?? {})) {
    if (key.startsWith('header.')) {
      const h = headers[key.slice('header.'.length).toLowerCase()];
      if (typeof h === 'string' && h !== '') out[key] = h;
      continue;
    }
    if (!key.startsWith('body.') || !isObject) continue;
    const v = getPath(body as Json, key.slice('body.'.length));
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[key] = v;
  }
  return out;
}

/** An RPC list asked for with a JSON body (POST /files/list_folder {path, limit, cursor}): its top-level scalars, read like query parameters. */
function scalarsOf(body: unknown): Json {
  if (!isPlainObject(body)) return {};
  return Object.fromEntries(Object.entries(body).filter(([, v]) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')) as Json;
}
