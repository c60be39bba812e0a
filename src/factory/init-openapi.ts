/**
 * `switchboard init <type> --from-openapi <file>`: a connector manifest scaffolded from a vendor's
 * OpenAPI 3.x description. `$ref`s (across components and files) are resolved by
 * @apidevtools/json-schema-ref-parser; everything else is read from the resolved document:
 *
 * - base URL from `servers` (an enum server variable becomes config.region with base_url.regions;
 *   other variables take their default, reported);
 * - auth variants from `securitySchemes` (bearer, API key header, basic, OAuth 2 authorization code);
 * - entities from collection/item path pairs (`/widgets`, `/widgets/{widget_id}`): list and create
 *   from the collection's GET and POST, get and update from the item's GET and PATCH (else PUT, else
 *   POST: Stripe updates with POST /v1/customers/{customer}); RPC-style methods (`/widgets.list`,
 *   `/widgets.info`, `/widgets.create`, `/widgets.update`) by their verb, or as a simulator
 *   sidecar's `resources` declare them (`--sidecar`);
 * - params from parameters (the description's names; a deepObject object such as Stripe's
 *   `created` becomes one param per property, `created_gt` → `created[gt]`) and from the JSON or
 *   form-encoded request body (`body_encoding: form`), unwrapped from a single-key wrapper
 *   (`{"data": {...}}`) that the body template puts back;
 * - records from the response schema, unwrapped from envelopes (`{data: [...]}`, `{data: {...}}`);
 * - pagination from cursor/offset/page params and the response field carrying the next value, or a
 *   declared Link header; Retry-After / rate-limit reset headers where responses declare them.
 *
 * Every guess is recorded (a `# check:` comment in the YAML); what cannot be inferred is reported.
 */
import $RefParser from '@apidevtools/json-schema-ref-parser';
import { SwitchboardError } from '../errors/index.ts';
import { flatten, isArraySchema, isObjectSchema, propertiesOf, toJsonSchema, type JsonSchema, type OpenApiSchema } from './json-schema.ts';
import { safeName, shortText, withType, type Guess, type Scaffold } from './scaffold.ts';
import { declaredOperations, type Sidecar } from '../simulator/sidecar.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

export interface OpenApiInitOptions {
  type: string;
  /** Entity names to keep (default all that have a list or get). */
  entities?: string[] | undefined;
  /** vendor_description.path to write (the copy of the description beside the manifest). */
  descriptionPath: string;
  /** vendor_description.source: where the description came from. */
  source: string;
  /** A simulator sidecar: its `resources` say which RPC method lists, gets, creates or updates what; `auth.params` are credential parameters. */
  sidecar?: Pick<Sidecar, 'resources' | 'auth' | 'pagination'> | undefined;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  deprecated?: boolean;
  description?: string;
  schema?: OpenApiSchema;
  style?: string;
  explode?: boolean;
}

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: OpenApiSchema }>; required?: boolean };
  responses?: Record<string, { content?: Record<string, { schema?: OpenApiSchema }>; headers?: Record<string, unknown>; description?: string }>;
  deprecated?: boolean;
}

type PathItem = Partial<Record<'get' | 'post' | 'put' | 'patch' | 'delete', Operation>> & { parameters?: Parameter[] };

/** Load and resolve an OpenAPI 3.x file (JSON or YAML). Circular schemas stay as they are, cut when converted. */
export async function loadOpenApi(file: string): Promise<Obj> {
  let doc: unknown;
  try {
    doc = await $RefParser.dereference(file, { dereference: { circular: true }, resolve: { http: false } });
  } catch (e) {
    throw new SwitchboardError('invalid_params', `Cannot read the OpenAPI description ${file}: ${(e as Error).message}`, { details: { file } });
  }
  if (!isObj(doc) || typeof doc['openapi'] !== 'string' || !doc['openapi'].startsWith('3.')) {
    const v = isObj(doc) ? (doc['swagger'] ?? doc['openapi']) : undefined;
    throw new SwitchboardError('invalid_params', `${file} is not an OpenAPI 3.x description${v !== undefined ? ` (version ${String(v)})` : ''}; convert Swagger 2.0 with e.g. swagger2openapi first`, { details: { file } });
  }
  if (!isObj(doc['paths'])) throw new SwitchboardError('invalid_params', `${file} has no paths`, { details: { file } });
  return doc;
}

const JSON_TYPE = /^application\/(.+\+)?json/;
const FORM_TYPE = /^application\/x-www-form-urlencoded/i;

/** The form-encoded schema of a request body (Stripe's, with deepObject keys), when it takes no JSON. */
function formSchemaOf(content: Record<string, { schema?: OpenApiSchema }> | undefined): OpenApiSchema | undefined {
  if (!content || jsonSchemaOf(content) !== undefined) return undefined;
  const key = Object.keys(content).find((k) => FORM_TYPE.test(k));
  return key !== undefined ? content[key]?.schema : undefined;
}

/** The JSON schema of a body or response (the first JSON media type). */
function jsonSchemaOf(content: Record<string, { schema?: OpenApiSchema }> | undefined): OpenApiSchema | undefined {
  if (!content) return undefined;
  const key = Object.keys(content).find((k) => JSON_TYPE.test(k)) ?? (content['*/*'] ? '*/*' : undefined);
  return key !== undefined ? content[key]?.schema : undefined;
}

/** The success response of an operation: 200, 201, any 2xx, else default. */
function success(op: Operation): { schema?: OpenApiSchema; headers: string[] } {
  const r = op.responses ?? {};
  const code = ['200', '201', '202'].find((c) => r[c]) ?? Object.keys(r).find((c) => /^2\d\d$|^2XX$/i.test(c)) ?? (r['default'] ? 'default' : undefined);
  const res = code !== undefined ? r[code] : undefined;
  const schema = jsonSchemaOf(res?.content);
  return { ...(schema ? { schema } : {}), headers: Object.keys(res?.headers ?? {}) };
}

const RECORDS_KEYS = ['data', 'results', 'items', 'records', 'entries', 'values', 'elements', 'objects'];
const RECORD_KEYS = ['data', 'result', 'item', 'record', 'object'];

/** Where a list's records are: `{path, item schema}`, unwrapping one or two envelope levels. */
function findRecords(schema: OpenApiSchema | undefined, entity: string, depth = 2): { path: string[]; item?: OpenApiSchema } | undefined {
  if (schema === undefined || depth === 0) return undefined;
  if (isArraySchema(schema)) return { path: [], item: flatten(flatten(schema)['items']) };
  const props = propertiesOf(schema);
  // Arrays of objects only: an object with `tags: [string]` is a record, not a list of tags.
  const arrays = props.filter(([, v]) => isArraySchema(v) && richestObject(flatten(v)['items']) !== undefined);
  const named = arrays.find(([k]) => RECORDS_KEYS.includes(k) || k === entity) ?? (arrays.length === 1 ? arrays[0] : undefined);
  const item = named === undefined ? undefined : richestObject(flatten(named[1])['items']);
  if (named) return { path: [named[0]], ...(item !== undefined ? { item } : {}) };
  for (const [k, v] of props) {
    if (!RECORDS_KEYS.includes(k) || !isObjectSchema(v)) continue;
    const inner = findRecords(v, entity, depth - 1);
    if (inner && inner.path.length === 1) return { path: [k, ...inner.path], ...(inner.item ? { item: inner.item } : {}) };
  }
  return undefined;
}

