/** POST /api/v1/account/applications/token: client credentials → bearer access token. */
import type { FastifyInstance } from 'fastify';
import { issueAccessToken } from '../accounts.ts';
import type { ServiceContext } from '../context.ts';
import { TokenRequestSchema, TokenResponseSchema } from '../schemas.ts';

export const TOKEN_PATH = '/api/v1/account/applications/token';

export function accountRoutes(ctx: ServiceContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    app.post<{ Body: { client_id: string; client_secret: string } }>(
      TOKEN_PATH,
      { config: { auth: 'public' }, schema: { body: TokenRequestSchema, response: { 200: TokenResponseSchema } } },
      async (request, reply) => {
        const token = await issueAccessToken(ctx.store, { clientId: request.body.client_id, clientSecret: request.body.client_secret, ttlSeconds: ctx.config.tokenTtlSeconds, now: ctx.now() });
        // RFC 6749 §5.1: token responses must not be cached.
        void reply.header('cache-control', 'no-store');
        return token;
      },
    );
  };
}
