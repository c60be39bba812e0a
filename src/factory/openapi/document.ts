/**
 * Reading an OpenAPI 3.x description: loading and resolving it, its operations and parameters,
 * request and response schemas, and where records sit in a response.
 */
import $RefParser from '@apidevtools/json-schema-ref-parser';
import { SwitchboardError } from '../../errors/index.ts';
import { flatten, isArraySchema, isObjectSchema, propertiesOf, type OpenApiSchema } from '../json-schema.ts';
import { hasIdField, oneItemWhy, unwrapSingle } from './envelope.ts';
import { idLikeness } from './id-like.ts';
import { norm } from './names.ts';

export { norm, singular } from './names.ts';

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A name compared loosely: lower case, letters and digits only. */

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  deprecated?: boolean;
  description?: string;
  schema?: OpenApiSchema;
  style?: string;
  explode?: boolean;
}

export interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: OpenApiSchema }>; required?: boolean };
  responses?: Record<string, { content?: Record<string, { schema?: OpenApiSchema }>; headers?: Record<string, unknown>; description?: string }>;
  deprecated?: boolean;
  /** Security requirements: alternatives, each scheme name → the scopes it needs. */
  security?: Record<string, string[]>[];
}

export type PathItem = Partial<Record<'get' | 'post' | 'put' | 'patch' | 'delete', Operation>> & { parameters?: Parameter[] };

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
    throw new SwitchboardError(
      'invalid_params',
      `${file} is not an OpenAPI 3.x description${v !== undefined ? ` (version ${String(v)})` : ''}; convert Swagger 2.0 with e.g. swagger2openapi first`,
      { details: { file } },
    );
  }
  if (!isObj(doc['paths'])) throw new SwitchboardError('invalid_params', `${file} has no paths`, { details: { file } });
  return doc;
}

const JSON_TYPE = /^application\/(.+\+)?json/;
const FORM_TYPE = /^application\/x-www-form-urlencoded/i;

/** The form-encoded schema of a request body (Stripe's, with deepObject keys), when it takes no JSON. */
export function formSchemaOf(content: Record<string, { schema?: OpenApiSchema }> | undefined): OpenApiSchema | undefined {
  if (!content || jsonSchemaOf(content) !== undefined) return undefined;
  const key = Object.keys(content).find((k) => FORM_TYPE.test(k));
  return key !== undefined ? content[key]?.schema : undefined;
}

/** The JSON schema of a body or response (the first JSON media type). */
export function jsonSchemaOf(content: Record<string, { schema?: OpenApiSchema }> | undefined): OpenApiSchema | undefined {
  if (!content) return undefined;
  const key = Object.keys(content).find((k) => JSON_TYPE.test(k)) ?? (content['*/*'] ? '*/*' : undefined);
  return key !== undefined ? content[key]?.schema : undefined;
}

/** The success response of an operation: 200, 201, any 2xx, else default. */
export function success(op: Operation): { schema?: OpenApiSchema; headers: string[] } {
  const r = op.responses ?? {};
  const code = ['200', '201', '202'].find((c) => r[c]) ?? Object.keys(r).find((c) => /^2\d\d$|^2XX$/i.test(c)) ?? (r['default'] ? 'default' : undefined);
  const res = code !== undefined ? r[code] : undefined;
  const schema = jsonSchemaOf(res?.content);
  return { ...(schema ? { schema } : {}), headers: Object.keys(res?.headers ?? {}) };
}

const RECORDS_KEYS = ['data', 'results', 'items', 'records', 'entries', 'values', 'elements', 'objects'];
const RECORD_KEYS = ['data', 'result', 'item', 'record', 'object'];

/**
 * Where a list's records are: `{path, item schema}`, unwrapping one or two envelope levels. When
 * the answer holds several arrays of objects, the one named like the entity, else the one whose
 * items share most fields with `record` (the entity's record as its get answers it), never a
 * `_links`-style array.
 */
