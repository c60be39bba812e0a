#!/usr/bin/env node
// Trims GitHub's own OpenAPI description of api.github.com (github/rest-api-description, as
// shipped with the Octokit extension in the npm package @octokit/openapi, MIT as its info.license
// says) to the operations connectors/github/connector.yaml uses, with every component they reach
// through $ref, and without the response examples (components/examples) and code-sample
// extensions. Nothing is added or rewritten: GitHub's description declares no securitySchemes
// (the API takes `Authorization: Bearer <token>`), so the simulator sidecar says so instead.
//
//   d=$(mktemp -d) && (cd "$d" && npm pack @octokit/openapi@23.0.2 && tar xzf octokit-openapi-23.0.2.tgz)
//   node connectors/github/trim.mjs "$d/package/generated/api.github.com.json" > connectors/github/openapi.json
import { readFileSync } from 'node:fs';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';

/** The operations the manifest uses, by path. */
const KEEP = {
  '/user': ['get'],
  '/user/repos': ['get', 'post'],
  '/repos/{owner}/{repo}': ['get', 'patch'],
  '/repos/{owner}/{repo}/issues': ['get', 'post'],
  '/repos/{owner}/{repo}/issues/{issue_number}': ['get', 'patch'],
  '/repos/{owner}/{repo}/pulls': ['get', 'post'],
  '/repos/{owner}/{repo}/pulls/{pull_number}': ['get', 'patch'],
  '/repos/{owner}/{repo}/issues/comments': ['get'],
  '/repos/{owner}/{repo}/issues/comments/{comment_id}': ['get', 'patch'],
  '/repos/{owner}/{repo}/issues/{issue_number}/comments': ['get', 'post'],
  '/installation/repositories': ['get'],
  '/app/installations/{installation_id}/access_tokens': ['post'],
};

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: trim.mjs <path to @octokit/openapi/generated/api.github.com.json>\n');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(source, 'utf8'));

/** Drop response examples (they only point at components/examples) and x-github code-sample metadata. */
function clean(value) {
  if (Array.isArray(value)) return value.map(clean);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => k !== 'examples' && k !== 'x-github')
      .map(([k, v]) => [k, clean(v)]),
  );
}

const paths = {};
for (const [path, methods] of Object.entries(KEEP)) {
  const item = doc.paths[path];
  if (item === undefined) throw new Error(`${source}: no path ${path}`);
  paths[path] = Object.fromEntries(
    Object.entries(item)
      .filter(([k]) => methods.includes(k) || k === 'parameters')
      .map(([k, v]) => {
        if (!methods.includes(k)) return [k, clean(v)];
        if (item[k] === undefined) throw new Error(`${source}: no ${k} ${path}`);
        return [k, clean(v)];
      }),
  );
}
const components = reachedComponents(doc, paths, clean);
const sorted = sortedComponents(components);
const out = {
  openapi: doc.openapi,
  info: {
    ...doc.info,
    'x-trimmed-by': `connectors/github/trim.mjs from @octokit/openapi@23.0.2 generated/api.github.com.json: ${Object.entries(KEEP)
      .map(([p, m]) => `${m.join(',').toUpperCase()} ${p}`)
      .join('; ')}`,
  },
  servers: doc.servers,
  ...(doc.security !== undefined ? { security: doc.security } : {}),
  components: sorted,
  paths,
};
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
