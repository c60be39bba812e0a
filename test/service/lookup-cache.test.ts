/**
 * The lookup cache of tokens and connector rows (src/service/connectors/lookup-cache.ts): entries are
 * served for at most ttlMs by the given clock, only found values are kept, invalidation is
 * immediate and beats a load that was already running, and the size is bounded.
 */
import { describe, expect, it } from 'vitest';
import { LookupCache } from '../../src/service/connectors/lookup-cache.ts';

function setup(ttlMs = 1000, maxEntries?: number) {
  const clock = { now: 1_000_000 };
  const db = new Map<string, string>();
  let loads = 0;
  const cache = new LookupCache<string>({ ttlMs, now: () => clock.now, ...(maxEntries !== undefined ? { maxEntries } : {}) });
  const get = (key: string) =>
    cache.get(key, async () => {
      loads++;
      return db.get(key);
    });
  return { clock, db, cache, get, loads: () => loads };
}

describe('LookupCache', () => {
  it('serves a found value for less than ttlMs, then reads it again', async () => {
    const t = setup();
    t.db.set('k', 'v1');
    expect(await t.get('k')).toBe('v1');
    t.db.set('k', 'v2'); // changed elsewhere (another instance)
    t.clock.now += 999;
    expect(await t.get('k')).toBe('v1');
    expect(t.loads()).toBe(1);
    t.clock.now += 1;
    expect(await t.get('k')).toBe('v2');
    expect(t.loads()).toBe(2);
  });

  it('a row deleted elsewhere is gone once the bound has passed', async () => {
    const t = setup();
    t.db.set('token', 'principal');
    expect(await t.get('token')).toBe('principal');
    t.db.delete('token');
    t.clock.now += 1000;
    expect(await t.get('token')).toBeUndefined();
    expect(t.cache.size).toBe(0);
  });

  it('does not keep misses: a value that appears is found at once', async () => {
    const t = setup();
    expect(await t.get('k')).toBeUndefined();
    t.db.set('k', 'v');
    expect(await t.get('k')).toBe('v');
    expect(t.loads()).toBe(2);
  });

  it('delete() takes effect at once', async () => {
    const t = setup();
    t.db.set('k', 'v1');
    await t.get('k');
    t.db.set('k', 'v2');
    t.cache.delete('k');
    expect(await t.get('k')).toBe('v2');
  });

  it('a load running while the key is invalidated does not store its older value', async () => {
    const t = setup();
    let release: (v: string) => void = () => {};
    const slow = t.cache.get('k', () => new Promise<string>((r) => (release = r)));
    t.cache.delete('k'); // e.g. PATCH through this instance while the read was in flight
    release('old');
    expect(await slow).toBe('old');
    t.db.set('k', 'new');
    expect(await t.get('k')).toBe('new');
  });

  it('a clock that went back counts as stale', async () => {
    const t = setup();
    t.db.set('k', 'v1');
    await t.get('k');
    t.db.set('k', 'v2');
    t.clock.now -= 5000;
    expect(await t.get('k')).toBe('v2');
  });

  it('keeps at most maxEntries, dropping the oldest', async () => {
    const t = setup(1000, 2);
    for (const k of ['a', 'b', 'c']) t.db.set(k, k);
    await t.get('a');
    await t.get('b');
    await t.get('c');
    expect(t.cache.size).toBe(2);
    await t.get('a');
    expect(t.loads()).toBe(4); // 'a' was dropped and read again
  });

  it('ttlMs 0 reads every time', async () => {
    const t = setup(0);
    t.db.set('k', 'v');
    await t.get('k');
    await t.get('k');
    expect(t.loads()).toBe(2);
    expect(t.cache.size).toBe(0);
  });
});
