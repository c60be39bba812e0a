/**
 * Apollo's quirks, end to end: connectors/apollo/connector.yaml run by the interpreter over real
 * HTTP against the generic simulator serving our extract of Apollo's API (connectors/apollo/openapi.yaml)
 * with its sidecar — no Apollo-specific simulator code. What every connector shares (each entity ×
 * action) is the shared conformance suite's; here: the key in `x-api-key` and the /auth/health
 * check, lists that are POST searches paged by `page` in the body while page < total_pages, the
 * People API Search (no pagination object: a short page ends it), and the incremental sync reading
 * the searches newest first until a page ends before the last run's mark.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/apollo';
const manifest = getConnector('apollo');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { api_key: string };

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar, seed: 5, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const apollo = (credentials: Rec = CREDENTIALS, upstream = sim) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: upstream.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => apollo().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;
const bodies = (path: string) => sim.requests.filter((r) => r.path === path).map((r) => JSON.parse(r.rawBody) as Rec);

describe('apollo', () => {
  it('sends the key in x-api-key; the check asks /auth/health, and an unknown key is upstream_credentials_rejected', async () => {
    expect(await apollo().check()).toMatchObject({ ok: true, checked: true });
    const sent = sim.requests.at(-1)!;
    expect(sent).toMatchObject({ method: 'GET', path: '/auth/health' });
    expect(sent.headers['x-api-key']).toBe(CREDENTIALS.api_key);
    expect(sent.headers['authorization']).toBeUndefined();
    const err = await failure(apollo({ api_key: 'not-a-key' }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toMatch(/Invalid access credentials/);
  });

  it('pages a POST search by page in the body until page = total_pages', async () => {
    const first = await run('contacts', 'list', { per_page: 3 });
    expect(first.meta).toEqual({ next_page: 2, total_entries: 7 });
    const seen: Rec[] = [];
    for await (const page of apollo().pages('contacts', { per_page: 3, q_keywords: '' })) seen.push(...(page.data as Rec[]));
    expect(seen).toHaveLength(7);
    for (const c of seen) expect(c['id']).toMatch(/^[0-9a-f]{24}$/);
    expect(bodies('/contacts/search').slice(1)).toEqual([
      { q_keywords: '', per_page: 3 },
      { q_keywords: '', per_page: 3, page: 2 },
      { q_keywords: '', per_page: 3, page: 3 },
    ]);
  });

  it("searches Apollo's people with filters in the body; a short page ends the list", async () => {
    const all: Rec[] = [];
    for await (const page of apollo().pages('people', { per_page: 5, person_titles: ['sales director'], person_seniorities: ['director', 'vp'] }))
      all.push(...(page.data as Rec[]));
    expect(all).toHaveLength(12);
    expect(all[0]).toMatchObject({ first_name: 'Tim', last_name_obfuscated: 'Zh***g', has_email: true });
    const sent = bodies('/mixed_people/api_search');
    expect(sent.map((b) => b['page'])).toEqual([undefined, 2, 3]);
    expect(sent[0]).toEqual({ person_titles: ['sales director'], person_seniorities: ['director', 'vp'], per_page: 5 });
  });

  it('creates a contact on an account, reads it back, and updates it', async () => {
    const account = ((await run('accounts', 'list', { q_organization_name: 'Acme' })).data as Rec[])[0]!;
    expect(account['name']).toBe('Acme Robotics');
    const made = (
      await run('contacts', 'create', {
        first_name: 'Iris',
        last_name: 'Vale',
        email: 'iris@acme-robotics.example.com',
        account_id: account['id'],
        run_dedupe: true,
      })
    ).data as Rec;
    expect(made).toMatchObject({ first_name: 'Iris', account_id: account['id'] });
    const updated = (await run('contacts', 'update', { contact_id: made['id'], title: 'CTO' })).data as Rec;
    expect(updated).toMatchObject({ id: made['id'], title: 'CTO', first_name: 'Iris' });
    expect((await run('contacts', 'get', { contact_id: made['id'] })).data).toMatchObject({ title: 'CTO' });
    expect(sim.requests.at(-2)).toMatchObject({ method: 'PUT', path: `/contacts/${made['id'] as string}` });
  });
});

describeEachDialect('apollo sync on %s', (name) => {
  let tdb: TestDatabase;
  let engine: SyncEngine;
  let upstream: OpenApiSimulator;
  beforeAll(async () => {
    upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar, seed: 5, rateLimit: false });
    tdb = await openTestDatabase(name);
    await migrate(tdb.database, [syncMigrations]);
    const store = new RecordStore(tdb.database, { cursorSecret: 'test' });
    engine = new SyncEngine({
      database: tdb.database,
      sink: store,
      fullRefreshEvery: 10,
      runtimeFor: async () => ({ manifest, runtime: apollo(CREDENTIALS, upstream) }),
    });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
    await upstream.close();
  });

  it('reads contacts and accounts whole, then newest first by updated time', async () => {
    await engine.register('ap-1');
    const first = await engine.runOnce('ap-1');
    expect(first.full).toBe(true);
    expect(first.entities).toMatchObject({ contacts: { records: 7 }, accounts: { records: 4 } });
    upstream.requests.length = 0;
    const second = await engine.runOnce('ap-1');
    expect(second.full).toBe(false);
    const sent = upstream.requests.filter((r) => r.path === '/contacts/search').map((r) => JSON.parse(r.rawBody) as Rec);
    expect(sent.length).toBeGreaterThan(0);
    for (const b of sent) expect(b).toMatchObject({ sort_by_field: 'contact_updated_at', sort_ascending: false, per_page: 100 });
    const accounts = upstream.requests.filter((r) => r.path === '/accounts/search').map((r) => JSON.parse(r.rawBody) as Rec);
    for (const b of accounts) expect(b).toMatchObject({ sort_by_field: 'account_updated_at', sort_ascending: false });
  }, 60_000);
});