/**
 * An object schema, or of a union (anyOf/oneOf, nested: Notion's `PartialBlock | (Paragraph | Heading...)`)
 * the object alternative with the most properties; undefined when it holds no object.
 */
function richestObject(input: unknown, depth = 3): OpenApiSchema | undefined {
  const s = flatten(input);
  if (isObjectSchema(s) || depth === 0) return isObjectSchema(s) ? s : undefined;
  const alternatives = (s['anyOf'] ?? s['oneOf']) as unknown[] | undefined;
  if (!Array.isArray(alternatives)) return undefined;
  let best: OpenApiSchema | undefined;
  for (const a of alternatives) {
    const o = richestObject(a, depth - 1);
    if (o !== undefined && (best === undefined || propertiesOf(o).length > propertiesOf(best).length)) best = o;
  }
  return best;
}

/** Where one record is in a get/create/update response: the body, or a single-object envelope. */
function findRecord(input: OpenApiSchema | undefined, singular: string): { path: string[]; schema?: OpenApiSchema } {
  if (input === undefined) return { path: [] };
  // One record or another (Stripe's customer | deleted_customer, Notion's partial | full page): the richest object alternative.
  const schema = richestObject(input) ?? input;
  const props = propertiesOf(schema);
  const objects = props.filter(([, v]) => isObjectSchema(v));
  const envelope = objects.find(([k]) => RECORD_KEYS.includes(k) || k === singular);
  // A body with an id of its own is the record, whatever else it holds (Stripe's event has `data`).
  const ownId = props.some(([k]) => k === 'id' || k === 'gid' || k === 'uuid');
  if (envelope && !ownId && (props.length <= 3 || envelope[0] === 'data')) return { path: [envelope[0]], schema: flatten(envelope[1]) };
  return { path: [], schema: flatten(schema) };
}

/** `{{body.a.b}}`, or `{{body}}`. */
const bodyAt = (path: string[]): string => `{{${['body', ...path].join('.')}}}`;

/** Every scalar field (name path, schema) of a response schema, a few levels down, arrays skipped. */
function scalarFields(schema: OpenApiSchema | undefined, depth = 3, prefix: string[] = []): { path: string[]; schema: OpenApiSchema }[] {
  if (schema === undefined || depth === 0) return [];
  const out: { path: string[]; schema: OpenApiSchema }[] = [];
  for (const [k, v] of propertiesOf(schema)) {
    if (isObjectSchema(v)) out.push(...scalarFields(v, depth - 1, [...prefix, k]));
    else if (!isArraySchema(v)) out.push({ path: [...prefix, k], schema: v });
  }
  return out;
}

const norm = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '');
const CURSOR_PARAMS = ['cursor', 'startcursor', 'startingafter', 'after', 'pagetoken', 'nextpagetoken', 'nexttoken', 'continuation', 'continuationtoken', 'marker', 'pagecursor', 'nextcursor', 'starttoken', 'offset'];
const NEXT_FIELDS = ['nextcursor', 'nextpagetoken', 'nexttoken', 'next', 'cursor', 'nextoffset', 'continuation', 'continuationtoken', 'nextmarker', 'endcursor'];
const OFFSET_PARAMS = ['offset', 'skip', 'start', 'startat', 'startindex', 'from'];
const PAGE_PARAMS = ['page', 'pagenumber', 'pageno', 'pagenum'];
const LIMIT_PARAMS = ['limit', 'perpage', 'pagesize', 'count', 'maxresults', 'size', 'top', 'pagelimit', 'maxitems', 'max'];
const HAS_MORE = ['hasmore', 'more', 'hasnext', 'hasnextpage', 'moreavailable'];
/** Booleans saying the opposite: this is the last page (Jira's isLast). */
const IS_LAST = ['islast', 'last', 'lastpage'];

interface BuiltParam {
  /** The manifest's name. */
  name: string;
  /** The description's name. */
  original: string;
  in: 'path' | 'query' | 'header' | 'body';
  schema: JsonSchema & { required?: boolean };
  explodeFalse?: boolean;
  /** The query key when it is not the description's name (`created[gt]`, `expand[]`: style deepObject). */
  key?: string;
  openapi?: OpenApiSchema;
}

interface EntityPlan {
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
}

/** RPC verbs (`/conversations.list`) and the action each is. */
const RPC_VERBS: Record<string, 'list' | 'get' | 'create' | 'update'> = { list: 'list', info: 'get', get: 'get', retrieve: 'get', create: 'create', add: 'create', update: 'update', edit: 'update' };
const RPC_PATH = /^\/([a-z][A-Za-z0-9_]*(?:\.[a-z][A-Za-z0-9_]*)*)\.([a-z][A-Za-z]*)$/;

/**
 * Collection/item path pairs → entities with the operations they offer; RPC-style methods
 * (`/x.list`, `/x.info`...) grouped by their prefix, or as the sidecar's resources declare them.
 */
