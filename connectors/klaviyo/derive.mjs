#!/usr/bin/env node
// Derives an OpenAPI 3.0 extract of Klaviyo's API (revision 2026-07-15) from Klaviyo's official
// Node client, klaviyo-api (MIT, per its package.json), whose api/*.ts and model/*.ts Klaviyo
// generates with OpenAPI Generator from its OpenAPI description (github.com/klaviyo/openapi). The
// generated TypeScript keeps, per operation, the path, the method, the path parameters, every
// query parameter with its wire name (`page[cursor]`, `fields[profile]`) and type (literal unions
// as enums; arrays joined with commas by the client's queryParamPreProcessor), the JSON:API body's
// model and the answer's model; per model, its fields (wire names from attributeTypeMap, required
// unless `?`, nullable with `| null`, the class it extends) and enums. This script reads exactly
// that back into OpenAPI for the operations the connector uses. Ours, not Klaviyo's (the client
// does not carry them): operation ids (the client's method names), the success statuses (200 for
// reads and updates, 201 for creates, 202 without a body where the client expects none, as
// Klaviyo's reference documents for POST /api/events), the error body, the `revision` header's
// value (the client's `revision` constant), the security schemes (the client's `Klaviyo-API-Key`
// prefix and its OAuth token URL). Get the package and run:
//
//   d=$(mktemp -d) && (cd "$d" && npm pack klaviyo-api@23.0.0 && tar xzf klaviyo-api-23.0.0.tgz)
//   node connectors/klaviyo/derive.mjs "$d/package" > connectors/klaviyo/openapi.json
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const pkg = process.argv[2];
if (!pkg || !existsSync(join(pkg, 'api/profilesApi.ts'))) {
  process.stderr.write('usage: derive.mjs <path of the unpacked klaviyo-api package>\n');
  process.exit(2);
}
const read = (...p) => readFileSync(join(pkg, ...p), 'utf8');
const fail = (msg) => {
  throw new Error(`derive.mjs: ${msg}`);
};

/** The client methods the connector uses, by API file. */
const USED = {
  accountsApi: ['getAccounts', 'getAccount'],
  profilesApi: ['getProfiles', 'getProfile', 'createProfile', 'updateProfile'],
  listsApi: ['getLists', 'getList', 'createList', 'updateList'],
  eventsApi: ['getEvents', 'getEvent', 'createEvent'],
  campaignsApi: ['getCampaigns', 'getCampaign', 'createCampaign', 'updateCampaign'],
};
const REVISION = /const revision\s*=\s*"([0-9-]+)"/.exec(read('api/apis.ts'))?.[1] ?? fail('no revision constant in api/apis.ts');

/** A method's body in a generated API file: from its signature to `return request(config)`. */
function method(file, name) {
  const js = read('api', `${file}.ts`);
  const start = js.indexOf(`    public async ${name} (`);
  if (start < 0) fail(`no method ${name} in ${file}`);
  const end = js.indexOf('return request(config)', start);
  return js.slice(start, end);
}

