/**
 * The generic simulator on a form-encoded API (our own description in Stripe's shapes,
 * test/fixtures/factory/form-api.yaml): application/x-www-form-urlencoded bodies with deepObject
 * keys decoded into one JSON tree and validated (coerced) against the description, deepObject
 * query parameters (created[gte], expand[]), POST on an item path as the update, a record id as
 * the starting_after cursor, range and enum-group filters, merging only what fits the record, and
 * the sidecar's rate_limit.exceeded_headers.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deepObjectDecode } from '../../src/simulator/description.ts';
import { Description, loadDescription, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

type Rec = Record<string, unknown>;
const FORM_API = new URL('../fixtures/factory/form-api.yaml', import.meta.url).pathname;
const AUTH = { authorization: 'Bearer t' };

async function send(
  sim: OpenApiSimulator,
  method: string,
  path: string,
  form?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Rec }> {
  const res = await fetch(`${sim.url}${path}`, {
    method,
    headers: { ...AUTH, ...(form !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
    ...(form !== undefined ? { body: form } : {}),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? {} : (JSON.parse(text) as Rec) };
}

describe('deepObjectDecode', () => {
  it('turns bracketed keys into one tree: objects, appended and indexed arrays, repeated keys', () => {
    const d = (s: string): Rec => deepObjectDecode(new URLSearchParams(s).entries());
    expect(d('email=a%40b.c&metadata[plan]=pro&metadata[seats]=3')).toEqual({ email: 'a@b.c', metadata: { plan: 'pro', seats: '3' } });
    expect(d('expand[]=customer&expand[]=invoice')).toEqual({ expand: ['customer', 'invoice'] });
    expect(d('items[0][price]=p1&items[0][quantity]=2&items[1][price]=p2')).toEqual({ items: [{ price: 'p1', quantity: '2' }, { price: 'p2' }] });
    expect(d('a[b][c]=1&a[b][d]=2')).toEqual({ a: { b: { c: '1', d: '2' } } });
    expect(d('tag=x&tag=y&metadata=')).toEqual({ tag: ['x', 'y'], metadata: '' });
    // Keys that are not 0..n-1 stay an object.
    expect(d('m[1]=a&m[2]=b')).toEqual({ m: { 1: 'a', 2: 'b' } });
  });
});

describe('generic simulator on a form-encoded description', () => {
  let sim: OpenApiSimulator;
  let d: Description;
  beforeAll(async () => {
    d = new Description(await loadDescription(FORM_API));
    sim = await startOpenApiSimulator({
      description: d,
      seed: 2,
      sidecar: parseSidecar('records: 6\nunknown_query: reject\nrate_limit: { limit: 1000, window_seconds: 3600, exceeded_headers: { Retry-Hint: "true" } }'),
    });
  });
  afterAll(() => sim.close());
  beforeEach(() => sim.resetRateLimit());

  it('reads the form body schema and the deepObject params from the description', () => {
    const create = d.operations.find((o) => o.key === 'POST /v1/members')!;
    expect(create.bodyEncoding).toBe('form');
    expect(create.bodyRef).toMatch(/x-www-form-urlencoded/);
    const list = d.operations.find((o) => o.key === 'GET /v1/members')!;
    expect(list.params.filter((p) => p.deepObject === true).map((p) => p.name)).toEqual(['created', 'expand']);
  });

  it('a form create is decoded, coerced, validated and kept; a get returns it', async () => {
    const created = await send(
      sim,
      'POST',
      '/v1/members',
      'email=ada%40example.com&age=36&vip=true&metadata[plan]=pro&roles[]=admin&roles[]=owner&expand[]=seats',
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ email: 'ada@example.com', age: 36, vip: true, metadata: { plan: 'pro' }, roles: ['admin', 'owner'] });
    // expand is a request option the record does not declare: not stored.
    expect(created.body).not.toHaveProperty('expand');
    const got = await send(sim, 'GET', `/v1/members/${String(created.body.id)}`);
    expect(got.body).toMatchObject({ id: created.body.id, email: 'ada@example.com', age: 36 });
  });

  it('a nested list the record holds in another shape is not copied over it (seats[0][desk])', async () => {
    const created = await send(sim, 'POST', '/v1/members', 'email=b%40example.com&seats[0][desk]=D1&seats[0][floor]=2');
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.seats).toMatchObject({ object: 'list' });
  });

  it('refuses what the form schema forbids, naming the field: unknown, mistyped, missing nested, missing required', async () => {
    const bad = async (form: string): Promise<Rec> => {
      const r = await send(sim, 'POST', '/v1/members', form);
      expect(r.status, form).toBe(400);
      return r.body;
    };
    expect(await bad('email=a&colour=red')).toMatchObject({ error: { code: 'unknown', param: 'colour' } });
    expect(await bad('email=a&age=old')).toMatchObject({ error: { code: 'invalid', message: 'age must be integer', param: 'age' } });
    expect(await bad('email=a&seats[0][floor]=2')).toMatchObject({ error: { code: 'missing', param: 'seats[0].desk' } });
    expect(await bad('age=3')).toMatchObject({ error: { code: 'missing', param: 'email' } });
    // A JSON body to a form operation is refused.
    const json = await send(sim, 'POST', '/v1/members', '{"email":"a"}', { 'content-type': 'application/json' });
    expect(json.status).toBe(400);
    expect(json.body).toMatchObject({ error: { message: 'Request body must be application/x-www-form-urlencoded, not application/json' } });
  });

  it("POST on the item path updates (no PUT/PATCH there); objects merge into the record's", async () => {
    const created = await send(sim, 'POST', '/v1/members', 'email=c%40example.com&metadata[a]=1');
    const id = String(created.body.id);
    const updated = await send(sim, 'POST', `/v1/members/${id}`, 'email=c2%40example.com&metadata[b]=2');
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id, email: 'c2@example.com', metadata: { a: '1', b: '2' } });
    expect((await send(sim, 'POST', '/v1/members/nope', 'email=x')).status).toBe(404);
  });

  it('pages with starting_after=<a record id> and has_more; filters by created range and by enum value, not by a group (all)', async () => {
    const members = [...sim.resources.get('members')!.records.values()];
    members.forEach((s, i) => {
      s.record = { ...s.record, created: 100 + i, status: i % 2 === 0 ? 'active' : 'past' };
    });
    const ids = members.map((s) => s.record.id);
    const first = await send(sim, 'GET', '/v1/members?limit=2');
    expect((first.body.data as Rec[]).map((m) => m.id)).toEqual(ids.slice(0, 2));
    expect(first.body.has_more).toBe(true);
    const next = await send(sim, 'GET', `/v1/members?limit=2&starting_after=${String(ids[1])}`);
    expect((next.body.data as Rec[]).map((m) => m.id)).toEqual(ids.slice(2, 4));
    const last = await send(sim, 'GET', `/v1/members?limit=50&starting_after=${String(ids.at(-2))}`);
    expect((last.body.data as Rec[]).map((m) => m.id)).toEqual(ids.slice(-1));
    expect(last.body.has_more).toBe(false);

    const range = await send(sim, 'GET', '/v1/members?limit=50&created[gte]=102&created[lt]=104&expand[]=data.seats');
    expect((range.body.data as Rec[]).map((m) => m.created)).toEqual([102, 103]);
    expect((await send(sim, 'GET', '/v1/members?created[gte]=soon')).body).toMatchObject({ error: { code: 'invalid', param: 'created.gte' } });
    expect((await send(sim, 'GET', '/v1/members?limit=50&status=past')).body.data).toHaveLength(Math.floor(ids.length / 2));
    expect((await send(sim, 'GET', '/v1/members?limit=50&status=all')).body.data).toHaveLength(ids.length);
    // Unknown bracketed params are still unknown.
    expect((await send(sim, 'GET', '/v1/members?colour[x]=1')).body).toMatchObject({ error: { code: 'unknown' } });
  });

  it("a 429 over the sidecar's limit carries its exceeded_headers", async () => {
    sim.setRateLimit({ limit: 1, window_seconds: 86_400, exceeded_headers: { 'Retry-Hint': 'false' } });
    try {
      expect((await send(sim, 'GET', '/v1/notices')).status).toBe(200);
      const limited = await send(sim, 'GET', '/v1/notices');
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-hint')).toBe('false');
      expect(limited.headers.get('retry-after')).not.toBeNull();
      sim.setRateLimit({ limit: 1, window_seconds: 86_400, exceeded_headers: { 'Retry-After': '' } });
      await send(sim, 'GET', '/v1/notices');
      expect((await send(sim, 'GET', '/v1/notices')).headers.get('retry-after')).toBeNull();
    } finally {
      sim.setRateLimit(false);
    }
  });

  it('the sidecar refuses exceeded_headers that are not strings', () => {
    expect(() => parseSidecar('rate_limit: { limit: 1, window_seconds: 1, exceeded_headers: { A: [1] } }')).toThrow(/exceeded_headers/);
  });
});
