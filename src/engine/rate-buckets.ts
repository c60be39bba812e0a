/**
 * Rate-limit buckets finer than the connector: which bucket a call takes its token from (the
 * connector's `rate_limit.key` rendered over the call, or the action's own `rate_limit`), the
 * throttle that keeps them (BucketedThrottle), and what an answer's headers teach about a bucket
 * (`rate_limit.headers`: spent, refilled after so long).
 */
import { createHash } from 'node:crypto';
import type { Manifest } from '../../generated/manifest.ts';
import { BucketedThrottle } from '../http/buckets.ts';
import { DEFAULT_RETRY, serverRetryDelayMs, type BucketRate, type BucketRef, type Throttle } from '../http/index.ts';
import type { CompiledAction, LoadedManifest } from '../manifest/index.ts';

/** Live keyed buckets per connector when rate_limit.max_keys is not given. */
export const DEFAULT_MAX_KEYS = 1000;

/**
 * True when the manifest keeps buckets finer than the connector: a `rate_limit.key`, a
 * `rate_limit.global`, or an action with a rate_limit of its own. Otherwise a connector has one
 * bucket, as it always had.
 */
export function usesBuckets(m: Manifest): boolean {
  let known = bucketed.get(m);
  if (known === undefined) {
    known =
      m.rate_limit?.key !== undefined ||
      m.rate_limit?.global !== undefined ||
      Object.values(m.entities).some((e) => Object.values(e?.actions ?? {}).some((a) => a?.rate_limit !== undefined));
    bucketed.set(m, known);
  }
  return known;
}
const bucketed = new WeakMap<Manifest, boolean>();

/** The id of a rate's bucket for a key: the rate, then a hash of the key (a key may come from params or credentials: never stored or logged as is). */
export function bucketId(rate: BucketRate, key: string): string {
  const hash = createHash('sha256').update(key).digest('base64url').slice(0, 22);
  return `${rate.requests}/${rate.window_ms}/${rate.burst ?? rate.requests}:${hash}`;
}

/**
 * The bucket of one call, or undefined when the manifest keeps one bucket per connector. An
 * action with its own rate_limit takes from its bucket (keyed by its key, default the action);
 * any other call from the connector's rate_limit, keyed by rate_limit.key (default: one bucket).
 * A call outside any action (the proxy, a token mint) renders the key with no params.
 */
export function callBucket(
  manifest: LoadedManifest,
  action: Pick<CompiledAction, 'entity' | 'name' | 'rateLimit'> | undefined,
  ctx: { params: Record<string, unknown>; credentials: Record<string, unknown>; config: Record<string, unknown> },
): BucketRef | undefined {
  const m = manifest.manifest;
  if (!usesBuckets(m)) return undefined;
  const name = action === undefined ? 'proxy' : `${action.entity}.${action.name}`;
  const own = action?.rateLimit;
  const rate: BucketRate | undefined =
    own?.rate ?? (m.rate_limit ? { requests: m.rate_limit.requests, window_ms: m.rate_limit.window_ms, burst: m.rate_limit.burst } : undefined);
  if (rate === undefined) return undefined;
  const template = own !== undefined ? own.key : manifest.rateKey;
  const rendered = template?.render({ ...ctx, action: name });
  const key = template === undefined ? (own !== undefined ? name : '') : rendered === undefined || rendered === null ? '' : String(rendered);
  return { id: bucketId(rate, key), rate };
}

/**
 * The throttle of a manifest that keeps buckets: `global` (or null) over one bucket per id,
 * each made by `make` (default an in-process bucket with the engine's margin), at most
 * rate_limit.max_keys of them live.
 */
export function bucketedThrottle(
  m: Manifest,
  make: (id: string, rate: BucketRate) => Throttle,
  global: Throttle | null = m.rate_limit?.global !== undefined ? make('global', m.rate_limit.global) : null,
): BucketedThrottle {
  return new BucketedThrottle(global, make, m.rate_limit?.max_keys ?? DEFAULT_MAX_KEYS);
}

/** Milliseconds the answer says its bucket stays spent (`remaining` is 0 and `reset_after` parses); undefined otherwise. */
export function learnedWaitMs(m: Manifest, headers: Pick<Headers, 'get'>, now: number = Date.now()): number | undefined {
  const spec = m.rate_limit?.headers;
  if (spec === undefined) return undefined;
  const remaining = headers.get(spec.remaining);
  if (remaining === null || remaining.trim() === '' || Number(remaining) > 0 || !Number.isFinite(Number(remaining))) return undefined;
  const ms = serverRetryDelayMs(headers, { ...DEFAULT_RETRY, retryAfterHeaders: [spec.reset_after] }, now);
  return ms !== undefined && ms > 0 ? ms : undefined;
}
