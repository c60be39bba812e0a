/**
 * QuickBooks Online's quirks, end to end: connectors/quickbooks/connector.yaml run by the interpreter
 * over real HTTP against the generic simulator serving our description (connectors/quickbooks/openapi.json,
 * from derive.mjs) with its sidecar — query statements and change data capture answered by the
 * simulator's generic query and changed rules, no QuickBooks-specific code. What every connector
 * shares is the conformance suite's; here: the company's realmId from the OAuth callback (hosted
 * flow), lists as query statements paged by startposition/maxresults, sparse updates with the
 * SyncToken, and a sync whose incremental runs read change data capture, deletions included.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector } from '../../src/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { defaultServiceConfig } from '../../src/service/index.ts';
import { withSandbox } from '../../src/service/data/sandbox-wiring.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { parseKeyRing } from '../../src/store/index.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';
import { startHarness, TEST_ENCRYPTION_KEY, testRegistry, type Harness } from '../service/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/quickbooks';
const manifest = getConnector('quickbooks');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as Record<string, string>;
const REALM = CREDENTIALS['realm_id']!;

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 2, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const quickbooks = () => new ConnectorRuntime(manifest, CREDENTIALS, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const customers = () => [...sim.resources.get('customer')!.records.values()].map((s) => s.record);

describe('quickbooks OAuth (hosted): the company comes with the callback', () => {
  let h: Harness;
  let token: string;
  let orgId: string;
  beforeAll(async () => {
    const registry = testRegistry();
    const sandbox = { connectors: { quickbooks: { base_url: sim.url, credentials: CREDENTIALS } }, simulators: { quickbooks: sim as unknown as Rec } };
    h = await startHarness('sqlite', { config: { connectorTypes: withSandbox(defaultServiceConfig(), sandbox as never, registry).connectorTypes }, registry });
    const app = await h.createApp('qbo-org');
    orgId = app.organization_id;
    token = await h.token(app);
  });
  afterAll(() => h.close());

  const callback = async (strip = false): Promise<URL> => {
    const init = await h.request('POST', '/api/v1/integrations/connectors/oauth/initiate', {
      token,
      body: { customer_name: 'cust-qbo', connector_type: 'quickbooks', redirect_url: 'https://app.example.com/done' },
    });
    expect(init.status, init.text).toBe(200);
    const consent = await fetch(init.body.consent_url, { redirect: 'manual' });
    const back = new URL(consent.headers.get('location') as string);
    expect(back.searchParams.get('realmId')).toBe(REALM);
    if (strip) back.searchParams.delete('realmId');
    const cb = await h.request('GET', `${back.pathname}${back.search}`);
    expect(cb.status, cb.text).toBe(302);
    return new URL(cb.headers.get('location') as string);
  };

  it('stores the realmId of the redirect as realm_id beside the tokens; a redirect without one stores nothing', async () => {
    const secret = (await callback()).searchParams.get('secret_id') as string;
    const created = await h.request('POST', '/api/v1/integrations/connectors', {
      token,
      body: { customer_name: 'cust-qbo', connector_type: 'quickbooks', name: 'Books', server_side_oauth_secret_id: secret },
    });
    expect(created.status, created.text).toBe(201);
    const row = (await h.store.getConnector(orgId, created.body.id))!;
    const stored = parseKeyRing(TEST_ENCRYPTION_KEY).openJson<Rec>(
      { keyId: row.credentials_key_id, ciphertext: row.credentials_ciphertext },
      `connector:${created.body.id}`,
    );
    expect(stored).toMatchObject({ realm_id: REALM, access_token: expect.any(String), refresh_token: expect.any(String) });
    const before = sim.requests.length;
    const r = await h.request('POST', `/api/v1/integrations/connectors/${created.body.id}/execute`, {
      token,
      body: { entity: 'customers', action: 'list', params: { max_results: 2 } },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data).toHaveLength(2);
    // The sandbox's base URL stands for https://quickbooks.api.intuit.com/v3/company/<realm> (its base_path).
    expect(sim.requests.slice(before).map((q) => q.path)).toContain('/query');

    const refused = await callback(true);
    expect(refused.searchParams.get('error')).toBe('oauth_nothing_granted');
    expect(refused.searchParams.get('secret_id')).toBeNull();
  });
});

describe('quickbooks', () => {
  it('lists are query statements paged by startposition and maxresults, records unwrapped from QueryResponse', async () => {
    const pages: string[][] = [];
    for await (const page of quickbooks().pages('customers', { max_results: 2 })) pages.push((page.data as Rec[]).map((c) => c['DisplayName'] as string));
    expect(pages.map((p) => p.length).slice(0, 2)).toEqual([2, 2]);
    expect(pages.flat().slice(0, 3)).toEqual(["Amy's Bird Sanctuary", "Bill's Windsurf Shop", 'Cool Cars']);
    const statements = sim.requests.filter((r) => r.path === '/query').map((r) => r.query.get('query'));
    expect(statements.slice(0, 2)).toEqual([
      'select * from Customer orderby Metadata.LastUpdatedTime startposition 1 maxresults 2',
      'select * from Customer orderby Metadata.LastUpdatedTime startposition 3 maxresults 2',
    ]);
    expect(sim.requests.at(-1)!.query.get('minorversion')).toBe('75');
    await quickbooks().execute('invoices', 'list', { updated_since: '2026-01-01T00:02:00Z' });
    expect(sim.requests.at(-1)!.query.get('query')).toBe(
      "select * from Invoice where Metadata.LastUpdatedTime > '2026-01-01T00:02:00Z' orderby Metadata.LastUpdatedTime startposition 1 maxresults 100",
    );
  });

  it('a sparse update posts Id, SyncToken and sparse: true beside the fields, to operation=update', async () => {
    const made = (await quickbooks().execute('customers', 'create', {
      fields: { DisplayName: 'Kookies by Kathy', PrimaryEmailAddr: { Address: 'kathy@kookies.example' } },
    })) as {
      data: Rec;
    };
    expect(made.data).toMatchObject({ Id: expect.stringMatching(/^[0-9]+$/), DisplayName: 'Kookies by Kathy', SyncToken: '0' });
    const id = made.data['Id'] as string;
    const updated = (await quickbooks().execute('customers', 'update', { id, sync_token: '0', fields: { Notes: 'Pays on time' } })) as { data: Rec };
    const sent = sim.requests.at(-1)!;
    expect([sent.method, sent.path, sent.query.get('operation')]).toEqual(['POST', '/customer', 'update']);
    expect(JSON.parse(sent.rawBody)).toEqual({ Notes: 'Pays on time', Id: id, SyncToken: '0', sparse: true });
    expect(updated.data).toMatchObject({ Id: id, DisplayName: 'Kookies by Kathy', Notes: 'Pays on time' });
    expect(customers().filter((c) => c['Id'] === id)).toHaveLength(1);
  });
});

describe('quickbooks sync', () => {
  let tdb: TestDatabase;
  let engine: SyncEngine;
  let store: RecordStore;
  beforeAll(async () => {
    tdb = await openTestDatabase('sqlite');
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test' });
    engine = new SyncEngine({ database: tdb.database, sink: store, fullRefreshEvery: 10, runtimeFor: async () => ({ manifest, runtime: quickbooks() }) });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
  });

  it('an incremental run reads change data capture since the newest MetaData.LastUpdatedTime, and drops what it reports Deleted', async () => {
    await engine.register('qb-1');
    expect((await engine.runOnce('qb-1')).full).toBe(true);
    const items = sim.resources.get('item')!.records.size;
    expect(await store.count('qb-1', 'items')).toBe(items);
    const [kept, gone] = [...sim.resources.get('item')!.records.values()].map((s) => s.record['Id'] as string);
    sim.updateRecord('item', kept!, { UnitPrice: 80 });
    sim.updateRecord('item', gone!, { status: 'Deleted' });
    const before = sim.requests.length;
    const inc = await engine.runOnce('qb-1');
    expect(inc.full).toBe(false);
    const cdc = sim.requests.slice(before).find((r) => r.path === '/cdc' && r.query.get('entities') === 'Item')!;
    expect(Date.parse(cdc.query.get('changedSince')!)).toBe(Date.parse('2026-01-01T00:04:00Z'));
    expect(inc.entities['items']).toMatchObject({ deleted: 1 });
    expect(await store.count('qb-1', 'items')).toBe(items - 1);
  }, 60_000);
});
