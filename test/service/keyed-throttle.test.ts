/**
 * Rate-limit buckets finer than the connector in the hosted service (upstreamThrottle in
 * src/service/limits/shared-limits.ts): each keyed bucket is the limit backend's throttle under
 * "<budget>|<bucket id>", so on PostgreSQL and Redis two instances share a key's budget, while
 * another key of the same connector keeps its own; rate_limit.global is the budget's own throttle.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../generated/manifest.ts';
import { bucketId } from '../../src/engine/rate-buckets.ts';
import { BucketedThrottle } from '../../src/http/buckets.ts';
import { RateLimiter, ThrottleRefused, type BucketRef } from '../../src/http/index.ts';
import { defaultServiceConfig } from '../../src/service/config.ts';
import { createLimitBackend, upstreamThrottle, type LimitBackend } from '../../src/service/limits/shared-limits.ts';
import { PG_SKIP_REASON, PG_URL } from '../helpers/dialects.ts';

const REDIS_URL = process.env['SWITCHBOARD_TEST_REDIS_URL']?.trim() || (PG_URL !== undefined ? 'redis://127.0.0.1:6379' : undefined);

// Two requests a minute per key: nothing refills during the test, however slow the machine.
const rate = { requests: 2, window_ms: 60_000 };
const manifest = { rate_limit: { ...rate, key: '{{params.base_id}}' }, entities: {} } as unknown as Manifest;
const ref = (key: string): BucketRef => ({ id: bucketId(rate, key), rate });

async function backends(kind: 'postgres' | 'redis'): Promise<[LimitBackend, LimitBackend]> {
  const config = defaultServiceConfig({ databaseUrl: PG_URL!, ...(kind === 'redis' ? { redisUrl: REDIS_URL! } : {}) });
  const db = { dialect: 'postgres' as const };
  return [await createLimitBackend(config, db), await createLimitBackend(config, db)];
}

describe('keyed buckets in process (SQLite)', () => {
  it('are the engine’s in-process buckets, without a global unless declared', async () => {
    const backend = await createLimitBackend(defaultServiceConfig({ databaseUrl: ':memory:' }), { dialect: 'sqlite' });
    const t = upstreamThrottle(backend, 'airtable:key:x', manifest, 5) as BucketedThrottle;
    expect(t).toBeInstanceOf(BucketedThrottle);
    expect(t.bucket(ref('app1'))).toBeInstanceOf(RateLimiter);
    await t.acquire({ bucket: ref('app1') });
    await t.acquire({ bucket: ref('app2') });
    await backend.close();
  });
});

for (const kind of ['postgres', 'redis'] as const) {
  const skip = PG_URL === undefined || (kind === 'redis' && REDIS_URL === undefined);
  describe.skipIf(skip)(`keyed buckets shared by two instances through ${kind}${skip ? ` (${PG_SKIP_REASON})` : ''}`, () => {
    it("a key's budget spent by one instance is spent for the other; another key is not", async () => {
      const [one, two] = await backends(kind);
      try {
        const budget = `test:key:${randomUUID()}`;
        const a = upstreamThrottle(one, budget, manifest, 10)!;
        const b = upstreamThrottle(two, budget, manifest, 10)!;
        await a.acquire({ bucket: ref('app1') });
        await a.acquire({ bucket: ref('app1') });
        const refused = await b.acquire({ bucket: ref('app1'), maxWaitMs: 0 }).catch((e: unknown) => e);
        expect(refused).toBeInstanceOf(ThrottleRefused);
        await b.acquire({ bucket: ref('app2'), maxWaitMs: 0 });
      } finally {
        await one.close();
        await two.close();
      }
    });
  });
}
