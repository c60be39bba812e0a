/**
 * The generic stateful simulator: any OpenAPI 3 description becomes a local fake of its API.
 *
 * - Every request is checked against the description (description.ts): unknown paths answer 404,
 *   other methods 405, missing credentials 401, bad parameters or bodies 400 — all in the
 *   vendor's error shape (the sidecar's `error.body`, else a sample of the description's error
 *   response schema with its message and code fields filled in).
 * - Resources are inferred from collection/item path pairs (`/projects`, `/projects/{project_gid}`,
 *   nested collections like `/projects/{project_gid}/sections` included): each is seeded with
 *   deterministic records sampled from its response schema (openapi-sampler, ids from a seeded
 *   PRNG), and create/get/update/delete/list keep state, so a create then a get returns what was
 *   created. Envelopes (`{data: ...}`) are found in the schemas and put back on the way out.
 * - Lists page the way the list operation's parameters say (an opaque cursor or offset token,
 *   a page number, a limit), with the next cursor where the response schema carries one.
 * - Other operations (actions such as /projects/{gid}/duplicate) answer a sample of their
 *   success response once the request is valid.
 * - The sidecar (sidecar.ts) adds what a description cannot say: the error body, accepted
 *   tokens, rate limits and their headers, cursor fields, page-size caps.
 */
import { randomUUID } from 'node:crypto';
import { sample as sampleSchema } from 'openapi-sampler';
import { Description, loadDescription, type Json, type Operation, type RequestProblem } from './description.ts';
import { oauthServer, type OAuthClient, type OAuthGrants } from './oauth.ts';
import { jwtTokenServer } from './jwt-tokens.ts';
import type { KeyObject } from 'node:crypto';
import { fill, listPage, readPath, RuleError, Scroll, search, type RecordSource } from './rules.ts';
import { appendToParent, conflictMessage, uniqueConflict, upsertTarget } from './store-rules.ts';
import { included, listItemFields, pick } from './record-views.ts';
import { declaredOperations, loadSidecar, RESOURCE_ACTIONS, seedCount, seedOf, type ErrorOverride, type Pagination, type ResourceDeclaration, type Sidecar } from './sidecar.ts';
import { parentLinks, parentParams, type ParentLink } from './parent-links.ts';
import { realisticRecord } from './realistic.ts';
import { mixSeed, seededRandom, startSimulator, TokenBucket, type SimRequest, type SimResponse, type Simulator } from './sim-server.ts';

export interface OpenApiSimulatorOptions {
  /** The description: a loaded one, or a YAML/JSON file. */
  description: Description | string;
  sidecar?: Sidecar | string | undefined;
  port?: number | undefined;
  host?: string | undefined;
  /** PRNG seed: the same seed always yields the same records. Default 1. */
  seed?: number | undefined;
  /** Most records a resource keeps (seeded and created); a create beyond answers 507. Default 100 000. */
  maxRecords?: number | undefined;
  /** Tokens accepted (overrides the sidecar's auth.tokens). */
  tokens?: Iterable<string> | undefined;
  /** Rate limit (overrides the sidecar's); false disables it. */
  rateLimit?: RateLimit | false | undefined;
  /** The OAuth client the sidecar's oauth flow accepts; default sim_client / sim_secret. */
  oauthClient?: { clientId?: string | undefined; clientSecret?: string | undefined } | undefined;
  /**
   * Code for operations whose behaviour is a state machine the sidecar cannot declare, by
   * operation ("GET /contacts/{contact_id}"). It runs after the request passed every check
   * against the description; throwing a SimulatorError answers in the vendor's error shape.
   */
  handlers?: Record<string, OperationHandler> | undefined;
  /** Public keys (PEM or KeyObject) by JWT issuer for the sidecar's jwt_tokens, beside its public_keys. */
  jwtKeys?: Record<string, KeyObject | string> | undefined;
  /** Clock in ms for JWT checks and minted tokens' expiry; default Date.now. */
  now?: (() => number) | undefined;
  /**
   * Records of a resource kept outside the generic store (by a caller with state of its own), in
   * stored order, rendered on demand: the sidecar's search, scroll and pages rules read them. A
   * source keyed by an operation ("POST /companies/list") serves that operation's rule alone.
   */
  sources?: Record<string, RecordSource> | undefined;
  /**
   * Records of a resource the caller seeds itself (a Map of id to {record, parents}; a LazyRecords
   * for large generated sets): the store keeps them in this map and seeds nothing more for it.
   */
  records?: Record<string, Map<string, StoredRecord>> | undefined;
  /** Variables of the sidecar's record templates beside {{n}}, {{id}} and {{now}} (a workspace's id). */
  vars?: Record<string, unknown> | undefined;
}

export type RateLimit = NonNullable<Sidecar['rate_limit']>;

/** A request that passed the description's checks, as an operation handler sees it. */
export interface OperationContext {
  req: SimRequest;
  op: Operation;
  /** Path params, as text. */
  params: Record<string, string>;
  /** Query params, coerced to the description's types. */
  query: Json;
  /** The parsed JSON body ({} when the operation takes none). */
  body: Json;
  /** scheme://host of the request, for links. */
  origin: string;
}

/** Undefined lets the generic store answer, with the body as the handler left it (a handler that checks or reshapes a write). */
export type OperationHandler = (ctx: OperationContext) => SimResponse | undefined;

/** An error an operation handler answers, in the vendor's error shape (the sidecar's error body). */
export class SimulatorError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The path parameter a 404 is about: the sidecar's not_found names its code and message. */
    readonly field?: string,
  ) {
    super(message);
  }
}

export interface StoredRecord {
  record: Json;
  /** Path params of the collection it was created under (project_gid of /projects/{project_gid}/sections). */
  parents: Record<string, string>;
}

export interface Resource {
  name: string;
  /** The sidecar's declaration of an RPC-style resource (which operations list, get... it). */
  declared?: ResourceDeclaration;
  /** Records from the description's own success examples, seeded in turn (declared resources). */
  examples?: Json[];
  /** The record field the item path's id names. */
  idField: string;
  /** The record as the item GET answers it: pointer of its schema and envelope key. */
  recordRef: string | undefined;
  records: Map<string, StoredRecord>;
  /** Records created through the API so far (the PRNG stream of new ids). */
  created: number;
  /** Other fields an item path's id may name (the sidecar's lookup: Jira's issue and project keys). */
  lookup: string[];
}

export interface OpenApiSimulator extends Simulator {
  description: Description;
  sidecar: Sidecar;
  resources: Map<string, Resource>;
  seed: number;
  /** The tokens accepted when the sidecar lists any (add or delete to grant or revoke). */
  tokens: Set<string>;
  /** The OAuth client of the sidecar's oauth flow; set `deny` to refuse consent. */
  oauth: OAuthClient;
  /** Public keys by JWT issuer accepted by the sidecar's jwt_tokens operation (add to register an app). */
  jwtKeys: Map<string, KeyObject | string>;
  /** When each token minted by jwt_tokens expires (ms); delete a token from `tokens` to revoke it. */
  tokenExpiry: Map<string, number>;
  /** Change (or disable) the rate limit; starts a fresh window. */
  setRateLimit(limit: RateLimit | false): void;
  /** Start a fresh rate-limit window (also done by reset()). */
  resetRateLimit(): void;
  /** Expire every access token the OAuth flow issued so far (when the sidecar's oauth sets expires_in): the next use is a 401 expired_token. */
  expireAccessTokens(): void;
  /** Close the open scroll of every scroll rule (also done by reset()). */
  closeScrolls(): void;
  /**
   * Change upstream data without the API (tests): add a record as a create would (the template or
   * a sample, a fresh id, timestamps now) with `fields` over it; merge fields into a record and
   * stamp its update time (undefined for an unknown id); remove a record (false when there was none).
   */
  addRecord(resource: string, fields?: Json): Json;
  updateRecord(resource: string, id: string, fields?: Json): Json | undefined;
  removeRecord(resource: string, id: string): boolean;
}

const ENVELOPE_KEYS = ['data', 'result', 'record', 'item', 'results', 'items'];
const CURSOR_PARAMS = ['cursor', 'starting_after', 'after', 'page_token', 'pageToken', 'nextPageToken', 'next_cursor', 'offset', 'start_cursor', 'startAt', 'start_at'];
const LIMIT_PARAMS = ['limit', 'per_page', 'page_size', 'pageSize', 'count', 'max_results', 'maxResults'];
const PAGE_PARAMS = ['page', 'page_number'];

type Kind = 'list' | 'create' | 'get' | 'update' | 'delete' | 'action';

interface Classified {
  kind: Kind;
  resource?: string;
  /** The item path's id parameter. */
  idParam?: string;
  /** Declared by the sidecar (an RPC method): the id and parent are query or body params, not path segments. */
  rpc?: boolean;
  /** An item path with several ids (/repos/{owner}/{repo}): its params, found through the sidecar's resources.<name>.key. */
  keyParams?: string[];
  /** A get by a query parameter (the sidecar's resources.<name>.get.id_query). */
  idQuery?: string;
}

const clone = <T>(v: T): T => structuredClone(v);

/**
 * A schema's properties, allOf branches merged and, of oneOf/anyOf branches, the one with the most
 * properties (Stripe's customer over deleted_customer, Notion's full page over its partial one).
 */
function propertiesOf(d: Description, schema: Json | undefined, depth = 0): Record<string, Json> {
  if (schema === undefined || depth > 8) return {};
  const s = d.resolve(schema);
  const out: Record<string, Json> = { ...((s.properties ?? {}) as Record<string, Json>) };
  for (const part of (s.allOf ?? []) as Json[]) Object.assign(out, propertiesOf(d, part, depth + 1));
  if (Object.keys(out).length > 0) return out;
  let best: Record<string, Json> = {};
  for (const alt of (s.oneOf ?? s.anyOf ?? []) as Json[]) {
    const props = propertiesOf(d, alt, depth + 1);
    if (Object.keys(props).length > Object.keys(best).length) best = props;
  }
  return best;
}

const isArraySchema = (d: Description, s: Json | undefined): boolean => s !== undefined && d.resolve(s).type === 'array';

/** `tickets` → `ticket`, `companies` → `company`: the key a record of the resource is wrapped in. */
function singularOf(name: string): string {
  if (/ies$/.test(name)) return name.replace(/ies$/, 'y');
  if (/(ss|x|ch|sh)es$/.test(name)) return name.replace(/es$/, '');
  return name.replace(/s$/, '');
}

/** The envelope key of a single-record body (`{data: {...}}`, Zendesk's `{ticket: {...}}`), or undefined for a bare record. */
function envelopeOf(d: Description, schema: Json | undefined, resource?: string): string | undefined {
  const props = propertiesOf(d, schema);
  const keys = Object.keys(props);
  const candidates = resource === undefined ? ENVELOPE_KEYS : [...ENVELOPE_KEYS, singularOf(resource)];
  const key = candidates.find((k) => props[k] !== undefined && !isArraySchema(d, props[k]) && d.resolve(props[k]).type !== 'string');
  return key !== undefined && keys.length <= 3 ? key : undefined;
}

/** The array property of a list body, or '' when the body is the array itself. */
function listKeyOf(d: Description, schema: Json | undefined, resource: string): string | undefined {
  if (schema === undefined) return undefined;
  if (isArraySchema(d, schema)) return '';
  const props = propertiesOf(d, schema);
  return [...ENVELOPE_KEYS, resource].find((k) => isArraySchema(d, props[k])) ?? Object.keys(props).find((k) => isArraySchema(d, props[k]));
}

