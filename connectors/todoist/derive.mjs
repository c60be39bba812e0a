#!/usr/bin/env node
// Derives an OpenAPI 3.1 extract of Todoist's unified API v1 (https://api.todoist.com/api/v1:
// projects, sections, tasks, comments, the current user and the Sync endpoint) from Doist's
// official TypeScript SDK, the npm package @doist/todoist-sdk (MIT, per its package.json; the
// successor of @doist/todoist-api-typescript). Todoist publishes no OpenAPI description on npm, so
// this is OUR derivation, and says so in info.description. What the SDK carries, read back here:
//
// - the operations: each client method's HTTP method and path (dist/esm/clients/*-client.js
//   through consts/endpoints.js; listed in OPS below as the SDK sends them);
// - the records: the SDK's zod schemas (dist/esm/types/*/types.js), turned into JSON Schema by the
//   SDK's own zod (z.toJSONSchema, the input side: what the API sends);
// - the request arguments: the TypeScript types of dist/types/types/*/requests.d.ts (AddTaskArgs,
//   GetTasksArgs...), read with the TypeScript compiler API (type-fest's helpers resolved);
// - the wire names: the SDK writes every key snake_case (utils/case-conversion.js: fooBar →
//   foo_bar) and reads answers back camelCase, so every property name here is snake_case.
//
// Added, each marked x-added-by: the error body (Todoist's {error, error_code, error_extra,
// error_tag, http_code}, which the SDK hands on as TodoistRequestError.responseData), bearer and
// OAuth security (the SDK's Authorization: Bearer <token>, its OAuth endpoints on todoist.com and
// PERMISSIONS as scopes). Dates the SDK coerces (z.coerce.date) are ISO 8601 text on the wire.
// Not on the wire, left out: AddTaskArgs.isUncompletable (the SDK turns it into a content prefix).
//
//   d=$(mktemp -d) && (cd "$d" && npm pack @doist/todoist-sdk@17.0.0 && tar xzf doist-todoist-sdk-17.0.0.tgz \
//     && cd package && npm install --no-save --no-package-lock --ignore-scripts --omit=dev zod@4.6.6 type-fest@5)
//   node connectors/todoist/derive.mjs "$d" > connectors/todoist/openapi.json
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dir = process.argv[2];
const pkg = dir && join(dir, 'package');
if (!pkg || !existsSync(join(pkg, 'dist/types/index.d.ts')) || !existsSync(join(pkg, 'node_modules/zod'))) {
  process.stderr.write('usage: derive.mjs <folder holding package/ (@doist/todoist-sdk unpacked, with its zod and type-fest installed)>\n');
  process.exit(2);
}
const ts = createRequire(import.meta.url)('typescript');
const sdkVersion = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')).version;
const { z } = await import(pathToFileURL(join(pkg, 'node_modules/zod/index.js')).href);
const types = (f) => import(pathToFileURL(join(pkg, 'dist/esm/types', f)).href);
const ADDED = (what) => `switchboard: ${what}`;

const snake = (k) => k.replace(/([A-Z])/g, '_$1').toLowerCase();
/** A zod (or TypeScript-derived) JSON Schema written with the wire's snake_case names; coerced dates as date-time text. */
function wire(s) {
  if (Array.isArray(s)) return s.map(wire);
  if (s === null || typeof s !== 'object') return s;
  const out = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === '$schema' || ((k === 'minimum' || k === 'maximum') && Math.abs(v) >= Number.MAX_SAFE_INTEGER)) continue;
    if (k === 'properties') out[k] = Object.fromEntries(Object.entries(v).map(([p, x]) => [snake(p), wire(x)]));
    else if (k === 'required') out[k] = v.map(snake);
    else out[k] = wire(v);
  }
  // z.coerce.date() has no JSON Schema ({}): the API sends ISO 8601 text.
  if (Array.isArray(out.anyOf) && out.anyOf.length === 2 && out.anyOf.some((x) => Object.keys(x).length === 0) && out.anyOf.some((x) => x.type === 'null'))
    return { type: ['string', 'null'], format: 'date-time' };
  return out;
}
const zodSchema = (schema) => {
  const s = wire(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }));
  for (const [k, v] of Object.entries(s.properties ?? {})) if (Object.keys(v).length === 0) s.properties[k] = { type: 'string', format: 'date-time' };
  return s;
};

