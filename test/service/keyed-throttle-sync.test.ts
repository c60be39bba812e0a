/**
 * Keyed rate-limit buckets through the hosted service's sync worker: the worker's calls name their
 * bucket (Airtable's base) to the main thread's throttle, which keeps one bucket per base under
 * the token's global one (upstreamThrottle, BucketedThrottle). A full sync of every base's tables
 * and records completes through them.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { describeEachDialect, startHarness } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const DIR = 'connectors/airtable';

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar: loadSidecar(`${DIR}/simulator.yaml`), seed: 7, rateLimit: false });
});
afterAll(() => sim.close());

describeEachDialect('per-base buckets in the sync worker on %s', (dialect) => {
  it('a full sync completes, its calls counted per base', async () => {
    const h = await startHarness(dialect, { config: { syncInWorker: true, upstreamThrottle: true, connectorTypes: { airtable: { baseUrl: sim.url } } } });
    try {
      const token = await h.token(await h.createApp('org-buckets'));
      const credentials = loadSidecar(`${DIR}/simulator.yaml`).sandbox!.credentials;
      const r = await h.request('POST', CONNECTORS, { token, body: { customer_name: 'c1', connector_type: 'airtable', name: 'a', credentials } });
      expect(r.status, r.text).toBe(201);
      const id = r.body.id as string;
      const result = await h.service.ctx.sync.runOnce(id, { full: true });
      expect(h.service.ctx.syncWorker!.pagesRun).toBeGreaterThan(0);
      expect(result.entities['records']?.records).toBeGreaterThan(0);
      const status = await h.request('GET', `${CONNECTORS}/${id}/sync`, { token });
      expect(status.body).toMatchObject({ status: 'idle', last_error: null });
    } finally {
      await h.close();
    }
  });
});
