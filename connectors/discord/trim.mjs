#!/usr/bin/env node
// Trims Discord's own OpenAPI 3.1 description of its HTTP API v10 (github.com/discord/discord-api-spec,
// MIT, specs/openapi.json) to the operations connectors/discord/connector.yaml uses, with every
// component they reach through $ref, written as JSON. No npm package ships that file (the npm
// package discord-api-spec carries TypeScript types generated from it, not the description), so the
// source is the repository at a named commit. Discord's prose (descriptions and summaries outside
// example values) is left out: what is committed is the API's structure, not Discord's text.
//
//   git clone https://github.com/discord/discord-api-spec "$d" && git -C "$d" checkout 74fda0fad044407ea280043a03ffc9bc64c4e49e
//   node connectors/discord/trim.mjs "$d/specs/openapi.json" > connectors/discord/openapi.json
import { readFileSync } from 'node:fs';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';

/** The operations the manifest uses, by path. */
const KEEP = {
  '/users/@me': ['get'],
  '/users/@me/guilds': ['get'],
  '/guilds/{guild_id}': ['get'],
  '/guilds/{guild_id}/channels': ['get', 'post'],
  '/channels/{channel_id}': ['get'],
  '/channels/{channel_id}/messages': ['get', 'post'],
  '/channels/{channel_id}/messages/{message_id}': ['get', 'patch'],
};

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: trim.mjs <path to discord-api-spec/specs/openapi.json>\n');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(source, 'utf8'));

/** Every description and summary outside example values left out. */
function clean(value, inExample = false) {
  if (Array.isArray(value)) return value.map((v) => clean(v, inExample));
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    if (!inExample && (k === 'description' || k === 'summary') && typeof v === 'string') continue;
    out[k] = clean(v, inExample || ['example', 'examples', 'default', 'enum', 'const'].includes(k));
  }
  return out;
}

const paths = {};
for (const [path, methods] of Object.entries(KEEP)) {
  const item = doc.paths[path];
  if (item === undefined) throw new Error(`${source}: no path ${path}`);
  for (const m of methods) if (item[m] === undefined) throw new Error(`${source}: no ${m} ${path}`);
  paths[path] = clean(Object.fromEntries(Object.entries(item).filter(([k]) => methods.includes(k) || k === 'parameters')));
}
const components = sortedComponents(reachedComponents(doc, paths, clean));
// The security schemes the kept operations name (reached by name, not by $ref).
components.securitySchemes = clean(doc.components.securitySchemes);
const out = {
  openapi: doc.openapi,
  info: {
    ...clean(doc.info),
    'x-prose-removed-by': 'connectors/discord/trim.mjs: descriptions and summaries are left out (the structure is what the connector and its simulator read)',
    'x-trimmed-by': `connectors/discord/trim.mjs from discord/discord-api-spec specs/openapi.json: ${Object.entries(KEEP)
      .map(([p, m]) => `${m.join(',').toUpperCase()} ${p}`)
      .join('; ')}`,
  },
  servers: doc.servers,
  ...(doc.security !== undefined ? { security: doc.security } : {}),
  components,
  paths,
};
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
