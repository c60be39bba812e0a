/**
 * Upstream rate-limit budgets: upstreams count requests per API key, so connectors holding the
 * same key share one throttle (the quick start followed by the SDK snippet once made two Granola
 * connectors with one key, whose syncs together ran at twice Granola's limit); OAuth connectors,
 * whose tokens change on refresh, keep one each.
 */
import { describe, expect, it } from 'vitest';
import { getConnector } from '../../src/manifest/index.ts';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { budgetKey, connectorCredentialsContext, RuntimePool } from '../../src/service/connectors/runtime-pool.ts';
import { KeyRing, type ConnectorRow, type ServiceStore } from '../../src/store/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { limiterFor } from '../../src/engine/index.ts';
import { RateLimiter } from '../../src/http/index.ts';
import { defaultServiceConfig } from '../../src/service/index.ts';
import { createLimitBackend } from '../../src/service/limits/shared-limits.ts';

const granola = getConnector('granola');
const intercom = getConnector('intercom');

describe('budgetKey', () => {
  it('is the same for two connectors holding the same API key, and never contains the key', () => {
    const a = budgetKey({ id: 'c-1', connector_type: 'granola', auth_variant: 'api_key' }, granola, { api_key: 'grn_same_key' });
    const b = budgetKey({ id: 'c-2', connector_type: 'granola', auth_variant: 'api_key' }, granola, { api_key: 'grn_same_key' });
    expect(a).toBe(b);
    expect(a).toMatch(/^granola:key:[0-9a-f]{32}$/);
    expect(a).not.toContain('grn_same_key');
  });

  it('differs for different keys', () => {
    const a = budgetKey({ id: 'c-1', connector_type: 'granola', auth_variant: 'api_key' }, granola, { api_key: 'grn_key_a' });
    const b = budgetKey({ id: 'c-1', connector_type: 'granola', auth_variant: 'api_key' }, granola, { api_key: 'grn_key_b' });
    expect(a).not.toBe(b);
  });

  it('is per connector for OAuth credentials, whose tokens change on refresh', () => {
    const oauth = intercom.auth.find((v) => v.def.type === 'oauth2');
    expect(oauth).toBeDefined();
    const a = budgetKey({ id: 'c-1', connector_type: 'intercom', auth_variant: oauth!.def.name }, intercom, { access_token: 't1' });
    const b = budgetKey({ id: 'c-2', connector_type: 'intercom', auth_variant: oauth!.def.name }, intercom, { access_token: 't1' });
    expect([a, b]).toEqual(['intercom:connector:c-1', 'intercom:connector:c-2']);
  });
});

describe('budgetKey: minted tokens', () => {
  it('is per app key and installation for a minted_bearer variant (GitHub counts per installation), never containing the key', () => {
    const github = getConnector('github');
    const row = (id: string) => ({ id, connector_type: 'github', auth_variant: 'app' });
    const creds = (installation: string) => ({ app_id: '1', installation_id: installation, private_key: 'pem-secret' });
    const a = budgetKey(row('c-1'), github, creds('10'));
    expect(budgetKey(row('c-2'), github, creds('10'))).toBe(a);
    expect(budgetKey(row('c-1'), github, creds('11'))).not.toBe(a);
    expect(a).toMatch(/^github:key:[0-9a-f]{32}$/);
  });
});

describe('the in-process upstream throttle (SQLite, one instance)', () => {
  // Issue 25's fleet bench: a throttle with the upstream's own burst, spent to the last token,
  // met Granola's bucket with nothing to spare, and every key got one 429 when its first request
  // (over a new connection) reached the upstream later than the ones after it.
  it('keeps the engine’s margin under the manifest’s rate and burst, as library mode does', async () => {
    const backend = await createLimitBackend(defaultServiceConfig({ databaseUrl: ':memory:' }), { dialect: 'sqlite' });
    const rate = granola.manifest.rate_limit!;
    const throttle = backend.throttle('granola:key:x', rate, 7) as RateLimiter;
    expect(throttle).toBeInstanceOf(RateLimiter);
    expect(throttle.burst).toBe(limiterFor(rate).burst);
    expect(throttle.burst).toBeLessThan(rate.burst!);
    expect(throttle.requests).toBeLessThan(rate.requests);
    expect(throttle.maxQueue).toBe(7);
    await backend.close();
  });
});

describe('RuntimePool throttles', () => {
  // A throttle used to be evicted on its own (oldest first) while a cached runtime still held it;
  // a new runtime with the same key then got a second throttle: twice the upstream's rate.
  it('keeps one throttle per budget while any cached runtime holds it, and drops it with the last one', () => {
    const keyRing = new KeyRing([{ id: 'k1', key: randomBytes(32) }]);
    const made: string[] = [];
    const pool = new RuntimePool({
      keyRing,
      store: {} as ServiceStore,
      config: defaultServiceConfig({ databaseUrl: ':memory:' }),
      fetch: (async () => {
        throw new Error('no upstream call in this test');
      }) as FetchLike,
      now: Date.now,
      log: pino({ level: 'silent' }),
      maxEntries: 2,
      throttleFor: (budget) => {
        made.push(budget);
        return new RateLimiter(5, 1000, 25);
      },
    });
    const row = (id: string, key: string): ConnectorRow => ({
      id,
      organization_id: 'org',
      customer_name: 'c',
      connector_type: 'granola',
      name: id,
      auth_variant: 'api_key',
      credentials_key_id: 'k1',
      credentials_ciphertext: keyRing.sealJson({ api_key: key }, connectorCredentialsContext(id)).ciphertext,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
      status: 'active',
      last_checked_at: null,
      last_error: null,
    });
    const [a, b, c, d] = [row('a', 'grn_key_k'), row('b', 'grn_key_l'), row('c', 'grn_key_m'), row('d', 'grn_key_k')];
    const budget = (r: ConnectorRow, key: string): string => budgetKey(r, granola, { api_key: key });
    pool.get(a, granola);
    pool.get(b, granola);
    pool.get(a, granola); // a is now the most recently used
    pool.get(c, granola); // evicts b, and b's throttle with it; a still holds K's
    pool.get(d, granola); // the same key as a: the same throttle
    expect(made).toEqual([budget(a, 'grn_key_k'), budget(b, 'grn_key_l'), budget(c, 'grn_key_m')]);
    // d evicted a, which shared K's throttle with d: two runtimes (c, d), two throttles (M, K).
    expect(pool.sizes).toMatchObject({ runtimes: 2, throttles: 2 });
    pool.forget('c');
    pool.forget('d');
    expect(pool.sizes).toMatchObject({ runtimes: 0, throttles: 0 });
  });
});
