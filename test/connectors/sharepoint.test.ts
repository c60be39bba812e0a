/**
 * SharePoint's quirks: connectors/sharepoint/connector.yaml (with ../_shared/microsoft.yaml) run by
 * the interpreter against the generic simulator serving Graph's description (trimmed by trim.mjs).
 * Here: three-part site ids in paths, a site by host name and path, site search, list items always
 * with their fields and updated through /fields (the record then {id, fields}), a new list with its
 * template and columns, and a site's document library.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

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

const sharepoint = () => new ConnectorRuntime(manifest, CREDENTIALS, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
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
});
