/**
 * SharePoint's quirks: connectors/sharepoint/connector.yaml (with ../_shared/microsoft.yaml) run by
 * the interpreter against the generic simulator serving Graph's description (trimmed by trim.mjs).
 * Here: three-part site ids in paths, a site by host name and path, site search, list items always
 * with their fields and updated through /fields (the record then {id, fields}), a new list with its
 * template and columns, a site's document library, and list items synced per list through Graph's
 * listItem delta: each list's @odata.deltaLink followed by the next run (against the simulator), and
 * for what the simulator keeps no record of (deletions, an expired link), a stand-in fetch: items
 * with the deleted facet leave search, a 410 relists that list alone.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { RecordStore, searchMigrations } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/sharepoint';
const manifest = getConnector('sharepoint');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as Rec;
const MARKETING = 'northwind.sharepoint.com,7d5a1f2c-4b8e-4c3a-9f61-2e0d8b7c6a51,0b9e2d47-6c1a-4f83-b5d2-8a7e3c1f4d96';

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 5, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const sharepoint = (fetchImpl?: FetchLike) =>
  new ConnectorRuntime(manifest, CREDENTIALS, {
    ...(fetchImpl ? { fetch: fetchImpl } : { baseUrl: sim.url }),
    limiter: null,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
  });
const data = (r: unknown): Rec[] => (r as ListEnvelope).data as Rec[];
const record = (r: unknown): Rec => (r as RecordEnvelope).data as Rec;

describe('sharepoint', () => {
  it('finds sites by keyword, by three-part id and by host name and path', async () => {
    const rt = sharepoint();
    const found = data(await rt.execute('sites', 'list', { search: 'marketing' }));
    expect(sim.requests.at(-1)!.query.get('search')).toBe('marketing');
    expect(found.map((s) => s['id'])).toContain(MARKETING);
    const site = ((await rt.execute('sites', 'get', { site_id: MARKETING })) as RecordEnvelope).data;
    expect(sim.requests.at(-1)!.path).toBe(`/sites/${MARKETING}`);
    expect(site).toMatchObject({ name: 'marketing', displayName: 'Marketing', siteCollection: { hostname: 'northwind.sharepoint.com' } });
    const byPath = ((await rt.execute('site_by_path', 'get', { hostname: 'northwind.sharepoint.com', site_name: 'marketing' })) as RecordEnvelope).data;
    expect(sim.requests.at(-1)!.path).toBe('/sites/northwind.sharepoint.com:/sites/marketing');
    expect(byPath['id']).toBe(MARKETING);
    await expect(rt.execute('site_by_path', 'get', { hostname: 'northwind.sharepoint.com', site_name: 'nowhere' })).rejects.toMatchObject({
      code: 'upstream_not_found',
    });
    await expect(rt.execute('site_by_path', 'get', { hostname: 'evil.example/x', site_name: 'marketing' })).rejects.toMatchObject({ code: 'invalid_params' });
  });

  it('creates a list with its template and columns; its items carry their fields, created with fields and updated through /fields', async () => {
    const rt = sharepoint();
    const list = (
      (await rt.execute('lists', 'create', {
        site_id: MARKETING,
        display_name: 'Books',
        columns: [
          { name: 'Author', text: {} },
          { name: 'PageCount', number: {} },
        ],
      })) as RecordEnvelope
    ).data;
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({
      displayName: 'Books',
      columns: [
        { name: 'Author', text: {} },
        { name: 'PageCount', number: {} },
      ],
      list: { template: 'genericList' },
    });
    expect(list).toMatchObject({ displayName: 'Books', parentReference: { siteId: MARKETING } });
    const listId = String(list['id']);
    const made = record(
      await rt.execute('list_items', 'create', { site_id: MARKETING, list_id: listId, fields: { Title: 'Dune', Author: 'Herbert', PageCount: 412 } }),
    );
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ fields: { Title: 'Dune', Author: 'Herbert', PageCount: 412 } });
    expect(made['fields']).toEqual({ Title: 'Dune', Author: 'Herbert', PageCount: 412 });
    const updated = record(await rt.execute('list_items', 'update', { site_id: MARKETING, list_id: listId, item_id: made['id'], fields: { PageCount: 896 } }));
    const patch = sim.requests.at(-1)!;
    expect([patch.method, patch.path, JSON.parse(patch.rawBody)]).toEqual([
      'PATCH',
      `/sites/${MARKETING}/lists/${listId}/items/${String(made['id'])}/fields`,
      { PageCount: 896 },
    ]);
    expect(updated).toEqual({ id: made['id'], fields: { Title: 'Dune', Author: 'Herbert', PageCount: 896 } });
    const listed = data(await rt.execute('list_items', 'list', { site_id: MARKETING, list_id: listId }));
    expect(sim.requests.at(-1)!.query.get('$expand')).toBe('fields');
    expect(listed.map((i) => i['fields'])).toEqual([{ Title: 'Dune', Author: 'Herbert', PageCount: 896 }]);
    await rt.execute('list_items', 'get', { site_id: MARKETING, list_id: listId, item_id: made['id'] });
    expect(sim.requests.at(-1)!.query.get('$expand')).toBe('fields');
  });

  it("lists the top folder of a site's document library and gets an item of it", async () => {
    const rt = sharepoint();
    const top = data(await rt.execute('site_drive_items', 'list', { site_id: MARKETING }));
    expect(sim.requests.at(-1)!.path).toBe(`/sites/${MARKETING}/drive/root/children`);
    expect(top.map((i) => i['name'])).toEqual(['Brand guidelines.pdf', 'Campaign assets', 'Q1 campaign brief.docx']);
    const one = ((await rt.execute('site_drive_items', 'get', { site_id: MARKETING, item_id: top[0]!['id'] })) as RecordEnvelope).data;
    expect(one).toMatchObject({ name: 'Brand guidelines.pdf', parentReference: { siteId: MARKETING, driveType: 'documentLibrary' } });
  });

  describe('list items synced per list through the listItem delta', () => {
    let tdb: TestDatabase;
    let store: RecordStore;
    beforeAll(async () => {
      tdb = await openTestDatabase('sqlite', [searchMigrations, syncMigrations]);
      store = new RecordStore(tdb.database, { cursorSecret: 'test-secret' });
    });
    afterAll(() => tdb.close());
    const engineOver = (fetchImpl?: FetchLike) =>
      new SyncEngine({ database: tdb.database, sink: store, runtimeFor: async () => ({ manifest, runtime: sharepoint(fetchImpl) }), fullRefreshEvery: 100 });
    const titles = async (connector: string): Promise<string[]> =>
      (await store.search(connector, 'list_items', { primaryKey: 'id', fields: { id: 'string', fields: 'object' } }, { query: {}, fields: ['fields'] })).data
        .map((d) => String((d['fields'] as Rec)['Title']))
        .sort();

    it('reads every list, then follows each list’s delta link: only what was stored in it since', async () => {
      const engine = engineOver();
      await engine.register('sim');
      await engine.runOnce('sim');
      const first = await titles('sim');
      expect(first).toEqual(expect.arrayContaining(['Intranet refresh', 'Spring launch']));
      const lists = sim.requests.filter((r) => r.path.endsWith('/items/delta'));
      expect(lists.every((r) => r.query.get('$expand') === 'fields' && r.query.get('$deltatoken') === null)).toBe(true);
      const list = lists[0]!.path.split('/')[4]!;
      const site = lists[0]!.path.split('/')[2]!;
      await sharepoint().execute('list_items', 'create', { site_id: site, list_id: list, fields: { Title: 'Launch review' } });
      const before = sim.requests.length;
      const inc = await engine.runOnce('sim');
      expect(inc.full).toBe(false);
      const deltas = sim.requests.slice(before).filter((r) => r.path.endsWith('/items/delta'));
      expect(deltas.length).toBeGreaterThan(0);
      expect(deltas.filter((r) => r.query.get('$deltatoken') !== null).length).toBeGreaterThan(0);
      expect(inc.entities['list_items']).toMatchObject({ records: 1 });
      expect(await titles('sim')).toContain('Launch review');
      await engine.stop();
    });

    it('removes items with the deleted facet, and lists one list in full again when Graph answers 410 for its link', async () => {
      const items = new Map<string, Rec & { list: string; seq: number }>();
      let seq = 0;
      const expired = new Set<string>();
      const calls: string[] = [];
      const put = (list: string, id: string, title: string, extra: Rec = {}) =>
        items.set(`${list}/${id}`, { id, fields: { Title: title }, ...extra, list, seq: ++seq });
      const fetchImpl: FetchLike = async (input) => {
        const url = new URL(String(input));
        const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
        if (url.pathname === '/v1.0/sites') return json(200, { value: [{ id: 's1' }] });
        if (url.pathname === '/v1.0/sites/s1/lists') return json(200, { value: ['tasks', 'events'].map((id) => ({ id, parentReference: { siteId: 's1' } })) });
        const list = /^\/v1\.0\/sites\/s1\/lists\/([^/]+)\/items\/delta$/.exec(url.pathname)?.[1];
        if (list === undefined) return json(200, { value: [] });
        calls.push(`${list}${url.search}`);
        const token = url.searchParams.get('$deltatoken');
        if (token !== null && expired.has(`${list}:${token}`)) return json(410, { error: { code: 'resyncRequired', message: 'Resync required.' } });
        const all = [...items.values()].filter((i) => i.list === list && i.seq > Number(token ?? 0) && (token !== null || i['deleted'] === undefined));
        const link = `https://graph.microsoft.com/v1.0/sites/s1/lists/${list}/items/delta?$deltatoken=${String(seq)}`;
        return json(200, { value: all.map(({ seq: _, list: __, ...i }) => i), '@odata.deltaLink': link });
      };
      put('tasks', '1', 'Plan');
      put('tasks', '2', 'Build');
      put('events', '11', 'Launch');
      const engine = engineOver(fetchImpl);
      await engine.register('stub');
      await engine.runOnce('stub');
      expect(calls).toEqual(['tasks?%24expand=fields&%24top=200', 'events?%24expand=fields&%24top=200']);
      expect(await titles('stub')).toEqual(['Build', 'Launch', 'Plan']);

      put('tasks', '2', 'Build', { deleted: { state: 'deleted' } });
      put('events', '12', 'Retro');
      calls.length = 0;
      const inc = await engine.runOnce('stub');
      expect(calls).toEqual(['tasks?$deltatoken=3', 'events?$deltatoken=3']);
      expect(inc.entities['list_items']).toMatchObject({ deleted: 1 });
      expect(await titles('stub')).toEqual(['Launch', 'Plan', 'Retro']);

      expired.add('events:5');
      put('tasks', '3', 'Ship');
      calls.length = 0;
      await engine.runOnce('stub');
      expect(calls).toEqual(['tasks?$deltatoken=5', 'events?$deltatoken=5', 'events?%24expand=fields&%24top=200']);
      expect(await titles('stub')).toEqual(['Launch', 'Plan', 'Retro', 'Ship']);
      await engine.stop();
    });
  });
});
