/**
 * What a runtime is built from: its config values (defaults, checked against enum and pattern,
 * the region), its retry policy, its throttle and its transport.
 */
import type { Manifest } from '../../generated/manifest.ts';
import { SwitchboardError } from '../errors/index.ts';
import { DEFAULT_RETRY, RateLimiter, type BucketRate, type FetchLike, type RetryPolicy, type Throttle } from '../http/index.ts';
import { createUpstreamTransport, sendOverFetch, type UpstreamFetch, type UpstreamSend, type UpstreamTransport } from '../http/upstream-transport.ts';
import { anchored } from '../manifest/schemas.ts';
import { bucketedThrottle, usesBuckets } from './rate-buckets.ts';
import type { RuntimeOptions } from './types.ts';

/**
 * The default transport, shared by every runtime in the process: undici's dispatcher over one
 * keep-alive pool (see http/upstream-transport.ts), created on first use.
 */
let sharedTransport: UpstreamTransport | undefined;
const shared = (): UpstreamTransport => (sharedTransport ??= createUpstreamTransport());
const defaultFetch: FetchLike = (input, init) => shared().fetch(input, init);
const defaultSend: UpstreamSend = (url, req) => shared().send(url, req);

/** The fetch of a runtime: the caller's, else the shared transport's. */
export function fetchFor(options: RuntimeOptions): FetchLike {
  return options.fetch ?? defaultFetch;
}

/** How requests are sent: the transport's lean send when the fetch carries one, else an adapter over the fetch. */
export function sendFor(options: RuntimeOptions, type: string): UpstreamSend {
  const lean = (options.fetch as Partial<UpstreamFetch> | undefined)?.send;
  return options.fetch === undefined ? defaultSend : typeof lean === 'function' ? lean : sendOverFetch(options.fetch, type);
}

/**
 * The client-side throttle for a manifest's rate limit, with a safety margin: a token granted
 * here reaches the upstream a little later (connection set-up, queuing), and the upstream's
 * bucket runs on its own clock, so Switchboard keeps 5% under the sustained rate and 10% under
 * the burst rather than racing the limit.
 */
export function limiterFor(rate: BucketRate, maxQueue?: number): RateLimiter {
  const burst = rate.burst ?? rate.requests;
  return new RateLimiter(rate.requests * 0.95, rate.window_ms, Math.max(1, Math.floor(burst * 0.9)), maxQueue);
}

/**
 * A runtime's default throttle: one bucket from the manifest's rate_limit, or, when the manifest
 * keys its buckets finer (rate_limit.key, rate_limit.global, actions' own rate_limit), a
 * BucketedThrottle of in-process buckets (rate-buckets.ts); null without any rate limit.
 */
export function throttleOf(m: Manifest, maxQueue?: number): Throttle | null {
  if (usesBuckets(m)) return bucketedThrottle(m, (_id, rate) => limiterFor(rate, maxQueue));
  return m.rate_limit ? limiterFor(m.rate_limit, maxQueue) : null;
}

/**
 * The config values templates see: the manifest's defaults, then the caller's, each checked
 * against its setting's enum and pattern, and the region.
 */
export function runtimeConfig(m: Manifest, options: RuntimeOptions): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const [k, def] of Object.entries(m.config ?? {})) if (def?.default !== undefined) config[k] = def.default;
  // A value outside a setting's enum is refused rather than sent (e.g. an API version the
  // upstream no longer serves, which monday would silently answer with another version).
  for (const [k, v] of Object.entries(options.config ?? {})) {
    const allowed = m.config?.[k]?.enum;
    if (allowed !== undefined && !allowed.includes(v as never)) {
      const message = `must be one of: ${allowed.map(String).join(', ')}`;
      throw new SwitchboardError('invalid_params', `Invalid config ${k} for ${m.type}: ${message}`, { errors: [{ path: `/config/${k}`, message }] });
    }
  }
  for (const [k, v] of Object.entries(options.config ?? {})) {
    const pattern = m.config?.[k]?.pattern;
    if (pattern !== undefined && (typeof v !== 'string' || !new RegExp(anchored(pattern), 'u').test(v))) {
      const message = `must match ${pattern}`;
      throw new SwitchboardError('invalid_params', `Invalid config ${k} for ${m.type}: ${message}`, { errors: [{ path: `/config/${k}`, message }] });
    }
  }
  Object.assign(config, options.config ?? {});
  if (options.region !== undefined) config['region'] = options.region;
  return config;
}

/** The manifest's retry settings over the defaults, then the caller's overrides. */
export function retryPolicy(m: Manifest, options: RuntimeOptions): RetryPolicy {
  return {
    ...DEFAULT_RETRY,
    ...(m.retry?.max_attempts !== undefined ? { maxAttempts: m.retry.max_attempts } : {}),
    ...(m.retry?.base_delay_ms !== undefined ? { baseDelayMs: m.retry.base_delay_ms } : {}),
    ...(m.retry?.max_delay_ms !== undefined ? { maxDelayMs: m.retry.max_delay_ms } : {}),
    ...(m.retry?.retry_after_headers !== undefined ? { retryAfterHeaders: m.retry.retry_after_headers } : {}),
    ...(m.retry?.max_retry_after_ms !== undefined ? { maxRetryAfterMs: m.retry.max_retry_after_ms } : {}),
    ...(options.retry ?? {}),
  };
}
