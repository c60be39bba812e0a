/**
 * An OpenAPI 3.x description as the generic simulator and the contract test use it: loaded from
 * YAML or JSON (external `$ref`s bundled in by @apidevtools/json-schema-ref-parser), its
 * operations listed with their path templates, and every request checked against it with ajv:
 * path, query and header parameters (text, coerced to the declared types), the JSON body, and
 * the presence of the credentials its security requirements name.
 *
 * Schemas are not copied or converted: the whole description is added to ajv once and each
 * operation's schemas are compiled as `$ref`s into it, so recursive components work and
 * OpenAPI's `nullable` is understood by ajv itself. Formats are not enforced (vendors use
 * `format: date-time` on Unix-second integers and name formats ajv does not know).
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { CORE_SCHEMA, load } from 'js-yaml';
import { parse as parseYaml } from 'yaml';

export type Json = Record<string, unknown>;

export const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  /** JSON pointer of the schema inside the description. */
  schemaRef: string | undefined;
  /** `style: deepObject` (e.g. `created[gt]=1`, `expand[]=a`): bracketed keys make one value. */
  deepObject?: boolean;
}

export interface Operation {
  /** "GET /projects/{project_gid}" */
  key: string;
  method: string;
  path: string;
  operationId: string | undefined;
  params: Parameter[];
  /** Pointer of the request body schema (JSON, else form-encoded); undefined when the operation takes none. */
  bodyRef: string | undefined;
  /** How the body is encoded: JSON, or application/x-www-form-urlencoded with deepObject keys (as some vendors take them). */
  bodyEncoding?: 'json' | 'form';
  bodyRequired: boolean;
  /** Pointer of the success (2xx) JSON response schema, and its status. */
  responseRef: string | undefined;
  successStatus: number;
  /** Pointer of the error response schema (400, 4XX or default), for the vendor's error shape. */
  errorRef: string | undefined;
  /** Alternatives of security requirements (each a list of scheme names); [] = no auth. */
  security: string[][];
  /** Matches a request path; groups are the path params in order. */
  regex: RegExp;
  pathParams: string[];
  /** Static segments count, to prefer /contacts/search over /contacts/{id}. */
  specificity: number;
}

/** One problem with a request, in terms a vendor error body can carry. */
export interface RequestProblem {
  status: number;
  /** missing | invalid | unknown | unauthorized | not_found | method_not_allowed */
  code: string;
  message: string;
  /** The parameter or body field at fault, dotted (companies[0].name). */
  field?: string;
}

const escapePointer = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** A YAML description's value from js-yaml (YAML 1.2 core, several times faster); text it refuses gets `yaml`'s error. */
function yamlValue(text: string): unknown {
  try {
    return load(text, { schema: CORE_SCHEMA });
  } catch {
    return parseYaml(text, { maxAliasCount: -1 }) as unknown;
  }
}

/** Load a description (YAML or JSON) with every external $ref bundled into the one document. */
export async function loadDescription(file: string): Promise<Json> {
  const text = readFileSync(file, 'utf8');
  const doc = (file.endsWith('.json') ? JSON.parse(text) : yamlValue(text)) as Json;
  if (typeof doc.openapi !== 'string' || !doc.openapi.startsWith('3')) throw new Error(`${file} is not an OpenAPI 3.x description (no "openapi: 3..." field)`);
  // Only a description with $refs to other files needs bundling.
  if (!/\$ref['"]?\s*:\s*['"]?[^#'"\s]/.test(text)) return doc;
  const { default: $RefParser } = await import('@apidevtools/json-schema-ref-parser');
  return (await $RefParser.bundle(file, doc as never, {})) as unknown as Json;
}

/** Load a description synchronously when it has no external $refs (vendored extracts, tests). */
export function loadDescriptionSync(file: string): Json {
  const text = readFileSync(file, 'utf8');
  return (file.endsWith('.json') ? JSON.parse(text) : yamlValue(text)) as Json;
}

export class Description {
  readonly doc: Json;
  readonly operations: Operation[];
  private readonly bodyAjv: Ajv;
  private readonly textAjv: Ajv;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(doc: Json) {
    this.doc = doc;
    // Bodies are JSON: types must match. Parameters are text: "5" is the integer 5.
    const options = { strict: false, allErrors: false, validateSchema: false, validateFormats: false } as const;
    this.bodyAjv = new Ajv(options);
    this.textAjv = new Ajv({ ...options, coerceTypes: 'array' });
    const forAjv = nullableForAjv(idsOutOfExamples(structuredClone(doc)));
    this.bodyAjv.addSchema(forAjv, 'openapi');
    this.textAjv.addSchema(forAjv, 'openapi');
    this.operations = this.listOperations();
  }

