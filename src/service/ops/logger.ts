/**
 * The service's pino logger. Credentials, tokens and client secrets never reach a log line:
 * request bodies and headers are not logged at all; the OAuth callback's `code`, `state` and
 * the `secret_id` in URLs are masked by the request serializer; and, as a second line of
 * defence for anything logged by mistake, pino's redaction censors every field named like a
 * secret at the top level and one or two levels down.
 */
import { pino, type Bindings, type ChildLoggerOptions, type DestinationStream, type Logger } from 'pino';

const SECRET_KEYS = [
  'authorization',
  'credentials',
  'client_secret',
  'access_token',
  'refresh_token',
  'api_key',
  'password',
  'secret',
  'token',
  'secret_id',
  'server_side_oauth_secret_id',
];

/** pino redact paths: each secret-looking key at depth 0, 1 and 2. */
export const REDACT_PATHS: string[] = ['req.headers.authorization', 'req.headers.cookie', ...SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`])];

const SENSITIVE_QUERY = new Set(['code', 'state', 'secret_id', 'access_token', 'token', 'client_secret']);

/** The URL with the values of sensitive query parameters masked. */
export function maskUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const parts = [...new URLSearchParams(url.slice(q + 1))].map(
    ([k, v]) => `${encodeURIComponent(k)}=${SENSITIVE_QUERY.has(k.toLowerCase()) ? '[redacted]' : encodeURIComponent(v)}`,
  );
  return `${url.slice(0, q)}?${parts.join('&')}`;
}

interface LoggedRequest {
  method: string;
  url: string;
  id?: string;
  ip?: string;
  headers?: Record<string, unknown>;
}

/** The request id of a request's logger (see requestLogger). */
const REQUEST_ID = Symbol('switchboard.reqId');
/** Marks loggers made by createServiceLogger, and their children: they add the request id themselves. */
const SERVICE_LOGGER = Symbol('switchboard.serviceLogger');
type ServiceLogger = Logger & { [REQUEST_ID]?: unknown; [SERVICE_LOGGER]?: true };

/**
 * Fastify's childLoggerFactory: the logger of one request. pino's child(bindings) would run the
 * request id through the redaction's wildcard paths on every request, logged or not; a service
 * logger instead keeps the id on the child and adds it (mixin) only to lines actually written.
 */
export function requestLogger(logger: ServiceLogger, bindings: Bindings, opts: ChildLoggerOptions): Logger {
  // for-in rather than Object.keys: no arrays made on the path of every request.
  let onlyReqId = logger[SERVICE_LOGGER] === true;
  for (const k in bindings) if (k !== 'reqId') onlyReqId = false;
  if (!onlyReqId) return logger.child(bindings, opts);
  let hasOptions = false;
  for (const _ in opts) hasOptions = true;
  // Without options pino takes its quicker path.
  const child: ServiceLogger = hasOptions ? logger.child({}, opts) : logger.child({});
  child[REQUEST_ID] = bindings['reqId'];
  return child;
}

/** The active span's ids for a log line (set by tracing.ts once tracing is on; none until then). */
let traceFields: (() => { trace_id: string; span_id: string } | undefined) | undefined;

export function setTraceFields(f: typeof traceFields): void {
  traceFields = f;
}

/** Build the logger; `destination` lets tests capture every line. */
export function createServiceLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    // The request id of requestLogger's children, first in the line like a binding would be.
    mixin: (_merge: object, _level: number, logger: ServiceLogger): object => {
      const reqId = logger[REQUEST_ID];
      const trace = traceFields?.();
      if (trace !== undefined) return reqId === undefined ? trace : { reqId, ...trace };
      return reqId === undefined ? {} : { reqId };
    },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      req: (req: LoggedRequest) => ({ method: req.method, url: maskUrl(req.url), ...(req.ip !== undefined ? { remoteAddress: req.ip } : {}) }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  };
  const logger: ServiceLogger = destination === undefined ? pino(options) : pino(options, destination);
  logger[SERVICE_LOGGER] = true;
  return logger;
}
