/**
 * Sidecar keys for shapes the generic simulator meets in vendor APIs: nested resources, writes that
 * create them, soft deletes and exports; GitHub-shaped APIs; searches paged by a page number in the
 * body; a create answered by a schema of its own. The rest is in openapi-simulator.test.ts and
 * openapi-simulator-vendor-sidecars.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { call, type Rec } from './openapi-simulator-helpers.ts';

describe('the sidecar: nested resources, writes that create them, soft deletes, exports', () => {
  // A desk in Zendesk's shapes, our own: {"box": {...}} envelopes, notes listed per box and made by
  // a box write's "note", cursor pages with meta.has_more and links.next, an export with end_of_stream.
  const page = (key: string, item: string) => ({
    type: 'object',
    properties: {
      [key]: { type: 'array', items: { $ref: `#/components/schemas/${item}` } },
      meta: { type: 'object', properties: { has_more: { type: 'boolean' }, after_cursor: { type: 'string', nullable: true } } },
      links: { type: 'object', properties: { next: { type: 'string', nullable: true } } },
    },
  });
  const json = (schema: unknown) => ({ description: 'ok', content: { 'application/json': { schema } } });
  const boxBody = {
    type: 'object',
    required: ['box'],
    properties: { box: { type: 'object', properties: { name: { type: 'string' }, note: { type: 'object', properties: { body: { type: 'string' } } } } } },
  };
  const boxOut = { type: 'object', properties: { box: { $ref: '#/components/schemas/Box' }, audit: { type: 'object', additionalProperties: true } } };
  const cursorParams = [
    { name: 'page[size]', in: 'query', schema: { type: 'integer', maximum: 100 } },
    { name: 'page[after]', in: 'query', schema: { type: 'string' } },
  ];
  const doc = {
    openapi: '3.0.3',
    info: { title: 'desk', version: '1' },
    paths: {
      '/boxes': {
        get: { parameters: cursorParams, responses: { 200: json(page('boxes', 'Box')) } },
        post: { requestBody: { content: { 'application/json': { schema: boxBody } } }, responses: { 201: json(boxOut) } },
      },
      '/boxes/{box_id}': {
        parameters: [{ name: 'box_id', in: 'path', required: true, schema: { type: 'integer' } }],
        get: { responses: { 200: json(boxOut) } },
        put: { requestBody: { content: { 'application/json': { schema: boxBody } } }, responses: { 200: json(boxOut) } },
        delete: { responses: { 204: { description: 'gone' } } },
      },
      '/boxes/{box_id}/notes': {
        parameters: [{ name: 'box_id', in: 'path', required: true, schema: { type: 'integer' } }],
        get: { parameters: cursorParams, responses: { 200: json(page('notes', 'Note')) } },
      },
      '/export/boxes': {
        get: {
          parameters: [
            { name: 'start_time', in: 'query', schema: { type: 'integer' } },
            { name: 'cursor', in: 'query', schema: { type: 'string' } },
            { name: 'per_page', in: 'query', schema: { type: 'integer' } },
          ],
          responses: {
            200: json({
              type: 'object',
              properties: {
                boxes: { type: 'array', items: { $ref: '#/components/schemas/Box' } },
                after_url: { type: 'string', nullable: true },
                after_cursor: { type: 'string', nullable: true },
                end_of_stream: { type: 'boolean' },
              },
            }),
          },
        },
      },
    },
    components: {
      schemas: {
        Box: {
          type: 'object',
          properties: { id: { type: 'integer' }, name: { type: 'string' }, status: { type: 'string' }, updated_at: { type: 'string', format: 'date-time' } },
        },
        Note: { type: 'object', properties: { id: { type: 'integer' }, body: { type: 'string' }, created_at: { type: 'string', format: 'date-time' } } },
      },
    },
  };
  const sidecar = parseSidecar(`
pagination: { cursor_param: "page[after]", limit_param: "page[size]", next_cursor: meta.after_cursor, has_more: meta.has_more, next_url: links.next }
resources:
  boxes: { records: 3, soft_delete: { field: status, value: deleted }, lists: [GET /export/boxes], timestamps: { updated: updated_at } }
  notes:
    lists: ["GET /boxes/{box_id}/notes"]
    created_by:
      - { operation: POST /boxes, field: note, echo: audit.events }
      - { operation: "PUT /boxes/{box_id}", field: note, echo: audit.events }
operations:
  GET /export/boxes:
    since: { param: start_time, field: updated_at }
    pagination: { cursor_param: cursor, limit_param: per_page, next_cursor: after_cursor, next_url: after_url, done: end_of_stream }
`);
  let sim: OpenApiSimulator;
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: new Description(doc), sidecar, seed: 3 });
  });
  afterAll(() => sim.close());

  it('wraps records in the resource’s singular; a write’s note becomes a note of that box, echoed in the answer', async () => {
    const made = await call(sim, 'POST', '/boxes', { box: { name: 'Inbox', note: { body: 'first' } } });
    expect(made.status).toBe(201);
    const box = made.body.box as Rec;
    expect(box).toMatchObject({ name: 'Inbox' });
    expect(box).not.toHaveProperty('note');
    expect(Date.parse(box.updated_at as string)).toBeGreaterThan(Date.parse('2026-01-02'));
    expect((made.body.audit as { events: Rec[] }).events).toEqual([expect.objectContaining({ body: 'first' })]);
    await call(sim, 'PUT', `/boxes/${String(box.id)}`, { box: { note: { body: 'second' } } });
    const notes = await call(sim, 'GET', `/boxes/${String(box.id)}/notes`);
    expect((notes.body.notes as Rec[]).map((n) => n.body)).toEqual(['first', 'second']);
    expect(notes.body.meta).toEqual({ has_more: false, after_cursor: null });
    expect(notes.body.links).toEqual({ next: null });
    const other = (await call(sim, 'GET', '/boxes?page[size]=1')).body;
    expect(other.meta).toMatchObject({ has_more: true, after_cursor: expect.any(String) });
    expect(String((other.links as Rec).next)).toMatch(new RegExp(`^${sim.url}/boxes\\?`));
  });

  it('a soft delete hides the record from get and lists; the export shows it, since start_time, page by page to end_of_stream', async () => {
    const since = Math.floor(Date.now() / 1000);
    const id = String([...sim.resources.get('boxes')!.records.keys()][0]);
    expect((await call(sim, 'DELETE', `/boxes/${id}`)).status).toBe(204);
    expect((await call(sim, 'GET', `/boxes/${id}`)).status).toBe(404);
    expect(((await call(sim, 'GET', '/boxes')).body.boxes as Rec[]).map((b) => String(b.id))).not.toContain(id);
    const changed = (await call(sim, 'GET', `/export/boxes?start_time=${since}`)).body;
    expect((changed.boxes as Rec[]).map((b) => [String(b.id), b.status])).toContainEqual([id, 'deleted']);
    expect(changed.end_of_stream).toBe(true);
    let next: string | null = `/export/boxes?start_time=0&per_page=1`;
    const seen: string[] = [];
    while (next !== null) {
      const body: Rec = (await call(sim, 'GET', next.replace(sim.url, ''))).body;
      seen.push(...(body.boxes as Rec[]).map((b) => String(b.id)));
      next = body.end_of_stream === true ? null : (body.after_url as string);
    }
    expect(seen.sort()).toEqual([...sim.resources.get('boxes')!.records.keys()].sort());
  });
});

/**
 * Sidecar keys for APIs shaped like GitHub's, on a small description of our own: no declared
 * security (auth.bearer), items named by two path ids (resources.key), page-number lists of bare
 * arrays (Link headers keeping the query), filters that match all or compare times, timestamps,
 * 422 for invalid bodies (error.status), and a unique id beside the number that names a record.
 */
