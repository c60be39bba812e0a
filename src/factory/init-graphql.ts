/**
 * `switchboard init <type> --from-graphql <sdl> --endpoint <url>`: a manifest scaffolded from a
 * GraphQL schema (SDL), read with graphql-js:
 *
 * - entities from root query fields that return a list of an object type (`boards: [Board]`) or a
 *   Relay connection (`projects(first, after): ProjectConnection` with edges/nodes and pageInfo),
 *   and from such fields of the object a root field returns (`viewer { repositories }`,
 *   `repository(owner, name) { issues }`: entity `repository_issues`, owner and name its params);
 * - get from a root field returning one of that type with an id argument (`project(id: ID!)`), else
 *   `node(id:)` with a fragment on the type, else the parent's field by a key (`issue(number:)`),
 *   else from the list field filtered by `ids` (`first` of the answer, not_found_when it is empty);
 * - create/update from mutations named create<Type>/<type>Create/add<Type> and update<Type>/
 *   <type>Update/edit<Type> (a payload object holding the type is unwrapped);
 * - params from the field arguments (a single `input` object is spread into params and put back
 *   in the variables); selections of every scalar field, and `{ id }` of object fields; deprecated
 *   fields, arguments and input fields are left out (the contract test refuses them);
 * - pagination from pageInfo (endCursor/hasNextPage with first/after), else page or offset args;
 * - incremental sync from a filter argument comparing an updatedAt-like field with gt
 *   (`updated_since` → `filter: {updatedAt: {gt}}`), and removals of archived records when the
 *   list takes includeArchived and the node has archivedAt.
 *
 * Every query is sent as a document with variables (values are never spliced into query text).
 */
import { readFileSync } from 'node:fs';
import type { GraphQLSchema } from 'graphql';
import { buildTolerantSchema } from '../simulator/graphql/sdl.ts';
import { SwitchboardError } from '../errors/index.ts';
import { scaffoldEntity, type EntityScope } from './graphql/entity.ts';
import { defaultSources, entitySources } from './graphql/sources.ts';
import type { Obj } from './graphql/schema.ts';
import type { Guess, Scaffold } from './scaffold.ts';

export interface GraphqlInitOptions {
  type: string;
  entities?: string[] | undefined;
  descriptionPath: string;
  source: string;
  /** The GraphQL endpoint, e.g. https://api.example.com/graphql. */
  endpoint: string;
}

export async function scaffoldFromGraphql(file: string, o: GraphqlInitOptions): Promise<Scaffold> {
  let schema: GraphQLSchema;
  let repaired: string[];
  try {
    ({ schema, warnings: repaired } = buildTolerantSchema(readFileSync(file, 'utf8')));
  } catch (e) {
    throw new SwitchboardError('invalid_params', `Cannot read the GraphQL schema ${file}: ${(e as Error).message}`, { details: { file } });
  }
  let endpoint: URL;
  try {
    endpoint = new URL(o.endpoint);
    if (!/^https?:$/.test(endpoint.protocol)) throw new Error('not http');
  } catch {
    throw new SwitchboardError('invalid_params', `--endpoint must be an http(s) URL, e.g. https://api.example.com/graphql; got "${o.endpoint}"`);
  }
  const guesses: Guess[] = [];
  // Warts the vendor's own server evidently accepts (a field defined twice) are repaired, and said.
  const report: string[] = repaired.map((w) => `schema repaired: ${w}`);
  const guess = (path: (string | number)[], message: string): void => void guesses.push({ path, message });
  const queryType = schema.getQueryType();
  if (!queryType) throw new SwitchboardError('invalid_params', `${file} has no Query type`);
  const mutationType = schema.getMutationType();
  const path = endpoint.pathname === '' ? '/' : endpoint.pathname;

  // Entities: root fields returning lists or connections, and those of the object a root field returns.
  const candidates = entitySources(queryType);
  const available = candidates.map((c) => c.name);
  if (o.entities && o.entities.length > 0) {
    const unknown = o.entities.filter((e) => !available.includes(e));
    if (unknown.length > 0)
      throw new SwitchboardError(
        'invalid_params',
        `--entities: ${unknown.join(', ')} not found in the schema; entities (query fields returning lists or connections, at the root or under a root field returning one object): ${available.join(', ')}`,
        { details: { unknown, valid: available } },
      );
  }
  const chosen = o.entities && o.entities.length > 0 ? o.entities.map((e) => candidates.find((c) => c.name === e)!) : defaultSources(candidates);
  if (chosen.length === 0) throw new SwitchboardError('invalid_params', `No entity found in ${file}: no query field returns a list or a connection`);

  const scope: EntityScope = { guess, report, path, queryType, mutationType };
  const entities: Obj = Object.fromEntries(chosen.map((c) => scaffoldEntity(c, scope)));

  const manifest: Obj = {
    manifest_version: 1,
    type: o.type,
    title: o.type.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase()),
    kind: 'api',
    vendor_description: { path: o.descriptionPath, format: 'graphql', source: o.source },
    base_url: { default: endpoint.origin },
    headers: { Accept: 'application/json' },
    retry: { max_attempts: 4, retry_after_headers: [{ name: 'Retry-After', format: 'seconds' }] },
    auth: [{ name: 'token', type: 'bearer', fields: { token: { type: 'string', secret: true } }, token: '{{credentials.token}}' }],
    errors: {
      message: '{{default body.errors.0.message body.message}}',
      list: { items: '{{body.errors}}', path: "{{join entry.path '/'}}" },
      // GraphQL answers errors in a 200 body.
      in_body: [{ when: '{{body.errors}}', code: 'upstream_error', message: '{{body.errors.0.message}}' }],
    },
    list_meta: { next_page: { type: ['string', 'null'], description: 'Cursor for the next page (after), null on the last page or for page-numbered lists' } },
    entities,
  };
  guess(['title'], 'the product name');
  guess(['kind'], 'what kind of system this is, e.g. work-management, crm, ticketing');
  guess(['auth'], "a GraphQL schema says nothing about auth: a bearer token is assumed (check the vendor's docs: header name, OAuth)");
  guess(['vendor_description', 'source'], 'add the licence the schema is published under (licence:), or do not commit the copy');
  guess(['errors', 'in_body'], "map the vendor's error codes (extensions.code) to upstream_not_found, upstream_rate_limited, ...");
  report.push('auth: not in a GraphQL schema (a bearer token is assumed)');
  report.push("rate limit and error codes: not in a GraphQL schema; add rate_limit and errors.in_body rules from the vendor's documentation");
  return {
    type: o.type,
    manifest,
    guesses,
    report,
    header: [
      `scaffolded by \`switchboard init ${o.type} --from-graphql\` from ${o.source} (endpoint ${o.endpoint}; entities: ${chosen.map((c) => c.name).join(', ')}).`,
    ],
  };
}
