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
      async (request, reply) => {
        // A caller that disconnects leaves the connector's throttle queue instead of holding a slot.
        const gone = new AbortController();
        const onClose = (): void => {
          if (!reply.raw.writableEnded) gone.abort(new Error('the client disconnected'));
        };
        request.raw.socket?.once('close', onClose);
        try {
          return await executeAction(ctx, principalOf(request).organizationId, request.params.connector_id, request.body, gone.signal);
        } finally {
          request.raw.socket?.off('close', onClose);
        }
      },
    );
  };
}