describe('the sidecar: GitHub-shaped APIs', () => {
  const widget = {
    type: 'object',
    properties: {
      id: { type: 'integer' },
      name: { type: 'string' },
      state: { type: 'string', example: 'open' },
      owner: { type: 'object', properties: { login: { type: 'string', example: 'octo' } } },
      created_at: { type: 'string', format: 'date-time', example: '2020-01-01T00:00:00Z' },
      updated_at: { type: 'string', format: 'date-time', example: '2020-01-01T00:00:00Z' },
    },
  };
  const part = { type: 'object', properties: { id: { type: 'integer', example: 7 }, number: { type: 'integer', example: 1 }, label: { type: 'string' } } };
  const arrayOf = (s: unknown) => ({
    description: 'ok',
    headers: { Link: { schema: { type: 'string' } } },
    content: { 'application/json': { schema: { type: 'array', items: s } } },
  });
  const one = (s: unknown) => ({ description: 'ok', content: { 'application/json': { schema: s } } });
  const invalid = {
    description: 'Validation failed',
    content: { 'application/json': { schema: { type: 'object', properties: { message: { type: 'string' } } } } },
  };
  const body = (required: string[]) => ({
    required: true,
    content: {
      'application/json': {
        schema: {
          type: 'object',
          additionalProperties: false,
          required,
          properties: { name: { type: 'string' }, state: { type: 'string' }, label: { type: 'string' } },
        },
      },
    },
  });
  const ids = (...names: string[]) =>
    names.map((name) => ({ name, in: 'path', required: true, schema: name === 'number' ? { type: 'integer' } : { type: 'string' } }));
  const listParams = [
    { name: 'state', in: 'query', schema: { type: 'string', enum: ['open', 'closed', 'all'] } },
    { name: 'since', in: 'query', schema: { type: 'string', format: 'date-time' } },
    { name: 'per_page', in: 'query', schema: { type: 'integer', default: 30 } },
    { name: 'page', in: 'query', schema: { type: 'integer', default: 1 } },
  ];
  const doc = {
    openapi: '3.0.3',
    info: { title: 'Widgets', version: '1' },
    paths: {
      '/user/widgets': {
        get: { parameters: listParams, responses: { '200': arrayOf(widget) } },
        post: { requestBody: body(['name']), responses: { '201': one(widget), '422': invalid } },
      },
      '/widgets/{owner}/{name}': {
        parameters: ids('owner', 'name'),
        get: { responses: { '200': one(widget), '404': invalid } },
        patch: { requestBody: body([]), responses: { '200': one(widget), '422': invalid } },
      },
      '/widgets/{owner}/{name}/parts': {
        parameters: ids('owner', 'name'),
        post: { requestBody: body(['label']), responses: { '201': one(part) } },
        get: { responses: { '200': arrayOf(part) } },
      },
      '/widgets/{owner}/{name}/parts/{number}': { parameters: ids('owner', 'name', 'number'), get: { responses: { '200': one(part) } } },
    },
  };
  let sim: OpenApiSimulator;
  const auth = { authorization: 'Bearer t1' };
  beforeAll(async () => {
    sim = await startOpenApiSimulator({
      description: new Description(doc as never),
      sidecar: parseSidecar(`
error: { body: { message: "{{message}}" }, status: { invalid: 422, missing: 422, unknown: 422 } }
auth: { bearer: true, tokens: [t1] }
records: 0
resources: { widgets: { key: { owner: owner.login, name: name }, timestamps: { created: created_at, updated: updated_at } } }
filters: { state: { any: [all] }, since: { field: updated_at, match: since } }
`),
    });
  });
  afterAll(() => sim.close());

  it('needs a bearer token although the description declares no security', async () => {
    expect((await call(sim, 'GET', '/user/widgets', undefined, {})).status).toBe(401);
    expect((await call(sim, 'GET', '/user/widgets', undefined, { authorization: 'Bearer t2' })).status).toBe(401);
    expect((await call(sim, 'GET', '/user/widgets', undefined, auth)).status).toBe(200);
  });

  it('finds an item named by two path ids through resources.key', async () => {
    const before = new Date(Date.now() - 1000).toISOString();
    const created = await call(sim, 'POST', '/user/widgets', { name: 'gear' }, auth);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'gear', owner: { login: 'octo' } });
    expect(created.body.created_at).not.toBe('2020-01-01T00:00:00Z');
    expect(Date.parse(created.body.updated_at as string)).toBeGreaterThanOrEqual(Date.parse(before) - 1000);
    expect((await call(sim, 'GET', '/widgets/octo/gear', undefined, auth)).body.id).toBe(created.body.id);
    const patched = await call(sim, 'PATCH', '/widgets/octo/gear', { state: 'closed' }, auth);
    expect(patched.body).toMatchObject({ id: created.body.id, state: 'closed' });
    expect((await call(sim, 'GET', '/widgets/someone/gear', undefined, auth)).status).toBe(404);
    expect((await call(sim, 'GET', '/widgets/octo/cog', undefined, auth)).status).toBe(404);
  });

  it("answers invalid bodies with the sidecar's status (422)", async () => {
    const r = await call(sim, 'POST', '/user/widgets', { name: 'x', colour: 'red' }, auth);
    expect(r.status).toBe(422);
    expect((await call(sim, 'POST', '/user/widgets', {}, auth)).status).toBe(422);
  });

  it('pages a bare array by page number with a Link header that keeps the query; filters match all or compare times', async () => {
    for (const name of ['a', 'b', 'c', 'd']) await call(sim, 'POST', '/user/widgets', { name }, auth);
    const all = await call(sim, 'GET', '/user/widgets?state=all&per_page=2', undefined, auth);
    expect((all.body as unknown as Rec[]).map((w) => w.name)).toEqual(['gear', 'a']);
    expect(all.headers.get('link')).toBe(`<${sim.url}/user/widgets?state=all&per_page=2&page=2>; rel="next"`);
    const last = await call(sim, 'GET', '/user/widgets?state=all&per_page=2&page=3', undefined, auth);
    expect((last.body as unknown as Rec[]).map((w) => w.name)).toEqual(['d']);
    expect(last.headers.get('link')).toBeNull();
    expect((await call(sim, 'GET', '/user/widgets?state=closed', undefined, auth)).body).toMatchObject([{ name: 'gear' }]);
    // since: updated_at >= since.
    const widgets = sim.resources.get('widgets')!;
    [...widgets.records.values()].forEach((s, i) => (s.record.updated_at = `2024-01-0${i + 1}T00:00:00Z`));
    const since = await call(sim, 'GET', '/user/widgets?state=all&since=2024-01-04T00:00:00Z', undefined, auth);
    expect((since.body as unknown as Rec[]).map((w) => w.name)).toEqual(['c', 'd']);
  });

  it('gives records named by a number a unique id too', async () => {
    const made = [];
    for (const label of ['x', 'y', 'z']) made.push((await call(sim, 'POST', '/widgets/octo/gear/parts', { label }, auth)).body);
    expect(new Set(made.map((p) => p.number)).size).toBe(3);
    expect(new Set(made.map((p) => p.id)).size).toBe(3);
    expect((await call(sim, 'GET', `/widgets/octo/gear/parts/${String(made[1]?.number)}`, undefined, auth)).body).toMatchObject({
      label: 'y',
      id: made[1]?.id,
    });
  });
});

