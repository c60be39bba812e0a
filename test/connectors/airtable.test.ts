/**
 * Airtable's quirks, end to end: connectors/airtable/connector.yaml run by the interpreter over
 * real HTTP against the generic simulator serving our extract of Airtable's Web API
 * (connectors/airtable/openapi.yaml) with its sidecar — no Airtable-specific simulator code. What
 * every connector shares (each entity × action) is the shared conformance suite's; here: the
 * personal access token and the whoami check, records' list parameters as Airtable reads them
 * (fields[], sort[0][field], filterByFormula, view) and `offset` pages, a table named by id or by
 * name, writes with typecast, a base's schema as its get, and the sync: tables per base, records
 * per table, then the records modified since by a LAST_MODIFIED_TIME() formula.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import { failure } from '../helpers/errors.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';
import { callBucket } from '../../src/engine/index.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/airtable';
const manifest = getConnector('airtable');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { token: string };

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar, seed: 7, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const airtable = (credentials: Rec = CREDENTIALS, upstream = sim) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: upstream.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => airtable().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;
/** The first seeded base and its first table (Deals). */
const deals = async (): Promise<{ base: string; table: Rec }> => {
  const base = ((await run('bases', 'list')).data as Rec[])[0]!['id'] as string;
  const table = ((await run('tables', 'list', { base_id: base })).data as Rec[]).find((t) => t['name'] === 'Deals')!;
  return { base, table };
};

describe('airtable', () => {
  it('sends the personal access token as a bearer token; the check reports the user, a refused token is upstream_credentials_rejected', async () => {
    expect(await airtable().check()).toMatchObject({ ok: true, checked: true, info: { user_id: 'usrL2PNC5o3H4lBEi' } });
    const sent = sim.requests.at(-1)!;
    expect(sent).toMatchObject({ method: 'GET', path: '/v0/meta/whoami' });
    expect(sent.headers['authorization']).toBe(`Bearer ${CREDENTIALS.token}`);
    const err = await failure(airtable({ token: `${CREDENTIALS.token.slice(0, -1)}0` }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toMatch(/Authentication required/);
  });

  it("reads a base's schema as its get, and its tables with the base's id beside them", async () => {
    const { base, table } = await deals();
    expect(base).toMatch(/^app[A-Za-z0-9]{14}$/);
    expect(table).toMatchObject({ base_id: base, primaryFieldId: expect.stringMatching(/^fld/) });
    const schema = (await run('bases', 'get', { base_id: base, include_visible_field_ids: true })).data as Rec;
    expect(schema['id']).toBe(base);
    expect((schema['tables'] as Rec[]).map((t) => t['id'])).toContain(table['id']);
    expect(sim.requests.at(-1)!.query.getAll('include[]')).toEqual(['visibleFieldIds']);
    const missing = await failure(run('bases', 'get', { base_id: 'appAAAAAAAAAAAAAA' }));
    expect(missing.code).toBe('upstream_not_found');
  });

  it('lists records with fields[], one sort key, a formula and a view, paged by offset until none is answered; a table by id or by name', async () => {
    const { base, table } = await deals();
    const params = {
      base_id: base,
      table_id_or_name: table['id'],
      fields: ['Name', 'Status'],
      sort_field: 'Name',
      sort_direction: 'desc',
      filter_by_formula: "{Status} = 'Todo'",
      view: 'Grid view',
      page_size: 1,
    };
    const seen: Rec[] = [];
    for await (const page of airtable().pages('records', params)) seen.push(...(page.data as Rec[]));
    expect(seen).toHaveLength(3);
    for (const r of seen) expect(r['id']).toMatch(/^rec[A-Za-z0-9]{14}$/);
    const sent = sim.requests.filter((r) => r.path === `/v0/${base}/${table['id'] as string}`);
    expect(sent).toHaveLength(3);
    const q = sent[0]!.query;
    expect(q.getAll('fields[]')).toEqual(['Name', 'Status']);
    expect([q.get('sort[0][field]'), q.get('sort[0][direction]'), q.get('filterByFormula'), q.get('view'), q.get('pageSize')]).toEqual([
      'Name',
      'desc',
      "{Status} = 'Todo'",
      'Grid view',
      '1',
    ]);
    expect(sent.map((r) => r.query.get('offset') === null)).toEqual([true, false, false]);
    const byName = (await run('records', 'list', { base_id: base, table_id_or_name: 'Deals' })).data as Rec[];
    expect(byName.map((r) => r['id'])).toEqual(seen.map((r) => r['id']));
    expect(sim.requests.at(-1)!.path).toBe(`/v0/${base}/Deals`);
  });

  it('creates a record with typecast and updates some of its fields, the others kept', async () => {
    const { base, table } = await deals();
    const at = { base_id: base, table_id_or_name: table['id'] };
    const made = (await run('records', 'create', { ...at, fields: { Name: 'Fjord Analytics trial', Status: 'Todo' }, typecast: true })).data as Rec;
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ fields: { Name: 'Fjord Analytics trial', Status: 'Todo' }, typecast: true });
    await run('records', 'update', { ...at, record_id: made['id'], fields: { Status: 'Done' } });
    expect(sim.requests.at(-1)).toMatchObject({ method: 'PATCH', path: `/v0/${base}/${table['id'] as string}/${made['id'] as string}` });
    const got = (await run('records', 'get', { ...at, record_id: made['id'] })).data as Rec;
    expect(got['fields']).toEqual({ Name: 'Fjord Analytics trial', Status: 'Done' });
    const missing = await failure(run('records', 'get', { ...at, record_id: 'recAAAAAAAAAAAAAA' }));
    expect(missing.code).toBe('upstream_not_found');
  });
});