export function findRecords(
  schema: OpenApiSchema | undefined,
  entity: string,
  depth = 2,
  record?: OpenApiSchema,
  wrappers = 3,
): { path: string[]; item?: OpenApiSchema } | undefined {
  if (schema === undefined || depth === 0) return undefined;
  if (isArraySchema(schema)) return { path: [], item: flatten(flatten(schema)['items']) };
  const wrapper = wrappers > 0 ? soleWrapper(schema, entity) : undefined;
  if (wrapper !== undefined) {
    const inner = findRecords(wrapper.schema, entity, depth, record, wrappers - 1);
    if (inner !== undefined) return { ...inner, path: [wrapper.key, ...inner.path] };
  }
  const props = propertiesOf(schema);
  // Arrays of objects only: an object with `tags: [string]` is a record, not a list of tags.
  const arrays = props.filter(([, v]) => isArraySchema(v) && richestObject(flatten(v)['items']) !== undefined);
  const named =
    arrays.find(([k]) => RECORDS_KEYS.includes(k) || norm(k) === norm(entity) || norm(k) === norm(lastWord(entity))) ??
    (arrays.length === 1 ? arrays[0] : bestArray(arrays, record));
  const item = named === undefined ? undefined : richestObject(flatten(named[1])['items']);
  if (named) return { path: [named[0]], ...(item !== undefined ? { item } : {}) };
  for (const [k, v] of props) {
    if (!RECORDS_KEYS.includes(k) || !isObjectSchema(v)) continue;
    const inner = findRecords(v, entity, depth - 1, record);
    if (inner && inner.path.length === 1) return { path: [k, ...inner.path], ...(inner.item ? { item: inner.item } : {}) };
  }
  return undefined;
}

/**
 * An object schema, or of a union (anyOf/oneOf, nested: `Partial | (Paragraph | Heading...)`) the
 * object alternative with the most properties; undefined when it holds no object.
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

/** The last word of a qualified entity name (`members` of `segments_members`). */
const lastWord = (name: string): string => name.split('_').at(-1) ?? name;

/** Of several arrays of objects, the one whose items share most fields with the record (links and metadata arrays left out). */
function bestArray(arrays: [string, OpenApiSchema][], record: OpenApiSchema | undefined): [string, OpenApiSchema] | undefined {
  const fieldsOf = (s: unknown): string[] => propertiesOf(s).map(([k]) => k);
  const wanted = new Set(record === undefined ? [] : fieldsOf(record));
  const scored = arrays
    .filter(([k]) => !k.startsWith('_') && !/^links$/i.test(k))
    .map(([k, v]) => {
      const fields = fieldsOf(flatten(v)['items']);
      return { entry: [k, v] as [string, OpenApiSchema], score: wanted.size > 0 ? fields.filter((f) => wanted.has(f)).length : fields.length };
    })
    .sort((a, b) => b.score - a.score);
  if (scored.length === 0 || scored[0]!.score === 0 || scored[0]!.score === scored[1]?.score) return undefined;
  return scored[0]!.entry;
}

/**
 * Where one record is in a get/create/update response: the body, a single-object envelope, or
 * the one item of an array under the entity's plural key (`{"Invoices": [{...}]}`: `first`), or
 * under any key when the body has no id and that one holder's record does (`unwrapSingle`).
 * `why` says how an envelope was found; `doubt`, when the body looks like one but which is unclear.
 */
