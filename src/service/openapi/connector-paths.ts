/**
 * The OpenAPI document's paths: connector types, and connectors: create, list, get, update, delete, check.
 */
import { CheckQuerySchema, ListConnectorsQuerySchema, type Schema } from '../http/schemas.ts';
import { AUTHED, connectorIdParam, json, orgHeader, problems, ref, queryParams } from './helpers.ts';

export function connectorPaths(): Record<string, Schema> {
  return {
    '/api/v1/integrations/connector-types': {
      get: {
        operationId: 'listConnectorTypes',
        summary: 'Connector types: entities, actions with params schemas, credential variants',
        responses: { 200: { description: 'Catalog', content: json(ref('ConnectorTypeList')) }, ...problems(401, 429) },
      },
    },
    '/api/v1/integrations/connector-types/{connector_type}': {
      get: {
        operationId: 'getConnectorType',
        summary: 'One connector type',
        parameters: [{ name: 'connector_type', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { 200: { description: 'Connector type', content: json(ref('ConnectorType')) }, ...problems(401, 404, 429) },
      },
    },
    '/api/v1/integrations/connectors': {
      post: {
        operationId: 'createConnector',
        summary: 'Create a connector (variant A: credentials; variant B: server_side_oauth_secret_id)',
        description:
          "The connector type's credential check runs first (unless ?check=false): credentials the upstream refuses answer 424 upstream_credentials_rejected with the upstream's message, an unreachable upstream 503 upstream_unavailable; in both cases nothing is stored.",
        parameters: [orgHeader, ...queryParams(CheckQuerySchema)],
        requestBody: { required: true, content: json(ref('CreateConnectorRequest')) },
        responses: { 201: { description: 'Created (status active)', content: json(ref('Connector')) }, ...problems(...AUTHED, 422, 424, 502, 503) },
      },
      get: {
        operationId: 'listConnectors',
        summary: 'List connectors, oldest first, filtered and paginated',
        parameters: [orgHeader, ...queryParams(ListConnectorsQuerySchema)],
        responses: { 200: { description: 'A page', content: json(ref('ConnectorList')) }, ...problems(400, 401, 403, 429) },
      },
    },
    '/api/v1/integrations/connectors/{connector_id}': {
      get: {
        operationId: 'getConnector',
        parameters: [connectorIdParam, orgHeader],
        responses: { 200: { description: 'The connector', content: json(ref('Connector')) }, ...problems(400, 401, 403, 404, 429) },
      },
      patch: {
        operationId: 'updateConnector',
        summary: 'Rename and/or replace credentials',
        description: 'New credentials are checked like on create (unless ?check=false); they make the connector active again and resume its sync.',
        parameters: [connectorIdParam, orgHeader, ...queryParams(CheckQuerySchema)],
        requestBody: { required: true, content: json(ref('PatchConnectorRequest')) },
        responses: { 200: { description: 'Updated', content: json(ref('Connector')) }, ...problems(...AUTHED, 404, 422, 424, 502, 503) },
      },
      delete: {
        operationId: 'deleteConnector',
        summary: 'Delete a connector, its credentials and its synced data',
        parameters: [connectorIdParam, orgHeader],
        responses: { 204: { description: 'Deleted' }, ...problems(400, 401, 403, 404, 429) },
      },
    },
    '/api/v1/integrations/connectors/{connector_id}/check': {
      post: {
        operationId: 'checkConnector',
        summary: "Run the connector type's credential check with the stored credentials and update the connector's status",
        description:
          'Answers 200 either way: ok true sets status active (and resumes a paused sync); upstream_credentials_rejected sets auth_failed (sync paused); any other failure sets error.',
        parameters: [connectorIdParam, orgHeader],
        responses: { 200: { description: 'The check result and the updated connector', content: json(ref('CheckResult')) }, ...problems(...AUTHED, 404) },
      },
    },
  };
}
