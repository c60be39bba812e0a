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
 * first request; on PostgreSQL a busy key's next window starts where the last one ended, see
 * PostgresThrottleStore): at most N in any window and 2N across a window boundary, which the
 * upstreams' bursts absorb (Granola: 5/s sustained, 25 burst). Each instance queues a key's
 * callers itself (SharedThrottle), and on PostgreSQL sends the requests of all its keys waiting
 * at once as one statement. The shared per-key request limits behave
 * like the in-process token bucket (BurstyRateLimiter: one request per 60/N s plus a burst of
 * N - 1 per minute), so a caller over the limit is told to retry within 60/N seconds.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { BurstyRateLimiter, RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Manifest } from '../../../generated/manifest.ts';
import { bucketedThrottle, limiterFor, usesBuckets } from '../../engine/index.ts';
import { sleep, ThrottleRefused, type AcquireOptions, type Throttle } from '../../http/index.ts';
import type { Database } from '../../store/index.ts';
import type { ServiceConfig } from '../config.ts';
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
  burst?: number | undefined;
}

export interface LimitBackend {
  readonly kind: 'memory' | 'postgres' | 'redis';
  /** A per-key limit; `name` separates the limits' keys. */
  keyed(name: string, perMinute: number): KeyedLimiter;
  /** The throttle of one connector's upstream calls. */
  throttle(connectorId: string, rate: UpstreamRate, maxQueue: number): Throttle;
  close(): Promise<void>;
}

/**
 * The upstream throttle of a budget (runtime-pool.ts budgetKey) for a manifest: its rate_limit's
 * bucket in the backend; or, when the manifest keys buckets finer (rate_limit.key, actions' own
 * rate_limit), a BucketedThrottle whose buckets are each the backend's throttle under
 * "<budget>|<bucket id>" (so on PostgreSQL or Redis every instance shares them too), under
 * rate_limit.global as the budget's own.
 */
