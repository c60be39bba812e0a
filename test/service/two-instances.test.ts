/**
 * Limits shared across instances (issue 11, finding 9): two service instances on one
 * PostgreSQL database serving one Granola connector stay under Granola's limit together (one
 * throttle row per connector, rate-limiter-flexible), where per-instance throttles sent each
 * its own burst and collected 429s. Also with Redis (SWITCHBOARD_REDIS_URL), and the
 * per-organization limit is shared the same way.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import type { ServiceConfig } from '../../src/service/index.ts';
import { PG_URL, startHarness, type Harness } from './helpers.ts';

const REDIS_URL = process.env['SWITCHBOARD_TEST_REDIS_URL']?.trim() || (PG_URL !== undefined ? 'redis://127.0.0.1:6379' : undefined);
const CONNECTORS = '/api/v1/integrations/connectors';

/** Two instances on one fresh PostgreSQL database, an application's token and a Granola connector made through the first. */
async function twoInstances(
  sim: GranolaSimulator,
  config: Partial<ServiceConfig>,
  appPrefix: string,
): Promise<{ a: Harness; b: Harness; token: string; connectorId: string }> {
  const a = await startHarness('postgres', { config });
  const b = await startHarness('postgres', { config, database: a.db });
  const app = await a.createApp(`${appPrefix}-${randomBytes(4).toString('hex')}`);
  const token = await a.token(app);
  const r = await a.request('POST', CONNECTORS, {
    token,
    body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { api_key: sim.apiKey } },
  });
  return { a, b, token, connectorId: (r.body as { id: string }).id };
}

describe.skipIf(PG_URL === undefined)('two instances on PostgreSQL (skipped: SWITCHBOARD_TEST_POSTGRES_URL is not set)', () => {
  for (const backend of ['postgres', 'redis'] as const) {
    describe(`limits through ${backend}`, () => {
      let sim: GranolaSimulator;
      let a: Harness;
      let b: Harness;
      let token: string;
      let connectorId: string;

      beforeAll(async () => {
        // Granola's real limit: 25 burst, 5/s sustained.
        sim = await startGranolaSimulator({ size: 40 });
        const config = {
          connectorTypes: { granola: { baseUrl: sim.url } },
          rateLimitPerMinute: 45,
          // This suite is about the shared limit, not the max wait: a loaded machine may hold the
          // last calls in the throttle past the 5 s default, which would answer upstream_queue_full.
          upstreamMaxWaitMs: 120_000,
          ...(backend === 'redis' && REDIS_URL !== undefined ? { redisUrl: REDIS_URL } : {}),
        };
        ({ a, b, token, connectorId } = await twoInstances(sim, config, 'two'));
      });
      afterAll(async () => {
        await b?.close();
        await a?.close();
        await sim?.close();
      });

      it('30 calls split over both instances reach Granola without a single 429', async () => {
        sim.reset();
        const ids = sim.ids();
        const calls = Array.from({ length: 30 }, (_, i) =>
          (i % 2 === 0 ? a : b).request('POST', `${CONNECTORS}/${connectorId}/execute`, {
            token,
            body: { entity: 'notes', action: 'get', params: { note_id: ids[i % ids.length] } },
          }),
        );
        const replies = await Promise.all(calls);
        expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200));
        // One upstream request per call: a 429 would have cost a retry (or failed the call).
        expect(sim.requests.filter((r) => r.path.startsWith('/v1/notes/'))).toHaveLength(30);
      });

      it('the per-organization limit counts the requests of both instances', async () => {
        const statuses: number[] = [];
        for (let i = 0; i < 30; i++) statuses.push((await (i % 2 === 0 ? a : b).request('GET', CONNECTORS, { token })).status);
        // 45 per minute (plus the steady 1/s) for both together: the 31 requests above and these
        // 30 cannot all pass, where each instance counting alone (45 each) let every one through.
        expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
      });
    });
  }
});

describe.skipIf(PG_URL === undefined)('lookups each instance reuses for lookupCacheMs (skipped: SWITCHBOARD_TEST_POSTGRES_URL is not set)', () => {
  let sim: GranolaSimulator;
  let a: Harness;
  let b: Harness;
  let token: string;
  let connectorId: string;
  const execute = (h: Harness) =>
    h.request('POST', `${CONNECTORS}/${connectorId}/execute`, { token, body: { entity: 'notes', action: 'get', params: { note_id: sim.ids()[0] } } });
  /** Move an instance's clock past the lookup bound (the default 1000 ms). */
  const pastBound = (h: Harness) => {
    h.clock.offsetMs += 1_000;
  };

  beforeAll(async () => {
    sim = await startGranolaSimulator({ size: 5 });
    ({ a, b, token, connectorId } = await twoInstances(sim, { connectorTypes: { granola: { baseUrl: sim.url } }, upstreamThrottle: false }, 'cache'));
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await sim?.close();
  });

  it('credentials replaced and a connector deleted on one instance: at once there, within the bound on the other', async () => {
    expect((await execute(a)).status).toBe(200);
    expect((await execute(b)).status).toBe(200);
    const patched = await a.request('PATCH', `${CONNECTORS}/${connectorId}?check=false`, { token, body: { credentials: { api_key: 'grn_revoked_key' } } });
    expect(patched.status, patched.text).toBe(200);
    const onA = await execute(a);
    expect(onA.status).not.toBe(200);
    pastBound(b);
    const onB = await execute(b);
    expect({ status: onB.status, code: (onB.body as { code: string }).code }).toEqual({ status: onA.status, code: (onA.body as { code: string }).code });

    expect((await a.request('DELETE', `${CONNECTORS}/${connectorId}`, { token })).status).toBe(204);
    expect((await execute(a)).status).toBe(404);
    pastBound(b);
    expect((await execute(b)).status).toBe(404);
  });

  it('a token revoked (its row deleted) is refused by every instance within the bound', async () => {
    expect((await a.request('GET', CONNECTORS, { token })).status).toBe(200);
    expect((await b.request('GET', CONNECTORS, { token })).status).toBe(200);
    await a.service.database.db.deleteFrom('access_tokens').execute();
    for (const h of [a, b]) {
      pastBound(h);
      const r = await h.request('GET', CONNECTORS, { token });
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toContain('unknown token');
    }
  });
});
