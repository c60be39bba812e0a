/**
 * RPC routes that take a JSON argument (Dropbox's POST /files/list_folder {path, limit}): a declared
 * list reads its page size and cursor from the body; a listing continued on another route keeps the
 * page size its cursor was issued with; with `cursor_at_end` the last page's cursor names the end,
 * so a request from it later answers only what was added since; a resource named by one of several
 * params (`id_param: [path, from_path]`) answers the not_found of the one given; and a declared
 * `record` property wraps only the answers that have it (a get answering the record itself).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Description, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

const entry = { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, path_display: { type: 'string' } } };
const page = { type: 'object', properties: { entries: { type: 'array', items: entry }, cursor: { type: 'string' }, has_more: { type: 'boolean' } } };
const wrapped = { type: 'object', properties: { metadata: entry } };
const route = (body: unknown, answer: unknown) => ({
  post: {
    requestBody: { required: true, content: { 'application/json': { schema: body } } },
    responses: { '200': { description: 'ok', content: { 'application/json': { schema: answer } } } },
  },
});
const obj = (props: Record<string, string>, required: string[]) => ({
  type: 'object',
  required,
  properties: Object.fromEntries(Object.entries(props).map(([k, t]) => [k, { type: t }])),
});
const doc = {
  openapi: '3.1.0',
  info: { title: 'Files', version: '2' },
  paths: {
    '/files/list': route(obj({ path: 'string', limit: 'integer' }, ['path']), page),
    '/files/list/continue': route(obj({ cursor: 'string' }, ['cursor']), page),
    '/files/get': route(obj({ path: 'string' }, ['path']), entry),
    '/files/create': route(obj({ path: 'string' }, ['path']), wrapped),
    '/files/move': route(obj({ from_path: 'string', to_path: 'string' }, ['from_path', 'to_path']), wrapped),
  },
};

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({
    description: new Description(doc as never),
    sidecar: parseSidecar(`
error: { body: { summary: "{{code}}/{{message}}" }, status: { not_found: 409 } }
not_found:
  default: { code: path, message: not_found }
  from_path: { code: from_lookup, message: not_found }
pagination: { cursor_param: cursor, limit_param: limit, default_limit: 100, next_cursor: cursor, has_more: has_more, cursor_at_end: true }
resources:
  files:
    id_param: [path, from_path]
    id_like: "id:a4ayc_80_OEAAAAAAAAAXw"
    record: metadata
    writes: { to_path: path_display }
    list: [POST /files/list, POST /files/list/continue]
    get: POST /files/get
    create: POST /files/create
    update: POST /files/move
    records: 5
    template: { id: "{{id}}", name: "File {{n}}", path_display: "/File {{n}}" }
`),
    seed: 1,
  });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const post = async (path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
  const res = await fetch(`${sim.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
};
const ids = (j: Record<string, unknown>): unknown[] => (j['entries'] as Record<string, unknown>[]).map((e) => e['id']);

describe('RPC routes with a JSON argument', () => {
  it('pages by the body’s limit, continues at the same size with the cursor alone, and keeps a cursor at the end for what is added later', async () => {
    const first = await post('/files/list', { path: '', limit: 2 });
    expect(ids(first.json)).toHaveLength(2);
    expect(first.json['has_more']).toBe(true);
    for (const id of ids(first.json)) expect(id).toMatch(/^id:[A-Za-z0-9_-]{22}$/);
    const second = await post('/files/list/continue', { cursor: first.json['cursor'] });
    expect(ids(second.json)).toHaveLength(2);
    const third = await post('/files/list/continue', { cursor: second.json['cursor'] });
    expect(ids(third.json)).toHaveLength(1);
    expect(third.json['has_more']).toBe(false);
    expect(third.json['cursor']).toEqual(expect.any(String));
    const none = await post('/files/list/continue', { cursor: third.json['cursor'] });
    expect(ids(none.json)).toEqual([]);
    const made = await post('/files/create', { path: '/New' });
    expect(made.status).toBe(200);
    const since = await post('/files/list/continue', { cursor: none.json['cursor'] });
    expect(ids(since.json)).toEqual([(made.json['metadata'] as Record<string, unknown>)['id']]);
  });

  it('names the record by whichever id param the route takes, wraps only the answers declaring the record property', async () => {
    const id = ids((await post('/files/list', { path: '' })).json)[0];
    const got = await post('/files/get', { path: id });
    expect(got.json).toMatchObject({ id, name: 'File 1' });
    expect(got.json['metadata']).toBeUndefined();
    const moved = await post('/files/move', { from_path: id, to_path: '/Archive/File 1' });
    expect(moved.json['metadata']).toMatchObject({ id, path_display: '/Archive/File 1' });
    const missingGet = await post('/files/get', { path: 'id:AAAAAAAAAAAAAAAAAAAAAA' });
    expect([missingGet.status, missingGet.json['summary']]).toEqual([409, 'path/not_found']);
    const missingMove = await post('/files/move', { from_path: 'id:AAAAAAAAAAAAAAAAAAAAAA', to_path: '/x' });
    expect([missingMove.status, missingMove.json['summary']]).toEqual([409, 'from_lookup/not_found']);
  });
});
