/**
 * Upstream rate-limit budgets: upstreams count requests per API key, so connectors holding the
 * same key share one throttle (the quick start followed by the SDK snippet once made two Granola
 * connectors with one key, whose syncs together ran at twice Granola's limit); OAuth connectors,
 * whose tokens change on refresh, keep one each.
 */
import { describe, expect, it } from 'vitest';
import { getConnector } from '../../src/manifest/index.ts';
import { budgetKey } from '../../src/service/runtime-pool.ts';
import { limiterFor } from '../../src/engine/index.ts';
import { RateLimiter } from '../../src/http/index.ts';
import { defaultServiceConfig } from '../../src/service/index.ts';
import { createLimitBackend } from '../../src/service/shared-limits.ts';

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

describe('the in-process upstream throttle (SQLite, one instance)', () => {
  // Issue 25's fleet bench: a throttle with the upstream's own burst, spent to the last token,
  // met Granola's bucket with nothing to spare, and every key got one 429 when its first request
  // (over a new connection) reached the upstream later than the ones after it.
  it('keeps the engine’s margin under the manifest’s rate and burst, as library mode does', async () => {
    const backend = await createLimitBackend(defaultServiceConfig({ databaseUrl: ':memory:' }), { dialect: 'sqlite', schema: undefined });
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