export function findRecord(
  input: OpenApiSchema | undefined,
  singular: string,
  plural?: string,
  wrappers = 3,
): { path: string[]; schema?: OpenApiSchema; first?: boolean; why?: string; doubt?: string } {
  if (input === undefined) return { path: [] };
  // One record or another (a customer | a deleted customer, a partial | a full page): the richest object alternative.
  const schema = richestObject(input) ?? input;
  const wrapper = wrappers > 0 ? soleWrapper(schema, singular) : undefined;
  if (wrapper !== undefined) {
    const inner = findRecord(wrapper.schema, singular, plural, wrappers - 1);
    if (inner.path.length > 0)
      return { ...inner, path: [wrapper.key, ...inner.path], why: `record unwrapped from "${[wrapper.key, ...inner.path].join('.')}"` };
  }
  const props = propertiesOf(schema);
  const objects = props.filter(([, v]) => isObjectSchema(v));
  const envelope = objects.find(([k]) => RECORD_KEYS.includes(k) || k === singular);
  // A body with an id of its own is the record, whatever else it holds (Stripe's event has `data`).
  const ownId = props.some(([k]) => k === 'id' || k === 'gid' || k === 'uuid');
  if (envelope && !ownId && (props.length <= 3 || envelope[0] === 'data'))
    return { path: [envelope[0]], schema: flatten(envelope[1]), why: `record unwrapped from "${envelope[0]}"` };
  // A record answered as the one item of a list under a usual envelope name, beside paging: {data: [{id, ...}], info: {...}}.
  const oneOfList = ownId
    ? undefined
    : props.find(([k, v]) => RECORD_KEYS.includes(k) && isArraySchema(v) && hasIdField(flatten(flatten(v)['items']), singular));
  if (oneOfList !== undefined)
    return { path: [oneOfList[0]], schema: flatten(flatten(oneOfList[1])['items']), first: true, why: oneItemWhy(oneOfList[0], true) };
  // No usual envelope name, but maybe an envelope all the same ({"Contacts": [{ContactID...}]}, {"contact": {...}}).
  const { found, doubt } = ownId ? {} : unwrapSingle(schema, plural ?? singular);
  if (found !== undefined) return { path: [found.key], schema: found.schema, ...(found.first ? { first: true } : {}), why: found.why };
  const listed =
    plural === undefined || ownId
      ? undefined
      : props.find(([k, v]) => (norm(k) === norm(plural) || norm(k) === norm(lastWord(plural))) && isArraySchema(v) && isObjectSchema(flatten(v)['items']));
  if (listed !== undefined && props.length <= 5)
    return { path: [listed[0]], schema: flatten(flatten(listed[1])['items']), first: true, why: oneItemWhy(listed[0], true) };
  return { path: [], schema: flatten(schema), ...(doubt !== undefined ? { doubt } : {}) };
}

/**
 * A body that is only an envelope: one property, an object without an id of its own (as
 * `{"response": {"result": {"client": {...}}}}`), looked into for the record or records.
 */
function soleWrapper(schema: OpenApiSchema, entity: string): { key: string; schema: OpenApiSchema } | undefined {
  const props = propertiesOf(schema);
  if (props.length !== 1) return undefined;
  const [key, value] = props[0]!;
  const inner = flatten(value);
  if (!isObjectSchema(inner) || propertiesOf(inner).some(([k]) => idLikeness(k, entity) >= 2)) return undefined;
  return { key, schema: inner };
}

/** `{{body.a.b}}`, or `{{body}}`. */
export const bodyAt = (path: string[]): string => `{{${['body', ...path].join('.')}}}`;

/** Every scalar field (name path, schema) of a response schema, a few levels down, arrays skipped. */
export function scalarFields(schema: OpenApiSchema | undefined, depth = 3, prefix: string[] = []): { path: string[]; schema: OpenApiSchema }[] {
  if (schema === undefined || depth === 0) return [];
  const out: { path: string[]; schema: OpenApiSchema }[] = [];
  for (const [k, v] of propertiesOf(schema)) {
    if (isObjectSchema(v)) out.push(...scalarFields(v, depth - 1, [...prefix, k]));
    else if (!isArraySchema(v)) out.push({ path: [...prefix, k], schema: v });
  }
  return out;
}

/** An operation's parameters with the path item's it does not override. */
export function merged(item: PathItem, op: Operation): Parameter[] {
  const own = op.parameters ?? [];
  return [...(item.parameters ?? []).filter((p) => !own.some((o) => o.name === p.name && o.in === p.in)), ...own];
}

/** Singular of an entity name, for envelope keys (`project` for `projects`). */
