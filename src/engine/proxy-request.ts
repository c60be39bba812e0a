/**
 * The pass-through proxy's request checks: which URL a caller's path may reach, which of its
 * headers go to the vendor, which of the vendor's headers come back, and which calls may be
 * retried. Everything here runs before anything is sent; the connector's auth, throttle, retries
 * and transport are the interpreter's own (ConnectorRuntime.proxy in engine/interpreter.ts).
 *
 * A path is refused rather than normalized: an absolute URL, a scheme-relative `//host`, a
 * backslash, a dot segment (`.`/`..`, also as `%2e`) or an encoded slash or backslash anywhere
 * is `proxy_path_refused`, so the URL sent is always the base URL's path followed by the
 * caller's segments (OWASP's path traversal guidance: reject, do not try to repair).
 */
import type { Readable } from 'node:stream';
import { SwitchboardError } from '../errors/index.ts';
import type { LoadedManifest } from '../manifest/index.ts';

/** Methods the proxy sends. */
export const PROXY_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type ProxyMethod = (typeof PROXY_METHODS)[number];

/** Methods that change nothing (RFC 9110 §9.2.1): the only ones a read-only limit lets through. */
export const READ_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD']);

/** Idempotent methods (RFC 9110 §9.2.2): retried like a list or get. */
const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);

/** A proxy call as library mode, the CLI, MCP and the hosted route describe it. */
export interface ProxyRequest {
  method: string;
  /** A path under the connector's base URL (or under `host`), e.g. `/repos/o/r/branches`; may carry its own `?query`. */
  path: string;
  /** Query parameters added after the path's own (repeated names as arrays), or a raw query string. */
  query?: Record<string, string | number | boolean | Array<string | number | boolean>> | string | undefined;
  /** Request headers for the vendor: only the allow-list (proxyHeaderAllowList) is accepted. */
  headers?: Record<string, string> | undefined;
  /** The body, sent as given (an object or array is sent as JSON). */
  body?: string | Uint8Array | Record<string, unknown> | unknown[] | null | undefined;
  /** Another base URL of the vendor the manifest declares in proxy.hosts, instead of the base URL. */
  host?: string | undefined;
  /** Drop headers outside the allow-list instead of refusing them (the hosted route: its request's own headers are meant for Switchboard). */
  dropUnlistedHeaders?: boolean | undefined;
  /** Largest answer body accepted, in bytes; default the connector's. */
  maxResponseBytes?: number | undefined;
  /**
   * Hand a 2xx answer's body over as it arrives (ProxyResponse.stream) instead of reading it
   * whole: the hosted route. Only with the service's lean transport; otherwise the body is read whole.
   */
  stream?: boolean | undefined;
}

/** The vendor's answer as the proxy hands it back: status, the headers a client needs, the body unchanged. */
export interface ProxyResponse {
  status: number;
  headers: Record<string, string>;
  /** The body read whole (empty when it is streamed). */
  body: Buffer;
  /**
   * With ProxyRequest.stream, a 2xx answer's body as it arrives: read it or destroy it. It fails
   * (upstream_response_too_large) past the size cap, or on the call's timeout or the caller's signal.
   */
  stream?: Readable | undefined;
}

/** Never forwarded, whatever a manifest allows: credentials, the target, hop-by-hop (RFC 9110 §7.6.1) and forwarding headers. */
const NEVER_FORWARDED: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'host',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-real-ip',
  'via',
  'content-length',
  'expect',
]);

/** Forwarded for every connector: content negotiation and conditional requests. */
const DEFAULT_FORWARDED = [
  'accept',
  'accept-language',
  'content-type',
  'content-language',
  'if-match',
  'if-none-match',
  'if-modified-since',
  'if-unmodified-since',
  'range',
  'prefer',
];

/** Answer headers a client needs: the body's type, pagination, caching, and rate-limit state. */
const ANSWER_HEADERS: ReadonlySet<string> = new Set([
  'content-type',
  'content-language',
  'content-disposition',
  'content-range',
  'link',
  'etag',
  'last-modified',
  'location',
  'retry-after',
  'x-total-count',
  'x-next-page',
  'x-request-id',
]);
/** Rate-limit headers under their many names (RateLimit-*, X-RateLimit-*, X-Rate-Limit-*, X-HubSpot-RateLimit-*...). */
const RATE_LIMIT_HEADER = /rate-?limit/i;

