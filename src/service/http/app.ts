/**
 * The hosted service as a Fastify app: JSON-only bodies validated by ajv per route, bearer
 * authentication and per-organization rate limiting in an onRequest hook, every failure as
 * problem details, and route groups registered as plugins.
 */
import { installAuditLog } from '../ops/audit-log.ts';
import { installPermissions } from '../auth/permissions.ts';
import { permissionRoutes } from '../routes/permission-routes.ts';
import { auditRoutes } from '../routes/audit-routes.ts';
import { tokenRoutes } from '../routes/token-routes.ts';
import type { AddressInfo } from 'node:net';
import { Ajv, type Options as AjvOptions } from 'ajv';
import addFormatsModule from 'ajv-formats';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { DestinationStream, Logger } from 'pino';
import type { FetchLike, RetryPolicy, Throttle } from '../../http/index.ts';
import { connectorRegistry, type LoadedManifest } from '../../manifest/index.ts';
import { ServiceStore, type Database, type KeyRing, type ServiceTables } from '../../store/index.ts';
import { authenticationHook } from '../auth/authentication.ts';
import { answerTimeoutMs, type ServiceConfig } from '../config.ts';
import type { ServiceContext, ServiceHooks } from '../context.ts';
import { createServiceLogger, requestLogger } from '../ops/logger.ts';
import { WebhookSubscriptions, type WebhookSubscriptionsTables } from '../../webhooks/subscriptions.ts';
import { problem, sendProblem, toProblem } from './problem.ts';
import { createLimitBackend, organizationLimiter, upstreamThrottle } from '../limits/shared-limits.ts';
import { accountRoutes } from '../routes/account-routes.ts';
import { connectorRoutes } from '../routes/connector-routes.ts';
import { executeRoutes } from '../routes/execute-routes.ts';
import { proxyRoutes } from '../routes/proxy-routes.ts';
import { metaRoutes } from '../routes/meta-routes.ts';
import { oauthRoutes } from '../routes/oauth-routes.ts';
import { createUpstreamTransport, type UpstreamTransport } from '../../http/upstream-transport.ts';
import { sharedBudget } from '../../http/response-limit.ts';
import { createHostedData, type HostedData } from '../data/hosted-data.ts';
import { syncRoutes } from '../routes/sync-routes.ts';
import { recordsRoutes } from '../routes/records-routes.ts';
import { vendorWebhookRoutes, webhookEndpointRoutes } from '../routes/webhook-routes.ts';
import type { Kysely } from 'kysely';
import { WebhookAttributions } from '../../webhooks/attribution.ts';
import type { WebhooksInTables } from '../../webhooks/migrations.ts';
import { mcpRoutes } from '../routes/mcp-routes.ts';
import { packageVersion } from '../../version.ts';
import { connectRoutes } from '../connect/index.ts';
import { customerScopeHook } from '../connectors/customers.ts';
import { workspaceRoutes } from '../routes/workspace-routes.ts';
import { observability } from '../ops/observability.ts';
import { checkedJsonParser, clientErrorHandler, frameworkErrors, refuseControlCharacters } from './http-hygiene.ts';

// ajv-formats is CommonJS; under NodeNext its default export is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export interface BuildAppOptions {
  /** An open, migrated database (SERVICE_MIGRATIONS applied). */
  database: Database<ServiceTables>;
  keyRing: KeyRing;
  config: ServiceConfig;
  /** Connector manifests by type; default every manifest under connectors/. */
  registry?: Map<string, LoadedManifest>;
  /** Upstream transport; default undici's request behind a FetchLike (upstream-transport.ts). */
  fetch?: FetchLike;
  /**
   * With `fetch` injected: a module whose `createFetch(data)` makes the same transport in the
   * sync worker (a bench routing upstreams); without it the syncs stay on the main thread. Not
   * needed with the default transport, which the worker builds from the configuration.
   */
  syncFetchModule?: { module: string; data?: unknown };
  /** Clock (epoch ms); default Date.now. */
  now?: () => number;
  /** A logger, or a destination stream for the default logger (tests capture lines). */
  logger?: Logger;
  logDestination?: DestinationStream;
  /** Upstream retry policy overrides. */
  retry?: Partial<RetryPolicy>;
  hooks?: ServiceHooks;
}

