#!/usr/bin/env node
// Derives an OpenAPI 3.0 extract of HubSpot's CRM API from HubSpot's official Node client,
// @hubspot/api-client (ISC licence, per its package.json). HubSpot publishes its OpenAPI specs in
// HubSpot/HubSpot-public-api-spec-collection and generates lib/codegen/** of the client from them
// with OpenAPI Generator (typescript). The generated code keeps, per operation, the path, the
// method, the path/query/form parameters with their serialisation types and formats, whether
// each is required, the JSON body's model, the response model per status ("0" = default) and the
// security scheme applied; per model, attributeTypeMap (names, types, formats), the required
// properties (the .d.ts's `'name':` vs `'name'?:`), nullability (`T | null`) and enums. This
// script reads exactly that back into OpenAPI for the operations the connector uses:
//
//   crm/{contacts,companies,deals,tickets}: BasicApi getPage, getById, create, update, archive;
//                                           SearchApi doSearch
//   oauth: TokensApi create (POST /oauth/v1/token); the authorize URL from
//          lib/src/discovery/oauth/OauthDiscovery.js (the client's hand-written helper)
//
// What the generated client does not carry is not invented: descriptions, examples, scopes and
// operation ids (named here `<object>-<Api>-<method>`). Get the package and run:
//
//   d=$(mktemp -d) && (cd "$d" && npm pack @hubspot/api-client@14.0.1 && tar xzf hubspot-api-client-14.0.1.tgz)
//   node connectors/hubspot/derive.mjs "$d/package" > connectors/hubspot/openapi.yaml
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';

const pkg = process.argv[2];
if (!pkg || !existsSync(join(pkg, 'lib/codegen'))) {
  process.stderr.write('usage: derive.mjs <path of the unpacked @hubspot/api-client package>\n');
  process.exit(2);
}
const read = (...p) => readFileSync(join(pkg, ...p), 'utf8');
const fail = (msg) => {
  throw new Error(`derive.mjs: ${msg}`);
};

const OBJECTS = ['contacts', 'companies', 'deals', 'tickets'];
const USED = { BasicApi: ['getPage', 'getById', 'create', 'update', 'archive'], SearchApi: ['doSearch'] };

/** Split a generated API file into its request-factory and response-processor methods. */
function methodsOf(js, cls) {
  const start = js.indexOf(`class ${cls} extends`) >= 0 ? js.indexOf(`class ${cls} extends`) : js.indexOf(`class ${cls} {`);
  if (start < 0) fail(`no class ${cls}`);
  const end = js.indexOf(`exports.${cls} = ${cls};`, start);
  const body = js.slice(start, end);
  const out = new Map();
  for (const m of body.matchAll(/\n {4}(\w+)\(([^)]*)\) \{\n([\s\S]*?)\n {4}\}(?=\n)/g)) out.set(m[1], { args: m[2], code: m[3] });
  return out;
}

/** A generated serialisation type ("number"/"int32", "Array<string>", "{ [key: string]: T; }", a model) as a schema. */
function schemaOf(type, format, ctx) {
  const t = type.trim();
  const nullable = /\|\s*null$/.exec(t);
  if (nullable) return { ...schemaOf(t.slice(0, nullable.index), format, ctx), nullable: true };
  const arr = /^Array<(.+)>$/.exec(t);
  if (arr) return { type: 'array', items: schemaOf(arr[1], '', ctx) };
  const map = /^\{\s*\[key: string\]:\s*(.+?);?\s*\}$/.exec(t);
  if (map) return { type: 'object', additionalProperties: schemaOf(map[1], '', ctx) };
  if (t === 'string') return format ? { type: 'string', format } : { type: 'string' };
  if (t === 'number') return format === 'int32' || format === 'int64' ? { type: 'integer', format } : format ? { type: 'number', format } : { type: 'number' };
  if (t === 'boolean') return { type: 'boolean' };
  if (t === 'Date') return { type: 'string', format: format || 'date-time' };
  if (t === 'any') return {};
  if (ctx.enums.has(t)) return { type: 'string', enum: ctx.enums.get(t) };
  ctx.model(t);
  return { $ref: `#/components/schemas/${t}` };
}

