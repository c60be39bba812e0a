/**
 * Records nested in envelopes under one-key wrappers (FreshBooks' `{response: {result: {client:
 * {...}}}}`, lists as `{response: {result: {clients: [...], page, pages, per_page, total}}}`): the
 * simulator reads and answers them there, fills the page's numbers beside the list, and takes a
 * deepObject of filters (`search[email]=...&search[updated_min]=...`) as one filter per key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

const client = {
  type: 'object',
  properties: { id: { type: 'integer' }, email: { type: 'string' }, organization: { type: 'string' }, updated: { type: 'string' } },
};
const wrapped = (result: unknown) => ({ type: 'object', properties: { response: { type: 'object', properties: { result } } } });
const json = (schema: unknown) => ({ description: 'ok', content: { 'application/json': { schema } } });
const page = wrapped({
  type: 'object',
  properties: {
    clients: { type: 'array', items: client },
    page: { type: 'integer' },
    pages: { type: 'integer' },
    per_page: { type: 'integer' },
    total: { type: 'integer' },
  },
});
const one = wrapped({ type: 'object', properties: { client } });
const body = { content: { 'application/json': { schema: { type: 'object', properties: { client } } } } };
const doc = {
  openapi: '3.0.3',
  info: { title: 'Envelopes', version: '1' },
  servers: [{ url: 'https://api.example.com' }],
  paths: {
    '/clients': {
      get: {
        parameters: [
          { name: 'page', in: 'query', schema: { type: 'integer' } },
          { name: 'per_page', in: 'query', schema: { type: 'integer' } },
          {
            name: 'search',
            in: 'query',
            style: 'deepObject',
            explode: true,
            schema: { type: 'object', properties: { email: { type: 'string' }, updated_min: { type: 'string' } } },
          },
        ],
        responses: { '200': json(page) },
      },
      post: { requestBody: body, responses: { '200': json(one) } },
    },
    '/clients/{clientId}': {
      parameters: [{ name: 'clientId', in: 'path', required: true, schema: { type: 'integer' } }],
      get: { responses: { '200': json(one) } },
      put: { requestBody: body, responses: { '200': json(one) } },
    },
  },
};

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({
    description: new Description(doc as never),
    sidecar: parseSidecar(`
filters:
  search[updated_min]: { field: updated, match: since }
resources:
  clients:
    records: 5
    template: { id: "{{id}}", email: "c{{n}}@example.com", organization: "Org {{n}}", updated: "2026-01-0{{n}} 10:00:00" }
`),
    seed: 3,
  });
});
afterAll(async () => sim.close());

const call = async (method: string, path: string, payload?: unknown): Promise<{ status: number; json: any }> => {
  const res = await fetch(`${sim.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(payload !== undefined ? { body: JSON.stringify(payload) } : {}),
  });
  return { status: res.status, json: await res.json() };
};

describe('records in nested envelopes', () => {
  it('lists at response.result.clients, with the page, pages, per_page and total beside them', async () => {
    const { json } = await call('GET', '/clients?per_page=2&page=2');
    const result = json.response.result;
    expect(result.clients.map((c: any) => c.email)).toEqual(['c3@example.com', 'c4@example.com']);
    expect({ page: result.page, pages: result.pages, per_page: result.per_page, total: result.total }).toEqual({ page: 2, pages: 3, per_page: 2, total: 5 });
  });

  it('creates from {client: {...}}, answers the record at response.result.client, gets and updates it there', async () => {
    const created = await call('POST', '/clients', { client: { email: 'ada@example.com', organization: 'Analytical' } });
    const c = created.json.response.result.client;
    expect(c).toMatchObject({ email: 'ada@example.com', organization: 'Analytical' });
    const got = await call('GET', `/clients/${c.id}`);
    expect(got.json.response.result.client).toMatchObject({ id: c.id, email: 'ada@example.com' });
    const updated = await call('PUT', `/clients/${c.id}`, { client: { organization: 'Analytical Engines' } });
    expect(updated.json.response.result.client).toMatchObject({ id: c.id, organization: 'Analytical Engines', email: 'ada@example.com' });
  });

  it('filters by each key of a deepObject: search[email] by the field of its key, search[updated_min] by its sidecar rule', async () => {
    const byEmail = await call('GET', `/clients?${encodeURI('search[email]')}=c2@example.com`);
    expect(byEmail.json.response.result.clients.map((c: any) => c.email)).toEqual(['c2@example.com']);
    const since = await call('GET', `/clients?${encodeURI('search[updated_min]')}=2026-01-04`);
    // The client created above is the template's sixth: updated 2026-01-06.
    expect(since.json.response.result.clients.map((c: any) => c.email)).toEqual(['c4@example.com', 'c5@example.com', 'ada@example.com']);
  });
});
