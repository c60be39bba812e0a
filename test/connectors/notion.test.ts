/**
 * Notion's quirks, end to end: connectors/notion/connector.yaml run by the interpreter over real
 * HTTP against the generic simulator serving our description derived from @notionhq/client
 * (connectors/notion/openapi.json) with its sidecar — no Notion-specific simulator code. What
 * every connector shares (each entity × action) is the shared conformance suite's; here: the
 * Notion-Version header, POST lists paged by start_cursor in the body, rich-text property values
 * and the title read out of them, data source queries, comments by page, the bot user's
 * workspace in the credential check, error codes, the incremental sync over search sorted by
 * last_edited_time, and webhooks in (the verification token's first POST, X-Notion-Signature).
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connect, ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { loadSidecar } from '../../src/simulator/sidecar.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { dialectCases, type TestDatabase } from '../search/helpers.ts';
import { describeEachDialect, startHarness, type Harness, type Reply } from '../service/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/notion';
const manifest = getConnector('notion');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const TOKEN = sidecar.sandbox?.credentials?.['token'] as string;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 5, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const notion = (credentials: Rec = { token: TOKEN }) =>
  connect('notion', { credentials: credentials as never, baseUrl: sim.url, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params?: Rec) =>
  notion().execute(entity as never, action as never, params as never) as Promise<ListEnvelope & RecordEnvelope>;
const records = (resource: string) => [...(sim.resources.get(resource)?.records.values() ?? [])].map((s) => s.record);

describe('notion', () => {
  it('sends Notion-Version 2025-09-03 and the bearer token on every request', async () => {
    await run('users', 'list', { page_size: 2 });
    await run('pages', 'list', { page_size: 2 });
    expect(sim.requests.length).toBeGreaterThanOrEqual(2);
    for (const r of sim.requests) expect([r.headers['notion-version'], r.headers['authorization']]).toEqual(['2025-09-03', `Bearer ${TOKEN}`]);
  });

  it('pages through users with start_cursor while has_more, and ids are UUIDs', async () => {
    const all: Rec[] = [];
    let cursor: string | undefined;
    let calls = 0;
    do {
      const page = await run('users', 'list', { page_size: 2, ...(cursor !== undefined ? { start_cursor: cursor } : {}) });
      all.push(...(page.data as Rec[]));
      cursor = (page.meta as { next_page: string | null }).next_page ?? undefined;
      calls++;
    } while (cursor !== undefined);
    expect(calls).toBe(3);
    expect(all.map((u) => u['id'])).toEqual(records('users').map((u) => u['id']));
    for (const u of all) expect(u['id']).toMatch(UUID);
    expect(all.find((u) => u['type'] === 'bot')).toMatchObject({ name: 'Switchboard', bot: { workspace_name: 'Northwind Labs' } });
  });

  it('lists pages through POST /search, the cursor in the body, most recently edited first, the title read from the title property', async () => {
    const first = await run('pages', 'list', { page_size: 5 });
    const search = sim.requests.filter((r) => r.path === '/search');
    expect(JSON.parse(search[0]!.rawBody)).toEqual({
      filter: { property: 'object', value: 'page' },
      sort: { timestamp: 'last_edited_time', direction: 'descending' },
      page_size: 5,
    });
    const times = (first.data as Rec[]).map((p) => p['last_edited_time'] as string);
    expect(times).toEqual([...times].sort().reverse());
    expect((first.data as Rec[])[0]).toMatchObject({ object: 'page', title: 'Launch checklist 12' });
    const next = (first.meta as { next_page: string }).next_page;
    expect(next).toEqual(expect.any(String));
    await run('pages', 'list', { page_size: 5, start_cursor: next });
    expect(JSON.parse(sim.requests.filter((r) => r.path === '/search').at(-1)!.rawBody)).toMatchObject({ start_cursor: next });
  });

  it('creates a page in a data source with rich-text property values, and updates one property', async () => {
    const ds = records('data_sources')[0]!;
    const created = await run('pages', 'create', {
      parent: { data_source_id: ds['id'] },
      properties: { Name: { title: [{ text: { content: 'Q3 plan' } }] }, Status: { status: { name: 'Not started' } } },
    });
    const page = created.data as Rec;
    expect(page['id']).toMatch(UUID);
    expect(page).toMatchObject({ object: 'page', title: 'Q3 plan', parent: { data_source_id: ds['id'] } });
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({
      parent: { data_source_id: ds['id'] },
      properties: { Name: { title: [{ text: { content: 'Q3 plan' } }] }, Status: { status: { name: 'Not started' } } },
    });

    const updated = (await run('pages', 'update', { page_id: page['id'], properties: { Status: { status: { name: 'Done' } } } })).data as Rec;
    expect(updated['properties']).toMatchObject({ Name: { title: [{ text: { content: 'Q3 plan' } }] }, Status: { status: { name: 'Done' } } });
    expect((updated['last_edited_time'] as string) >= (page['last_edited_time'] as string)).toBe(true);
    expect(sim.requests.at(-1)).toMatchObject({ method: 'PATCH', path: `/pages/${page['id'] as string}` });

    // The new page is a row of its data source: the query finds it, and only that source's pages.
    const rows = (await run('data_source_pages', 'list', { data_source_id: ds['id'], filter: { property: 'Status', status: { equals: 'Done' } } }))
      .data as Rec[];
    expect(rows.map((r) => r['id'])).toContain(page['id']);
    for (const r of rows) expect((r['parent'] as Rec)['data_source_id']).toBe(ds['id']);
    expect(sim.requests.at(-1)).toMatchObject({ method: 'POST', path: `/data_sources/${ds['id'] as string}/query` });
  });

  it("reads a database, its data source's property schema, a page's blocks and comments", async () => {
    const ds = records('data_sources')[0]!;
    const source = (await run('data_sources', 'get', { data_source_id: ds['id'] })).data as Rec;
    expect(Object.keys(source['properties'] as Rec)).toEqual(['Name', 'Status', 'Due']);
    const database = (await run('databases', 'get', { database_id: (source['parent'] as Rec)['database_id'] })).data as Rec;
    expect(database).toMatchObject({ object: 'database', id: (source['parent'] as Rec)['database_id'] });

    const block = records('blocks')[0]!;
    const pageId = (block['parent'] as Rec)['page_id'] as string;
    const children = (await run('blocks', 'list', { block_id: pageId })).data as Rec[];
    expect(children.length).toBeGreaterThan(0);
    for (const b of children) expect(b).toMatchObject({ object: 'block', parent: { page_id: pageId }, type: 'paragraph' });

    const comment = (await run('comments', 'create', { page_id: pageId, rich_text: [{ text: { content: 'Looks good' } }] })).data as Rec;
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ parent: { page_id: pageId }, rich_text: [{ text: { content: 'Looks good' } }] });
    expect(comment['id']).toMatch(UUID);
    await expect(run('comments', 'create', { rich_text: [{ text: { content: 'orphan' } }] })).rejects.toMatchObject({ code: 'invalid_params' });
  });

  it('the credential check names the bot and its workspace; a bad token is upstream_credentials_rejected; a missing page is upstream_not_found', async () => {
    expect(await notion().check()).toMatchObject({
      ok: true,
      info: { workspace_id: '9d1a7c55-2e4b-4f1e-8d2a-61b0c6f3e0a1', workspace_name: 'Northwind Labs' },
    });
    await expect(notion({ token: 'ntn_wrong' }).execute('users', 'list')).rejects.toMatchObject({ code: 'upstream_credentials_rejected' });
    await expect(run('pages', 'get', { page_id: '00000000-0000-4000-8000-000000000000' })).rejects.toMatchObject({ code: 'upstream_not_found' });
  });
});

// PostgreSQL shows as skipped, with the reason, when SWITCHBOARD_TEST_POSTGRES_URL is not set.
for (const [name, open, skipped] of dialectCases())
  describe.skipIf(skipped !== undefined)(`notion sync on ${name}${skipped !== undefined ? ` (${skipped})` : ''}`, () => {
    let tdb: TestDatabase;
    let store: RecordStore;
    let upstream: OpenApiSimulator;
    let engine: SyncEngine;

    beforeAll(async () => {
      upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 8, rateLimit: false });
      tdb = await open();
      await migrate(tdb.database, [syncMigrations]);
      store = new RecordStore(tdb.database, { cursorSecret: 'test' });
      engine = new SyncEngine({
        database: tdb.database,
        sink: store,
        fullRefreshEvery: 10,
        runtimeFor: async () => ({ manifest, runtime: new ConnectorRuntime(manifest, { token: TOKEN }, { baseUrl: upstream.url, limiter: null }) }),
      });
    });
    afterAll(async () => {
      await engine.stop();
      await tdb.close();
      await upstream.close();
    });

    const searchDef = {
      primaryKey: 'id',
      fields: manifest.entities.get('pages')!.def.search!.fields as Record<string, 'string'>,
      sources: manifest.entities.get('pages')!.def.search!.sources as Record<string, string>,
    };
    const api = (method: string, path: string, body: unknown) =>
      fetch(`${upstream.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, 'notion-version': '2025-09-03', 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<Rec>);

    it('a full run reads every page; an incremental run reads search newest first and stops past the last mark; trashed pages leave search', async () => {
      await engine.register('nt-1');
      const full = await engine.runOnce('nt-1');
      expect(full.full).toBe(true);
      const pages = upstream.resources.get('pages')!.records.size;
      expect(await store.count('nt-1', 'pages')).toBe(pages);
      expect(await store.count('nt-1', 'users')).toBe(upstream.resources.get('users')!.records.size);

      const [first, second] = [...upstream.resources.get('pages')!.records.keys()];
      await api('PATCH', `/pages/${first!}`, { properties: { Name: { title: [{ text: { content: 'Renamed roadmap' } }] } } });
      await api('PATCH', `/pages/${second!}`, { in_trash: true });
      const before = upstream.requests.length;
      const inc = await engine.runOnce('nt-1');
      expect(inc.full).toBe(false);
      // One page of search (100 a page) holds both changes and reaches back past the mark: no second request.
      const searches = upstream.requests.slice(before).filter((r) => r.path === '/search');
      expect(searches).toHaveLength(1);
      expect(JSON.parse(searches[0]!.rawBody)).toMatchObject({ sort: { timestamp: 'last_edited_time', direction: 'descending' }, page_size: 100 });
      expect(inc.entities['pages']?.deleted).toBe(1);

      const hit = await store.search('nt-1', 'pages', searchDef, { query: { filter: { eq: { title: 'Renamed roadmap' } } }, fields: ['id', 'title'] });
      expect(hit.data).toEqual([{ id: first, title: 'Renamed roadmap' }]);
      expect(await store.count('nt-1', 'pages')).toBe(pages - 1);
    }, 60_000);
  });

// Hosted: Notion's subscription first POSTs {verification_token} unsigned (acknowledged), then
// signs each event with that token: X-Notion-Signature: sha256=<hex HMAC of the body>.
describeEachDialect('notion webhooks in on %s', (dialect) => {
  const SECRET = 'secret_notion_verification_token_for_tests';
  const WORKSPACE = '9d1a7c55-2e4b-4f1e-8d2a-61b0c6f3e0a1';
  let upstream: OpenApiSimulator;
  let h: Harness;
  let token: string;
  let id: string;
  let n = 0;
  const deliver = (body: unknown, signature?: string | null): Promise<Reply> => {
    const raw = JSON.stringify(body);
    const sig = signature === undefined ? `sha256=${createHmac('sha256', SECRET).update(raw).digest('hex')}` : signature;
    return h.request('POST', '/api/v1/webhooks/notion', { raw, headers: sig === null ? {} : { 'x-notion-signature': sig } });
  };
  const event = (type: string, pageId: string) => ({
    id: `evt-${dialect}-${++n}`,
    timestamp: new Date().toISOString(),
    workspace_id: WORKSPACE,
    workspace_name: 'Northwind Labs',
    subscription_id: 'sub-1',
    integration_id: 'int-1',
    type,
    authors: [{ id: 'u-1', type: 'person' }],
    attempt_number: 1,
    entity: { id: pageId, type: 'page' },
    data: {},
  });
  const titleHits = async (title: string): Promise<string[]> => {
    const r = await h.request('POST', `/api/v1/integrations/connectors/${id}/execute`, {
      token,
      body: { entity: 'pages', action: 'search', params: { query: { filter: { eq: { title } } }, fields: ['id'] } },
    });
    expect(r.status, r.text).toBe(200);
    return r.body.data.map((d: { id: string }) => d.id);
  };

  beforeAll(async () => {
    upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 9, rateLimit: false });
    h = await startHarness(dialect, { config: { upstreamThrottle: false, connectorTypes: { notion: { baseUrl: upstream.url, webhookSecret: SECRET } } } });
    token = await h.token(await h.createApp('org-notion-hooks'));
    const r = await h.request('POST', '/api/v1/integrations/connectors', {
      token,
      body: { customer_name: 'c1', connector_type: 'notion', name: 'n', credentials: { token: TOKEN } },
    });
    expect(r.status, r.text).toBe(201);
    id = r.body.id;
    await h.service.ctx.sync.runOnce(id, { full: true });
  });
  afterAll(async () => {
    await h?.close();
    await upstream?.close();
  });

  it('acknowledges the verification request, applies a signed page event through get, removes a deleted page, refuses an unsigned one', async () => {
    expect((await deliver({ verification_token: SECRET }, null)).status).toBe(200);
    const [pageId, goneId] = [...upstream.resources.get('pages')!.records.keys()];
    await fetch(`${upstream.url}/pages/${pageId!}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${TOKEN}`, 'notion-version': '2025-09-03', 'content-type': 'application/json' },
      body: JSON.stringify({ properties: { Name: { title: [{ text: { content: 'Webhook title' } }] } } }),
    });
    const applied = await deliver(event('page.properties_updated', pageId!));
    expect(applied.status, applied.text).toBe(200);
    expect(applied.body).toMatchObject({ entity: 'pages', id: pageId, connectors: [{ connector_id: id, updated: 1 }] });
    expect(await titleHits('Webhook title')).toEqual([pageId]);

    const unsigned = await deliver(event('page.deleted', goneId!), null);
    expect([unsigned.status, unsigned.body.code]).toEqual([401, 'webhook_signature_invalid']);
    const deleted = await deliver(event('page.deleted', goneId!));
    expect(deleted.body).toMatchObject({ connectors: [{ connector_id: id, deleted: 1 }] });
    expect(await h.service.ctx.records.getRecord(id, 'pages', goneId!)).toBeUndefined();
  }, 60_000);
});