/** Dotted path to the field of a list body that carries the next cursor (next_page.offset, pages.next.starting_after). */
function nextCursorPath(d: Description, schema: Json | undefined, cursorParam: string): string | undefined {
  const names = [cursorParam, 'next_cursor', 'next_page_token', 'nextPageToken', 'cursor', 'next'];
  const walk = (s: Json | undefined, prefix: string, depth: number): string | undefined => {
    if (depth > 3) return undefined;
    const props = propertiesOf(d, s);
    for (const n of names) if (props[n] !== undefined && d.resolve(props[n]).type !== 'object') return `${prefix}${n}`;
    for (const [k, v] of Object.entries(props)) {
      if (d.resolve(v).type === 'array') continue;
      const found = Object.keys(propertiesOf(d, v)).length > 0 ? walk(v, `${prefix}${k}.`, depth + 1) : undefined;
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return walk(schema, '', 0);
}

/** The value at a dotted path of a record (undefined when a step is missing). */
function getPath(obj: unknown, path: string): unknown {
  let o: unknown = obj;
  for (const p of path.split('.')) o = o !== null && typeof o === 'object' ? (o as Json)[p] : undefined;
  return o;
}

function setPath(obj: Json, path: string, value: unknown): void {
  const parts = path.split('.');
  let o = obj;
  for (const p of parts.slice(0, -1)) {
    if (o[p] === null || typeof o[p] !== 'object' || Array.isArray(o[p])) o[p] = {};
    o = o[p] as Json;
  }
  o[parts[parts.length - 1] as string] = value;
}

function deletePath(obj: Json, path: string): void {
  const parts = path.split('.');
  const holder = getPath(obj, parts.slice(0, -1).join('.'));
  if (isPlainObject(holder)) delete holder[parts[parts.length - 1] as string];
}

/** Put messages and codes into a sampled error body wherever it has room for them. */
function fillError(body: unknown, p: RequestProblem, code: string): unknown {
  if (Array.isArray(body)) return body.slice(0, 1).map((b) => fillError(b, p, code));
  if (body === null || typeof body !== 'object') return body;
  const out: Json = {};
  for (const [k, v] of Object.entries(body as Json)) {
    if (typeof v === 'string' && /^(message|error_description|detail|error_message|title)$/i.test(k)) out[k] = p.message;
    else if (/^(code|error_code|type)$/i.test(k) && typeof v === 'string' && k !== 'type') out[k] = code;
    else if (/^(status|status_code)$/i.test(k) && typeof v === 'number') out[k] = p.status;
    else if (k === 'field' || k === 'param') out[k] = p.field ?? null;
    else out[k] = fillError(v, p, code);
  }
  return out;
}

/** Fill a sidecar error template; keys whose value renders to "" are left out. */
function render(template: unknown, vars: Record<string, string | number>): unknown {
  if (typeof template === 'string') {
    const whole = /^\{\{(\w+)\}\}$/.exec(template);
    if (whole !== null && typeof vars[whole[1] as string] === 'number') return vars[whole[1] as string];
    return template.replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(vars[k] ?? ''));
  }
  if (Array.isArray(template)) return template.map((t) => render(t, vars));
  if (template !== null && typeof template === 'object') {
    // Keys are templates too ({"{{field}}": "{{message}}"}, Jira's errors by field); an entry whose key or value renders to "" is left out.
    return Object.fromEntries(
      Object.entries(template as Json)
        .map(([k, v]) => [render(k, vars) as string, render(v, vars)] as const)
        .filter(([k, v]) => v !== '' && k !== ''),
    );
  }
  return template;
}

/** A record field against a query value: as numbers when both are numeric (Slack's ts "1700000000.000100"), else as times; undefined when neither. */
function compareValues(field: unknown, value: unknown): number | undefined {
  const num = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN);
  const [a, b] = [num(field), num(value)];
  if (!Number.isNaN(a) && !Number.isNaN(b)) return a - b;
  const [x, y] = [timeOf(String(field)), timeOf(String(value))];
  return Number.isNaN(x) || Number.isNaN(y) ? undefined : x - y;
}

/** Date.parse, remembered: a list filtered by time compares every record's field on every request. */
const times = new Map<string, number>();
function timeOf(s: string): number {
  let t = times.get(s);
  if (t === undefined) {
    if (times.size >= 500_000) times.clear();
    t = Date.parse(s);
    times.set(s, t);
  }
  return t;
}

const isPlainObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Merge `over` into `base` (plain objects key by key, anything else replaced). */
function deepMerge(base: Json, over: Json): Json {
  for (const [k, v] of Object.entries(over)) base[k] = isPlainObject(v) && isPlainObject(base[k]) ? deepMerge(base[k] as Json, v) : v;
  return base;
}

/** A next-page token: the offset, and the id of the page's last record (the next page starts after it while it is listed). */
const encodeToken = (offset: number, after?: unknown): string => Buffer.from(JSON.stringify(after === undefined ? { o: offset } : { o: offset, k: after })).toString('base64url');
function decodeToken(s: string): { offset: number; after: unknown } | undefined {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as { o?: unknown; k?: unknown };
    return Number.isInteger(v.o) && (v.o as number) >= 0 ? { offset: v.o as number, after: v.k } : undefined;
  } catch {
    return undefined;
  }
}

function hashString(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h >>> 0;
}