/** A literal union ('a' | 'b') as an enum, else a plain type. */
function literalSchema(type) {
  const lits = [...type.matchAll(/'([^']*)'/g)].map((m) => m[1]);
  if (lits.length > 0 && type.replace(/'[^']*'|\|/g, '').trim() === '') return { type: 'string', enum: lits };
  return scalar(type.trim()) ?? { type: 'string' };
}

function scalar(t) {
  if (t === 'string') return { type: 'string' };
  if (t === 'number') return { type: 'number' };
  if (t === 'boolean') return { type: 'boolean' };
  if (t === 'Date') return { type: 'string', format: 'date-time' };
  if (t === 'any' || t === 'object') return {};
  return undefined;
}

const schemas = {};
const pending = [];
/** A model (class or enum) as a $ref, queued for conversion. */
function ref(name) {
  if (schemas[name] === undefined && !pending.includes(name)) pending.push(name);
  return { $ref: `#/components/schemas/${name}` };
}

/** A generated type expression as a schema. */
function typeSchema(type) {
  let t = type.trim();
  let nullable = false;
  if (/\|\s*null$/.test(t)) {
    nullable = true;
    t = t.replace(/\s*\|\s*null$/, '').trim();
  }
  let out;
  const arr = /^Array<(.+)>$/.exec(t);
  const map = /^\{\s*\[key: string\]:\s*(.+?);?\s*\}$/.exec(t);
  if (arr) out = { type: 'array', items: typeSchema(arr[1]) };
  else if (map) out = { type: 'object', additionalProperties: typeSchema(map[1]) };
  else if (scalar(t) !== undefined) out = scalar(t);
  else if (/^'/.test(t)) out = literalSchema(t);
  else if (/^[A-Z]\w*\s*\|\s*'/.test(t))
    out = ref(t.split('|')[0].trim()); // ProfileEnum | 'profile'
  else if (/^[A-Z]\w*$/.test(t)) out = ref(t);
  else out = {};
  return nullable ? (out.$ref ? { allOf: [out], nullable: true } : { ...out, nullable: true }) : out;
}

const fileOf = (name) => `${name[0].toLowerCase()}${name.slice(1)}.ts`;
/** A model file as a schema: an enum's values, or a class's fields (with the fields of the class it extends). */
function modelSchema(name) {
  const file = join(pkg, 'model', fileOf(name));
  if (!existsSync(file)) fail(`no model ${name}`);
  const ts = readFileSync(file, 'utf8');
  const en = new RegExp(`export enum ${name} \\{([\\s\\S]*?)\\}`).exec(ts);
  if (en) return { type: 'string', enum: [...en[1].matchAll(/<any> '([^']*)'/g)].map((m) => m[1]) };
  const cls = new RegExp(`export class ${name}(?: extends (\\w+))? \\{([\\s\\S]*?)static attributeTypeMap[^=]*= \\[([\\s\\S]*?)\\];`).exec(ts);
  if (!cls) return {}; // a type alias (a union of several resources): any object
  const [, parent, fields, map] = cls;
  const wire = new Map([...map.matchAll(/"name": "(\w+)",\s*"baseName": "([^"]+)"/g)].map((m) => [m[1], m[2]]));
  const properties = {};
  const required = [];
  for (const m of fields.matchAll(/^ {4}'(\w+)'(\?)?: (.+);$/gm)) {
    const key = wire.get(m[1]) ?? m[1];
    properties[key] = typeSchema(m[3]);
    if (m[2] !== '?') required.push(key);
  }
  const own = { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
  return parent ? { allOf: [ref(parent), own] } : own;
}

/** One operation, read back from its generated method. */
function operation(file, name) {
  const code = method(file, name);
  const sig = /public async \w+ \(([\s\S]*?)\): Promise<\{ response: AxiosResponse; body(\??): ([\w<>]+);/.exec(code) ?? fail(`${name}: no signature`);
  const path = /this\.basePath \+ '([^']+)'/.exec(code)?.[1] ?? fail(`${name}: no path`);
  const verb = /method: '(\w+)'/.exec(code)?.[1] ?? fail(`${name}: no method`);
  const parameters = [...path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
  const options = /options: \{ ([\s\S]*?),\s*\} = \{\}/.exec(sig[1])?.[1] ?? '';
  const optionTypes = new Map();
  for (const m of options.matchAll(/(\w+)\?: ((?:Array<[^>]*>|'[^,]*'(?: \| '[^']*')*|[\w]+))(?:,|$)/g)) optionTypes.set(m[1], m[2]);
  const requiredArgs = new Set(
    sig[1]
      .split('options:')[0]
      .split(',')
      .map((a) => a.split(':')[0].trim())
      .filter(Boolean),
  );
  for (const m of code.matchAll(/localVarQueryParameters\['([^']+)'\] = ObjectSerializer\.serialize\((?:options\.)?(\w+), "([^"]*)"\)/g)) {
    const [, wire, arg, type] = m;
    const arr = /^Array<(.+)>$/.exec(type);
    const schema = arr ? { type: 'array', items: literalSchema(arr[1]) } : literalSchema(type);
    parameters.push({
      name: wire,
      in: 'query',
      ...(requiredArgs.has(arg) ? { required: true } : {}),
      schema,
      ...(arr ? { style: 'form', explode: false } : {}),
    });
  }
  parameters.push({ name: 'revision', in: 'header', required: true, schema: { type: 'string', default: REVISION } });
  const body = /data: ObjectSerializer\.serialize\(\w+, "(\w+)"\)/.exec(code)?.[1];
  const noContent = sig[2] === '?' && sig[3] === 'any';
  const status = noContent ? '202' : verb === 'POST' ? '201' : '200';
  const response = noContent ? { description: 'Accepted' } : { description: 'Success', content: { 'application/vnd.api+json': { schema: ref(sig[3]) } } };
  return [
    path,
    verb.toLowerCase(),
    {
      operationId: name,
      parameters,
      ...(body ? { requestBody: { required: true, content: { 'application/vnd.api+json': { schema: ref(body) } } } } : {}),
      responses: { [status]: response, '4XX': { $ref: '#/components/responses/ClientError' } },
    },
  ];
}

const paths = {};
for (const [file, names] of Object.entries(USED)) {
  for (const name of names) {
    const [path, verb, op] = operation(file, name);
    (paths[path] ??= {})[verb] = op;
  }
}
while (pending.length > 0) {
  const name = pending.shift();
  schemas[name] = modelSchema(name);
}
schemas.ClientError = {
  type: 'object',
  description: "Klaviyo's error document (JSON:API errors).",
  required: ['errors'],
  properties: {
    errors: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          status: { type: 'integer' },
          code: { type: 'string' },
          title: { type: 'string' },
          detail: { type: 'string' },
          source: { type: 'object', properties: { pointer: { type: 'string' }, parameter: { type: 'string' } } },
        },
      },
    },
  },
};
const sorted = Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b)));
const version = JSON.parse(read('package.json')).version;
const out = {
  openapi: '3.0.3',
  info: {
    title: 'Klaviyo API',
    version: REVISION,
    description: `Derived by connectors/klaviyo/derive.mjs from klaviyo-api@${version} (Klaviyo's official Node client, generated from its OpenAPI description): ${Object.values(USED).flat().join(', ')}. Ours: operation ids, success statuses, the error body, the security schemes.`,
    license: { name: 'MIT (klaviyo-api)' },
  },
  servers: [{ url: 'https://a.klaviyo.com' }],
  security: [{ Klaviyo_Private_API_Key: [] }, { OAuth: [] }],
  components: {
    responses: {
      ClientError: { description: 'A refused request', content: { 'application/vnd.api+json': { schema: { $ref: '#/components/schemas/ClientError' } } } },
    },
    schemas: sorted,
    securitySchemes: {
      Klaviyo_Private_API_Key: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Klaviyo-API-Key <private key>' },
      OAuth: {
        type: 'oauth2',
        flows: {
          authorizationCode: {
            authorizationUrl: 'https://www.klaviyo.com/oauth/authorize',
            tokenUrl: 'https://a.klaviyo.com/oauth/token',
            refreshUrl: 'https://a.klaviyo.com/oauth/token',
            scopes: {
              'accounts:read': 'Read the account',
              'profiles:read': 'Read profiles',
              'profiles:write': 'Create and update profiles',
              'lists:read': 'Read lists',
              'lists:write': 'Create and update lists',
              'events:read': 'Read events',
              'events:write': 'Create events',
              'campaigns:read': 'Read campaigns',
              'campaigns:write': 'Create and update campaigns',
            },
          },
        },
      },
    },
  },
  paths,
};
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