describe('search rules paged by a page number in the body (Apollo’s searches)', () => {
  const APOLLO = new URL('../../connectors/apollo/', import.meta.url).pathname;
  let sim: OpenApiSimulator;
  const key = { 'x-api-key': 'apollo_sandbox_Zq4mX8vN2pR6tB1yK9wL3c' };
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: `${APOLLO}openapi.yaml`, sidecar: `${APOLLO}simulator.yaml`, seed: 4, rateLimit: false });
  }, 60_000);
  afterAll(() => sim.close());

  it('serves page N of per_page records with the page, the total and the number of pages; a page below 1 is refused', async () => {
    const ids = [...sim.resources.get('contacts')!.records.values()].map((s) => s.record['id']);
    const pages = [1, 2, 3].map((page) => call(sim, 'POST', '/contacts/search', { page, per_page: 3 }, key));
    const bodies = (await Promise.all(pages)).map((r) => r.body as Record<string, any>);
    expect(bodies.map((b) => b['contacts'].map((c: Record<string, unknown>) => c['id'])).flat()).toEqual(ids);
    expect(bodies.map((b) => b['pagination'])).toEqual([1, 2, 3].map((page) => ({ page, per_page: 3, total_entries: 7, total_pages: 3 })));
    const refused = await call(sim, 'POST', '/contacts/search', { page: 0 }, key);
    expect(refused.status).toBe(422);
  });
});