export function upstreamThrottle(limits: LimitBackend, budget: string, m: Manifest, maxQueue: number): Throttle | null {
  const rl = m.rate_limit;
  if (usesBuckets(m)) {
    const global = rl?.global !== undefined ? limits.throttle(budget, rl.global, maxQueue) : null;
    return bucketedThrottle(m, (id, rate) => limits.throttle(`${budget}|${id}`, rate, maxQueue), global);
  }
  return rl === undefined ? null : limits.throttle(budget, rl, maxQueue);
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

/** What SharedThrottle needs of a shared counter: rate-limiter-flexible's limiters, or PostgresThrottleStore's. */
export type ThrottleCounter = Pick<RateLimiterAbstract, 'points' | 'consume' | 'block'>;

interface ThrottleWaiter {
  start: number;
  maxWaitMs: number | undefined;
  signal: AbortSignal | undefined;
  resolve(): void;
  reject(e: unknown): void;
  onAbort?: () => void;
}

/**
 * A throttle over a shared fixed-window counter, with a queue per key in this instance: callers
 * wait in order of arrival, and one request at a time asks the store for a point for each of
 * the callers waiting (up to what the window has left as far as this instance knows), granted or
 * refused together. When the store answers that the window is spent (a refusal, or a grant
 * leaving no points), the queue waits for the window's end without asking again. Before, every caller
 * asked the store itself and every refused caller asked again at the window's end: 100 syncs
 * hydrating 4 records at a time sent about twice the statements their grants needed, in bursts
 * at each window's end, and a request's own throttle check queued behind them for the limits
 * pool's connections (issue 25's fleet bench).
 */
export class SharedThrottle implements Throttle {
  private readonly queue: ThrottleWaiter[] = [];
  private pumping = false;
  /** Until when (epoch ms) the store's window is known to be spent: nobody asks before. */
  private spentUntil = 0;
  /** The end (epoch ms) of the store's window last seen, and the points it had left then. */
  private windowEnd = 0;
  private windowLeft = 0;
  /** Until when (epoch ms) this instance paused the key (pauseFor); another instance's pause reads as a plain wait. */
  private pausedUntil = 0;
  /** Total milliseconds callers waited. */
  waitedMs = 0;
  /** Requests made to the store (consume), for tests and benches. */
  asked = 0;

  constructor(
    private readonly limiter: ThrottleCounter,
    private readonly key: string,
    private readonly maxQueue: number,
    private readonly random: () => number = Math.random,
    /** The callers of a spent window wake up within this many ms after its end, at random. */
    private readonly spreadMs = 10,
  ) {}

  /** Callers waiting (the one being served included). */
  get queued(): number {
    return this.queue.length;
  }

  acquire(o: AcquireOptions = {}): Promise<void> {
    o.signal?.throwIfAborted();
    const now = Date.now();
    const wait = this.spentUntil - now;
    if (wait > 0) {
      if (this.queue.length >= this.maxQueue) return Promise.reject(new ThrottleRefused('queue_full', wait));
      if (o.maxWaitMs !== undefined && wait > o.maxWaitMs) return Promise.reject(new ThrottleRefused(now < this.pausedUntil ? 'paused' : 'deadline', wait));
    }
    return new Promise<void>((resolve, reject) => {
      const w: ThrottleWaiter = { start: now, maxWaitMs: o.maxWaitMs, signal: o.signal, resolve, reject };
      if (o.signal !== undefined) {
        const signal = o.signal;
        w.onAbort = () => {
          const i = this.queue.indexOf(w);
          if (i >= 0) this.queue.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      this.queue.push(w);
      if (!this.pumping) void this.pump();
    });
  }

  private settle(w: ThrottleWaiter, error?: unknown): void {
    const i = this.queue.indexOf(w);
    if (i >= 0) this.queue.splice(i, 1);
    if (w.onAbort !== undefined) w.signal?.removeEventListener('abort', w.onAbort);
    if (error !== undefined) w.reject(error);
    else {
      this.waitedMs += Date.now() - w.start;
      w.resolve();
    }
  }

  /** Serve the queue: the head asks the store; a spent window is waited out once for everyone. */
  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      while (this.queue.length > 0) {
        const now = Date.now();
        if (this.spentUntil > now) {
          // Callers who cannot wait that long are told now, as the store would tell them.
          const reason = now < this.pausedUntil ? 'paused' : 'deadline';
          for (const w of [...this.queue])
            if (w.maxWaitMs !== undefined && now - w.start + (this.spentUntil - now) > w.maxWaitMs)
              this.settle(w, new ThrottleRefused(reason, this.spentUntil - now));
          if (this.queue.length === 0) break;
          await sleep(this.spentUntil - now);
          continue;
        }
        // Ask for a point per caller waiting, up to what the window has left as far as this
        // instance knows (all of it once the window it last saw has ended).
        const left = now < this.windowEnd ? this.windowLeft : this.limiter.points;
        const batch = this.queue.slice(0, Math.max(1, Math.min(this.queue.length, left)));
        this.asked += 1;
        try {
          const res = await this.limiter.consume(this.key, batch.length);
          const at = Date.now();
          this.windowEnd = at + Math.max(0, res.msBeforeNext);
          this.windowLeft = res.remainingPoints;
          // The last point of the window: the next caller waits for its end without asking.
          if (res.remainingPoints <= 0) this.spentUntil = at + Math.max(1, res.msBeforeNext) + Math.floor(this.random() * this.spreadMs);
          for (const w of batch) this.settle(w);
        } catch (e) {
          if (!(e instanceof RateLimiterRes)) {
            for (const w of batch) this.settle(w, e);
            continue;
          }
          // A little jitter spreads the waiters of every instance over the window's first milliseconds.
          this.spentUntil = Date.now() + Math.max(1, e.msBeforeNext) + Math.floor(this.random() * this.spreadMs);
        }
      }
    } finally {
      this.pumping = false;
    }
  }

  pauseFor(ms: number): void {
    if (ms <= 0) return;
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + ms);
    this.spentUntil = Math.max(this.spentUntil, this.pausedUntil);
    // Best effort: if the store is unreachable, the next consume fails loudly anyway.
    void this.limiter.block(this.key, ms / 1000).catch(() => undefined);
  }
}

