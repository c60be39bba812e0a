/** POST /api/v1/integrations/connectors/{connector_id}/execute. */
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../authentication.ts';
import { executeAction, type ExecuteBody } from '../connectors.ts';
import type { ServiceContext } from '../context.ts';
import { ConnectorIdParamsSchema, ExecuteRequestSchema } from '../schemas.ts';

export const EXECUTE_PATH = '/api/v1/integrations/connectors/:connector_id/execute';

export function executeRoutes(ctx: ServiceContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    // No response schema for serialization: records are open objects, which fast-json-stringify
    // would reduce to {} (the OpenAPI document still describes the envelope).
    app.post<{ Params: { connector_id: string }; Body: ExecuteBody }>(
      EXECUTE_PATH,
      { schema: { params: ConnectorIdParamsSchema, body: ExecuteRequestSchema } },
      async (request) => executeAction(ctx, principalOf(request).organizationId, request.params.connector_id, request.body),
    );
  };
}