function ajvFor(coerce: boolean): Ajv {
  const options: AjvOptions = {
    allErrors: true,
    // Bodies are taken as sent (a number where a string belongs is an error); query strings and
    // path params are text by nature, so they are coerced to the declared types.
    coerceTypes: coerce,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
  };
  const ajv = new Ajv(options);
  addFormats(ajv);
  return ajv;
}

/** http://host:port the app listens on (wildcard addresses are reached over loopback). */
export function listeningUrl(app: FastifyInstance): string {
  const addr = app.server.address() as AddressInfo | string | null;
  if (addr === null || typeof addr === 'string') return String(addr);
  const host = addr.family === 'IPv6' ? `[${addr.address === '::' ? '::1' : addr.address}]` : addr.address === '0.0.0.0' ? '127.0.0.1' : addr.address;
  return `http://${host}:${addr.port}`;
}

/** The Fastify instance with the service's limits and timeouts (no hooks or routes yet). */
function createFastify(o: BuildAppOptions, log: Logger): FastifyInstance {
  return Fastify({
    loggerInstance: log as FastifyBaseLogger,
    childLoggerFactory: requestLogger as never,
    bodyLimit: o.config.bodyLimitBytes,
    return503OnClosing: true,
    // A client dripping its request cannot hold a connection open (408 request_timeout).
    requestTimeout: o.config.requestTimeoutMs,
    // The socket's idle timeout: a received request waiting on an upstream (up to its deadline)
    // must get its answer, never a cut connection (answerTimeoutMs is longer than the deadline).
    connectionTimeout: answerTimeoutMs(o.config),
    keepAliveTimeout: o.config.keepAliveTimeoutMs,
    frameworkErrors,
    clientErrorHandler,
  });
}

/** The hooks the routes call on connector changes: the sync schedule and events first, then the embedder's own. */
function connectorHooks(data: Pick<HostedData, 'sync' | 'events' | 'forgetConnector'>, userHooks: ServiceHooks): ServiceHooks {
  return {
    onConnectorCreated: async (row) => {
      await data.sync.register(row.id);
      await data.events.connectorCreated(row);
      await userHooks.onConnectorCreated?.(row);
    },
    onConnectorDeleted: async (row, db) => {
      await data.forgetConnector(row.id, db);
      await userHooks.onConnectorDeleted?.(row, db);
    },
  };
}

/** Who sent a vendor's webhook: attributions over the stored connectors, their checks run in the background. */
function webhookAttributions(
  o: BuildAppOptions,
  registry: Map<string, LoadedManifest>,
  store: ServiceStore,
  runtimes: HostedData['runtimes'],
  now: () => number,
  log: Logger,
): WebhookAttributions {
  return new WebhookAttributions({
    db: o.database.db as unknown as Kysely<WebhooksInTables>,
    registry,
    now,
    log,
    // A stored connector's check, in the background (never a delivery's request).
    checkInfo: async (id) => {
      const row = await store.getConnectorById(id);
      const m = row === undefined ? undefined : registry.get(row.connector_type);
      return row === undefined || m === undefined ? undefined : ((await runtimes.get(row, m).runtime.check()).info ?? {});
    },
  });
}

/**
 * What every route group works with (the store, the upstream transport, the limits, the hosted
 * data) and its lifecycle on the app: syncs and event deliveries start when the app is ready and
 * stop when it closes (`close`, to be added last among the onClose hooks).
 */
