/**
 * Transport to upstream APIs over an injected `fetch`: per-attempt timeouts, a client-side
 * token-bucket throttle, retry delays (exponential backoff with full jitter, or the server's own
 * Retry-After / X-RateLimit-Reset), all bounded.
 */

export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted === true) return reject(signal.reason as Error);
    if (ms <= 0) return resolve();
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal?.reason as Error);
    };
    // The listener goes when the timer fires: long-lived signals must not collect them.
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export { sleep };

/** Why acquire() refused a slot instead of waiting for it. */
export class ThrottleRefused extends Error {
  constructor(
    /** queue_full: too many waiters; paused: the upstream asked this connector to wait (pauseFor) longer than the caller may; deadline: the next slot is further than the caller may wait. */
    readonly reason: 'queue_full' | 'deadline' | 'paused',
    /** Milliseconds until a slot would be free. */
    readonly waitMs: number,
  ) {
    super(
      reason === 'queue_full'
        ? 'too many calls are waiting for this connector'
        : reason === 'paused'
          ? `the upstream paused this connector (next slot in ${waitMs} ms)`
          : `no slot within the deadline (next in ${waitMs} ms)`,
    );
    this.name = 'ThrottleRefused';
  }
}

/** What the interpreter needs of a throttle: RateLimiter in process, or one shared by instances (service). */
export interface Throttle {
  /** Wait for a slot; rejects with ThrottleRefused when none is free within maxWaitMs or the queue is full, or with the signal's reason. */
  acquire(options?: AcquireOptions): Promise<void>;
  /** The upstream said it is out of budget for `ms`: hold every caller back that long (of `bucket` only, when given and the throttle keeps buckets). */
  pauseFor(ms: number, bucket?: BucketRef): void;
}

/** A token bucket's rate: `requests` per `window_ms`, bursts of at most `burst` (default requests). */
export interface BucketRate {
  requests: number;
  window_ms: number;
  burst?: number | undefined;
}

/**
 * The bucket one call takes its token from, in a throttle that keeps several (BucketedThrottle,
 * buckets.ts): its id (the rate and a hash of the rendered key) and its rate. Plain data, so it
 * crosses to the sync worker's thread. A throttle of one bucket ignores it.
 */
export interface BucketRef {
  id: string;
  rate: BucketRate;
}

/** Options of one acquire(). */
export interface AcquireOptions {
  /** Abort the wait (the caller went away): its slot is handed back. */
  signal?: AbortSignal | undefined;
  /** Longest wait accepted (ms); a slot further away is refused with ThrottleRefused('deadline'). Default no limit. */
  maxWaitMs?: number | undefined;
  /** The call's bucket, for a throttle that keeps several (BucketedThrottle); others ignore it. */
  bucket?: BucketRef | undefined;
}

/**
 * Token bucket throttle: holds at most `burst` tokens, refilled at `requests` per `windowMs`.
 * `acquire()` reserves the next token (the bucket may go negative: each waiter owns a future
 * slot) and waits for it, so a connector instance stays under the upstream's limit instead of
 * running into 429s. Waiters are served in order of arrival.
 *
 * Bounded: at most `maxQueue` callers wait at once (default 100), a caller whose slot lies
 * beyond its `maxWaitMs` is refused at once rather than queued, and an aborted waiter gives its
 * slot back.
 */
export class RateLimiter implements Throttle {
  private tokens: number;
  private last: number;
  private readonly perMs: number;
  private waiting = 0;
  /** Until when (epoch ms) the upstream asked us to hold back (pauseFor). */
  private pausedUntil = 0;
  /** Total milliseconds callers have waited for a token (for sync statistics and benchmarks). */
  waitedMs = 0;

  constructor(
    readonly requests: number,
    readonly windowMs: number,
    readonly burst: number = requests,
    readonly maxQueue: number = 100,
  ) {
    this.tokens = burst;
    this.last = Date.now();
    this.perMs = requests / windowMs;
  }

  private refill(): void {
    const now = Date.now();
    this.tokens = Math.min(this.burst, this.tokens + Math.max(0, now - this.last) * this.perMs);
    this.last = now;
  }

