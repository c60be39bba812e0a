/**
 * Where the service keeps its limits: the per-organization request limit, the token endpoint
 * limit and each connector's upstream throttle.
 *
 * - SQLite (one process): in memory — token buckets (request-rate-limiter.ts, http RateLimiter).
 * - PostgreSQL: shared by every instance through rate-limiter-flexible's RateLimiterPostgres (one
 *   row per key in `switchboard_rate_limits`), so two instances serving one connector stay under
 *   its upstream's limit together instead of each sending the full rate.
 * - SWITCHBOARD_REDIS_URL set: the same through RateLimiterRedis (an atomic Lua script per take),
 *   which costs no database round trip.
 *
 * The shared upstream throttles are fixed windows (N per window, the window starting at its
 * first request): at most N in any window and 2N across a window boundary, which the upstreams'
 * bursts absorb (Granola: 5/s sustained, 25 burst). The shared per-key request limits behave
 * like the in-process token bucket (BurstyRateLimiter: one request per 60/N s plus a burst of
 * N - 1 per minute), so a caller over the limit is told to retry within 60/N seconds.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { BurstyRateLimiter, RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { limiterFor } from '../engine/index.ts';
import { sleep, ThrottleRefused, type AcquireOptions, type Throttle } from '../http/index.ts';
import type { Database } from '../store/index.ts';
import type { ServiceConfig } from './config.ts';
import { RequestRateLimiter, type RateDecision } from './request-rate-limiter.ts';

/** A per-key limit of `perMinute` requests. */
export interface KeyedLimiter {
  readonly perMinute: number;
  take(key: string): Promise<RateDecision>;
}

/** An upstream rate limit as manifests state it. */
export interface UpstreamRate {
  requests: number;
  window_ms: number;
  burst?: number;
}

export interface LimitBackend {
  readonly kind: 'memory' | 'postgres' | 'redis';
  /** A per-key limit; `name` separates the limits' keys. */
  keyed(name: string, perMinute: number): KeyedLimiter;
  /** The throttle of one connector's upstream calls. */
  throttle(connectorId: string, rate: UpstreamRate, maxQueue: number): Throttle;
  close(): Promise<void>;
}

/** The per-organization request limit (SWITCHBOARD_RATE_LIMIT_PER_MINUTE), or null when disabled. */
export function organizationLimiter(limits: LimitBackend, config: Pick<ServiceConfig, 'rateLimitPerMinute'>): KeyedLimiter | null {
  return config.rateLimitPerMinute > 0 ? limits.keyed('org', config.rateLimitPerMinute) : null;
}

/** The key a request counts under: its organization, or its application on routes without one. */
export function organizationLimitKey(organizationId: string, applicationId: string): string {
  return organizationId !== '' ? `org:${organizationId}` : `app:${applicationId}`;
}

/** The table RateLimiterPostgres uses (its own layout: key, points, expire). */
export const RATE_LIMIT_TABLE = 'switchboard_rate_limits';

class MemoryBackend implements LimitBackend {
  readonly kind = 'memory' as const;
  private readonly keyedLimiters = new Map<string, KeyedLimiter>();
  constructor(private readonly now: () => number) {}
  keyed(name: string, perMinute: number): KeyedLimiter {
    // One bucket store per name and rate, as the shared stores keep one per key prefix: every
    // caller of keyed('org', n) (the authentication hook, POST /mcp's tool calls) takes from it.
    const id = `${name}|${perMinute}`;
    let k = this.keyedLimiters.get(id);
    if (k === undefined) {
      const l = new RequestRateLimiter(perMinute, this.now);
      k = { perMinute, take: async (key) => l.take(key) };
      this.keyedLimiters.set(id, k);
    }
    return k;
  }
  throttle(_connectorId: string, rate: UpstreamRate, maxQueue: number): Throttle {
    // The engine's margin (5 % under the rate, 10 % under the burst), as in library mode: a
    // token bucket as large as the upstream's, spent to the last token, meets the upstream's
    // own bucket with nothing to spare, and the first request of a new connection (slower to
    // arrive than the ones after it) then costs a 429 (issue 25's fleet bench: one per key).
    return limiterFor(rate, maxQueue);
  }
  async close(): Promise<void> {}
}

/** A throttle over a shared fixed-window counter: take a point, or wait until the window ends and try again. */
export class SharedThrottle implements Throttle {
  private waiting = 0;
  /** Until when (epoch ms) this instance paused the key (pauseFor); another instance's pause reads as a plain wait. */
  private pausedUntil = 0;
  /** Total milliseconds callers waited. */
  waitedMs = 0;

  constructor(
    private readonly limiter: RateLimiterAbstract,
    private readonly key: string,
    private readonly maxQueue: number,
    private readonly random: () => number = Math.random,
  ) {}

  get queued(): number {
    return this.waiting;
  }

  async acquire(o: AcquireOptions = {}): Promise<void> {
    o.signal?.throwIfAborted();
    const start = Date.now();
    for (let round = 0; ; round++) {
      try {
        await this.limiter.consume(this.key, 1);
        this.waitedMs += Date.now() - start;
        return;
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw e;
        // A little jitter spreads the waiters of every instance over the window's first milliseconds.
        const wait = Math.max(1, e.msBeforeNext) + Math.floor(this.random() * 10);
        if (round === 0 && this.waiting >= this.maxQueue) throw new ThrottleRefused('queue_full', wait);
        if (o.maxWaitMs !== undefined && Date.now() - start + wait > o.maxWaitMs) throw new ThrottleRefused(Date.now() < this.pausedUntil ? 'paused' : 'deadline', wait);
        this.waiting += 1;
        try {
          await sleep(wait, o.signal);
        } finally {
          this.waiting -= 1;
        }
      }
    }
  }

