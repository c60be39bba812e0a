/**
 * Metrics and traces of the hosted service (docs/operations.md), as one Fastify plugin that
 * buildApp registers before its own hooks and routes:
 *
 * - Metrics (metrics.ts), when SWITCHBOARD_METRICS_PORT and/or SWITCHBOARD_METRICS_TOKEN is set:
 *   `GET /metrics` on a port of its own (nothing else is served there), and/or on the API's port
 *   to a caller with the metrics token. Each answered request is observed by route template.
 * - Traces (tracing.ts), when the OTEL_* variables name an exporter; the SDK is loaded only then.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../context.ts';
import { serviceMetrics, type ServiceMetrics } from './metrics.ts';
import type { HistogramSeries } from './metric-series.ts';
import { problem, sendProblem } from '../http/problem.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** http://host:port of the separate metrics port, once listening (undefined without SWITCHBOARD_METRICS_PORT). */
    metricsUrl(): string | undefined;
  }
}

const WEBHOOK_ROUTES = new Set(['/api/v1/webhooks/:connector_type', '/api/v1/webhooks/:connector_type/:connector_id']);
const PROMETHEUS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

function webhookOutcome(status: number): string {
  if (status < 300) return 'accepted';
  if (status === 503) return 'busy';
  return status < 500 ? 'refused' : 'failed';
}

/** Count each answered request (and vendor webhook delivery) by its route template, never its URL. */
function observeRequests(app: FastifyInstance, ctx: ServiceContext, m: ServiceMetrics): void {
  // Each (method, route, status) series bound once: no label hashing per request.
  const series = new Map<string, HistogramSeries<'method' | 'route' | 'status_code'>>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url;
    const key = `${request.method} ${route ?? ''} ${reply.statusCode}`;
    let h = series.get(key);
    if (h === undefined) {
      h = m.http.labels({ method: request.method, route: route ?? 'unmatched', status_code: reply.statusCode });
      series.set(key, h);
    }
    h.observe(reply.elapsedTime / 1000);
    if (route !== undefined && WEBHOOK_ROUTES.has(route)) {
      const type = (request.params as { connector_type?: unknown } | undefined)?.connector_type;
      // A type the registry does not know is the caller's text: never a label value.
      const label = typeof type === 'string' && ctx.registry.has(type) ? type : 'unknown';
      m.webhooksIn.inc({ connector_type: label, outcome: webhookOutcome(reply.statusCode) });
    }
    done();
  });
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const expected = Buffer.from(`Bearer ${token}`);
  const got = Buffer.from(header ?? '');
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** GET /metrics on the API's port, for a caller with the metrics token (not an API token). */
function tokenRoute(app: FastifyInstance, m: ServiceMetrics, token: string): void {
  app.get('/metrics', { config: { auth: 'public' } }, async (request: FastifyRequest, reply: FastifyReply) => {
    if (!tokenMatches(request.headers.authorization, token)) {
      reply.header('www-authenticate', 'Bearer realm="switchboard-metrics"');
      return sendProblem(request, reply, problem('unauthorized', 'GET /metrics needs the metrics token (SWITCHBOARD_METRICS_TOKEN) as a bearer token'));
    }
    const text = await m.registry.metrics();
    return reply.header('content-type', PROMETHEUS_TYPE).header('cache-control', 'no-store').send(text);
  });
}

/** The separate metrics port: GET /metrics only, bounded (few connections, short timeouts). */
function metricsServer(m: ServiceMetrics): Server {
  const server = createServer({ requestTimeout: 10_000, headersTimeout: 5_000, keepAliveTimeout: 5_000 }, (req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('GET /metrics\n');
      return;
    }
    m.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': PROMETHEUS_TYPE, 'cache-control': 'no-store' }).end(text),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics collection failed\n'),
    );
  });
  server.maxConnections = 16;
  return server;
}

/** The plugin (its hooks apply to the whole app). */
export function observability(ctx: ServiceContext): FastifyPluginAsync {
  const plugin: FastifyPluginAsync = async (app) => {
    const c = ctx.config;
    let server: Server | undefined;
    app.decorate('metricsUrl', () => {
      const a = server?.address() as AddressInfo | null | undefined;
      return a === null || a === undefined ? undefined : `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
    });
    if (c.tracing) {
      const { startTracing, traceRequests } = await import('./tracing.ts');
      traceRequests(app, await startTracing(ctx.log));
    }
    if (c.metricsPort === undefined && c.metricsToken === undefined) return;
    const m = serviceMetrics();
    m.databases.add(ctx.database);
    observeRequests(app, ctx, m);
    if (c.metricsToken !== undefined) tokenRoute(app, m, c.metricsToken);
    if (c.metricsPort !== undefined) {
      const port = c.metricsPort;
      app.addHook('onReady', async () => {
        server = metricsServer(m);
        await new Promise<void>((resolve, reject) => {
          server!.once('error', reject);
          server!.listen(port, c.metricsHost, () => resolve());
        });
      });
    }
    app.addHook('onClose', async () => {
      m.databases.delete(ctx.database);
      if (server !== undefined) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server!.close(() => resolve()));
      }
    });
  };
  // Not encapsulated: the hooks apply to every route of the app (what fastify-plugin does).
  (plugin as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;
  return plugin;
}
