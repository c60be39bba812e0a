/**
 * Extracts, from Intercom's official OpenAPI description of REST API 2.14 (MIT licence, as its
 * `info.license` says), a trimmed OpenAPI 3.1 description of the operations the connector and the
 * simulator use: per operation its path, query and Intercom-Version header parameters, its JSON
 * request body, its 200 response and the error.list error response, with the bearer security
 * scheme. The output, connectors/intercom/openapi-2.14.json, is committed and named by the
 * manifest's `vendor_description`: the generic simulator (src/simulator) serves it with the
 * sidecar connectors/intercom/simulator.yaml, and the contract test checks every request the
 * manifest can render against it. Nothing reads the upstream file at run time.
 *
 * OpenAPI 3.0 schemas are converted to JSON Schema draft-07 for ajv: `$ref`s are inlined,
 * `nullable: true` becomes a `"null"` type, and documentation-only keywords (description,
 * title, format...) are dropped (`example` stays: it seeds the simulator's sample records). Formats are dropped on purpose: the description uses
 * `format: date-time` on integer Unix timestamps and says of `website` "the value specified here
 * is not validated".
 *
 * Where the description contradicts itself (a schema rejects a request its own examples
 * document as accepted), OVERRIDES below patch the schema, each citing the passage that forced it.
 *
 * Usage: npx tsx scripts/extract-intercom-openapi.ts [path/to/intercom-openapi-2.14.yaml]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

type Json = Record<string, unknown>;

const SOURCE = process.argv[2] ?? '/work/shared/upstreams/intercom-openapi-2.14.yaml';
// JSON, not YAML: the sandbox parses it at every start (1 ms, where YAML took over a second).
const OUT = fileURLToPath(new URL('../connectors/intercom/openapi-2.14.json', import.meta.url));

/** The operations the simulator serves, as "METHOD /path" keys of the description. */
const OPERATIONS = [
  'GET /me',
  'GET /contacts',
  'POST /contacts',
  'GET /contacts/{contact_id}',
  'PUT /contacts/{contact_id}',
  'POST /contacts/search',
  'GET /contacts/{contact_id}/notes',
  'POST /contacts/{contact_id}/notes',
  'GET /notes/{note_id}',
  'GET /conversations',
  'POST /conversations/search',
  'GET /conversations/{conversation_id}',
  'GET /companies',
  'POST /companies',
  'POST /companies/list',
  'GET /companies/scroll',
  'GET /companies/{company_id}',
  'PUT /companies/{company_id}',
  'GET /teams',
  'GET /teams/{team_id}',
  'GET /admins',
  'GET /admins/{admin_id}',
  'GET /tags',
  'POST /tags',
  'GET /tags/{tag_id}',
  'GET /segments',
  'GET /segments/{segment_id}',
  'GET /internal_articles',
  'POST /internal_articles',
  'GET /internal_articles/{internal_article_id}',
] as const;

/** JSON Schema keywords kept from OpenAPI schemas (and `example`); everything else is documentation. */
const KEEP = new Set([
  'type',
  'properties',
  'required',
  'items',
  'enum',
  'additionalProperties',
  'anyOf',
  'oneOf',
  'allOf',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'uniqueItems',
  'default',
  'not',
  // Kept for sample data: the generic simulator's records start from the vendor's examples.
  'example',
]);

const doc = parse(readFileSync(SOURCE, 'utf8')) as Json;
const components = (doc.components as Json).schemas as Record<string, Json>;

/** OpenAPI 3.0 schema → JSON Schema draft-07, $refs inlined (a recursive ref becomes {}). */
function convert(schema: unknown, seen: string[] = []): Json {
  if (schema === null || typeof schema !== 'object') return {};
  const s = schema as Json;
  if (typeof s.$ref === 'string') {
    const name = s.$ref.replace('#/components/schemas/', '');
    if (seen.includes(name)) return {};
    // The description puts `nullable: true` beside some $refs (conversation_part.assigned_to).
    const target = convert(components[name], [...seen, name]);
    return s.nullable === true ? nullable(target) : target;
  }
  const out: Json = {};
  for (const [k, v] of Object.entries(s)) {
    if (!KEEP.has(k)) continue;
    if (k === 'properties') {
      out.properties = Object.fromEntries(Object.entries(v as Json).map(([p, ps]) => [p, convert(ps, seen)]));
    } else if (k === 'items' || k === 'not' || (k === 'additionalProperties' && typeof v === 'object')) {
      out[k] = convert(v, seen);
    } else if (k === 'anyOf' || k === 'oneOf' || k === 'allOf') {
      out[k] = (v as unknown[]).map((x) => convert(x, seen));
    } else {
      out[k] = v;
    }
  }
  // A one-branch oneOf/anyOf (the description wraps request bodies like that) is the branch.
  for (const k of ['oneOf', 'anyOf'] as const) {
    const branches = out[k] as Json[] | undefined;
    if (branches?.length === 1 && Object.keys(out).length === 1) return branches[0] as Json;
  }
  return s.nullable === true ? nullable(out) : out;
}

