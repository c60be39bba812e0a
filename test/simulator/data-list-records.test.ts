/**
 * One record held as the one item of a `data` list, in answers and bodies, on a small description
 * of our own: a get answered `{data: [record], info}`, writes sent as `{data: [record]}` and
 * answered with their outcome only (`{data: [{code, details: {id}}]}`, the sidecar's
 * `created_answer` and `updated_answer`), whose fields land on the record.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

const lead = {
  type: 'object',
  properties: { id: { type: 'string' }, Last_Name: { type: 'string' }, Email: { type: 'string' }, Modified_Time: { type: 'string' } },
};
const leads = {
  type: 'object',
  properties: { data: { type: 'array', items: lead }, info: { type: 'object', properties: { more_records: { type: 'boolean' } } } },
};
const body = {
  type: 'object',
  properties: { data: { type: 'array', items: { type: 'object', properties: { Last_Name: { type: 'string' }, Email: { type: 'string' } } } } },
};
const outcome = {
  type: 'object',
  properties: {
    data: {
      type: 'array',
      items: { type: 'object', properties: { code: { type: 'string' }, details: { type: 'object' }, message: { type: 'string' }, status: { type: 'string' } } },
    },
  },
};
const json = (schema: unknown) => ({ 'application/json': { schema } });
const doc = {
  openapi: '3.0.3',
  info: { title: 'Leads', version: '1' },
  paths: {
    '/Leads': {
      get: { responses: { '200': { description: 'ok', content: json(leads) } } },
      post: { requestBody: { content: json(body) }, responses: { '201': { description: 'ok', content: json(outcome) } } },
    },
    '/Leads/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      get: { responses: { '200': { description: 'ok', content: json(leads) } } },
      put: { requestBody: { content: json(body) }, responses: { '200': { description: 'ok', content: json(outcome) } } },
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
  Leads:
    records: 1
    id_like: "5843104000000425001"
    seed: [{ Last_Name: Doe, Email: john@zylker.example }]
    timestamps: { updated: Modified_Time }
    created_answer: { data: [{ code: SUCCESS, details: { id: "{{id}}" }, message: record added, status: success }] }
    updated_answer: { data: [{ code: SUCCESS, details: { id: "{{id}}", Modified_Time: "{{Modified_Time}}" }, message: record updated, status: success }] }
`),
  });
});
afterAll(() => sim.close());

const call = async (method: string, path: string, payload?: unknown): Promise<{ status: number; json: any }> => {
  const res = await fetch(`${sim.url}${path}`, {
    method,
    ...(payload === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) }),
  });
  return { status: res.status, json: await res.json() };
};

describe('a record as the one item of a data list', () => {
  it('answers a get with {data: [record]}', async () => {
    const id = [...sim.resources.get('Leads')!.records.keys()][0]!;
    expect(id).toMatch(/^\d{19}$/);
    const got = await call('GET', `/Leads/${id}`);
    expect(got.json.data).toEqual([expect.objectContaining({ id, Last_Name: 'Doe' })]);
  });

  it('creates and updates from {data: [fields]}, answering the outcome with the id', async () => {
    const created = await call('POST', '/Leads', { data: [{ Last_Name: 'Burns', Email: 'kim@zylker.example' }] });
    expect(created.status).toBe(201);
    const id = created.json.data[0].details.id as string;
    expect(created.json.data[0]).toMatchObject({ code: 'SUCCESS', status: 'success' });
    expect((await call('GET', `/Leads/${id}`)).json.data[0]).toMatchObject({ id, Last_Name: 'Burns', Email: 'kim@zylker.example' });
    const updated = await call('PUT', `/Leads/${id}`, { data: [{ Email: 'kim.burns@zylker.example' }] });
    expect(updated.json.data[0]).toMatchObject({ code: 'SUCCESS', details: { id, Modified_Time: expect.any(String) } });
    expect((await call('GET', `/Leads/${id}`)).json.data[0]).toMatchObject({ Last_Name: 'Burns', Email: 'kim.burns@zylker.example' });
  });
});
