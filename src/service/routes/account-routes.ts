/** POST /api/v1/account/applications/token: client credentials → bearer access token. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { SwitchboardError } from '../../errors/index.ts';
import { issueAccessToken, issueScopedToken } from '../auth/accounts.ts';
import { principalOf } from '../auth/authentication.ts';
import { writeRules, type AccessRules } from '../auth/permissions.ts';
import { sha256Hex } from '../auth/secrets.ts';
import { accessTokenId } from '../auth/token-revocation.ts';
import type { ServiceContext } from '../context.ts';
import { customerNames } from '../connectors/customers.ts';
import { TokenRequestSchema, TokenResponseSchema } from '../http/schemas.ts';
import { ScopedTokenRequestSchema, ScopedTokenResponseSchema, WidgetTokenRequestSchema, WidgetTokenResponseSchema } from '../http/account-schemas.ts';
import { createConnectSession, type CreateSessionBody } from '../connect/connect-sessions.ts';

export const TOKEN_PATH = '/api/v1/account/applications/token';
export const SCOPED_TOKEN_PATH = '/api/v1/account/applications/scoped-token';
export const WIDGET_TOKEN_PATH = '/api/v1/account/applications/widget-token';

/**
 * Only an application's own token mints tokens: a scoped token asking for another would renew
 * itself forever (S1 → S2 → S3), so its documented lifetime would not hold. Widget tokens are
 * Connect sessions, never bearer tokens, so they reach no route that mints.
 */
function refuseMintingByScopedToken(request: FastifyRequest): void {
  if (principalOf(request).customerName !== null) {
    throw new SwitchboardError('token_mint_forbidden', "A scoped token cannot mint tokens (scoped or widget); ask with the application's own access token");
  }
}

export function accountRoutes(ctx: ServiceContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    // Secret guessing: limited per client id and (ten times looser, for NATs) per source address.
    const perMinute = ctx.config.tokenRateLimitPerMinute;
    const byClient = perMinute > 0 ? ctx.limits.keyed('token-client', perMinute) : null;
    const byAddress = perMinute > 0 ? ctx.limits.keyed('token-address', perMinute * 10) : null;
    app.post<{ Body: { client_id: string; client_secret: string } }>(
      TOKEN_PATH,
      { config: { auth: 'public' }, schema: { body: TokenRequestSchema, response: { 200: TokenResponseSchema } } },
      async (request, reply) => {
        if (byClient !== null && byAddress !== null) {
          for (const [limiter, key, what] of [
            [byAddress, request.ip, 'this address'],
            [byClient, request.body.client_id, 'this client id'],
          ] as const) {
            const d = await limiter.take(key);
            if (!d.allowed) {
              throw new SwitchboardError(
                'token_rate_limited',
                `More than ${limiter.perMinute} token requests per minute from ${what}; retry after ${d.retryAfterSeconds} s`,
                {
                  details: { limit_per_minute: limiter.perMinute, retry_after_seconds: d.retryAfterSeconds, retry_after_ms: d.retryAfterSeconds * 1000 },
                },
              );
            }
          }
        }
        const token = await issueAccessToken(ctx.store, {
          clientId: request.body.client_id,
          clientSecret: request.body.client_secret,
          ttlSeconds: ctx.config.tokenTtlSeconds,
          now: ctx.now(),
        });
        // RFC 6749 §5.1: token responses must not be cached.
        void reply.header('cache-control', 'no-store');
        return token;
      },
    );

    // A token limited to one customer of the caller's organization (customers.ts enforces it).
    // A scoped token may not ask for another token (403 token_mint_forbidden), for any customer.
    app.post<{ Body: { customer_name: string; permissions?: AccessRules } }>(
      SCOPED_TOKEN_PATH,
      {
        config: { customerScoped: true },
        preValidation: customerNames(ctx, 'body'),
        schema: { body: ScopedTokenRequestSchema, response: { 200: ScopedTokenResponseSchema } },
      },
      async (request, reply) => {
        refuseMintingByScopedToken(request);
        const p = principalOf(request);
        const issued = await issueScopedToken(ctx.store, {
          applicationId: p.applicationId,
          organizationId: p.organizationId,
          customerName: request.body.customer_name,
          ttlSeconds: ctx.config.tokenTtlSeconds,
          now: ctx.now(),
        });
        if (request.body.permissions !== undefined)
          await writeRules(ctx, p.applicationId, accessTokenId(sha256Hex(issued.access_token)), request.body.permissions);
        request.log.info({ customer_scoped: true }, 'scoped token issued');
        void reply.header('cache-control', 'no-store');
        return { ...issued, token: issued.access_token, customer_name: request.body.customer_name };
      },
    );

    // Airbyte's widget token: a Connect session (connect/connect-sessions.ts) restricted to one embedding origin.
    app.post<{ Body: CreateSessionBody & { allowed_origin: string } }>(
      WIDGET_TOKEN_PATH,
      {
        config: { customerScoped: true },
        preValidation: customerNames(ctx, 'body'),
        schema: { body: WidgetTokenRequestSchema, response: { 200: WidgetTokenResponseSchema } },
      },
      async (request, reply) => {
        refuseMintingByScopedToken(request);
        const p = principalOf(request);
        const session = await createConnectSession(ctx, { applicationId: p.applicationId, organizationId: p.organizationId }, request.body);
        request.log.info({ allowed_origin: request.body.allowed_origin }, 'widget token (connect session) created');
        void reply.header('cache-control', 'no-store');
        return { ...session, allowed_origin: new URL(request.body.allowed_origin).origin };
      },
    );
  };
}
