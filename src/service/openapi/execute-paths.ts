/**
 * The OpenAPI document's paths: running actions and syncs of a connector. `executeBody`: the execute request, typed per connector type when the registry is known.
 */
import type { Schema } from '../http/schemas.ts';
import { airbyteHeader, AUTHED, connectorIdParam, json, orgHeader, problems, ref } from './helpers.ts';

export function executePaths(executeBody: Schema): Record<string, Schema> {
  return {
    '/api/v1/integrations/connectors/{connector_id}/execute': {
      post: {
        operationId: 'execute',
        summary: 'Run an action: list, get, create, update (the upstream API) or search (synced data)',
        parameters: [connectorIdParam, orgHeader, airbyteHeader],
        requestBody: { required: true, content: json(executeBody) },
        responses: {
          200: {
            description:
              "The envelope: {data, meta?} (ExecuteResponse); with X-ADP-Agent-SDK, Airbyte's {status, result, connector_metadata, execution_metadata}",
            content: json({ anyOf: [ref('ExecuteResponse'), ref('AirbyteExecuteResponse')] }),
          },
          ...problems(...AUTHED, 404, 422, 424, 501, 502, 503),
        },
      },
    },
    '/api/v1/integrations/connectors/{connector_id}/sync': {
      get: {
        operationId: 'getSyncStatus',
        summary: 'Sync status: idle, running or failed; last start and finish; records per entity; last error',
        parameters: [connectorIdParam, orgHeader],
        responses: { 200: { description: 'The sync status', content: json(ref('SyncStatus')) }, ...problems(...AUTHED, 404) },
      },
      post: {
        operationId: 'startSync',
        summary: 'Start a sync of this connector now (it also runs when created and on a schedule)',
        parameters: [connectorIdParam, orgHeader],
        requestBody: { required: false, content: json(ref('SyncRequest')) },
        responses: {
          202: { description: 'Started (the status, as a run is picked up within seconds)', content: json(ref('SyncStatus')) },
          ...problems(...AUTHED, 404, 409, 503),
        },
      },
    },
  };
}
