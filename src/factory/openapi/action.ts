/**
 * One action of an entity scaffolded from its operation: params (path, query, header, and the
 * JSON or form body's fields), the request template, and the response (records with pagination,
 * or one record) unwrapped from its envelope.
 */
import type { Sidecar } from '../../simulator/sidecar.ts';
import { flatten, isArraySchema, isObjectSchema, propertiesOf, toJsonSchema, toJsonSchemaWithin, type OpenApiSchema } from '../json-schema.ts';
import { safeName, shortText, withType } from '../scaffold.ts';
import {
  bodyAt,
  findRecord,
  findRecords,
  formSchemaOf,
  isObj,
  jsonSchemaOf,
  norm,
  singular,
  success,
  type Obj,
  type Operation,
  type Parameter,
} from './document.ts';
import { inferPagination, isArrayParam, LIMIT_PARAMS, type BuiltParam } from './pagination.ts';
import { paramName } from './param-names.ts';
import type { EntityPlan } from './plan.ts';

export interface BuiltAction {
  action: Obj;
  recordSchema?: OpenApiSchema;
  /** For a list without required params: its request with a page size of 1, for the credential check. */
  checkable?: Obj;
}

/**
 * The size of a body param's schema. Levels kept (objects and arrays both count): at most four
 * (HubSpot's associations[].types[].x), fewer while the param would declare more than
 * BODY_PROPERTIES properties in all; deeper values stay `object`. Vendors' create bodies nest whole
 * records (an invoice's contact and line items, each with dozens of fields, theirs in turn):
 * inlined in full, one scaffold of two entities ran to 5,805 lines. Sixty properties are about
 * two screens of YAML, which a person can still check against the vendor's documentation.
 */
const BODY_DEPTH = 4;
const BODY_PROPERTIES = 60;

type ActionName = 'list' | 'get' | 'create' | 'update';
type OperationAt = { path: string; method: string; op: Operation; pathParams: Parameter[] };
type Path = (string | number)[];

/** Where the action's guesses and reports go, and what it shares with the others of the scaffold. */
export interface ActionScope {
  guess: (path: Path, message: string) => void;
  report: string[];
  /** Header params with a default, sent on every request (collected across actions). */
  sentHeaders: Record<string, string>;
  /** Params that are the credential (sent by the auth variant, not asked for). */
  credentialParams: Set<string>;
  /** Path params that are credential fields (an account id leading every path): the description's name → its template. */
  sharedPath?: Record<string, string>;
  sidecarPagination?: Sidecar['pagination'] | undefined;
}

export function buildAction(def: OperationAt, action: ActionName, plan: EntityPlan, at: Path, scope: ActionScope): BuiltAction {
  const where = `${plan.name}.${action} (${def.method} ${def.path})`;
  const { params, taken } = parameterParams(def, at, where, scope);
  const { bodyTemplate, form } =
    action === 'create' || action === 'update' || (action === 'list' && def.method === 'POST')
      ? bodyParams(def, at, where, scope, params, taken)
      : { bodyTemplate: undefined, form: false };
  const { out, pathTemplate } = requestOf(def, action, at, scope, params, bodyTemplate, form);
  const res = success(def.op);
  const result: BuiltAction = { action: out };
  if (action === 'list') listResponse(plan, at, where, scope, params, res, out, result, pathTemplate);
  else recordResponse(plan, at, where, scope, res, out, result);
  return result;
}

/** The operation's parameters as params; a header with a default is sent instead, a credential left to the auth variant. */
function parameterParams(
  def: OperationAt,
  at: Path,
  where: string,
  { guess, report, sentHeaders, credentialParams }: ActionScope,
): { params: BuiltParam[]; taken: Set<string> } {
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
      const objectBranch = [p.schema, ...((flatten(p.schema)['anyOf'] ?? flatten(p.schema)['oneOf'] ?? []) as OpenApiSchema[])].find(
        (b) => isObjectSchema(b) && propertiesOf(b).length > 0,
      );
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
    const { name, why } = paramName(p.name, p.in, isObj(p.schema) ? flatten(p.schema) : undefined, taken);
    if (why !== undefined) guess([...at, 'params', name], why);
    const schema = withType(toJsonSchema(p.schema ?? { type: 'string' }, { depth: 1, required: true })) as BuiltParam['schema'];
    const description = shortText(p.description);
    if (description) schema['description'] = description;
    if (p.in === 'path') {
      schema['required'] = true;
      if (schema['type'] === 'string' && schema['minLength'] === undefined) schema['minLength'] = 1;
    } else if (p.required) schema['required'] = true;
    const deepArray = p.in === 'query' && p.style === 'deepObject' && schema['type'] === 'array';
    params.push({
      name,
      original: p.name,
      in: p.in,
      schema,
      ...(p.explode === false && p.in === 'query' ? { explodeFalse: true } : {}),
      ...(deepArray ? { key: `${p.name}[]` } : {}),
    });
  }
  return { params, taken };
}

