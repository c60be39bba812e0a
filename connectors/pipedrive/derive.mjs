#!/usr/bin/env node
// Derives an OpenAPI 3.0 extract of Pipedrive's API (v2 for persons, organizations, deals and
// activities; v1 for notes, which have no v2 endpoints yet, and the current user) from Pipedrive's
// official Node client, the npm package `pipedrive` (MIT, per its package.json). Pipedrive
// generates dist/versions/{v1,v2} of that client from its own OpenAPI descriptions with OpenAPI
// Generator (typescript-axios): per operation the ParamCreator keeps the path, the method, which
// arguments go to the path, the query and the JSON body, the security applied (the `x-api-token`
// header and OAuth 2 with the operation's scopes); the .d.ts keeps each argument's type, whether it
// is optional, the summary and description (JSDoc), and the response model (`...Fp`); models/*.d.ts
// keep the request and response models, which ts-json-schema-generator (MIT) turns into JSON
// Schema. This script reads exactly that back into OpenAPI for the operations connectors/pipedrive
// uses. What the generated client does not carry is added and marked `x-added-by`: the error body
// (the errorInterceptor hands it on as is; its shape is the client's own CallLogInternalErrorResponse
// model: success, error, error_info, data, additional_data) and the OAuth URLs (configuration.js's
// OAuth2Configuration: https://oauth.pipedrive.com/oauth/{authorize,token}, client id and secret as
// HTTP basic). The client types every integer as `number`; the numeric params used here, and the
// models' ids (`id`, `*_id`, `*_ids`), `visible_to` and v1 paging numbers (`start`, `limit`,
// `next_start`), are integers in Pipedrive's API and written as such. An `any` (custom field
// values) comes out of the generator as `anyOf: [{}, {not: {}}]`, written here as `{}`.
//
//   d=$(mktemp -d) && (cd "$d" && npm pack pipedrive@33.7.0 && tar xzf pipedrive-33.7.0.tgz \
//     && npm install --no-save --no-package-lock ts-json-schema-generator@2.10.0)
//   node connectors/pipedrive/derive.mjs "$d" > connectors/pipedrive/openapi.json
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const dir = process.argv[2];
const pkg = dir && join(dir, 'package');
if (!pkg || !existsSync(join(pkg, 'dist/versions/v2/api.d.ts')) || !existsSync(join(dir, 'node_modules/ts-json-schema-generator'))) {
  process.stderr.write('usage: derive.mjs <folder holding package/ (pipedrive unpacked) and node_modules/ts-json-schema-generator>\n');
  process.exit(2);
}
const require = createRequire(join(dir, 'node_modules/'));
const { createGenerator } = require('ts-json-schema-generator');
const fail = (msg) => {
  throw new Error(`derive.mjs: ${msg}`);
};
const read = (...p) => readFileSync(join(pkg, ...p), 'utf8');
const clientVersion = JSON.parse(read('package.json')).version;

/** The client's operations the connector uses: version → API file → methods. */
const USED = {
  v2: {
    persons: ['getPersons', 'getPerson', 'addPerson', 'updatePerson'],
    organizations: ['getOrganizations', 'getOrganization', 'addOrganization', 'updateOrganization'],
    deals: ['getDeals', 'getDeal', 'addDeal', 'updateDeal'],
    activities: ['getActivities', 'getActivity', 'addActivity', 'updateActivity'],
  },
  v1: {
    notes: ['getNotes', 'getNote', 'addNote', 'updateNote'],
    users: ['getCurrentUser'],
  },
};

const schemas = {};
const generators = {};
/** The JSON Schema of a model of one version's models/index.d.ts; its named types go to components/schemas. */
function modelRef(version, typeName) {
  generators[version] ??= createGenerator({
    path: join(pkg, `dist/versions/${version}/models/index.d.ts`),
    type: '*',
    expose: 'export',
    topRef: true,
    skipTypeCheck: true,
    additionalProperties: true,
    jsDoc: 'basic',
  });
  const text = JSON.stringify(generators[version].createSchema(typeName)).replaceAll('"#/definitions/', '"#/components/schemas/');
  const { definitions = {} } = JSON.parse(text);
  for (const [name, def] of Object.entries(definitions)) {
    if (schemas[name] && JSON.stringify(schemas[name]) !== JSON.stringify(def)) fail(`two shapes named ${name} (v1 and v2)`);
    schemas[name] = def;
  }
  if (!definitions[typeName]) fail(`no schema for ${typeName}`);
  return { $ref: `#/components/schemas/${typeName}` };
}

const unescape = (s) =>
  s
    .replaceAll('&#x60;', '`')
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&#x3D;', '=')
    .replaceAll('&quot;', '"')
    .replaceAll('\\&#39;', "'")
    .replaceAll('&#39;', "'")
    .replaceAll('&amp;', '&')
    .trim();

