/**
 * The GraphQL front end's request pipeline: the OAuth routes, the endpoint and method, the
 * credential header, the rate limit, the body, parse and validation (graphql-ruby wording when the
 * sidecar says so), the query-cost budget, then execution with the field resolver.
 */
import { randomUUID } from 'node:crypto';
import { defaultTypeResolver, execute, getOperationAST, parse, validate, type DocumentNode, type GraphQLError, type GraphQLFieldResolver } from 'graphql';
import { headerToken, type AcceptedTokens } from '../core/auth.ts';
import { oauthServer, type OAuthClient } from '../core/oauth.ts';
import type { RateCounter } from '../core/rate-limit.ts';
import { parseJson, type SimRequest, type SimResponse } from '../sim-server.ts';
import { queryCost, type ComplexityBudget } from './complexity.ts';
import { render } from './errors.ts';
import type { graphqlLists } from './lists.ts';
import { parseErrorEntry, validationErrorEntry, variableErrorEntry } from './ruby.ts';
import type { GraphqlContext, GraphqlCtx, Rec } from './types.ts';

export interface HandlerParts {
  auth: AcceptedTokens & { oauth: OAuthClient };
  counter: RateCounter;
  complexity: ComplexityBudget | undefined;
  cursorPage: GraphqlContext['cursorPage'];
  fieldResolver: GraphQLFieldResolver<unknown, GraphqlContext>;
  lists: ReturnType<typeof graphqlLists>;
}