// Records, from the SDK's zod schemas.
const { TaskSchema } = await types('tasks/types.js');
const { PersonalProjectSchema, WorkspaceProjectSchema } = await types('projects/types.js');
const { SectionSchema } = await types('sections/types.js');
const { RawCommentSchema } = await types('comments/types.js');
const { CurrentUserSchema } = await types('users/types.js');
const { SyncResponseSchema } = await types('sync/response.js');
const { SYNC_RESOURCE_TYPES } = await types('sync/resource-types.js');
const schemas = {
  Task: zodSchema(TaskSchema),
  // ProjectSchema picks one of the two by workspace_id (a z.unknown() transform): both, as alternatives.
  Project: { anyOf: [{ $ref: '#/components/schemas/PersonalProject' }, { $ref: '#/components/schemas/WorkspaceProject' }] },
  PersonalProject: zodSchema(PersonalProjectSchema),
  WorkspaceProject: zodSchema(WorkspaceProjectSchema),
  Section: zodSchema(SectionSchema),
  Comment: zodSchema(RawCommentSchema),
  CurrentUser: zodSchema(CurrentUserSchema),
};
delete schemas.Task.properties.is_uncompletable; // the SDK's own (a content prefix), not the API's
schemas.Task.required = schemas.Task.required.filter((k) => k !== 'is_uncompletable');
// The Sync answer: the fields a sync of these resources reads (SyncResponseSchema, picked), its records by reference.
const sync = zodSchema(SyncResponseSchema.pick({ syncToken: true, fullSync: true, syncStatus: true, tempIdMapping: true }));
Object.assign(sync.properties, {
  items: { type: 'array', items: { $ref: '#/components/schemas/Task' } },
  projects: { type: 'array', items: { $ref: '#/components/schemas/Project' } },
  sections: { type: 'array', items: { $ref: '#/components/schemas/Section' } },
  notes: { type: 'array', items: { $ref: '#/components/schemas/Comment' } },
  project_notes: { type: 'array', items: { $ref: '#/components/schemas/Comment' } },
  full_sync_date_utc: { type: 'string', format: 'date-time' },
});
sync.additionalProperties = true;
schemas.SyncResponse = sync;
schemas.Error = {
  type: 'object',
  properties: {
    error: { type: 'string' },
    error_code: { type: 'integer' },
    error_extra: { type: 'object', additionalProperties: true },
    error_tag: { type: 'string' },
    http_code: { type: 'integer' },
  },
  'x-added-by': ADDED("Todoist's error body, as the SDK hands it on (TodoistRequestError.responseData)"),
};
for (const name of ['Task', 'Project', 'Section', 'Comment'])
  schemas[`${name}Page`] = {
    type: 'object',
    required: ['results', 'next_cursor'],
    properties: { results: { type: 'array', items: { $ref: `#/components/schemas/${name}` } }, next_cursor: { type: ['string', 'null'] } },
  };