  /** Callers currently waiting for a slot. */
  get queued(): number {
    return this.waiting;
  }

  /** True when the bucket has refilled completely and nobody waits: a new bucket would be the same (BucketedThrottle drops these first). */
  get full(): boolean {
    this.refill();
    return this.waiting === 0 && this.tokens >= this.burst;
  }

  /** Milliseconds until a token would be free for a new caller (0: now). */
  nextSlotMs(): number {
    this.refill();
    return this.tokens >= 1 ? 0 : Math.ceil((1 - this.tokens) / this.perMs);
  }

  /** Wait for one token; refuses (ThrottleRefused) when the queue is full or the slot is beyond maxWaitMs. */
  async acquire(options: AcquireOptions | AbortSignal = {}): Promise<void> {
    const o: AcquireOptions = options instanceof AbortSignal ? { signal: options } : options;
    o.signal?.throwIfAborted();
    const wait = this.nextSlotMs();
    if (wait === 0) {
      this.tokens -= 1;
      return;
    }
    if (this.waiting >= this.maxQueue) throw new ThrottleRefused('queue_full', wait);
    if (o.maxWaitMs !== undefined && wait > o.maxWaitMs) throw new ThrottleRefused(Date.now() < this.pausedUntil ? 'paused' : 'deadline', wait);
    this.tokens -= 1; // reserve the slot
    this.waiting += 1;
    try {
      await sleep(wait, o.signal);
      this.waitedMs += wait;
    } catch (e) {
      this.tokens += 1; // hand the slot back
      throw e;
    } finally {
      this.waiting -= 1;
    }
  }

  /** Drain the bucket for `ms` from now: the upstream told us it is out of budget. */
  pauseFor(ms: number): void {
    // Already held back at least that long (several answers telling the same wait): nothing to add.
    if (ms <= 0 || Date.now() + ms <= this.pausedUntil) return;
    this.refill();
    this.tokens = Math.min(this.tokens, 0) - ms * this.perMs;
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + ms);
  }

  /** Drain the bucket until `untilMs` (epoch ms). */
  pauseUntil(untilMs: number): void {
    this.pauseFor(untilMs - Date.now());
  }
}

export interface RetryPolicy {
  /** Total attempts including the first. */
  maxAttempts: number;
  baseDelayMs: number;
  /** Cap on any one backoff wait; a server asking for longer than maxRetryAfterMs ends the retries. */
  maxDelayMs: number;
  /** Longest server-requested wait (Retry-After) slept through; longer ones fail at once with the wait in details. Default 60000. */
  maxRetryAfterMs: number;
  retryAfterHeaders: { name: string; format: 'seconds' | 'unix_seconds' | 'unix_ms' | 'http_date' }[];
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
  retryAfterHeaders: [{ name: 'Retry-After', format: 'seconds' }],
};

/** Milliseconds the server asked us to wait, from the first retry header present; undefined if none. */
export function serverRetryDelayMs(headers: Pick<Headers, 'get'>, policy: RetryPolicy, now: number = Date.now()): number | undefined {
  for (const h of policy.retryAfterHeaders) {
    const v = headers.get(h.name);
    if (v === null || v.trim() === '') continue;
    if (h.format === 'seconds') {
      // Retry-After may also be an HTTP date (RFC 9110 §10.2.3).
      const n = Number(v);
      if (Number.isFinite(n)) return Math.max(0, n * 1000);
      const d = Date.parse(v);
      if (!Number.isNaN(d)) return Math.max(0, d - now);
    } else if (h.format === 'unix_seconds') {
      const n = Number(v);
      if (Number.isFinite(n)) return Math.max(0, n * 1000 - now);
    } else if (h.format === 'unix_ms') {
      // Epoch milliseconds (Linear's X-RateLimit-Requests-Reset).
      const n = Number(v);
      if (Number.isFinite(n)) return Math.max(0, n - now);
    } else {
      const d = Date.parse(v);
      if (!Number.isNaN(d)) return Math.max(0, d - now);
    }
  }
  return undefined;
}

/** Backoff before attempt `attempt` (1-based retry count): full jitter over base * 2^(attempt-1). */
export function backoffDelayMs(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(random() * ceiling);
}
