/**
 * POST /api/v1/integrations/connectors/{connector_id}/sync — start a sync now (409 while one
 *   runs; 503 sync_scheduler_not_running when no instance runs the scheduler, nothing recorded)
 * GET  /api/v1/integrations/connectors/{connector_id}/sync — sync status
 */
import type { FastifyInstance } from 'fastify';
import { SwitchboardError } from '../../errors/index.ts';
import { principalOf } from '../auth/authentication.ts';
import { requireConnector } from '../connectors/connectors.ts';
import { connectorType, type ServiceContext } from '../context.ts';
import { ConnectorIdParamsSchema, SyncRequestSchema } from '../http/schemas.ts';

export const SYNC_PATH = '/api/v1/integrations/connectors/:connector_id/sync';

export function syncRoutes(ctx: ServiceContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    const status = async (organizationId: string, id: string) => {
      const row = await requireConnector(ctx, organizationId, id);
      const s = await ctx.sync.status(row.id, connectorType(ctx, row.connector_type));
      // A connector created before sync existed has no sync state yet: register it now.
      if (s !== undefined) return s;
      await ctx.sync.register(row.id);
      return (await ctx.sync.status(row.id, connectorType(ctx, row.connector_type)))!;
    };
    app.get<{ Params: { connector_id: string } }>(SYNC_PATH, { schema: { params: ConnectorIdParamsSchema } }, async (request) =>
      status(principalOf(request).organizationId, request.params.connector_id),
    );
    app.post<{ Params: { connector_id: string }; Body: { full?: boolean } | undefined }>(
      SYNC_PATH,
      { schema: { params: ConnectorIdParamsSchema, body: SyncRequestSchema } },
      async (request, reply) => {
        const org = principalOf(request).organizationId;
        const row = await requireConnector(ctx, org, request.params.connector_id);
        // Marked due, the run would start only when a scheduler finds it: with none running, say so.
        if (!(await ctx.sync.schedulerRunning())) {
          throw new SwitchboardError(
            'sync_scheduler_not_running',
            'No instance of this deployment runs the sync scheduler (SWITCHBOARD_SYNC_SCHEDULER=false everywhere), so a requested sync would never start; nothing was requested',
          );
        }
        await status(org, row.id);
        await ctx.sync.request(row.id, { full: request.body?.full === true });
        return reply.code(202).send(await status(org, row.id));
      },
    );
  };
}