  /** Follow an OpenAPI `$ref` (parameters, request bodies, responses) inside the document. */
  resolve<T = Json>(value: unknown): T {
    let v = value as Json;
    for (let hops = 0; v !== null && typeof v === 'object' && typeof v.$ref === 'string' && hops < 20; hops++) v = this.at(v.$ref);
    return v as T;
  }

  /** The value at a local JSON pointer ("#/components/schemas/X"). */
  at(pointer: string): Json {
    let v: unknown = this.doc;
    for (const raw of pointer.replace(/^#\/?/, '').split('/')) {
      if (raw === '') continue;
      const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      v = v !== null && typeof v === 'object' ? (v as Json)[part] : undefined;
    }
    return (v ?? {}) as Json;
  }

  /** The schema at a pointer, with $refs followed (for reading `properties`, not for validating). */
  schemaAt(pointer: string | undefined): Json | undefined {
    if (pointer === undefined) return undefined;
    return this.resolve(this.at(pointer));
  }

  /** Where a JSON schema lives: the schema's own $ref when it is one, else its pointer. */
  private schemaPointer(owner: string, key = 'schema'): string | undefined {
    const obj = this.resolve(this.at(owner));
    const schema = obj[key] as Json | undefined;
    if (schema === undefined) return undefined;
    return typeof schema.$ref === 'string' ? schema.$ref : `${this.pointerOf(obj, owner)}/${key}`;
  }

  /** The pointer of an object reached by following $refs from `owner`. */
  private pointerOf(obj: Json, owner: string): string {
    let p = owner;
    let v = this.at(p);
    for (let hops = 0; typeof v.$ref === 'string' && hops < 20; hops++) {
      p = v.$ref;
      v = this.at(p);
    }
    void obj;
    return p;
  }

  private jsonContentPointer(owner: string): string | undefined {
    const p = this.pointerOf(this.at(owner), owner);
    const content = this.at(p).content as Json | undefined;
    if (content === undefined) return undefined;
    const type = Object.keys(content).find((t) => /json/i.test(t)) ?? Object.keys(content).find((t) => t === '*/*');
    if (type === undefined) return undefined;
    return this.schemaPointer(`${p}/content/${escapePointer(type)}`);
  }

  /** The request body's schema: JSON when the operation takes JSON, else a form-encoded one. */
  private bodyOf(owner: string | undefined): { bodyRef: string | undefined; bodyEncoding?: 'json' | 'form' } {
    if (owner === undefined) return { bodyRef: undefined };
    const json = this.jsonContentPointer(owner);
    if (json !== undefined) return { bodyRef: json, bodyEncoding: 'json' };
    const p = this.pointerOf(this.at(owner), owner);
    const content = (this.at(p).content ?? {}) as Json;
    const form = Object.keys(content).find((t) => /^application\/x-www-form-urlencoded/i.test(t));
    if (form === undefined) return { bodyRef: undefined };
    return { bodyRef: this.schemaPointer(`${p}/content/${escapePointer(form)}`), bodyEncoding: 'form' };
  }

  private listOperations(): Operation[] {
    const ops: Operation[] = [];
    const paths = (this.doc.paths ?? {}) as Record<string, Json>;
    const globalSecurity = (this.doc.security ?? []) as Json[];
    for (const [path, item] of Object.entries(paths)) {
      const base = `#/paths/${escapePointer(path)}`;
      const shared = (item.parameters ?? []) as unknown[];
      for (const method of METHODS) {
        const op = item[method] as Json | undefined;
        if (op === undefined) continue;
        const opPointer = `${base}/${method}`;
        const params = new Map<string, Parameter>();
        const collect = (list: unknown[], listPointer: string): void => {
          list.forEach((_, i) => {
            const pp = this.pointerOf(this.at(`${listPointer}/${i}`), `${listPointer}/${i}`);
            const p = this.at(pp);
            const inn = p.in as Parameter['in'];
            params.set(`${inn}:${String(p.name)}`, {
              name: String(p.name),
              in: inn,
              required: p.required === true || inn === 'path',
              schemaRef: this.schemaPointer(pp),
              ...(p.style === 'deepObject' ? { deepObject: true } : {}),
            });
          });
        };
        collect(shared, `${base}/parameters`);
        collect((op.parameters ?? []) as unknown[], `${opPointer}/parameters`);
        const responses = (op.responses ?? {}) as Json;
        // A numeric 2xx, else a range (Microsoft Graph's "2XX": 201 for a POST, 200 otherwise).
        const success =
          Object.keys(responses)
            .filter((s) => /^2\d\d$/.test(s))
            .sort()[0] ?? (responses['2XX'] !== undefined ? '2XX' : undefined);
        const successCode = success === '2XX' ? (method === 'post' ? 201 : 200) : success === undefined ? 200 : Number(success);
        const errorStatus = ['400', '4XX', '422', 'default'].find((s) => responses[s] !== undefined);
        const requestBody = op.requestBody === undefined ? undefined : this.resolve<Json>(op.requestBody);
        const pathParams: string[] = [];
        // A #fragment pseudo-path (several operations on one path told apart by a fragment) matches its path.
        const pattern = path
          .replace(/#.*$/, '')
          .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
          .replace(/\{([^}]+)\}/g, (_, name: string) => {
            pathParams.push(name);
            return '([^/]+)';
          });
        const security = ((op.security as Json[] | undefined) ?? globalSecurity).map((req) => Object.keys(req));
        ops.push({
          key: `${method.toUpperCase()} ${path}`,
          method: method.toUpperCase(),
          path,
          operationId: typeof op.operationId === 'string' ? op.operationId : undefined,
          params: [...params.values()],
          ...this.bodyOf(requestBody === undefined ? undefined : `${opPointer}/requestBody`),
          bodyRequired: requestBody?.required === true,
          responseRef: success === undefined ? undefined : this.jsonContentPointer(`${opPointer}/responses/${success}`),
          successStatus: successCode,
          errorRef: errorStatus === undefined ? undefined : this.jsonContentPointer(`${opPointer}/responses/${errorStatus}`),
          security,
          regex: new RegExp(`^${pattern}/?$`),
          pathParams,
          specificity: path.split('/').filter((s) => s !== '' && !s.startsWith('{')).length,
        });
      }
    }
    // Literal segments win over templated ones: /contacts/search before /contacts/{id}.
    // An operation on a path itself before one on a #fragment pseudo-path of it.
    return ops.sort((a, b) => b.specificity - a.specificity || Number(a.path.includes('#')) - Number(b.path.includes('#')));
  }

  /** The operation a request names, or the problem (404 no path, 405 no such method on it). */
  match(method: string, path: string): { op: Operation; pathParams: Record<string, string> } | RequestProblem {
    let pathKnown = false;
    for (const op of this.operations) {
      const m = op.regex.exec(path);
      if (m === null) continue;
      pathKnown = true;
      if (op.method !== method.toUpperCase()) continue;
      const pathParams: Record<string, string> = {};
      op.pathParams.forEach((name, i) => {
        const raw = m[i + 1] as string;
        try {
          pathParams[name] = decodeURIComponent(raw);
        } catch {
          pathParams[name] = raw;
        }
      });
      return { op, pathParams };
    }
    return pathKnown
      ? { status: 405, code: 'method_not_allowed', message: `${method.toUpperCase()} is not allowed on ${path}` }
      : { status: 404, code: 'not_found', message: `No operation of the description matches ${path}` };
  }

  private validator(ajv: Ajv, pointer: string): ValidateFunction {
    const key = `${ajv === this.textAjv ? 't' : 'b'}${pointer}`;
    let v = this.compiled.get(key);
    if (v === undefined) {
      // Parameters (and form bodies) are validated as property `v` of a holder object, so coercion has a parent to write to.
      v = ajv === this.textAjv ? ajv.compile({ type: 'object', properties: { v: { $ref: `openapi${pointer}` } } }) : ajv.compile({ $ref: `openapi${pointer}` });
      this.compiled.set(key, v);
    }
    return v;
  }

  /** Validate a JSON value against the schema at a pointer; null when valid. */
  validateValue(pointer: string, value: unknown, field?: string): RequestProblem | null {
    const v = this.validator(this.bodyAjv, pointer);
    return v(value) ? null : problemOf(v.errors, field);
  }

  /**
   * Check a request's parameters and body; returns the coerced query and parsed body, or the
   * first problem (400 for a bad parameter or body, 401 when no credential the security
   * requirements name is present, 415 for a body that is not JSON).
   */
  checkRequest(
    op: Operation,
    req: { pathParams: Record<string, string>; query: URLSearchParams; headers: Record<string, string | string[] | undefined>; rawBody: string },
    options: { unknownQuery?: 'reject' | 'ignore'; skipAuth?: boolean; credentialParams?: readonly string[] | undefined } = {},
  ): { query: Json; body: unknown } | RequestProblem {
    const auth = options.skipAuth === true ? null : this.checkAuth(op, req);
    if (auth !== null) return auth;
    const query: Json = {};
    const known = new Set<string>();
    for (const p of op.params) {
      let raw: string | string[] | undefined;
      if (p.in === 'path') raw = req.pathParams[p.name];
      else if (p.in === 'query') {
        known.add(p.name);
        const all = req.query.getAll(p.name).length > 0 ? req.query.getAll(p.name) : req.query.getAll(`${p.name}[]`);
        raw = all.length === 0 ? undefined : all.length === 1 ? all[0] : all;
        if (p.deepObject === true && raw === undefined) {
          // deepObject: created[gt]=1&created[lt]=2 → {gt: "1", lt: "2"}; expand[0]=a → ["a"].
          const nested = deepObjectDecode([...req.query.entries()].filter(([k]) => k.startsWith(`${p.name}[`)))[p.name];
          if (nested !== undefined) {
            const holder: Json = { v: nested };
            const v = p.schemaRef === undefined ? undefined : this.validator(this.textAjv, p.schemaRef);
            if (v !== undefined && !v(holder))
              return problemOf(
                v.errors?.map((e) => ({ ...e, instancePath: e.instancePath.replace(/^\/v/, '') })),
                p.name,
              );
            query[p.name] = holder.v;
            continue;
          }
        }
      } else if (p.in === 'header') raw = req.headers[p.name.toLowerCase()];
      if (raw === undefined) {
        // A parameter that carries the credential (e.g. token) is satisfied by the Authorization header.
        if (p.required && p.in !== 'header' && !(options.credentialParams ?? []).includes(p.name))
          return { status: 400, code: 'missing', message: `${p.name} is a required ${p.in} parameter`, field: p.name };
        continue;
      }
      if (p.schemaRef !== undefined) {
        const holder: Json = { v: raw };
        const schema = this.schemaAt(p.schemaRef);
        // A comma-separated list (style: form, explode: false) for array parameters.
        if (schema?.type === 'array' && typeof raw === 'string') holder.v = raw.split(',');
        const v = this.validator(this.textAjv, p.schemaRef);
        if (!v(holder))
          return problemOf(
            v.errors?.map((e) => ({ ...e, instancePath: e.instancePath.replace(/^\/v/, '') })),
            p.name,
          );
        if (p.in === 'query') query[p.name] = holder.v;
      } else if (p.in === 'query') query[p.name] = raw;
    }
    if (options.unknownQuery === 'reject') {
      // An API key the security requirements carry in the query (`?key=...&token=...`) is a credential, not an unknown parameter.
      for (const name of this.queryKeyNames(op)) known.add(name);
      for (const name of new Set(req.query.keys()))
        if (!known.has(name) && !known.has(name.replace(/\[.*$/, '')))
          return { status: 400, code: 'unknown', message: `unknown query parameter ${name}`, field: name };
    }
    let body: unknown = undefined;
    if (op.bodyRef !== undefined) {
      if (req.rawBody.trim() === '') {
        if (op.bodyRequired) return { status: 400, code: 'missing', message: 'a request body is required' };
      } else {
        const type = String(req.headers['content-type'] ?? '');
        if (op.bodyEncoding === 'form') {
          // A form body is text like a query: its deepObject keys are decoded into one JSON tree,
          // and its values coerced to the declared types ("3" → 3, "true" → true) while validated.
          if (type !== '' && !/^application\/x-www-form-urlencoded/i.test(type))
            return { status: 400, code: 'invalid', message: `Request body must be application/x-www-form-urlencoded, not ${type}` };
          const holder: Json = { v: deepObjectDecode([...new URLSearchParams(req.rawBody).entries()]) };
          const v = this.validator(this.textAjv, op.bodyRef);
          if (!v(holder)) return problemOf(v.errors?.map((e) => ({ ...e, instancePath: e.instancePath.replace(/^\/v/, '') })));
          body = holder.v;
        } else {
          try {
            body = JSON.parse(req.rawBody) as unknown;
          } catch {
            return { status: 400, code: 'invalid', message: 'Request body is not valid JSON' };
          }
          const problem = this.validateValue(op.bodyRef, body);
          if (problem !== null) return problem;
        }
      }
    }
    return { query, body };
  }

  /** The values of the API keys the operation's security schemes name, in a header or the query, as presented. */
  apiKeys(op: Operation, req: { query: URLSearchParams; headers: Record<string, string | string[] | undefined> }): string[] {
    const schemes = ((this.doc.components as Json | undefined)?.securitySchemes ?? {}) as Record<string, Json>;
    const out: string[] = [];
    for (const name of new Set(op.security.flat())) {
      const s = this.resolve(schemes[name]);
      if (s.type !== 'apiKey' || s.in === 'cookie') continue;
      const key = String(s.name ?? '');
      const v = s.in === 'query' ? req.query.get(key) : req.headers[key.toLowerCase()];
      const value = Array.isArray(v) ? v[0] : v;
      if (typeof value === 'string' && value !== '') out.push(value);
    }
    return out;
  }

  /** The query parameter names of the API keys the operation's security requirements name. */
  queryKeyNames(op: Operation): string[] {
    const schemes = ((this.doc.components as Json | undefined)?.securitySchemes ?? {}) as Record<string, Json>;
    return [...new Set(op.security.flat())]
      .map((name) => this.resolve(schemes[name]))
      .flatMap((s) => (s.type === 'apiKey' && s.in === 'query' ? [String(s.name ?? '')] : []));
  }

  /** Whether the credentials of at least one security alternative are present (not checked for validity). */
  checkAuth(op: Operation, req: { query: URLSearchParams; headers: Record<string, string | string[] | undefined> }): RequestProblem | null {
    if (op.security.length === 0 || op.security.some((alt) => alt.length === 0)) return null;
    const schemes = ((this.doc.components as Json | undefined)?.securitySchemes ?? {}) as Record<string, Json>;
    const authz = String(req.headers.authorization ?? '');
    const present = (name: string): boolean => {
      const s = this.resolve(schemes[name]);
      if (s.type === 'apiKey') {
        const key = String(s.name ?? '');
        if (s.in === 'query') return req.query.has(key);
        if (s.in === 'cookie') return new RegExp(`(^|;\\s*)${key}=`).test(String(req.headers.cookie ?? ''));
        return req.headers[key.toLowerCase()] !== undefined;
      }
      if (s.type === 'http') return new RegExp(`^${String(s.scheme ?? 'bearer')}\\s+\\S`, 'i').test(authz);
      // oauth2, openIdConnect: a bearer token.
      return /^bearer\s+\S/i.test(authz);
    };
    if (op.security.some((alt) => alt.every(present))) return null;
    return { status: 401, code: 'unauthorized', message: `credentials required: ${op.security.map((alt) => alt.join(' + ')).join(' or ')}` };
  }
}

/**
 * Decode form or query entries with bracketed keys (OpenAPI `style: deepObject, explode: true`, as
 * qs and Rack write them) into one JSON tree of strings: `metadata[plan]=pro` →
 * `{metadata: {plan: "pro"}}`, `expand[]=a&expand[]=b` → `{expand: ["a", "b"]}`,
 * `items[0][price]=p` → `{items: [{price: "p"}]}` (an object whose keys are 0..n-1 is an array).
 * Repeated plain keys become arrays.
 */
export function deepObjectDecode(entries: Iterable<[string, string]>): Json {
  const root: Json = {};
  for (const [key, value] of entries) {
    const m = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
    const parts = m === null ? [key] : [m[1] as string, ...[...(m[2] as string).matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1] as string)];
    let node: Json = root;
    for (let i = 0; i < parts.length; i++) {
      const last = i === parts.length - 1;
      let part = parts[i] as string;
      if (part === '') {
        // key[] appends: the holder is (or becomes) an array-like object with the next index.
        part = String(Object.keys(node).length);
      }
      if (last) {
        const have = node[part];
        node[part] = have === undefined ? value : Array.isArray(have) ? [...(have as unknown[]), value] : typeof have === 'string' ? [have, value] : have;
      } else {
        if (node[part] === null || typeof node[part] !== 'object' || Array.isArray(node[part])) node[part] = {};
        node = node[part] as Json;
      }
    }
  }
  const arrays = (v: unknown): unknown => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const o = v as Json;
    const keys = Object.keys(o);
    const out = Object.fromEntries(keys.map((k) => [k, arrays(o[k])]));
    return keys.length > 0 && keys.every((k, i) => k === String(i)) ? keys.map((k) => out[k]) : out;
  };
  return Object.fromEntries(Object.entries(root).map(([k, v]) => [k, arrays(v)]));
}

