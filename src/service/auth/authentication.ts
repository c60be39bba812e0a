/**
 * Bearer authentication, organization resolution and the per-organization rate limit, run as
 * an onRequest hook — before the body is read, so a caller without a valid token learns
 * nothing about the endpoint (not even whether its body would parse).
 *
 * Route config `auth`: 'public' (no token), 'application' (a token; no organization needed),
 * default 'organization' (a token and one organization the application may use).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { problem, sendProblem } from '../http/problem.ts';
import type { RateDecision } from '../limits/request-rate-limiter.ts';
import { organizationLimitKey, type KeyedLimiter } from '../limits/shared-limits.ts';
import { sha256Hex } from './secrets.ts';
import type { ServiceContext } from '../context.ts';
import { LookupCache } from '../connectors/lookup-cache.ts';
import type { TokenPrincipal } from '../../store/index.ts';

export type AuthMode = 'public' | 'application' | 'organization';

export interface Principal {
  applicationId: string;
  /** Empty for 'application' routes when the application has several organizations. */
  organizationId: string;
  organizationIds: string[];
  /** A scoped token's one customer (null: the application's full access); see customers.ts. */
  customerName: string | null;
  /** The application was created to speak Airbyte's envelope (airbyte-envelope.ts). */
  airbyteEnvelope: boolean;
  /** The application's pass-through proxy access: 'on', 'read' (GET/HEAD only) or 'off' (proxy-access.ts). */
  proxyAccess: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    auth?: AuthMode;
    /** The route keeps a scoped (one-customer) token to its customer itself; other routes without a connector_id refuse such tokens (customers.ts). */
    customerScoped?: boolean;
  }
}

/** The principal of an authenticated route (the hook guarantees it). */
export function principalOf(request: FastifyRequest): Principal {
  if (request.principal === null) throw new Error('route has no principal: is it marked public?');
  return request.principal;
}

const BEARER = /^Bearer[ \t]+([A-Za-z0-9._~+/=-]+)[ \t]*$/i;

/** RFC 6750 §3 challenge. */
function challenge(error?: 'invalid_token', description?: string): Record<string, string> {
  const parts = ['Bearer realm="switchboard"'];
  if (error !== undefined) parts.push(`error="${error}"`);
  if (description !== undefined) parts.push(`error_description="${description}"`);
  return { 'www-authenticate': parts.join(', ') };
}

function organizationHeaderCount(raw: string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === 'x-organization-id') n++;
  return n;
}

/** What a caller over the per-organization limit is told (a problem here, a tool error on POST /mcp). */
export function rateLimitRefusal(perMinute: number, d: RateDecision): { message: string; details: { limit_per_minute: number; retry_after_seconds: number } } {
  return {
    message: `More than ${perMinute} requests per minute for this organization; retry after ${d.retryAfterSeconds} s`,
    details: { limit_per_minute: perMinute, retry_after_seconds: d.retryAfterSeconds },
  };
}

