#!/usr/bin/env node
// Trims Figma's own OpenAPI description of its REST API (the npm package @figma/rest-api-spec,
// MIT, "openapi/openapi.yaml") to the operations connectors/figma/connector.yaml uses, with every
// component they reach through $ref, written as JSON; one correction (below) to a body schema
// that no request can satisfy.
//
//   d=$(mktemp -d) && (cd "$d" && npm pack @figma/rest-api-spec@0.43.0 && tar xzf figma-rest-api-spec-0.43.0.tgz)
//   node connectors/figma/trim.mjs "$d/package/openapi/openapi.yaml" > connectors/figma/openapi.json
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';

/** The operations the manifest uses, by path. */
const KEEP = {
  '/v1/me': ['get'],
  '/v2/teams/{team_id}/folders': ['get'],
  '/v2/folders/{folder_id}/meta': ['get'],
  '/v2/folders/{folder_id}/files': ['get'],
  '/v1/files/{file_key}/meta': ['get'],
  '/v1/files/{file_key}/versions': ['get'],
  '/v1/files/{file_key}/comments': ['get', 'post'],
  '/v1/teams/{team_id}/components': ['get'],
  '/v1/components/{key}': ['get'],
  '/v2/webhooks': ['get', 'post'],
  '/v2/webhooks/{webhook_id}': ['get', 'put'],
};

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: trim.mjs <path to @figma/rest-api-spec/openapi/openapi.yaml>\n');
  process.exit(2);
}
const doc = parse(readFileSync(source, 'utf8'), { maxAliasCount: -1 });

const paths = {};
for (const [path, methods] of Object.entries(KEEP)) {
  const item = doc.paths[path];
  if (item === undefined) throw new Error(`${source}: no path ${path}`);
  for (const m of methods) if (item[m] === undefined) throw new Error(`${source}: no ${m} ${path}`);
  paths[path] = Object.fromEntries(Object.entries(item).filter(([k]) => methods.includes(k) || k === 'parameters'));
}
// One correction, the only change to Figma's text: PUT /v2/webhooks/{webhook_id}'s body lists
// team_id as required but declares no such property (Figma's reference documents none for an
// update, and a webhook's context cannot change), so no request could satisfy it.
const putBody = paths['/v2/webhooks/{webhook_id}'].put.requestBody.content['application/json'].schema;
if (putBody.required.includes('team_id') && putBody.properties.team_id === undefined) putBody.required = putBody.required.filter((k) => k !== 'team_id');
else throw new Error(`${source}: PUT /v2/webhooks/{webhook_id} no longer requires an undeclared team_id: drop the correction`);
const components = sortedComponents(reachedComponents(doc, paths));
// The security schemes the kept operations name (reached by name, not by $ref).
components.securitySchemes = doc.components.securitySchemes;
const out = {
  openapi: doc.openapi,
  info: {
    ...doc.info,
    'x-trimmed-by': `connectors/figma/trim.mjs from @figma/rest-api-spec@${doc.info.version} openapi/openapi.yaml: ${Object.entries(KEEP)
      .map(([p, m]) => `${m.join(',').toUpperCase()} ${p}`)
      .join('; ')}`,
  },
  servers: doc.servers,
  ...(doc.security !== undefined ? { security: doc.security } : {}),
  components,
  paths,
};
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
