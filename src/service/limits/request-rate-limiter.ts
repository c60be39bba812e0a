/**
 * The per-organization request limit: a token bucket per key (organization id) holding at most
 * `perMinute` tokens, refilled continuously at `perMinute` per minute.
 *
 * In process on purpose: the limit protects this instance and the upstreams behind it, needs
 * no database round trip per request, and with N instances the effective limit is N × the
 * configured one (documented). Buckets of idle keys are dropped so memory stays bounded by the
 * number of recently active organizations.
 */
export interface RateDecision {
  allowed: boolean;
  /** Whole seconds until a request would be allowed (for Retry-After); 0 when allowed. */
  retryAfterSeconds: number;
  /** Tokens left after this request. */
  remaining: number;
}

interface Bucket {
  tokens: number;
  last: number;
}

export class RequestRateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;
  private lastSweep: number;

  constructor(
    readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {
    this.perMs = perMinute / 60_000;
    this.lastSweep = now();
  }

  /** Take one token for `key`. */
  take(key: string): RateDecision {
    const now = this.now();
    this.sweep(now);
    let b = this.buckets.get(key);
    if (b === undefined) {
      b = { tokens: this.perMinute, last: now };
      this.buckets.set(key, b);
    } else {
      // Math.max: a clock stepping backwards (NTP) must not drain the bucket.
      b.tokens = Math.min(this.perMinute, b.tokens + Math.max(0, now - b.last) * this.perMs);
      b.last = now;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { allowed: true, retryAfterSeconds: 0, remaining: Math.floor(b.tokens) };
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - b.tokens) / this.perMs / 1000)), remaining: 0 };
  }

  /** Once a minute, forget buckets that have refilled completely (idle for a full window). */
  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [k, b] of this.buckets) if (b.tokens + (now - b.last) * this.perMs >= this.perMinute) this.buckets.delete(k);
  }
}
