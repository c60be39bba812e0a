/**
 * A description whose every path names the account (/v2/accounts/{accountId}/...), which a
 * connector's base URL holds: the sidecar's base_path serves the paths below it; a seed that names
 * the id keeps it (the credentials' account); nested resources are seeded under their parents in
 * depth order; a declared record held as the one item of an array ({signers: [{...}]}) is read and
 * answered so; and a list answer's other arrays of the same kind of record are empty, not samples.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

const person = {
  type: 'object',
  properties: { personId: { type: 'string' }, name: { type: 'string' }, email: { type: 'string' }, status: { type: 'string' } },
};
const people = {
  type: 'object',
  properties: { signers: { type: 'array', items: person }, copies: { type: 'array', items: person }, count: { type: 'string' } },
};
const json = (schema: unknown) => ({ description: 'ok', content: { 'application/json': { schema } } });
const A = '/v2/accounts/{accountId}';
const acct = { name: 'accountId', in: 'path', required: true, schema: { type: 'string' } };
const doc = {
  openapi: '3.0.3',
  info: { title: 'Accounts', version: '1' },
  servers: [{ url: 'https://api.example.com/rest' }],
  paths: {
    [A]: {
      get: { parameters: [acct], responses: { '200': json({ type: 'object', properties: { accountGuid: { type: 'string' }, name: { type: 'string' } } }) } },
    },
    [`${A}/docs`]: {
      get: {
        parameters: [acct],
        responses: {
          '200': json({
            type: 'object',
            properties: { docs: { type: 'array', items: { type: 'object', properties: { docId: { type: 'string' }, title: { type: 'string' } } } } },
          }),
        },
      },
    },
    [`${A}/docs/{docId}`]: {
      get: {
        parameters: [acct, { name: 'docId', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': json({ type: 'object', properties: { docId: { type: 'string' }, title: { type: 'string' } } }) },
      },
    },
    [`${A}/docs/{docId}/people`]: {
      parameters: [acct, { name: 'docId', in: 'path', required: true, schema: { type: 'string' } }],
      get: { responses: { '200': json(people) } },
      post: { requestBody: { content: { 'application/json': { schema: people } } }, responses: { '201': json(people) } },
    },
  },
};
const ACCOUNT = '7d3c5e0a-4b1f-4c2e-9a8d-2f6b1e0c9a41';

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({
    description: new Description(doc as never),
    sidecar: parseSidecar(`
base_path: /v2/accounts/${ACCOUNT}
resources:
  accounts:
    id_field: accountGuid
    records: 1
    template: { accountGuid: "{{id}}", name: Northwind }
    seed: [{ accountGuid: ${ACCOUNT} }]
  docs:
    records: 2
    template: { docId: "{{id}}", title: "Doc {{n}}" }
  signers:
    id_field: personId
    record: signers
    records: 2
    parent: { param: docId, resource: docs }
    list: GET ${A}/docs/{docId}/people
    create: POST ${A}/docs/{docId}/people
    template: { personId: "{{id}}", name: "Signer {{n}}", status: sent }
`),
  });
});
afterAll(() => sim.close());

const get = async (path: string, init?: RequestInit): Promise<{ status: number; body: Record<string, unknown> }> => {
  const res = await fetch(sim.url + path, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

describe('base_path: the account every path names', () => {
  it('serves / as the account and /docs as its docs, under the server path too; the seeded account keeps the id its seed names', async () => {
    expect((await get('/')).body).toEqual({ accountGuid: ACCOUNT, name: 'Northwind' });
    const docs = (await get('/rest/docs')).body['docs'] as { docId: string }[];
    expect(docs).toHaveLength(2);
    expect((await get(`/v2/accounts/${ACCOUNT}/docs/${docs[0]!.docId}`)).body).toMatchObject({ title: 'Doc 1' });
    expect((await get('/v2/accounts/someone-else/docs')).status).toBe(404);
  });

  it("seeds an envelope's signers under the docs (parents first), lists them without sampled copies, and creates one from {signers: [{...}]}", async () => {
    const docs = (await get('/docs')).body['docs'] as { docId: string }[];
    const listed = (await get(`/docs/${docs[0]!.docId}/people`)).body;
    expect(listed['signers']).toEqual([{ personId: expect.any(String), name: 'Signer 1', status: 'sent' }]);
    expect(listed['copies']).toEqual([]);
    const made = await get(`/docs/${docs[0]!.docId}/people`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ signers: [{ name: 'Mia Chen', email: 'mia@example.com' }] }),
    });
    expect(made.status).toBe(201);
    expect(made.body['signers']).toEqual([expect.objectContaining({ name: 'Mia Chen', email: 'mia@example.com', personId: expect.any(String) })]);
    expect(((await get(`/docs/${docs[0]!.docId}/people`)).body['signers'] as unknown[]).length).toBe(2);
  });
});
