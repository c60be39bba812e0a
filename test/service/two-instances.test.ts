/**
 * Limits shared across instances (issue 11, finding 9): two service instances on one
 * PostgreSQL database serving one Granola connector stay under Granola's limit together (one
 * throttle row per connector, rate-limiter-flexible), where per-instance throttles sent each
 * its own burst and collected 429s. Also with Redis (SWITCHBOARD_REDIS_URL), and the
 * per-organization limit is shared the same way.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../src/sandbox/granola/index.ts';
import { PG_URL, startHarness, type Harness } from './helpers.ts';

const REDIS_URL = process.env['SWITCHBOARD_TEST_REDIS_URL']?.trim() || (PG_URL !== undefined ? 'redis://127.0.0.1:6379' : undefined);
const CONNECTORS = '/api/v1/integrations/connectors';

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
          ...(backend === 'redis' && REDIS_URL !== undefined ? { redisUrl: REDIS_URL } : {}),
        };
        a = await startHarness('postgres', { config });
        b = await startHarness('postgres', { config, database: a.db });
        const app = await a.createApp(`two-${randomBytes(4).toString('hex')}`);
        token = await a.token(app);
        const r = await a.request('POST', CONNECTORS, { token, body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { api_key: sim.apiKey } } });
        connectorId = (r.body as { id: string }).id;
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
          (i % 2 === 0 ? a : b).request('POST', `${CONNECTORS}/${connectorId}/execute`, { token, body: { entity: 'notes', action: 'get', params: { note_id: ids[i % ids.length] } } }),
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
