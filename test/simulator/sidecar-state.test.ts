/**
 * The sidecar keys that shape the generic simulator's state, on a small description of our own
 * (a "widgets" API with a map of string properties, a search endpoint, and an OAuth flow):
 * record templates and seeds, timestamps moved by writes, soft deletes, structured-filter
 * searches (the search rule's filter_groups), OAuth refresh tokens and expiring access tokens, the rate-limit window header, deep
 * merges on update, the next-page holder left out on the last page, and the sidecar's load-time
 * errors.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Description, parseSidecar, startOpenApiSimulator, type OpenApiSimulator, type Sidecar } from '../../src/simulator/index.ts';

type Rec = Record<string, unknown>;

const DOC = {
  openapi: '3.0.3',
  info: { title: 'Widgets (test)', version: '1' },
  servers: [{ url: 'https://widgets.example.test' }],
  components: {
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    schemas: {
      Widget: {
        type: 'object',
        required: ['id', 'properties'],
        properties: {
          id: { type: 'string' },
          properties: { type: 'object', additionalProperties: { type: 'string', nullable: true } },
          createdAt: { type: 'string', format: 'date-time' },
          updatedAt: { type: 'string', format: 'date-time' },
          archived: { type: 'boolean' },
          archivedAt: { type: 'string', format: 'date-time' },
        },
      },
      Input: { type: 'object', required: ['properties'], properties: { properties: { type: 'object', additionalProperties: { type: 'string' } } } },
      Page: {
        type: 'object',
        required: ['results'],
        properties: {
          total: { type: 'integer' },
          results: { type: 'array', items: { $ref: '#/components/schemas/Widget' } },
          paging: { $ref: '#/components/schemas/Paging' },
        },
      },
      Paging: {
        type: 'object',
        properties: { next: { type: 'object', required: ['after'], properties: { after: { type: 'string' }, link: { type: 'string' } } } },
      },
      Search: {
        type: 'object',
        properties: {
          filterGroups: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                filters: {
                  type: 'array',
                  items: {
                    type: 'object',
                    properties: {
                      propertyName: { type: 'string' },
                      operator: { type: 'string' },
                      value: { type: 'string' },
                      values: { type: 'array', items: { type: 'string' } },
                    },
                  },
                },
              },
            },
          },
          sorts: { type: 'array', items: {} },
          after: { type: 'string' },
          limit: { type: 'integer' },
          query: { type: 'string' },
        },
      },
    },
  },
  security: [{ bearer: [] }],
  paths: {
    '/widgets': {
      get: {
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer' } },
          { name: 'after', in: 'query', schema: { type: 'string' } },
          { name: 'archived', in: 'query', schema: { type: 'boolean' } },
        ],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Page' } } } } },
      },
      post: {
        requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Input' } } } },
        responses: { '201': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Widget' } } } } },
      },
    },
    '/widgets/{widgetId}': {
      parameters: [{ name: 'widgetId', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        parameters: [{ name: 'archived', in: 'query', schema: { type: 'boolean' } }],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Widget' } } } } },
      },
      patch: {
        requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Input' } } } },
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Widget' } } } } },
      },
      delete: { responses: { '204': { description: 'archived' } } },
    },
    '/widgets/search': {
      post: {
        requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Search' } } } },
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Page' } } } } },
      },
    },
  },
};

const SIDECAR = `
auth: { tokens: [static-token] }
rate_limit: { limit: 1000, window_seconds: 10, headers: { limit: X-Max, remaining: X-Remaining, window_ms: X-Window-Ms } }
resources:
  widgets:
    template: { properties: { object_id: "{{id}}", serial: "#{{n}}", created_s: "{{now}}" }, archived: false }
    seed: { properties: { name: "Widget {{n}}", size: "{{n}}0" } }
    timestamps: { created: [createdAt], updated: [updatedAt, properties.modified] }
    soft_delete: { field: archived, at: archivedAt }
search:
  "POST /widgets/search":
    resource: widgets
    filter_groups: { groups: filterGroups, filters: filters }
    fields_at: properties
    keys: { field: propertyName, values: values, high_value: highValue }
    operators: { EQ: eq, GTE: gte, IN: in, HAS_PROPERTY: exists, CONTAINS_TOKEN: contains, BETWEEN: between }
    text: query
    sort: { list: sorts, field: propertyName, order: direction, descending: [DESCENDING] }
    pagination: { per_page: limit, cursor: after, default: 2, max: 3, over_max: clamp }
    response: { total: "{{total}}", results: "{{records}}", "paging?": { next: { after: "{{next_cursor}}" } } }
oauth:
  authorize_path: /oauth/authorize
  token_path: /oauth/token
  expires_in: 1800
  refresh_tokens: true
  keep_refresh_token: true
  grant_types: [account_credentials]
`;

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: new Description(structuredClone(DOC)), sidecar: parseSidecar(SIDECAR), seed: 2 });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

async function call(method: string, path: string, body?: unknown, token = 'static-token'): Promise<{ status: number; headers: Headers; body: Rec }> {
  const res = await fetch(`${sim.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? {} : (JSON.parse(text) as Rec) };
}
const search = (body: Rec) => call('POST', '/widgets/search', body);
const ids = (r: { body: Rec }) => (r.body.results as Rec[]).map((w) => w.id);

describe('records: template, seed, timestamps, deep merge', () => {
  it('seeds records from the template and seed (not a sample of the schema), {{n}}, {{id}} and {{now}} (the seed time, Unix seconds) filled', () => {
    const seeded = [...sim.resources.get('widgets')!.records.values()].map((s) => s.record);
    expect(seeded).toHaveLength(5);
    seeded.forEach((w, i) => {
      expect(Object.keys(w).sort()).toEqual(['archived', 'createdAt', 'id', 'properties', 'updatedAt']);
      expect(w.properties).toEqual({
        object_id: w.id,
        serial: `#${i + 1}`,
        created_s: Date.UTC(2026, 0, 1, 0, i) / 1000,
        name: `Widget ${i + 1}`,
        size: `${i + 1}0`,
        modified: w.updatedAt,
      });
      expect(w.archived).toBe(false);
    });
  });

  it('a create starts from the template; an update merges properties and moves the updated timestamps', async () => {
    const created = await call('POST', '/widgets', { properties: { name: 'new' } });
    expect(created.status).toBe(201);
    expect(created.body.properties).toEqual({
      object_id: created.body.id,
      serial: expect.stringMatching(/^#\d+$/),
      created_s: expect.any(Number),
      name: 'new',
      modified: created.body.createdAt,
    });
    expect(Math.abs(((created.body.properties as Rec).created_s as number) - Date.now() / 1000)).toBeLessThan(600);
    const updated = await call('PATCH', `/widgets/${String(created.body.id)}`, { properties: { color: 'red' } });
    expect(updated.body.properties).toMatchObject({ name: 'new', color: 'red', object_id: created.body.id });
    expect(Date.parse(updated.body.updatedAt as string)).toBeGreaterThanOrEqual(Date.parse(created.body.updatedAt as string));
    expect((updated.body.properties as Rec).modified).toBe(updated.body.updatedAt);
    expect(updated.body.createdAt).toBe(created.body.createdAt);
  });
});

describe('soft deletes', () => {
  it('DELETE flags the record: get, update and lists skip it; archived=true lists and gets only archived ones', async () => {
    const w = await call('POST', '/widgets', { properties: { name: 'short-lived' } });
    const id = String(w.body.id);
    expect((await call('DELETE', `/widgets/${id}`)).status).toBe(204);
    expect(sim.resources.get('widgets')!.records.get(id)!.record).toMatchObject({ archived: true, archivedAt: expect.any(String) });
    expect((await call('GET', `/widgets/${id}`)).status).toBe(404);
    expect((await call('PATCH', `/widgets/${id}`, { properties: { name: 'x' } })).status).toBe(404);
    expect((await call('DELETE', `/widgets/${id}`)).status).toBe(404);
    expect((await call('GET', `/widgets/${id}?archived=true`)).body.id).toBe(id);
    const listed = await call('GET', '/widgets?limit=100');
    expect(ids(listed)).not.toContain(id);
    expect(ids(await call('GET', '/widgets?archived=true'))).toEqual([id]);
    expect(ids(await search({ query: 'short-lived' }))).toEqual([]);
  });
});

describe('searches', () => {
  it('groups are OR, conditions AND, vendor operators mapped; fields looked up under fields_at', async () => {
    expect(ids(await search({ filterGroups: [{ filters: [{ propertyName: 'name', operator: 'EQ', value: 'Widget 2' }] }] }))).toHaveLength(1);
    const either = await search({
      filterGroups: [
        { filters: [{ propertyName: 'name', operator: 'EQ', value: 'Widget 2' }] },
        { filters: [{ propertyName: 'size', operator: 'IN', values: ['30', '40'] }] },
      ],
      limit: 3,
    });
    expect((either.body.results as Rec[]).map((w) => (w.properties as Rec).name).sort()).toEqual(['Widget 2', 'Widget 3', 'Widget 4']);
    const both = await search({
      filterGroups: [
        {
          filters: [
            { propertyName: 'size', operator: 'GTE', value: '30' },
            { propertyName: 'name', operator: 'CONTAINS_TOKEN', value: 'widget 5' },
          ],
        },
      ],
    });
    expect((both.body.results as Rec[]).map((w) => (w.properties as Rec).name)).toEqual(['Widget 5']);
    const between = await search({ filterGroups: [{ filters: [{ propertyName: 'size', operator: 'BETWEEN', value: '20', highValue: '40' }] }], limit: 3 });
    expect((between.body.results as Rec[]).map((w) => (w.properties as Rec).size).sort()).toEqual(['20', '30', '40']);
    const bad = await search({ filterGroups: [{ filters: [{ propertyName: 'name', operator: 'SOUNDS_LIKE', value: 'x' }] }] });
    expect(bad.status).toBe(400);
  });

  it('dates compare with epoch milliseconds; sorts by name (- for descending) or {propertyName, direction}', async () => {
    const since = Date.now();
    const a = await call('POST', '/widgets', { properties: { name: 'zz later', size: '1' } });
    const older = await search({ filterGroups: [{ filters: [{ propertyName: 'modified', operator: 'GTE', value: String(since) }] }], sorts: ['modified'] });
    expect(ids(older)).toEqual([a.body.id]);
    const bySize = await search({ sorts: ['-size'], limit: 3 });
    expect((bySize.body.results as Rec[]).map((w) => (w.properties as Rec).size)).toEqual(['50', '40', '30']);
    const byName = await search({ sorts: [{ propertyName: 'name', direction: 'DESCENDING' }], limit: 1 });
    expect((byName.body.results as Rec[])[0]!.properties).toMatchObject({ name: 'zz later' });
  });

  it('pages with the body cursor (default and capped limits); total counts every match; the last page has no paging', async () => {
    const first = await search({});
    expect(first.body.results).toHaveLength(2);
    const all = first.body.total as number;
    expect(all).toBe([...sim.resources.get('widgets')!.records.values()].filter((s) => s.record.archived !== true).length);
    const seen = [...ids(first)];
    let after = (first.body.paging as { next: { after: string } }).next.after;
    for (;;) {
      const page = await search({ after, limit: 50 });
      expect((page.body.results as Rec[]).length).toBeLessThanOrEqual(3);
      seen.push(...ids(page));
      if (page.body.paging === undefined) break;
      after = (page.body.paging as { next: { after: string } }).next.after;
    }
    expect(new Set(seen).size).toBe(all);
    expect((await search({ after: 'not-a-cursor' })).status).toBe(400);
  });
});

describe('oauth: refresh tokens and expiring access tokens', () => {
  async function grant(): Promise<Rec> {
    const redirect = await fetch(`${sim.url}/oauth/authorize?client_id=sim_client&redirect_uri=${encodeURIComponent('https://app.example/cb')}&scope=widgets`, {
      redirect: 'manual',
    });
    const code = new URL(redirect.headers.get('location') as string).searchParams.get('code') as string;
    const res = await fetch(`${sim.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        client_id: 'sim_client',
        client_secret: 'sim_secret',
        redirect_uri: 'https://app.example/cb',
      }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Rec;
  }
  const refresh = (token: string) =>
    fetch(`${sim.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, client_id: 'sim_client', client_secret: 'sim_secret' }),
    });

  it('issues expires_in and a refresh token; an expired token is a 401 expired_token; the refresh token (kept, keep_refresh_token) gets a new one', async () => {
    const tokens = await grant();
    expect(tokens).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      scope: 'widgets',
      refresh_token: expect.stringMatching(/^r_/),
      expires_in: 1800,
    });
    expect((await call('GET', '/widgets', undefined, tokens.access_token as string)).status).toBe(200);
    sim.expireAccessTokens();
    const expired = await call('GET', '/widgets', undefined, tokens.access_token as string);
    expect(expired.status).toBe(401);
    expect(JSON.stringify(expired.body)).toMatch(/expired_token/);
    // Static tokens do not expire.
    expect((await call('GET', '/widgets')).status).toBe(200);
    const res = await refresh(tokens.refresh_token as string);
    const again = (await res.json()) as Rec;
    expect(again).toMatchObject({ refresh_token: tokens.refresh_token, expires_in: 1800, scope: 'widgets' });
    expect(again.access_token).not.toBe(tokens.access_token);
    expect((await call('GET', '/widgets', undefined, again.access_token as string)).status).toBe(200);
    expect((await refresh('unknown')).status).toBe(400);
    // Kept: the same refresh token works again.
    expect((await refresh(tokens.refresh_token as string)).status).toBe(200);
  });

  it('answers a client-only grant it lists (grant_types) for the client, without a refresh token; others stay unsupported', async () => {
    const basic = `Basic ${Buffer.from('sim_client:sim_secret').toString('base64')}`;
    const post = (grantType: string, auth = basic) =>
      fetch(`${sim.url}/oauth/token?grant_type=${grantType}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
        body: new URLSearchParams({ grant_type: grantType, account_id: 'acct' }),
      });
    const res = await post('account_credentials');
    const t = (await res.json()) as Rec;
    expect(t).toEqual({ access_token: expect.any(String), token_type: 'Bearer', scope: '', expires_in: 1800 });
    expect((await call('GET', '/widgets', undefined, t.access_token as string)).status).toBe(200);
    expect((await post('client_credentials')).status).toBe(400);
    expect((await post('account_credentials', `Basic ${Buffer.from('sim_client:wrong').toString('base64')}`)).status).toBe(401);
  });
});

describe('headers, last pages, sidecar errors', () => {
  it('sends the window header with the others', async () => {
    const r = await call('GET', '/widgets?limit=1');
    expect([r.headers.get('x-max'), r.headers.get('x-remaining') !== null, r.headers.get('x-window-ms')]).toEqual(['1000', true, '10000']);
  });

  it('a list leaves out a next-page holder its schema does not allow to be null on the last page', async () => {
    const r = await call('GET', '/widgets?limit=100');
    expect(r.status).toBe(200);
    expect('paging' in r.body).toBe(false);
  });

  it('refuses sidecars naming resources, operations or fields the description lacks, and unknown keys', async () => {
    const start = (sidecar: Sidecar) => startOpenApiSimulator({ description: new Description(structuredClone(DOC)), sidecar });
    await expect(start({ resources: { gadgets: { records: 1 } } })).rejects.toThrow(
      /resources.gadgets: the description has no resource gadgets \(it has widgets\)/,
    );
    await expect(start({ search: { 'POST /gadgets/search': { resource: 'widgets', operators: { EQ: 'eq' }, response: {} } } })).rejects.toThrow(
      /search: the description has no operation POST \/gadgets\/search/,
    );
    await expect(start({ search: { 'POST /widgets/search': { resource: 'gadgets', operators: { EQ: 'eq' }, response: {} } } })).rejects.toThrow(
      /search.POST \/widgets\/search.resource: the description has no resource gadgets/,
    );
    await expect(start({ resources: { widgets: { soft_delete: { field: 'deleted' } } } })).rejects.toThrow(
      /soft_delete.field: the record has no field deleted/,
    );
    expect(() => parseSidecar('search: { "POST /x": { resource: w, operators: { EQ: equals }, response: {} } }')).toThrow(
      /operators\/EQ must be equal to one of the allowed values/,
    );
    expect(() => parseSidecar('search: { "POST /x": { resource: w, operators: { EQ: eq }, filter_groups: { groups: g }, response: {} } }')).toThrow(
      /filter_groups must have required property 'filters'/,
    );
    expect(() => parseSidecar('resources: { w: { timestamp: {} } }')).toThrow(/\(timestamp\)/);
    expect(() => parseSidecar('oauth: { authorize_path: /a, token_path: /t, expires_in: 0 }')).toThrow(/expires_in must be >= 1/);
  });
});