async function createContext(app: FastifyInstance, o: BuildAppOptions, log: Logger): Promise<{ ctx: ServiceContext; close: () => Promise<void> }> {
  const store = new ServiceStore(o.database.db);
  const now = o.now ?? Date.now;
  // Upstream calls go through undici's request (see upstream-transport.ts) unless a fetch is injected.
  // One budget of upstream bytes in flight for the process: this thread's transport and the sync worker's hold it together.
  const transportOptions = {
    maxResponseBytes: o.config.upstreamMaxResponseBytes,
    allowLinkLocal: o.config.egressAllowLinkLocal,
    memoryBudgetBytes: o.config.upstreamMemoryBytes,
    sharedBudget: sharedBudget(),
  };
  const transport = o.fetch === undefined ? createUpstreamTransport(transportOptions) : undefined;
  // The sync worker's transport: the same options (the same budget), or the injected fetch's module.
  const syncFetch = o.fetch === undefined ? { transport: transportOptions } : o.syncFetchModule;
  const limits = await createLimitBackend(o.config, o.database, o.now ?? Date.now);
  const fetchImpl: FetchLike = o.fetch ?? (transport as UpstreamTransport).fetch;
  app.addHook('onClose', async () => {
    await transport?.close();
  });
  let listening: string | undefined;
  const registry = o.registry ?? connectorRegistry();
  const throttleFor = (budget: string, m: LoadedManifest): Throttle | null => upstreamThrottle(limits, budget, m.manifest, o.config.upstreamQueueLimit);
  const data = createHostedData({
    database: o.database,
    store,
    keyRing: o.keyRing,
    config: o.config,
    registry,
    fetch: fetchImpl,
    now,
    log,
    retry: o.retry,
    throttleFor,
    writeInWorker: true,
    syncFetch,
  });
  const { records, runtimes, sync, outbox, events, syncWorker } = data;
  const hooks = connectorHooks(data, o.hooks ?? {});
  if (o.config.syncScheduler) {
    app.addHook('onReady', async () => {
      syncWorker?.warm();
      await sync.start();
    });
    // Shutdown: no sync starts from the moment close() is called (in-flight requests may still
    // run for a while); running syncs are aborted and hand their leases back. onClose waits for them.
    app.addHook('preClose', async () => {
      void sync.stop();
    });
  }
  if (o.config.eventsDelivery) app.addHook('onReady', async () => outbox.start());
  const ctx: ServiceContext = {
    database: o.database,
    store,
    keyRing: o.keyRing,
    config: o.config,
    registry,
    fetch: fetchImpl,
    now,
    log,
    hooks,
    limits,
    runtimes,
    records,
    sync,
    syncWorker,
    outbox,
    events,
    webhookAttributions: webhookAttributions(o, registry, store, runtimes, now, log),
    webhookSubscriptions: new WebhookSubscriptions({
      db: o.database.db as unknown as Kysely<WebhookSubscriptionsTables>,
      keyRing: o.keyRing,
      now,
      log,
    }),
    ...(o.retry !== undefined ? { retry: o.retry } : {}),
    publicUrl: () => o.config.publicUrl ?? listening ?? `http://${o.config.host}:${o.config.port}`,
  };
  app.addHook('onListen', async () => {
    listening = listeningUrl(app);
  });
  // Runs stop first: until then they take from the limits' store.
  const close = async (): Promise<void> => {
    if (o.config.syncScheduler) await sync.stop();
    await data.close();
    await outbox.stop();
    await data.closeSender();
    await limits.close();
  };
  return { ctx, close };
}

/** JSON the only body format, checked once (http-hygiene.ts); ajv validators for bodies (as sent) and text parts (coerced). */
function installBodyParsing(app: FastifyInstance): void {
  // JSON is the only body format; text/plain would otherwise reach the schema as a string.
  app.removeContentTypeParser('text/plain');
  // Fastify's JSON parser, then one iterative check of nesting depth and characters (http-hygiene.ts).
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, checkedJsonParser(defaultJson as Parameters<typeof checkedJsonParser>[0]));
  const bodyAjv = ajvFor(false);
  const textAjv = ajvFor(true);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : textAjv).compile(schema));
}

