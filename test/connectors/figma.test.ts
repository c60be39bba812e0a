/**
 * Figma's quirks, end to end: connectors/figma/connector.yaml run by the interpreter over real
 * HTTP against the generic simulator serving Figma's own description (trimmed from
 * @figma/rest-api-spec) with its sidecar — no Figma-specific simulator code. What every connector
 * shares (each entity × action) is the shared conformance suite's; here: the X-Figma-Token header
 * and the check, folders (projects) and their files by path, a file's metadata read from
 * `{file: ...}` with its key put back, team components in `meta.components` paged by the numeric
 * `after` cursor, version history by `pagination.next_page` URLs, comments pinned on the canvas,
 * the sync of a team named in the credentials (every run a full refresh: nothing in Figma's API is
 * incremental), and webhooks in with the passcode Figma echoes in every delivery.
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
import { startHosted, type Harness, type Reply } from '../service/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/figma';
const manifest = getConnector('figma');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { token: string; team_id: string };
const TEAM = CREDENTIALS.team_id;
const FILE_KEY = /^[A-Za-z0-9]{22}$/;

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 4, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const figma = (credentials: Rec = CREDENTIALS, upstream = sim) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: upstream.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => figma().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;
const list = async (entity: string, params: Rec): Promise<Rec[]> => (await run(entity, 'list', params)).data as Rec[];
const records = (resource: string) => [...(sim.resources.get(resource)?.records.values() ?? [])].map((s) => s.record);

describe('figma', () => {
  it('sends the personal access token as X-Figma-Token; the check names the user; a bad token is upstream_credentials_rejected', async () => {
    const checked = await figma().check();
    expect(checked).toMatchObject({ ok: true, checked: true });
    expect(checked.info).toHaveProperty('user_id');
    expect(sim.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/me' });
    expect(sim.requests.at(-1)!.headers['x-figma-token']).toBe(CREDENTIALS.token);
    expect(sim.requests.at(-1)!.headers['authorization']).toBeUndefined();
    const err = await failure(figma({ ...CREDENTIALS, token: 'figd_not_a_token' }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
  });

  it("lists a team's folders (projects), a folder's files, and reads a file's metadata with its key put back", async () => {
    const folders = await list('projects', { team_id: TEAM });
    expect(folders.map((f) => f['name'])).toEqual(['Design System', 'Mobile App', 'Marketing Site']);
    expect(sim.requests.at(-1)!.path).toBe(`/v2/teams/${TEAM}/folders`);
    const files = await list('files', { folder_id: folders[0]!['id'] });
    expect(files.length).toBe(3);
    for (const f of files) expect(f['key']).toMatch(FILE_KEY);
    const meta = (await run('files', 'get', { file_key: files[0]!['key'] })).data as Rec;
    expect(meta).toMatchObject({ key: files[0]!['key'], name: files[0]!['name'], editorType: 'figma', creator: { handle: 'Ada Okafor' } });
    expect(sim.requests.at(-1)!.path).toBe(`/v1/files/${files[0]!['key'] as string}/meta`);
    const missing = await failure(run('files', 'get', { file_key: 'AAAAAAAAAAAAAAAAAAAAAA' }));
    expect(missing.code).toBe('upstream_not_found');
    const folder = (await run('projects', 'get', { folder_id: folders[1]!['id'] })).data as Rec;
    expect(folder).toMatchObject({ id: folders[1]!['id'], name: 'Mobile App', file_count: 3 });
  });

  it("pages a team's components by meta.cursor.after, and reads one by key from meta", async () => {
    const first = await run('components', 'list', { team_id: TEAM, page_size: 3 });
    expect((first.data as Rec[]).map((c) => c['name'])).toEqual(['Button/Primary', 'Button/Secondary', 'Input/Text']);
    expect(first.meta).toEqual({ next_page: 3 });
    const all: Rec[] = [];
    for await (const page of figma().pages('components', { team_id: TEAM, page_size: 3 })) all.push(...(page.data as Rec[]));
    expect(all.map((c) => c['key'])).toEqual(records('components').map((c) => c['key']));
    expect(sim.requests.filter((r) => r.path === `/v1/teams/${TEAM}/components`).map((r) => r.query.get('after'))).toEqual([null, null, '3', '6']);
    const one = (await run('components', 'get', { key: all[4]!['key'] })).data as Rec;
    expect(one).toMatchObject({ key: all[4]!['key'], name: 'Badge', containing_frame: { pageName: 'Library' } });
  });

  it("follows a file's version history through pagination.next_page", async () => {
    const fileKey = records('files')[0]!['key'] as string;
    const versions: Rec[] = [];
    for await (const page of figma().pages('versions', { file_key: fileKey, page_size: 2 })) versions.push(...(page.data as Rec[]));
    const seeded = [...(sim.resources.get('versions')?.records.values() ?? [])].filter((s) => s.parents['file_key'] === fileKey);
    expect(versions.length).toBe(seeded.length);
    expect(versions.length).toBeGreaterThan(2);
    const calls = sim.requests.filter((r) => r.path === `/v1/files/${fileKey}/versions`);
    expect(calls.length).toBe(Math.ceil(seeded.length / 2));
    expect(calls[1]!.query.get('page_size')).toBe('2');
  });

  it('posts a comment pinned in a frame; the file lists it with its file key', async () => {
    const fileKey = records('files')[2]!['key'] as string;
    const created = (
      await run('comments', 'create', {
        file_key: fileKey,
        message: 'Align this with the grid',
        client_meta: { node_id: '4:12', node_offset: { x: 8, y: 16 } },
      })
    ).data as Rec;
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({
      message: 'Align this with the grid',
      client_meta: { node_id: '4:12', node_offset: { x: 8, y: 16 } },
    });
    expect(created).toMatchObject({ file_key: fileKey, message: 'Align this with the grid' });
    const listed = await list('comments', { file_key: fileKey });
    expect(listed.map((c) => c['id'])).toContain(created['id']);
    for (const c of listed) expect(c['file_key']).toBe(fileKey);
    await expect(run('comments', 'create', { file_key: fileKey, message: 'x', client_meta: { x: 1 } })).rejects.toMatchObject({ code: 'invalid_params' });
  });
});

// ---------------------------------------------------------------- sync, on each database

describeEachDialect('figma sync on %s', (name) => {
  let tdb: TestDatabase;
  let store: RecordStore;
  let engine: SyncEngine;
  let upstream: OpenApiSimulator;
  const seeded = (resource: string) => [...(upstream.resources.get(resource)?.records.values() ?? [])].map((s) => s.record);
  beforeAll(async () => {
    upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 4, rateLimit: false });
    tdb = await openTestDatabase(name);
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test' });
    engine = new SyncEngine({
      database: tdb.database,
      sink: store,
      fullRefreshEvery: 10,
      runtimeFor: async () => ({ manifest, runtime: figma(CREDENTIALS, upstream) }),
    });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
    await upstream.close();
  });

  it("syncs the team the credentials name: its folders, each folder's files, its components; every run is full, so a file gone upstream leaves search", async () => {
    await engine.register('fg-1');
    const first = await engine.runOnce('fg-1');
    expect(first.full).toBe(true);
    expect(first.entities).toMatchObject({ projects: { records: 3 }, files: { records: 9 }, components: { records: 8 } });
    const teams = upstream.requests.filter((r) => r.path.startsWith('/v2/teams/'));
    expect(teams.length).toBeGreaterThan(0);
    for (const r of teams) expect(r.path).toBe(`/v2/teams/${TEAM}/folders`);
    const hits = await store.search('fg-1', 'components', searchDefOf(manifest.entities.get('components')!.def)!, {
      query: { filter: { eq: { name: 'Modal/Dialog' } } },
      fields: ['key', 'name'],
    });
    expect(hits.data).toEqual([{ key: seeded('components')[6]!['key'], name: 'Modal/Dialog' }]);

    const gone = seeded('files')[0]!['key'] as string;
    upstream.removeRecord('files', gone);
    const second = await engine.runOnce('fg-1');
    expect(second.full).toBe(true);
    expect(second.entities['files']).toMatchObject({ records: 8, deleted: 1 });
    expect(await store.count('fg-1', 'files')).toBe(8);
  }, 60_000);
});

// ---------------------------------------------------------------- webhooks in, hosted

// Figma signs nothing: each delivery carries the passcode given when the webhook was made, which
// is the deployment's SWITCHBOARD_FIGMA_WEBHOOK_SECRET. Deliveries go to the connector's own URL.
describeEachDialect('figma webhooks in on %s', (dialect) => {
  const PASSCODE = 'figma-webhook-passcode-for-tests';
  let upstream: OpenApiSimulator;
  let h: Harness;
  let token: string;
  let id: string;
  let n = 0;
  const deliver = (body: Rec): Promise<Reply> => h.request('POST', `/api/v1/webhooks/figma/${id}`, { raw: JSON.stringify(body) });
  const event = (event_type: string, fileKey: string, passcode = PASSCODE): Rec => ({
    event_type,
    file_key: fileKey,
    file_name: 'Homepage Redesign',
    passcode,
    timestamp: new Date(Date.now() + ++n * 1000).toISOString(),
    webhook_id: '1187432',
    triggered_by: { id: '1146891572380251467', handle: 'Ada Okafor' },
  });

  beforeAll(async () => {
    upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 6, rateLimit: false });
    ({ h, token } = await startHosted(dialect, {
      org: 'org-figma-hooks',
      upstreams: { figma: upstream.url },
      config: { connectorTypes: { figma: { webhookSecret: PASSCODE } } },
    }));
    const r = await h.request('POST', '/api/v1/integrations/connectors', {
      token,
      body: { customer_name: 'c1', connector_type: 'figma', name: 'f', credentials: CREDENTIALS },
    });
    expect(r.status, r.text).toBe(201);
    id = r.body.id;
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await upstream?.close();
  });

  it('refuses a wrong or missing passcode; FILE_UPDATE and FILE_VERSION_UPDATE fetch the file; FILE_DELETE removes it; a replay is refused', async () => {
    const [changed, deleted] = [...upstream.resources.get('files')!.records.keys()];
    for (const passcode of ['not-the-passcode', '']) {
      const r = await deliver(event('FILE_UPDATE', changed!, passcode));
      expect([r.status, r.body.code], r.text).toEqual([401, 'webhook_signature_invalid']);
    }
    (upstream.resources.get('files')!.records.get(changed!)!.record as Rec)['name'] = 'Homepage Redesign v2';
    const body = event('FILE_UPDATE', changed!);
    const applied = await deliver(body);
    expect(applied.status, applied.text).toBe(200);
    expect(applied.body).toMatchObject({ entity: 'files', id: changed, connectors: [{ connector_id: id, added: 1 }] });
    expect(await h.service.ctx.records.getRecord(id, 'files', changed!)).toMatchObject({ key: changed, name: 'Homepage Redesign v2' });
    const replay = await deliver(body);
    expect([replay.status, replay.body.code]).toEqual([401, 'webhook_replayed']);

    expect((await deliver(event('FILE_VERSION_UPDATE', deleted!))).body).toMatchObject({ connectors: [{ connector_id: id, added: 1 }] });
    const removed = await deliver(event('FILE_DELETE', deleted!));
    expect(removed.body).toMatchObject({ connectors: [{ connector_id: id, deleted: 1 }] });
    expect(await h.service.ctx.records.getRecord(id, 'files', deleted!)).toBeUndefined();
    const ping = await deliver({ event_type: 'PING', passcode: PASSCODE, timestamp: new Date().toISOString(), webhook_id: '1187432' });
    expect(ping.body).toMatchObject({ ok: true, ignored: 'no topic rule' });
  }, 60_000);
});
