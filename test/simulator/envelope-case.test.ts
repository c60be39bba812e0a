/**
 * An answer wrapped in the resource's singular in another case ({"Widget": {...}, "time"} for the
 * resource widget): the simulator unwraps the record from it, merges a flat create body into the
 * record and answers it wrapped again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const Widget = { type: 'object', properties: { Id: { type: 'string', example: '58' }, Name: { type: 'string' }, Size: { type: 'integer' } } };
const wrapped = { type: 'object', required: ['Widget'], properties: { Widget: { $ref: '#/components/schemas/Widget' }, time: { type: 'string' } } };
const DOC = {
  openapi: '3.0.3',
  info: { title: 'Widgets (test)', version: '1' },
  paths: {
    '/widget': {
      post: {
        requestBody: json({ type: 'object', properties: { Name: { type: 'string' }, Size: { type: 'integer' } } }),
        responses: { '200': { description: 'ok', ...json(wrapped) } },
      },
    },
    '/widget/{id}': {
      get: {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok', ...json(wrapped) } },
      },
    },
  },
  components: { schemas: { Widget } },
};

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: new Description(DOC), sidecar: parseSidecar('resources: { widget: { id_field: Id } }'), rateLimit: false });
});
afterAll(() => sim.close());

describe('an envelope named like the resource in another case', () => {
  it('creates from a flat body and answers {Widget: record}, read back the same way', async () => {
    const headers = { authorization: 'Bearer t', 'content-type': 'application/json' };
    const made = (await (await fetch(`${sim.url}/widget`, { method: 'POST', headers, body: JSON.stringify({ Name: 'Sprocket', Size: 3 }) })).json()) as Record<
      string,
      any
    >;
    expect(made['Widget']).toMatchObject({ Name: 'Sprocket', Size: 3, Id: expect.any(String) });
    const got = (await (await fetch(`${sim.url}/widget/${made['Widget'].Id}`, { headers })).json()) as Record<string, any>;
    expect(got['Widget']).toEqual(made['Widget']);
  });
});