/** Every failure as problem details (the caller gone: nothing answered); unknown routes as route_not_found. */
function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    if (request.raw.socket?.destroyed === true) {
      // The caller went away (its execute was aborted with it): nobody to answer, nothing failed here.
      request.log.info({ code: 'client_disconnected' }, 'caller disconnected before the answer');
      return reply.hijack();
    }
    const p = toProblem(err);
    const headers: Record<string, string> = {};
    const retryMs = p.details?.['retry_after_ms'];
    if ((p.status === 429 || p.status === 503) && typeof retryMs === 'number') headers['retry-after'] = String(Math.max(1, Math.ceil(retryMs / 1000)));
    if (p.status >= 500) {
      // Log what identifies the failure, never the error object whole: its details may carry upstream bodies.
      request.log.error({ code: p.code, detail: p.detail, err_name: (err as Error).name, stack: (err as Error).stack }, 'request failed');
    } else {
      request.log.info({ code: p.code, status: p.status }, 'request refused');
    }
    return sendProblem(request, reply, p, headers);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(request, reply, problem('route_not_found', `No endpoint ${request.method} ${request.url.split('?')[0] ?? ''}`)),
  );
}

/** The route groups, each a plugin, after the audit log and permission hooks that watch them. */
async function registerRouteGroups(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  const auditLog = installAuditLog(app, ctx);
  installPermissions(app, ctx);
  await app.register(permissionRoutes(ctx));
  await app.register(metaRoutes(ctx));
  await app.register(accountRoutes(ctx));
  await app.register(workspaceRoutes(ctx));
  await app.register(connectorRoutes(ctx));
  await app.register(oauthRoutes(ctx));
  await app.register(executeRoutes(ctx));
  await app.register(proxyRoutes(ctx));
  await app.register(syncRoutes(ctx));
  await app.register(recordsRoutes(ctx));
  await app.register(vendorWebhookRoutes(ctx));
  await app.register(webhookEndpointRoutes(ctx));
  await app.register(connectRoutes(ctx));
  await app.register(mcpRoutes(ctx, packageVersion()));
  await app.register(auditRoutes(auditLog));
  await app.register(tokenRoutes(ctx));
}

/** Build the Fastify app (not listening). */
export async function buildApp(o: BuildAppOptions): Promise<{ app: FastifyInstance; ctx: ServiceContext; routes: string[] }> {
  const log = o.logger ?? createServiceLogger(o.config.logLevel, o.logDestination);
  const app = createFastify(o, log);
  const { ctx, close } = await createContext(app, o, log);
  installBodyParsing(app);

  // Every route as "METHOD /path" (OpenAPI syntax), so a test can hold the document to them.
  const routes: string[] = [];
  app.addHook('onRoute', (r) => {
    for (const m of [r.method].flat()) if (m !== 'HEAD') routes.push(`${m} ${r.url.replace(/:([A-Za-z_]+)/g, '{$1}').replace(/\/\*$/, '/{path}')}`);
  });

  // Metrics and traces first: their hooks see every request, refused ones included (observability.ts).
  await app.register(observability(ctx));
  app.decorateRequest('principal', null);
  app.addHook('onRequest', authenticationHook(ctx, organizationLimiter(ctx.limits, o.config)));
  app.addHook('preValidation', refuseControlCharacters);
  // Scoped (one-customer) tokens: other customers' connectors are 404, unscoped routes 403 (customers.ts).
  app.addHook('preValidation', customerScopeHook(ctx));
  installErrorHandlers(app);
  await registerRouteGroups(app, ctx);
  app.addHook('onClose', close);
  return { app, ctx, routes };
}
