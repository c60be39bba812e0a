#!/usr/bin/env node
// Trims Attio's own OpenAPI 3.1 description of its REST API v2 (served at
// https://api.attio.com/openapi/api; Attio publishes it on no package registry) to the operations
// connectors/attio/connector.yaml uses, with every component they reach through $ref, written as
// JSON. The copy read is the one Speakeasy's generator fetched into interfere-inc/attio
// (.speakeasy/out.openapi.yaml, commit 55d8fe5 of 2 March 2026): Attio's text with Speakeasy's
// overlay, which only adds x-speakeasy-* naming keys; those are dropped here, and so is Attio's prose
// (descriptions and summaries): what is committed is the API's structure, not Attio's text.
//
//   git show 55d8fe5:.speakeasy/out.openapi.yaml > /tmp/attio.yaml   # in a clone of interfere-inc/attio
//   node connectors/attio/trim.mjs /tmp/attio.yaml > connectors/attio/openapi.json
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';

/** The operations the manifest uses, by path. */
const KEEP = {
  '/v2/self': ['get'],
  '/v2/objects': ['get'],
  '/v2/objects/{object}': ['get'],
  '/v2/objects/{object}/records/query': ['post'],
  '/v2/objects/{object}/records': ['post', 'put'],
  '/v2/objects/{object}/records/{record_id}': ['get', 'patch'],
  '/v2/lists': ['get'],
  '/v2/lists/{list}': ['get'],
  '/v2/lists/{list}/entries/query': ['post'],
  '/v2/lists/{list}/entries': ['post', 'put'],
  '/v2/lists/{list}/entries/{entry_id}': ['get', 'patch'],
  '/v2/notes': ['get', 'post'],
  '/v2/notes/{note_id}': ['get'],
  '/v2/tasks': ['get', 'post'],
  '/v2/tasks/{task_id}': ['get', 'patch'],
  '/v2/workspace_members': ['get'],
  '/v2/workspace_members/{workspace_member_id}': ['get'],
  '/v2/webhooks': ['post'],
};

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: trim.mjs <path to Attio openapi (YAML or JSON)>\n');
  process.exit(2);
}
const doc = parse(readFileSync(source, 'utf8'), { maxAliasCount: -1 });

/**
 * Speakeasy's keys dropped, and Attio's prose (every description and summary outside example
 * values) left out: what we keep is the structure the connector and its simulator read (paths,
 * parameters, schemas, enums, examples), not Attio's sentences.
 */
function clean(value, inExample = false) {
  if (Array.isArray(value)) return value.map((v) => clean(v, inExample));
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('x-speakeasy')) continue;
    if (!inExample && (k === 'description' || k === 'summary') && typeof v === 'string') continue;
    out[k] = clean(v, inExample || ['example', 'examples', 'default', 'enum', 'const'].includes(k));
  }
  return out;
}

/**
 * Attio writes its record value schemas inline in every operation (each about 27 kB: seventeen
 * attribute types), so the same subtree repeats a dozen times. Each schema of at least 2,000
 * characters that occurs more than once becomes one schema under components (named by what it
 * describes, marked x-hoisted-by) and a $ref at each place: the same schemas, a fifth of the size.
 */
function hoistRepeated(root, components) {
  const schemas = (components.schemas ??= {});
  const isSchema = (v, key) =>
    !Array.isArray(v) &&
    v.$ref === undefined &&
    v.content === undefined &&
    !['properties', 'responses', 'paths', 'content', 'application/json', 'schema'].includes(key) &&
    !/^\d{3}$|^\//.test(key);
  for (;;) {
    const seen = new Map();
    const walk = (v, key, name) => {
      if (v === null || typeof v !== 'object') return;
      const text = JSON.stringify(v);
      if (text.length >= 2000 && isSchema(v, key)) {
        const e = seen.get(text) ?? { count: 0, name };
        e.count += 1;
        seen.set(text, e);
      }
      for (const [k, x] of Object.entries(v)) walk(x, Array.isArray(v) ? key : k, key === 'properties' ? k : name);
    };
    walk(root, 'paths', 'body');
    walk(schemas, 'properties', 'body');
    const best = [...seen].filter(([, e]) => e.count > 1).sort(([a], [b]) => b.length - a.length)[0];
    if (best === undefined) return;
    const [text, e] = best;
    const schema = JSON.parse(text);
    const ids = Object.keys(schema.properties?.id?.properties ?? {});
    // Named after its own id (a record's id.record_id), else what it is, else the property holding it.
    const own = ids.at(-1)?.replace(/_id$/, '');
    const base = ids.length > 1 && own !== undefined ? own : schema.items?.oneOf !== undefined ? 'attribute-values' : e.name.replace(/_/g, '-');
    let name = base;
    for (let i = 2; schemas[name] !== undefined; i += 1) name = `${base}-${i}`;
    schemas[name] = { ...schema, 'x-hoisted-by': 'connectors/attio/trim.mjs' };
    const ref = { $ref: `#/components/schemas/${name}` };
    const replace = (v) => {
      if (v === null || typeof v !== 'object') return v;
      if (!Array.isArray(v) && JSON.stringify(v) === text) return ref;
      for (const [k, x] of Object.entries(v)) v[k] = replace(x);
      return v;
    };
    for (const [k, x] of Object.entries(root)) root[k] = replace(x);
    for (const [k, x] of Object.entries(schemas)) if (k !== name) schemas[k] = replace(x);
  }
}

const paths = {};
for (const [path, methods] of Object.entries(KEEP)) {
  const item = doc.paths[path];
  if (item === undefined) throw new Error(`${source}: no path ${path}`);
  for (const m of methods) if (item[m] === undefined) throw new Error(`${source}: no ${m} ${path}`);
  paths[path] = clean(Object.fromEntries(Object.entries(item).filter(([k]) => methods.includes(k) || k === 'parameters')));
}
const components = sortedComponents(reachedComponents(doc, paths, clean));
hoistRepeated(paths, components);
// The security schemes the kept operations name (reached by name, not by $ref).
components.securitySchemes = clean(doc.components.securitySchemes);
const out = {
  openapi: doc.openapi,
  info: {
    ...clean(doc.info),
    'x-prose-removed-by': 'connectors/attio/trim.mjs: descriptions and summaries are left out (the structure is what the connector and its simulator read)',
    'x-trimmed-by': `connectors/attio/trim.mjs from Attio's openapi (api.attio.com/openapi/api, version ${doc.info.version}): ${Object.entries(KEEP)
      .map(([p, m]) => `${m.join(',').toUpperCase()} ${p}`)
      .join('; ')}`,
  },
  servers: doc.servers,
  ...(doc.security !== undefined ? { security: doc.security } : {}),
  components,
  paths,
};
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