describe('a create answered by a schema of its own, and ids taken from another resource (Gong’s calls and transcripts)', () => {
  const GONG = new URL('../../connectors/gong/', import.meta.url).pathname;
  let sim: OpenApiSimulator;
  const basic = { authorization: `Basic ${Buffer.from('key:gong_sandbox_secret_Q9vT2xW7kL4m').toString('base64')}` };
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: `${GONG}openapi.yaml`, sidecar: `${GONG}simulator.yaml`, seed: 4, rateLimit: false });
  }, 60_000);
  afterAll(() => sim.close());

  it('names the new record’s id as <singular>Id ({requestId, callId, url}); seeded transcripts take distinct call ids', async () => {
    const made = await call(
      sim,
      'POST',
      '/v2/calls',
      { clientUniqueId: 'c-1', actualStart: '2026-02-01T10:00:00Z', parties: [{ name: 'A' }], direction: 'Inbound', primaryUser: '1' },
      basic,
    );
    expect(made.status).toBe(201);
    expect(sim.resources.get('calls')!.records.has(String(made.body['callId']))).toBe(true);
    const calls = [...sim.resources.get('calls')!.records.keys()];
    const transcripts = [...sim.resources.get('call_transcripts')!.records.keys()];
    expect(transcripts).toEqual(calls.slice(0, transcripts.length));
  });
});
