/** Reading an upstream answer: JSON or not, error rules, the status's meaning; a result or the error it means. */
import { SwitchboardError } from '../errors/index.ts';
import { serverRetryDelayMs, type RetryPolicy } from '../http/index.ts';
import { ResponseHeaders, type UpstreamResponse } from '../http/upstream-transport.ts';
import type { CompiledAction, LoadedManifest } from '../manifest/index.ts';
import type { TemplateContext } from '../templates/index.ts';
import { applyErrorRules, upstreamErrorEntries } from './error-rules.ts';
import type { RawResult } from './types.ts';

const RESPONSE_HEADERS = Symbol('response headers');

/** The `headers` of a response's template context: a plain object, made only when a template reads it. */
function headersGetter(this: { [RESPONSE_HEADERS]: ResponseHeaders }): Record<string, string> {
  return this[RESPONSE_HEADERS].object();
}

/** The start of a long text body, for error details. */
export function snippet(text: string): string {
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/** A rate limit from an error rule without a wait of its own still honours the retry_after_headers (Retry-After, X-RateLimit-Reset...). */
function withServerDelay(ruled: SwitchboardError, headers: ResponseHeaders, retry: RetryPolicy): SwitchboardError {
  const delay = ruled.code === 'upstream_rate_limited' && ruled.details['retry_after_ms'] === undefined ? serverRetryDelayMs(headers, retry) : undefined;
  if (delay !== undefined) ruled.details['retry_after_ms'] = delay;
  return ruled;
}

/** Turn an HTTP response into a result or the error it means (not thrown, so call() can retry). */
export function interpretResponse(
  manifest: LoadedManifest,
  retry: RetryPolicy,
  a: CompiledAction,
  res: UpstreamResponse,
  params: Record<string, unknown>,
): RawResult | SwitchboardError {
  const text = res.body.toString('utf8');
  const headers = new ResponseHeaders(res.headers);
  let body: unknown = text;
  let isJson = false;
  if (text.trim() !== '') {
    try {
      body = JSON.parse(text) as unknown;
      isJson = true;
    } catch {
      isJson = false;
    }
  }
  const ctx: TemplateContext = { body, status: res.status, params, [RESPONSE_HEADERS]: headers };
  // Response headers as a plain object only when a template reads them.
  Object.defineProperty(ctx, 'headers', { enumerable: true, get: headersGetter });
  // A status the action names as "nothing to answer" (204 for an empty list, 304 for nothing modified since), without a body.
  if (a.emptyOn?.includes(res.status) === true && text.trim() === '') return { status: res.status, headers, body: undefined, ctx, nothing: true };
  const upstreamBody = isJson ? body : snippet(text);
  const base = { upstream_status: res.status, upstream_body: upstreamBody };
  if (res.status >= 200 && res.status < 300) {
    if (a.onEmpty !== undefined && text.trim() === '') return { status: res.status, headers, body: undefined, ctx, empty: true };
    if (!isJson) {
      return new SwitchboardError(
        'upstream_protocol_error',
        `${manifest.type} answered ${a.entity}.${a.name} with ${text.trim() === '' ? 'an empty body' : 'a body that is not JSON'}`,
        {
          details: { ...base, content_type: headers.get('content-type') },
        },
      );
    }
    const ruled = applyErrorRules(manifest, manifest.bodyErrors, ctx, base);
    if (ruled !== undefined) return withServerDelay(ruled, headers, retry);
    return { status: res.status, headers, body, ctx };
  }
  const ruled = applyErrorRules(manifest, manifest.statusErrors, ctx, base);
  if (ruled !== undefined) return withServerDelay(ruled, headers, retry);
  const upstreamMessage = manifest.errorMessage?.render(ctx);
  const msg = typeof upstreamMessage === 'string' && upstreamMessage !== '' ? upstreamMessage : undefined;
  const say = (fallback: string): string => `${manifest.type}: ${msg ?? fallback}`;
  const errors = upstreamErrorEntries(manifest, ctx);
  const s = res.status;
  if (s === 401 || s === 403) return new SwitchboardError('upstream_credentials_rejected', say(`credentials rejected (HTTP ${s})`), { errors, details: base });
  if (s === 404) return new SwitchboardError('upstream_not_found', say('not found'), { errors, details: base });
  if (s === 429) {
    const delay = serverRetryDelayMs(headers, retry);
    return new SwitchboardError('upstream_rate_limited', say('rate limited'), {
      errors,
      details: { ...base, ...(delay !== undefined ? { retry_after_ms: delay } : {}) },
    });
  }
  if (s >= 500) return new SwitchboardError('upstream_unavailable', say(`HTTP ${s}`), { errors, details: base });
  return new SwitchboardError('upstream_rejected', say(`the request was refused (HTTP ${s})`), { errors, details: base });
}
