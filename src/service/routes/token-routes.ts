/**
 * An application's tokens (token-revocation.ts): GET /api/v1/account/tokens lists the live ones,
 * DELETE /api/v1/account/tokens/{token_id} revokes one, DELETE /api/v1/account/tokens all of
 * them. Application tokens only: scoped (one-customer) tokens are refused (customers.ts).
 */
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/authentication.ts';
import type { ServiceContext } from '../context.ts';
import type { Schema } from '../http/schemas.ts';
import { listTokens, revokeAllTokens, revokeToken } from '../auth/token-revocation.ts';

export const TOKENS_PATH = '/api/v1/account/tokens';

const TokenViewSchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'kind', 'organization_id', 'customer_name', 'created_at', 'expires_at'],
  properties: {
    id: { type: 'string', description: 'tok_… (access tokens) or cs_… (Connect sessions and widget tokens); never the token itself' },
    kind: { enum: ['application', 'scoped', 'connect_session'] },
    organization_id: { type: ['string', 'null'], description: "A scoped token's or session's organization (null: the application's)" },
    customer_name: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    expires_at: { type: 'string', format: 'date-time' },
  },
};

export const TokenListSchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['data'],
  properties: { data: { type: 'array', items: TokenViewSchema } },
};
export const RevokedAllSchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['revoked'],
  properties: {
    revoked: {
      type: 'object',
      additionalProperties: false,
      required: ['access_tokens', 'connect_sessions'],
      properties: { access_tokens: { type: 'integer' }, connect_sessions: { type: 'integer' } },
    },
  },
};
const TokenIdParamsSchema: Schema = { type: 'object', required: ['token_id'], properties: { token_id: { type: 'string', maxLength: 100 } } };

export function tokenRoutes(ctx: ServiceContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    app.get(TOKENS_PATH, { config: { auth: 'application' }, schema: { response: { 200: TokenListSchema } } }, async (request) => ({
      data: await listTokens(ctx, principalOf(request).applicationId),
    }));
    app.delete<{ Params: { token_id: string } }>(
      `${TOKENS_PATH}/:token_id`,
      { config: { auth: 'application' }, schema: { params: TokenIdParamsSchema } },
      async (request, reply) => {
        await revokeToken(ctx, principalOf(request).applicationId, request.params.token_id);
        return reply.code(204).send();
      },
    );
    app.delete(TOKENS_PATH, { config: { auth: 'application' }, schema: { response: { 200: RevokedAllSchema } } }, async (request) => ({
      revoked: await revokeAllTokens(ctx, principalOf(request).applicationId),
    }));
  };
}

export function tokenOpenApiPaths(h: {
  json: (s: Schema) => Schema;
  ref: (name: string) => Schema;
  problems: (...s: number[]) => Record<string, Schema>;
  authed: number[];
}): Record<string, Schema> {
  const tokenId = { name: 'token_id', in: 'path', required: true, schema: { type: 'string' } };
  return {
    [TOKENS_PATH]: {
      get: {
        operationId: 'listTokens',
        summary: "The application's live tokens: access tokens (application, scoped) and Connect sessions, by id (never their values)",
        responses: { 200: { description: 'The tokens, newest first', content: h.json(h.ref('TokenList')) }, ...h.problems(...h.authed) },
      },
      delete: {
        operationId: 'revokeAllTokens',
        summary: "Revoke every token of the application (the caller's own included) and expire its Connect sessions",
        responses: { 200: { description: 'How many were revoked', content: h.json(h.ref('RevokedAll')) }, ...h.problems(...h.authed) },
      },
    },
    [`${TOKENS_PATH}/{token_id}`]: {
      delete: {
        operationId: 'revokeToken',
        summary: 'Revoke one token of the application by id (401 for it on every instance within SWITCHBOARD_LOOKUP_CACHE_MS)',
        parameters: [tokenId],
        responses: { 204: { description: 'Revoked' }, ...h.problems(...h.authed, 404) },
      },
    },
  };
}
