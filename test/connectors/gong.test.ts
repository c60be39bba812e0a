/**
 * Gong's quirks, end to end: connectors/gong/connector.yaml run by the interpreter over real HTTP
 * against the generic simulator serving our extract of Gong's API (connectors/gong/openapi.yaml)
 * with its sidecar — no Gong-specific simulator code. What every connector shares (each entity ×
 * action) is the shared conformance suite's; here: the access key and secret as HTTP basic, the
 * workspaces check, `records.cursor` pages (sent back in the query of GET lists and in the body of
 * the transcripts' POST; Gong's pages hold 100, so these tests page a smaller simulated size), a
 * new call answered as `{callId, url}`, and calls synced by their start time (`fromDateTime`).
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

const DIR = 'connectors/gong';
const manifest = getConnector('gong');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { access_key: string; access_key_secret: string };
// Pages of 2 instead of Gong's 100, so a few seeded records span several pages.
const small = {
  ...sidecar,
  pagination: { ...sidecar.pagination, default_limit: 2 },
  search: { 'POST /v2/calls/transcript': { ...sidecar.search!['POST /v2/calls/transcript']!, pagination: { cursor: 'cursor', default: 2 } } },
};

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar: small, seed: 6, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const gong = (credentials: Rec = CREDENTIALS, upstream = sim) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: upstream.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => gong().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;
const records = (resource: string) => [...(sim.resources.get(resource)?.records.values() ?? [])].map((s) => s.record);

describe('gong', () => {
  it('sends the access key and secret as HTTP basic; the check reads the workspaces; a wrong secret is upstream_credentials_rejected', async () => {
    expect(await gong().check()).toMatchObject({ ok: true, checked: true, info: { workspace_id: '623457276584334', workspace_name: 'Northwind Sales' } });
    const sent = sim.requests.at(-1)!;
    expect(sent).toMatchObject({ method: 'GET', path: '/v2/workspaces' });
    expect(sent.headers['authorization']).toBe(`Basic ${Buffer.from(`${CREDENTIALS.access_key}:${CREDENTIALS.access_key_secret}`).toString('base64')}`);
    const err = await failure(gong({ ...CREDENTIALS, access_key_secret: 'wrong' }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toMatch(/access key or secret is invalid/);
  });

  it('follows records.cursor in the query of the calls list, and filters calls by start time', async () => {
    const seen: Rec[] = [];
    for await (const page of gong().pages('calls', {})) seen.push(...(page.data as Rec[]));
    expect(seen.map((c) => c['id'])).toEqual(records('calls').map((c) => c['id']));
    const cursors = sim.requests.filter((r) => r.path === '/v2/calls').map((r) => r.query.get('cursor'));
    expect(cursors).toHaveLength(3);
    expect(cursors[0]).toBeNull();
    const late = await run('calls', 'list', { from_date_time: '2026-01-05T00:00:00Z' });
    expect((late.data as Rec[]).map((c) => c['title'])).toEqual(['Bluebird Logistics negotiation', 'Cedar Health renewal']);
    expect(sim.requests.at(-1)!.query.get('fromDateTime')).toBe('2026-01-05T00:00:00Z');
  });

  it("reads transcripts by a POST whose filter and cursor go in the body; each names a seeded call's id", async () => {
    const seen: Rec[] = [];
    for await (const page of gong().pages('call_transcripts', { from_date_time: '2026-01-01T00:00:00Z' })) seen.push(...(page.data as Rec[]));
    const callIds = new Set(records('calls').map((c) => c['id']));
    expect(seen).toHaveLength(3);
    for (const t of seen) expect(callIds.has(t['callId'])).toBe(true);
    const bodies = sim.requests.filter((r) => r.path === '/v2/calls/transcript').map((r) => JSON.parse(r.rawBody) as Rec);
    expect(bodies[0]).toEqual({ filter: { fromDateTime: '2026-01-01T00:00:00Z' } });
    expect(bodies[1]).toMatchObject({ filter: { fromDateTime: '2026-01-01T00:00:00Z' }, cursor: expect.any(String) });
  });

  it('adds a call: the answer {callId, url} is the new call, which then reads back', async () => {
    const user = records('users')[0]!;
    const made = (
      await run('calls', 'create', {
        client_unique_id: 'crm-call-4711',
        actual_start: '2026-02-03T15:00:00Z',
        parties: [{ userId: user['id'] }, { emailAddress: 'maya@northwind.example.com', name: 'Maya Okonkwo' }],
        direction: 'Outbound',
        primary_user: user['id'],
        title: 'Follow-up with Northwind',
      })
    ).data as Rec;
    expect(made['id']).toMatch(/^[0-9]+$/);
    expect(made['url']).toBe(`https://app.gong.io/call?id=${made['id'] as string}`);
    expect((await run('calls', 'get', { id: made['id'] })).data).toMatchObject({ id: made['id'], title: 'Follow-up with Northwind' });
  });
});

describeEachDialect('gong sync on %s', (name) => {
  let tdb: TestDatabase;
  let store: RecordStore;
  let engine: SyncEngine;
  let upstream: OpenApiSimulator;
  beforeAll(async () => {
    upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar, seed: 6, rateLimit: false });
    tdb = await openTestDatabase(name);
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test' });
    engine = new SyncEngine({
      database: tdb.database,
      sink: store,
      fullRefreshEvery: 10,
      runtimeFor: async () => ({ manifest, runtime: gong(CREDENTIALS, upstream) }),
    });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
    await upstream.close();
  });

  it('reads calls and users whole, then the calls started since the last one seen', async () => {
    await engine.register('gg-1');
    const first = await engine.runOnce('gg-1');
    expect(first.full).toBe(true);
    expect(first.entities).toMatchObject({ calls: { records: 6 }, users: { records: 4 } });
    const hits = await store.search('gg-1', 'calls', searchDefOf(manifest.entities.get('calls')!.def)!, {
      query: { filter: { eq: { title: 'Pricing follow-up' } } },
      fields: ['id', 'title', 'system'],
    });
    expect(hits.data).toEqual([expect.objectContaining({ title: 'Pricing follow-up', system: 'Aircall' })]);
    upstream.requests.length = 0;
    const second = await engine.runOnce('gg-1');
    expect(second.full).toBe(false);
    const since = upstream.requests.filter((r) => r.path === '/v2/calls').map((r) => r.query.get('fromDateTime'));
    expect(since).toEqual(['2026-01-06T00:00:00.000Z']);
  }, 60_000);
});
