/** Connectors: create, list, get, patch, delete, and the connector-types catalog. */
import type { FastifyInstance } from 'fastify';
import { principalOf } from '../auth/authentication.ts';
import { buildCatalog, catalogEntry } from '../connectors/catalog.ts';
import {
  connectorView,
  createConnector,
  deleteConnector,
  listConnectors,
  patchConnector,
  requireConnector,
  type CreateConnectorBody,
  type ListQuery,
  type PatchConnectorBody,
} from '../connectors/connectors.ts';
import { connectorType, type ServiceContext } from '../context.ts';
import { customerNames } from '../connectors/customers.ts';
import { checkStoredConnector } from '../connectors/connector-health.ts';
import {
  CheckQuerySchema,
  CheckResponseSchema,
  ConnectorIdParamsSchema,
  ConnectorListSchema,
  ConnectorSchema,
  ConnectorTypeParamsSchema,
  CreateConnectorRequestSchema,
  ListConnectorsQuerySchema,
  PatchConnectorRequestSchema,
} from '../http/schemas.ts';

export const CONNECTORS_PATH = '/api/v1/integrations/connectors';
export const CONNECTOR_TYPES_PATH = '/api/v1/integrations/connector-types';

type IdParams = { connector_id: string };

export function connectorRoutes(ctx: ServiceContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    // The catalog depends only on manifests and configuration: built once.
    const catalog = buildCatalog(ctx.registry, ctx.config.connectorTypes);

    // The catalog holds no customer data: scoped tokens may read it.
    app.get(CONNECTOR_TYPES_PATH, { config: { auth: 'application', customerScoped: true } }, async () => ({ data: catalog }));

    app.get<{ Params: { connector_type: string } }>(
      `${CONNECTOR_TYPES_PATH}/:connector_type`,
      { config: { auth: 'application', customerScoped: true }, schema: { params: ConnectorTypeParamsSchema } },
      async (request) => {
        const m = connectorType(ctx, request.params.connector_type, 404);
        return catalogEntry(m, ctx.config.connectorTypes[m.type]);
      },
    );

    app.post<{ Body: CreateConnectorBody; Querystring: { check?: boolean } }>(
      CONNECTORS_PATH,
      {
        config: { customerScoped: true },
        preValidation: customerNames(ctx, 'body', { kinds: true }),
        schema: { body: CreateConnectorRequestSchema, querystring: CheckQuerySchema, response: { 201: ConnectorSchema } },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        const row = await createConnector(ctx, principal.organizationId, request.body, { check: request.query.check ?? true });
        request.log.info({ connector_id: row.id, connector_type: row.connector_type, auth_variant: row.auth_variant }, 'connector created');
        try {
          await ctx.hooks.onConnectorCreated?.(row);
        } catch (e) {
          request.log.error({ connector_id: row.id, err: e }, 'onConnectorCreated hook failed');
        }
        return reply.code(201).header('location', `${CONNECTORS_PATH}/${row.id}`).send(connectorView(row));
      },
    );

    app.get<{ Querystring: ListQuery }>(
      CONNECTORS_PATH,
      {
        config: { customerScoped: true },
        preValidation: customerNames(ctx, 'query', { kinds: true }),
        schema: { querystring: ListConnectorsQuerySchema, response: { 200: ConnectorListSchema } },
      },
      async (request) => listConnectors(ctx, principalOf(request).organizationId, request.query),
    );

    app.get<{ Params: IdParams }>(
      `${CONNECTORS_PATH}/:connector_id`,
      { schema: { params: ConnectorIdParamsSchema, response: { 200: ConnectorSchema } } },
      async (request) => connectorView(await requireConnector(ctx, principalOf(request).organizationId, request.params.connector_id)),
    );

    app.patch<{ Params: IdParams; Body: PatchConnectorBody; Querystring: { check?: boolean } }>(
      `${CONNECTORS_PATH}/:connector_id`,
      { schema: { params: ConnectorIdParamsSchema, body: PatchConnectorRequestSchema, querystring: CheckQuerySchema, response: { 200: ConnectorSchema } } },
      async (request) => {
        const row = await patchConnector(ctx, principalOf(request).organizationId, request.params.connector_id, request.body, {
          check: request.query.check ?? true,
        });
        request.log.info(
          { connector_id: row.id, renamed: request.body.name !== undefined, credentials_replaced: request.body.credentials !== undefined },
          'connector updated',
        );
        return connectorView(row);
      },
    );

    app.post<{ Params: IdParams }>(
      `${CONNECTORS_PATH}/:connector_id/check`,
      { schema: { params: ConnectorIdParamsSchema, response: { 200: CheckResponseSchema } } },
      async (request) => {
        const row = await requireConnector(ctx, principalOf(request).organizationId, request.params.connector_id);
        const result = await checkStoredConnector(ctx, row, connectorType(ctx, row.connector_type));
        request.log.info({ connector_id: row.id, ok: result.ok, status: result.connector.status, code: result.error?.code }, 'connector checked');
        return { ...result, connector: connectorView(result.connector) };
      },
    );

    app.delete<{ Params: IdParams }>(`${CONNECTORS_PATH}/:connector_id`, { schema: { params: ConnectorIdParamsSchema } }, async (request, reply) => {
      await deleteConnector(ctx, principalOf(request).organizationId, request.params.connector_id);
      request.log.info({ connector_id: request.params.connector_id }, 'connector deleted');
      return reply.code(204).send();
    });
  };
}
