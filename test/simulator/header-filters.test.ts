/**
 * Lists filtered by a request header and empty lists answered without a body, on a small
 * description of our own: `filters` keyed `header.<name>` (records modified since the
 * `If-Modified-Since` time), and `operations.<op>.empty` (204 for no records, 304 when nothing
 * changed since the time the header gave).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

const lead = { type: 'object', required: ['id'], properties: { id: { type: 'string' }, Last_Name: { type: 'string' }, Modified_Time: { type: 'string' } } };
const leads = {
  type: 'object',
  properties: { data: { type: 'array', items: lead }, info: { type: 'object', properties: { more_records: { type: 'boolean' } } } },
};
const listed = {
  parameters: [{ name: 'If-Modified-Since', in: 'header', schema: { type: 'string' } }],
  responses: {
    '200': { description: 'ok', content: { 'application/json': { schema: leads } } },
    '204': { description: 'no records' },
    '304': { description: 'nothing modified' },
  },
};
const doc = {
  openapi: '3.0.3',
  info: { title: 'Leads', version: '1' },
  paths: {
    '/Leads': { get: listed },
    '/Leads/{id}': {
      get: {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: leads } } } },
      },
    },
    '/Contacts': { get: listed },
    '/Contacts/{id}': {
      get: {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: leads } } } },
      },
    },
  },
};

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({
    description: new Description(doc as never),
    rateLimit: false,
    sidecar: parseSidecar(`
filters:
  header.if-modified-since: { field: Modified_Time, match: since }
operations:
  "GET /Leads": { empty: { status: 204, when_filtered: { header.if-modified-since: 304 } } }
resources:
  Leads:
    seed:
      - { Last_Name: Ann, Modified_Time: "2026-01-01T00:00:00+00:00" }
      - { Last_Name: Bo, Modified_Time: "2026-02-01T00:00:00+00:00" }
    records: 2
  Contacts:
    seed: [{ Last_Name: Cy, Modified_Time: "2026-01-01T00:00:00+00:00" }]
    records: 1
`),
  });
});
afterAll(() => sim.close());

const list = (path: string, since?: string) => fetch(`${sim.url}${path}`, { headers: since === undefined ? {} : { 'if-modified-since': since } });
const names = async (res: Response): Promise<string[]> => ((await res.json()) as { data: { Last_Name: string }[] }).data.map((r) => r.Last_Name);

describe('a list filtered by a request header', () => {
  it('keeps the records the header selects (modified at or after its time)', async () => {
    expect(await names(await list('/Leads'))).toEqual(['Ann', 'Bo']);
    expect(await names(await list('/Leads', '2026-01-15T00:00:00+01:00'))).toEqual(['Bo']);
  });

  it('answers 304 without a body when nothing changed since, 204 when there are no records at all', async () => {
    const unchanged = await list('/Leads', '2026-03-01T00:00:00Z');
    expect(unchanged.status).toBe(304);
    expect(await unchanged.text()).toBe('');
    for (const id of [...sim.resources.get('Leads')!.records.keys()]) sim.removeRecord('Leads', id);
    const none = await list('/Leads');
    expect(none.status).toBe(204);
    expect(await none.text()).toBe('');
  });

  it('an operation without `empty` answers an empty page as usual', async () => {
    const res = await list('/Contacts', '2100-01-01T00:00:00Z');
    expect(res.status).toBe(200);
    expect(await names(res)).toEqual([]);
  });
});