function planEntities(paths: Record<string, PathItem>, declared: Sidecar['resources'] = {}): EntityPlan[] {
  const byCollection = new Map<string, EntityPlan>();
  const rpc = new Map<string, EntityPlan>();
  const claimed = new Set<string>();
  const opAt = (key: string): { path: string; method: string; op: Operation; pathParams: Parameter[] } | undefined => {
    const [method, path] = key.split(' ') as [string, string];
    const item = paths[path];
    const op = item?.[method.toLowerCase() as 'get'];
    return item === undefined || op === undefined ? undefined : { path, method, op, pathParams: merged(item, op) };
  };
  for (const [name, r] of Object.entries(declared)) {
    const e: EntityPlan = { name: safeName(name), ops: {}, rpc: true, ...(r.record !== undefined ? { recordKey: r.record } : {}), ...(r.id_field !== undefined ? { idField: r.id_field } : {}) };
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
  const plan = (collection: string): EntityPlan => {
    let e = byCollection.get(collection);
    if (e === undefined) {
      const last = collection.split('/').filter(Boolean).at(-1) ?? 'root';
      e = { name: safeName(last), collection, ops: {} };
      byCollection.set(collection, e);
    }
    return e;
  };
  for (const [path, item] of Object.entries(paths)) {
    if (!isObj(item) || [...claimed].some((k) => k.endsWith(` ${path}`))) continue;
    const segs = path.split('/').filter(Boolean);
    const last = segs.at(-1);
    if (last === undefined) continue;
    const isParam = /^\{[^}]+\}$/.test(last);
    if (!isParam) {
      const e = plan(path);
      if (item.get) e.ops.list = { path, method: 'GET', op: item.get, pathParams: merged(item, item.get) };
      if (item.post) e.ops.create = { path, method: 'POST', op: item.post, pathParams: merged(item, item.post) };
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
          .filter((p) => p !== path && p.split('/').at(-1) === name && (isObj(paths[p]) && (paths[p].get !== undefined || paths[p].post !== undefined)))
          .sort((a, b) => params(a) - params(b) || a.length - b.length);
        const best = candidates[0];
        if (best === undefined || (candidates[1] !== undefined && params(candidates[1]) === params(best))) continue;
        collection = best;
        itemParam = segs.slice(word + 1).map((s) => s.slice(1, -1)).join(',');
      }
      const e = plan(collection);
      e.item = path;
      e.itemParam = itemParam;
      if (item.get) e.ops.get = { path, method: 'GET', op: item.get, pathParams: merged(item, item.get) };
      // PATCH, else PUT, else POST on the item itself (Stripe: POST /v1/customers/{customer} updates).
      const upd = item.patch ?? item.put ?? item.post;
      if (upd) e.ops.update = { path, method: item.patch ? 'PATCH' : item.put ? 'PUT' : 'POST', op: upd, pathParams: merged(item, upd) };
    }
  }
  // A search path beside an item path (/project/search next to /project/{projectIdOrKey}) is the
  // entity's list when its collection path has no GET (Jira's /rest/api/3/project/search).
  for (const [collection, e] of [...byCollection]) {
    if (!collection.endsWith('/search') || e.ops.list === undefined || e.item !== undefined) continue;
    const parent = byCollection.get(collection.slice(0, -'/search'.length));
    if (parent === undefined || parent.ops.list !== undefined || parent.item === undefined) continue;
    parent.ops.list = e.ops.list;
    byCollection.delete(collection);
  }
  const entities = [...rpc.values(), ...[...byCollection.values()].filter((e) => !rpc.has(e.name))].filter((e) => e.ops.list !== undefined || e.ops.get !== undefined);
  // Same last segment under different parents (/a/{id}/notes, /b/{id}/notes): qualify by the parent.
  const counts = new Map<string, number>();
  for (const e of entities) counts.set(e.name, (counts.get(e.name) ?? 0) + 1);
  for (const e of entities) {
    if ((counts.get(e.name) ?? 0) < 2) continue;
    const statics = (e.collection ?? '').split('/').filter((s) => s !== '' && !s.startsWith('{'));
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

function merged(item: PathItem, op: Operation): Parameter[] {
  const own = op.parameters ?? [];
  return [...(item.parameters ?? []).filter((p) => !own.some((o) => o.name === p.name && o.in === p.in)), ...own];
}

/** Singular of an entity name, for envelope keys (`project` for `projects`). */
const singular = (name: string): string => name.replace(/ies$/, 'y').replace(/s$/, '');

export async function scaffoldFromOpenApi(file: string, o: OpenApiInitOptions): Promise<Scaffold> {
  const doc = await loadOpenApi(file);
  const guesses: Guess[] = [];
  const report: string[] = [];
  const guess = (path: (string | number)[], message: string): void => void guesses.push({ path, message });
  const info = isObj(doc['info']) ? doc['info'] : {};
  const manifest: Obj = {
    manifest_version: 1,
    type: o.type,
    title: typeof info['title'] === 'string' && info['title'] !== '' ? info['title'] : o.type,
    kind: 'api',
  };
  guess(['kind'], 'what kind of system this is, e.g. work-management, crm, ticketing');
  const desc = shortText(info['description']);
  if (desc) manifest['description'] = desc;
  const docsUrl = isObj(doc['externalDocs']) ? doc['externalDocs']['url'] : undefined;
  if (typeof docsUrl === 'string') manifest['docs_url'] = docsUrl;
  const licence = isObj(info['license']) ? [info['license']['name'], info['license']['url'] ?? info['license']['identifier']].filter((x) => typeof x === 'string').join(', ') : undefined;
  manifest['vendor_description'] = { path: o.descriptionPath, format: 'openapi', source: o.source, ...(licence ? { licence } : {}) };
  if (!licence) guess(['vendor_description', 'source'], 'the description states no licence: check that you may redistribute it, or do not commit the copy');

  // Servers → base_url (and config.region for an enum variable).
  const servers = Array.isArray(doc['servers']) ? (doc['servers'] as Obj[]) : [];
  const server = servers[0];
  const baseUrl: Obj = {};
  const config: Obj = {};
  if (server === undefined || typeof server['url'] !== 'string' || !/^https?:\/\//.test(substituteDefaults(server))) {
    baseUrl['default'] = 'https://api.example.com';
    guess(['base_url', 'default'], 'the description gives no absolute server URL; put the API\'s base URL here');
    report.push(`base URL: ${server === undefined ? 'no servers' : `server "${String(server['url'])}" is not an absolute URL`}`);
  } else {
    const vars = isObj(server['variables']) ? (server['variables'] as Record<string, Obj>) : {};
    const enumVar = Object.entries(vars).find(([, v]) => Array.isArray(v['enum']) && (v['enum'] as unknown[]).length > 1);
    baseUrl['default'] = substituteDefaults(server).replace(/\/+$/, '');
    if (enumVar !== undefined) {
      const [varName, v] = enumVar;
      const regions: Obj = {};
      for (const value of v['enum'] as unknown[]) regions[safeName(String(value))] = substituteDefaults(server, { [varName]: String(value) }).replace(/\/+$/, '');
      baseUrl['regions'] = regions;
      config['region'] = { type: 'string', enum: Object.keys(regions), default: safeName(String(v['default'] ?? (v['enum'] as unknown[])[0])), description: shortText(v['description']) ?? `The server variable ${varName}` };
      guess(['config', 'region'], `from the server variable {${varName}}: one base URL per value`);
    }
    // Other variables (a subdomain, an instance) become config values the base URL names.
    const templated: Record<string, string> = {};
    for (const [name, v] of Object.entries(vars)) {
      if (enumVar?.[0] === name) continue;
      const key = safeName(name);
      const hostPart = new RegExp(`^https?://[^/]*\\{${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\}`).test(String(server['url']));
      if (!hostPart) {
        // In the path (an API version): its default is kept, the manifest's calls are written for it.
        guess(['base_url', 'default'], `server variable {${name}} set to its default "${String(v['default'])}"`);
        continue;
      }
      templated[name] = `{{config.${key}}}`;
      // A base URL variable must declare a pattern (docs/manifest.md, "Base URL variables"): one host label.
      config[key] = { type: 'string', pattern: '[A-Za-z0-9][A-Za-z0-9-]{0,62}', ...(v['default'] !== undefined && v['default'] !== '' ? { default: String(v['default']) } : {}), description: shortText(v['description']) ?? `The server variable ${name} of the base URL` };
      guess(['config', key], `from the server variable {${name}} of the base URL, one host label; for hosted connectors (no per-connector config) make it a non-secret credential field`);
    }
    if (Object.keys(templated).length > 0) baseUrl['default'] = substituteDefaults(server, templated).replace(/\/+$/, '');
    // Several absolute servers without an enum variable: regions, named by the host label that
    // tells each from the first (api.eu.example.com → eu); the first is `default`.
    const others = servers.slice(1).filter((sv) => typeof sv['url'] === 'string' && /^https?:\/\//.test(substituteDefaults(sv)));
    if (others.length > 0 && enumVar === undefined && Object.keys(templated).length === 0) {
      const labels = (sv: Obj): string[] => new URL(substituteDefaults(sv)).hostname.split('.');
      const first = new Set(labels(server));
      const regions: Obj = { default: baseUrl['default'] };
      others.forEach((sv, i) => {
        const name = safeName(labels(sv).find((l) => !first.has(l)) ?? `server_${i + 2}`);
        regions[regions[name] === undefined ? name : `${name}_${i + 2}`] = substituteDefaults(sv).replace(/\/+$/, '');
      });
      baseUrl['regions'] = regions;
      config['region'] = { type: 'string', enum: Object.keys(regions), default: 'default', description: 'Which of the API\'s servers to use' };
      guess(['config', 'region'], `one region per server of the description (${servers.map((sv) => shortText(sv['description']) ?? String(sv['url'])).join('; ')})`);
    }
  }
  manifest['base_url'] = baseUrl;
  if (Object.keys(config).length > 0) manifest['config'] = config;
  manifest['headers'] = { Accept: 'application/json' };

  // Rate-limit and retry headers declared on any response.
  const responseHeaders = new Set<string>();
  for (const item of Object.values(doc['paths'] as Record<string, PathItem>)) {
    for (const op of [item.get, item.post, item.put, item.patch, item.delete]) {
      for (const r of Object.values(op?.responses ?? {})) for (const h of Object.keys(r?.headers ?? {})) responseHeaders.add(h);
    }
  }
  const retryHeaders: Obj[] = [];
  const header = (n: string): string | undefined => [...responseHeaders].find((h) => h.toLowerCase() === n);
  for (const n of ['x-ratelimit-reset', 'x-rate-limit-reset', 'ratelimit-reset']) {
    const h = header(n);
    if (h) retryHeaders.push({ name: h, format: n === 'ratelimit-reset' ? 'seconds' : 'unix_seconds' });
  }
  const retryAfter = header('retry-after');
  if (retryAfter) retryHeaders.push({ name: retryAfter, format: 'seconds' });
  manifest['retry'] = { max_attempts: 4, retry_after_headers: retryHeaders.length > 0 ? retryHeaders : [{ name: 'Retry-After', format: 'seconds' }] };
  if (retryHeaders.length === 0) guess(['retry', 'retry_after_headers'], 'no retry header is declared in the description; Retry-After (seconds) is the HTTP standard');
  else if (retryHeaders.some((h) => h['format'] === 'unix_seconds')) guess(['retry', 'retry_after_headers'], 'a reset header may carry Unix seconds or seconds to wait: check which');
  const limitHeader = [...responseHeaders].find((h) => /rate-?limit-limit|ratelimit$/i.test(h));
  report.push(`rate limit: requests per window ${limitHeader ? `(the description declares ${limitHeader}, not the window)` : '(not in the description)'}; add rate_limit from the vendor's documentation`);

  // Security schemes → auth variants.
  const schemes = isObj(doc['components']) && isObj(doc['components']['securitySchemes']) ? (doc['components']['securitySchemes'] as Record<string, Obj>) : {};
  const auth: Obj[] = [];
  for (const [schemeName, s] of Object.entries(schemes)) {
    const name = safeName(schemeName);
    const description = shortText(s['description']);
    const base = { name, title: schemeName, ...(description ? { description } : {}) };
    const scheme = typeof s['scheme'] === 'string' ? s['scheme'].toLowerCase() : '';
    if (s['type'] === 'http' && scheme === 'bearer') {
      auth.push({ ...base, type: 'bearer', fields: { token: { type: 'string', secret: true, description: 'Bearer token' } }, token: '{{credentials.token}}' });
    } else if (s['type'] === 'http' && scheme === 'basic') {
      auth.push({
        ...base,
        type: 'basic',
        fields: { username: { type: 'string', description: 'The user name (an email address for many APIs)' }, password: { type: 'string', secret: true, description: 'The password or API token' } },
        username: '{{credentials.username}}',
        password: '{{credentials.password}}',
      });
      guess(['auth', auth.length - 1, 'fields'], 'HTTP basic: name the two fields as the vendor does (email and API token, ...)');
    } else if (s['type'] === 'apiKey' && s['in'] === 'header' && typeof s['name'] === 'string' && /^[A-Za-z0-9-]+$/.test(s['name'])) {
      auth.push({ ...base, type: 'api_key', fields: { api_key: { type: 'string', secret: true } }, header: s['name'], value: '{{credentials.api_key}}' });
    } else if (s['type'] === 'oauth2' && isObj(s['flows']) && isObj(s['flows']['authorizationCode'])) {
      const flow = s['flows']['authorizationCode'];
      const scopes = Object.keys(isObj(flow['scopes']) ? flow['scopes'] : {});
      const refreshes = typeof flow['refreshUrl'] === 'string';
      auth.push({
        ...base,
        type: 'oauth2',
        fields: {
          access_token: { type: 'string', secret: true },
          ...(refreshes ? { refresh_token: { type: 'string', secret: true, required: false }, expires_at: { type: 'integer', required: false, description: 'Unix seconds' } } : {}),
        },
        authorize_url: String(flow['authorizationUrl']),
        token_url: String(flow['tokenUrl']),
        ...(scopes.length > 0 ? { scopes } : {}),
        token_request_auth: 'client_secret_post',
        refreshes,
        expires: refreshes,
      });
      const i = auth.length - 1;
      if (scopes.length > 0) guess(['auth', i, 'scopes'], 'every scope the description lists: keep only the ones the connector needs');
      guess(['auth', i, 'token_request_auth'], 'how the token endpoint takes the client secret (client_secret_post or client_secret_basic)');
      guess(['auth', i, 'refreshes'], refreshes ? 'the flow has a refreshUrl: tokens assumed to refresh and expire' : 'no refreshUrl: tokens assumed not to refresh');
    } else {
      report.push(`auth scheme ${schemeName} (${String(s['type'])}${scheme ? ` ${scheme}` : ''}${s['in'] ? ` in ${String(s['in'])}` : ''}): not expressible as a manifest auth variant`);
    }
  }
  if (auth.length === 0) {
    auth.push({ name: 'api_key', type: 'bearer', fields: { token: { type: 'string', secret: true } }, token: '{{credentials.token}}' });
    guess(['auth', 0], 'no usable security scheme in the description: a bearer token is assumed');
  }
  // Token variants first: they are what a sandbox or a first exec uses.
  manifest['auth'] = [...auth.filter((a) => a['type'] !== 'oauth2'), ...auth.filter((a) => a['type'] === 'oauth2')];

  // Errors: the message in the error response schema.
  const errorMessage = findErrorMessage(doc['paths'] as Record<string, PathItem>);
  if (errorMessage) {
    manifest['errors'] = { message: `{{default ${[...new Set([errorMessage, 'body.message', 'body.error'])].join(' ')}}}` };
    guess(['errors', 'message'], `from the error response schema (${errorMessage.replace(/^\(first body\.(.*)\)$/, '$1[0]').replace(/^body\./, '')})`);
  } else report.push('errors: no error response schema with a message field');

  // Entities.
  const plans = planEntities(doc['paths'] as Record<string, PathItem>, o.sidecar?.resources);
  const available = plans.map((p) => p.name);
  const wanted = o.entities && o.entities.length > 0 ? o.entities : undefined;
  if (wanted) {
    const unknown = wanted.filter((w) => !available.includes(w));
    if (unknown.length > 0) {
      throw new SwitchboardError('invalid_params', `--entities: ${unknown.join(', ')} not found in the description; entities (collection/item path pairs, RPC methods): ${available.join(', ')}`, {
        details: { unknown, valid: available },
      });
    }
  }
  const chosen = wanted ? wanted.map((w) => plans.find((p) => p.name === w)!) : plans;
  if (chosen.length === 0) throw new SwitchboardError('invalid_params', `No entity found in ${file}: no collection path with a GET (list) or item path with a GET (get)`);

  const sentHeaders: Record<string, string> = {};
  manifest['list_meta'] = { next_page: { type: ['string', 'integer', 'null'], description: 'What to pass for the next page (the pagination param of each list), null on the last page' } };
  const entities: Obj = {};
  let checkRequest: Obj | undefined;
  for (const plan of chosen) {
    const at = ['entities', plan.name];
    const actions: Obj = {};
    // A collection path answering one object (GET /me, GET /account): a get, not a list.
    const listed = plan.ops.list ? success(plan.ops.list.op).schema : undefined;
    let singleton = false;
    if (plan.ops.list && plan.ops.get === undefined && listed !== undefined && findRecords(listed, plan.name) === undefined && isObjectSchema(listed)) {
      plan.ops.get = plan.ops.list;
      delete plan.ops.list;
      singleton = true;
    }
    let recordSchema: OpenApiSchema | undefined;
    for (const action of ['list', 'get', 'create', 'update'] as const) {
      const def = plan.ops[action];
      if (def === undefined) continue;
      const aat = [...at, 'actions', action];
      const built = buildAction(def, action, plan, aat, guess, report, sentHeaders, new Set(o.sidecar?.auth?.params ?? []), o.sidecar?.pagination);
      actions[action] = built.action;
      if (action === 'get' && built.recordSchema) recordSchema = built.recordSchema;
      if (action === 'list' && built.recordSchema && recordSchema === undefined) recordSchema = built.recordSchema;
      if (action !== 'list' && built.recordSchema && recordSchema === undefined) recordSchema = built.recordSchema;
      if (action === 'list' && checkRequest === undefined && built.checkable) checkRequest = built.checkable;
    }
    const record = toJsonSchema(recordSchema ?? { type: 'object' }, { depth: 1, loose: true });
    const props = (record['properties'] ?? {}) as Obj;
    const pk = plan.idField ?? ['id', 'gid', 'uuid', 'key', plan.itemParam ?? ''].find((k) => k !== '' && props[k] !== undefined) ?? Object.keys(props).find((k) => /(^|_)id$/.test(k));
    if (pk !== undefined && props[pk] === undefined) props[pk] = { type: ['string', 'integer'] };
    if (pk === undefined) {
      props['id'] = { type: ['string', 'integer'] };
      guess([...at, 'primary_key'], 'no id-like field in the record schema: name the field that identifies a record');
    } else if (pk !== 'id' && plan.idField === undefined) guess([...at, 'primary_key'], `"${pk}" looks like the identifier`);
    const primaryKey = pk ?? 'id';
    // Only the key is required: lists often return compact records.
    const pkSchema = props[primaryKey] as Obj | undefined;
    if (pkSchema && Array.isArray(pkSchema['type'])) pkSchema['type'] = (pkSchema['type'] as string[]).filter((t) => t !== 'null').length === 1 ? (pkSchema['type'] as string[]).find((t) => t !== 'null') : pkSchema['type'];
    entities[plan.name] = {
      title: plan.name.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase()),
      primary_key: primaryKey,
      record: { type: 'object', required: [primaryKey], properties: props },
      actions,
    };
    if (recordSchema === undefined) guess([...at, 'record'], 'no response schema: describe the record\'s fields');
    if (singleton) guess([...at, 'actions', 'get'], `${plan.collection ?? ''} answers one object, not a list: scaffolded as get`);
  }
  manifest['entities'] = entities;
  for (const [h, v] of Object.entries(sentHeaders)) {
    (manifest['headers'] as Obj)[h] = v;
    guess(['headers', h], `the ${h} header parameter's default, sent on every request`);
  }

  // Credential check: a "who am I" path, else the first list without required params.
  const allPaths = doc['paths'] as Record<string, PathItem>;
  const WHO = ['/me', '/users/me', '/user', '/account', '/whoami', '/users/self', '/self'];
  const me =
    WHO.find((p) => allPaths[p]?.get !== undefined) ??
    // Under a version prefix (Stripe's /v1/account).
    WHO.flatMap((p) => Object.keys(allPaths).filter((k) => k.endsWith(p) && /^\/v\d+(\.\d+)?$/.test(k.slice(0, k.length - p.length)))).find((p) => allPaths[p]?.get !== undefined) ??
    // Under a versioned prefix (/rest/api/3/myself, /v2/me): the shortest such path.
    Object.keys(allPaths)
      .filter((p) => allPaths[p]?.get !== undefined && /\/(me|myself|whoami|users\/me|users\/self)$/.test(p))
      .sort((a, b) => a.length - b.length)[0];
  if (me) {
    manifest['check'] = { request: { method: 'GET', path: me } };
    guess(['check'], `${me} answers only with valid credentials`);
  } else if (checkRequest) {
    manifest['check'] = { request: checkRequest };
    guess(['check'], 'a one-record list proves the credentials; a "who am I" endpoint is better if the API has one');
  } else report.push('credential check: no "who am I" path and no list without required params');

  // Key order of the manifest as people write it: entities last.
  const order = ['manifest_version', 'type', 'title', 'kind', 'description', 'docs_url', 'vendor_description', 'base_url', 'config', 'headers', 'retry', 'auth', 'errors', 'check', 'list_meta', 'entities'];
  const ordered = Object.fromEntries(order.filter((k) => manifest[k] !== undefined).map((k) => [k, manifest[k]]));
  return {
    type: o.type,
    manifest: ordered,
    guesses,
    report,
    header: [
      `${String(manifest['title'])} — scaffolded by \`switchboard init ${o.type} --from-openapi\` from ${o.source}`,
      `(OpenAPI ${String(doc['openapi'])}${info['version'] !== undefined ? `, API version ${String(info['version'])}` : ''}; entities: ${chosen.map((c) => c.name).join(', ')}).`,
    ],
  };
}

/** A server URL with its variables replaced by `values` or their defaults. */
function substituteDefaults(server: Obj, values: Record<string, string> = {}): string {
  const vars = isObj(server['variables']) ? (server['variables'] as Record<string, Obj>) : {};
  return String(server['url']).replace(/\{([^}]+)\}/g, (m, name: string) => values[name] ?? (vars[name]?.['default'] !== undefined ? String(vars[name]?.['default']) : m));
}

