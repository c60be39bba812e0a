/**
 * Graph-style addressing on a small description of our own: a record got by path parameters that
 * name its fields rather than its id (`resources.<name>.get: {operation}` without `id_query`, with
 * `key`: a site by host name and path), an update of one object field of a record (PATCH
 * .../items/{id}/fields: the body merges into `fields`, which is the answer), and a parent's path
 * parameter with a dash read by a nested record's template (`{{site-id}}`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

const site = {
  type: 'object',
  properties: { id: { type: 'string' }, name: { type: 'string' }, host: { type: 'object', properties: { name: { type: 'string' } } } },
};
const item = {
  type: 'object',
  properties: { id: { type: 'string' }, parent: { type: 'object', properties: { siteId: { type: 'string' } } }, fields: { type: 'object', properties: {} } },
};
const ok = (schema: unknown) => ({ '200': { description: 'ok', content: { 'application/json': { schema } } } });
const param = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });
const body = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const doc = {
  openapi: '3.0.3',
  info: { title: 'Sites', version: '1' },
  paths: {
    '/sites/{site-id}': { get: { parameters: [param('site-id')], responses: ok(site) } },
    '/sites/{hostname}:/sites/{site-name}': { get: { parameters: [param('hostname'), param('site-name')], responses: ok(site) } },
    '/sites/{site-id}/items': {
      get: { parameters: [param('site-id')], responses: ok({ type: 'object', properties: { value: { type: 'array', items: item } } }) },
      post: { parameters: [param('site-id')], requestBody: body(item), responses: ok(item) },
    },
    '/sites/{site-id}/items/{item-id}': { get: { parameters: [param('site-id'), param('item-id')], responses: ok(item) } },
    '/sites/{site-id}/items/{item-id}/fields': {
      patch: { parameters: [param('site-id'), param('item-id')], requestBody: body({ type: 'object' }), responses: ok({ type: 'object' }) },
    },
  },
};

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({
    description: new Description(doc as never),
    rateLimit: false,
    sidecar: parseSidecar(`
resources:
  sites:
    get: { operation: "GET /sites/{hostname}:/sites/{site-name}" }
    key: { hostname: host.name, site-name: name }
    records: 2
    seed:
      - { id: "h.example,s1,w1", name: sales, host: { name: h.example } }
      - { id: "h.example,s2,w2", name: legal, host: { name: h.example } }
  items:
    records: 2
    template: { id: "{{id}}", parent: { siteId: "{{site-id}}" }, fields: { Title: "Item {{n}}" } }
`),
  });
});
afterAll(() => sim.close());

const call = async (method: string, path: string, json?: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
  const res = await fetch(`${sim.url}${path}`, {
    method,
    ...(json !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(json) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe('Graph-style addressing', () => {
  it('gets a record by the fields its path parameters name; another name is 404', async () => {
    expect((await call('GET', '/sites/h.example:/sites/legal')).body).toMatchObject({ id: 'h.example,s2,w2', name: 'legal' });
    expect((await call('GET', '/sites/other.example:/sites/legal')).status).toBe(404);
    expect((await call('GET', '/sites/h.example,s1,w1')).body).toMatchObject({ name: 'sales' });
  });

  it("fills a nested record's template with its parent's dashed path parameter, and updates its fields alone", async () => {
    const made = (await call('POST', '/sites/h.example,s1,w1/items', { fields: { Title: 'Plan' } })).body;
    expect(made).toMatchObject({ parent: { siteId: 'h.example,s1,w1' }, fields: { Title: 'Plan' } });
    const patched = await call('PATCH', `/sites/h.example,s1,w1/items/${String(made['id'])}/fields`, { Status: 'Done' });
    expect(patched.body).toEqual({ Title: 'Plan', Status: 'Done' });
    expect((await call('GET', `/sites/h.example,s1,w1/items/${String(made['id'])}`)).body).toMatchObject({
      id: made['id'],
      fields: { Title: 'Plan', Status: 'Done' },
    });
    const seeded = (await call('GET', '/sites/h.example,s2,w2/items')).body['value'] as Record<string, unknown>[];
    expect(seeded.map((i) => i['parent'])).toEqual([{ siteId: 'h.example,s2,w2' }]);
  });
});
