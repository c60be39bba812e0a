/**
 * Confluence Cloud's quirks, end to end: connectors/confluence/connector.yaml run by the
 * interpreter over real HTTP against the generic simulator serving our v2 extract
 * (connectors/confluence/openapi.yaml) with its sidecar — no Confluence-specific simulator code.
 * What every connector shares is the conformance suite's; here: the two base URLs (the site, and
 * Atlassian's gateway by cloud id, whose next-page links are given relative to the site), pages
 * written in storage format with the next version number, a page's footer comments, and the sync
 * (pages newest change first, comments per page).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { gatewayPath } from '../../src/engine/request.ts';
import { RecordStore } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/confluence';
const manifest = getConnector('confluence');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { site: string; email: string; api_token: string };

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar, seed: 4, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const confluence = (credentials: Rec = CREDENTIALS, upstream = sim) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: upstream.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => confluence().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;
const records = (resource: string, upstream = sim) => [...(upstream.resources.get(resource)?.records.values() ?? [])].map((s) => s.record);

describe('confluence', () => {
  it('runs on the site with an API token, on the gateway by cloud id with OAuth', () => {
    expect(manifest.auth.map((v) => [v.def.name, v.def.type, v.def.base_url])).toEqual([
      ['api_token', 'basic', 'https://{{credentials.site}}.atlassian.net/wiki/api/v2'],
      ['oauth', 'oauth2', 'https://api.atlassian.com/ex/confluence/{{credentials.cloud_id}}/wiki/api/v2'],
    ]);
    // Next-page links are relative to the site: through the gateway they keep its prefix.
    expect(gatewayPath('/wiki/api/v2/pages?cursor=b64', 'https://api.atlassian.com/ex/confluence/1122-ab/wiki/api/v2')).toBe(
      '/ex/confluence/1122-ab/wiki/api/v2/pages?cursor=b64',
    );
    expect(gatewayPath('/wiki/api/v2/pages?cursor=b64', 'https://acme.atlassian.net/wiki/api/v2')).toBe('/wiki/api/v2/pages?cursor=b64');
    expect(gatewayPath('https://acme.atlassian.net/wiki/api/v2/pages?cursor=b64', 'https://api.atlassian.com/ex/confluence/1/wiki/api/v2')).toBe(
      'https://acme.atlassian.net/wiki/api/v2/pages?cursor=b64',
    );
  });

  it('checks with one space; a bad token is upstream_credentials_rejected', async () => {
    expect(await confluence().check()).toMatchObject({ ok: true, checked: true });
    expect(sim.requests.at(-1)).toMatchObject({ method: 'GET', path: '/spaces' });
    const err = await failure(confluence({ ...CREDENTIALS, api_token: 'not-the-token' }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
  });

  it('creates a page in storage format, reads its body, updates it as its next version; comments on it', async () => {
    const space = records('spaces')[0]!;
    const page = (await run('pages', 'create', { space_id: space['id'], title: 'Incident review', body: '<p>What happened</p>' })).data as Rec;
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({
      spaceId: space['id'],
      title: 'Incident review',
      body: { representation: 'storage', value: '<p>What happened</p>' },
    });
    const got = (await run('pages', 'get', { page_id: page['id'], body_format: 'storage' })).data as Rec;
    expect(sim.requests.at(-1)!.query.get('body-format')).toBe('storage');
    expect(got).toMatchObject({ title: 'Incident review', spaceId: space['id'] });
    const version = (got['version'] as Rec)['number'] as number;
    await run('pages', 'update', {
      page_id: page['id'],
      title: 'Incident review (final)',
      body: '<p>Root cause</p>',
      version_number: version + 1,
      version_message: 'Root cause',
    });
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({
      id: page['id'],
      status: 'current',
      title: 'Incident review (final)',
      body: { representation: 'storage', value: '<p>Root cause</p>' },
      version: { number: version + 1, message: 'Root cause' },
    });
    await expect(run('pages', 'update', { page_id: page['id'], title: 'x', body: 'y' })).rejects.toMatchObject({ code: 'invalid_params' });

    const comment = (await run('footer_comments', 'create', { page_id: page['id'], body: '<p>Thanks for writing this up</p>' })).data as Rec;
    expect(comment['pageId']).toBe(page['id']);
    const listed = (await run('footer_comments', 'list', { page_id: page['id'] })).data as Rec[];
    expect(listed.map((c) => c['id'])).toEqual([comment['id']]);
    expect(sim.requests.at(-1)!.path).toBe(`/pages/${String(page['id'])}/footer-comments`);
  });
});

// ---------------------------------------------------------------- sync, on each database

describeEachDialect('confluence sync on %s', (name) => {
  let tdb: TestDatabase;
  let store: RecordStore;
  let engine: SyncEngine;
  let upstream: OpenApiSimulator;
  beforeAll(async () => {
    upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar, seed: 4, rateLimit: false });
    tdb = await openTestDatabase(name);
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test' });
    engine = new SyncEngine({
      database: tdb.database,
      sink: store,
      fullRefreshEvery: 10,
      runtimeFor: async () => ({ manifest, runtime: confluence(CREDENTIALS, upstream) }),
    });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
    await upstream.close();
  });

  it("syncs spaces, pages (bodies in storage format) and each page's footer comments; then pages newest change first", async () => {
    await engine.register('cf-1');
    const first = await engine.runOnce('cf-1');
    expect(first.entities).toMatchObject({ spaces: { records: 3 }, pages: { records: 12 }, footer_comments: { records: 72 } });
    // The pages' own sync (the comments' for_each lists them plainly, by limit only).
    const pageLists = upstream.requests.filter((r) => r.path === '/pages' && r.query.get('sort') !== null);
    expect(pageLists.length).toBeGreaterThan(0);
    for (const r of pageLists) expect(Object.fromEntries(r.query)).toMatchObject({ sort: '-modified-date', 'body-format': 'storage' });
    expect(upstream.requests.filter((r) => /^\/pages\/\d+\/footer-comments$/.test(r.path))).toHaveLength(12);
    const second = await engine.runOnce('cf-1');
    expect(second.full).toBe(false);
    const page = records('pages', upstream)[0]!;
    expect(await store.getRecord('cf-1', 'pages', String(page['id']))).toMatchObject({ title: page['title'] });
  }, 60_000);
});