/** `body.errors.0.message`-like path of the message in the first 4xx/default JSON error schema. */
function findErrorMessage(paths: Record<string, PathItem>): string | undefined {
  for (const item of Object.values(paths)) {
    for (const op of [item.get, item.post, item.put, item.patch]) {
      for (const [code, r] of Object.entries(op?.responses ?? {})) {
        if (!/^4\d\d$|^4XX$|^default$/i.test(code)) continue;
        const found = messagePath(jsonSchemaOf(r?.content), 3);
        // A list of plain messages (Jira's errorMessages: [string]): its first one.
        if (found?.at(-1) === FIRST) return `(first ${['body', ...found.slice(0, -1)].join('.')})`;
        if (found) return ['body', ...found].join('.');
      }
    }
  }
  return undefined;
}

/** Marks a message path that ends in a list of strings: the message is its first element. */
const FIRST = '\u0000first';

function messagePath(schema: OpenApiSchema | undefined, depth: number): string[] | undefined {
  if (schema === undefined || depth === 0) return undefined;
  const props = propertiesOf(schema);
  const strings = props.find(([k, v]) => /^(error_?messages|messages)$/i.test(k) && isArraySchema(v) && flatten(flatten(v)['items'])['type'] === 'string');
  if (strings) return [strings[0], FIRST];
  // description: Zendesk's {error: "RecordNotFound", description: "Not found"}; error only as a string.
  for (const key of ['message', 'error_description', 'detail', 'error_message', 'title', 'description', 'error']) {
    const p = props.find(([k, v]) => k === key && !isObjectSchema(v) && !isArraySchema(v));
    if (p) return [p[0]];
  }
  for (const [k, v] of props) {
    if (isArraySchema(v)) {
      const inner = messagePath(flatten(flatten(v)['items']), depth - 1);
      if (inner) return [k, '0', ...inner];
    } else if (isObjectSchema(v)) {
      const inner = messagePath(v, depth - 1);
      if (inner) return [k, ...inner];
    }
  }
  return undefined;
}

