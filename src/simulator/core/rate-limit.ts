/**
 * Rate-limit counting shared by the simulators' front ends (the sidecar's `rate_limit`): a fixed
 * window that opens with the first request after a reset, a sliding window (`sliding`), or a token
 * bucket (`bucket`: `limit` requests at once, refilled evenly over the window), with the headers
 * the sidecar names for limit, remaining, window and reset.
 */
import type { Sidecar } from '../sidecar/types.ts';
import { TokenBucket } from '../sim-server.ts';

export type RateLimit = NonNullable<Sidecar['rate_limit']>;

export interface RateCount {
  headers: Record<string, string>;
  exceeded: boolean;
  /** Seconds until a request would be accepted again (at least 1). */
  retry: number;
}

const NONE: RateCount = { headers: {}, exceeded: false, retry: 0 };

export class RateCounter {
  private windowStart = -1;
  private used = 0;
  /** Request times in the sliding window (rate_limit.sliding): refused requests are not counted. */
  private times: number[] = [];
  private bucket: TokenBucket | undefined;

  constructor(
    /** The limit in force; undefined: none. */
    public rule: RateLimit | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** Change (or disable) the limit; starts a fresh window. */
  set(rule: RateLimit | undefined): void {
    this.rule = rule;
    this.reset();
  }

  /** Start a fresh window (and a full bucket). */
  reset(): void {
    this.windowStart = -1;
    this.used = 0;
    this.times = [];
    this.bucket = undefined;
  }

  /** Count one request. */
  count(): RateCount {
    const rl = this.rule;
    if (rl === undefined) return { ...NONE, headers: {} };
    if (rl.bucket === true) return this.take(rl);
    const windowMs = rl.window_seconds * 1000;
    const t = this.now();
    let start: number;
    let exceeded: boolean;
    if (rl.sliding === true) {
      this.times = this.times.filter((x) => x > t - windowMs);
      exceeded = this.times.length >= rl.limit;
      if (!exceeded) this.times.push(t);
      this.used = this.times.length;
      start = this.times[0] ?? t;
    } else {
      // A window opens with the first request after a reset (set, reset) and the next ones follow
      // it end to end, so a test's first window is always a whole one.
      if (this.windowStart < 0 || t >= this.windowStart + windowMs) {
        this.windowStart = this.windowStart < 0 ? t : this.windowStart + Math.floor((t - this.windowStart) / windowMs) * windowMs;
        this.used = 0;
      }
      start = this.windowStart;
      this.used++;
      exceeded = this.used > rl.limit;
    }
    const names = rl.headers ?? {};
    const headers: Record<string, string> = {};
    const retry = Math.max(1, Math.ceil((start + windowMs - t) / 1000));
    if (names.limit !== undefined) headers[names.limit] = String(rl.limit);
    if (names.remaining !== undefined) headers[names.remaining] = String(Math.max(0, rl.limit - this.used));
    if (names.window_ms !== undefined) headers[names.window_ms] = String(windowMs);
    if (names.reset !== undefined)
      headers[names.reset] =
        rl.reset === 'seconds' ? String(retry) : rl.reset === 'unix_ms' ? String(start + windowMs) : String(Math.ceil((start + windowMs) / 1000));
    return { headers, exceeded, retry };
  }

  /** rate_limit.bucket: take a token; the headers say until when the bucket is full again. */
  private take(rl: RateLimit): RateCount {
    this.bucket ??= new TokenBucket(rl.limit, rl.limit / rl.window_seconds);
    const wait = this.bucket.take();
    const remaining = this.bucket.remaining();
    const names = rl.headers ?? {};
    const headers: Record<string, string> = {};
    if (names.limit !== undefined) headers[names.limit] = String(rl.limit);
    if (names.remaining !== undefined) headers[names.remaining] = String(remaining);
    if (names.window_ms !== undefined) headers[names.window_ms] = String(rl.window_seconds * 1000);
    const full = ((rl.limit - remaining) * rl.window_seconds) / rl.limit;
    const now = this.now();
    if (names.reset !== undefined)
      headers[names.reset] =
        rl.reset === 'seconds' ? String(Math.ceil(full)) : rl.reset === 'unix_ms' ? String(now + Math.ceil(full * 1000)) : String(Math.ceil(now / 1000 + full));
    return { headers, exceeded: wait > 0, retry: Math.max(1, Math.ceil(wait)) };
  }
}
