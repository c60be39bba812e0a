/**
 * OneDrive's quirks: connectors/onedrive/connector.yaml (with ../_shared/microsoft.yaml) run by the
 * interpreter against the generic simulator serving Graph's description (trimmed by trim.mjs), and
 * for what the simulator keeps no record of (deletions, an expired delta link), a stand-in fetch
 * answering as Graph's delta query does. Here: the drive's tree under `root`, a new folder (the
 * folder facet and conflict behaviour) moved and renamed, search in the path, download links in the
 * records, and the sync through the delta query: pages by @odata.nextLink, the last page's
 * @odata.deltaLink followed as is by the next run, deleted items out of search, 410 Gone listing in full.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/onedrive';
const manifest = getConnector('onedrive');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as Rec;
const ROOT = '01BYE5RZ56Y2GOVW7725BZO354PWSELRRZ';

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 5, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const onedrive = (fetchImpl?: FetchLike) =>
  new ConnectorRuntime(manifest, CREDENTIALS, {
    ...(fetchImpl ? { fetch: fetchImpl } : { baseUrl: sim.url }),
    limiter: null,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
  });
const names = (page: unknown): string[] => ((page as ListEnvelope).data as Rec[]).map((r) => r['name'] as string);

describe('onedrive', () => {
  it('lists the top folder as root and a folder by id, pages by @odata.nextLink; files carry their download link', async () => {
    const rt = onedrive();
    const top = await rt.execute('drive_items', 'list', { folder_id: 'root', top: 3 });
    expect(names(top)).toEqual(['Projects', 'Finance', 'Photos']);
    expect((top as ListEnvelope).meta['next_page']).toMatch(/\/me\/drive\/items\/root\/children\?%24top=3&%24skiptoken=/);
    const all: string[] = [];
    for await (const page of rt.pages('drive_items', { folder_id: 'root', top: 3 })) all.push(...names(page));
    expect(all).toEqual(['Projects', 'Finance', 'Photos', 'Q4 roadmap.docx']);
    expect(
      sim.requests
        .filter((r) => r.path === '/me/drive/items/root/children')
        .at(-1)!
        .query.get('$skiptoken'),
    ).not.toBeNull();
    const finance = (await rt.execute('drive_items', 'list', { folder_id: '01BYE5RZ2KXWOBFTVRQRCJMH6NDNE7WBEF' })) as ListEnvelope;
    const budget = (finance.data as Rec[]).find((r) => r['name'] === 'Budget 2026.xlsx')!;
    expect(budget['@microsoft.graph.downloadUrl']).toMatch(/^https:\/\/northwind-my\.sharepoint\.com\/.*download\.aspx\?UniqueId=/);
    expect(budget['file']).toMatchObject({ mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' });
    expect(names(await rt.execute('drive_item_search', 'list', { q: 'budget' }))).toEqual(['Budget 2026.xlsx']);
    expect(sim.requests.at(-1)!.path).toBe("/me/drive/root/search(q='budget')");
  });

  it('creates a folder (folder facet, conflict behaviour), then renames and moves it by parentReference', async () => {
    const rt = onedrive();
    const made = ((await rt.execute('drive_items', 'create', { parent_id: 'root', name: 'Board', conflict_behavior: 'rename' })) as RecordEnvelope).data;
    const sent = sim.requests.at(-1)!;
    expect([sent.method, sent.path, JSON.parse(sent.rawBody)]).toEqual([
      'POST',
      '/me/drive/items/root/children',
      { name: 'Board', folder: {}, '@microsoft.graph.conflictBehavior': 'rename' },
    ]);
    expect(made).toMatchObject({ name: 'Board', folder: { childCount: 0 }, parentReference: { id: ROOT } });
    expect(String(made['id'])).toMatch(/^01BYE5RZ[A-Z2-7]{26}$/);
    const moved = (
      (await rt.execute('drive_items', 'update', {
        item_id: made['id'],
        name: 'Board 2026',
        parent_id: '01BYE5RZ2KXWOBFTVRQRCJMH6NDNE7WBEF',
      })) as RecordEnvelope
    ).data;
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ name: 'Board 2026', parentReference: { id: '01BYE5RZ2KXWOBFTVRQRCJMH6NDNE7WBEF' } });
    expect(moved).toMatchObject({ name: 'Board 2026', parentReference: { id: '01BYE5RZ2KXWOBFTVRQRCJMH6NDNE7WBEF' } });
    await expect(rt.execute('drive_items', 'get', { item_id: '01BYE5RZAAAAAAAAAAAAAAAAAAAAAAAAAA' })).rejects.toMatchObject({ code: 'upstream_not_found' });
  });

  describe('sync through the delta query', () => {
    let tdb: TestDatabase;
    let store: RecordStore;
    beforeAll(async () => {
      tdb = await openTestDatabase('sqlite');
      await migrate(tdb.database, [syncMigrations]);
      store = new RecordStore(tdb.database, { cursorSecret: 'test-secret' });
    });
    afterAll(() => tdb.close());
    const engineOver = (fetchImpl?: FetchLike) =>
      new SyncEngine({ database: tdb.database, sink: store, runtimeFor: async () => ({ manifest, runtime: onedrive(fetchImpl) }), fullRefreshEvery: 100 });
    const stored = async (connector: string): Promise<string[]> =>
      (
        await store.search(
          connector,
          'drive_items',
          { primaryKey: 'id', fields: { id: 'string', name: 'string' } },
          { query: { sort: [{ name: 'asc' }] }, fields: ['name'] },
        )
      ).data.map((d) => String(d['name']));

    it('reads the whole drive, then follows the delta link: only what was stored since', async () => {
      const engine = engineOver();
      await engine.register('sim');
      await engine.runOnce('sim');
      const first = await stored('sim');
      expect(first).toEqual(expect.arrayContaining(['root', 'Projects', 'Q4 roadmap.docx', 'API spec.md']));
      expect(first).not.toContain('Plans');
      await onedrive().execute('drive_items', 'create', { parent_id: 'root', name: 'Plans' });
      const before = sim.requests.length;
      const inc = await engine.runOnce('sim');
      expect(inc.full).toBe(false);
      const delta = sim.requests.slice(before).filter((r) => r.path === '/me/drive/root/delta');
      // One request: the link, naming the last item of the full pass.
      expect(delta.map((r) => r.query.get('token'))).toEqual([expect.stringMatching(/^01BYE5RZ/)]);
      expect(inc.entities['drive_items']).toMatchObject({ records: 1 });
      expect(await stored('sim')).toContain('Plans');
      await engine.stop();
    });

    it('removes deleted items, and lists in full again when Graph answers 410 Gone for the link', async () => {
      // Graph's delta: pages of two by @odata.nextLink (token=...), @odata.deltaLink on the last; deletions carry the deleted facet.
      const items = new Map<string, Rec & { seq: number }>();
      let seq = 0;
      const expired = new Set<string>();
      const calls: string[] = [];
      const put = (id: string, name: string, extra: Rec = {}) => items.set(id, { id, name, ...extra, seq: ++seq });
      const fetchImpl: FetchLike = async (input) => {
        const url = new URL(String(input));
        if (url.pathname.endsWith('/delta')) calls.push(`${url.pathname}${url.search}`);
        const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
        if (url.pathname.endsWith('/me/drives')) return json(200, { value: [] });
        const token = url.searchParams.get('token');
        if (token !== null && expired.has(token))
          return json(410, { error: { code: 'resyncRequired', message: 'Resync required. Replace any local items with the server version.' } });
        const all = [...items.values()].filter((i) => i.seq > Number(token ?? 0) && (token !== null || i['deleted'] === undefined));
        const page = all.slice(0, 2);
        const link = `https://graph.microsoft.com/v1.0/me/drive/root/delta?token=${String(all.length > 2 ? page.at(-1)!.seq : seq)}`;
        return json(200, { value: page.map(({ seq: _, ...r }) => r), ...(all.length > 2 ? { '@odata.nextLink': link } : { '@odata.deltaLink': link }) });
      };
      put('r', 'root', { root: {}, folder: { childCount: 2 } });
      put('a', 'Budget.xlsx', { file: {} });
      put('b', 'Notes.docx', { file: {} });
      const engine = engineOver(fetchImpl);
      await engine.register('stub');
      await engine.runOnce('stub');
      expect(calls).toEqual(['/v1.0/me/drive/root/delta', '/v1.0/me/drive/root/delta?token=2']);
      expect(await stored('stub')).toEqual(['Budget.xlsx', 'Notes.docx', 'root']);

      put('a', 'Budget 2026.xlsx', { file: {} });
      put('b', 'Notes.docx', { deleted: { state: 'deleted' } });
      calls.length = 0;
      const inc = await engine.runOnce('stub');
      expect(calls).toEqual(['/v1.0/me/drive/root/delta?token=3']);
      expect(inc.entities['drive_items']).toMatchObject({ deleted: 1 });
      expect(await stored('stub')).toEqual(['Budget 2026.xlsx', 'root']);

      expired.add('5');
      items.delete('b');
      put('c', 'Plans', { folder: { childCount: 0 } });
      calls.length = 0;
      const again = await engine.runOnce('stub');
      expect(calls).toEqual(['/v1.0/me/drive/root/delta?token=5', '/v1.0/me/drive/root/delta', '/v1.0/me/drive/root/delta?token=4']);
      expect(again.entities['drive_items']).toMatchObject({ deleted: 0 });
      expect(await stored('stub')).toEqual(['Budget 2026.xlsx', 'Plans', 'root']);
      await engine.stop();
    });
  });
});