/** A parameter's JSDoc type (`number`, `'asc' | 'desc'`, `0 | 1`, `Array<number>`) as a schema. */
function paramSchema(type) {
  const t = type.trim();
  const arr = /^Array<(.+)>$/.exec(t);
  if (arr) return { type: 'array', items: paramSchema(arr[1]) };
  if (t === 'string') return { type: 'string' };
  if (t === 'number') return { type: 'integer' };
  if (t === 'boolean') return { type: 'boolean' };
  const alts = t.split('|').map((a) => a.trim());
  if (alts.every((a) => /^'[^']*'$/.test(a))) return { type: 'string', enum: alts.map((a) => a.slice(1, -1)) };
  if (alts.every((a) => /^-?\d+$/.test(a))) return { type: 'integer', enum: alts.map(Number) };
  return fail(`parameter type ${t} not understood`);
}

/** One method's JSDoc block and signature in a .d.ts section. */
function declared(section, name) {
  const m = new RegExp(`/\\*\\*\\n((?:\\s+\\*.*\\n)+?)\\s+\\*/\\n\\s+${name}: \\(([^\\n]*)\\) => Promise<RequestArgs>;`).exec(section);
  if (!m) fail(`${name}: no declaration`);
  const doc = m[1]
    .split('\n')
    .map((l) => l.replace(/^\s+\* ?/, ''))
    .filter((l) => l !== '');
  const summary = doc.find((l) => l.startsWith('@summary '))?.slice(9);
  const description = doc.filter((l) => !l.startsWith('@')).join('\n');
  const params = new Map();
  for (const l of doc) {
    const p = /^@param \{(.+?)\} (\[?)(\w+)\]?(?: (.*))?$/.exec(l);
    if (p) params.set(p[3], { type: p[1], optional: p[2] === '[', description: p[4] ? unescape(p[4]) : undefined });
  }
  return { summary: summary && unescape(summary), description: unescape(description), params };
}

function operations(version, file) {
  const js = read(`dist/versions/${version}/api/${file}-api.js`);
  const dts = read(`dist/versions/${version}/api/${file}-api.d.ts`);
  const creator = dts.slice(dts.indexOf('ApiAxiosParamCreator'), dts.indexOf('ApiFp'));
  const fp = dts.slice(dts.indexOf('ApiFp'), dts.indexOf('ApiFactory'));
  const out = [];
  for (const name of USED[version][file]) {
    const start = js.indexOf(`        ${name}: (`);
    if (start < 0) fail(`${version}/${file}: no ${name}`);
    const code = js.slice(start, js.indexOf('        }),\n', start));
    const path = /const localVarPath = `([^`]+)`/.exec(code)?.[1] ?? fail(`${name}: no path`);
    const method = /\{ method: '(\w+)' \}/.exec(code)?.[1]?.toLowerCase() ?? fail(`${name}: no method`);
    const d = declared(creator, name);
    const parameters = [];
    for (const p of path.matchAll(/\{(\w+)\}/g)) {
      const a = d.params.get(p[1]) ?? fail(`${name}: path parameter ${p[1]} undocumented`);
      parameters.push({ name: p[1], in: 'path', required: true, ...(a.description ? { description: a.description } : {}), schema: paramSchema(a.type) });
    }
    // A plain value, or a Date sent as its ISO string (date-time) or its first ten characters (date).
    const query = [
      ...code.matchAll(/localVarQueryParameter\['(\w+)'\] = (?:\((\w+) instanceof Date\) \?\s*\w+\.toISOString\(\)(\.substr\(0, 10\))?\s*:\s*\w+|(\w+));/g),
    ];
    if (query.length !== [...code.matchAll(/localVarQueryParameter\[/g)].length) fail(`${name}: a query parameter not understood`);
    for (const q of query) {
      const arg = q[2] ?? q[4];
      const a = d.params.get(arg) ?? fail(`${name}: query parameter ${arg} undocumented`);
      const schema = paramSchema(a.type);
      if (q[2] !== undefined) schema.format = q[3] ? 'date' : 'date-time';
      parameters.push({ name: q[1], in: 'query', required: !a.optional, ...(a.description ? { description: a.description } : {}), schema });
    }
    const op = { operationId: name, ...(d.summary ? { summary: d.summary } : {}), description: d.description, ...(parameters.length ? { parameters } : {}) };
    const body = /serializeDataIfNeeded\)\((\w+),/.exec(code)?.[1];
    if (body) {
      const a = d.params.get(body) ?? fail(`${name}: body ${body} undocumented`);
      op.requestBody = { required: !a.optional, content: { 'application/json': { schema: modelRef(version, a.type) } } };
    }
    const security = [];
    const apiKey = /setApiKeyToObject\)\(localVarHeaderParameter, "([\w-]+)"/.exec(code)?.[1];
    if (apiKey) {
      if (apiKey !== 'x-api-token') fail(`${name}: API key header ${apiKey}`);
      security.push({ api_key: [] });
    }
    const scopes = /setOAuthToObject\)\(localVarHeaderParameter, "oauth2", \[([^\]]*)\]/.exec(code)?.[1];
    if (scopes !== undefined) security.push({ oauth2: [...scopes.matchAll(/"([^"]+)"/g)].map((s) => s[1]) });
    op.security = security;
    const response = new RegExp(`\\n\\s+${name}\\([^\\n]*\\): Promise<\\(axios\\?: AxiosInstance, basePath\\?: string\\) => Promise<(\\w+)>>;`).exec(fp)?.[1];
    if (!response) fail(`${name}: no response model`);
    op.responses = {
      200: { description: 'OK', content: { 'application/json': { schema: modelRef(version, response) } } },
      default: { description: 'An error', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } },
    };
    const prefix =
      /exports\.BASE_PATH = "https:\/\/api\.pipedrive\.com(\/[^"]*)"/.exec(read(`dist/versions/${version}/base.js`))?.[1] ?? fail(`${version}: no BASE_PATH`);
    out.push({ path: `${prefix}${path}`, method, op });
  }
  return out;
}

const configuration = read('dist/versions/v2/configuration.js');
const oauthHost = /this\.host = params\.host \|\| "([^"]+)"/.exec(configuration)?.[1] ?? fail('no OAuth host');
if (!/Authorization: `Basic \$\{clientIdAndSecretInBase64\}`/.test(configuration)) fail('the token request no longer sends the client as HTTP basic');
if (!/this\.basePath = `\$\{token\.api_domain\}\/api\/v2`/.test(configuration))
  fail("the client no longer takes the base URL from the token answer's api_domain");

const doc = {
  openapi: '3.1.0',
  info: {
    title: 'Pipedrive API: persons, organizations, deals, activities (v2), notes and the current user (v1)',
    version: '2.0.0',
    description: `OUR derivation, by connectors/pipedrive/derive.mjs, from the OpenAPI Generator output in the official client pipedrive@${clientVersion} (dist/versions/v1 and v2), which Pipedrive generates from its API descriptions. OAuth: the base URL is the token answer's api_domain (the client's OAuth2Configuration sets basePath to \`\${api_domain}/api/v2\`).`,
    license: { name: 'MIT (the pipedrive npm package)' },
  },
  servers: [{ url: 'https://api.pipedrive.com' }],
  paths: {},
  components: {
    schemas,
    securitySchemes: {
      api_key: { type: 'apiKey', in: 'header', name: 'x-api-token' },
      oauth2: {
        type: 'oauth2',
        'x-added-by': 'derive.mjs: the URLs from OAuth2Configuration in the client (dist/versions/v2/configuration.js)',
        flows: {
          authorizationCode: {
            authorizationUrl: `${oauthHost}/oauth/authorize`,
            tokenUrl: `${oauthHost}/oauth/token`,
            refreshUrl: `${oauthHost}/oauth/token`,
            scopes: {},
          },
        },
      },
    },
  },
};
for (const [version, files] of Object.entries(USED)) {
  for (const file of Object.keys(files)) {
    for (const { path, method, op } of operations(version, file)) {
      doc.paths[path] ??= {};
      if (doc.paths[path][method]) fail(`${method} ${path} twice`);
      doc.paths[path][method] = op;
      for (const s of op.security) for (const scope of s.oauth2 ?? []) doc.components.securitySchemes.oauth2.flows.authorizationCode.scopes[scope] = scope;
    }
  }
}
schemas.ErrorResponse = {
  type: 'object',
  'x-added-by':
    "derive.mjs: the client passes error bodies on as they are (base.js errorInterceptor); their shape is the client's CallLogInternalErrorResponse",
  properties: {
    success: { type: 'boolean' },
    error: { type: 'string', description: 'The description of the error' },
    error_info: { type: 'string', description: 'A message describing how to solve the problem' },
    data: { type: 'object', nullable: true },
    additional_data: { type: 'object', nullable: true },
  },
};
const INTEGER = /^(id|\w+_id|\w+_ids|visible_to|start|limit|next_start)$/;
/** number → integer where Pipedrive's values are integers (see the header); `any` as {}. */
function tidy(schema, name) {
  if (Array.isArray(schema)) return schema.map((s) => tidy(s, name));
  if (schema === null || typeof schema !== 'object') return schema;
  if (JSON.stringify(schema) === '{"anyOf":[{},{"not":{}}]}') return {};
  const out = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'properties') out[k] = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, tidy(s, p)]));
    else out[k] = tidy(v, k === 'items' ? name : undefined);
  }
  if (name !== undefined && INTEGER.test(name)) {
    if (out.type === 'number') out.type = 'integer';
    else if (Array.isArray(out.type) && out.type.includes('number')) out.type = out.type.map((t) => (t === 'number' ? 'integer' : t));
  }
  return out;
}
for (const [name, schema] of Object.entries(schemas)) schemas[name] = tidy(schema);
doc.components.schemas = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
process.stdout.write(`${JSON.stringify(doc, null, 1)}\n`);