/** A model's schema from models/<Name>.js (attributeTypeMap, enums) and .d.ts (required, nullable). */
function modelSchema(dir, name, ctx) {
  // ObjectSerializer's typeMap names the Error model's class ModelError.
  const file = existsSync(join(pkg, dir, 'models', `${name}.js`)) ? name : `Model${name}`;
  const js = read(dir, 'models', `${file}.js`);
  const dts = read(dir, 'models', `${file}.d.ts`);
  for (const e of js.matchAll(/var (\w+);\n\(function \(\w+\) \{\n([\s\S]*?)\n\}\)/g)) {
    ctx.enums.set(
      e[1],
      [...e[2].matchAll(/\["\w+"\] = "([^"]*)"/g)].map((v) => v[1]),
    );
  }
  const map = new RegExp(`${file}\\.attributeTypeMap = (\\[[\\s\\S]*?\\]);`).exec(js);
  if (!map) fail(`${dir}/models/${file}.js has no attributeTypeMap`);
  const attrs = JSON.parse(map[1]);
  const required = [];
  const properties = {};
  for (const a of attrs) {
    const decl = new RegExp(`\\n {4}'${a.name}'(\\??):\\s*([^;]*?);\\n`).exec(dts) ?? new RegExp(`\\n {4}'${a.name}'(\\??):`).exec(dts);
    if (!decl) fail(`${file}.d.ts does not declare ${a.name}`);
    if (decl[1] !== '?') required.push(a.baseName);
    // The .d.ts spells nullable map values (`string | null`) that attributeTypeMap drops.
    const full = new RegExp(`\\n {4}'${a.name}'\\??: ([\\s\\S]*?);\\n {4}(?:'|static)`).exec(dts)?.[1]?.replace(/\s+/g, ' ') ?? '';
    const type = /\| null/.test(full) && !/\| null/.test(a.type) ? a.type.replace(/; \}$/, ' | null; }').replace(/^([^{]*)$/, '$1 | null') : a.type;
    properties[a.baseName] = schemaOf(type, a.format, ctx);
  }
  return { type: 'object', ...(required.length ? { required } : {}), properties };
}

/** The operations of one generated API file, restricted to `names`. */
function operations(dir, api, names, ctx, idPrefix) {
  const js = read(dir, 'apis', `${api}.js`);
  const factory = methodsOf(js, `${api}RequestFactory`);
  const processor = methodsOf(js, `${api}ResponseProcessor`);
  const out = [];
  for (const name of names) {
    const m = factory.get(name) ?? fail(`${dir} ${api}.${name} not found`);
    const code = m.code;
    const path = /const localVarPath = '([^']+)'/.exec(code)?.[1] ?? fail(`${api}.${name}: no path`);
    const method = /HttpMethod\.(\w+)/.exec(code)?.[1]?.toLowerCase() ?? fail(`${api}.${name}: no method`);
    const requiredArgs = new Set([...code.matchAll(/RequiredError\("\w+", "\w+", "(\w+)"\)/g)].map((r) => r[1]));
    const parameters = [];
    const args = new Map(); // parameter → the method argument it comes from
    for (const p of code.matchAll(/\.replace\('\{' \+ '(\w+)' \+ '\}', encodeURIComponent\(String\((\w+)\)\)\)/g)) {
      parameters.push({ name: p[1], in: 'path', required: true, schema: { type: 'string' } });
      args.set(parameters.at(-1), p[2]);
    }
    for (const q of code.matchAll(/setQueryParam\("(\w+)", ObjectSerializer_1\.ObjectSerializer\.serialize\((\w+), "([^"]+)", "([^"]*)"\)\)/g)) {
      parameters.push({ name: q[1], in: 'query', required: requiredArgs.has(q[2]), schema: schemaOf(q[3], q[4], ctx) });
      args.set(parameters.at(-1), q[2]);
    }
    // Arrays sent one value per repetition (appendQueryParam): form style, exploded.
    for (const q of code.matchAll(
      /serialize\((\w+), "([^"]+)", "([^"]*)"\);\s*for \(const serializedParam of serializedParams\) \{\s*requestContext\.appendQueryParam\("(\w+)"/g,
    )) {
      parameters.push({ name: q[4], in: 'query', required: requiredArgs.has(q[1]), style: 'form', explode: true, schema: schemaOf(q[2], q[3], ctx) });
      args.set(parameters.at(-1), q[1]);
    }
    // In the method's argument order (the order of the description's parameters).
    const order = m.args.split(',').map((a) => a.trim());
    parameters.sort((a, b) => order.indexOf(args.get(a)) - order.indexOf(args.get(b)));
    const op = { operationId: `${idPrefix}-${api}-${name}`, ...(parameters.length ? { parameters } : {}) };
    const jsonBody = /ObjectSerializer\.serialize\((\w+), "(\w+)", ""\), contentType\)/.exec(code);
    if (jsonBody) op.requestBody = { required: requiredArgs.has(jsonBody[1]), content: { 'application/json': { schema: schemaOf(jsonBody[2], '', ctx) } } };
    const form = [...code.matchAll(/localVarFormParams\.append\('(\w+)', (\w+)\)/g)];
    if (form.length) {
      const properties = Object.fromEntries(form.map((f) => [f[1], { type: 'string' }]));
      op.requestBody = { required: true, content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', properties } } } };
    }
    const auth = [...code.matchAll(/_config\.authMethods\["(\w+)"\]/g)].map((a) => a[1]);
    op.security = auth.map((a) => ({ [a]: [] }));
    const resp = processor.get(`${name}WithHttpInfo`) ?? fail(`${api}.${name}: no response processor`);
    const responses = {};
    for (const r of resp.code.matchAll(/isCodeInRange\)\("(\w+)", response\.httpStatusCode\)\) \{\n([\s\S]*?)\n {12}\}/g)) {
      const status = r[1] === '0' ? 'default' : r[1];
      const model = /deserialize\([\s\S]*?, "(\w+)", ""\)/.exec(r[2])?.[1];
      responses[status] = model
        ? { description: status === 'default' ? 'An error occurred.' : 'OK', content: { 'application/json': { schema: schemaOf(model, '', ctx) } } }
        : { description: 'No content' };
    }
    op.responses = responses;
    out.push({ path, method, op });
  }
  return out;
}