/** The request headers a caller may send through this connector's proxy (lower-case). */
export function proxyHeaderAllowList(manifest: LoadedManifest): Set<string> {
  const p = manifest.manifest.proxy;
  const out = new Set(DEFAULT_FORWARDED);
  for (const h of p?.headers ?? []) out.add(h.toLowerCase());
  if (p?.idempotency_header !== undefined) out.add(p.idempotency_header.toLowerCase());
  for (const h of NEVER_FORWARDED) out.delete(h);
  return out;
}

/** The proxy is off for the connector type (manifest proxy.enabled: false): proxy_disabled. */
export function checkProxyEnabled(manifest: LoadedManifest): void {
  if (manifest.manifest.proxy?.enabled === false) {
    throw new SwitchboardError('proxy_disabled', `${manifest.type} has no proxy: its manifest switches it off`, { details: { connector_type: manifest.type } });
  }
}

/** The method upper-cased, or invalid_params naming the ones the proxy sends. */
export function proxyMethod(method: string): ProxyMethod {
  const m = method.toUpperCase();
  if (!(PROXY_METHODS as readonly string[]).includes(m)) {
    throw new SwitchboardError('invalid_params', `The proxy sends ${PROXY_METHODS.join(', ')}, not ${method}`, {
      errors: [{ path: '/method', message: `must be one of: ${PROXY_METHODS.join(', ')}` }],
    });
  }
  return m as ProxyMethod;
}

function refusePath(path: string, why: string): SwitchboardError {
  return new SwitchboardError('proxy_path_refused', `Not sent: the proxy path ${JSON.stringify(path.slice(0, 200))} ${why}`, {
    errors: [{ path: '/path', message: why }],
  });
}

/**
 * The caller's path (without its query) checked segment by segment: one leading "/" is optional;
 * an absolute URL, `//host`, a backslash, control characters, a dot segment or an encoded slash
 * is refused. Answers the path as given (its percent-encoding kept), without the leading "/".
 */
export function checkProxyPath(path: string): string {
  const rest = path.startsWith('/') ? path.slice(1) : path;
  if (rest.startsWith('/')) throw refusePath(path, 'is scheme-relative (//host): name a path under the base URL');
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(rest)) throw refusePath(path, 'is an absolute URL: name a path under the base URL');
  if (/[\\\u0000-\u001f\u007f\s#]/.test(rest)) throw refusePath(path, 'contains a backslash, a control character, a space or "#"');
  for (const segment of rest.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw refusePath(path, 'has a malformed percent-encoding');
    }
    if (decoded === '.' || decoded === '..') throw refusePath(path, 'has a dot segment ("." or ".."), which could climb out of the base path');
    if (decoded.includes('/') || decoded.includes('\\')) throw refusePath(path, 'has an encoded slash or backslash (%2F, %5C)');
  }
  return rest;
}

/** The base URL a call goes to: the connector's, or one of the manifest's proxy.hosts (else proxy_host_refused). */
export function proxyBase(manifest: LoadedManifest, baseUrl: string, host: string | undefined): string {
  if (host === undefined || host === '') return baseUrl;
  const wanted = host.replace(/\/+$/, '');
  const hosts = (manifest.manifest.proxy?.hosts ?? []).map((h) => h.replace(/\/+$/, ''));
  const found = hosts.find((h) => h === wanted || new URL(h).host === wanted);
  if (found === undefined) {
    throw new SwitchboardError(
      'proxy_host_refused',
      `Not sent: ${manifest.type}'s proxy reaches its base URL${hosts.length > 0 ? ` and ${hosts.join(', ')}` : ' only'}, not ${host.slice(0, 200)}`,
      {
        errors: [{ path: '/host', message: hosts.length > 0 ? `must be one of: ${hosts.join(', ')}` : 'this connector declares no other hosts' }],
        details: { hosts },
      },
    );
  }
  return found;
}

