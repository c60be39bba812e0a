/**
 * Close's quirks, end to end: connectors/close/connector.yaml run by the interpreter over real
 * HTTP against the generic simulator serving our extract of Close's API (connectors/close/openapi.yaml)
 * with its sidecar — no Close-specific simulator code. What every connector shares (each entity ×
 * action) is the shared conformance suite's; here: the API key as the basic user name with an empty
 * password, the /me/ check, `_skip`/`_limit` pages ended by `has_more` (no call for an empty last
 * page), Close's error body, and the sync: leads changed since the last run through the list's search
 * `query`, opportunities by `date_updated__gte`, activities by `date_created__gte`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { RecordStore, searchDefOf } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/close';
const manifest = getConnector('close');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { api_key: string };

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar, seed: 7, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const close = (credentials: Rec = CREDENTIALS, upstream = sim) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: upstream.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => close().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;

describe('close', () => {
  it('sends the API key as the basic user name with an empty password; the check reports the user and organization', async () => {
    const checked = await close().check();
    expect(checked).toMatchObject({
      ok: true,
      checked: true,
      info: { user_id: expect.stringMatching(/^user_/), organization_id: expect.stringMatching(/^orga_/) },
    });
    const sent = sim.requests.at(-1)!;
    expect(sent).toMatchObject({ method: 'GET', path: '/me/' });
    expect(sent.headers['authorization']).toBe(`Basic ${Buffer.from(`${CREDENTIALS.api_key}:`).toString('base64')}`);
    const err = await failure(close({ api_key: 'api_not_a_key' }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toMatch(/API key or access token/);
  });

  it('pages by _skip/_limit while has_more, with no call for an empty last page; total_results counts the leads', async () => {
    const first = await run('leads', 'list', { limit: 2 });
    expect(first.meta).toEqual({ has_more: true, next_skip: 2 });
    const seen: Rec[] = [];
    for await (const page of close().pages('leads', { limit: 2 })) seen.push(...(page.data as Rec[]));
    expect(seen.map((l) => l['name'])).toEqual(['Northwind Traders', 'Bluebird Logistics', 'Acme Robotics', 'Fjord Analytics', 'Cedar Health']);
    for (const l of seen) expect(l['id']).toMatch(/^lead_[A-Za-z0-9]{43}$/);
    const skips = sim.requests.filter((r) => r.path === '/lead/').map((r) => r.query.get('_skip'));
    expect(skips).toEqual([null, null, '2', '4']);
    const answer = await fetch(`${sim.url}/lead/?_limit=1`, {
      headers: { authorization: `Basic ${Buffer.from(`${CREDENTIALS.api_key}:`).toString('base64')}` },
    });
    expect(await answer.json()).toMatchObject({ has_more: true, total_results: 5 });
  });

  it("writes a lead's note and reads it among the lead's activities; an unknown id is upstream_not_found with Close's message", async () => {
    const lead = ((await run('leads', 'list', { limit: 1 })).data as Rec[])[0]!;
    const note = (await run('notes', 'create', { lead_id: lead['id'], note: 'Asked for a quote' })).data as Rec;
    expect(note).toMatchObject({ _type: 'Note', lead_id: lead['id'], note: 'Asked for a quote' });
    expect(note['id']).toMatch(/^acti_[A-Za-z0-9]{43}$/);
    const activities = (await run('activities', 'list', { lead_id: lead['id'] as string })).data as Rec[];
    expect(activities.map((a) => a['id'])).toContain(note['id']);
    expect(sim.requests.at(-1)!.query.get('lead_id')).toBe(lead['id']);
    const refused = await failure(run('opportunities', 'create', { lead_id: 'lead_missing', value: 'ten' } as Rec));
    expect(refused.code).toBe('invalid_params');
    const missing = await failure(run('leads', 'get', { id: `lead_${'x'.repeat(43)}` }));
    expect(missing.code).toBe('upstream_not_found');
    expect(missing.message).toMatch(/Object not found/);
  });
});

describeEachDialect('close sync on %s', (name) => {
  let tdb: TestDatabase;
  let store: RecordStore;
  let engine: SyncEngine;
  let upstream: OpenApiSimulator;
  beforeAll(async () => {
    upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar, seed: 7, rateLimit: false });
    tdb = await openTestDatabase(name);
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test' });
    engine = new SyncEngine({
      database: tdb.database,
      sink: store,
      fullRefreshEvery: 10,
      runtimeFor: async () => ({ manifest, runtime: close(CREDENTIALS, upstream) }),
    });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
    await upstream.close();
  });

  it('reads everything once, then leads changed since through the search query, opportunities by date_updated__gte, activities by date_created__gte', async () => {
    await engine.register('cl-1');
    const first = await engine.runOnce('cl-1');
    expect(first.full).toBe(true);
    expect(first.entities).toMatchObject({ leads: { records: 5 }, contacts: { records: 8 }, opportunities: { records: 6 }, activities: { records: 6 } });
    const hits = await store.search('cl-1', 'leads', searchDefOf(manifest.entities.get('leads')!.def)!, {
      query: { filter: { eq: { display_name: 'Acme Robotics' } } },
      fields: ['id', 'display_name'],
    });
    expect(hits.data).toHaveLength(1);

    upstream.requests.length = 0;
    const second = await engine.runOnce('cl-1');
    expect(second.full).toBe(false);
    const q = (path: string) => upstream.requests.filter((r) => r.path === path).map((r) => r.query);
    const leads = q('/lead/');
    expect(leads.length).toBeGreaterThan(0);
    for (const l of leads) expect(l.get('query')).toMatch(/^sort:updated date_updated >= "\d{4}-\d\d-\d\dT[^"]+"$/);
    for (const o of q('/opportunity/')) {
      expect(o.get('date_updated__gte')).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(o.get('_order_by')).toBe('date_updated');
    }
    for (const a of q('/activity/')) expect(a.get('date_created__gte')).toMatch(/^\d{4}-\d\d-\d\dT/);
  }, 60_000);
});
