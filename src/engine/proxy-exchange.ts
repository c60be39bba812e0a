/**
 * One pass-through proxy call as a plan for the interpreter's call loop (ConnectorRuntime.proxy):
 * the request is checked and built here (proxy-request.ts), the loop applies the connector's
 * auth (every variant, OAuth refresh, minted tokens), throttle, deadline, Retry-After and retries
 * exactly as for actions. The vendor's answer goes back unchanged whatever its status: a 401
 * (after the one refresh), 429 or 5xx that the loop could not retry away is handed back as the
 * vendor sent it, not turned into a Switchboard error. Errors of Switchboard's own (a refused
 * path, the throttle's refusal, a timeout, egress) are thrown.
 */
import { SwitchboardError, isSwitchboardError, type ErrorCode } from '../errors/index.ts';
import { serverRetryDelayMs, type RetryPolicy } from '../http/index.ts';
import { ResponseHeaders, type UpstreamResponse } from '../http/upstream-transport.ts';
import type { LoadedManifest } from '../manifest/index.ts';
import type { TemplateContext } from '../templates/index.ts';
import { applyErrorRules } from './error-rules.ts';
import type { CallContext, CallPlan, RawResult, Rendered } from './types.ts';
import {
  checkProxyEnabled,
  proxyAnswerHeaders,
  proxyBase,
  proxyBody,
  proxyHeaders,
  proxyMethod,
  proxyRetrySafe,
  proxyUrl,
  type ProxyRequest,
  type ProxyResponse,
} from './proxy-request.ts';

export type { ProxyRequest, ProxyResponse } from './proxy-request.ts';

/** What the runtime lends a proxy call: its manifest, base URL, limits, auth and call loop. */
export interface ProxyHost {
  manifest: LoadedManifest;
  baseUrl: string;
  maxResponseBytes: number | undefined;
  retry: RetryPolicy;
  /** Set the manifest's own headers (API versions, Accept). */
  manifestHeaders(headers: Record<string, string>): void;
  /** Set the connector's auth header for this attempt. */
  applyAuth(headers: Record<string, string>, call: CallContext, authorization: string | undefined, url: URL): void;
  /** The interpreter's call loop: throttle, attempts, refresh, retries, deadline. */
  call(plan: CallPlan): Promise<RawResult>;
}

/** Marks an error made from a vendor answer: the answer, not the error, goes back to the caller. */
const ANSWERED = 'proxy_answered';

/** The code a non-2xx answer means for the call loop (refresh, wait, retry), or undefined when it is simply the vendor's answer. */
function classify(host: ProxyHost, res: UpstreamResponse): SwitchboardError | undefined {
  const headers = new ResponseHeaders(res.headers);
  let body: unknown = undefined;
  const type = headers.get('content-type') ?? '';
  if (/json/i.test(type) && res.body.length > 0) {
    try {
      body = JSON.parse(res.body.toString('utf8')) as unknown;
    } catch {
      body = undefined;
    }
  }
  const ctx: TemplateContext = { body, status: res.status, params: {}, headers: headers.object() };
  const base = { upstream_status: res.status, [ANSWERED]: true };
  // The manifest's status rules (e.g. GitHub's 403 with x-ratelimit-remaining: 0 is a rate limit).
  const ruled = applyErrorRules(host.manifest, host.manifest.statusErrors, ctx, base);
  let code: ErrorCode | undefined = ruled?.code;
  let retryMs = ruled?.details['retry_after_ms'];
  if (code === undefined) {
    const s = res.status;
    code = s === 401 || s === 403 ? 'upstream_credentials_rejected' : s === 429 ? 'upstream_rate_limited' : s >= 500 ? 'upstream_unavailable' : undefined;
  }
  if (code === undefined || !['upstream_credentials_rejected', 'upstream_rate_limited', 'upstream_unavailable'].includes(code)) return undefined;
  if (code === 'upstream_rate_limited' && typeof retryMs !== 'number') retryMs = serverRetryDelayMs(headers, host.retry);
  return new SwitchboardError(code, `${host.manifest.type} answered the proxy call with HTTP ${res.status}`, {
    details: { ...base, ...(typeof retryMs === 'number' ? { retry_after_ms: retryMs } : {}) },
  });
}

/** Check, send (through the call loop) and answer one proxy call. */
export async function proxyExchange(host: ProxyHost, request: ProxyRequest): Promise<ProxyResponse> {
  checkProxyEnabled(host.manifest);
  const method = proxyMethod(request.method);
  // Every refusal happens here, before the call loop sends anything.
  const url = proxyUrl(proxyBase(host.manifest, host.baseUrl, request.host), request);
  const callerHeaders = proxyHeaders(host.manifest, request.headers, request.dropUnlistedHeaders === true);
  const { body, contentType } = proxyBody(request.body);
  if (body !== undefined && (method === 'GET' || method === 'HEAD')) {
    throw new SwitchboardError('invalid_params', `A proxy ${method} carries no body`, { errors: [{ path: '/body', message: `must be absent for ${method}` }] });
  }
  let last: UpstreamResponse | undefined;
  const plan: CallPlan = {
    retrySafe: proxyRetrySafe(host.manifest, method, callerHeaders),
    maxResponseBytes: request.maxResponseBytes ?? host.maxResponseBytes,
    // A 2xx answer streams through (no rule of the manifest reads a 2xx body here); others are read whole, as the loop decides on them.
    stream: request.stream === true ? (status) => status >= 200 && status < 300 : undefined,
    render: (call, authorization) => {
      const headers: Record<string, string> = { accept: 'application/json' };
      host.manifestHeaders(headers);
      Object.assign(headers, callerHeaders);
      if (contentType !== undefined && headers['content-type'] === undefined) headers['content-type'] = contentType;
      host.applyAuth(headers, call, authorization, url);
      const init: Rendered['init'] = { method, headers, ...(body !== undefined ? { body } : {}) };
      return { url, init };
    },
    interpret: (res) => {
      last = res;
      if (res.stream !== undefined) return { status: res.status, headers: new ResponseHeaders(res.headers), body: res.body, ctx: {}, stream: res.stream };
      const failure = classify(host, res);
      if (failure !== undefined) return failure;
      return { status: res.status, headers: new ResponseHeaders(res.headers), body: res.body, ctx: {} };
    },
  };
  try {
    const raw = await host.call(plan);
    return {
      status: raw.status,
      headers: proxyAnswerHeaders(raw.headers.raw),
      body: raw.body as Buffer,
      ...(raw.stream !== undefined ? { stream: raw.stream } : {}),
    };
  } catch (e) {
    // The loop gave up on a vendor answer (a 401 after the refresh, a 429 or 5xx past its retries): hand it back as sent.
    if (isSwitchboardError(e) && e.details[ANSWERED] === true && last !== undefined) {
      return { status: last.status, headers: proxyAnswerHeaders(last.headers), body: last.body };
    }
    throw e;
  }
}
