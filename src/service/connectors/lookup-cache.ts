/**
 * A short-lived, bounded cache of the two lookups every authenticated request makes (the bearer
 * token's principal, the connector row of an execute), so a busy connector does not cost two
 * database round trips per call.
 *
 * Staleness is bounded: an entry is served for at most `ttlMs` (SWITCHBOARD_LOOKUP_CACHE_MS,
 * default 1000 ms) by the service clock, then read again. So a change made elsewhere — a token
 * row deleted (revoked), an organization granted, a connector patched or deleted by another
 * instance on the same PostgreSQL — takes effect in every instance within that bound; a change
 * this instance makes itself invalidates its entry at once (delete). 0 disables the cache.
 *
 * Only found values are kept (an unknown token or connector is asked again every time), at most
 * `maxEntries` (the oldest go first), and a load that was running while an entry was
 * invalidated does not put its possibly older value back.
 */
export interface LookupCacheOptions {
  ttlMs: number;
  /** Epoch milliseconds (the service clock). */
  now: () => number;
  /** Default 10 000. */
  maxEntries?: number;
}

interface Entry<V> {
  value: V;
  at: number;
}

export class LookupCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly max: number;
  /** Bumped by every invalidation: a load that started before one does not store its result. */
  private generation = 0;

  constructor(private readonly o: LookupCacheOptions) {
    this.max = o.maxEntries ?? 10_000;
  }

  /** The cached value of `key` while fresh (no promise: the hot path of a hit). */
  peek(key: string): V | undefined {
    const hit = this.entries.get(key);
    if (hit === undefined) return undefined;
    const now = this.o.now();
    // A clock that went back (tests move the service clock) counts as stale too.
    return now >= hit.at && now - hit.at < this.o.ttlMs ? hit.value : undefined;
  }

  /** The cached value of `key` while fresh, else `load()`'s (kept when found). */
  async get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const hit = this.peek(key);
    if (hit !== undefined) return hit;
    if (this.o.ttlMs <= 0) return load();
    const now = this.o.now();
    const generation = this.generation;
    const value = await load();
    if (value === undefined) {
      this.entries.delete(key);
    } else if (generation === this.generation) {
      this.entries.delete(key);
      this.entries.set(key, { value, at: now });
      if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
    }
    return value;
  }

  /** Forget one key (this instance changed what it caches). */
  delete(key: string): void {
    this.generation++;
    this.entries.delete(key);
  }

  /** Forget everything. */
  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
