/**
 * OpenAPI 3.0/3.1 schemas (already dereferenced) → the JSON Schema (draft-07) the manifest's
 * params and records use: `nullable` becomes a null type, 3.0's boolean exclusive bounds become
 * numbers, allOf parts are merged, and only keywords ajv's strict mode knows are kept (no
 * `example`, `readOnly`, `x-*`), with formats limited to the ones ajv-formats validates.
 */
import { shortText } from './scaffold.ts';

export type OpenApiSchema = Record<string, unknown>;
export type JsonSchema = Record<string, unknown>;

const FORMATS = new Set([
  'date',
  'time',
  'date-time',
  'duration',
  'uri',
  'uri-reference',
  'uri-template',
  'url',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'regex',
  'uuid',
  'byte',
  'int32',
  'int64',
  'float',
  'double',
  'password',
  'binary',
]);
const COPY = ['minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'minItems', 'maxItems', 'uniqueItems', 'multipleOf'] as const;

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** allOf parts merged into one schema (properties and required united); other keys of `s` kept. */
export function flatten(s: unknown, seen = new Set<unknown>()): OpenApiSchema {
  if (!isObj(s)) return {};
  if (seen.has(s)) return {};
  if (!Array.isArray(s['allOf'])) return s;
  seen.add(s);
  const { allOf, ...rest } = s as { allOf: unknown[] } & OpenApiSchema;
  const out: OpenApiSchema = { ...rest };
  const properties: Record<string, unknown> = { ...(isObj(rest['properties']) ? rest['properties'] : {}) };
  const required = new Set<string>(Array.isArray(rest['required']) ? (rest['required'] as string[]) : []);
  for (const part of allOf) {
    const p = flatten(part, seen);
    for (const [k, v] of Object.entries(p)) {
      if (k === 'properties' && isObj(v)) Object.assign(properties, v);
      else if (k === 'required' && Array.isArray(v)) for (const r of v) required.add(String(r));
      else if (!(k in out)) out[k] = v;
    }
  }
  seen.delete(s);
  if (Object.keys(properties).length > 0) {
    out['properties'] = properties;
    out['type'] ??= 'object';
  }
  if (required.size > 0) out['required'] = [...required];
  return out;
}

/** The JSON Schema `type` of an OpenAPI schema, with null when nullable (3.0) or listed (3.1). */
function typeOf(s: OpenApiSchema, forceNull: boolean): unknown {
  const raw = s['type'];
  const types = Array.isArray(raw) ? raw.map(String) : typeof raw === 'string' ? [raw] : isObj(s['properties']) ? ['object'] : [];
  if (types.length === 0) return undefined;
  if ((s['nullable'] === true || forceNull) && !types.includes('null')) types.push('null');
  return types.length === 1 ? types[0] : types;
}

export interface ConvertOptions {
  /** Levels of nested object properties kept; deeper objects keep their type only. */
  depth: number;
  /** Every type also allows null (records: vendors leave fields out or null them more than they say). */
  loose?: boolean;
  /** Keep `required` of nested objects (params and bodies: yes; records: no). */
  required?: boolean;
  /** An array's items are a level too (bodies: an array of objects of arrays... is capped like nested objects). */
  itemsNest?: boolean;
}

/** One OpenAPI schema as manifest JSON Schema. */
export function toJsonSchema(input: unknown, o: ConvertOptions, seen = new Set<unknown>()): JsonSchema {
  if (!isObj(input) || seen.has(input)) return {};
  const s = flatten(input);
  // An alternative that is only the empty string is Stripe's "unset" marker (metadata: {...} | ""): not a type of its own.
  const unset = (a: unknown): boolean => isObj(a) && Array.isArray(a['enum']) && a['enum'].length === 1 && a['enum'][0] === '' && !isObj(a['properties']);
  const listed = (s['oneOf'] ?? s['anyOf']) as unknown;
  const alternatives = Array.isArray(listed) && listed.length > 1 && listed.some(unset) ? listed.filter((a) => !unset(a)) : listed;
  if (Array.isArray(alternatives) && alternatives.length === 1)
    return toJsonSchema(
      {
        ...flatten(alternatives[0]),
        ...(s['nullable'] ? { nullable: true } : {}),
        ...(typeof s['description'] === 'string' ? { description: s['description'] } : {}),
      },
      o,
      seen,
    );
  if (Array.isArray(alternatives)) {
    // Alternatives of one primitive type collapse to it; anything else accepts any value.
    const kinds = new Set(alternatives.map((a) => (isObj(a) ? flatten(a)['type'] : undefined)));
    const description = shortText(s['description']);
    if (kinds.size === 1 && typeof [...kinds][0] === 'string' && [...kinds][0] !== 'object') {
      return {
        ...toJsonSchema({ ...flatten(alternatives[0]), ...(s['nullable'] ? { nullable: true } : {}) }, o, seen),
        ...(description ? { description } : {}),
      };
    }
    // Alternatives of several primitive types (GitHub's title: string or integer) are a type union.
    const prims = [...kinds].filter((k): k is string => typeof k === 'string' && ['string', 'integer', 'number', 'boolean'].includes(k));
    if (kinds.size > 1 && prims.length === kinds.size) {
      const nullable = s['nullable'] === true || alternatives.some((a) => isObj(a) && flatten(a)['nullable'] === true) || o.loose === true;
      return { type: nullable ? [...prims, 'null'] : prims, ...(description ? { description } : {}) };
    }
    return description ? { description } : {};
  }
  seen.add(input);
  const out: JsonSchema = {};
  const type = typeOf(s, o.loose === true);
  if (type !== undefined) out['type'] = type;
  if (Array.isArray(s['enum'])) {
    const values = s['enum'].filter((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v));
    if (values.length > 0)
      out['enum'] = Array.isArray(out['type']) && (out['type'] as string[]).includes('null') && !values.includes(null) ? [...values, null] : values;
  }
  if (typeof s['format'] === 'string' && FORMATS.has(s['format'])) out['format'] = s['format'];
  for (const k of COPY)
    if (typeof s[k] === 'number' || (k === 'pattern' && typeof s[k] === 'string') || (k === 'uniqueItems' && typeof s[k] === 'boolean')) out[k] = s[k];
  // 3.0: exclusiveMinimum: true qualifies minimum; 3.1: a number.
  for (const [ex, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (s[ex] === true && typeof s[bound] === 'number') {
      out[ex] = s[bound];
      delete out[bound];
    } else if (typeof s[ex] === 'number') out[ex] = s[ex];
  }
  const description = shortText(s['description']);
  if (description !== undefined) out['description'] = description;
  if (s['default'] !== undefined && o.loose !== true && ['string', 'number', 'boolean'].includes(typeof s['default'])) out['default'] = s['default'];
  const types = Array.isArray(out['type']) ? (out['type'] as string[]) : [out['type']];
  if (types.includes('array') && isObj(s['items'])) {
    // The items of an array are at the array's own level: an array param of objects keeps its
    // items' fields and their required list (GitHub's issue_field_values: [{field_id, value}]).
    const items = toJsonSchema(s['items'], { ...o, loose: false, ...(o.itemsNest ? { depth: o.depth - 1 } : {}) }, seen);
    if (Object.keys(items).length > 0) out['items'] = items;
  }
  if (types.includes('object') && isObj(s['properties']) && o.depth > 0) {
    const props: Record<string, JsonSchema> = {};
    for (const [k, v] of Object.entries(s['properties'])) props[k] = toJsonSchema(v, { ...o, depth: o.depth - 1 }, seen);
    out['properties'] = props;
    if (o.required && Array.isArray(s['required']) && s['required'].length > 0)
      out['required'] = (s['required'] as unknown[]).map(String).filter((r) => r in props);
  }
  // A map's value schema (HubSpot's properties: {[name]: string}); at the last level only a scalar one.
  if (types.includes('object') && isObj(s['additionalProperties'])) {
    const values = toJsonSchema(s['additionalProperties'], { ...o, depth: Math.max(o.depth - 1, 0) }, seen);
    const valueTypes = ([] as unknown[]).concat(values['type'] ?? []);
    const scalar = valueTypes.length > 0 && valueTypes.every((t) => t !== 'object' && t !== 'array');
    if (Object.keys(values).length > 0 && (o.depth > 0 || scalar)) out['additionalProperties'] = values;
  }
  seen.delete(input);
  return out;
}

/** Properties of an object schema (allOf merged), in order; readOnly ones left out when asked. */
export function propertiesOf(schema: unknown, opts: { writable?: boolean } = {}): [string, OpenApiSchema][] {
  const s = flatten(schema);
  if (!isObj(s['properties'])) return [];
  return Object.entries(s['properties'])
    .map(([k, v]) => [k, flatten(v)] as [string, OpenApiSchema])
    .filter(([, v]) => !(opts.writable && v['readOnly'] === true));
}

export function isObjectSchema(schema: unknown): boolean {
  const s = flatten(schema);
  return s['type'] === 'object' || isObj(s['properties']);
}

export function isArraySchema(schema: unknown): boolean {
  const s = flatten(schema);
  return s['type'] === 'array' || (Array.isArray(s['type']) && (s['type'] as unknown[]).includes('array'));
}

/** How many properties a converted schema declares, at every level (array items and map values included). */
export function propertyCount(s: unknown): number {
  if (!isObj(s)) return 0;
  const own = isObj(s['properties']) ? Object.values(s['properties']) : [];
  return own.length + own.reduce((n: number, v) => n + propertyCount(v), 0) + propertyCount(s['items']) + propertyCount(s['additionalProperties']);
}

/**
 * `toJsonSchema` at the deepest level, at most `o.depth`, whose result declares at most
 * `maxProperties` properties in all: a small nested value keeps its whole shape, a body that nests
 * whole records keeps its first levels and leaves the deeper values typed `object`.
 */
export function toJsonSchemaWithin(input: unknown, o: ConvertOptions, maxProperties: number): { schema: JsonSchema; depth: number } {
  let schema = toJsonSchema(input, o);
  let depth = o.depth;
  while (depth > 1 && propertyCount(schema) > maxProperties) schema = toJsonSchema(input, { ...o, depth: --depth });
  return { schema, depth };
}