/** Let a converted schema accept null (an untyped schema already does). */
function nullable(schema: Json): Json {
  // Branches of a composition each reject null on their own (conversation_part.event_details).
  if (schema.anyOf !== undefined || schema.oneOf !== undefined || schema.allOf !== undefined) return { anyOf: [{ type: 'null' }, schema] };
  const out = { ...schema };
  if (typeof out.type === 'string') out.type = [out.type, 'null'];
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...(out.enum as unknown[]), null];
  return out;
}

/** A request body is an object: the description's `nullable: true` on payload schemas is dropped. */
function requestBody(schema: Json): Json {
  if (Array.isArray(schema.type)) schema.type = 'object';
  return schema;
}

interface Operation {
  operationId: string;
  /** Path params as an object schema (values are URL segments: integer params checked by pattern). */
  path: Json;
  /** Query params as an object schema, validated with type coercion. */
  query: Json;
  /** Request body schema, or null when the operation takes none. */
  body: Json | null;
  /** 200 response schema (tests only). */
  response: Json | null;
}

function paramsSchema(params: Json[], where: 'path' | 'query'): Json {
  const properties: Json = {};
  const required: string[] = [];
  for (const p of params) {
    if (p.in !== where) continue;
    properties[p.name as string] = convert(p.schema);
    if (p.required === true) required.push(p.name as string);
  }
  return { type: 'object', properties, required };
}

const operations: Record<string, Operation> = {};
const paths = doc.paths as Record<string, Record<string, Json>>;
for (const key of OPERATIONS) {
  const [method, path] = key.split(' ') as [string, string];
  const op = paths[path]?.[method.toLowerCase()];
  if (op === undefined) throw new Error(`${key} is not in ${SOURCE}`);
  const params = (op.parameters as Json[] | undefined) ?? [];
  const body = ((op.requestBody as Json | undefined)?.content as Json | undefined)?.['application/json'] as Json | undefined;
  const ok = ((op.responses as Json)['200'] as Json | undefined)?.content as Json | undefined;
  operations[key] = {
    operationId: op.operationId as string,
    path: paramsSchema(params, 'path'),
    query: paramsSchema(params, 'query'),
    body: body === undefined ? null : requestBody(convert(body.schema)),
    response: ok === undefined ? null : convert((ok['application/json'] as Json).schema),
  };
}

function prop(schema: Json | null, name: string): Json {
  const p = (schema?.properties as Json | undefined)?.[name] as Json | undefined;
  if (p === undefined) throw new Error(`override: no property ${name}`);
  return p;
}
const op = (key: (typeof OPERATIONS)[number]): Operation => operations[key] as Operation;

// ---- Overrides: where the description's schemas contradict its own text or examples ----

// GET /contacts declares no query params, yet its description says "You can use pagination to
// limit the number of results returned. The default is `50` results per page" and points to the
// `starting_after` pagination section, whose reference gives per_page "Default is 50. Max is 150."
// (Later revisions of the description say the default is 10; this file follows 2.14's text.)
Object.assign(op('GET /contacts').query.properties as Json, {
  per_page: { type: 'integer', minimum: 1, maximum: 150 },
  starting_after: { type: 'string' },
});

// POST /contacts/{contact_id}/notes types contact_id as an integer, but contact ids are strings
// everywhere else (its own example is 6762f0ad1bb69f9f2193bb62); its request examples also send
// admin_id as a number (991267583) while the schema says string.
(op('POST /contacts/{contact_id}/notes').path.properties as Json).contact_id = { type: 'string' };
Object.assign(prop(op('POST /contacts/{contact_id}/notes').body, 'admin_id'), { type: ['string', 'integer'] });

