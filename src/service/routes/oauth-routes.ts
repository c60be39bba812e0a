/** Service-side OAuth: initiate (authenticated) and the provider's callback (public). */
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/authentication.ts';
import type { ServiceContext } from '../context.ts';
import { customerNames } from '../connectors/customers.ts';
import { completeOAuth, initiateOAuth, OAUTH_CALLBACK_PATH, type CallbackQuery, type InitiateBody } from '../connectors/oauth-flow.ts';
import { OAuthCallbackQuerySchema, OAuthInitiateRequestSchema, OAuthInitiateResponseSchema } from '../http/schemas.ts';

export const OAUTH_INITIATE_PATH = '/api/v1/integrations/connectors/oauth/initiate';

export function oauthRoutes(ctx: ServiceContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    app.post<{ Body: InitiateBody }>(
      OAUTH_INITIATE_PATH,
      {
        config: { customerScoped: true },
        preValidation: customerNames(ctx, 'body', { kinds: true }),
        schema: { body: OAuthInitiateRequestSchema, response: { 200: OAuthInitiateResponseSchema } },
      },
      async (request) => {
        const p = principalOf(request);
        const out = await initiateOAuth(ctx, { applicationId: p.applicationId, organizationId: p.organizationId }, request.body);
        request.log.info({ connector_type: request.body.connector_type }, 'OAuth flow started');
        return out;
      },
    );

    app.get<{ Querystring: CallbackQuery }>(
      OAUTH_CALLBACK_PATH,
      { config: { auth: 'public' }, schema: { querystring: OAuthCallbackQuerySchema } },
      async (request, reply) => {
        const r = await completeOAuth(ctx, request.query);
        request.log.info({ connector_type: r.connectorType, outcome: r.outcome }, 'OAuth callback handled');
        request.auditNote = {
          organizationId: r.flow.organizationId,
          action: 'oauth.completed',
          outcome: r.outcome === 'secret' ? 'success' : 'refused',
          resourceType: 'customer',
          resourceId: r.flow.customerName,
          applicationId: r.flow.applicationId,
          customerName: r.flow.customerName,
          details: { connector_type: r.connectorType, ...(r.error !== undefined ? { error: r.error } : {}) },
        };
        // The location carries the single-use secret_id: keep it out of caches and Referer headers.
        return reply.code(302).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').header('location', r.location).send();
      },
    );
  };
}
