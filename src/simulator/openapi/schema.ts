/** Reading an OpenAPI description's schemas: properties, envelopes, list arrays, cursors, examples. */
import type { Description, Json, Operation, RequestProblem } from '../description.ts';
import { clone } from '../core/values.ts';

export const ENVELOPE_KEYS = ['data', 'result', 'record', 'item', 'results', 'items', 'resource'];

/**
 * A schema's properties, allOf branches merged and, of oneOf/anyOf branches, the one with the most
 * properties (e.g. a full record over its deleted or partial form).
 */
export function propertiesOf(d: Description, schema: Json | undefined, depth = 0): Record<string, Json> {
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

/** An array schema, also when it may be null as OpenAPI 3.1 writes it (`type: [array, "null"]`). */
export const isArraySchema = (d: Description, s: Json | undefined): boolean => {
  const type = s === undefined ? undefined : d.resolve(s).type;
  return type === 'array' || (Array.isArray(type) && type.includes('array'));
};

/** `tickets` → `ticket`, `companies` → `company`: the key a record of the resource is wrapped in. */
export function singularOf(name: string): string {
  if (/ies$/.test(name)) return name.replace(/ies$/, 'y');
  if (/(ss|x|ch|sh)es$/.test(name)) return name.replace(/es$/, '');
  return name.replace(/s$/, '');
}

/**
 * The envelope key of a single-record body (`{data: {...}}`, a vendor's `{ticket: {...}}`), or
 * undefined for a bare record; a dotted path when envelopes nest, under one-key wrappers or an
 * envelope holding no record of its own (`{response: {result: {client: {...}}}}`:
 * `response.result.client`).
 */
export function envelopeOf(d: Description, schema: Json | undefined, resource?: string, depth = 0): string | undefined {
  const props = propertiesOf(d, schema);
  const keys = Object.keys(props);
  // The resource's singular in any case too: {"Customer": {...}, "time"} for the resource customer.
  const singular = resource === undefined ? undefined : singularOf(resource);
  const named = singular === undefined ? undefined : (keys.find((k) => k === singular) ?? keys.find((k) => k.toLowerCase() === singular.toLowerCase()));
  const candidates = named === undefined ? ENVELOPE_KEYS : [...ENVELOPE_KEYS, named];
  const key = candidates.find((k) => props[k] !== undefined && !isArraySchema(d, props[k]) && d.resolve(props[k]).type !== 'string');
  const inner = (k: string): string | undefined => {
    if (depth >= 3 || Object.keys(propertiesOf(d, props[k])).some((f) => /^(id|gid|uuid)$/.test(f))) return undefined;
    const found = envelopeOf(d, props[k], resource, depth + 1);
    return found === undefined ? undefined : `${k}.${found}`;
  };
  if (key !== undefined && keys.length <= 3) return inner(key) ?? key;
  return keys.length === 1 && d.resolve(props[keys[0]!]).type === 'object' ? inner(keys[0]!) : undefined;
}

/**
 * The plural key of a single-record body that holds the record as the one item of an array
 * (`{"Invoices": [{...}]}` for resource Invoices), or undefined. With the record's own field
 * names, a usual envelope key holding such an array counts too when its items declare one of them
 * (`{data: [{Last_Name, ...}], info}`; not `{data: [{code, details, status}]}`, a write's outcome).
 */
export function listedEnvelopeOf(
  d: Description,
  schema: Json | undefined,
  resource: string | undefined,
  recordFields?: ReadonlySet<string>,
): string | undefined {
  if (resource === undefined) return undefined;
  const props = propertiesOf(d, schema);
  const loose = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (Object.keys(props).length > 5 || ['id', 'gid', 'uuid'].some((k) => props[k] !== undefined)) return undefined;
  const itemFields = (k: string): string[] => (isArraySchema(d, props[k]) ? Object.keys(propertiesOf(d, d.resolve(props[k]).items as Json)) : []);
  return (
    Object.keys(props).find((k) => loose(k) === loose(resource.split('/').at(-1) ?? resource) && itemFields(k).length > 0) ??
    (recordFields === undefined ? undefined : ENVELOPE_KEYS.find((k) => props[k] !== undefined && itemFields(k).some((f) => recordFields.has(f))))
  );
}

/**
 * The array property of a list body, or '' when the body is the array itself: one named like a
 * list or the resource, else (of several) the one whose items share most fields with the record
 * (`recordFields`), never a `_links` array, else the first.
 */
export function listKeyOf(d: Description, schema: Json | undefined, resource: string, recordFields: readonly string[] = [], depth = 0): string | undefined {
  if (schema === undefined) return undefined;
  if (isArraySchema(d, schema)) return '';
  const props = propertiesOf(d, schema);
  const named = [...ENVELOPE_KEYS, resource].find((k) => isArraySchema(d, props[k]));
  if (named !== undefined) return named;
  const arrays = Object.keys(props).filter((k) => isArraySchema(d, props[k]));
  const wanted = new Set(recordFields);
  // Without the record's fields: an array whose items have an id (records), not one of {by, direction} (a sort order).
  const score = (k: string): number => {
    const fields = Object.keys(propertiesOf(d, d.resolve(props[k]).items as Json));
    return k.startsWith('_')
      ? -1
      : wanted.size > 0
        ? fields.filter((f) => wanted.has(f)).length
        : fields.some((f) => /^(id|gid|uuid)$|(_id|Id|ID)$/.test(f))
          ? 1
          : 0;
  };
  if (arrays.length > 0) return arrays.length < 2 ? arrays[0] : [...arrays].sort((a, b) => score(b) - score(a))[0];
  // One level down, in an envelope object whose array is named for the resource ({status, meta: {components: [...], cursor}}).
  for (const [k, v] of Object.entries(props)) if (isArraySchema(d, propertiesOf(d, v)[resource])) return `${k}.${resource}`;
  // Under one-key wrappers ({response: {result: {clients: [...], page, pages}}}).
  const only = Object.keys(props);
  if (only.length === 1 && depth < 3 && d.resolve(props[only[0]!]).type === 'object') {
    const inner = listKeyOf(d, props[only[0]!], resource, recordFields, depth + 1);
    if (inner !== undefined && inner !== '') return `${only[0]}.${inner}`;
  }
  return undefined;
}

/** pointerOfProperty along a dotted path (a list key one level down: `meta.components`). */
export function pointerOfPath(d: Description, pointer: string, path: string): string | undefined {
  let at: string | undefined = pointer;
  for (const prop of path.split('.')) at = at === undefined ? undefined : pointerOfProperty(d, at, prop);
  return at;
}

/** Dotted path to the field of a list body that carries the next cursor (next_page.offset, pages.next.starting_after). */
export function nextCursorPath(d: Description, schema: Json | undefined, cursorParam: string): string | undefined {
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

/** Put messages and codes into a sampled error body wherever it has room for them. */
export function fillError(body: unknown, p: RequestProblem, code: string): unknown {
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

/**
 * The headers an operation's success response declares, each with its example (the header's own,
 * else its schema's; a header with neither is left out): SendGrid's mail send answers 202 with the
 * message's id in X-Message-Id and no body.
 */
export function successHeaders(d: Description, op: Operation): Record<string, string> {
  const responses = (d.resolve<Json>(((d.doc.paths as Json)[op.path] as Json)?.[op.method.toLowerCase()]) as Json | undefined)?.responses as Json | undefined;
  const response = d.resolve<Json>(responses?.[String(op.successStatus)]);
  const out: Record<string, string> = {};
  for (const [name, h] of Object.entries((response?.headers ?? {}) as Record<string, Json>)) {
    const header = d.resolve<Json>(h);
    const example = header?.example ?? d.resolve<Json>(header?.schema as Json | undefined)?.example;
    if (example !== undefined && example !== null && typeof example !== 'object') out[name.toLowerCase()] = String(example);
  }
  return out;
}

/** Whether an operation's success response declares a `Location` header (a create answered 201 with the new record's URL). */
export function declaresLocation(d: Description, op: Operation): boolean {
  const responses = (d.resolve<Json>(((d.doc.paths as Json)[op.path] as Json)?.[op.method.toLowerCase()]) as Json | undefined)?.responses as Json | undefined;
  const response = d.resolve<Json>(responses?.[String(op.successStatus)]);
  return Object.keys((response?.headers ?? {}) as Json).some((name) => name.toLowerCase() === 'location');
}

/** The example of an operation's success response (`example`, or the first of `examples`), if the description gives one. */
export function exampleOf(d: Description, op: Operation): unknown {
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

/** The path of the description's first server URL without its trailing slash ('' for none or a bare host). */
export function serverBasePath(doc: Json): string {
  const url = ((doc.servers as { url?: string }[] | undefined) ?? [])[0]?.url;
  if (url === undefined) return '';
  try {
    return new URL(url.replace(/\{[^}]*\}/g, 'x'), 'http://localhost').pathname.replace(/\/$/, '');
  } catch {
    return '';
  }
}

/** Pointer to a named property of the schema at `pointer` (through $refs and allOf). */
export function pointerOfProperty(d: Description, pointer: string, prop: string): string | undefined {
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
    // The first alternative of anyOf/oneOf, as propertiesOf reads it (e.g. customer | deleted_customer).
    for (const key of ['anyOf', 'oneOf']) {
      if (Array.isArray(s[key]) && (s[key] as unknown[]).length > 0) return find(`${p}/${key}/0`, depth + 1);
    }
    return undefined;
  };
  return find(pointer, 0);
}
