/**
 * POST .../sync when no instance runs the sync scheduler (issue 37 item 12): a requested run
 * would never start, so the answer says so — 503 sync_scheduler_not_running — and nothing is
 * requested. Once an instance running the scheduler shares the database, the same request is
 * accepted (202, or 409 while a run is on), also in parallel; when that instance stops, 503
 * again. SQLite always, PostgreSQL when configured.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { describeEachDialect, openApiErrors, startHarness, type Harness } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';

describeEachDialect('POST .../sync without a scheduler on %s', (dialect) => {
  let sim: GranolaSimulator;
  let api: Harness;
  let token: string;
  let id: string;
  const config = (scheduler: boolean) => ({
    syncScheduler: scheduler,
    upstreamThrottle: false,
    eventsDelivery: false,
    connectorTypes: { granola: { baseUrl: sim.url } },
  });

  beforeAll(async () => {
    sim = await startGranolaSimulator({ size: 3, rateLimit: false });
    api = await startHarness(dialect, { config: config(false) });
    token = await api.token(await api.createApp('org-no-scheduler'));
    const c = await api.request('POST', `${CONNECTORS}?check=false`, {
      token,
      body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { api_key: sim.apiKey } },
    });
    expect(c.status, c.text).toBe(201);
    id = c.body.id;
  });
  afterAll(async () => {
    await api?.close();
    await sim?.close();
  });

  const requestSync = () => api.request('POST', `${CONNECTORS}/${id}/sync`, { token, body: { full: true } });
  const state = async (): Promise<string> =>
    JSON.stringify(
      await api.service.ctx.database.db
        .selectFrom('sync_state' as never)
        .selectAll()
        .execute(),
    );

  it('is 503 sync_scheduler_not_running while no instance runs the scheduler, and requests nothing', async () => {
    const before = await state();
    const answers = await Promise.all([requestSync(), requestSync(), requestSync()]);
    for (const r of answers) {
      expect(r.status, r.text).toBe(503);
      expect(r.body.code).toBe('sync_scheduler_not_running');
      expect(openApiErrors('POST', `${CONNECTORS}/{connector_id}/sync`, r)).toEqual([]);
    }
    expect(await state()).toBe(before);
  });

  it('is accepted while another instance runs the scheduler, and 503 again once it stopped', async () => {
    const worker = await startHarness(dialect, { database: api.db, config: config(true) });
    let closed = false;
    try {
      // The scheduler noted itself as it started (before the instance was ready); the API instance reads that.
      const answers = await Promise.all([requestSync(), requestSync(), requestSync()]);
      for (const r of answers) expect([202, 409], r.text).toContain(r.status);
      await worker.close();
      closed = true;
      const r = await requestSync();
      expect(r.status, r.text).toBe(503);
      expect(r.body.code).toBe('sync_scheduler_not_running');
    } finally {
      if (!closed) await worker.close();
    }
  });

  it('an instance running the scheduler itself accepts at once', async () => {
    const self = await startHarness(dialect, { database: api.db, config: config(true) });
    try {
      const r = await self.request('POST', `${CONNECTORS}/${id}/sync`, { token, body: {} });
      expect([202, 409], r.text).toContain(r.status);
    } finally {
      await self.close();
    }
  });
});
