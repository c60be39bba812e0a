/**
 * A tree of records in one resource, on a small description of our own (a drive's folders and
 * files): a folder's children listed by a `pages` rule whose `path_fields` compares the path's
 * folder with each record's parent field, the top folder named by an alias (`root`) there and when
 * an item is created under it; a search named in the path (`search(q='{q}')`, `match: contains`);
 * and a delta feed whose last page carries `{{end_cursor}}`, which later lists the records stored since.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

const item = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string' }, name: { type: 'string' }, parent: { type: 'object', properties: { id: { type: 'string' } } } },
};
const ok = (schema: unknown) => ({ '200': { description: 'ok', content: { 'application/json': { schema } } } });
const page = { type: 'object', properties: { value: { type: 'array', items: item }, next: { type: 'string' }, delta: { type: 'string' } } };
const param = (name: string, where = 'path') => ({ name, in: where, required: where === 'path', schema: { type: 'string' } });
const doc = {
  openapi: '3.0.3',
  info: { title: 'Drive', version: '1' },
  paths: {
    '/items/{item-id}': { get: { parameters: [param('item-id')], responses: ok(item) } },
    '/items/{parentId}/children': {
      get: { parameters: [param('parentId'), param('top', 'query'), param('skip', 'query')], responses: ok(page) },
      post: {
        parameters: [param('parentId')],
        requestBody: { content: { 'application/json': { schema: { type: 'object', properties: { name: { type: 'string' } } } } } },
        responses: ok(item),
      },
    },
    "/search(q='{q}')": { get: { parameters: [param('q')], responses: ok(page) } },
    '/delta': { get: { parameters: [param('token', 'query')], responses: ok(page) } },
  },
};

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({
    description: new Description(doc as never),
    rateLimit: false,
    sidecar: parseSidecar(`
pages:
  "GET /items/{parentId}/children":
    resource: items
    path_fields: { parentId: parent.id }
    per_page: top
    cursor: skip
    default: 10
    response: { value: "{{records}}", "next?": "{{origin}}{{path}}?skip={{next_cursor}}" }
  "GET /search(q='{q}')":
    resource: items
    path_fields: { q: { field: name, match: contains } }
    response: { value: "{{records}}" }
  "GET /delta":
    resource: items
    cursor: token
    cursor_form: "{{last.id}}"
    default: 2
    response: { value: "{{records}}", "next?": "{{origin}}{{path}}?token={{next_cursor}}", "delta?": "{{origin}}{{path}}?token={{end_cursor}}" }
resources:
  items:
    id_param: item-id
    get: GET /items/{item-id}
    create: POST /items/{parentId}/children
    aliases: { root: 1 }
    template: { id: "{{id}}", name: "Item {{n}}", parent: { id: "{{parentId}}" } }
    seed:
      - { id: r0, name: root }
      - { id: f1, name: Finance, parent: { id: r0 } }
      - { id: d2, name: Budget.xlsx, parent: { id: f1 } }
      - { id: d3, name: Roadmap.docx, parent: { id: r0 } }
`),
  });
});
afterAll(() => sim.close());

const get = async (path: string): Promise<{ value: { id: string; name: string }[]; next?: string; delta?: string }> =>
  (await (await fetch(`${sim.url}${path}`)).json()) as never;
const names = (b: { value: { name: string }[] }): string[] => b.value.map((r) => r.name);

describe('a tree of records in one resource', () => {
  it("lists a folder's children by the parent field, the top folder by its alias too", async () => {
    expect(names(await get('/items/f1/children'))).toEqual(['Budget.xlsx']);
    expect(names(await get('/items/root/children'))).toEqual(['Finance', 'Roadmap.docx']);
    expect(names(await get('/items/r0/children'))).toEqual(['Finance', 'Roadmap.docx']);
    expect((await (await fetch(`${sim.url}/items/root`)).json()) as unknown).toMatchObject({ id: 'r0', name: 'root' });
  });

  it('searches by the text in the path, ignoring case', async () => {
    expect(names(await get("/search(q='BUDGET')"))).toEqual(['Budget.xlsx']);
    expect(names(await get("/search(q='o')"))).toEqual(['root', 'Roadmap.docx']);
  });

  it('pages the delta feed, ends it with a link, and that link lists what is stored since', async () => {
    const first = await get('/delta');
    expect([names(first), first.delta]).toEqual([['root', 'Finance'], undefined]);
    const last = await get(new URL(first.next!).pathname + new URL(first.next!).search);
    expect([names(last), last.next]).toEqual([['Budget.xlsx', 'Roadmap.docx'], undefined]);
    expect(last.delta).toBe(`${sim.url}/delta?token=d3`);
    const quiet = await get('/delta?token=d3');
    expect([names(quiet), quiet.delta]).toEqual([[], `${sim.url}/delta?token=d3`]);

    // A folder made under the top folder (by its alias) holds the top folder's id, and the link lists it.
    const made = (await (
      await fetch(`${sim.url}/items/root/children`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"Plans"}' })
    ).json()) as { id: string; parent: { id: string } };
    expect(made.parent).toEqual({ id: 'r0' });
    expect(names(await get('/items/root/children'))).toEqual(['Finance', 'Roadmap.docx', 'Plans']);
    const since = await get('/delta?token=d3');
    expect([names(since), since.delta]).toEqual([['Plans'], `${sim.url}/delta?token=${made.id}`]);
  });
});
