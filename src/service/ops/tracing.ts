/**
 * OpenTelemetry traces through the official SDK, loaded only when the OTEL_* variables name an
 * exporter (config.tracing; see tracingConfigured in config.ts): otherwise none of it is imported.
 *
 * Spans: one per inbound request (SERVER, named by route template, continuing the caller's W3C
 * traceparent), one per execute and search (withSpan in src/observe/hooks.ts), one per upstream
 * call (CLIENT: method, host, path template, status, retry count) and one per sync run. Never a
 * credential, a header value, a body or a rendered URL. Log lines written inside a span carry its
 * trace_id and span_id (logger.ts).
 */
import type { Context, Span, Tracer } from '@opentelemetry/api';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { addObserver, type Observer } from '../../observe/hooks.ts';
import { setTraceFields } from './logger.ts';

type Api = typeof import('@opentelemetry/api');

export interface Tracing {
  api: Api;
  tracer: Tracer;
  /** Export what is buffered (on close). */
  flush(): Promise<void>;
}

let started: Promise<Tracing> | undefined;

/** The process's tracer provider, made and registered once (OTEL_* variables read by the SDK). */
export function startTracing(log: Logger): Promise<Tracing> {
  started ??= load(log);
  return started;
}

/** OTLP over HTTP: protobuf unless OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL says http/json. */
function protocol(env: NodeJS.ProcessEnv): 'http/protobuf' | 'http/json' {
  const p = (env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] ?? env['OTEL_EXPORTER_OTLP_PROTOCOL'] ?? 'http/protobuf').trim().toLowerCase();
  if (p === 'http/protobuf' || p === 'http/json') return p;
  throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL: Switchboard exports traces over OTLP/HTTP (http/protobuf or http/json), got "${p}"`);
}

async function load(log: Logger): Promise<Tracing> {
  const api = await import('@opentelemetry/api');
  const { NodeTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-node');
  const { detectResources, envDetector, resourceFromAttributes } = await import('@opentelemetry/resources');
  const { OTLPTraceExporter } =
    protocol(process.env) === 'http/json' ? await import('@opentelemetry/exporter-trace-otlp-http') : await import('@opentelemetry/exporter-trace-otlp-proto');
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the default name.
  const resource = resourceFromAttributes({ 'service.name': 'switchboard' }).merge(detectResources({ detectors: [envDetector] }));
  // The batch processor's queue is bounded (OTEL_BSP_MAX_QUEUE_SIZE, default 2048): spans past it are dropped, never held.
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  // Registers the AsyncLocalStorage context manager and the W3C trace context propagator.
  provider.register();
  const tracer = api.trace.getTracer('switchboard');
  setTraceFields(() => {
    const s = api.trace.getActiveSpan()?.spanContext();
    return s === undefined || !api.isSpanContextValid(s) ? undefined : { trace_id: s.traceId, span_id: s.spanId };
  });
  addObserver(tracingObserver(api, tracer));
  log.info('OpenTelemetry tracing on (OTLP over HTTP)');
  return { api, tracer, flush: () => provider.forceFlush().catch(() => undefined) };
}

function tracingObserver(api: Api, tracer: Tracer): Observer {
  const { SpanKind, SpanStatusCode } = api;
  return {
    upstream: (info) => {
      if (info.remote === true) return undefined;
      const span = tracer.startSpan(`${info.method} ${info.route}`, {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': info.method,
          'server.address': info.host,
          'url.template': info.route,
          'switchboard.connector_type': info.connectorType,
          'switchboard.entity': info.entity,
          'switchboard.action': info.action,
        },
      });
      return {
        end: (r) => {
          if (r.status !== undefined) span.setAttribute('http.response.status_code', r.status);
          span.setAttribute('http.request.resend_count', r.retries);
          span.setAttribute('switchboard.upstream.attempts', r.attempts);
          span.setAttribute('switchboard.upstream.wait_ms', Math.round(r.waitedMs));
          if (r.errorCode !== undefined) {
            span.setAttribute('error.type', r.errorCode);
            span.setStatus({ code: SpanStatusCode.ERROR, message: r.errorCode });
          }
          span.end();
        },
      };
    },
    syncRun: (type) => {
      const span = tracer.startSpan('switchboard sync run', { kind: SpanKind.INTERNAL, attributes: { 'switchboard.connector_type': type } });
      return {
        end: (r) => {
          span.setAttributes({
            'switchboard.sync.outcome': r.outcome,
            'switchboard.sync.added': r.added,
            'switchboard.sync.updated': r.updated,
            'switchboard.sync.deleted': r.deleted,
          });
          if (r.outcome === 'failed') span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        },
      };
    },
    span: (name, attributes, fn) =>
      tracer.startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
        try {
          return await fn();
        } catch (e) {
          // The error's code only: its message may quote the upstream.
          const code = (e as { code?: unknown })?.code;
          span.setStatus({ code: SpanStatusCode.ERROR, message: typeof code === 'string' ? code : 'error' });
          if (typeof code === 'string') span.setAttribute('error.type', code);
          throw e;
        } finally {
          span.end();
        }
      }),
  };
}

const REQUEST_TRACE = Symbol('switchboard.trace');
type Traced = FastifyRequest & { [REQUEST_TRACE]?: { span: Span; context: Context; ended: boolean } };

/**
 * The inbound request's span, as Fastify hooks: started in onRequest from the caller's
 * traceparent (if any) and made active (AsyncLocalStorage) for the hooks after it and the
 * route's handler, whose spans are its children.
 */
export function traceRequests(app: FastifyInstance, t: Tracing): void {
  const { api } = t;
  app.addHook('onRequest', (request: Traced, _reply, done) => {
    const parent = api.propagation.extract(api.ROOT_CONTEXT, request.headers);
    const route = request.routeOptions.url ?? 'unmatched';
    const span = t.tracer.startSpan(
      `${request.method} ${route}`,
      { kind: api.SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'http.route': route } },
      parent,
    );
    const context = api.trace.setSpan(parent, span);
    request[REQUEST_TRACE] = { span, context, ended: false };
    api.context.with(context, done);
  });
  const end = (request: Traced, reply: FastifyReply | undefined): void => {
    const traced = request[REQUEST_TRACE];
    if (traced === undefined || traced.ended) return;
    traced.ended = true;
    if (reply !== undefined) {
      traced.span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) traced.span.setStatus({ code: api.SpanStatusCode.ERROR });
    } else {
      traced.span.setAttribute('error.type', 'client_disconnected');
    }
    traced.span.end();
  };
  app.addHook('onResponse', async (request: Traced, reply) => end(request, reply));
  app.addHook('onRequestAbort', async (request: Traced) => end(request, undefined));
  app.addHook('onClose', async () => t.flush());
}
