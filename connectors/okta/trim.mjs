#!/usr/bin/env node
// Trims Okta's own description of its management API (the npm package @okta/openapi, Apache-2.0,
// "dist/spec.json": a Swagger 2.0 document, the source Okta's SDKs were generated from) to the
// operations connectors/okta/connector.yaml uses, with every definition they reach, and writes
// them as OpenAPI 3.0 (body parameters as request bodies, response schemas as JSON content,
// definitions as components/schemas), without Okta's x-okta-* SDK generator hints:
//
//   d=$(mktemp -d) && (cd "$d" && npm pack @okta/openapi@2.15.0 && tar xzf okta-openapi-2.15.0.tgz)
//   node connectors/okta/trim.mjs "$d/package/dist/spec.json" > connectors/okta/openapi.json
//
// (The current SDK, @okta/okta-sdk-nodejs 8.x, ships only the code generated from Okta's newer
// OpenAPI 3 description, not the description: the users, groups and apps operations used here are
// the same in both.) Additions of ours, each marked `x-added-by: connectors/okta/trim.mjs`, for
// what Okta's API reference documents and this description leaves out:
// - every list pages by the `Link: <…after=…>; rel="next"` header (declared on its 200);
// - the server is the org's own host, https://{subdomain}.okta.com (the description says
//   "your-subdomain.okta.com");
// - OAuth 2.0 for Okta (access tokens of an app granted okta.* scopes, as Bearer) besides SSWS API
//   tokens;
// - errors are {errorCode, errorSummary, errorLink, errorId, errorCauses: [{errorSummary}]};
// - `limit` of the users list is at most 200, of groups' members 1000, of apps 200, of groups 10000;
// - an application is created with its catalog `name` (bookmark, oidc_client, ...: "readOnly" in
//   the description, where the SDK's subtypes set it).
import { readFileSync } from 'node:fs';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';

/** The operations the manifest uses, by path. */
const KEEP = {
  '/api/v1/users': ['get', 'post'],
  '/api/v1/users/{userId}': ['get', 'post'],
  '/api/v1/groups': ['get', 'post'],
  '/api/v1/groups/{groupId}': ['get', 'put'],
  '/api/v1/groups/{groupId}/users': ['get'],
  '/api/v1/groups/{groupId}/users/{userId}': ['put'],
  '/api/v1/apps': ['get', 'post'],
  '/api/v1/apps/{appId}': ['get', 'put'],
};
const LIMITS = { '/api/v1/users': 200, '/api/v1/groups': 10000, '/api/v1/groups/{groupId}/users': 1000, '/api/v1/apps': 200 };
const ADDED = 'connectors/okta/trim.mjs';

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: trim.mjs <path to @okta/openapi/dist/spec.json>\n');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(source, 'utf8'));
if (doc.swagger !== '2.0') throw new Error(`${source}: expected a Swagger 2.0 document`);

/** A copy without x-okta-* keys, with #/definitions/ refs as #/components/schemas/ and Swagger's discriminator names as OpenAPI 3's. */
function convert(value) {
  if (Array.isArray(value)) return value.map(convert);
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('x-okta-') || k.startsWith('x-openapi-v3-')) continue;
    if (k === '$ref' && typeof v === 'string') out[k] = v.replace('#/definitions/', '#/components/schemas/');
    else if (k === 'discriminator' && typeof v === 'string') out[k] = { propertyName: v };
    else out[k] = convert(v);
  }
  // A $ref beside other keys (readOnly, type) is read as the $ref alone in OpenAPI 3.0: keep the ref.
  if (out.$ref !== undefined && Object.keys(out).length > 1) return { $ref: out.$ref };
  return out;
}

/** A Swagger 2.0 query/path/header parameter as OpenAPI 3.0's (its type and bounds under `schema`). */
function parameter(p) {
  const { name, in: where, required, description, collectionFormat, ...schema } = convert(p);
  const out = { name, in: where, ...(required ? { required } : {}), ...(description ? { description } : {}), schema };
  if (collectionFormat === 'csv') Object.assign(out, { style: 'form', explode: false });
  return out;
}

const linkHeader = {
  Link: {
    description:
      'The next page, as `<https://{subdomain}.okta.com/api/v1/...?after=...&limit=...>; rel="next"` (absent on the last page), and this one as rel="self".',
    schema: { type: 'string' },
    'x-added-by': ADDED,
  },
};

