/**
 * Webhooks, both ways:
 *
 * POST /api/v1/webhooks/{connector_type}                  vendor deliveries, one URL per vendor app (public; verified by signature)
 * POST /api/v1/webhooks/{connector_type}/{connector_id}   vendor deliveries for one connector (subscriptions made per connector)
 * HEAD of either                                          200 for a type that takes webhooks (vendors probe a callback URL before subscribing it)
 * GET of either                                           a handshake in the query (Dropbox's ?challenge=), answered as the manifest's challenge says
 * POST   /api/v1/webhook-endpoints                        register {url, events} → 201 with the signing secret (shown once)
 * GET    /api/v1/webhook-endpoints                        the organization's endpoints
 * GET    /api/v1/webhook-endpoints/{endpoint_id}          one
 * DELETE /api/v1/webhook-endpoints/{endpoint_id}          204
 * GET    /api/v1/webhook-endpoints/{endpoint_id}/deliveries  the delivery log, newest first
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SwitchboardError } from '../../errors/index.ts';
import type { Kysely } from 'kysely';
import type { EventsTables } from '../../events/migrations.ts';
import { CreateWebhookEndpointSchema, DeliveriesQuerySchema, EndpointIdParamsSchema, WebhookSubscriptionsSchema } from '../../events/openapi-events.ts';
import type { EventType } from '../../events/outbox.ts';
import { WebhookReceiver } from '../../webhooks/receive.ts';
import { ingressGate, ingressUrlOf } from '../../webhooks/ingress.ts';
import { principalOf } from '../auth/authentication.ts';
import { connectorType, type ServiceContext } from '../context.ts';
import { requireConnector } from '../connectors/connectors.ts';
import { ConnectorIdParamsSchema } from '../http/schemas.ts';

export function vendorWebhookRoutes(ctx: ServiceContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    const receiver = new WebhookReceiver({
      db: ctx.database.db as unknown as Kysely<EventsTables>,
      registry: ctx.registry,
      applier: () => ctx.sync.applier,
      secretFor: (type, kind) =>
        kind === 'oauth_client_secret' ? ctx.config.connectorTypes[type]?.oauth?.clientSecret : ctx.config.connectorTypes[type]?.webhookSecret,
      connector: async (id) => {
        const row = await ctx.store.getConnectorById(id).catch(() => undefined);
        return row === undefined ? undefined : { id: row.id, status: row.status, connector_type: row.connector_type };
      },
      attributions: ctx.webhookAttributions,
      subscriptions: ctx.webhookSubscriptions,
      runtimeFor: async (id) => {
        const row = await ctx.store.getConnectorById(id);
        const manifest = row === undefined ? undefined : ctx.registry.get(row.connector_type);
        return row === undefined || manifest === undefined ? undefined : ctx.runtimes.get(row, manifest).runtime;
      },
      // A notice naming no record (a `sync` topic rule): the connector's sync now; a run already going answers false.
      requestSync: async (id) => {
        try {
          await ctx.sync.request(id);
          return true;
        } catch (e) {
          if (e instanceof SwitchboardError && e.code === 'sync_running') return false;
          throw e;
        }
      },
      now: ctx.now,
      queueLimit: ctx.config.webhookQueueLimit,
      log: ctx.log,
    });
    app.addHook('onClose', async () => ctx.webhookAttributions.close());
    // Requests in flight are counted from their arrival, so bodies being read (before any
    // signature check) count too: more are refused before their bodies are read.
    const gate = ingressGate(ctx.config.webhookQueueLimit);
    app.addHook('onRequest', gate);
    // The signature covers the raw bytes: keep them (this plugin's routes only).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    // Unverified bodies: a smaller cap than other requests' (SWITCHBOARD_WEBHOOK_BODY_LIMIT_BYTES).
    const pub = { config: { auth: 'public' as const }, bodyLimit: ctx.config.webhookBodyLimitBytes };
    const handle = async (request: FastifyRequest<{ Params: { connector_type: string; connector_id?: string } }>, reply: FastifyReply) => {
      const { connector_type: type, connector_id: connectorId } = request.params;
      const ingressUrl = `${ctx.publicUrl()}/api/v1/webhooks/${type}${connectorId !== undefined ? `/${connectorId}` : ''}`;
      try {
        const a = await receiver.receive({
          type,
          ...(connectorId !== undefined ? { connectorId } : {}),
          headers: request.headers,
          query: Object.fromEntries(
            Object.entries((request.query ?? {}) as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'),
          ),
          raw: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
          ingressUrl,
        });
        // A handshake echoed as text is not to be sniffed as anything else (Dropbox asks for nosniff).
        if (a.contentType !== undefined) reply.type(a.contentType).header('x-content-type-options', 'nosniff');
        // A handshake echoes the subscription's secret header (the vendor's own value).
        for (const [k, v] of Object.entries(a.headers ?? {})) reply.header(k, v);
        return reply.code(a.status).send(a.body);
      } catch (e) {
        // Vendors retry a 503 that says when.
        if (e instanceof SwitchboardError && (e.code === 'webhook_queue_full' || e.code === 'webhook_attribution_pending'))
          reply.header('retry-after', String(Math.ceil(Number(e.details['retry_after_ms'] ?? 1000) / 1000)));
        throw e;
      }
    };
    app.post('/api/v1/webhooks/:connector_type', pub, handle);
    app.post('/api/v1/webhooks/:connector_type/:connector_id', pub, handle);
    // Some vendors verify the URL with a GET carrying the challenge in the query (Dropbox's ?challenge=):
    // only a handshake is answered; anything else is a delivery without a body, refused by its signature check.
    app.get('/api/v1/webhooks/:connector_type', { ...pub, exposeHeadRoute: false }, handle);
    app.get('/api/v1/webhooks/:connector_type/:connector_id', { ...pub, exposeHeadRoute: false }, handle);
    // Some vendors probe a callback URL with HEAD before they subscribe it (and refuse it unless 200):
    // 200 for a type that takes webhooks, 404 otherwise; nothing is read or verified.
    const probe = async (request: FastifyRequest<{ Params: { connector_type: string } }>, reply: FastifyReply) =>
      reply.code(ctx.registry.get(request.params.connector_type)?.webhooks !== undefined ? 200 : 404).send();
    app.head('/api/v1/webhooks/:connector_type', pub, probe);
    app.head('/api/v1/webhooks/:connector_type/:connector_id', pub, probe);
  };
}

export function webhookEndpointRoutes(ctx: ServiceContext) {
  return async function register(app: FastifyInstance): Promise<void> {
    const BASE = '/api/v1/webhook-endpoints';
    app.post<{ Body: { url: string; events: EventType[] } }>(BASE, { schema: { body: CreateWebhookEndpointSchema } }, async (request, reply) => {
      const created = await ctx.outbox.createEndpoint(principalOf(request).organizationId, request.body.url, request.body.events);
      return reply.code(201).send(created);
    });
    app.get(BASE, async (request) => ({ data: await ctx.outbox.listEndpoints(principalOf(request).organizationId) }));
    app.get<{ Params: { endpoint_id: string } }>(`${BASE}/:endpoint_id`, { schema: { params: EndpointIdParamsSchema } }, async (request) =>
      ctx.outbox.getEndpoint(principalOf(request).organizationId, request.params.endpoint_id),
    );
    app.delete<{ Params: { endpoint_id: string } }>(`${BASE}/:endpoint_id`, { schema: { params: EndpointIdParamsSchema } }, async (request, reply) => {
      await ctx.outbox.deleteEndpoint(principalOf(request).organizationId, request.params.endpoint_id);
      return reply.code(204).send();
    });
    // Opting a connector in to its vendor's per-connector subscriptions (monday: one create_webhook per board and event).
    app.post<{ Params: { connector_id: string }; Body: { params: Record<string, unknown>; events: string[] } }>(
      '/api/v1/integrations/connectors/:connector_id/webhook-subscriptions',
      { schema: { params: ConnectorIdParamsSchema, body: WebhookSubscriptionsSchema } },
      async (request, reply) => {
        const row = await requireConnector(ctx, principalOf(request).organizationId, request.params.connector_id);
        const manifest = connectorType(ctx, row.connector_type);
        const subscribe = manifest.webhooks?.subscribe;
        if (manifest.webhooks?.attribution.by !== 'url' || subscribe === undefined) {
          throw new SwitchboardError('unknown_entity', `Connector type ${row.connector_type} has no per-connector webhook subscriptions`, {
            errors: [{ path: '/connector_id', message: 'its type subscribes per app, not per connector' }],
          });
        }
        const url = ingressUrlOf(ctx, row);
        const { runtime } = ctx.runtimes.get(row, manifest);
        const data: unknown[] = [];
        for (const event of request.body.events) {
          const params = { ...request.body.params, event, [subscribe.urlParam]: url };
          const run = (p: Record<string, unknown>) => runtime.execute(subscribe.entity, subscribe.action, p);
          data.push((await ctx.webhookSubscriptions.around(manifest, row, subscribe.entity, subscribe.action, params, run)).data);
        }
        return reply.code(201).send({ data, url });
      },
    );
    app.get<{ Params: { endpoint_id: string }; Querystring: { limit?: number } }>(
      `${BASE}/:endpoint_id/deliveries`,
      { schema: { params: EndpointIdParamsSchema, querystring: DeliveriesQuerySchema } },
      async (request) => ({ data: await ctx.outbox.deliveries(principalOf(request).organizationId, request.params.endpoint_id, request.query.limit ?? 50) }),
    );
  };
}