/** Keys whose values are data, not schemas (a property named so is still a schema). */
const DATA_KEYS = new Set(['example', 'examples', 'default']);
const NAME_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'schemas', 'dependentSchemas']);

/**
 * A vendor's example holding a `"$id"` key (a record of its own API) is data, but ajv, reading
 * the whole description as one schema, takes it for a schema id: two such examples make it refuse
 * the description. The copy ajv reads loses the `$id` keys inside examples, defaults and x-
 * extensions (validation never reads them). Mutates and returns the copy it is given.
 */
function idsOutOfExamples(node: unknown, parentKey = ''): Json {
  const strip = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(strip);
    else if (v !== null && typeof v === 'object') {
      delete (v as Json).$id;
      Object.values(v as Json).forEach(strip);
    }
  };
  if (Array.isArray(node)) node.forEach((v) => idsOutOfExamples(v));
  else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node as Json)) {
      if (!NAME_MAPS.has(parentKey) && (DATA_KEYS.has(k) || k.startsWith('x-'))) strip(v);
      else idsOutOfExamples(v, k);
    }
  }
  return node as Json;
}

/**
 * OpenAPI 3.0's `nullable: true` beside no `type` (next to a $ref or allOf) is not JSON Schema
 * ajv accepts: it becomes anyOf [the schema, null]. Mutates and returns the copy it is given.
 */