/** Start a simulator of an OpenAPI description on a loopback port. */
export async function startOpenApiSimulator(options: OpenApiSimulatorOptions): Promise<OpenApiSimulator> {
  const d = typeof options.description === 'string' ? new Description(await loadDescription(options.description)) : options.description;
  const sidecar: Sidecar = typeof options.sidecar === 'string' ? loadSidecar(options.sidecar) : (options.sidecar ?? {});
  const seed = options.seed ?? 1;
  const tokens = new Set(options.tokens ?? sidecar.auth?.tokens ?? []);
  // Tokens are checked when a list was given, even once every token in it is revoked (an empty set
  // then refuses all); without one, any credential the description's scheme accepts will do.
  const checkTokens = options.tokens !== undefined || sidecar.auth?.tokens !== undefined;
  let rateLimit: RateLimit | undefined = options.rateLimit === false ? undefined : (options.rateLimit ?? sidecar.rate_limit);
  const oauth: OAuthClient = { clientId: options.oauthClient?.clientId ?? 'sim_client', clientSecret: options.oauthClient?.clientSecret ?? 'sim_secret', deny: false };
  const grants: OAuthGrants = { expiries: new Map(), refreshTokens: new Map() };
  const samples = new Map<string, unknown>();
  /** A sample of the schema at a pointer (computed once, a fresh copy each time). */
  const sample = (pointer: string | undefined): unknown => clone(peek(pointer));
  /** The cached sample itself, to read and never to change. */
  const peek = (pointer: string | undefined): unknown => {
    if (pointer === undefined) return {};
    if (!samples.has(pointer)) samples.set(pointer, sampleSchema({ $ref: pointer } as never, { skipWriteOnly: true, quiet: true }, d.doc));
    return samples.get(pointer);
  };
  const anyErrorRef = d.operations.find((o) => o.errorRef !== undefined)?.errorRef;

  // ---------------------------------------------------------------- resources
  const itemNames = new Map<string, string>(); // resource → id param, from item paths
  // Item paths with several ids after a word (/repos/{owner}/{repo}) whose collection is elsewhere
  // (/user/repos): the resource named by the word, its records found by the ids' key fields.
  const compositeItems = new Map<string, { resource: string; params: string[] }>();
  const isParam = (seg: string | undefined): boolean => seg?.startsWith('{') === true;
  for (const op of d.operations) {
    const segs = op.path.split('/').filter((s) => s !== '');
    const last = segs[segs.length - 1];
    const prev = segs[segs.length - 2];
    if (last?.startsWith('{') && prev !== undefined && !prev.startsWith('{')) itemNames.set(prev, last.slice(1, -1));
  }
  for (const op of d.operations) {
    const segs = op.path.split('/').filter((s) => s !== '');
    if (!isParam(segs[segs.length - 1]) || !isParam(segs[segs.length - 2])) continue;
    let word = segs.length - 1;
    while (word >= 0 && isParam(segs[word])) word--;
    const name = segs[word];
    if (word !== 0 || name === undefined || itemNames.has(name)) continue;
    const hasCollection = d.operations.some((o) => o.path !== op.path && o.path.split('/').filter((x) => x !== '').at(-1) === name && (o.method === 'GET' || o.method === 'POST'));
    if (hasCollection) compositeItems.set(op.path, { resource: name, params: segs.slice(word + 1).map((x) => x.slice(1, -1)) });
  }
  for (const { resource, params } of compositeItems.values()) itemNames.set(resource, params.join(','));
  const classify = (op: Operation): Classified => {
    const segs = op.path.split('/').filter((s) => s !== '');
    const last = segs[segs.length - 1] ?? '';
    const prev = segs[segs.length - 2];
    const composite = compositeItems.get(op.path);
    if (composite !== undefined) {
      const kind: Kind = op.method === 'GET' ? 'get' : op.method === 'PUT' || op.method === 'PATCH' ? 'update' : op.method === 'DELETE' ? 'delete' : 'action';
      return { kind, resource: composite.resource, keyParams: composite.params };
    }
    if (last.startsWith('{') && prev !== undefined && itemNames.get(prev) === last.slice(1, -1)) {
      // POST on the item path updates it when the path has no PUT or PATCH (Stripe's POST /v1/customers/{customer}).
      const postUpdates = op.method === 'POST' && !d.operations.some((o) => o.path === op.path && (o.method === 'PUT' || o.method === 'PATCH'));
      const kind: Kind = op.method === 'GET' ? 'get' : op.method === 'PUT' || op.method === 'PATCH' || postUpdates ? 'update' : op.method === 'DELETE' ? 'delete' : 'action';
      return { kind, resource: prev, idParam: last.slice(1, -1) };
    }
    if (!last.startsWith('{') && itemNames.has(last) && (op.method === 'GET' || op.method === 'POST')) return { kind: op.method === 'GET' ? 'list' : 'create', resource: last };
    // A search path beside an item path lists that resource when its collection path has no GET
    // (Jira's GET /rest/api/3/project/search beside /project/{projectIdOrKey}), as init reads it.
    const parentPath = `/${segs.slice(0, -1).join('/')}`;
    if (last === 'search' && op.method === 'GET' && prev !== undefined && itemNames.has(prev) && !d.operations.some((o) => o.method === 'GET' && o.path === parentPath)) return { kind: 'list', resource: prev };
    return { kind: 'action' };
  };
  const classified = new Map(d.operations.map((op) => [op.key, classify(op)]));
  // RPC-style methods (/conversations.list) are no collection/item pairs: the sidecar says which
  // operation lists, gets, creates, updates or deletes which resource.
  const declared = Object.entries(sidecar.resources ?? {}).filter(([, r]) => RESOURCE_ACTIONS.some((a) => declaredOperations(r, a).length > 0));
  for (const [name, r] of declared) {
    if (r.parent !== undefined && !declared.some(([n]) => n === r.parent?.resource) && !itemNames.has(r.parent.resource)) throw new Error(`sidecar: resources.${name}.parent names no resource ${r.parent.resource}`);
    for (const kind of RESOURCE_ACTIONS) {
      for (const key of declaredOperations(r, kind)) {
        if (!d.operations.some((o) => o.key === key)) throw new Error(`sidecar: resources.${name}.${kind}: the description has no operation ${key}`);
        classified.set(key, { kind, resource: name, ...(r.id_param !== undefined ? { idParam: r.id_param } : {}), rpc: true });
      }
    }
  }

  const resources = new Map<string, Resource>();
  for (const [name, r] of declared) {
    const opOf = (kind: (typeof RESOURCE_ACTIONS)[number]): Operation | undefined => d.operations.find((o) => declaredOperations(r, kind)[0] === o.key);
    // The record's schema: the get's (or create's) response property `record`, else the list's items.
    const one = opOf('get') ?? opOf('create') ?? opOf('update');
    let recordRef = one?.responseRef === undefined ? undefined : r.record !== undefined ? pointerOfProperty(d, one.responseRef, r.record) : envelopeOf(d, d.schemaAt(one.responseRef)) === undefined ? one.responseRef : pointerOfProperty(d, one.responseRef, envelopeOf(d, d.schemaAt(one.responseRef)) as string);
    const listOp = opOf('list');
    if (recordRef === undefined && listOp?.responseRef !== undefined) {
      const key = listKeyOf(d, d.schemaAt(listOp.responseRef), name);
      const arr = key === undefined || key === '' ? undefined : pointerOfProperty(d, listOp.responseRef, key);
      if (arr !== undefined) recordRef = `${arr}/items`;
    }
    // The vendor's own examples of records: the list's items, then the one of each other method.
    const examples: Json[] = [];
    const listKey = listOp === undefined ? undefined : listKeyOf(d, d.schemaAt(listOp.responseRef), name);
    const listed = listOp === undefined || listKey === undefined ? undefined : listKey === '' ? exampleOf(d, listOp) : (exampleOf(d, listOp) as Json | undefined)?.[listKey];
    if (Array.isArray(listed)) examples.push(...listed.filter((x): x is Json => x !== null && typeof x === 'object' && !Array.isArray(x)));
    for (const kind of ['get', 'create', 'update'] as const) {
      const op = opOf(kind);
      const body = op === undefined ? undefined : (exampleOf(d, op) as Json | undefined);
      const one = body === undefined ? undefined : r.record !== undefined ? body[r.record] : body;
      if (one !== null && typeof one === 'object' && !Array.isArray(one)) examples.push(one as Json);
    }
    const props = Object.keys(propertiesOf(d, d.schemaAt(recordRef)));
    const idField = r.id_field ?? [r.id_param, 'id', 'gid', 'uuid'].find((f) => f !== undefined && (props.includes(f) || examples.some((e) => f in e))) ?? 'id';
    resources.set(name, { name, idField, recordRef, records: new Map(), created: 0, lookup: r.lookup ?? [], declared: r, ...(examples.length > 0 ? { examples } : {}) });
  }
  for (const [name, idParam] of itemNames) {
    if (resources.has(name)) continue;
    const getOp = d.operations.find((o) => o.method === 'GET' && classified.get(o.key)?.resource === name && classified.get(o.key)?.kind === 'get');
    const env = envelopeOf(d, d.schemaAt(getOp?.responseRef), name);
    const recordRef = getOp?.responseRef === undefined ? undefined : env === undefined ? getOp.responseRef : pointerOfProperty(d, getOp.responseRef, env);
    const props = Object.keys(propertiesOf(d, d.schemaAt(recordRef)));
    const stripped = idParam.replace(/^.*?_(?=[a-z]+$)/, '');
    const idField = sidecar.resources?.[name]?.id_field ?? [idParam, stripped, 'id', 'gid', 'uuid'].find((f) => props.includes(f)) ?? 'id';
    resources.set(name, { name, idField, recordRef, records: new Map(), created: 0, lookup: sidecar.resources?.[name]?.lookup ?? [] });
  }
  // What the sidecar adds: resources no item path implies (by their get, or by their lists: Zendesk's
  // /tickets/{ticket_id}/comments, listed per parent), gets by a query parameter, and more
  // operations that list a resource (exports).
  const opByKey = (key: string, what: string): Operation => {
    const op = d.operations.find((o) => o.key === key);
    if (op === undefined) throw new Error(`simulator sidecar: resources.${what} names ${key}, which is not an operation of the description`);
    return op;
  };
  for (const [name, rs] of Object.entries(sidecar.resources ?? {})) {
    // Jira's get by a query parameter ({operation, id_query}); an RPC get (an operation key) is declared above.
    if (rs.get !== undefined && typeof rs.get === 'object' && !Array.isArray(rs.get)) {
      const getOp = opByKey(rs.get.operation, `${name}.get`);
      if (!resources.has(name)) {
        const env = envelopeOf(d, d.schemaAt(getOp.responseRef), name);
        const recordRef = getOp.responseRef === undefined ? undefined : env === undefined ? getOp.responseRef : pointerOfProperty(d, getOp.responseRef, env);
        resources.set(name, { name, idField: rs.id_field ?? rs.get.id_query, recordRef, records: new Map(), created: 0, lookup: rs.lookup ?? [] });
      }
      classified.set(getOp.key, { kind: 'get', resource: name, idQuery: rs.get.id_query });
    }
    for (const key of rs.lists ?? []) {
      const listOp = opByKey(key, `${name}.lists`);
      if (!resources.has(name)) {
        // No item path and no get: the records are the items of the list's array.
        const arrayKey = listKeyOf(d, d.schemaAt(listOp.responseRef), name);
        const arrayRef = listOp.responseRef === undefined || arrayKey === undefined ? undefined : arrayKey === '' ? listOp.responseRef : pointerOfProperty(d, listOp.responseRef, arrayKey);
        const items = arrayRef === undefined ? undefined : (d.at(arrayRef).items as Json | undefined);
        if (items === undefined || arrayRef === undefined) throw new Error(`simulator sidecar: resources.${name}.lists: ${key} answers no array of records`);
        const recordRef = typeof items.$ref === 'string' ? items.$ref : `${arrayRef}/items`;
        resources.set(name, { name, idField: rs.id_field ?? 'id', recordRef, records: new Map(), created: 0, lookup: rs.lookup ?? [] });
      }
      classified.set(key, { kind: 'list', resource: name });
    }
  }
  /** Set a dotted timestamp field (sidecar resources.<name>.timestamps) on a record. */
  const stamp = (r: Resource, record: Json, which: 'created' | 'updated', at: string): void => {
    const paths = sidecar.resources?.[r.name]?.timestamps?.[which];
    const value = sidecar.resources?.[r.name]?.timestamps?.unix === true ? Math.floor(Date.parse(at) / 1000) : at;
    for (const path of typeof paths === 'string' ? [paths] : (paths ?? [])) setPath(record, path, value);
  };
  /** A record the sidecar's soft_delete marks as deleted: gone for get, update and lists, kept for exports. */
  const softDeleted = (r: Resource, record: Json): boolean => {
    const sd = sidecar.resources?.[r.name]?.soft_delete;
    return sd !== undefined && getPath(record, sd.field) === (sd.value === undefined ? true : sd.value);
  };
  /** The query param that asks a list or get for soft-deleted records: soft_delete.param, else a boolean flag's own name (archived). */
  const softDeleteParam = (r: Resource): string | undefined => {
    const sd = sidecar.resources?.[r.name]?.soft_delete;
    return sd === undefined ? undefined : (sd.param ?? (sd.value === undefined || sd.value === true ? sd.field : undefined));
  };
  /** Lookup fields that are text get a suffix, so each record's value is its own (EX-3, not EX five times). */
  const uniqueLookups = (r: Resource, record: Json, n: number): void => {
    for (const f of r.lookup) if (typeof record[f] === 'string') record[f] = `${record[f] as string}-${n}`;
  };
  /** The record an item path's id names: by id, else by a lookup field. */
  const find = (r: Resource, id: string): StoredRecord | undefined => {
    const direct = r.records.get(id);
    if (direct !== undefined || r.lookup.length === 0) return direct;
    for (const s of r.records.values()) if (r.lookup.some((f) => s.record[f] !== undefined && String(s.record[f]) === id)) return s;
    return undefined;
  };

  for (const [name, rs] of Object.entries(sidecar.resources ?? {})) {
    if (!resources.has(name)) throw new Error(`simulator sidecar: resources.${name}: the description has no resource ${name} (it has ${[...resources.keys()].join(', ') || 'none'})`);
    if (rs.parent !== undefined && !resources.has(rs.parent.resource)) throw new Error(`simulator sidecar: resources.${name}.parent names no resource ${rs.parent.resource}`);
    if (rs.soft_delete !== undefined && rs.template === undefined && !Object.keys(propertiesOf(d, d.schemaAt(resources.get(name)?.recordRef))).includes(rs.soft_delete.field)) {
      throw new Error(`simulator sidecar: resources.${name}.soft_delete.field: the record has no field ${rs.soft_delete.field}`);
    }
  }
  /**
   * A new record of a resource (seeded or created): its id drawn by `id` (shaped like the schema's),
   * then the sidecar's template filled with {{n}}, {{id}} and {{now}} (Unix seconds of `now`),
   * else a sample of the schema (an example of the description, `base`, before both); `extra`
   * merged over it; its timestamps set.
   */
  const newRecord = (r: Resource, id: (like: unknown) => string | number, n: number, extra?: Json, now = new Date().toISOString(), base?: Json, vars?: Record<string, string>): Json => {
    const rs = sidecar.resources?.[r.name];
    const sampled = (peek(r.recordRef) ?? {}) as Json;
    // An example without the id (Slack's chat.update message has no ts) takes the shape of one that has it.
    const recordId = id(rs?.id_like ?? (base ?? sampled)[r.idField] ?? r.examples?.find((e) => e[r.idField] !== undefined)?.[r.idField]);
    let record = (base !== undefined ? clone(base) : rs?.template !== undefined ? (fill(rs.template, { ...options.vars, ...vars, n, id: recordId, now: Math.floor(Date.parse(now) / 1000) }) ?? {}) : clone(sampled)) as Json;
    // The sampler's placeholders ("string", {property1, property2}) become realistic values, the same for the same seed and record.
    if (rs?.template === undefined) realisticRecord(record, mixSeed(seed, hashString(r.name), n), r.name);
    if (extra !== undefined) record = deepMerge(record, extra);
    record[r.idField] = recordId;
    stamp(r, record, 'created', now);
    stamp(r, record, 'updated', now);
    // A boolean soft-delete flag starts false (HubSpot's archived); a mark by value is the record's own.
    if (rs?.soft_delete !== undefined && (rs.soft_delete.value === undefined || rs.soft_delete.value === true)) {
      setPath(record, rs.soft_delete.field, false);
      if (rs.soft_delete.at !== undefined) deletePath(record, rs.soft_delete.at);
    }
    return record;
  };

  /** Whether a seeded text field holds what several records would share: the schema's example, or an example of the description that repeats. */
  const repeats = (r: Resource, k: string, v: unknown, count: number): boolean =>
    v === ((peek(r.recordRef) ?? {}) as Json)[k] || (r.examples !== undefined && r.examples.length < count && r.examples.some((e) => e[k] === v));
  // Seed: records sampled from each resource's schema (or the sidecar's template and seed), ids
  // from a PRNG per (seed, resource), fields drawn from the sidecar's pools. Resources with a
  // parent are seeded after it, each record under one of its records in turn.
  // Nested collections (/repos/{owner}/{repo}/issues): their parent resource and how the path names it (parent-links.ts).
  const links = parentLinks(d.operations, classified, (n) => resources.get(n)?.idField, (n) => sidecar.resources?.[n]?.key);
  /** A resource's seeded records go under the parent of its first nested list or create. */
  const linkOf = new Map<string, ParentLink>();
  for (const [key, link] of links) {
    const name = classified.get(key)?.resource;
    if (name !== undefined && !linkOf.has(name)) linkOf.set(name, link);
  }
  const nested = (r: Resource): boolean => r.declared?.parent !== undefined || linkOf.has(r.name);
  // Resources whose seeded fields take another's ids (`ids_of`) after that one.
  const refDepth = (name: string, seen: string[] = []): number =>
    seen.includes(name) ? 0 : Math.max(0, ...Object.values(sidecar.resources?.[name]?.fields ?? {}).map((f) => ('ids_of' in f ? 1 + refDepth(f.ids_of, [...seen, name]) : 0)));
  const seedOrder = [...resources.values()].sort((a, b) => Number(nested(a)) - Number(nested(b)) || refDepth(a.name) - refDepth(b.name));
  /** Whether the parent a nested path names exists (by id directly, else by the parent's key fields). */
  const parentExists = (link: ParentLink, pathParams: Record<string, string>): boolean => {
    const q = resources.get(link.resource);
    if (q === undefined) return false;
    const entries = Object.entries(link.fields);
    // By id, or by a lookup field (Jira's issue key ENG-3 for issue 10003).
    if (entries.length === 1 && entries[0]?.[1] === q.idField) return find(q, pathParams[entries[0][0]] ?? '') !== undefined;
    for (const s of q.records.values()) {
      const named = parentParams(link, s.record, getPath);
      if (named !== undefined && entries.every(([p]) => named[p] === pathParams[p])) return true;
    }
    return false;
  };
  for (const [name, given] of Object.entries(options.records ?? {})) {
    const r = resources.get(name);
    if (r === undefined) throw new Error(`simulator: records.${name}: the description has no resource ${name}`);
    r.records = given;
  }
  for (const r of seedOrder) {
    const rs = sidecar.resources?.[r.name];
    if (options.records?.[r.name] !== undefined) continue;
    const count = seedCount(sidecar, r.name);
    if (r.recordRef === undefined && r.examples === undefined && rs?.template === undefined) continue;
    const rand = seededRandom(mixSeed(seed, hashString(r.name)));
    const parent = r.declared?.parent;
    const parentIds = parent === undefined ? [] : [...(resources.get(parent.resource)?.records.keys() ?? [])];
    // Records a caller keeps (options.records, LazyRecords) are not walked: reading them would generate them all.
    const link = parent === undefined && count > 0 ? linkOf.get(r.name) : undefined;
    const parentRecords = link === undefined || options.records?.[link.resource] !== undefined ? [] : [...(resources.get(link.resource)?.records.values() ?? [])];
    const linked = link === undefined ? [] : parentRecords.map((s) => parentParams(link, s.record, getPath)).filter((x) => x !== undefined);
    for (let i = 0; i < count; i++) {
      // Seeded timestamps are fixed (2026-01-01T00:00Z plus i steps, a minute unless timestamps.step_seconds says), so a seed always serves the same records.
      const at = new Date(Date.UTC(2026, 0, 1) + i * (rs?.timestamps?.step_seconds ?? 60) * 1000).toISOString();
      const seedFields = rs?.seed === undefined ? undefined : (fill(seedOf(rs, i), { n: i + 1 }) as Json);
      const record = newRecord(r, (like) => newId(rand, like), i + 1, seedFields, at, r.examples?.[i % r.examples.length]);
      // A record named by another field (an issue's number) keeps a unique id too.
      const like = ((peek(r.recordRef) ?? {}) as Json).id;
      if (r.idField !== 'id' && (typeof like === 'number' || typeof like === 'string')) record.id = newId(rand, like);
      // A name or title every record shares (the description's example) is numbered to tell records apart.
      if (rs?.template === undefined) for (const k of ['name', 'title']) if (typeof record[k] === 'string' && repeats(r, k, record[k], count)) record[k] = `${record[k] as string} ${i + 1}`;
      // Declared fields: a value drawn from a pool of the sidecar, or from a list given in place.
      for (const [path, f] of Object.entries(rs?.fields ?? {})) {
        const values = 'pool' in f ? (sidecar.pools?.[f.pool] ?? []) : 'ids_of' in f ? [...(resources.get(f.ids_of)?.records.keys() ?? [])] : f.one_of;
        // Shared, not copied (100 000 seeded records stay cheap): writes replace a field's value, and
        // an update that sets fields inside one copies it first (merge).
        setPath(record, path, values[Math.floor(rand() * values.length)]);
      }
      uniqueLookups(r, record, i + 1);
      // Under a parent in turn: the sidecar's declared one, else the one the path implies (each seeded repository gets issues).
      const parents = parent !== undefined && parentIds.length > 0 ? { [parent.param]: parentIds[i % parentIds.length] as string } : linked.length > 0 ? { ...linked[i % linked.length] } : {};
      r.records.set(String(record[r.idField]), { record, parents });
    }
  }
  // ---------------------------------------------------------------- errors and limits
  const errorResponse = (problem: RequestProblem, op?: Operation, headers: Record<string, string> = {}): SimResponse => {
    let p = problem;
    // A path id the description's types rule out names no record: the sidecar's 404 for it.
    if (p.status === 400 && sidecar.not_found !== undefined && op?.params.some((x) => x.in === 'path' && x.name === p.field)) p = { ...p, status: 404, code: 'not_found' };
    let override: ErrorOverride | undefined;
    // The sidecar's 404s: for a path id (p.field) or a path no operation matches (no op); a
    // handler's own 404 without a field keeps its code and message.
    if (p.status === 404 && p.code === 'not_found' && (p.field !== undefined || op === undefined)) override = sidecar.not_found?.[p.field ?? ''] ?? sidecar.not_found?.default;
    else if (p.status === 400) override = (op === undefined ? undefined : sidecar.operations?.[op.key]?.bad_request) ?? sidecar.parameters?.[p.field ?? ''];
    if (override !== undefined) p = { ...p, message: override.message };
    // The sidecar's 401 message, but not for an expired token (its message tells how long ago).
    else if (p.status === 401 && p.code !== 'expired_token' && sidecar.auth?.message !== undefined) p = { ...p, message: sidecar.auth.message };
    const codes = sidecar.error?.codes;
    // A refused token is invalid_token, named like unauthorized unless the sidecar tells them apart.
    const code = override?.code ?? codes?.[p.code] ?? (p.code === 'invalid_token' ? (codes?.unauthorized ?? 'unauthorized') : p.code);
    // Vendors that answer a code with another status (GitHub: 422 for bad bodies; Slack: 200 with
    // ok: false for every error, its `default`, but 429).
    const statuses = sidecar.error?.status;
    const status = statuses?.[p.code] ?? (p.code === 'invalid_token' ? statuses?.unauthorized : undefined) ?? statuses?.default;
    if (status !== undefined) p = { ...p, status };
    let json: unknown;
    if (sidecar.error?.body !== undefined) json = render(sidecar.error.body, { status: p.status, code, message: p.message, field: p.field ?? '', request_id: randomUUID() });
    else {
      const ref = op?.errorRef ?? anyErrorRef;
      json = ref === undefined ? { error: { code, message: p.message } } : fillError(sample(ref), p, code);
    }
    return { status: p.status, headers, json };
  };

  let windowStart = -1;
  let used = 0;
  // rate_limit.bucket: `limit` requests at once, refilled evenly over the window (Granola's 25, 5 per second).
  let bucket: TokenBucket | undefined;
  let bucketWait = 0;
  const countRequest = (): { headers: Record<string, string>; exceeded: boolean } => {
    const rl = rateLimit;
    if (rl === undefined) return { headers: {}, exceeded: false };
    if (rl.bucket === true) {
      bucket ??= new TokenBucket(rl.limit, rl.limit / rl.window_seconds);
      bucketWait = bucket.take();
      const remaining = bucket.remaining();
      const names = rl.headers ?? {};
      const headers: Record<string, string> = {};
      if (names.limit !== undefined) headers[names.limit] = String(rl.limit);
      if (names.remaining !== undefined) headers[names.remaining] = String(remaining);
      if (names.window_ms !== undefined) headers[names.window_ms] = String(rl.window_seconds * 1000);
      // Until the bucket is full again.
      const full = ((rl.limit - remaining) * rl.window_seconds) / rl.limit;
      if (names.reset !== undefined) headers[names.reset] = rl.reset === 'seconds' ? String(Math.ceil(full)) : rl.reset === 'unix_ms' ? String(Date.now() + Math.ceil(full * 1000)) : String(Math.ceil(Date.now() / 1000 + full));
      return { headers, exceeded: bucketWait > 0 };
    }
    const windowMs = rl.window_seconds * 1000;
    const now = Date.now();
    // A window opens with the first request after a reset (setRateLimit, resetRateLimit, reset) and
    // the next ones follow it end to end, so a test's first window is always a whole one.
    if (windowStart < 0 || now >= windowStart + windowMs) {
      windowStart = windowStart < 0 ? now : windowStart + Math.floor((now - windowStart) / windowMs) * windowMs;
      used = 0;
    }
    const start = windowStart;
    used++;
    const names = rl.headers ?? {};
    const headers: Record<string, string> = {};
    if (names.limit !== undefined) headers[names.limit] = String(rl.limit);
    if (names.remaining !== undefined) headers[names.remaining] = String(Math.max(0, rl.limit - used));
    if (names.window_ms !== undefined) headers[names.window_ms] = String(windowMs);
    if (names.reset !== undefined) headers[names.reset] = rl.reset === 'seconds' ? String(Math.ceil((start + windowMs - now) / 1000)) : rl.reset === 'unix_ms' ? String(start + windowMs) : String(Math.ceil((start + windowMs) / 1000));
    return { headers, exceeded: used > rl.limit };
  };

  // ---------------------------------------------------------------- handlers
  const wrap = (op: Operation, record: unknown, r?: Resource, stored?: StoredRecord): unknown => {
    const env = r?.declared?.record ?? envelopeOf(d, d.schemaAt(op.responseRef), classified.get(op.key)?.resource);
    if (env === undefined) {
      // A create or update answered with a schema of its own (Jira's CreatedIssue {id, key, self}):
      // the record's fields that schema declares.
      if (r === undefined || op.responseRef === undefined || op.responseRef === r.recordRef || record === null || typeof record !== 'object') return record;
      const declared = Object.keys(propertiesOf(d, d.schemaAt(op.responseRef)));
      const own = new Set(Object.keys(propertiesOf(d, d.schemaAt(r.recordRef))));
      if (declared.length === 0 || declared.every((k) => own.has(k)) && declared.length === own.size) return record;
      return Object.fromEntries(Object.entries(record as Json).filter(([k]) => declared.includes(k)));
    }
    const body = (sample(op.responseRef) ?? {}) as Json;
    // An RPC answer may repeat the record's id and parent beside it (chat.postMessage: {channel, ts, message}).
    if (r?.declared !== undefined && stored !== undefined) {
      if (r.idField in body && r.idField !== env) body[r.idField] = (record as Json)[r.idField];
      for (const [k, v] of Object.entries(stored.parents)) if (k in body && k !== env) body[k] = v;
    }
    return { ...body, [env]: record };
  };
  const unwrapBody = (op: Operation, body: unknown): Json => {
    const env = envelopeOf(d, d.schemaAt(op.bodyRef), classified.get(op.key)?.resource);
    const inner = env !== undefined && body !== null && typeof body === 'object' ? (body as Json)[env] : body;
    return inner !== null && typeof inner === 'object' && !Array.isArray(inner) ? (inner as Json) : {};
  };
  /**
   * Copy body fields onto a record where they fit the record's shape; a bare id names a nested
   * object. A field the record schema declares with another shape is not copied (Stripe's create
   * takes `items: [{price}]` where the subscription holds a list object), nor is one it does not
   * declare when it declares properties (request options such as `expand`).
   */
  const merge = (record: Json, fields: Json, recordRef: string | undefined, deep = false, asSent: string[] = []): void => {
    const props = recordRef === undefined ? {} : propertiesOf(d, d.schemaAt(recordRef));
    const declared = Object.keys(props).length > 0;
    for (const [k, v] of Object.entries(fields)) {
      const have = record[k];
      // written_as_sent: the vendor reads back another shape than it takes (Notion's property values); kept as sent, objects merged key by key.
      if (asSent.includes(k)) {
        record[k] = have !== null && typeof have === 'object' && !Array.isArray(have) && v !== null && typeof v === 'object' && !Array.isArray(v) ? { ...(have as Json), ...(v as Json) } : v;
        continue;
      }
      if (declared && props[k] === undefined) continue;
      // An update sets the fields it names inside a nested object (Jira's {fields: {summary}}), keeping the others.
      if (deep && have !== null && typeof have === 'object' && !Array.isArray(have) && v !== null && typeof v === 'object' && !Array.isArray(v) && !['gid', 'id', 'uuid'].some((f) => f in (have as Json))) {
        const copy = clone(have as Json);
        merge(copy, v as Json, undefined, true);
        record[k] = copy;
        continue;
      }
      if (have !== null && typeof have === 'object' && !Array.isArray(have) && (typeof v === 'string' || typeof v === 'number')) {
        const idKey = ['gid', 'id', 'uuid'].find((f) => f in (have as Json));
        if (idKey !== undefined) record[k] = { ...(have as Json), [idKey]: v };
        continue;
      }
      if (Array.isArray(have) && Array.isArray(v) && have[0] !== null && typeof have[0] === 'object' && v.every((x) => typeof x === 'string')) {
        const idKey = ['gid', 'id', 'uuid'].find((f) => f in (have[0] as Json));
        if (idKey !== undefined) record[k] = v.map((x) => ({ ...(have[0] as Json), [idKey]: x }));
        continue;
      }
      // An object merges into the object the record holds (Stripe's metadata keys, a partial recurring).
      const value = have !== null && typeof have === 'object' && !Array.isArray(have) && v !== null && typeof v === 'object' && !Array.isArray(v) ? { ...(have as Json), ...(v as Json) } : v;
      const propRef = declared && recordRef !== undefined ? pointerOfProperty(d, recordRef, k) : undefined;
      if (propRef !== undefined && d.validateValue(propRef, value) !== null) continue;
      record[k] = value;
    }
  };
  /** Body fields that create records of another resource (the sidecar's created_by: a ticket update's comment), taken out of `fields`. */
  const takeNested = (op: Operation, fields: Json): { resource: Resource; value: Json; echo: string | undefined }[] => {
    const out: { resource: Resource; value: Json; echo: string | undefined }[] = [];
    for (const [name, conf] of Object.entries(sidecar.resources ?? {})) {
      for (const w of conf.created_by ?? []) {
        if (w.operation !== op.key || !(w.field in fields)) continue;
        const value = fields[w.field];
        delete fields[w.field];
        const resource = resources.get(name);
        if (resource !== undefined && value !== null && typeof value === 'object' && !Array.isArray(value)) out.push({ resource, value: value as Json, echo: w.echo });
      }
    }
    return out;
  };
  /** Store the nested records under their parent (the last path param of their list), and echo them into the answer. */
  const applyNested = (nested: { resource: Resource; value: Json; echo: string | undefined }[], parentId: string, json: unknown): void => {
    for (const n of nested) {
      const listKey = sidecar.resources?.[n.resource.name]?.lists?.[0];
      const listOp = d.operations.find((o) => o.key === listKey);
      const parentParam = listOp?.pathParams[listOp.pathParams.length - 1];
      const record = clone((sample(n.resource.recordRef) ?? {}) as Json);
      merge(record, n.value, n.resource.recordRef);
      let id = newId(seededRandom(mixSeed(seed, hashString(n.resource.name), ++n.resource.created)), record[n.resource.idField]);
      while (n.resource.records.has(String(id))) id = newId(seededRandom(mixSeed(seed, hashString(n.resource.name), ++n.resource.created)), record[n.resource.idField]);
      record[n.resource.idField] = id;
      const at = new Date().toISOString();
      stamp(n.resource, record, 'created', at);
      stamp(n.resource, record, 'updated', at);
      n.resource.records.set(String(id), { record, parents: parentParam === undefined ? {} : { [parentParam]: parentId } });
      if (n.echo !== undefined && json !== null && typeof json === 'object') setPath(json as Json, n.echo, [clone(record)]);
    }
  };
  const notFound = (op: Operation, id: string, param?: string): SimResponse => errorResponse({ status: 404, code: 'not_found', message: `No record with id ${id}`, ...(param !== undefined ? { field: param } : {}) }, op);

  const list = (op: Operation, r: Resource, pathParams: Record<string, string>, query: Json, origin: string, req: SimRequest, handledParams: string[] = []): SimResponse => {
    const schema = d.schemaAt(op.responseRef);
    const key = listKeyOf(d, schema, r.name);
    const paramNames = new Set(op.params.filter((p) => p.in === 'query').map((p) => p.name));
    // An operation with its own pagination (an export) pages its way; the rest as the sidecar's pagination says.
    const opConf = sidecar.operations?.[op.key];
    const pag = opConf?.pagination ?? sidecar.pagination ?? {};
    // Exports (operations with their own pagination or a since param) show soft-deleted records; lists do not.
    const exporting = opConf?.pagination !== undefined || opConf?.since !== undefined;
    const cursorParam = pag.cursor_param ?? CURSOR_PARAMS.find((n) => paramNames.has(n));
    const pageParam = PAGE_PARAMS.find((n) => paramNames.has(n));
    const limitParam = pag.limit_param ?? LIMIT_PARAMS.find((n) => paramNames.has(n));
    const limitDef = limitParam === undefined ? undefined : d.schemaAt(op.params.find((p) => p.name === limitParam)?.schemaRef);
    let limit = typeof query[limitParam ?? ''] === 'number' ? (query[limitParam as string] as number) : typeof limitDef?.default === 'number' ? limitDef.default : (pag.default_limit ?? 20);
    if (pag.max_limit !== undefined) limit = Math.min(limit, pag.max_limit);
    limit = Math.max(1, limit);
    const since = opConf?.since;
    const handled = new Set([cursorParam, pageParam, limitParam, since?.param, ...handledParams, ...(sidecar.auth?.params ?? [])]);
    // Soft-deleted records: exports show them, lists do not, unless the list asks for only them
    // (the soft_delete param: HubSpot's archived=true).
    const deletedParam = softDeleteParam(r);
    if (deletedParam !== undefined) handled.add(deletedParam);
    const onlyDeleted = deletedParam !== undefined && (query[deletedParam] === true || query[deletedParam] === 'true');
    let rows = [...r.records.values()].filter((s) => Object.entries(pathParams).every(([k, v]) => s.parents[k] === v) && (onlyDeleted ? softDeleted(r, s.record) : exporting || !softDeleted(r, s.record)));
    if (pag.order === 'newest_first') rows.reverse();
    if (since !== undefined) {
      // Changed at or after the param (Unix seconds), oldest change first.
      const secondsOf = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' ? Math.floor(Date.parse(v) / 1000) : NaN);
      const from = query[since.param];
      if (typeof from === 'number') rows = rows.filter((s) => secondsOf(s.record[since.field]) >= from);
      rows = rows.map((s, i) => ({ s, i })).sort((a, b) => secondsOf(a.s.record[since.field]) - secondsOf(b.s.record[since.field]) || a.i - b.i).map((x) => x.s);
    }
    const recordProps = propertiesOf(d, d.schemaAt(r.recordRef));
    // Filters: query params named like a record field keep the records whose field (or its id) equals
    // them; the sidecar's filters name another field, compare (numbers or times), or give values matching all.
    for (const [name, value] of Object.entries(query)) {
      if (handled.has(name)) continue;
      // A range on a numeric field (deepObject created[gte]=...&created[lt]=..., Stripe's range_query_specs).
      const range = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
      if (range !== undefined && Object.keys(range).length > 0 && Object.keys(range).every((k) => ['gt', 'gte', 'lt', 'lte'].includes(k))) {
        const ok = (f: number): boolean =>
          Object.entries(range).every(([op, b]) => (op === 'gt' ? f > Number(b) : op === 'gte' ? f >= Number(b) : op === 'lt' ? f < Number(b) : f <= Number(b)));
        rows = rows.filter((s) => typeof s.record[name] !== 'number' || ok(s.record[name] as number));
        continue;
      }
      if (typeof value === 'object') continue;
      const rule = sidecar.filters?.[name];
      if (rule?.any?.includes(String(value)) === true) continue;
      // Without a rule, a value the record field's enum does not hold names a group, not a value (Stripe's status=all): no filter.
      const fieldEnum = rule !== undefined || recordProps[name] === undefined ? undefined : d.resolve<Json>(recordProps[name]).enum;
      if (Array.isArray(fieldEnum) && !fieldEnum.includes(value)) continue;
      const match = rule?.match ?? 'equals';
      if (match !== 'equals') {
        // since >=, before <=, after >, until <; a record whose field does not compare is kept.
        if (value === '') continue;
        rows = rows.filter((s) => {
          const c = compareValues(getPath(s.record, rule?.field ?? name), value);
          return c === undefined || (match === 'since' ? c >= 0 : match === 'before' ? c <= 0 : match === 'after' ? c > 0 : c < 0);
        });
        continue;
      }
      rows = rows.filter((s) => {
        const f = rule?.field !== undefined ? getPath(s.record, rule.field) : s.record[name];
        if (f === undefined) return true;
        if (f !== null && typeof f === 'object') return ['gid', 'id', 'uuid'].some((k) => (f as Json)[k] !== undefined && String((f as Json)[k]) === String(value));
        return String(f) === String(value);
      });
    }
    const cursorDef = cursorParam === undefined ? undefined : d.schemaAt(op.params.find((p) => p.name === cursorParam)?.schemaRef);
    const numericCursor = cursorDef?.type === 'integer' || cursorDef?.type === 'number';
    let offset: number | undefined = 0;
    // A cursor naming a record of the list starts after it (Stripe's starting_after=<id>).
    const after = cursorParam === undefined || numericCursor || query[cursorParam] === undefined ? -1 : rows.findIndex((s) => String(s.record[r.idField]) === String(query[cursorParam]));
    if (after >= 0) offset = after + 1;
    else if (cursorParam !== undefined && query[cursorParam] !== undefined && query[cursorParam] !== '') offset = undefined;
    else if (pageParam !== undefined && typeof query[pageParam] === 'number') offset = (Math.max(1, query[pageParam] as number) - 1) * limit;
    const page = offset !== undefined && pageParam !== undefined && typeof query[pageParam] === 'number' ? Math.max(1, query[pageParam] as number) : 1;
    return pageOf(op, r.name, rows.map((s) => s.record), { cursorParam, cursor: offset === undefined ? query[cursorParam as string] : undefined, offset: offset ?? 0, numericCursor, limit, limitParam, pageParam, page, nextPath: pag.next_cursor, pag }, origin, req);
  };

  /** One page of `rows` as the operation answers it: the page in the body's array, the next cursor where the schema has room. */
  const pageOf = (
    op: Operation,
    resource: string,
    all: Json[],
    p: { cursorParam: string | undefined; cursor: unknown; offset: number; numericCursor: boolean; limit: number; limitParam: string | undefined; pageParam: string | undefined; page: number; nextPath: string | undefined; pag: Pagination },
    origin: string,
    req: SimRequest,
  ): SimResponse => {
    const { cursorParam, numericCursor, limit, limitParam, pageParam, page, pag } = p;
    const rows = all.map((record) => ({ record }));
    const schema = d.schemaAt(op.responseRef);
    const key = listKeyOf(d, schema, resource);
    const r = resources.get(resource);
    let offset = p.offset;
    if (p.cursor !== undefined && p.cursor !== '') {
      const t = numericCursor ? { offset: Number(p.cursor), after: undefined } : decodeToken(String(p.cursor));
      if (t === undefined || !Number.isInteger(t.offset) || t.offset < 0) return errorResponse({ status: 400, code: 'invalid', message: `${cursorParam ?? 'cursor'} is not a cursor this API issued`, field: cursorParam ?? 'cursor' }, op);
      // Start after the record the token names while it is listed, so records added or removed meanwhile shift nothing.
      const at = t.after === undefined || r === undefined ? -1 : all.findIndex((x) => x[r.idField] === t.after);
      offset = at >= 0 ? at + 1 : t.offset;
    }
    // Items cut to the list's own item schema, and without the fields only an include parameter asks for.
    const shown = listItemFields(d, op.responseRef, key, r?.recordRef);
    const include = sidecar.resources?.[resource]?.include;
    const slice = rows.slice(offset, offset + limit).map((s) => pick(included(s.record, include, Object.fromEntries(new URLSearchParams(req.query))), shown));
    const more = offset + slice.length < rows.length;
    const lastKey = r === undefined ? undefined : rows[offset + slice.length - 1]?.record[r.idField];
    if (key === '') {
      // A bare array: the next page is a Link header, the request's own query with the cursor or page advanced.
      const nextParam = cursorParam ?? pageParam;
      if (!more || nextParam === undefined) return { status: op.successStatus, json: slice };
      const q = new URLSearchParams(req.query);
      q.set(nextParam, cursorParam !== undefined ? String(numericCursor ? offset + limit : encodeToken(offset + limit, lastKey)) : String(page + 1));
      return { status: op.successStatus, json: slice, headers: { link: `<${origin}${req.path}?${q.toString()}>; rel="next"` } };
    }
    const body = (sample(op.responseRef) ?? {}) as Json;
    if (key !== undefined) body[key] = slice;
    // A numeric cursor (startAt) is echoed by the field of its name, not a next cursor: the page's
    // own position, size, total and whether it is the last (Jira's {startAt, maxResults, total, isLast}).
    if (numericCursor && cursorParam !== undefined && typeof body[cursorParam] === 'number') body[cursorParam] = offset;
    if (limitParam !== undefined && typeof body[limitParam] === 'number') body[limitParam] = limit;
    if (typeof body.total === 'number') body.total = rows.length;
    if (typeof body.isLast === 'boolean') body.isLast = !more;
    if (typeof body.is_last === 'boolean') body.is_last = !more;
    if (typeof body.nextPage === 'string') {
      if (more && cursorParam !== undefined) {
        const q = new URLSearchParams(req.query);
        q.set(cursorParam, String(numericCursor ? offset + limit : encodeToken(offset + limit, lastKey)));
        body.nextPage = `${origin}${req.path}?${q.toString()}`;
      } else delete body.nextPage;
    }
    const nextPath = p.nextPath ?? (cursorParam === undefined ? undefined : nextCursorPath(d, schema, numericCursor ? '' : cursorParam));
    if (nextPath !== undefined) {
      const top = nextPath.split('.')[0] as string;
      if (more) {
        const token = numericCursor ? offset + limit : encodeToken(offset + limit, lastKey);
        setPath(body, nextPath, token);
        // Fill sibling link fields of the cursor (Asana's next_page: {offset, path, uri}, HubSpot's paging.next: {after, link}).
        const holderPath = nextPath.split('.').slice(0, -1);
        let holder: Json = body;
        for (const p of holderPath) holder = holder[p] as Json;
        const q = new URLSearchParams(req.query);
        q.set(cursorParam ?? 'cursor', String(token));
        if ('path' in holder) holder.path = `${req.path}?${q.toString()}`;
        if ('uri' in holder) holder.uri = `${origin}${req.path}?${q.toString()}`;
        if ('link' in holder) holder.link = `${origin}${req.path}?${q.toString()}`;
      } else if (pag.last_cursor !== undefined) setPath(body, nextPath, pag.last_cursor);
      else {
        // Null the cursor's "next" holder (Asana's next_page, Intercom's pages.next), else the cursor
        // itself: siblings such as Zendesk's meta.has_more stay.
        const parts = nextPath.split('.');
        const holder = parts.slice(0, -1).findIndex((p) => /next/i.test(p));
        setPath(body, holder === -1 ? nextPath : parts.slice(0, holder + 1).join('.'), null);
        // A holder left with nothing but nulls that the schema does not let be null goes (HubSpot's
        // paging is absent on the last page).
        const topValue = body[top];
        if (parts.length > 1 && isPlainObject(topValue) && Object.values(topValue).every((v) => v === null) && d.resolve(propertiesOf(d, schema)[top] ?? {}).nullable !== true) delete body[top];
      }
    }
    if (pag.next_url !== undefined) {
      // The next page's URL: the same query with the next cursor (an export's start time stays: the cursor is an offset into what it selects).
      const q = new URLSearchParams(req.query);
      q.set(cursorParam ?? 'cursor', String(numericCursor ? offset + limit : encodeToken(offset + limit, lastKey)));
      setPath(body, pag.next_url, more ? `${origin}${req.path}?${q.toString()}` : null);
    }
    if (pag.has_more !== undefined) setPath(body, pag.has_more, more);
    if (pag.done !== undefined) setPath(body, pag.done, !more);
    if ('has_more' in body) body.has_more = more;
    for (const total of ['total_count', 'total']) if (total in body && typeof body[total] === 'number') body[total] = rows.length;
    return { status: op.successStatus, json: body };
  };

  const oauthRoutes =
    sidecar.oauth === undefined
      ? undefined
      : oauthServer(
          sidecar.oauth,
          oauth,
          tokens,
          (e) => (sidecar.error?.body === undefined ? { status: e.status, json: { error: e.code, error_description: e.message } } : errorResponse({ status: e.status, code: e.code, message: e.message })),
          Date.now,
          grants,
        );

  const simNow = options.now ?? Date.now;
  const jwtKeys = new Map<string, KeyObject | string>(Object.entries(options.jwtKeys ?? {}));
  const tokenExpiry = new Map<string, number>();
  const mintRoute =
    sidecar.jwt_tokens === undefined ? undefined : jwtTokenServer(sidecar.jwt_tokens, jwtKeys, tokens, tokenExpiry, (e) => errorResponse({ status: e.status, code: 'unauthorized', message: e.message }), simNow);
  // Declared search and scroll rules, over the generic store or the caller's sources.
  const sourceOf = (name: string, opKey?: string, under: Record<string, string> = {}): RecordSource => {
    const given = options.sources?.[opKey ?? ''] ?? options.sources?.[name];
    if (given !== undefined) return given;
    // The generic store's records (under the path's parent, for a nested list), soft-deleted ones left out (as lists leave them out).
    const r = resources.get(name);
    const all = (): StoredRecord[] => (r === undefined ? [] : [...r.records.values()].filter((x) => !softDeleted(r, x.record) && Object.entries(under).every(([k, v]) => x.parents[k] === v)));
    return { size: () => all().length, slice: (start, end) => all().slice(start, end).map((x) => x.record), indexOf: (id) => all().findIndex((x) => r !== undefined && String(x.record[r.idField]) === id) };
  };
  for (const [kind, rules] of [['search', sidecar.search], ['scroll', sidecar.scroll], ['pages', sidecar.pages]] as const) {
    for (const [key, rule] of Object.entries(rules ?? {})) {
      if (!d.operations.some((o) => o.key === key)) throw new Error(`simulator sidecar: ${kind}: the description has no operation ${key}`);
      if (!resources.has(rule.resource) && options.sources?.[key] === undefined && options.sources?.[rule.resource] === undefined) throw new Error(`simulator sidecar: ${kind}.${key}.resource: the description has no resource ${rule.resource}`);
    }
  }
  const scrolls = new Map(Object.entries(sidecar.scroll ?? {}).map(([key, rule]) => [key, new Scroll(rule)]));
  const byRule = (op: Operation, query: Json, body: Json, link: { origin: string; path: string }, pathParams: Record<string, string> = {}): SimResponse | undefined => {
    const searchRule = sidecar.search?.[op.key];
    const scrollRule = sidecar.scroll?.[op.key];
    const listRule = sidecar.pages?.[op.key];
    try {
      if (searchRule !== undefined) {
        const src = sourceOf(searchRule.resource);
        return { status: op.successStatus, json: search(searchRule, src.slice(0, src.size()), body, pathParams) };
      }
      if (scrollRule !== undefined) return { status: op.successStatus, json: (scrolls.get(op.key) as Scroll).next(readPath(query, scrollRule.param), (start, end) => sourceOf(scrollRule.resource).slice(start, end)) };
      if (listRule !== undefined) {
        // A nested list (/contacts/{contact_id}/notes) needs its parent (the resource's `parent`).
        const pr = sidecar.resources?.[listRule.resource]?.parent;
        const parentId = pr === undefined ? undefined : pathParams[pr.param];
        if (pr !== undefined && parentId !== undefined && resources.get(pr.resource)?.records.has(parentId) !== true) return notFound(op, parentId, pr.param);
        const dflt = d.schemaAt(op.params.find((p) => p.name === listRule.per_page)?.schemaRef)?.default;
        const source = listRule.path_fields === undefined ? sourceOf(listRule.resource, op.key, pathParams) : fieldSource(sourceOf(listRule.resource, op.key), listRule.path_fields, pathParams);
        return { status: op.successStatus, json: listPage(listRule, source, query, typeof dflt === 'number' ? dflt : undefined, link) };
      }
    } catch (e) {
      if (e instanceof RuleError) return errorResponse({ status: 400, code: e.code, message: e.message, ...(e.field !== undefined ? { field: e.field } : {}) }, op);
      throw e;
    }
    return undefined;
  };
  const closeScrolls = (): void => {
    for (const sc of scrolls.values()) sc.close();
  };

  // Requests may carry the path of the description's server URL (/api/1.0 of https://app.asana.com/api/1.0).
  const basePath = serverBasePath(d.doc);

  const handle = (incoming: SimRequest): SimResponse => {
    const fromOauth = oauthRoutes?.(incoming);
    if (fromOauth !== undefined) return fromOauth;
    const prefixed = basePath !== '' && (incoming.path === basePath || incoming.path.startsWith(`${basePath}/`));
    const req = prefixed ? { ...incoming, path: incoming.path.slice(basePath.length) || '/' } : incoming;
    // rate_limit.per_credential: requests refused for their path or credentials spend nothing (the limit is the account's).
    let rl: { headers: Record<string, string>; exceeded: boolean } = rateLimit?.per_credential === true ? { headers: {}, exceeded: false } : countRequest();
    const withHeaders = (r: SimResponse): SimResponse => ({ ...r, headers: { ...rl.headers, ...(r.headers ?? {}) } });
    const matched = d.match(req.method, req.path);
    if (!('op' in matched)) return withHeaders(errorResponse(matched));
    const { op, pathParams } = matched;
    // Minting from an app's JWT: the operation takes the JWT, not a token (jwt_tokens).
    if (mintRoute !== undefined && op.key === sidecar.jwt_tokens?.operation) return withHeaders(mintRoute(String(req.headers.authorization ?? '')));
    // Credentials, then the rate limit, then the request itself: the order the vendors answer in.
    const unauthorized = d.checkAuth(op, req);
    if (unauthorized !== null) return withHeaders(errorResponse(unauthorized, op));
    if (sidecar.auth?.bearer === true && op.security.length === 0 && presentedToken(String(req.headers.authorization ?? '')) === undefined) {
      return withHeaders(errorResponse({ status: 401, code: 'unauthorized', message: 'Requires authentication' }, op));
    }
    if (checkTokens && (op.security.length > 0 || sidecar.auth?.bearer === true)) {
      const presented = presentedToken(String(req.headers.authorization ?? ''));
      if (presented === undefined || !tokens.has(presented) || (tokenExpiry.get(presented) ?? Infinity) <= simNow()) return withHeaders(errorResponse({ status: 401, code: 'invalid_token', message: 'Access token invalid' }, op));
      const expiry = grants.expiries.get(presented);
      if (expiry !== undefined && expiry <= Date.now()) {
        return withHeaders(errorResponse({ status: 401, code: 'expired_token', message: `The OAuth token used to make this call expired ${String(Math.max(0, Math.floor((Date.now() - expiry) / 1000)))} second(s) ago.` }, op));
      }
    }
    if (rateLimit?.per_credential === true) rl = countRequest();
    if (rl.exceeded && rateLimit !== undefined) {
      // Retry-After (seconds), the HTTP standard's wait: until the window ends. The sidecar's
      // exceeded_headers are added (Stripe-Should-Retry); an empty value removes a header (Stripe's 429 has no Retry-After).
      const wait = String(Math.max(1, Math.ceil(rateLimit.bucket === true ? bucketWait : (windowStart + rateLimit.window_seconds * 1000 - Date.now()) / 1000)));
      const limitedHeaders: Record<string, string> = { 'Retry-After': wait };
      for (const [k, v] of Object.entries(rateLimit.exceeded_headers ?? {})) {
        for (const have of Object.keys(limitedHeaders)) if (have.toLowerCase() === k.toLowerCase()) delete limitedHeaders[have];
        if (v !== '') limitedHeaders[k] = v;
      }
      return withHeaders(errorResponse({ status: 429, code: 'rate_limited', message: `Rate limit of ${rateLimit.limit} requests in ${rateLimit.window_seconds}s exceeded` }, op, limitedHeaders));
    }
    const checked = d.checkRequest(op, { pathParams, query: req.query, headers: req.headers, rawBody: req.rawBody }, { unknownQuery: sidecar.unknown_query ?? 'ignore', skipAuth: true, credentialParams: sidecar.auth?.params });
    if ('status' in checked) return withHeaders(errorResponse(checked, op));
    const origin = `http://${req.headers.host ?? '127.0.0.1'}${prefixed ? basePath : ''}`;
    const handler = options.handlers?.[op.key];
    if (handler !== undefined) {
      try {
        const body = checked.body !== null && typeof checked.body === 'object' ? (checked.body as Json) : {};
        const answered = handler({ req, op, params: pathParams, query: checked.query, body, origin });
        if (answered !== undefined) return withHeaders(answered);
      } catch (e) {
        if (e instanceof SimulatorError) return withHeaders(errorResponse({ status: e.status, code: e.code, message: e.message, ...(e.field !== undefined ? { field: e.field } : {}) }, op));
        throw e;
      }
    }
    const ruled = byRule(op, checked.query, checked.body !== null && typeof checked.body === 'object' ? (checked.body as Json) : {}, { origin, path: req.path }, pathParams);
    if (ruled !== undefined) return withHeaders(ruled);
    const c = classified.get(op.key) as Classified;
    const r = c.resource === undefined ? undefined : resources.get(c.resource);
    // Other operations answer a sample of their success schema, with the description's example of
    // that success over it where it has one (what the example leaves out keeps its sampled value).
    if (r === undefined || c.kind === 'action') {
      const sampled = sample(op.responseRef);
      const example = sidecar.operations?.[op.key]?.example ?? exampleOf(d, op);
      const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
      return withHeaders({ status: op.successStatus, json: isObj(sampled) && isObj(example) ? { ...sampled, ...example } : sampled });
    }
    const input: Json = { ...(checked.body !== null && typeof checked.body === 'object' && !Array.isArray(checked.body) ? (checked.body as Json) : {}), ...checked.query };
    const rpcParent = c.rpc === true && r.declared?.parent !== undefined ? r.declared.parent.param : undefined;
    const parentOf: Record<string, string> = c.rpc !== true ? pathParams : rpcParent !== undefined && input[rpcParent] !== undefined ? { [rpcParent]: String(input[rpcParent]) } : {};
    const rawId = c.idQuery !== undefined ? (checked.query[c.idQuery] ?? '') : c.idParam === undefined ? undefined : c.rpc === true ? input[c.idParam] : pathParams[c.idParam];
    let id = rawId === undefined ? undefined : String(rawId);
    if (c.keyParams !== undefined) {
      // Several path ids (/repos/{owner}/{repo}): the record whose key fields they name.
      const key = sidecar.resources?.[r.name]?.key ?? {};
      const found = [...r.records.entries()].find(([, s]) => c.keyParams?.every((p) => String(getPath(s.record, key[p] ?? p)) === pathParams[p]));
      id = found?.[0] ?? Object.values(pathParams).join('/');
    }
    /** The live record an id names (by a lookup field too; not soft-deleted), under its parent for an RPC resource with one. */
    const located = (): StoredRecord | undefined => {
      const s = id === undefined ? undefined : find(r, id);
      return s !== undefined && !softDeleted(r, s.record) && (c.rpc !== true || Object.entries(parentOf).every(([k, v]) => s.parents[k] === v)) ? s : undefined;
    };
    /** Write body fields onto a record: for RPC, not the id or parent, not the credential; declared ones (writes) at their record path. */
    const write = (record: Json, fields: Json, deep = false): void => {
      if (c.rpc !== true) return merge(record, fields, r.recordRef, deep, sidecar.resources?.[r.name]?.written_as_sent);
      const plain: Json = {};
      for (const [k, v] of Object.entries(fields)) {
        if (k === c.idParam || k === r.idField || k === rpcParent || (sidecar.auth?.params ?? []).includes(k)) continue;
        const to = r.declared?.writes?.[k];
        if (to === undefined) plain[k] = v;
        else setPath(record, to, v);
      }
      merge(record, plain, r.recordRef, deep, sidecar.resources?.[r.name]?.written_as_sent);
    };
    // text_values: fields whose numbers and booleans the vendor keeps as text (HubSpot's properties: amount 10000 → "10000").
    const writeKeepingText = (record: Json, fields: Json, deep = false): void => {
      write(record, fields, deep);
      for (const f of sidecar.resources?.[r.name]?.text_values ?? []) {
        const v = getPath(record, f);
        if (v !== undefined) setPath(record, f, leavesAsText(v));
      }
    };
    // Records under a parent (messages in a channel) need that parent to exist.
    const parentMissing = (): boolean => rpcParent !== undefined && (parentOf[rpcParent] === undefined || resources.get(r.declared?.parent?.resource ?? '')?.records.has(parentOf[rpcParent]) !== true);
    // The sidecar's write rules (store-rules.ts): unique fields, upserts, a nested record's parent.
    const rules = sidecar.resources?.[r.name];
    let kind = c.kind;
    if (kind === 'create' && rules?.upsert !== undefined) {
      const target = upsertTarget(rules.upsert, r.records, unwrapBody(op, checked.body));
      if (target !== undefined) [kind, id] = ['update', target];
    }
    if ((kind === 'create' || kind === 'update') && rules?.unique !== undefined) {
      const conflict = uniqueConflict(rules.unique, r.records, unwrapBody(op, checked.body), kind === 'update' ? located()?.record[r.idField]?.toString() : undefined);
      if (conflict !== undefined) return withHeaders(errorResponse({ status: 409, code: 'conflict', message: conflictMessage(rules.unique, conflict) }, op));
    }
    const restParent = c.rpc !== true && rules?.parent !== undefined ? rules.parent : undefined;
    const parentRecord = restParent === undefined ? undefined : resources.get(restParent.resource)?.records.get(pathParams[restParent.param] ?? '')?.record;
    if (restParent !== undefined && parentRecord === undefined && (kind === 'create' || kind === 'list')) return withHeaders(notFound(op, pathParams[restParent.param] ?? '', restParent.param));
    // A nested collection under a parent that does not exist is the parent's 404 (GitHub's missing repository), not an empty page.
    const link = c.rpc !== true && restParent === undefined ? links.get(op.key) : undefined;
    if (link !== undefined && (kind === 'create' || kind === 'list') && !parentExists(link, pathParams)) {
      const param = Object.keys(link.fields).at(-1) ?? '';
      return withHeaders(notFound(op, pathParams[param] ?? '', param));
    }
    switch (kind) {
      case 'list':
        if (parentMissing()) return withHeaders(notFound(op, parentOf[rpcParent ?? ''] ?? '', rpcParent));
        return withHeaders(list(op, r, parentOf, checked.query, origin, req, c.rpc === true ? [rpcParent ?? ''] : []));
      case 'create': {
        if (r.records.size >= (options.maxRecords ?? 100_000)) {
          return withHeaders(errorResponse({ status: 507, code: 'storage_full', message: `The simulator keeps at most ${String(options.maxRecords ?? 100_000)} ${r.name}; delete some or restart it` }, op));
        }
        if (parentMissing()) return withHeaders(notFound(op, parentOf[rpcParent ?? ''] ?? '', rpcParent));
        const fields = unwrapBody(op, checked.body);
        const nested = takeNested(op, fields);
        // A declared resource's new record starts from the create method's own example (or the
        // description's first example of the record); else from the sidecar's template, else from a
        // sample of the schema (newRecord); the body's fields over it.
        const created = r.declared === undefined ? undefined : (exampleOf(d, op) as Json | undefined);
        const base = r.declared?.record !== undefined ? created?.[r.declared.record] : created;
        const fromExample = isPlainObject(base) ? base : r.examples?.[0];
        const record = newRecord(
          r,
          (like) => {
            const mint = (): string | number => newId(seededRandom(mixSeed(seed, hashString(r.name), ++r.created)), like, true);
            let id = mint();
            while (r.records.has(String(id))) id = mint();
            return id;
          },
          r.records.size + 1,
          undefined,
          undefined,
          fromExample,
          // A nested record's template may name its parent ({{contact_id}}).
          pathParams,
        );
        const newRecordId = record[r.idField];
        writeKeepingText(record, fields, c.rpc !== true);
        record[r.idField] = newRecordId;
        if (r.idField !== 'id' && (typeof record.id === 'number' || typeof record.id === 'string')) record.id = newId(seededRandom(mixSeed(seed, hashString(`${r.name}.id`), r.created)), record.id);
        uniqueLookups(r, record, r.records.size + 1);
        const at = new Date().toISOString();
        stamp(r, record, 'created', at);
        stamp(r, record, 'updated', at);
        const stored = { record, parents: c.rpc === true ? parentOf : { ...pathParams } };
        r.records.set(String(newRecordId), stored);
        if (restParent?.append !== undefined && parentRecord !== undefined) appendToParent(restParent.append, parentRecord, record);
        const json = wrap(op, record, r, stored);
        applyNested(nested, String(newRecordId), json);
        return withHeaders({ status: op.successStatus, json });
      }
      case 'get': {
        const deletedParam = softDeleteParam(r);
        // A soft-deleted record is gone, unless the get asks for it (HubSpot's archived=true).
        const s = deletedParam !== undefined && checked.query[deletedParam] === true ? (id === undefined ? undefined : find(r, id)) : located();
        return withHeaders(s === undefined ? notFound(op, id ?? '', c.idParam ?? c.idQuery) : { status: op.successStatus, json: wrap(op, included(s.record, sidecar.resources?.[r.name]?.include, checked.query), r.declared === undefined ? undefined : r, s) });
      }
      case 'update': {
        const s = located();
        if (s === undefined) return withHeaders(notFound(op, id ?? '', c.idParam));
        const fields = unwrapBody(op, checked.body);
        delete fields[r.idField];
        const nested = takeNested(op, fields);
        writeKeepingText(s.record, fields, true);
        stamp(r, s.record, 'updated', new Date().toISOString());
        // no_content_unless: 204 without a body unless the request asks for the record (Jira's returnIssue).
        const ask = sidecar.operations?.[op.key]?.no_content_unless;
        const status = ask !== undefined && checked.query[ask] !== true && checked.query[ask] !== 'true' ? 204 : op.successStatus;
        const json = status === 204 ? undefined : wrap(op, s.record, r, s);
        applyNested(nested, String(s.record[r.idField]), json);
        return withHeaders({ status, json });
      }
      case 'delete': {
        const s = located();
        if (s === undefined) return withHeaders(notFound(op, id ?? '', c.idParam));
        // soft_delete keeps the record, marked (and stamped with `at`), for the lists and exports that report deletions.
        const sd = sidecar.resources?.[r.name]?.soft_delete;
        if (sd !== undefined) {
          const now = new Date().toISOString();
          setPath(s.record, sd.field, sd.value === undefined ? true : sd.value);
          if (sd.at !== undefined) setPath(s.record, sd.at, now);
          stamp(r, s.record, 'updated', now);
          // An answer with a body shows the marked record (Zendesk's deleted user, active false).
          return withHeaders({ status: op.successStatus, json: op.responseRef === undefined ? undefined : wrap(op, s.record, r.declared === undefined ? undefined : r, s) });
        }
        if (!r.records.delete(String(s.record[r.idField]))) return withHeaders(notFound(op, id ?? '', c.idParam));
        return withHeaders({ status: op.successStatus, json: op.responseRef === undefined ? undefined : sample(op.responseRef) });
      }
    }
    return withHeaders({ status: op.successStatus, json: sample(op.responseRef) });
  };

  const resourceNamed = (name: string): Resource => {
    const r = resources.get(name);
    if (r === undefined) throw new Error(`the simulator has no resource ${name} (it has ${[...resources.keys()].join(', ')})`);
    return r;
  };
  const sim = await startSimulator(handle, { ...(options.port !== undefined ? { port: options.port } : {}), ...(options.host !== undefined ? { host: options.host } : {}) });
  return {
    ...sim,
    description: d,
    sidecar,
    resources,
    seed,
    tokens,
    oauth,
    jwtKeys,
    tokenExpiry,
    setRateLimit: (limit) => {
      rateLimit = limit === false ? undefined : limit;
      windowStart = -1;
      used = 0;
      bucket = undefined;
    },
    resetRateLimit: () => {
      windowStart = -1;
      used = 0;
      bucket = undefined;
    },
    expireAccessTokens: () => {
      const past = Date.now() - 1000;
      for (const t of grants.expiries.keys()) grants.expiries.set(t, past);
    },
    closeScrolls,
    addRecord: (name, fields) => {
      const r = resourceNamed(name);
      const mint = (like: unknown): string | number => {
        let id = newId(seededRandom(mixSeed(seed, hashString(r.name), ++r.created)), like, true);
        while (r.records.has(String(id))) id = newId(seededRandom(mixSeed(seed, hashString(r.name), ++r.created)), like, true);
        return id;
      };
      const record = newRecord(r, mint, r.records.size + 1, fields === undefined ? undefined : clone(fields));
      r.records.set(String(record[r.idField]), { record, parents: {} });
      return record;
    },
    updateRecord: (name, id, fields) => {
      const r = resourceNamed(name);
      const s = r.records.get(id);
      if (s === undefined) return undefined;
      Object.assign(s.record, clone(fields ?? {}));
      stamp(r, s.record, 'updated', new Date().toISOString());
      return s.record;
    },
    removeRecord: (name, id) => resourceNamed(name).records.delete(id),
    reset: () => {
      sim.reset();
      closeScrolls();
      windowStart = -1;
      used = 0;
      bucket = undefined;
    },
  };
}

