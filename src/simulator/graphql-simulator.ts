/**
 * The generic GraphQL simulator: any GraphQL schema (SDL) becomes a stateful local fake of its API.
 *
 * - Every request is a POST of `{query, variables, operationName}` to the endpoint path; the
 *   document is parsed and validated against the schema, the variables coerced to their declared
 *   types (graphql-js), and refusals answer GraphQL's `{errors: [...]}` with the status the
 *   sidecar gives each error code.
 * - Resources are the object types that root query fields list (`issues: IssueConnection`,
 *   `boards: [Board]`), return one of (`viewer`, `repository(owner, name)`), or whose fields list: each is seeded with deterministic records (values from the field types and
 *   names, ids from a PRNG seeded by `seed` and the type name), related records linked by their
 *   object-typed fields (`Issue.team` names a seeded Team).
 * - Root fields: a Relay connection (`first`/`after`, `nodes`, `edges { node cursor }`,
 *   `pageInfo { hasNextPage endCursor }`) or a list of a resource; one record by `id` or any key
 *   field its arguments name (`repository(owner, name)` by name); `node(id:)`; one record with no
 *   such argument (`viewer`) is the first record of its type. Connection fields of a record
 *   (`Team.issues`) list the records pointing back at it; `Repository.issue(number:)` finds one.
 * - Mutations named `<type>Create`/`create<Type>`, `<type>Update`, `<type>Delete`/`<type>Archive`
 *   and `<type>Unarchive` (and the `create_`/`update_` spellings) change the store (the record by
 *   `id` or `<type>Id`): the input
 *   object's fields set the record's fields of the same name, `<field>Id` links a related record,
 *   `createdAt`/`updatedAt` are kept; a payload type returns the record in its field of the
 *   record's type, with `success: true`.
 * - The sidecar (sidecar.ts) adds what a schema cannot say: accepted tokens and the credential
 *   header, rate limits and their headers, error codes and statuses, page sizes, the record fields
 *   `filter` arguments compare, ordering, archived records, an OAuth flow.
 *
 * The front end's parts live in graphql/ (records, filters, pages, mutations, resolution, the
 * request pipeline, errors); the store, cursors, rate limits, OAuth and templates it shares with
 * the OpenAPI front end in core/.
 */
import { existsSync, readFileSync } from 'node:fs';
import { acceptedTokens } from './core/auth.ts';
import type { OAuthClient } from './core/oauth.ts';
import { RateCounter } from './core/rate-limit.ts';
import { ComplexityBudget } from './graphql/complexity.ts';
import { graphqlErrors } from './graphql/errors.ts';
import { rowFilters } from './graphql/filters.ts';
import { graphqlHandler } from './graphql/handle.ts';
import { mutations } from './graphql/mutations.ts';
import { graphqlPages } from './graphql/pages.ts';
import { graphqlResources, graphqlStore } from './graphql/records.ts';
import { fieldResolverOf } from './graphql/resolve.ts';
import { buildTolerantSchema } from './graphql/sdl.ts';
import type { Clock, GraphqlCtx, GraphqlSimulator, GraphqlSimulatorOptions } from './graphql/types.ts';
import { loadSidecar, type GraphqlSidecar, type Sidecar } from './sidecar.ts';
import { startSimulator } from './sim-server.ts';

export type { GraphqlContext, GraphqlResource, GraphqlSimulator, GraphqlSimulatorOptions, RateLimit } from './graphql/types.ts';

/** Start a simulator of a GraphQL schema on a loopback port. */
export async function startGraphqlSimulator(options: GraphqlSimulatorOptions): Promise<GraphqlSimulator> {
  const ctx = context(options);
  const { sidecar, g, clock } = ctx;
  const store = graphqlStore(sidecar, ctx.seed, ctx.resources);
  store.reseed();
  const pages = graphqlPages(ctx, ctx.errors);
  const { fieldResolver, lists } = fieldResolverOf(ctx, { store, filters: rowFilters(ctx, ctx.errors), pages, mutate: mutations(ctx, store) });
  const { tokens, check } = acceptedTokens(options.tokens, sidecar);
  const oauth: OAuthClient = {
    clientId: options.oauthClient?.clientId ?? 'sim_client',
    clientSecret: options.oauthClient?.clientSecret ?? 'sim_secret',
    deny: false,
  };
  const counter = new RateCounter(options.rateLimit === false ? undefined : (options.rateLimit ?? sidecar.rate_limit), clock.now);
  const complexity = g.complexity === undefined ? undefined : new ComplexityBudget(g.complexity, clock.now);
  const handle = graphqlHandler(ctx, { auth: { tokens, check, oauth }, counter, complexity, cursorPage: pages.cursorPage, fieldResolver, lists });
  const sim = await startSimulator(handle, {
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.host !== undefined ? { host: options.host } : {}),
  });
  return {
    ...sim,
    schema: ctx.schema,
    sidecar,
    resources: ctx.resources,
    seed: ctx.seed,
    tokens,
    oauth,
    clock,
    complexity,
    clearCursors: pages.clearCursors,
    reseed: store.reseed,
    setRateLimit: (limit) => counter.set(limit === false ? undefined : limit),
    resetRateLimit: () => counter.reset(),
    reset: () => {
      sim.reset();
      counter.reset();
    },
  };
}

/** The schema, sidecar and options, the simulated clock, the resources and the error answers. */
function context(options: GraphqlSimulatorOptions): GraphqlCtx {
  const schema =
    typeof options.schema === 'string'
      ? buildTolerantSchema(existsSync(options.schema) ? readFileSync(options.schema, 'utf8') : options.schema).schema
      : options.schema;
  const sidecar: Sidecar = typeof options.sidecar === 'string' ? loadSidecar(options.sidecar) : (options.sidecar ?? {});
  const g: GraphqlSidecar = sidecar.graphql ?? {};
  const clock: Clock = {
    offsetMs: 0,
    now: (): number => Date.now() + clock.offsetMs,
    advance: (ms: number): void => {
      clock.offsetMs += ms;
    },
  };
  const queryType = schema.getQueryType();
  if (queryType === null || queryType === undefined) throw new Error('the GraphQL schema has no Query type');
  const mutationType = schema.getMutationType() ?? undefined;
  const errors = graphqlErrors(sidecar, g);
  return {
    schema,
    sidecar,
    g,
    options,
    seed: options.seed ?? 1,
    clock,
    queryType,
    mutationType,
    resources: graphqlResources(schema, sidecar, queryType),
    errors,
  };
}