/** The onRequest hook. */
export function authenticationHook(ctx: ServiceContext, limiter: KeyedLimiter | null) {
  // Principals by token (lookup-cache.ts: reused for at most lookupCacheMs, so a deleted token
  // row stops working within that; expiry is still checked on every request).
  const principals = new LookupCache<TokenPrincipal & { expiresAtMs: number }>({ ttlMs: ctx.config.lookupCacheMs, now: ctx.now });
  const lookup = async (token: string) => {
    const found = await ctx.store.findTokenPrincipal(sha256Hex(token));
    return found === undefined ? undefined : { ...found, expiresAtMs: Date.parse(found.expiresAt) };
  };
  /** Answered (a refusal sent) or undefined: go on. */
  type Outcome = FastifyReply | undefined;
  const refuseUnknown = (request: FastifyRequest, reply: FastifyReply): FastifyReply =>
    sendProblem(request, reply, problem('unauthorized', 'The access token is not valid'), challenge('invalid_token', 'unknown token'));
  /**
   * The hook, callback style: a request whose token is cached and that has no rate limit to take
   * goes through without a promise (one fewer microtask hop per request); a token lookup or the
   * limiter's take continue asynchronously. A refusal is sent and `done` is not called (Fastify's
   * contract for answering from a callback hook).
   */
  return function authenticate(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
    let out: Outcome | Promise<Outcome>;
    try {
      out = authenticateRequest(request, reply);
    } catch (e) {
      done(e as Error);
      return;
    }
    if (out === undefined) done();
    else if (out instanceof Promise)
      out.then(
        (r) => (r === undefined ? done() : undefined),
        (e: unknown) => done(e as Error),
      );
  };

  function authenticateRequest(request: FastifyRequest, reply: FastifyReply): Outcome | Promise<Outcome> {
    const mode: AuthMode = request.routeOptions.config.auth ?? 'organization';
    if (mode === 'public') return undefined;
    const header = request.headers.authorization;
    if (header === undefined || header === '') {
      return sendProblem(
        request,
        reply,
        problem('unauthorized', 'Send Authorization: Bearer <access token> (from POST /api/v1/account/applications/token)'),
        challenge(),
      );
    }
    const m = BEARER.exec(header);
    if (!m)
      return sendProblem(
        request,
        reply,
        problem('unauthorized', 'The Authorization header must be "Bearer <access token>"'),
        challenge('invalid_token', 'malformed'),
      );
    const token = m[1] as string;
    const cached = principals.peek(token);
    if (cached !== undefined) return authorize(request, reply, mode, cached);
    return principals
      .get(token, () => lookup(token))
      .then((found) => (found === undefined ? refuseUnknown(request, reply) : authorize(request, reply, mode, found)));
  }

  function authorize(
    request: FastifyRequest,
    reply: FastifyReply,
    mode: AuthMode,
    found: TokenPrincipal & { expiresAtMs: number },
  ): Outcome | Promise<Outcome> {
    if (found.expiresAtMs <= ctx.now()) {
      return sendProblem(request, reply, problem('unauthorized', 'The access token has expired; get a new one'), challenge('invalid_token', 'expired'));
    }
    const orgs = found.organizationIds;
    let organizationId = '';
    const asked = request.headers['x-organization-id'];
    // Node joins a repeated header into "a, b" (so only a value with a comma can be several): count the raw occurrences then.
    if (Array.isArray(asked) || (asked !== undefined && asked.includes(',') && organizationHeaderCount(request.raw.rawHeaders) > 1)) {
      return sendProblem(
        request,
        reply,
        problem('invalid_request', 'Send X-Organization-Id once', { errors: [{ path: 'header:x-organization-id', message: 'appears more than once' }] }),
      );
    }
    if (asked !== undefined && asked !== '') {
      if (!orgs.includes(asked)) return sendProblem(request, reply, problem('organization_forbidden', `This application cannot access organization ${asked}`));
      organizationId = asked;
    } else if (orgs.length === 1) {
      organizationId = orgs[0] as string;
    } else if (mode === 'organization') {
      if (orgs.length === 0) return sendProblem(request, reply, problem('organization_forbidden', 'This application has access to no organization'));
      return sendProblem(
        request,
        reply,
        problem('organization_required', 'This application can access several organizations: send X-Organization-Id with one of them', {
          errors: [{ path: 'header:x-organization-id', message: 'is required' }],
          details: { organization_ids: orgs },
        }),
      );
    }
    const principal: Principal = {
      applicationId: found.applicationId,
      organizationId,
      organizationIds: orgs,
      customerName: found.customerName,
      airbyteEnvelope: found.envelope === 'airbyte',
      proxyAccess: found.proxyAccess,
    };
    if (limiter === null) {
      request.principal = principal;
      return undefined;
    }
    // Per organization; application-level routes without one count against the application.
    return limiter.take(organizationLimitKey(organizationId, found.applicationId)).then((d) => {
      if (!d.allowed) {
        const r = rateLimitRefusal(limiter.perMinute, d);
        return sendProblem(request, reply, problem('rate_limited', r.message, { details: r.details }), { 'retry-after': String(d.retryAfterSeconds) });
      }
      request.principal = principal;
      return undefined;
    });
  }
}