/** The JSON (else form-encoded) request body: its fields are params; a single-key wrapper is put back by the template. */
function bodyParams(
  def: OperationAt,
  at: Path,
  where: string,
  { guess, report, credentialParams }: ActionScope,
  params: BuiltParam[],
  taken: Set<string>,
): { bodyTemplate: unknown; form: boolean } {
  let bodyTemplate: unknown;
  const content = def.op.requestBody?.content;
  const form_ = formSchemaOf(content);
  const schema = jsonSchemaOf(content) ?? form_;
  const form = form_ !== undefined;
  if (content && schema === undefined && Object.keys(content).length > 0)
    report.push(`${where}: request body ${Object.keys(content).join(', ')} is neither JSON nor a form; left out`);
  if (schema !== undefined) {
    const props = propertiesOf(schema);
    let wrapper: string | undefined;
    let inner = schema;
    let listed = false;
    if (props.length === 1 && isObjectSchema(props[0]![1]) && propertiesOf(props[0]![1]).length > 0) {
      wrapper = props[0]![0];
      inner = props[0]![1];
    } else if (props.length === 1 && isArraySchema(props[0]![1]) && propertiesOf(flatten(props[0]![1])['items']).length > 0) {
      // The record as the one item of an array under a plural key ({"Invoices": [{...}]}).
      [wrapper, inner, listed] = [props[0]![0], flatten(flatten(props[0]![1])['items']), true];
    }
    const required = new Set<string>(Array.isArray(flatten(inner)['required']) ? (flatten(inner)['required'] as string[]) : []);
    // A record sent as the one item of an array is one record's fields: the cap holds for them all
    // together (as it would for the array as one param), not for each field on its own.
    // (The array and its item are two levels above the fields.)
    const fieldDepth = listed
      ? Math.max(1, toJsonSchemaWithin(props[0]![1], { depth: BODY_DEPTH + 2, required: true, itemsNest: true }, BODY_PROPERTIES).depth - 2)
      : BODY_DEPTH;
    const fields: Obj = {};
    for (const [field, fs] of propertiesOf(inner, { writable: true })) {
      if (credentialParams.has(field)) continue;
      const { name, why } = paramName(field, 'body', undefined, taken);
      if (why !== undefined) guess([...at, 'params', name], why);
      // Nested objects keep their shape (and required fields) a few levels down, so what the
      // param accepts is what the description's body takes (HubSpot's associations[].types[]).
      const within = toJsonSchemaWithin(fs, { depth: fieldDepth, required: true, itemsNest: true }, BODY_PROPERTIES);
      const js = withType(within.schema) as BuiltParam['schema'];
      if (required.has(field)) js['required'] = true;
      const capped =
        within.depth < fieldDepth ||
        (fieldDepth < BODY_DEPTH && JSON.stringify(toJsonSchema(fs, { depth: BODY_DEPTH, required: true, itemsNest: true })) !== JSON.stringify(within.schema));
      if (capped)
        guess(
          [...at, 'params', name],
          `shape kept ${within.depth} level${within.depth === 1 ? '' : 's'} deep (the description's is larger); deeper values are typed object`,
        );
      params.push({ name, original: field, in: 'body', schema: js });
      fields[field] = `{{params.${name}}}`;
    }
    bodyTemplate = wrapper !== undefined ? { [wrapper]: listed ? [fields] : fields } : fields;
    if (wrapper !== undefined)
      guess(
        [...at, 'request', 'body'],
        listed
          ? `the description sends records as an array in "${wrapper}"; params are the fields of one`
          : `the description wraps the fields in "${wrapper}"; params are the fields inside`,
      );
  }
  return { bodyTemplate, form };
}

