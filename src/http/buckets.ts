/**
 * A throttle of many buckets: a call takes a token from its own bucket (AcquireOptions.bucket:
 * one per key a manifest's `rate_limit.key` renders, or an action's own tier), then from the
 * connector-wide `global` bucket when there is one. So one busy key (a base, a channel, a method)
 * waits for its own budget without holding back the others, while the account's overall limit
 * still holds.
 *
 * Bounded: at most `maxKeys` buckets live at once; past that, the least recently used idle one is
 * dropped (one that has refilled completely first: dropping it loses nothing, since a new bucket
 * starts full), so a caller inventing keys cannot grow memory. A key whose bucket was dropped
 * starts again with a full burst; the `global` bucket caps what that can add.
 */
import type { AcquireOptions, BucketRate, BucketRef, Throttle } from './index.ts';

/** How many of the least recently used buckets eviction looks at for an idle one. */
const EVICTION_SCAN = 32;

/** What eviction may know of a bucket: RateLimiter and SharedThrottle tell their waiters, RateLimiter whether it is full. */
interface Inspectable {
  queued?: number;
  full?: boolean;
}

export class BucketedThrottle implements Throttle {
  /** The live buckets by id; Map order is least recently used first. */
  private readonly buckets = new Map<string, Throttle>();
  /** Buckets dropped to stay within maxKeys (for tests and metrics). */
  evicted = 0;

  constructor(
    /** The connector-wide bucket every call also takes from, or null. */
    private readonly global: Throttle | null,
    /** Makes the bucket of an id (in process: a RateLimiter; hosted: a shared throttle under the id). */
    private readonly make: (id: string, rate: BucketRate) => Throttle,
    readonly maxKeys = 1000,
  ) {}

  /** How many buckets are live. */
  get size(): number {
    return this.buckets.size;
  }

  /** The bucket of `ref`, made on first use, now the most recently used. */
  bucket(ref: BucketRef): Throttle {
    let t = this.buckets.get(ref.id);
    if (t !== undefined) {
      this.buckets.delete(ref.id);
      this.buckets.set(ref.id, t);
      return t;
    }
    t = this.make(ref.id, ref.rate);
    this.buckets.set(ref.id, t);
    if (this.buckets.size > this.maxKeys) this.evict(ref.id);
    return t;
  }

  /** Drop one bucket: among the least recently used, a full one, else an idle one, else the oldest. */
  private evict(keep: string): void {
    let idle: string | undefined;
    let oldest: string | undefined;
    let seen = 0;
    for (const [id, t] of this.buckets) {
      if (id === keep) continue;
      oldest ??= id;
      const s = t as Inspectable;
      if ((s.queued ?? 0) === 0) {
        if (s.full === true) {
          idle = id;
          break;
        }
        idle ??= id;
      }
      if (++seen >= EVICTION_SCAN) break;
    }
    const victim = idle ?? oldest;
    if (victim === undefined) return;
    this.buckets.delete(victim);
    this.evicted++;
  }

  /** The call's bucket first (its wait may be long), then the global one, all within maxWaitMs. */
  async acquire(o: AcquireOptions = {}): Promise<void> {
    const start = Date.now();
    if (o.bucket !== undefined) await this.bucket(o.bucket).acquire({ signal: o.signal, maxWaitMs: o.maxWaitMs });
    if (this.global === null) return;
    const left = o.maxWaitMs === undefined ? undefined : Math.max(0, o.maxWaitMs - (Date.now() - start));
    await this.global.acquire({ signal: o.signal, maxWaitMs: left });
  }

  /** Hold back the call's bucket (the upstream said it is spent), else the global one. */
  pauseFor(ms: number, bucket?: BucketRef): void {
    if (bucket !== undefined) this.bucket(bucket).pauseFor(ms);
    else this.global?.pauseFor(ms);
  }
}
