/**
 * POST /mcp: the MCP server (src/mcp) over Streamable HTTP, stateless: every POST carries one
 * JSON-RPC message and gets its answer as JSON, through a server and transport made for that
 * request. Authenticated like the API (bearer token, one organization); `?customer_name=` scopes
 * it to one customer's connectors, `?read_only=true` exposes list, get and search only, and
 * `?max_output_bytes=` sets the result budget (default SWITCHBOARD_MCP_MAX_OUTPUT_BYTES).
 * GET and DELETE /mcp answer 405: a stateless server has no stream to open and no session to end.
 * Every JSON-RPC request counts against the organization's request limit, each of a batch
 * (requestAdmission).
 */
import type { FastifyInstance } from 'fastify';
import type { Envelope } from '../../engine/index.ts';
import { SwitchboardError } from '../../errors/index.ts';
import type { McpBackend, McpInstance } from '../../mcp/server.ts';
import { changeFeed } from '../../events/change-feed.ts';
import type { ProxyRequest } from '../../engine/proxy-request.ts';
import { principalOf, rateLimitRefusal, type Principal } from '../auth/authentication.ts';
import { proxyConnector } from './proxy-routes.ts';
import { executeAction, requireConnector } from '../connectors/connectors.ts';
import { authorizeAccess } from '../auth/permissions.ts';
import { connectorType, type ServiceContext } from '../context.ts';
import { problem, sendProblem } from '../http/problem.ts';
import { McpQuerySchema } from '../http/account-schemas.ts';
import { organizationLimitKey, organizationLimiter, type KeyedLimiter } from '../limits/shared-limits.ts';
import type { ConnectorRow } from '../../store/index.ts';
import { customerNames } from '../connectors/customers.ts';

export const MCP_PATH = '/mcp';

/** Most connectors one MCP scope lists (list_connectors and tool descriptions); narrow with ?customer_name=. */
export const MCP_MAX_CONNECTORS = 500;

interface McpQuery {
  customer_name?: string;
  read_only?: boolean;
  max_output_bytes?: number;
}

/** The hosted backend: the organization's (or one customer's) stored connectors, run by the service. */
export function hostedBackend(
  ctx: ServiceContext,
  organizationId: string,
  customerName: string | undefined,
  principal?: Pick<Principal, 'organizationId' | 'proxyAccess' | 'permissions'>,
): McpBackend {
  const toInstance = (row: ConnectorRow): McpInstance => ({
    id: row.id,
    type: row.connector_type,
    manifest: connectorType(ctx, row.connector_type),
    description: row.name,
    customer_name: row.customer_name,
  });
  /** The allow-lists' answer for a connector type, entity or action (permissions.ts). */
  const allows = (type: string, entity?: string, action?: string): boolean => {
    try {
      authorizeAccess(principal, { connectorType: type, ...(entity !== undefined ? { entity } : {}), ...(action !== undefined ? { action } : {}) });
      return true;
    } catch {
      return false;
    }
  };
  return {
    mode: 'hosted',
    instances: async () => {
      const rows = await ctx.store.listConnectors(organizationId, { customerName, limit: MCP_MAX_CONNECTORS });
      // A type no longer registered cannot be run or described, nor one the allow-lists refuse: left out.
      return rows.filter((r) => ctx.registry.has(r.connector_type) && allows(r.connector_type)).map(toInstance);
    },
    instance: async (id) => {
      const row = await requireConnector(ctx, organizationId, id);
      if (customerName !== undefined && row.customer_name !== customerName) {
        throw new SwitchboardError('connector_not_found', `No connector ${id} for customer ${customerName}`, { details: { connector_id: id } });
      }
      // describe and every call on a connector type the allow-lists refuse: 403 permission_denied.
      authorizeAccess(principal, { connectorType: row.connector_type });
      return toInstance(row);
    },
    allows: (instance, entity, action) => allows(instance.type, entity, action),
    execute: async (instance, entity, action, params, signal) =>
      (await executeAction(ctx, organizationId, instance.id, { entity, action, params }, signal, principal)) as Envelope,
    search: async (instance, entity, params) =>
      (await executeAction(ctx, organizationId, instance.id, { entity, action: 'search', params }, undefined, principal)) as {
        data: unknown[];
        meta: Record<string, unknown>;
      },
    changes: (instance, entity, q) => {
      authorizeAccess(principal, { connectorType: instance.type, entity, action: 'changes' });
      return changeFeed(ctx.records, instance.manifest, instance.id, { entity, ...q }, '/');
    },
    ...(principal !== undefined
      ? {
          proxy: (instance: McpInstance, request: ProxyRequest, signal?: AbortSignal) =>
            proxyConnector(ctx, principal, instance.id, request, { signal, maxThrottleWaitMs: ctx.config.upstreamMaxWaitMs }),
        }
      : {}),
  };
}

/**
 * Every JSON-RPC request of one POST counts against the organization's request limit, like a
 * REST request: the POST itself took one unit (authentication.ts), which pays for its first
 * request; each further request of a batch takes one more, and one over the limit is refused
 * (a tools/call with the rate_limited tool error and retry_after_seconds, another method with a
 * -32000 error) while those within it run.
 */
function requestAdmission(limiter: KeyedLimiter | null, key: string): (() => Promise<void>) | undefined {
  if (limiter === null) return undefined;
  let calls = 0;
  return async () => {
    if (calls++ === 0) return;
    const d = await limiter.take(key);
    if (d.allowed) return;
    const r = rateLimitRefusal(limiter.perMinute, d);
    throw new SwitchboardError('rate_limited', r.message, { details: r.details });
  };
}

export function mcpRoutes(ctx: ServiceContext, version: string) {
  return async function register(app: FastifyInstance): Promise<void> {
    const limiter = organizationLimiter(ctx.limits, ctx.config);
    // customer_name (or an alias) scopes the server; a scoped token is kept to its own customer.
    const scope = { config: { customerScoped: true }, preValidation: customerNames(ctx, 'query') };
    app.post<{ Querystring: McpQuery; Body: unknown }>(MCP_PATH, { ...scope, schema: { querystring: McpQuerySchema } }, async (request, reply) => {
      const principal = principalOf(request);
      const admitRequest = requestAdmission(limiter, organizationLimitKey(principal.organizationId, principal.applicationId));
      const [{ createMcpServer }, { StreamableHTTPServerTransport }] = await Promise.all([
        import('../../mcp/server.ts'),
        import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
      ]);
      const server = createMcpServer(hostedBackend(ctx, principal.organizationId, request.query.customer_name, principal), {
        readOnly: request.query.read_only === true,
        proxy: ctx.config.mcpProxy,
        maxOutputBytes: request.query.max_output_bytes ?? ctx.config.mcpMaxOutputBytes,
        version,
        ...(admitRequest !== undefined ? { admitRequest } : {}),
        log: (entry) => request.log.info({ ...entry, organization_id: principal.organizationId }, 'mcp tool call'),
      });
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
      reply.raw.once('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      // The transport writes the response itself.
      reply.hijack();
      await transport.handleRequest(request.raw, reply.raw, request.body);
    });
    for (const method of ['GET', 'DELETE'] as const) {
      app.route({
        method,
        url: MCP_PATH,
        config: { customerScoped: true },
        handler: async (request, reply) =>
          sendProblem(
            request,
            reply,
            problem(
              'method_not_allowed',
              `${method} ${MCP_PATH}: this MCP server is stateless (no SSE stream, no session); send each JSON-RPC message with POST`,
            ),
            { allow: 'POST' },
          ),
      });
    }
  };
}