/** One key's request in a batch of PostgresThrottleStore. */
interface CounterAsk {
  key: string;
  points: number;
  limit: number;
  durationMs: number;
  resolve(res: RateLimiterRes): void;
  reject(e: unknown): void;
}

/**
 * The upstream throttles' counters on PostgreSQL, in RateLimiterPostgres's table and with its
 * semantics (a fixed window per key; a request over the window's points is refused and
 * counted), but the requests of all of an instance's throttles waiting at the same time go to
 * the server as one statement: at most `concurrency` statements in flight, and every request
 * arriving meanwhile joins the next.
 *
 * One difference: a window that ended less than a window ago is followed by the next one on
 * the same grid (it starts when the last one ended), not by one starting at the request. A busy
 * key's windows started late by the time its waiters took to wake up and ask (timers, the
 * event loop, the statement), each window, so 5 per second became 5 per 1.1-1.2 s under load
 * (issue 25's fleet bench). The upstream sees the same at most N per window, and 2N across a
 * boundary, as before. Before, each request was a statement of
 * its own on the limits pool's 4 connections; 100 syncs' throttles kept them busy and a request's
 * own check waited its turn (issue 25's fleet bench: 0.3-0.6 s per check under load).
 */
export class PostgresThrottleStore {
  private pending = new Map<string, CounterAsk>();
  private inFlight = 0;
  /** Statements sent, for tests and benches. */
  statements = 0;

  constructor(
    private readonly pool: Pick<pg.Pool, 'query'>,
    private readonly table: string,
    private readonly concurrency = 2,
  ) {}

  /** A counter of `points` per `durationSeconds` under `keyPrefix`, as RateLimiterPostgres names its keys. */
  counter(keyPrefix: string, points: number, durationSeconds: number, blocker: Pick<RateLimiterAbstract, 'block'>): ThrottleCounter {
    return {
      points,
      consume: (key: string | number, n = 1) => this.ask(`${keyPrefix}:${key}`, n, points, durationSeconds * 1000),
      block: (key: string | number, seconds: number) => blocker.block(key, seconds),
    } as ThrottleCounter;
  }

  private ask(key: string, points: number, limit: number, durationMs: number): Promise<RateLimiterRes> {
    return new Promise<RateLimiterRes>((resolve, reject) => {
      const same = this.pending.get(key);
      if (same !== undefined) {
        // One row per key in a statement: a second request of the key waits for the next.
        void this.flushed().then(() => this.ask(key, points, limit, durationMs).then(resolve, reject));
        return;
      }
      this.pending.set(key, { key, points, limit, durationMs, resolve, reject });
      if (this.inFlight < this.concurrency) void this.flush();
    });
  }

  private waiters: (() => void)[] = [];
  private flushed(): Promise<void> {
    return new Promise((r) => this.waiters.push(r));
  }