// Request arguments, from the SDK's TypeScript types.
const program = ts.createProgram([join(pkg, 'dist/types/index.d.ts')], {
  strict: true,
  skipLibCheck: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
});
const checker = program.getTypeChecker();
const INTEGER = new Set(['order', 'priority', 'limit', 'duration', 'child_order']);
function typeSchema(t, name) {
  if (t.isUnion()) {
    const parts = t.types.filter((x) => !(x.flags & ts.TypeFlags.Undefined));
    const isNull = parts.some((x) => x.flags & ts.TypeFlags.Null);
    const rest = parts.filter((x) => !(x.flags & ts.TypeFlags.Null));
    const lits = rest.filter((x) => x.isStringLiteral());
    const boolLit = rest.filter((x) => x.flags & ts.TypeFlags.BooleanLiteral);
    let s;
    if (boolLit.length === 2 && rest.length === 2) s = { type: 'boolean' };
    else if (lits.length === rest.length && lits.length > 0) s = { type: 'string', enum: lits.map((x) => x.value) };
    else if (rest.some((x) => x.flags & ts.TypeFlags.String)) s = { type: 'string' };
    else if (rest.length === 1) s = typeSchema(rest[0], name);
    else s = { anyOf: rest.map((x) => typeSchema(x, name)) };
    return isNull ? { ...s, type: [s.type ?? 'string', 'null'].flat().filter((x, i, a) => a.indexOf(x) === i) } : s;
  }
  if (t.flags & ts.TypeFlags.String || t.isStringLiteral()) return { type: 'string' };
  if (t.flags & ts.TypeFlags.Number) return { type: INTEGER.has(name) ? 'integer' : 'number' };
  if (t.flags & (ts.TypeFlags.Boolean | ts.TypeFlags.BooleanLiteral)) return { type: 'boolean' };
  if (checker.isArrayType(t)) return { type: 'array', items: typeSchema(checker.getTypeArguments(t)[0], name) };
  if (t.flags & ts.TypeFlags.Object || t.isIntersection()) return objectSchema(t);
  throw new Error(`derive.mjs: no JSON Schema for ${checker.typeToString(t)} (${name})`);
}
function objectSchema(t) {
  const properties = {};
  const required = [];
  for (const p of checker.getPropertiesOfType(t)) {
    const pt = checker.getTypeOfSymbol(p);
    if (
      pt.flags & (ts.TypeFlags.Never | ts.TypeFlags.Undefined) ||
      (pt.isUnion() && pt.types.every((x) => x.flags & (ts.TypeFlags.Never | ts.TypeFlags.Undefined)))
    )
      continue;
    const name = snake(p.name);
    properties[name] = typeSchema(pt, name);
    if (!(p.flags & ts.SymbolFlags.Optional)) required.push(name);
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}
/** The JSON Schema of an exported request type; a union's members merged (a property required only where all require it). */
function argsSchema(file, typeName, drop = []) {
  const sf = program.getSourceFile(join(pkg, 'dist/types/types', file));
  const members = typeName.split('|').flatMap((n) => {
    const sym = checker.getExportsOfModule(checker.getSymbolAtLocation(sf)).find((s) => s.name === n);
    if (sym === undefined) throw new Error(`derive.mjs: no ${n} in ${file}`);
    const t = checker.getDeclaredTypeOfSymbol(sym);
    return t.isUnion() ? t.types : [t];
  });
  const all = members.map(objectSchema);
  const properties = Object.assign({}, ...all.map((s) => s.properties));
  for (const k of drop) delete properties[k];
  const required = Object.keys(properties).filter((k) => all.every((s) => s.required?.includes(k)));
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), 'x-derived-from': `@doist/todoist-sdk@${sdkVersion} ${typeName}` };
}

const json = (ref) => ({ content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } } });
const query = (args) =>
  Object.entries(args.properties).map(([name, schema]) => ({
    name,
    in: 'query',
    required: args.required?.includes(name) ?? false,
    // Arrays go as one comma-separated value (the SDK joins ids with ",").
    schema: schema.type === 'array' ? { type: 'string' } : { ...schema, type: [schema.type].flat().filter((x) => x !== 'null')[0] },
  }));
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };
const errors = {
  400: { description: 'Bad request', ...json('Error') },
  401: { description: 'Unauthorized', ...json('Error') },
  404: { description: 'Not found', ...json('Error') },
};
const op = (summary, method, args, response, extra = {}) => ({ summary, ...extra, responses: { 200: { description: 'OK', ...json(response) }, ...errors } });

