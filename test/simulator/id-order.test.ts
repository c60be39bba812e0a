/**
 * Lists in id order, paged by ids: a bare array that may be null (OpenAPI 3.1's `type: [array,
 * "null"]`) is the list's records; `pagination.order: id_descending` sorts them by id, long ids as
 * text compared exactly; `before`/`after` named in the sidecar's filters compare ids instead of being
 * taken for a cursor; a created record's snowflake id is newer than every seeded one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

const snowflake = { type: 'string', pattern: '^(0|[1-9][0-9]*)$' };
const message = { type: 'object', properties: { id: snowflake, content: { type: 'string' } } };
const json = (schema: unknown) => ({ description: 'ok', content: { 'application/json': { schema } } });
const doc = {
  openapi: '3.1.0',
  info: { title: 'Ids', version: '1' },
  servers: [{ url: 'https://api.example.com' }],
  paths: {
    '/messages': {
      get: {
        parameters: ['before', 'after']
          .map((name) => ({ name, in: 'query', schema: snowflake }))
          .concat([{ name: 'limit', in: 'query', schema: { type: 'integer' } as never }]),
        responses: { '200': json({ type: ['array', 'null'], items: message }) },
      },
      post: { requestBody: { content: { 'application/json': { schema: message } } }, responses: { '200': json(message) } },
    },
    '/messages/{message_id}': {
      get: { parameters: [{ name: 'message_id', in: 'path', required: true, schema: snowflake }], responses: { '200': json(message) } },
    },
  },
};

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({
    description: new Description(doc as never),
    sidecar: parseSidecar(`
pagination: { limit_param: limit, default_limit: 50, order: id_descending }
filters:
  after: { field: id, match: after }
  before: { field: id, match: until }
resources:
  messages:
    records: 6
    id_like: "1163421849870925824"
    template: { id: "{{id}}", content: "Message {{n}}" }
`),
    seed: 5,
  });
});
afterAll(async () => sim.close());

const get = async (path: string): Promise<{ id: string; content: string }[]> => (await fetch(`${sim.url}${path}`)).json() as never;
const desc = (ids: string[]): string[] => [...ids].sort((a, b) => (a.length !== b.length ? b.length - a.length : a < b ? 1 : a > b ? -1 : 0));

describe('lists in id order', () => {
  it('answers the records newest id first, and pages back by before and forward by after', async () => {
    const all = (await get('/messages')).map((m) => m.id);
    expect(all).toHaveLength(6);
    expect(all).toEqual(desc(all));
    const older = await get(`/messages?before=${all[1]}&limit=2`);
    expect(older.map((m) => m.id)).toEqual(all.slice(2, 4));
    const newer = await get(`/messages?after=${all[3]}`);
    expect(newer.map((m) => m.id)).toEqual(all.slice(0, 3));
    // An id no record has pages all the same (it is a filter, not a cursor naming a record).
    expect(await get('/messages?after=1')).toHaveLength(6);
  });

  it('a created record is the newest', async () => {
    const made = (await (
      await fetch(`${sim.url}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'hello' }) })
    ).json()) as { id: string };
    expect((await get('/messages?limit=1')).map((m) => m.id)).toEqual([made.id]);
  });
});