// Companies: monthly_spend is typed integer but documented as "this will truncate floats. i.e. it
// only allow for whole integers, 155.98 will be truncated to 155", so a float is accepted; and
// custom_attributes is typed as string values while its example sends true and 155.5.
for (const key of ['POST /companies', 'PUT /companies/{company_id}'] as const) {
  Object.assign(prop(op(key).body, 'monthly_spend'), { type: 'number' });
  Object.assign(prop(op(key).body, 'custom_attributes'), { additionalProperties: { type: ['string', 'number', 'boolean', 'null'] } });
}
// POST /companies documents a 400 for an unknown key: body {test: invalid} → "bad 'test' parameter".
(op('POST /companies').body as Json).additionalProperties = false;

// POST /companies/list: 2.14 leaves per_page and order open; the same operation's later reference
// (2.17, listAllCompanies) spells out the checks: "per_page integer, <= 60 ... A value above 60
// returns a 400 error with code parameter_invalid" and order "Any other value [than asc or desc]
// returns a 400 error with code parameter_invalid".
Object.assign(op('POST /companies/list').query.properties as Json, {
  per_page: { type: 'integer', minimum: 1, maximum: 60 },
  order: { type: 'string', enum: ['asc', 'desc'] },
});

// POST /tags: a body with name + companies matches three of the four oneOf branches (they differ
// only by required keys), so oneOf would reject the documented "tag companies" example.
const tagsBody = op('POST /tags').body as Json;
tagsBody.anyOf = tagsBody.oneOf;
delete tagsBody.oneOf;

// POST /contacts/search, POST /conversations/search: a multiple-filter query's value is oneOf
// "an array of multiple-filter requests" (recursive, so {} items once $refs are inlined) and "an
// array of single filters"; an array of single filters, the description's own AND example, then
// matches both branches and oneOf would reject it.
for (const key of ['POST /contacts/search', 'POST /conversations/search'] as const) {
  const multiple = (prop(op(key).body, 'query').oneOf as Json[])[1] as Json;
  const value = prop(multiple, 'value');
  value.anyOf = value.oneOf;
  delete value.oneOf;
}

// ---- The trimmed description: OpenAPI 3.1 (its schemas are JSON Schema, `type: [x, "null"]` included) ----

const versions = (components.intercom_version as Json).enum as string[];
const outPaths: Record<string, Json> = {};
for (const [key, o] of Object.entries(operations)) {
  const [method, path] = key.split(' ') as [string, string];
  const parameters: Json[] = [{ name: 'Intercom-Version', in: 'header', required: false, schema: { type: 'string', enum: versions } }];
  for (const where of ['path', 'query'] as const) {
    const schema = o[where];
    const required = new Set((schema.required as string[] | undefined) ?? []);
    for (const [name, ps] of Object.entries((schema.properties ?? {}) as Json))
      parameters.push({ name, in: where, required: where === 'path' || required.has(name), schema: ps });
  }
  outPaths[path] ??= {};
  (outPaths[path] as Json)[method.toLowerCase()] = {
    operationId: o.operationId,
    parameters,
    ...(o.body === null ? {} : { requestBody: { required: true, content: { 'application/json': { schema: o.body } } } }),
    responses: {
      '200': { description: 'OK', content: { 'application/json': { schema: o.response ?? {} } } },
      '4XX': { $ref: '#/components/responses/Error' },
    },
  };
}
const trimmed = {
  openapi: '3.1.0',
  info: {
    title: 'Intercom API (trimmed extract)',
    version: '2.14',
    description: `Generated by scripts/extract-intercom-openapi.ts from Intercom's OpenAPI description 2.14 (intercom-openapi-2.14.yaml, github.com/intercom/Intercom-OpenAPI): the ${Object.keys(operations).length} operations Switchboard uses, $refs inlined, schemas converted to JSON Schema, and the overrides the script lists where the description contradicts its own text. Do not edit by hand.`,
    license: (doc.info as Json).license,
  },
  servers: doc.servers,
  security: [{ bearerAuth: [] }],
  paths: outPaths,
  components: {
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
    responses: { Error: { description: 'An error.list', content: { 'application/json': { schema: convert(components.error) } } } },
  },
};
writeFileSync(OUT, `${JSON.stringify(trimmed, null, 1)}\n`);
console.log(`wrote ${Object.keys(operations).length} operations to ${OUT}`);