const doc = {
  openapi: '3.0.3',
  info: {
    title: 'HubSpot CRM objects (contacts, companies, deals, tickets) and OAuth tokens',
    version: 'v3',
    description:
      'Derived by connectors/hubspot/derive.mjs from the OpenAPI Generator output in @hubspot/api-client@14.0.1 (lib/codegen/crm/*, lib/codegen/oauth), which HubSpot generates from its public API specs.',
    license: { name: 'ISC (the @hubspot/api-client package)' },
  },
  servers: [],
  paths: {},
  components: { schemas: {}, securitySchemes: {} },
};

function addOps(dir, ops) {
  for (const { path, method, op } of ops) {
    doc.paths[path] ??= {};
    if (doc.paths[path][method]) fail(`${method} ${path} twice`);
    doc.paths[path][method] = op;
  }
}

/** Models reached from `dir`, merged into components.schemas; the same name must mean the same schema in every API. */
function collect(dir, ctx) {
  const done = new Set();
  while (ctx.pending.length) {
    const name = ctx.pending.shift();
    if (done.has(name)) continue;
    done.add(name);
    const schema = modelSchema(dir, name, ctx);
    const have = doc.components.schemas[name];
    if (have && JSON.stringify(have) !== JSON.stringify(schema)) fail(`model ${name} differs between APIs (${dir})`);
    doc.components.schemas[name] = schema;
  }
}

function context() {
  const ctx = { enums: new Map(), pending: [] };
  ctx.model = (name) => ctx.pending.push(name);
  return ctx;
}

/** The server URL of a generated API (servers.js: `new ServerConfiguration("https://...", {})`). */
const serverOf = (dir) => /new ServerConfiguration\("([^"]+)"/.exec(read(dir, 'servers.js'))?.[1] ?? fail(`${dir}: no server`);

for (const object of OBJECTS) {
  const dir = `lib/codegen/crm/${object}`;
  const ctx = context();
  for (const [api, names] of Object.entries(USED)) addOps(dir, operations(dir, api, names, ctx, object));
  collect(dir, ctx);
  const server = serverOf(dir);
  if (!doc.servers.some((s) => s.url === server)) doc.servers.push({ url: server });
}

// OAuth: the token endpoint (form-encoded; no security) and the scheme the CRM APIs apply.
{
  const dir = 'lib/codegen/oauth';
  const ctx = context();
  addOps(dir, operations(dir, 'TokensApi', ['create'], ctx, 'oauth'));
  collect(dir, ctx);
  const tokenServer = serverOf(dir);
  const authorize =
    /return `(https:\/\/[^?`]+)\?/.exec(read('lib/src/discovery/oauth/OauthDiscovery.js'))?.[1] ?? fail('no authorize URL in OauthDiscovery.js');
  // crm/*/auth/auth.js: Oauth2Authentication sets `Authorization: Bearer <accessToken>`.
  const auth = read('lib/codegen/crm/contacts/auth/auth.js');
  if (!/setHeaderParam\("Authorization", "Bearer " \+ this\.accessToken\)/.test(auth)) fail('the oauth2 scheme no longer sends a bearer token');
  doc.components.securitySchemes.oauth2 = {
    type: 'oauth2',
    flows: {
      authorizationCode: { authorizationUrl: authorize, tokenUrl: `${tokenServer}/oauth/v1/token`, refreshUrl: `${tokenServer}/oauth/v1/token`, scopes: {} },
    },
  };
}

const used = new Set(Object.values(doc.paths).flatMap((item) => Object.values(item).flatMap((op) => op.security.flatMap((s) => Object.keys(s)))));
for (const s of used) if (!doc.components.securitySchemes[s]) fail(`security scheme ${s} is applied but not derived`);
// The client types property values written as strings only; HubSpot's API takes numbers and
// booleans there too (amount: 10000 answers 201; it is kept, and answered, as "10000"), which
// recorded traffic sends: the input models say so.
for (const name of ['SimplePublicObjectInput', 'SimplePublicObjectInputForCreate']) {
  const values = doc.components.schemas[name]?.properties?.properties;
  if (values?.additionalProperties?.type !== 'string') fail(`${name}.properties is no longer a map of strings`);
  values.additionalProperties = { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] };
}
doc.components.schemas = Object.fromEntries(Object.entries(doc.components.schemas).sort(([a], [b]) => a.localeCompare(b)));

process.stdout.write(
  `# Generated by connectors/hubspot/derive.mjs from npm @hubspot/api-client@14.0.1 (ISC); do not edit.\n${stringify(doc, { lineWidth: 0 })}`,
);
