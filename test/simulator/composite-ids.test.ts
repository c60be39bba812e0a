/**
 * Records whose id is an object of ids (`{workspace_id, object_id, record_id}`), kept under a
 * parent the path names by an alias (`/objects/people/records`), listed by a POST query whose page
 * is in the body (`{limit, offset}`): the resource is keyed by the dotted `id.record_id` the item
 * path's `{record_id}` names, a created record gets a fresh id there (its object id from the
 * parent), and the query pages and stays under its parent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

const uuid = { type: 'string', format: 'uuid' };
const record = {
  type: 'object',
  required: ['id'],
  properties: {
    id: { type: 'object', required: ['workspace_id', 'object_id', 'record_id'], properties: { workspace_id: uuid, object_id: uuid, record_id: uuid } },
    values: { type: 'object', additionalProperties: { type: 'array' } },
  },
};
const object = {
  type: 'object',
  properties: { id: { type: 'object', properties: { workspace_id: uuid, object_id: uuid } }, api_slug: { type: 'string' } },
};
const json = (schema: unknown) => ({ description: 'ok', content: { 'application/json': { schema: { type: 'object', properties: { data: schema } } } } });
const param = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });
const values = { type: 'object', properties: { data: { type: 'object', properties: { values: { type: 'object' } } } } };
const doc = {
  openapi: '3.1.0',
  info: { title: 'Objects', version: '1' },
  servers: [{ url: 'https://api.example.com' }],
  paths: {
    '/v2/objects/{object}': { get: { parameters: [param('object')], responses: { '200': json(object) } } },
    '/v2/objects/{object}/records/query': {
      post: {
        parameters: [param('object')],
        requestBody: {
          content: {
            'application/json': {
              schema: { type: 'object', properties: { filter: { type: 'object' }, limit: { type: 'number' }, offset: { type: 'number' } } },
            },
          },
        },
        responses: { '200': json({ type: 'array', items: record }) },
      },
    },
    '/v2/objects/{object}/records': {
      post: { parameters: [param('object')], requestBody: { content: { 'application/json': { schema: values } } }, responses: { '200': json(record) } },
    },
    '/v2/objects/{object}/records/{record_id}': {
      get: { parameters: [param('object'), param('record_id')], responses: { '200': json(record) } },
      patch: {
        parameters: [param('object'), param('record_id')],
        requestBody: { content: { 'application/json': { schema: values } } },
        responses: { '200': json(record) },
      },
    },
  },
};

type Rec = { id: { object_id: string; record_id: string }; values: Record<string, unknown> };
let sim: OpenApiSimulator;
const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; data: unknown }> => {
  const res = await fetch(`${sim.url}${path}`, {
    method,
    headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, data: ((await res.json()) as { data: unknown }).data };
};

beforeAll(async () => {
  sim = await startOpenApiSimulator({
    description: new Description(doc as never),
    sidecar: parseSidecar(`
resources:
  objects:
    aliases: { people: 1, companies: 2 }
    template: { id: { workspace_id: 9d1a7c55-2e4b-4f1e-8d2a-61b0c6f3e0a1, object_id: "{{id}}" }, api_slug: "" }
    seed: [{ api_slug: people }, { api_slug: companies }]
  records:
    records: 6
    written_as_sent: [values]
    template: { id: { workspace_id: 9d1a7c55-2e4b-4f1e-8d2a-61b0c6f3e0a1, object_id: "{{object}}", record_id: "{{id}}" }, values: {} }
`),
  });
});
afterAll(() => sim.close());

describe('composite ids', () => {
  it('keys a resource by the part of its id object the item path names', () => {
    expect(sim.resources.get('records')?.idField).toBe('id.record_id');
    expect(sim.resources.get('objects')?.idField).toBe('id.object_id');
    const ids = [...(sim.resources.get('records')?.records.keys() ?? [])];
    expect(new Set(ids).size).toBe(6);
    expect(ids.every((id) => /^[0-9a-f-]{36}$/.test(id))).toBe(true);
  });

  it('pages a POST query by the limit and offset of its body, under the parent the path names by alias', async () => {
    const people = (await call('GET', '/v2/objects/people')).data as { id: { object_id: string } };
    const first = (await call('POST', '/v2/objects/people/records/query', { limit: 2 })).data as Rec[];
    const second = (await call('POST', '/v2/objects/people/records/query', { limit: 2, offset: 2 })).data as Rec[];
    const all = (await call('POST', '/v2/objects/people/records/query', {})).data as Rec[];
    expect(first).toHaveLength(2);
    expect(all).toHaveLength(3);
    expect([...first, ...second].map((r) => r.id.record_id)).toEqual(all.map((r) => r.id.record_id));
    expect(all.every((r) => r.id.object_id === people.id.object_id)).toBe(true);
  });

  it('creates a record with a new id in its id object, then gets and updates it by that id', async () => {
    const created = await call('POST', '/v2/objects/companies/records', { data: { values: { name: ['Northwind'] } } });
    expect(created.status).toBe(200);
    const rec = created.data as Rec;
    const companies = (await call('GET', '/v2/objects/companies')).data as { id: { object_id: string } };
    expect(rec.id.object_id).toBe(companies.id.object_id);
    expect(sim.resources.get('records')?.records.has(rec.id.record_id)).toBe(true);
    const updated = await call('PATCH', `/v2/objects/companies/records/${rec.id.record_id}`, { data: { values: { domains: ['northwind.example'] } } });
    expect((updated.data as Rec).id).toEqual(rec.id);
    const got = (await call('GET', `/v2/objects/companies/records/${rec.id.record_id}`)).data as Rec;
    expect(got.values).toEqual({ name: ['Northwind'], domains: ['northwind.example'] });
    expect((await call('POST', '/v2/objects/companies/records/query', {})).data as Rec[]).toContainEqual(got);
    expect((await call('GET', `/v2/objects/people/records/${rec.id.record_id.replace(/[0-9]/g, '0')}`)).status).toBe(404);
  });
});