export function graphqlHandler(ctx: GraphqlCtx, parts: HandlerParts): (req: SimRequest) => Promise<SimResponse> {
  const { schema, sidecar, g, options, clock } = ctx;
  const { entry, statusOf, requestError } = ctx.errors;
  const { auth, counter, complexity, cursorPage, fieldResolver, lists } = parts;
  const { tokens, check: checkTokens } = auth;
  const endpoint = g.path ?? '/graphql';
  const ruby = g.dialect === 'graphql-ruby';
  const authHeader = (sidecar.auth?.header ?? 'authorization').toLowerCase();

  const oauthRoutes = sidecar.oauth === undefined ? undefined : oauthServer(sidecar.oauth, auth.oauth, tokens, undefined, clock.now);
  const budgetHeaders = (): Record<string, string> =>
    complexity === undefined
      ? {}
      : Object.fromEntries(
          Object.entries(g.complexity?.headers ?? {}).map(([k, t]) => [
            k,
            String(
              render(t, {
                budget: complexity.budget,
                window_seconds: complexity.windowSeconds,
                remaining: complexity.remaining(),
                reset: complexity.resetInSeconds(),
              }),
            ),
          ]),
        );

  /** The type of a stored record (what `node(id:)` answers): the resource holding it. */
  const storedType = (v: unknown): string | undefined => {
    const id = v !== null && typeof v === 'object' ? (v as Rec)['id'] : undefined;
    return id === undefined ? undefined : [...ctx.resources.values()].find((r) => r.records.get(String(id)) === v)?.type.name;
  };
  const handle = async (req: SimRequest): Promise<SimResponse> => {
    const fromOauth = oauthRoutes?.(req);
    if (fromOauth !== undefined) return fromOauth;
    const rl = counter.count();
    let authenticated = false;
    const withHeaders = (r: SimResponse): SimResponse => {
      const json =
        authenticated && g.envelope !== undefined && r.json !== null && typeof r.json === 'object'
          ? { ...(r.json as Rec), ...(render(g.envelope, { request_id: randomUUID(), ...(options.vars?.() ?? {}) }) as Rec) }
          : r.json;
      return { ...r, json, headers: { ...rl.headers, ...(authenticated ? budgetHeaders() : {}), ...(r.headers ?? {}) } };
    };
    if (req.path !== endpoint && req.path !== `${endpoint}/`)
      return withHeaders(requestError('not_found', `No GraphQL endpoint at ${req.path}; it is ${endpoint}`, 404));
    if (req.method !== 'POST') return withHeaders(requestError('method_not_allowed', `${req.method} is not allowed; POST a JSON {query, variables}`, 405));
    const presented = headerToken(req.headers[authHeader]);
    if (presented === undefined || (checkTokens && !tokens.has(presented))) {
      return withHeaders(
        requestError('unauthorized', sidecar.auth?.message ?? (presented === undefined ? 'Authentication required' : 'Invalid credentials'), 401),
      );
    }
    authenticated = true;
    const rateLimit = counter.rule;
    if (rl.exceeded && rateLimit !== undefined) {
      const r = requestError('rate_limited', `Rate limit of ${rateLimit.limit} requests in ${rateLimit.window_seconds}s exceeded`, 429, {
        retry_in_seconds: rl.retry,
      });
      return withHeaders({ ...r, headers: { 'Retry-After': String(rl.retry) } });
    }
    const body = parseJson(req.rawBody);
    if (body === null || typeof body !== 'object' || typeof (body as Rec)['query'] !== 'string' || ((body as Rec)['query'] as string).trim() === '') {
      return withHeaders(requestError('bad_request', 'The body must be JSON {query, variables?, operationName?} with query a string'));
    }
    const { query, operationName } = body as { query: string; operationName?: unknown };
    // Variables may come as an object or as JSON text.
    let variables = (body as Rec)['variables'];
    if (typeof variables === 'string') variables = variables.trim() === '' ? undefined : (parseJson(variables) ?? 'invalid');
    if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables)))
      return withHeaders(requestError('bad_request', 'variables must be an object'));
    const invalid = (entries: Rec[]): SimResponse => withHeaders({ status: statusOf('invalid', 400), json: { errors: entries } });
    let doc: DocumentNode;
    try {
      doc = parse(query);
    } catch (e) {
      if (ruby) return invalid([parseErrorEntry(e as GraphQLError) as unknown as Rec]);
      return withHeaders(requestError('invalid', (e as GraphQLError).message));
    }
    const problems = validate(schema, doc);
    if (problems.length > 0)
      return invalid(problems.map((p) => (ruby ? (validationErrorEntry(p, doc) as unknown as Rec) : entry('invalid', p.message, statusOf('invalid', 400)))));
    const op = getOperationAST(doc, typeof operationName === 'string' ? operationName : undefined);
    let charged: GraphqlContext['complexity'];
    if (complexity !== undefined && g.complexity !== undefined && op !== null && op !== undefined) {
      const cost = queryCost(schema, doc, op, (variables ?? {}) as Rec, g.complexity);
      if (cost > complexity.maxQuery) {
        const vars = { complexity: cost, max_complexity: complexity.maxQuery };
        return withHeaders(
          requestError(
            'too_complex',
            String(
              render(g.complexity.messages?.too_complex ?? 'Query has complexity of {{complexity}}, which exceeds max complexity of {{max_complexity}}', vars),
            ),
            200,
            vars,
          ),
        );
      }
      const c = complexity.charge(cost);
      if (c === null) {
        const retry = complexity.resetInSeconds();
        const r = requestError('complexity_exhausted', g.complexity.messages?.exhausted ?? 'Complexity budget exhausted', 429, { retry_in_seconds: retry });
        return withHeaders({ ...r, headers: { 'Retry-After': String(retry) } });
      }
      charged = { ...c, query: cost, reset_in_x_seconds: complexity.resetInSeconds() };
    }
    const asked = g.versions === undefined ? undefined : String(req.headers[g.versions.header.toLowerCase()] ?? '').trim();
    const contextValue: GraphqlContext = {
      version: g.versions === undefined ? undefined : g.versions.served[asked as string] !== undefined ? asked : g.versions.default,
      now: clock.now,
      complexity: charged,
      cursorPage,
    };
    const result = await execute({
      schema,
      document: doc,
      variableValues: (variables ?? {}) as Rec,
      operationName: typeof operationName === 'string' ? operationName : undefined,
      fieldResolver,
      typeResolver: (v, c, i, t) => options.typeResolvers?.[t.name]?.(v) ?? lists.typeOf(t.name, v) ?? storedType(v) ?? defaultTypeResolver(v, c, i, t),
      contextValue,
      rootValue: {},
    });
    if (result.data === undefined || (result.data === null && result.errors !== undefined && result.errors.every((e) => e.path === undefined))) {
      return invalid(
        (result.errors ?? []).map((e) => (ruby ? (variableErrorEntry(e) as unknown as Rec) : entry('invalid', e.message, statusOf('invalid', 400)))),
      );
    }
    const errors = (result.errors ?? []).map((e) => ({
      message: e.message,
      ...(e.path !== undefined ? { path: e.path } : {}),
      ...(e.extensions !== undefined && Object.keys(e.extensions).length > 0 ? { extensions: e.extensions } : {}),
    }));
    const codes = (result.errors ?? [])
      .map((e) => (e.originalError as (Error & { simCode?: string }) | undefined)?.simCode ?? (e as GraphQLError & { simCode?: string }).simCode)
      .filter((c): c is string => c !== undefined);
    const status = codes.length > 0 ? statusOf(codes[0] as string, 200) : 200;
    return withHeaders({ status, json: { data: result.data, ...(errors.length > 0 ? { errors } : {}) } });
  };
  return handle;
}