  private async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    this.inFlight++;
    this.statements++;
    const done = this.waiters;
    this.waiters = [];
    try {
      const now = Date.now();
      const r = await this.pool.query<{ key: string; points: number; expire: string | number | null }>(
        `INSERT INTO ${this.table} (key, points, expire)
           SELECT k, p, $4::bigint + d FROM unnest($1::text[], $2::int[], $3::bigint[]) AS u(k, p, d)
         ON CONFLICT (key) DO UPDATE SET
           points = CASE WHEN ${this.table}.expire <= $4 THEN excluded.points ELSE ${this.table}.points + excluded.points END,
           expire = CASE WHEN ${this.table}.expire > $4 THEN ${this.table}.expire
                         WHEN ${this.table}.expire > 2 * $4 - excluded.expire THEN ${this.table}.expire + (excluded.expire - $4)
                         ELSE excluded.expire END
         RETURNING key, points, expire`,
        [batch.map((a) => a.key), batch.map((a) => a.points), batch.map((a) => a.durationMs), now],
      );
      const rows = new Map(r.rows.map((row) => [row.key, row]));
      const at = Date.now();
      for (const a of batch) {
        const row = rows.get(a.key);
        if (row === undefined) {
          a.reject(new Error(`throttle counter ${a.key}: no row returned`));
          continue;
        }
        const consumed = Number(row.points);
        const res = new RateLimiterRes(
          Math.max(0, a.limit - consumed),
          row.expire === null ? -1 : Math.max(0, Number(row.expire) - at),
          consumed,
          consumed === a.points,
        );
        if (consumed > a.limit) a.reject(res);
        else a.resolve(res);
      }
    } catch (e) {
      for (const a of batch) a.reject(e);
    } finally {
      this.inFlight--;
      for (const w of done) w();
      if (this.pending.size > 0 && this.inFlight < this.concurrency) void this.flush();
    }
  }
}

function decision(perMinute: number, res: RateLimiterRes, allowed: boolean): RateDecision {
  return { allowed, retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(res.msBeforeNext / 1000)), remaining: Math.max(0, res.remainingPoints) };
}

/** An upstream rate as a shared fixed window: whole seconds (the stores keep integer milliseconds), never above the manifest's rate. */
function throttleWindow(rate: UpstreamRate): { points: number; seconds: number } {
  const seconds = Math.max(1, Math.ceil(rate.window_ms / 1000));
  return { seconds, points: Math.max(1, Math.floor((rate.requests * seconds * 1000) / rate.window_ms)) };
}

abstract class StoreBackend implements LimitBackend {
  abstract readonly kind: 'postgres' | 'redis';
  private readonly limiters = new Map<string, RateLimiterAbstract>();
  protected abstract make(keyPrefix: string, points: number, durationSeconds: number): RateLimiterAbstract;
  abstract close(): Promise<void>;

  protected limiterFor(keyPrefix: string, points: number, durationSeconds: number): RateLimiterAbstract {
    return this.limiter(keyPrefix, points, durationSeconds);
  }

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
    const { points, seconds } = throttleWindow(rate);
    return new SharedThrottle(this.limiter('sb:upstream', points, seconds), connectorId, maxQueue);
  }
}

class PostgresBackend extends StoreBackend {
  readonly kind = 'postgres' as const;
  private readonly counters: PostgresThrottleStore;
  constructor(
    private readonly pool: pg.Pool,
    private readonly schema: string | undefined,
  ) {
    super();
    this.counters = new PostgresThrottleStore(pool, schema !== undefined ? `"${schema}"."${RATE_LIMIT_TABLE}"` : `"${RATE_LIMIT_TABLE}"`);
  }
  override throttle(connectorId: string, rate: UpstreamRate, maxQueue: number): Throttle {
    const { points, seconds } = throttleWindow(rate);
    // The windows follow one another on a grid (PostgresThrottleStore): waking up to a tenth of a
    // window late costs a busy key nothing, and spreads the keys whose windows end together
    // (syncs started at once) over several statements instead of one burst of grants.
    return new SharedThrottle(
      this.counters.counter('sb:upstream', points, seconds, this.limiterFor('sb:upstream', points, seconds)),
      connectorId,
      maxQueue,
      Math.random,
      Math.min(100, seconds * 100),
    );
  }
  protected make(keyPrefix: string, points: number, duration: number): RateLimiterAbstract {
    return new RateLimiterPostgres({
      storeClient: this.pool,
      storeType: 'pool',
      tableName: RATE_LIMIT_TABLE,
      ...(this.schema !== undefined ? { schemaName: this.schema } : {}),
      tableCreated: true,
      keyPrefix,
      points,
      duration,
    });
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
export async function createLimitBackend(
  config: ServiceConfig,
  database: Pick<Database, 'dialect' | 'schema'>,
  now: () => number = Date.now,
): Promise<LimitBackend> {
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
