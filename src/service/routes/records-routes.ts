/**
 * GET /api/v1/integrations/connectors/{connector_id}/records?entity=E&modified_after=CURSOR&limit=N — the change feed (src/events/change-feed.ts).
 */
import type { FastifyInstance } from 'fastify';
import { changeFeed } from '../../events/change-feed.ts';
import { ChangesQuerySchema } from '../../events/openapi-events.ts';
import { principalOf } from '../auth/authentication.ts';
import { requireConnector } from '../connectors/connectors.ts';
import { authorizeAccess } from '../auth/permissions.ts';
import { connectorType, type ServiceContext } from '../context.ts';
import { ConnectorIdParamsSchema } from '../http/schemas.ts';

export const RECORDS_PATH = '/api/v1/integrations/connectors/:connector_id/records';

export function recordsRoutes(ctx: ServiceContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    app.get<{ Params: { connector_id: string }; Querystring: { entity: string; modified_after?: string; limit?: number } }>(
      RECORDS_PATH,
      { schema: { params: ConnectorIdParamsSchema, querystring: ChangesQuerySchema } },
      async (request) => {
        const principal = principalOf(request);
        const row = await requireConnector(ctx, principal.organizationId, request.params.connector_id);
        authorizeAccess(principal, { connectorType: row.connector_type, entity: request.query.entity, action: 'changes' });
        return changeFeed(ctx.records, connectorType(ctx, row.connector_type), row.id, request.query);
      },
    );
  };
}
