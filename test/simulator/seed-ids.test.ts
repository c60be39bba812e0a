/**
 * Seeded relations (`resources.<name>.fields: {ids_of}`) take the other resource's ids as its
 * records hold them: integer ids stay integers (an `owner_id: integer` field is never "17").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

type Rec = Record<string, unknown>;
const item = (ref: string) => ({ type: 'object', properties: { data: { $ref: ref } } });
const list = (ref: string) => ({ type: 'object', properties: { data: { type: 'array', items: { $ref: ref } } } });
const ok = (schema: unknown) => ({ 200: { description: 'OK', content: { 'application/json': { schema } } } });
const DOC = {
  openapi: '3.1.0',
  info: { title: 'Owners and pets (test)', version: '1' },
  servers: [{ url: 'https://pets.example.test' }],
  components: {
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    schemas: {
      Owner: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' } } },
      Pet: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' }, owner_id: { type: ['integer', 'null'] } } },
    },
  },
  security: [{ bearer: [] }],
  paths: {
    '/owners': { get: { operationId: 'listOwners', responses: ok(list('#/components/schemas/Owner')) } },
    '/owners/{id}': {
      get: {
        operationId: 'getOwner',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: ok(item('#/components/schemas/Owner')),
      },
    },
    '/pets': { get: { operationId: 'listPets', responses: ok(list('#/components/schemas/Pet')) } },
    '/pets/{id}': {
      get: {
        operationId: 'getPet',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: ok(item('#/components/schemas/Pet')),
      },
    },
  },
};
const SIDECAR = `
resources:
  owners: { records: 3 }
  pets:
    records: 6
    fields:
      owner_id: { ids_of: owners }
`;

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: new Description(structuredClone(DOC)), sidecar: parseSidecar(SIDECAR), seed: 3 });
});
afterAll(() => sim.close());

const get = async (path: string): Promise<Rec> => (await (await fetch(`${sim.url}${path}`, { headers: { authorization: 'Bearer t' } })).json()) as Rec;

describe('ids_of', () => {
  it("gives the other resource's integer ids as integers", async () => {
    const owners = ((await get('/owners')).data as Rec[]).map((o) => o.id);
    const pets = (await get('/pets')).data as Rec[];
    expect(owners.every((id) => typeof id === 'number')).toBe(true);
    expect(pets.length).toBe(6);
    for (const p of pets) {
      expect(typeof p.owner_id).toBe('number');
      expect(owners).toContain(p.owner_id);
    }
  });
});