describeEachDialect('airtable sync on %s', (name) => {
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
      runtimeFor: async () => ({ manifest, runtime: airtable(CREDENTIALS, upstream) }),
    });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
    await upstream.close();
  });

  it("reads bases, each base's tables and each table's records, then the records modified since the newest createdTime seen", async () => {
    await engine.register('at-1');
    const first = await engine.runOnce('at-1');
    expect(first.full).toBe(true);
    expect(first.entities).toMatchObject({ bases: { records: 2 }, tables: { records: 4 }, records: { records: 12 } });
    const tables = upstream.requests.filter((r) => /^\/v0\/meta\/bases\/app[A-Za-z0-9]{14}\/tables$/.test(r.path));
    expect(new Set(tables.map((r) => r.path)).size).toBe(2);
    const reads = upstream.requests.filter((r) => /^\/v0\/app[A-Za-z0-9]{14}\/tbl[A-Za-z0-9]{14}$/.test(r.path));
    expect(new Set(reads.map((r) => r.path)).size).toBe(4);
    for (const r of reads) expect([r.query.get('pageSize'), r.query.get('filterByFormula')]).toEqual(['100', null]);

    upstream.requests.length = 0;
    const second = await engine.runOnce('at-1');
    expect(second.full).toBe(false);
    const changes = upstream.requests.filter((r) => /^\/v0\/app[A-Za-z0-9]{14}\/tbl[A-Za-z0-9]{14}$/.test(r.path));
    expect(changes).toHaveLength(4);
    for (const r of changes) expect(r.query.get('filterByFormula')).toBe("IS_AFTER(LAST_MODIFIED_TIME(), DATETIME_PARSE('2026-01-01T11:00:00.000Z'))");
    expect(await store.count('at-1', 'records')).toBe(12);
  }, 60_000);
});

describe('rate limits: 5 a second per base, 50 across bases', () => {
  const bucket = (entity: string, action: string, params: Rec) =>
    callBucket(manifest, manifest.entities.get(entity)!.actions.get(action as 'list')!, { params, credentials: CREDENTIALS, config: {} });

  it('each base has a bucket of its own, whatever the table or action; calls without a base share one', () => {
    const a = bucket('records', 'list', { base_id: 'appAAAAAAAAAAAAAA', table_id_or_name: 't1' });
    expect(bucket('records', 'get', { base_id: 'appAAAAAAAAAAAAAA', table_id_or_name: 't2', record_id: 'recX' })).toEqual(a);
    expect(bucket('tables', 'list', { base_id: 'appBBBBBBBBBBBBBB' })?.id).not.toBe(a?.id);
    expect(a?.rate).toMatchObject({ requests: 5, window_ms: 1000 });
    expect(bucket('bases', 'list', {})?.id).toBe(bucket('bases', 'list', { offset: 'x' })?.id);
    expect(manifest.manifest.rate_limit?.global).toEqual({ requests: 50, window_ms: 1000 });
  });
});