function nullableForAjv(node: unknown): Json {
  if (Array.isArray(node)) node.forEach(nullableForAjv);
  else if (node !== null && typeof node === 'object') {
    const o = node as Json;
    for (const v of Object.values(o)) nullableForAjv(v);
    if (o.nullable === true && o.type === undefined) {
      const { nullable: _n, ...rest } = o;
      for (const k of Object.keys(o)) delete o[k];
      o.anyOf = [rest, { type: 'null' }];
    } else if (o.nullable === false) delete o.nullable;
  }
  return node as Json;
}

/** An application/x-www-form-urlencoded body as one JSON tree (deepObjectDecode of its entries). */
export function formDecode(raw: string): Json {
  return deepObjectDecode(new URLSearchParams(raw).entries());
}

/** `/companies/0/name` → `companies[0].name`. */
function fieldName(instancePath: string, extra?: string): string {
  const parts = instancePath.split('/').filter((p) => p !== '');
  if (extra !== undefined) parts.push(extra);
  return parts.map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** The most telling ajv error: for anyOf/oneOf failures, the first missing property. */
export function problemOf(errors: ErrorObject[] | null | undefined, prefix?: string): RequestProblem {
  const list = errors ?? [];
  const e = list.find((x) => x.keyword === 'required') ?? list.find((x) => x.keyword !== 'anyOf' && x.keyword !== 'oneOf') ?? list[0];
  const join = (f: string): string => (prefix === undefined ? f : f === '' ? prefix : `${prefix}.${f}`);
  if (e === undefined) return { status: 400, code: 'invalid', message: 'invalid request' };
  if (e.keyword === 'required') {
    const field = join(fieldName(e.instancePath, (e.params as { missingProperty: string }).missingProperty));
    return { status: 400, code: 'missing', message: `${field} is a required parameter.`, field };
  }
  if (e.keyword === 'additionalProperties') {
    const field = join(fieldName(e.instancePath, (e.params as { additionalProperty: string }).additionalProperty));
    return { status: 400, code: 'unknown', message: `bad '${field}' parameter`, field };
  }
  const field = join(fieldName(e.instancePath));
  return field === ''
    ? { status: 400, code: 'invalid', message: `Request ${e.message ?? 'is invalid'}` }
    : { status: 400, code: 'invalid', message: `${field} ${e.message ?? 'is invalid'}`, field };
}