function appendQuery(url: URL, query: ProxyRequest['query']): void {
  if (query === undefined) return;
  if (typeof query === 'string') {
    const q = query.startsWith('?') ? query.slice(1) : query;
    if (q === '') return;
    url.search = url.search === '' ? `?${q}` : `${url.search}&${q}`;
    return;
  }
  for (const [k, v] of Object.entries(query)) {
    if (Array.isArray(v)) for (const item of v) url.searchParams.append(k, String(item));
    else url.searchParams.append(k, String(v));
  }
}

/**
 * The URL a proxy call is sent to: the base (checked by proxyBase) joined with the checked path
 * and the query. Proven to stay under the base's origin and path.
 */
export function proxyUrl(base: string, request: Pick<ProxyRequest, 'path' | 'query'>): URL {
  const q = request.path.indexOf('?');
  const rawPath = q === -1 ? request.path : request.path.slice(0, q);
  const rest = checkProxyPath(rawPath);
  const baseUrl = new URL(base);
  const basePath = baseUrl.pathname.replace(/\/+$/, '');
  const url = new URL(`${baseUrl.origin}${basePath}/${rest}`);
  if (q !== -1) appendQuery(url, request.path.slice(q + 1));
  appendQuery(url, request.query);
  // The checks above make these hold; they are kept as the one statement of what may be reached.
  if (url.origin !== baseUrl.origin || (url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`)) || url.hash !== '') {
    throw refusePath(request.path, 'does not stay under the base URL');
  }
  return url;
}

/**
 * The caller's headers to send: names outside the allow-list are proxy_header_refused (listing
 * the allowed ones) unless `drop` (the hosted route, whose own request carries Host, its bearer
 * token and forwarding headers, drops them instead). A line break in a value is refused.
 */
export function proxyHeaders(manifest: LoadedManifest, given: Record<string, string | string[] | undefined> | undefined, drop = false): Record<string, string> {
  const allowed = proxyHeaderAllowList(manifest);
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(given ?? {})) {
    if (raw === undefined) continue;
    const k = name.toLowerCase();
    if (!allowed.has(k)) {
      if (drop) continue;
      throw new SwitchboardError(
        'proxy_header_refused',
        `Not sent: the proxy does not forward the header ${name}${NEVER_FORWARDED.has(k) ? ' (the connector supplies credentials and connection headers itself)' : ''}; forwarded: ${[...allowed].join(', ')}`,
        {
          errors: [{ path: `/headers/${name}`, message: 'not forwarded' }],
          details: { allowed: [...allowed] },
        },
      );
    }
    const value = Array.isArray(raw) ? raw.join(', ') : raw;
    if (/[\r\n]/.test(value)) {
      throw new SwitchboardError('invalid_header_value', `The value of header ${name} contains a line break`, {
        errors: [{ path: `/headers/${name}`, message: 'contains CR or LF' }],
      });
    }
    out[k] = value;
  }
  return out;
}

/** The body as bytes or text, and the content type it implies when the caller named none. */
export function proxyBody(body: ProxyRequest['body']): { body: string | Uint8Array | undefined; contentType: string | undefined } {
  if (body === undefined || body === null) return { body: undefined, contentType: undefined };
  if (typeof body === 'string' || body instanceof Uint8Array) return { body, contentType: undefined };
  return { body: JSON.stringify(body), contentType: 'application/json' };
}

/** True when a failed attempt may be sent again: an idempotent method, or one carrying the vendor's idempotency key. */
export function proxyRetrySafe(manifest: LoadedManifest, method: string, headers: Record<string, string>): boolean {
  if (IDEMPOTENT_METHODS.has(method)) return true;
  const key = manifest.manifest.proxy?.idempotency_header?.toLowerCase();
  return key !== undefined && headers[key] !== undefined && headers[key] !== '';
}

/** The vendor's answer headers a client needs (answerHeaders), several values joined. */
export function proxyAnswerHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined) continue;
    const name = k.toLowerCase();
    if (!ANSWER_HEADERS.has(name) && !RATE_LIMIT_HEADER.test(name)) continue;
    out[name] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}
