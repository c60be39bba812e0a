/** /healthz (process up), /readyz (database reachable) and /openapi.json. Public. */
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context.ts';
import { buildOpenApiDocument } from '../openapi.ts';
import { problem, sendProblem } from '../http/problem.ts';
import { HealthSchema } from '../http/schemas.ts';

export function metaRoutes(ctx: ServiceContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    const document = buildOpenApiDocument(undefined, ctx.registry);
    app.get('/healthz', { config: { auth: 'public' }, schema: { response: { 200: HealthSchema } } }, async () => ({ status: 'ok' }));
    app.get('/readyz', { config: { auth: 'public' }, schema: { response: { 200: HealthSchema } } }, async (request, reply) => {
      try {
        await sql`select 1`.execute(ctx.database.db);
        return { status: 'ready' };
      } catch (e) {
        request.log.error({ err: e }, 'readiness check failed');
        return sendProblem(request, reply, problem('not_ready'));
      }
    });
    app.get('/openapi.json', { config: { auth: 'public' } }, async () => document);
  };
}