/** The action's description, params and request template. */
function requestOf(
  def: OperationAt,
  action: ActionName,
  at: Path,
  { guess, sharedPath = {} }: ActionScope,
  params: BuiltParam[],
  bodyTemplate: unknown,
  form: boolean,
): { out: Obj; pathTemplate: string } {
  const out: Obj = {};
  const description = shortText(def.op.summary ?? def.op.description);
  if (description || def.op.operationId)
    out['description'] = `${description ?? ''}${def.op.operationId ? `${description ? ' ' : ''}(${def.op.operationId})` : ''}`;
  if (params.length > 0) out['params'] = Object.fromEntries(params.map((p) => [p.name, p.schema]));
  // A #fragment pseudo-path is its path: the fragment never reaches the server.
  const pathTemplate = def.path
    .replace(/#.*$/, '')
    .replace(/\{([^}]+)\}/g, (_m, n: string) => sharedPath[n] ?? `{{params.${params.find((p) => p.in === 'path' && p.original === n)?.name ?? safeName(n)}}}`);
  for (const m of def.path.matchAll(/\{([^}]+)\}/g)) {
    if (sharedPath[m[1]!] === undefined && !params.some((p) => p.in === 'path' && p.original === m[1])) {
      const name = safeName(m[1]!);
      params.push({ name, original: m[1]!, in: 'path', schema: { type: 'string', minLength: 1, required: true } });
      out['params'] = Object.fromEntries(params.map((p) => [p.name, p.schema]));
      guess([...at, 'params', name], 'path parameter not declared in the description');
    }
  }
  const request: Obj = { method: def.method, path: pathTemplate };
  const query = params.filter((p) => p.in === 'query');
  if (query.length > 0)
    request['query'] = Object.fromEntries(
      query.map((p) => [p.key ?? p.original, p.explodeFalse && isArrayParam(p) ? `{{join params.${p.name} ','}}` : `{{params.${p.name}}}`]),
    );
  const headers = params.filter((p) => p.in === 'header');
  if (headers.length > 0) request['headers'] = Object.fromEntries(headers.map((p) => [p.original, `{{params.${p.name}}}`]));
  if (bodyTemplate !== undefined) request['body'] = bodyTemplate;
  if (bodyTemplate !== undefined && form) {
    request['body_encoding'] = 'form';
    guess(
      [...at, 'request', 'body_encoding'],
      'the description takes application/x-www-form-urlencoded: nested fields are sent as deepObject keys (metadata[key], items[0][price])',
    );
  }
  if (def.method === 'POST' && action === 'update') guess([...at, 'request', 'method'], 'the item path has no PATCH or PUT: its POST is taken as the update');
  out['request'] = request;
  return { out, pathTemplate };
}

/** A list's records (unwrapped), its pagination, and the request the credential check may use. */
function listResponse(
  plan: EntityPlan,
  at: Path,
  where: string,
  { guess, report, sidecarPagination }: ActionScope,
  params: BuiltParam[],
  res: ReturnType<typeof success>,
  out: Obj,
  result: BuiltAction,
  pathTemplate: string,
): void {
  // An RPC answer's one array is its records, whatever its items' schema says (Slack's channels).
  const arrays = plan.rpc === true && res.schema !== undefined ? propertiesOf(res.schema).filter(([, v]) => isArraySchema(v)) : [];
  // The record as the entity's get answers it: of several arrays, the records are the one whose items look like it.
  const getSchema = plan.ops.get === undefined ? undefined : findRecord(success(plan.ops.get.op).schema, singular(plan.name), plan.name).schema;
  const found =
    findRecords(res.schema, plan.name, 2, getSchema) ??
    (arrays.length === 1 ? { path: [arrays[0]![0]], item: flatten(flatten(arrays[0]![1])['items']) } : undefined);
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
      ? {
          pagination: { type: 'cursor', param: scParam.name, next: `{{body.${sc.next_cursor}}}` },
          meta: `{{body.${sc.next_cursor}}}`,
          why: `cursor: the sidecar's pagination (${sc.cursor_param} ← ${sc.next_cursor})`,
        }
      : undefined);
  if (pg) {
    out['pagination'] = pg.pagination;
    (out['response'] as Obj)['meta'] = { next_page: pg.meta };
    guess([...at, 'pagination'], pg.why);
  } else report.push(`${where}: no pagination inferred (no cursor, offset or page param with a matching response field, no Link header)`);
  // A list read by POST (a search) is no cheap credential check.
  if (!params.some((p) => p.schema['required'] === true) && (out['request'] as Obj)['method'] === 'GET') {
    const limit = params.find((p) => LIMIT_PARAMS.includes(norm(p.original)) && p.in === 'query');
    result.checkable = { method: 'GET', path: pathTemplate, ...(limit ? { query: { [limit.original]: '1' } } : {}) };
  }
}

/** One record (unwrapped from its envelope, or where the sidecar says it is). */
function recordResponse(
  plan: EntityPlan,
  at: Path,
  where: string,
  { guess, report }: ActionScope,
  res: ReturnType<typeof success>,
  out: Obj,
  result: BuiltAction,
): void {
  const declared = plan.recordKey === undefined ? undefined : propertiesOf(res.schema ?? {}).find(([k]) => k === plan.recordKey);
  const found: ReturnType<typeof findRecord> =
    declared !== undefined
      ? { path: [declared[0]], schema: flatten(declared[1]), why: `record unwrapped from "${declared[0]}"` }
      : findRecord(res.schema, singular(plan.name), plan.name);
  // A record answered as the one item of an array ({"Invoices": [{...}]}): `first`.
  out['response'] = { record: found.first === true ? `{{first ${bodyAt(found.path).slice(2, -2)}}}` : bodyAt(found.path) };
  if (found.path.length > 0) guess([...at, 'response', 'record'], found.why ?? `record unwrapped from "${found.path.join('.')}"`);
  else if (found.doubt !== undefined) guess([...at, 'response', 'record'], found.doubt);
  if (res.schema === undefined) report.push(`${where}: no JSON response schema; the record is assumed to be the body`);
  if (found.schema) result.recordSchema = found.schema;
}
