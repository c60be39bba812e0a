/**
 * The OpenAPI front end's request pipeline: the OAuth routes, the description's server path, the
 * operation the path names, credentials, then the rate limit, then the request itself (the order
 * the vendors answer in); an operation handler of the caller's, a declared rule, else the store
 * (operations.ts).
 */
import { jwtBearerAssertion } from '../core/jwt-tokens.ts';
import type { RateCounter } from '../core/rate-limit.ts';
import type { Json } from '../description.ts';
import type { SimRequest, SimResponse } from '../sim-server.ts';
import type { Credentials } from './credentials.ts';
import type { ErrorAnswers } from './errors.ts';
import { storeOperation, type StoreParts } from './operations.ts';
import type { RuleAnswers } from './rule-answers.ts';
import { exampleOf, serverBasePath, successHeaders } from './schema.ts';
import { SimulatorError, type Classified, type OpenApiContext } from './types.ts';

export interface HandlerParts extends StoreParts {
  errors: ErrorAnswers;
  credentials: Credentials;
  rules: RuleAnswers;
  counter: RateCounter;
}

export function requestHandler(ctx: OpenApiContext, parts: HandlerParts): (incoming: SimRequest) => SimResponse {
  const { d, sidecar, options, classified, resources, sample } = ctx;
  const { errorResponse } = parts.errors;
  const { oauthRoutes, mintRoute } = parts.credentials;
  const counter = parts.counter;
  // Requests may carry the path of the description's server URL (/api/1.0 of https://app.asana.com/api/1.0).
  const basePath = serverBasePath(d.doc);
  return (incoming) => {
    // The JWT bearer grant on a token endpoint of its own (jwt_tokens.path): the JWT is the form's
    // assertion; another grant there is the OAuth flow's (the same token endpoint), if any.
    if (mintRoute !== undefined && incoming.method === 'POST' && incoming.path === sidecar.jwt_tokens?.path) {
      const grant = jwtBearerAssertion(incoming.rawBody);
      if (!('error' in grant)) return mintRoute(grant.authorization);
      if (oauthRoutes === undefined) return { status: 400, json: { error: 'unsupported_grant_type', error_description: grant.error } };
    }
    const fromOauth = oauthRoutes?.(incoming);
    if (fromOauth !== undefined) return fromOauth;
    const prefixed = basePath !== '' && (incoming.path === basePath || incoming.path.startsWith(`${basePath}/`));
    let req = prefixed ? { ...incoming, path: incoming.path.slice(basePath.length) || '/' } : incoming;
    // rate_limit.per_credential: requests refused for their path or credentials spend nothing (the limit is the account's).
    let rl = counter.rule?.per_credential === true ? { headers: {}, exceeded: false, retry: 0 } : counter.count();
    const withHeaders = (r: SimResponse): SimResponse => ({ ...r, headers: { ...rl.headers, ...(r.headers ?? {}) } });
    let matched = d.match(req.method, req.path);
    // base_path: a path under the account a connector's base URL holds (/envelopes for /v2.1/accounts/<id>/envelopes).
    if (!('op' in matched) && sidecar.base_path !== undefined) {
      const path = sidecar.base_path + (req.path === '/' ? '' : req.path);
      const mounted = d.match(req.method, path);
      if ('op' in mounted) [req, matched] = [{ ...req, path }, mounted];
    }
    if (!('op' in matched)) return withHeaders(errorResponse(matched));
    const { op, pathParams } = matched;
    // Minting from an app's JWT: the operation takes the JWT, not a token (jwt_tokens).
    if (mintRoute !== undefined && op.key === sidecar.jwt_tokens?.operation) return withHeaders(mintRoute(String(req.headers.authorization ?? '')));
    // Credentials, then the rate limit, then the request itself: the order the vendors answer in.
    const refused = parts.credentials.refuse(op, req);
    if (refused !== undefined) return withHeaders(refused);
    const rateLimit = counter.rule;
    if (rateLimit?.per_credential === true) rl = counter.count();
    if (rl.exceeded && rateLimit !== undefined) {
      // Retry-After (seconds), the HTTP standard's wait: until the window ends. The sidecar's
      // exceeded_headers are added; an empty value removes a header (a 429 without Retry-After).
      const limitedHeaders: Record<string, string> = { 'Retry-After': String(rl.retry) };
      for (const [k, v] of Object.entries(rateLimit.exceeded_headers ?? {})) {
        for (const have of Object.keys(limitedHeaders)) if (have.toLowerCase() === k.toLowerCase()) delete limitedHeaders[have];
        if (v !== '') limitedHeaders[k] = v;
      }
      return withHeaders(
        errorResponse(
          { status: 429, code: 'rate_limited', message: `Rate limit of ${rateLimit.limit} requests in ${rateLimit.window_seconds}s exceeded` },
          op,
          limitedHeaders,
        ),
      );
    }
    const checked = d.checkRequest(
      op,
      { pathParams, query: req.query, headers: req.headers, rawBody: req.rawBody },
      { unknownQuery: sidecar.unknown_query ?? 'ignore', skipAuth: true, credentialParams: sidecar.auth?.params },
    );
    if ('status' in checked) return withHeaders(errorResponse(checked, op));
    const origin = `http://${req.headers.host ?? '127.0.0.1'}${prefixed ? basePath : ''}`;
    const body = checked.body !== null && typeof checked.body === 'object' ? (checked.body as Json) : {};
    const handler = options.handlers?.[op.key];
    if (handler !== undefined) {
      try {
        const answered = handler({ req, op, params: pathParams, query: checked.query, body, origin });
        if (answered !== undefined) return withHeaders(answered);
      } catch (e) {
        if (e instanceof SimulatorError)
          return withHeaders(errorResponse({ status: e.status, code: e.code, message: e.message, ...(e.field !== undefined ? { field: e.field } : {}) }, op));
        throw e;
      }
    }
    const ruled = parts.rules.byRule(op, checked.query, body, { origin, path: req.path, headers: req.headers }, pathParams);
    if (ruled !== undefined) return withHeaders(ruled);
    const c = classified.get(op.key) as Classified;
    const r = c.resource === undefined ? undefined : resources.get(c.resource);
    // Other operations answer a sample of their success schema, with the description's example of
    // that success over it where it has one (what the example leaves out keeps its sampled value),
    // and the headers it declares; a success that declares no body answers none (202 Accepted).
    if (r === undefined || c.kind === 'action') {
      const example = sidecar.operations?.[op.key]?.example ?? exampleOf(d, op);
      const sampled = op.responseRef === undefined ? example : sample(op.responseRef);
      const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
      const headers = successHeaders(d, op);
      const json = isObj(sampled) && isObj(example) ? { ...sampled, ...example } : sampled;
      // operations.<op>.collections: an answer holding several resources' records at once (a sync endpoint's).
      for (const [key, name] of Object.entries(sidecar.operations?.[op.key]?.collections ?? {}))
        if (isObj(json)) json[key] = [...(resources.get(name)?.records.values() ?? [])].map((s) => s.record);
      return withHeaders({ status: op.successStatus, json, headers });
    }
    return withHeaders(storeOperation(ctx, parts, { req, op, c, r, pathParams, query: checked.query, body: checked.body, origin }));
  };
}
