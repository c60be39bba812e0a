/**
 * Sidecar and description features for APIs that say little in their bodies, on a small
 * description of our own: errors answered without a body with the reason in a header
 * (`error.body: null`, `error.headers`), an API key as the basic user name whatever the password
 * (`auth.basic_user`), a create answered 201 with the new record's URL in `Location` and no body
 * (the success declares the header and no content), a list asked for with a JSON body filtered by
 * `filters` keyed `body.<path>`, and small numeric ids kept as text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

const person = { type: 'object', required: ['id'], properties: { id: { type: 'string' }, name: { type: 'string' }, changed: { type: 'string' } } };
const doc = {
  openapi: '3.0.3',
  info: { title: 'People', version: '1' },
  components: { securitySchemes: { basic: { type: 'http', scheme: 'basic' } } },
  security: [{ basic: [] }],
  paths: {
    '/people': {
      post: {
        requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { name: { type: 'string' } } } } } },
        responses: { '201': { description: 'created', headers: { Location: { schema: { type: 'string' } } } } },
      },
    },
    '/people/{id}': {
      get: {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: person } } }, '404': { description: 'none' } },
      },
    },
    '/reports': {
      post: {
        requestBody: {
          content: {
            'application/json': { schema: { type: 'object', properties: { filters: { type: 'object', properties: { changed: { type: 'string' } } } } } },
          },
        },
        responses: {
          '200': {
            description: 'ok',
            content: { 'application/json': { schema: { type: 'object', properties: { people: { type: 'array', items: person } } } } },
          },
        },
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
error:
  body: null
  headers: { X-Reason: "{{message}}" }
auth: { tokens: [key123], basic_user: true, message: Bad key }
not_found: { default: { code: not_found, message: No such person } }
filters:
  body.filters.changed: { field: changed, match: since }
resources:
  people:
    id_like: "112"
    lists: ["POST /reports"]
    seed:
      - { name: Ann, changed: "2026-01-01T00:00:00Z" }
      - { name: Bo, changed: "2026-02-01T00:00:00Z" }
      - { name: Cy, changed: "2026-03-01T00:00:00Z" }
`),
  });
});
afterAll(() => sim.close());

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const call = (method: string, path: string, body?: unknown, auth = basic('key123', 'x')) =>
  fetch(`${sim.url}${path}`, {
    method,
    headers: { authorization: auth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });

describe('writes and errors without bodies', () => {
  it('takes the basic user name as the key whatever the password; a refusal has no body and its reason in the header', async () => {
    const refused = await call('GET', '/people/999', undefined, basic('x', 'key123'));
    expect(refused.status).toBe(401);
    expect(refused.headers.get('x-reason')).toBe('Bad key');
    expect(await refused.text()).toBe('');
    const missing = await call('GET', '/people/999');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-reason')).toBe('No such person');
    expect(await missing.text()).toBe('');
  });

  it("filters a list asked for with a JSON body by the body's value at a filter's path", async () => {
    const all = (await (await call('POST', '/reports', {})).json()) as { people: { name: string }[] };
    expect(all.people.map((p) => p.name)).toEqual(['Ann', 'Bo', 'Cy']);
    const since = (await (await call('POST', '/reports', { filters: { changed: '2026-02-01T00:00:00Z' } })).json()) as { people: { name: string }[] };
    expect(since.people.map((p) => p.name)).toEqual(['Bo', 'Cy']);
  });
  it("answers a create 201 with the new record's URL in Location and no body; its id has the seeded ids' small shape", async () => {
    const created = await call('POST', '/people', { name: 'Di' });
    expect(created.status).toBe(201);
    expect(await created.text()).toBe('');
    const location = created.headers.get('location')!;
    expect(location).toMatch(/\/people\/\d{3}$/);
    const id = location.split('/').at(-1)!;
    const read = await call('GET', `/people/${id}`);
    expect(await read.json()).toMatchObject({ id, name: 'Di' });
  });
});