  pauseFor(ms: number): void {
    if (ms <= 0) return;
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + ms);
    // Best effort: if the store is unreachable, the next consume fails loudly anyway.
    void this.limiter.block(this.key, ms / 1000).catch(() => undefined);
  }
}

function decision(perMinute: number, res: RateLimiterRes, allowed: boolean): RateDecision {
  return { allowed, retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(res.msBeforeNext / 1000)), remaining: Math.max(0, res.remainingPoints) };
}

abstract class StoreBackend implements LimitBackend {
  abstract readonly kind: 'postgres' | 'redis';
  private readonly limiters = new Map<string, RateLimiterAbstract>();
  protected abstract make(keyPrefix: string, points: number, durationSeconds: number): RateLimiterAbstract;
  abstract close(): Promise<void>;

  private limiter(keyPrefix: string, points: number, durationSeconds: number): RateLimiterAbstract {
    const id = `${keyPrefix}|${points}|${durationSeconds}`;
    let l = this.limiters.get(id);
    if (l === undefined) {
      l = this.make(keyPrefix, points, durationSeconds);
      this.limiters.set(id, l);
    }
    return l;
  }

  keyed(name: string, perMinute: number): KeyedLimiter {
    // A token bucket's behaviour from two fixed windows: about one request every 60/perMinute s
    // (so Retry-After is that short, as with the in-process bucket), plus a burst of the rest of
    // the minute's budget. Like a bucket of perMinute, at most about 2 × perMinute in a minute.
    // Whole seconds: the stores keep expiry as integer milliseconds.
    const window = Math.max(1, Math.round(60 / perMinute));
    const steady = this.limiter(`sb:${name}`, Math.max(1, Math.round((perMinute * window) / 60)), window);
    const l = perMinute > 1 ? new BurstyRateLimiter(steady, this.limiter(`sb:${name}:burst`, perMinute - 1, 60)) : steady;
    return {
      perMinute,
      take: async (key) => {
        try {
          return decision(perMinute, await l.consume(key, 1), true);
        } catch (e) {
          if (e instanceof RateLimiterRes) return decision(perMinute, e, false);
          throw e;
        }
      },
    };
  }

  throttle(connectorId: string, rate: UpstreamRate, maxQueue: number): Throttle {
    // Whole seconds (the stores keep integer milliseconds), never above the manifest's rate.
    const seconds = Math.max(1, Math.ceil(rate.window_ms / 1000));
    const points = Math.max(1, Math.floor((rate.requests * seconds * 1000) / rate.window_ms));
    return new SharedThrottle(this.limiter('sb:upstream', points, seconds), connectorId, maxQueue);
  }
}

class PostgresBackend extends StoreBackend {
  readonly kind = 'postgres' as const;
  constructor(
    private readonly pool: pg.Pool,
    private readonly schema: string | undefined,
  ) {
    super();
  }
  protected make(keyPrefix: string, points: number, duration: number): RateLimiterAbstract {
    return new RateLimiterPostgres({ storeClient: this.pool, storeType: 'pool', tableName: RATE_LIMIT_TABLE, ...(this.schema !== undefined ? { schemaName: this.schema } : {}), tableCreated: true, keyPrefix, points, duration });
  }
  async close(): Promise<void> {
    await this.pool.end();
  }
}

class RedisBackend extends StoreBackend {
  readonly kind = 'redis' as const;
  constructor(private readonly client: Redis) {
    super();
  }
  protected make(keyPrefix: string, points: number, duration: number): RateLimiterAbstract {
    return new RateLimiterRedis({ storeClient: this.client, keyPrefix, points, duration });
  }
  async close(): Promise<void> {
    this.client.disconnect();
  }
}

/** The backend for a deployment: Redis when configured, else PostgreSQL when the database is, else memory. */
export async function createLimitBackend(config: ServiceConfig, database: Pick<Database, 'dialect' | 'schema'>, now: () => number = Date.now): Promise<LimitBackend> {
  if (config.redisUrl !== undefined) {
    const client = new Redis(config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 });
    await client.connect();
    return new RedisBackend(client);
  }
  if (database.dialect === 'postgres' && config.databaseUrl !== undefined) {
    const schema = database.schema;
    const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 4, ...(schema !== undefined ? { options: `-c search_path=${schema}` } : {}) });
    const table = schema !== undefined ? `"${schema}"."${RATE_LIMIT_TABLE}"` : `"${RATE_LIMIT_TABLE}"`;
    // Created here rather than by the library, once, tolerating another instance creating it at the same moment.
    for (let attempt = 0; ; attempt++) {
      try {
        await pool.query(`CREATE TABLE IF NOT EXISTS ${table} (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint)`);
        break;
      } catch (e) {
        if (attempt >= 2) {
          await pool.end();
          throw e;
        }
      }
    }
    return new PostgresBackend(pool, schema);
  }
  return new MemoryBackend(now);
}