// The SDK's methods the connector uses: TaskClient.getTasks → GET tasks, and so on.
const paths = {
  '/tasks': {
    get: op('getTasks', 'get', null, 'TaskPage', { parameters: query(argsSchema('tasks/requests.d.ts', 'GetTasksArgs')) }),
    post: op('addTask', 'post', null, 'Task', {
      requestBody: { required: true, content: { 'application/json': { schema: argsSchema('tasks/requests.d.ts', 'AddTaskArgs', ['is_uncompletable']) } } },
    }),
  },
  '/tasks/{id}': {
    get: op('getTask', 'get', null, 'Task', { parameters: [idParam] }),
    post: op('updateTask', 'post', null, 'Task', {
      parameters: [idParam],
      requestBody: { required: true, content: { 'application/json': { schema: argsSchema('tasks/requests.d.ts', 'UpdateTaskArgs', ['is_uncompletable']) } } },
    }),
  },
  '/projects': {
    get: op('getProjects', 'get', null, 'ProjectPage', { parameters: query(argsSchema('projects/requests.d.ts', 'GetProjectsArgs')) }),
    post: op('addProject', 'post', null, 'Project', {
      requestBody: { required: true, content: { 'application/json': { schema: argsSchema('projects/requests.d.ts', 'AddProjectArgs') } } },
    }),
  },
  '/projects/{id}': {
    get: op('getProject', 'get', null, 'Project', { parameters: [idParam] }),
    post: op('updateProject', 'post', null, 'Project', {
      parameters: [idParam],
      requestBody: { required: true, content: { 'application/json': { schema: argsSchema('projects/requests.d.ts', 'UpdateProjectArgs') } } },
    }),
  },
  '/sections': {
    get: op('getSections', 'get', null, 'SectionPage', { parameters: query(argsSchema('sections/requests.d.ts', 'GetSectionsArgs')) }),
    post: op('addSection', 'post', null, 'Section', {
      requestBody: { required: true, content: { 'application/json': { schema: argsSchema('sections/requests.d.ts', 'AddSectionArgs') } } },
    }),
  },
  '/sections/{id}': {
    get: op('getSection', 'get', null, 'Section', { parameters: [idParam] }),
    post: op('updateSection', 'post', null, 'Section', {
      parameters: [idParam],
      requestBody: { required: true, content: { 'application/json': { schema: argsSchema('sections/requests.d.ts', 'UpdateSectionArgs') } } },
    }),
  },
  '/comments': {
    // getComments(GetTaskCommentsArgs | GetProjectCommentsArgs): a task's comments or a project's (one of task_id, project_id).
    get: op('getComments', 'get', null, 'CommentPage', {
      parameters: query(argsSchema('comments/requests.d.ts', 'GetTaskCommentsArgs|GetProjectCommentsArgs')),
    }),
    post: op('addComment', 'post', null, 'Comment', {
      requestBody: { required: true, content: { 'application/json': { schema: argsSchema('comments/requests.d.ts', 'AddCommentArgs') } } },
    }),
  },
  '/comments/{id}': {
    get: op('getComment', 'get', null, 'Comment', { parameters: [idParam] }),
    post: op('updateComment', 'post', null, 'Comment', {
      parameters: [idParam],
      requestBody: { required: true, content: { 'application/json': { schema: argsSchema('comments/requests.d.ts', 'UpdateCommentArgs') } } },
    }),
  },
  '/user': { get: op('getUser', 'get', null, 'CurrentUser') },
  '/sync': {
    post: op('sync', 'post', null, 'SyncResponse', {
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties: {
                sync_token: { type: 'string', description: "'*' for everything, else the sync_token of the last answer" },
                resource_types: { type: 'array', items: { type: 'string', enum: [...SYNC_RESOURCE_TYPES, 'all'] } },
                commands: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['type', 'uuid', 'args'],
                    properties: { type: { type: 'string' }, uuid: { type: 'string' }, temp_id: { type: 'string' }, args: { type: 'object' } },
                  },
                },
              },
              'x-derived-from': `@doist/todoist-sdk@${sdkVersion} SyncRequest`,
            },
          },
        },
      },
    }),
  },
};

const scopes = Object.fromEntries(['task:add', 'data:read', 'data:read_write', 'data:delete', 'project:delete'].map((s) => [s, s]));
process.stdout.write(
  `${JSON.stringify(
    {
      openapi: '3.1.0',
      info: {
        title: 'Todoist API v1 (derived)',
        version: 'v1',
        description: `OUR derivation, not Todoist's own description: the operations, records and request arguments of @doist/todoist-sdk@${sdkVersion} (MIT) that connectors/todoist uses, written snake_case as the SDK sends them; additions marked x-added-by.`,
        license: { name: 'MIT (the SDK, @doist/todoist-sdk)', identifier: 'MIT' },
        'x-derived-from': `npm:@doist/todoist-sdk@${sdkVersion}`,
        'x-derived-by': 'connectors/todoist/derive.mjs',
      },
      servers: [{ url: 'https://api.todoist.com/api/v1' }],
      security: [{ bearer: [] }, { oauth: [] }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'A personal API token or an OAuth access token',
            'x-added-by': ADDED("the SDK's Authorization: Bearer <token>"),
          },
          oauth: {
            type: 'oauth2',
            flows: {
              authorizationCode: { authorizationUrl: 'https://todoist.com/oauth/authorize', tokenUrl: 'https://todoist.com/oauth/access_token', scopes },
            },
            'x-added-by': ADDED("the SDK's authentication.js (todoist.com/oauth/authorize, access_token) and PERMISSIONS"),
          },
        },
        schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
      },
      paths,
    },
    null,
    1,
  )}\n`,
);
