/**
 * Transport to upstream APIs over an injected `fetch`: per-attempt timeouts, a client-side
 * token-bucket throttle, retry delays (exponential backoff with full jitter, or the server's own
 * Retry-After / X-RateLimit-Reset), all bounded.
 */

export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (ms <= 0) return resolve();
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(signal.reason as Error);
      },
      { once: true },
    );
  });

export { sleep };

/**
 * Token bucket throttle: holds at most `burst` tokens, refilled at `requests` per `windowMs`.
 * `acquire()` waits until a token is free, so a connector instance stays under the upstream's
 * limit instead of running into 429s. Waiters are served in order.
 */
export class RateLimiter {
  private tokens: number;
  private last: number;
  private readonly perMs: number;
  private queue: Promise<void> = Promise.resolve();
  /** Total milliseconds callers have waited for a token (for sync statistics and benchmarks). */
  waitedMs = 0;

  constructor(
    readonly requests: number,
    readonly windowMs: number,
    readonly burst: number = requests,
  ) {
    this.tokens = burst;
    this.last = Date.now();
    this.perMs = requests / windowMs;
  }

  private refill(): void {
    const now = Date.now();
    this.tokens = Math.min(this.burst, this.tokens + (now - this.last) * this.perMs);
    this.last = now;
  }

  /** Wait for one token. */
  acquire(signal?: AbortSignal): Promise<void> {
    const turn = this.queue.then(async () => {
      this.refill();
      if (this.tokens < 1) {
        const wait = Math.ceil((1 - this.tokens) / this.perMs);
        this.waitedMs += wait;
        await sleep(wait, signal);
        this.refill();
      }
      this.tokens -= 1;
    });
    // A failed (aborted) turn must not block the callers behind it.
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  /** Drain the bucket until `untilMs` (epoch ms): the upstream told us it is out of budget. */
  pauseUntil(untilMs: number): void {
    const wait = untilMs - Date.now();
    if (wait <= 0) return;
    this.tokens = Math.min(this.tokens, 0) - wait * this.perMs;
    this.last = Date.now();
  }
}

export interface RetryPolicy {
  /** Total attempts including the first. */
  maxAttempts: number;
  baseDelayMs: number;
  /** Cap on any one wait; a server asking for longer ends the retries. */
  maxDelayMs: number;
  retryAfterHeaders: { name: string; format: 'seconds' | 'unix_seconds' | 'http_date' }[];
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 30_000,
  retryAfterHeaders: [{ name: 'Retry-After', format: 'seconds' }],
};

/** Milliseconds the server asked us to wait, from the first retry header present; undefined if none. */
export function serverRetryDelayMs(headers: Headers, policy: RetryPolicy, now: number = Date.now()): number | undefined {
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
