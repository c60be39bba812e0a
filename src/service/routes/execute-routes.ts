/** POST /api/v1/integrations/connectors/{connector_id}/execute. */
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { principalOf } from '../auth/authentication.ts';
import { executeAction, type ExecuteBody } from '../connectors/connectors.ts';
import type { ServiceContext } from '../context.ts';
import { airbyteExecuteEnvelope, speaksAirbyte } from '../http/airbyte-envelope.ts';
import { ConnectorIdParamsSchema, ExecuteRequestSchema } from '../http/schemas.ts';

export const EXECUTE_PATH = '/api/v1/integrations/connectors/:connector_id/execute';

/** One signal per client connection, aborted when it closes (made on its first execute). */
const disconnected = new WeakMap<Socket, AbortSignal>();

/**
 * Aborted when the caller's connection closes, so a caller that disconnects leaves the
 * connector's throttle queue instead of holding a slot. Per connection rather than per request:
 * the requests of one keep-alive connection share it (a request that has finished no longer
 * listens), which spares every request a controller and two socket listeners.
 */
export function disconnectSignal(request: FastifyRequest): AbortSignal | undefined {
  const socket = request.raw.socket as Socket | null;
  if (socket === null) return undefined;
  let signal = disconnected.get(socket);
  if (signal === undefined) {
    const gone = new AbortController();
    socket.once('close', () => gone.abort(new Error('the client disconnected')));
    signal = gone.signal;
    disconnected.set(socket, signal);
  }
  return signal;
}

export function executeRoutes(ctx: ServiceContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    // No response schema for serialization: records are open objects, which fast-json-stringify
    // would reduce to {} (the OpenAPI document still describes the envelope).
    app.post<{ Params: { connector_id: string }; Body: ExecuteBody }>(
      EXECUTE_PATH,
      { schema: { params: ConnectorIdParamsSchema, body: ExecuteRequestSchema } },
      // Not async: the handler hands Fastify executeAction's own promise (no wrapping promise to resolve with it).
      (request) => {
        const id = request.params.connector_id;
        if (!speaksAirbyte(request))
          return executeAction(ctx, principalOf(request).organizationId, id, request.body, disconnectSignal(request), principalOf(request));
        // Airbyte's envelope (opt-in): the same answer, wrapped, with the time the action took.
        const started = performance.now();
        return executeAction(ctx, principalOf(request).organizationId, id, request.body, disconnectSignal(request), principalOf(request)).then((out) =>
          airbyteExecuteEnvelope(out, request.body.action, id, performance.now() - started),
        );
      },
    );
  };
}