/** The example of an operation's success response (`example`, or the first of `examples`), if the description gives one. */
function exampleOf(d: Description, op: Operation): unknown {
  const content = (d.resolve<Json>(((d.doc.paths as Json)[op.path] as Json)?.[op.method.toLowerCase()]) as Json | undefined)?.responses as Json | undefined;
  const response = d.resolve<Json>(content?.[String(op.successStatus)]);
  const media = Object.entries((response?.content ?? {}) as Record<string, Json>).find(([t]) => /json/i.test(t))?.[1];
  if (media === undefined) return undefined;
  const first = Object.values((media.examples ?? {}) as Record<string, Json>)[0];
  const value = media.example !== undefined ? media.example : first === undefined ? undefined : d.resolve<Json>(first).value;
  // Some descriptions (Atlassian's) give their examples as JSON text.
  if (typeof value === 'string' && /^\s*[[{]/.test(value)) {
    try {
      return JSON.parse(value) as unknown;
    } catch {
      return undefined;
    }
  }
  return value === undefined ? undefined : clone(value);
}

/**
 * The token a request presents: a bearer (or other scheme's) token as sent; for HTTP basic, the
 * password of base64(user:password), so a sidecar lists API tokens, not encodings of them.
 */
function presentedToken(authorization: string): string | undefined {
  const m = /^(\w+)\s+(\S+)\s*$/.exec(authorization);
  if (m === null) return undefined;
  if ((m[1] as string).toLowerCase() !== 'basic') return m[2];
  const decoded = Buffer.from(m[2] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

/** The path of the description's first server URL without its trailing slash ('' for none or a bare host). */
function serverBasePath(doc: Json): string {
  const url = ((doc.servers as { url?: string }[] | undefined) ?? [])[0]?.url;
  if (url === undefined) return '';
  try {
    return new URL(url.replace(/\{[^}]*\}/g, 'x'), 'http://localhost').pathname.replace(/\/$/, '');
  } catch {
    return '';
  }
}

let lastTs = 0;
/**
 * A fresh id shaped like the sampled one: a number, a Unix timestamp with microseconds (Slack's
 * message ts: in the past when seeded, the current time when created, always increasing), a
 * prefixed id (Granola's not_1d3tmYTlCICgjy), a prefixed upper-case id (Slack's C012AB3CD), or a
 * string of digits (Asana gids, numeric ids) or hex.
 */
function newId(rand: () => number, like: unknown, created = false): string | number {
  if (typeof like === 'number') return 1 + Math.floor(rand() * 2_000_000_000);
  if (typeof like === 'string' && /^\d{10}\.\d{6}$/.test(like)) {
    if (!created) return `${1_600_000_000 + Math.floor(rand() * 80_000_000)}.${String(Math.floor(rand() * 1_000_000)).padStart(6, '0')}`;
    lastTs = Math.max(lastTs + 1, Date.now() * 1000);
    return `${Math.floor(lastTs / 1_000_000)}.${String(lastTs % 1_000_000).padStart(6, '0')}`;
  }
  // A lower-case prefix and letters and digits (Granola's not_1d3tmYTlCICgjy): the same prefix and length.
  const prefixed = typeof like === 'string' ? /^([a-z]{2,8}_)([A-Za-z0-9]{8,})$/.exec(like) : null;
  if (prefixed !== null) {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    return (prefixed[1] as string) + Array.from({ length: (prefixed[2] as string).length }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
  }
  if (typeof like === 'string' && /^[A-Z][A-Z0-9]{2,}$/.test(like) && /\d/.test(like)) {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
    return like[0] + Array.from({ length: Math.max(8, like.length - 1) }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
  }
  // A UUID (Notion's ids): a version 4 UUID from the same generator.
  if (typeof like === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(like)) {
    const hex = Array.from({ length: 32 }, (_, i) => (i === 12 ? 4 : i === 16 ? 8 + Math.floor(rand() * 4) : Math.floor(rand() * 16)).toString(16)).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  const digits = Array.from({ length: 16 }, (_, i) => Math.floor(rand() * (i === 0 ? 9 : 10)) + (i === 0 ? 1 : 0)).join('');
  return typeof like === 'string' && /^[0-9a-f]{20,}$/.test(like) && /[a-f]/.test(like) ? Buffer.from(digits).toString('hex').slice(0, like.length) : digits;
}

/** The records of `source` whose dotted fields equal the path parameters `fields` names (a list rule's `path_fields`). */
function fieldSource(source: RecordSource, fields: Record<string, string>, pathParams: Record<string, string>): RecordSource {
  const all = (): Json[] => (source.slice(0, source.size()) as Json[]).filter((r) => Object.entries(fields).every(([param, field]) => String(readPath(r, field)) === pathParams[param]));
  return { size: () => all().length, slice: (start, end) => all().slice(start, end), indexOf: (id) => all().findIndex((r) => String(r['id']) === id) };
}

/** Pointer to a named property of the schema at `pointer` (through $refs and allOf). */
function pointerOfProperty(d: Description, pointer: string, prop: string): string | undefined {
  const find = (p: string, depth: number): string | undefined => {
    if (depth > 8) return undefined;
    const s = d.at(p);
    if (typeof s.$ref === 'string') return find(s.$ref, depth + 1);
    const props = s.properties as Json | undefined;
    if (props?.[prop] !== undefined) {
      const v = props[prop] as Json;
      return typeof v.$ref === 'string' ? v.$ref : `${p}/properties/${prop}`;
    }
    for (const [i] of ((s.allOf ?? []) as unknown[]).entries()) {
      const found = find(`${p}/allOf/${i}`, depth + 1);
      if (found !== undefined) return found;
    }
    // The first alternative of anyOf/oneOf, as propertiesOf reads it (Stripe's customer | deleted_customer).
    for (const key of ['anyOf', 'oneOf']) {
      if (Array.isArray(s[key]) && (s[key] as unknown[]).length > 0) return find(`${p}/${key}/0`, depth + 1);
    }
    return undefined;
  };
  return find(pointer, 0);
}

/** A copy of a value with its numbers and booleans as text. */
function leavesAsText(value: unknown, depth = 0): unknown {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null || typeof value !== 'object' || depth > 32) return value;
  if (Array.isArray(value)) return value.map((v) => leavesAsText(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, leavesAsText(v, depth + 1)]));
}