/** The OAuth scope an operation needs: okta.<users|groups|apps>.<read|manage>. */
function scope(path, method) {
  const of = path.startsWith('/api/v1/users') ? 'users' : path.startsWith('/api/v1/groups') ? 'groups' : 'apps';
  return `okta.${of}.${method === 'get' ? 'read' : 'manage'}`;
}

const paths = {};
for (const [path, methods] of Object.entries(KEEP)) {
  const item = doc.paths[path];
  if (item === undefined) throw new Error(`${source}: no path ${path}`);
  paths[path] = {};
  for (const m of methods) {
    const op = item[m];
    if (op === undefined) throw new Error(`${source}: no ${m} ${path}`);
    const { parameters = [], responses, consumes: _c, produces: _p, security: _s, ...rest } = op;
    const out = { ...convert(rest), parameters: [], responses: {} };
    for (const p of parameters) {
      if (p.in === 'body') {
        out.requestBody = { required: p.required === true, content: { 'application/json': { schema: convert(p.schema) } } };
        continue;
      }
      const converted = parameter(p);
      if (converted.name === 'limit' && LIMITS[path] !== undefined) Object.assign(converted.schema, { minimum: 1, maximum: LIMITS[path], 'x-added-by': ADDED });
      out.parameters.push(converted);
    }
    if (out.parameters.length === 0) delete out.parameters;
    for (const [status, r] of Object.entries(responses)) {
      const res = { description: r.description ?? '' };
      if (r.schema !== undefined) res.content = { 'application/json': { schema: convert(r.schema) } };
      if (m === 'get' && r.schema?.type === 'array') res.headers = linkHeader;
      out.responses[status] = res;
    }
    out.responses.default = { $ref: '#/components/responses/Error' };
    out.security = [{ api_token: [] }, { oauth2: [scope(path, m)] }];
    paths[path][m] = out;
  }
}

const definitions = convert(doc.definitions);
const appName = definitions.Application.properties.name;
if (appName.readOnly !== true) throw new Error(`${source}: Application.name is no longer readOnly: drop the correction`);
delete appName.readOnly;
appName.description = "The app's catalog name (bookmark, oidc_client, ...), given when it is created";
appName['x-added-by'] = ADDED;
const error = {
  type: 'object',
  description: "Okta's error body.",
  properties: {
    errorCode: { type: 'string', example: 'E0000007' },
    errorSummary: { type: 'string', example: 'Not found: Resource not found: 00u1f96ECLNVOKVMUSEA (User)' },
    errorLink: { type: 'string' },
    errorId: { type: 'string' },
    errorCauses: { type: 'array', items: { type: 'object', properties: { errorSummary: { type: 'string' } } } },
  },
  'x-added-by': ADDED,
};
const responses = {
  Error: { description: 'An error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } }, 'x-added-by': ADDED },
};
const components = reachedComponents({ components: { schemas: { ...definitions, Error: error }, responses } }, paths);
const sorted = sortedComponents(components);
sorted.securitySchemes = {
  api_token: { ...convert(doc.securityDefinitions.api_token) },
  oauth2: {
    type: 'oauth2',
    description: 'OAuth 2.0 for Okta: an access token from the org authorization server with okta.* scopes, sent as Bearer.',
    flows: {
      authorizationCode: {
        authorizationUrl: 'https://{subdomain}.okta.com/oauth2/v1/authorize',
        tokenUrl: 'https://{subdomain}.okta.com/oauth2/v1/token',
        refreshUrl: 'https://{subdomain}.okta.com/oauth2/v1/token',
        scopes: {
          'okta.users.read': 'Read users',
          'okta.users.manage': 'Create and update users',
          'okta.groups.read': 'Read groups and their members',
          'okta.groups.manage': 'Create and update groups and memberships',
          'okta.apps.read': 'Read applications',
          'okta.apps.manage': 'Create and update applications',
          offline_access: 'A refresh token',
        },
      },
    },
    'x-added-by': ADDED,
  },
};
const out = {
  openapi: '3.0.3',
  info: {
    ...doc.info,
    'x-trimmed-by': `${ADDED} from @okta/openapi@${doc.info.version} dist/spec.json (Swagger 2.0, converted): ${Object.entries(KEEP)
      .map(([p, m]) => `${m.join(',').toUpperCase()} ${p}`)
      .join('; ')}`,
  },
  servers: [{ url: 'https://{subdomain}.okta.com', variables: { subdomain: { default: 'your-subdomain', description: 'The Okta org' } }, 'x-added-by': ADDED }],
  components: sorted,
  paths,
};
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