interface BuiltAction {
  action: Obj;
  recordSchema?: OpenApiSchema;
  /** For a list without required params: its request with a page size of 1, for the credential check. */
  checkable?: Obj;
}

function buildAction(
  def: { path: string; method: string; op: Operation; pathParams: Parameter[] },
  action: 'list' | 'get' | 'create' | 'update',
  plan: EntityPlan,
  at: (string | number)[],
  guess: (path: (string | number)[], message: string) => void,
  report: string[],
  sentHeaders: Record<string, string>,
  credentialParams: Set<string> = new Set(),
  sidecarPagination?: Sidecar['pagination'],
): BuiltAction {
  const where = `${plan.name}.${action} (${def.method} ${def.path})`;
  const params: BuiltParam[] = [];
  const taken = new Set<string>();
  for (const p of def.pathParams) {
    if (!isObj(p) || typeof p.name !== 'string') continue;
    if (p.in === 'cookie') {
      report.push(`${where}: cookie parameter ${p.name} left out (manifests send no cookies)`);
      continue;
    }
    if (p.deprecated && p.in !== 'path') continue;
    // The credential, when the description declares it as a parameter too (Slack's token): sent by the auth variant.
    if (credentialParams.has(p.name)) continue;
    if (p.in === 'header' && /^(authorization|accept|content-type)$/i.test(p.name)) continue;
    // A header with a default (an API version: Intercom-Version, Stripe-Version) is sent on every request, not asked for.
    const headerDefault = p.in === 'header' && isObj(p.schema) ? p.schema['default'] : undefined;
    if (headerDefault !== undefined && ['string', 'number'].includes(typeof headerDefault) && /^[A-Za-z0-9-]+$/.test(p.name)) {
      sentHeaders[p.name] = String(headerDefault);
      continue;
    }
    // style: deepObject: an object (or an object-or-scalar such as Stripe's created) is one param per
    // property, sent as name[prop]; an array is sent as name[] (Stripe's expand[]=customer).
    if (p.in === 'query' && p.style === 'deepObject' && p.schema !== undefined) {
      const objectBranch = [p.schema, ...((flatten(p.schema)['anyOf'] ?? flatten(p.schema)['oneOf'] ?? []) as OpenApiSchema[])].find((b) => isObjectSchema(b) && propertiesOf(b).length > 0);
      if (objectBranch !== undefined && !isArraySchema(p.schema)) {
        for (const [prop, ps] of propertiesOf(objectBranch)) {
          const name = safeName(`${p.name}_${prop}`);
          if (taken.has(name)) continue;
          taken.add(name);
          const schema = withType(toJsonSchema(ps, { depth: 1, required: true })) as BuiltParam['schema'];
          params.push({ name, original: p.name, in: 'query', schema, key: `${p.name}[${prop}]` });
        }
        continue;
      }
    }
    let name = safeName(p.name);
    if (taken.has(name)) name = `${p.in}_${name}`;
    taken.add(name);
    const schema = withType(toJsonSchema(p.schema ?? { type: 'string' }, { depth: 1, required: true })) as BuiltParam['schema'];
    const description = shortText(p.description);
    if (description) schema['description'] = description;
    if (p.in === 'path') {
      schema['required'] = true;
      if (schema['type'] === 'string' && schema['minLength'] === undefined) schema['minLength'] = 1;
    } else if (p.required) schema['required'] = true;
    const deepArray = p.in === 'query' && p.style === 'deepObject' && schema['type'] === 'array';
    params.push({ name, original: p.name, in: p.in, schema, ...(p.explode === false && p.in === 'query' ? { explodeFalse: true } : {}), ...(deepArray ? { key: `${p.name}[]` } : {}) });
  }

  // The JSON (else form-encoded) request body: its fields are params; a single-key wrapper is put back by the template.
  let bodyTemplate: unknown;
  let form = false;
  if (action === 'create' || action === 'update') {
    const content = def.op.requestBody?.content;
    const form_ = formSchemaOf(content);
    const schema = jsonSchemaOf(content) ?? form_;
    form = form_ !== undefined;
    if (content && schema === undefined && Object.keys(content).length > 0) report.push(`${where}: request body ${Object.keys(content).join(', ')} is neither JSON nor a form; left out`);
    if (schema !== undefined) {
      const props = propertiesOf(schema);
      let wrapper: string | undefined;
      let inner = schema;
      if (props.length === 1 && isObjectSchema(props[0]![1]) && propertiesOf(props[0]![1]).length > 0) {
        wrapper = props[0]![0];
        inner = props[0]![1];
      }
      const required = new Set<string>(Array.isArray(flatten(inner)['required']) ? (flatten(inner)['required'] as string[]) : []);
      const fields: Obj = {};
      for (const [field, fs] of propertiesOf(inner, { writable: true })) {
        if (credentialParams.has(field)) continue;
        let name = safeName(field);
        if (taken.has(name)) {
          name = `body_${name}`;
          guess([...at, 'params', name], `renamed: "${field}" is also a path or query param`);
        }
        taken.add(name);
        // Nested objects keep their shape (and required fields) a few levels down, so what the
        // param accepts is what the description's body takes (HubSpot's associations[].types[]).
        const js = withType(toJsonSchema(fs, { depth: 4, required: true })) as BuiltParam['schema'];
        if (required.has(field)) js['required'] = true;
        params.push({ name, original: field, in: 'body', schema: js });
        fields[field] = `{{params.${name}}}`;
      }
      bodyTemplate = wrapper !== undefined ? { [wrapper]: fields } : fields;
      if (wrapper !== undefined) guess([...at, 'request', 'body'], `the description wraps the fields in "${wrapper}"; params are the fields inside`);
    }
  }

  const out: Obj = {};
  const description = shortText(def.op.summary ?? def.op.description);
  if (description || def.op.operationId) out['description'] = `${description ?? ''}${def.op.operationId ? `${description ? ' ' : ''}(${def.op.operationId})` : ''}`;
  if (params.length > 0) out['params'] = Object.fromEntries(params.map((p) => [p.name, p.schema]));
  const pathTemplate = def.path.replace(/\{([^}]+)\}/g, (_m, n: string) => `{{params.${params.find((p) => p.in === 'path' && p.original === n)?.name ?? safeName(n)}}}`);
  for (const m of def.path.matchAll(/\{([^}]+)\}/g)) {
    if (!params.some((p) => p.in === 'path' && p.original === m[1])) {
      const name = safeName(m[1]!);
      params.push({ name, original: m[1]!, in: 'path', schema: { type: 'string', minLength: 1, required: true } });
      out['params'] = Object.fromEntries(params.map((p) => [p.name, p.schema]));
      guess([...at, 'params', name], 'path parameter not declared in the description');
    }
  }
  const request: Obj = { method: def.method, path: pathTemplate };
  const query = params.filter((p) => p.in === 'query');
  if (query.length > 0) request['query'] = Object.fromEntries(query.map((p) => [p.key ?? p.original, p.explodeFalse && isArrayParam(p) ? `{{join params.${p.name} ','}}` : `{{params.${p.name}}}`]));
  const headers = params.filter((p) => p.in === 'header');
  if (headers.length > 0) request['headers'] = Object.fromEntries(headers.map((p) => [p.original, `{{params.${p.name}}}`]));
  if (bodyTemplate !== undefined) request['body'] = bodyTemplate;
  if (bodyTemplate !== undefined && form) {
    request['body_encoding'] = 'form';
    guess([...at, 'request', 'body_encoding'], 'the description takes application/x-www-form-urlencoded: nested fields are sent as deepObject keys (metadata[key], items[0][price])');
  }
  if (def.method === 'POST' && action === 'update') guess([...at, 'request', 'method'], 'the item path has no PATCH or PUT: its POST is taken as the update');
  out['request'] = request;

  const res = success(def.op);
  const result: BuiltAction = { action: out };
  if (action === 'list') {
    // An RPC answer's one array is its records, whatever its items' schema says (Slack's channels).
    const arrays = plan.rpc === true && res.schema !== undefined ? propertiesOf(res.schema).filter(([, v]) => isArraySchema(v)) : [];
    const found = findRecords(res.schema, plan.name) ?? (arrays.length === 1 ? { path: [arrays[0]![0]], item: flatten(flatten(arrays[0]![1])['items']) } : undefined);
    if (found === undefined) {
      out['response'] = { records: '{{body}}', meta: { next_page: '{{null}}' } };
      guess([...at, 'response', 'records'], 'no array in the response schema: where are the records?');
      report.push(`${where}: records not found in the response schema`);
    } else {
      out['response'] = { records: bodyAt(found.path), meta: { next_page: '{{null}}' } };
      if (found.path.length > 0) guess([...at, 'response', 'records'], `records unwrapped from "${found.path.join('.')}"`);
      if (found.item) result.recordSchema = found.item;
    }
    // The sidecar's cursor (Slack: cursor ← response_metadata.next_cursor) where the description declares none.
    const sc = sidecarPagination;
    const scParam = sc?.cursor_param === undefined ? undefined : params.find((p) => p.in === 'query' && p.original === sc.cursor_param);
    const pg =
      inferPagination(params, res, found?.path ?? [], found?.item) ??
      (scParam !== undefined && sc?.next_cursor !== undefined
        ? { pagination: { type: 'cursor', param: scParam.name, next: `{{body.${sc.next_cursor}}}` }, meta: `{{body.${sc.next_cursor}}}`, why: `cursor: the sidecar's pagination (${sc.cursor_param} ← ${sc.next_cursor})` }
        : undefined);
    if (pg) {
      out['pagination'] = pg.pagination;
      (out['response'] as Obj)['meta'] = { next_page: pg.meta };
      guess([...at, 'pagination'], pg.why);
    } else report.push(`${where}: no pagination inferred (no cursor, offset or page param with a matching response field, no Link header)`);
    if (!params.some((p) => p.schema['required'] === true)) {
      const limit = params.find((p) => LIMIT_PARAMS.includes(norm(p.original)) && p.in === 'query');
      result.checkable = { method: 'GET', path: pathTemplate, ...(limit ? { query: { [limit.original]: '1' } } : {}) };
    }
  } else {
    const declared = plan.recordKey === undefined ? undefined : propertiesOf(res.schema ?? {}).find(([k]) => k === plan.recordKey);
    const found = declared !== undefined ? { path: [declared[0]], schema: flatten(declared[1]) } : findRecord(res.schema, singular(plan.name));
    out['response'] = { record: bodyAt(found.path) };
    if (found.path.length > 0) guess([...at, 'response', 'record'], `record unwrapped from "${found.path.join('.')}"`);
    if (res.schema === undefined) report.push(`${where}: no JSON response schema; the record is assumed to be the body`);
    if (found.schema) result.recordSchema = found.schema;
  }
  return result;
}

