/**
 * Hosted sync and search end to end over HTTP: creating a connector starts its first sync, the
 * sync endpoints report and start runs, `search` answers over the synced records, and deleting
 * the connector removes them. SQLite always, PostgreSQL when configured.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { runSwitchboard } from '../helpers/process.ts';
import { describeEachDialect, openApiErrors, startHarness, startHosted, type Harness, type Reply } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const SYNC = '/api/v1/integrations/connectors/{connector_id}/sync';
const EXEC = '/api/v1/integrations/connectors/{connector_id}/execute';

function conforms(method: string, path: string, r: Reply): void {
  expect(openApiErrors(method, path, r), r.text).toEqual([]);
}

describeEachDialect('hosted sync and search on %s', (dialect) => {
  let sim: GranolaSimulator;
  let h: Harness;
  let token: string;
  let id: string;
  const call = (method: string, path: string, body?: unknown): Promise<Reply> => h.request(method, path, { token, ...(body !== undefined ? { body } : {}) });
  const search = (params: unknown): Promise<Reply> => call('POST', `${CONNECTORS}/${id}/execute`, { entity: 'notes', action: 'search', params });

  async function waitIdle(): Promise<Reply> {
    // Poll with a deadline (generous: the machine may be busy); a poll, not a sleep.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const r = await call('GET', `${CONNECTORS}/${id}/sync`);
      if (r.body?.status !== 'running' && r.body?.last_finished_at !== null) return r;
      await new Promise((res) => setTimeout(res, 50));
    }
    throw new Error('sync did not finish');
  }

  beforeAll(async () => {
    sim = await startGranolaSimulator({ size: 40, rateLimit: false });
    ({ h, token } = await startHosted(dialect, { org: 'org-sync', upstreams: { granola: sim.url }, config: { syncScheduler: true } }));
    const r = await call('POST', CONNECTORS, { customer_name: 'c1', connector_type: 'granola', name: 'g', credentials: { api_key: sim.apiKey } });
    expect(r.status, r.text).toBe(201);
    id = r.body.id;
  });
  afterAll(async () => {
    await h?.close();
    await sim?.close();
  });

  it('creating a connector starts its first sync; GET .../sync reports it', async () => {
    const r = await waitIdle();
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ connector_id: id, status: 'idle', last_error: null, entities: { notes: { records: 40 } } });
    conforms('GET', SYNC, r);
  });

  it('search answers over the synced notes, with projection, sort and cursor paging', async () => {
    const target = sim.note(sim.ids()[7]!)!;
    const one = await search({ query: { filter: { eq: { id: target.id } } }, fields: ['id', 'title'] });
    expect(one.status, one.text).toBe(200);
    expect(one.body.data).toEqual([{ id: target.id, title: target.title }]);
    expect(typeof one.body.meta.synced_at).toBe('string');
    conforms('POST', EXEC, one);

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await search({ query: { sort: [{ created_at: 'desc' }] }, limit: 15, fields: ['id'], ...(cursor ? { cursor } : {}) });
      expect(page.status, page.text).toBe(200);
      seen.push(...page.body.data.map((d: { id: string }) => d.id));
      cursor = page.body.meta.cursor ?? undefined;
    } while (cursor !== undefined);
    expect(seen).toEqual(sim.ids());
  });

  it('any and contains look inside the attendees array; an ordering operator on it is a 400 naming field, operator and type', async () => {
    const email = sim.note(sim.ids()[7]!)!.attendees.at(-1)!.email;
    const expected = sim
      .ids()
      .filter((nid) => sim.note(nid)!.attendees.some((a) => a.email === email))
      .sort();
    expect(expected.length).toBeGreaterThan(0);
    for (const filter of [{ any: { attendees: { eq: { email } } } }, { contains: { 'attendees.email': email } }]) {
      const r = await search({ query: { filter }, fields: ['id'] });
      expect(r.status, r.text).toBe(200);
      expect(r.body.data.map((d: { id: string }) => d.id).sort()).toEqual(expected);
    }
    const bad = await search({ query: { filter: { gt: { attendees: 5 } } } });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.body.code).toBe('invalid_search_query');
    expect(bad.body.errors).toEqual([{ path: '/query/filter/gt/attendees', message: expect.stringContaining('gt does not apply to array field "attendees"') }]);
    conforms('POST', EXEC, bad);
  });

  it.each([
    ['an unknown field', { query: { filter: { eq: { colour: 'red' } } } }, 'invalid_search_query'],
    ['an unknown operator', { query: { filter: { near: { title: 'x' } } } }, 'invalid_search_query'],
    ['an empty in list', { query: { filter: { in: { id: [] } } } }, 'invalid_search_query'],
    ['a tampered cursor', { query: {}, cursor: 'eyJ4IjoxfQ.forged' }, 'invalid_cursor'],
    ['an injection attempt in a field name', { query: { filter: { eq: { "title'; DROP TABLE connectors; --": 'x' } } } }, 'invalid_search_query'],
  ])('a search with %s is a 400 problem and changes nothing', async (_n, params, code) => {
    const before = await h.snapshot();
    const r = await search(params);
    expect(r.status, r.text).toBe(400);
    expect(r.body.code).toBe(code);
    conforms('POST', EXEC, r);
    expect(await h.snapshot()).toBe(before);
  });

  it('POST .../sync picks up an upstream change; a second POST while running is 409', async () => {
    const changed = sim.ids()[3]!;
    sim.touch(changed, { title: 'Quarterly planning (moved)' });
    const started = await call('POST', `${CONNECTORS}/${id}/sync`, {});
    expect(started.status, started.text).toBe(202);
    conforms('POST', SYNC, started);
    const again = await call('POST', `${CONNECTORS}/${id}/sync`, {});
    // The run may already be done on a fast machine; while it runs, a second start is refused.
    if (again.status !== 202) {
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('sync_running');
    }
    await waitIdle();
    const hit = await search({ query: { filter: { keyword: { title: 'moved' } } }, fields: ['id'] });
    expect(hit.body.data).toEqual([{ id: changed }]);
  });

  it('deleting the connector removes its synced records', async () => {
    const del = await call('DELETE', `${CONNECTORS}/${id}`);
    expect(del.status, del.text).toBe(204);
    expect(await h.service.ctx.records.count(id, 'notes')).toBe(0);
    expect(await h.service.ctx.sync.status(id)).toBeUndefined();
  });
});

describe('switchboard sync <connector_id>', () => {
  it('runs one sync from the CLI against the service database and prints the result', async () => {
    const { TEST_ENCRYPTION_KEY } = await import('./helpers.ts');
    const sim = await startGranolaSimulator({ size: 12, rateLimit: false });
    const h = await startHarness('sqlite', { config: { connectorTypes: { granola: { baseUrl: sim.url } } } });
    try {
      const token = await h.token(await h.createApp('org-cli'));
      const created = await h.request('POST', CONNECTORS, {
        token,
        body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { api_key: sim.apiKey } },
      });
      expect(created.status, created.text).toBe(201);
      const out = await runSwitchboard(['sync', created.body.id, '--full'], {
        SWITCHBOARD_DATABASE_URL: h.db.url,
        SWITCHBOARD_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
        SWITCHBOARD_GRANOLA_BASE_URL: sim.url,
      });
      expect(out.code, out.stderr).toBe(0);
      expect(JSON.parse(out.stdout)).toMatchObject({ connector_id: created.body.id, full: true, entities: { notes: { records: 12, deleted: 0 } } });
      expect(out.stderr).toMatch(/notes: 12 records in 1 page\n/);
      expect(await h.service.ctx.records.count(created.body.id, 'notes')).toBe(12);
    } finally {
      await h.close();
      await sim.close();
    }
  });
});