const isArrayParam = (p: BuiltParam): boolean => p.schema['type'] === 'array' || (Array.isArray(p.schema['type']) && (p.schema['type'] as string[]).includes('array'));

/** Cursor, offset or page pagination from the list's params and its response; or a Link header. */
function inferPagination(params: BuiltParam[], res: { schema?: OpenApiSchema; headers: string[] }, recordsPath: string[], item?: OpenApiSchema): { pagination: Obj; meta: string; why: string } | undefined {
  const query = params.filter((p) => p.in === 'query');
  const fields = scalarFields(res.schema).filter((f) => f.path.join('.') !== recordsPath.join('.'));
  const boolish = (f: { schema: OpenApiSchema }): boolean => f.schema['type'] === 'boolean' || f.schema['type'] === undefined;
  const more = fields.find((f) => HAS_MORE.includes(norm(f.path.at(-1)!)) && boolish(f));
  const last = more === undefined ? fields.find((f) => IS_LAST.includes(norm(f.path.at(-1)!)) && f.schema['type'] === 'boolean') : undefined;
  // has_more as a template: the field itself, or the negation of an "is last page" flag.
  const hasMore = more !== undefined ? { path: more.path, tpl: bodyAt(more.path) } : last !== undefined ? { path: last.path, tpl: `{{not ${['body', ...last.path].join('.')}}}` } : undefined;
  const limit = query.find((p) => LIMIT_PARAMS.includes(norm(p.original)));
  for (const p of query) {
    const n = norm(p.original);
    if (!CURSOR_PARAMS.includes(n) && !CURSOR_PARAMS.includes(norm(/\[(\w+)\]$/.exec(p.original)?.[1] ?? ''))) continue;
    const stringy = p.schema['type'] === 'string' || (Array.isArray(p.schema['type']) && (p.schema['type'] as string[]).includes('string'));
    if (n === 'offset' && !stringy) continue;
    // The response field that carries the next value: one named like the param, under a "next" parent preferably, else a next-cursor name.
    // A bracketed param (Zendesk's page[after]) also matches its inner name with "cursor" (meta.after_cursor).
    const inner = /\[(\w+)\]$/.exec(p.original)?.[1];
    const names = inner === undefined ? [n] : [n, `${norm(inner)}cursor`, norm(inner)];
    const same = names.map((name) => fields.filter((f) => norm(f.path.at(-1)!) === name)).find((list) => list.length > 0) ?? [];
    const next = same.find((f) => f.path.some((s) => /next/i.test(s))) ?? same[0] ?? fields.find((f) => NEXT_FIELDS.includes(norm(f.path.at(-1)!)) && f.schema['type'] !== 'boolean');
    if (next === undefined) {
      // Stripe: starting_after=<the last record's id> while has_more is true; no next field.
      const idField = item === undefined ? undefined : ['id', 'gid', 'uuid'].find((k) => propertiesOf(item).some(([f]) => f === k));
      if ((n === 'startingafter' || n === 'after') && hasMore && idField !== undefined) {
        const records = recordsPath.length > 0 ? `body.${recordsPath.join('.')}` : 'body';
        const lastId = `{{get (last ${records}) '${idField}'}}`;
        const cond = hasMore.tpl.slice(2, -2);
        return {
          pagination: { type: 'cursor', param: p.name, next: lastId, has_more: hasMore.tpl },
          meta: `{{when ${cond.includes(' ') ? `(${cond})` : cond} (${lastId.slice(2, -2)})}}`,
          why: `cursor: ${p.original} takes the last record's ${idField} while ${hasMore.path.join('.')} is true`,
        };
      }
      continue;
    }
    const tpl = bodyAt(next.path);
    return {
      pagination: { type: 'cursor', param: p.name, next: tpl, ...(hasMore ? { has_more: hasMore.tpl } : {}) },
      // With a has_more flag the cursor may stay set on the last page (Zendesk's meta.after_cursor): null there.
      meta: hasMore ? `{{when ${/\s/.test(hasMore.tpl.slice(2, -2)) ? `(${hasMore.tpl.slice(2, -2)})` : hasMore.tpl.slice(2, -2)} ${['body', ...next.path].join('.')}}}` : tpl,
      why: `cursor: the ${p.original} param takes the response's ${next.path.join('.')}`,
    };
  }
  // A declared Link header is the API's own next-page URL (GitHub: page/per_page behind Link): followed as given.
  if (res.headers.some((h) => h.toLowerCase() === 'link')) {
    const page = query.find((p) => PAGE_PARAMS.includes(norm(p.original)) || OFFSET_PARAMS.includes(norm(p.original)));
    return { pagination: { type: 'link_header' }, meta: '{{null}}', why: `the response declares a Link header (rel="next")${page ? `, followed rather than counting ${page.original}` : ''}` };
  }
  const offset = query.find((p) => OFFSET_PARAMS.includes(norm(p.original)) && p.schema['type'] !== 'string');
  if (offset && limit) {
    return {
      pagination: { type: 'offset', param: offset.name, limit_param: limit.name, default_limit: defaultLimit(limit) },
      meta: '{{null}}',
      why: `offset: ${offset.original} advances by the records received; ${limit.original} is the page size`,
    };
  }
  const page = query.find((p) => PAGE_PARAMS.includes(norm(p.original)));
  if (page) {
    const start = typeof page.schema['minimum'] === 'number' && page.schema['minimum'] === 0 ? 0 : 1;
    return {
      pagination: { type: 'page', param: page.name, start, ...(limit ? { limit_param: limit.name, default_limit: defaultLimit(limit) } : {}), ...(hasMore ? { has_more: hasMore.tpl } : {}) },
      meta: '{{null}}',
      why: `page numbers from ${start} in ${page.original}${limit ? `, page size ${limit.original}` : ''}`,
    };
  }
  return undefined;
}

/** The page size a request without the limit param gets: the param's default, else a guess within its bounds. */
function defaultLimit(limit: BuiltParam): number {
  const d = limit.schema['default'];
  if (typeof d === 'number' && d >= 1) return Math.floor(d);
  const max = typeof limit.schema['maximum'] === 'number' ? limit.schema['maximum'] : undefined;
  return max !== undefined ? Math.min(max, 20) : 20;
}
