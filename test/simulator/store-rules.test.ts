/**
 * The generic record store's write rules (src/simulator/store-rules.ts) and caller-kept records
 * (src/simulator/lazy-records.ts), on a small description of our own: unique fields (409),
 * upserts, a nested collection's parent (404 when missing, a reference appended to it), Unix
 * timestamps, template variables, handlers that check or reshape a write and let the store answer,
 * and records generated on demand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LazyRecords } from '../../src/simulator/lazy-records.ts';
import { Description, parseSidecar, SimulatorError, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

type Rec = Record<string, unknown>;

const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const ok = (schema: unknown) => ({ '200': { description: 'ok', ...json(schema) } });
const idParam = (name: string) => [{ name, in: 'path', required: true, schema: { type: 'string' } }];
const DOC = {
  openapi: '3.0.3',
  info: { title: 'Members (test)', version: '1' },
  components: {
    schemas: {
      Member: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          email: { type: 'string', nullable: true },
          external_id: { type: 'string', nullable: true },
          name: { type: 'string', nullable: true },
          created_at: { type: 'integer' },
          updated_at: { type: 'integer' },
          comments: { type: 'object', properties: { data: { type: 'array', items: { type: 'object' } }, total_count: { type: 'integer' } } },
        },
      },
      MemberInput: { type: 'object', properties: { email: { type: 'string' }, external_id: { type: 'string' }, name: { type: 'string' } } },
      Comment: {
        type: 'object',
        properties: { id: { type: 'string' }, text: { type: 'string' }, created_at: { type: 'integer' }, member: { type: 'string' } },
      },
      Account: { type: 'object', properties: { id: { type: 'string' }, key: { type: 'string' }, name: { type: 'string' } } },
    },
  },
  paths: {
    '/members': {
      get: { responses: ok({ type: 'object', properties: { data: { type: 'array', items: { $ref: '#/components/schemas/Member' } } } }) },
      post: { requestBody: json({ $ref: '#/components/schemas/MemberInput' }), responses: ok({ $ref: '#/components/schemas/Member' }) },
    },
    '/members/{member_id}': {
      parameters: idParam('member_id'),
      get: { responses: ok({ $ref: '#/components/schemas/Member' }) },
      put: { requestBody: json({ $ref: '#/components/schemas/MemberInput' }), responses: ok({ $ref: '#/components/schemas/Member' }) },
    },
    '/members/{member_id}/name': {
      parameters: idParam('member_id'),
      put: { requestBody: json({ type: 'object', properties: { name: { type: 'string' } } }), responses: ok({ $ref: '#/components/schemas/Member' }) },
    },
    '/members/{member_id}/comments': {
      parameters: idParam('member_id'),
      get: {
        responses: ok({ type: 'object', properties: { data: { type: 'array', items: { $ref: '#/components/schemas/Comment' } }, total: { type: 'integer' } } }),
      },
      post: {
        requestBody: json({ type: 'object', required: ['text'], properties: { text: { type: 'string' } } }),
        responses: ok({ $ref: '#/components/schemas/Comment' }),
      },
    },
    '/comments/{comment_id}': { parameters: idParam('comment_id'), get: { responses: ok({ $ref: '#/components/schemas/Comment' }) } },
    '/accounts': {
      post: {
        requestBody: json({ type: 'object', properties: { key: { type: 'string' }, name: { type: 'string' } } }),
        responses: ok({ $ref: '#/components/schemas/Account' }),
      },
    },
    '/labels': {
      post: {
        requestBody: json({ type: 'object', properties: { name: { type: 'string' } } }),
        responses: ok({ type: 'object', properties: { data: { type: 'object', properties: { labelId: { type: 'string' } } } } }),
      },
    },
    '/labels/{label_id}': {
      parameters: idParam('label_id'),
      get: { responses: ok({ type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } } }) },
    },
    '/accounts/{account_id}': { parameters: idParam('account_id'), get: { responses: ok({ $ref: '#/components/schemas/Account' }) } },
  },
};

const SIDECAR = `
records: 3
resources:
  members:
    template: { id: "{{id}}", email: null, external_id: null, name: "{{team}} member", created_at: "{{now}}", updated_at: "{{now}}", comments: { data: [], total_count: 0 } }
    seed: { email: "m{{n}}@example.test" }
    timestamps: { updated: updated_at, unix: true }
    unique: { fields: [email, external_id], message: "taken by {{id}} ({{field}})" }
  comments:
    records: 0
    template: { id: "{{id}}", text: null, created_at: "{{now}}", member: "{{member_id}}" }
    parent: { param: member_id, resource: members, append: { to: comments.data, item: { id: "{{id}}", text: "{{text}}" }, count: comments.total_count } }
  labels:
    records: 0
    created_answer: { data: { labelId: "{{id}}" } }
  accounts:
    records: 0
    upsert: key
    timestamps: { created: created_ms, unix_ms: true }
pages:
  "GET /members/{member_id}/comments": { resource: comments, order: newest_first, default: 100, response: { data: "{{records}}", total: "{{total}}" } }
`;

describe('generic store: write rules', () => {
  let sim: OpenApiSimulator;
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Rec }> => {
    const res = await fetch(`${sim.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Rec) };
  };
  const members = (): Rec[] => [...(sim.resources.get('members')?.records.values() ?? [])].map((s) => s.record);
  beforeAll(async () => {
    sim = await startOpenApiSimulator({
      description: new Description(DOC),
      sidecar: parseSidecar(SIDECAR),
      vars: { team: 'Blue' },
      handlers: {
        // Checks and reshapes the write, then lets the store answer.
        'POST /members': ({ body }) => {
          if (body.name === 'forbidden') throw new SimulatorError(400, 'invalid', 'no such name');
          if (typeof body.name === 'string') body.name = body.name.toUpperCase();
          return undefined;
        },
      },
    });
  });
  afterAll(() => sim.close());

  it('fills template variables given by the caller', () => {
    expect(members().map((m) => [m.name, m.email])).toEqual([
      ['Blue member', 'm1@example.test'],
      ['Blue member', 'm2@example.test'],
      ['Blue member', 'm3@example.test'],
    ]);
  });

  it('refuses a repeated unique value with 409 conflict (text trimmed, case ignored), but not the record its own', async () => {
    const first = members()[0] as Rec;
    const dup = await call('POST', '/members', { email: ' M1@Example.TEST' });
    expect(dup.status).toBe(409);
    expect(JSON.stringify(dup.body)).toContain(`taken by ${String(first.id)} (email)`);
    const created = await call('POST', '/members', { email: 'new@example.test', external_id: 'x-1', name: 'Ada' });
    expect(created.status).toBe(200);
    // The handler reshaped the body before the store wrote it.
    expect(created.body).toMatchObject({ email: 'new@example.test', external_id: 'x-1', name: 'ADA', comments: { data: [], total_count: 0 } });
    expect((await call('POST', '/members', { name: 'forbidden' })).status).toBe(400);
    expect((await call('PUT', `/members/${String(created.body.id)}`, { email: 'new@example.test', name: 'Ada L' })).status).toBe(200);
    const clash = await call('PUT', `/members/${String(first.id)}`, { external_id: 'x-1' });
    expect(clash.status).toBe(409);
    expect(JSON.stringify(clash.body)).toContain(`taken by ${String(created.body.id)} (external_id)`);
  });

  it('stamps updates in Unix seconds when timestamps.unix is set', async () => {
    const id = String(members()[1]?.id);
    const before = Math.floor(Date.now() / 1000);
    const updated = await call('PUT', `/members/${id}`, { name: 'Renamed' });
    expect(updated.body.updated_at).toBeGreaterThanOrEqual(before);
    expect(Number.isInteger(updated.body.updated_at)).toBe(true);
  });

  it('updates the item with a PUT on a word after its path (PUT /members/{id}/name)', async () => {
    const id = String(members()[0]?.id);
    const updated = await call('PUT', `/members/${id}/name`, { name: 'Named by word' });
    expect(updated.body).toMatchObject({ id, name: 'Named by word' });
    expect((await call('GET', `/members/${id}`)).body.name).toBe('Named by word');
  });

  it('answers a create with created_answer, the new record kept (a vendor answering only the id)', async () => {
    const created = await call('POST', '/labels', { name: 'urgent' });
    const id = (created.body.data as Rec | undefined)?.labelId;
    expect(typeof id).toBe('string');
    expect(created.body).toEqual({ data: { labelId: id } });
    expect((await call('GET', `/labels/${String(id)}`)).body).toMatchObject({ id, name: 'urgent' });
  });

  it('stamps creates in Unix milliseconds when timestamps.unix_ms is set', async () => {
    const before = Date.now();
    const created = await call('POST', '/accounts', { key: 'ms-1', name: 'Stamped' });
    expect(Number.isInteger(created.body.created_ms)).toBe(true);
    expect(created.body.created_ms).toBeGreaterThanOrEqual(before);
    expect(created.body.created_ms).toBeLessThanOrEqual(Date.now());
  });

  it('upserts: a create naming an existing key updates that record', async () => {
    const a = await call('POST', '/accounts', { key: 'k1', name: 'First' });
    const b = await call('POST', '/accounts', { key: 'k1', name: 'Second' });
    expect(b.body.id).toBe(a.body.id);
    expect((await call('GET', `/accounts/${String(a.body.id)}`)).body).toMatchObject({ key: 'k1', name: 'Second' });
    expect((await call('POST', '/accounts', { key: 'k2', name: 'Other' })).body.id).not.toBe(a.body.id);
    expect(sim.resources.get('accounts')?.records.size).toBe(3);
  });

  it('keeps nested records under an existing parent, referenced from it, listed newest first', async () => {
    expect((await call('POST', '/members/nope/comments', { text: 'x' })).status).toBe(404);
    expect((await call('GET', '/members/nope/comments')).status).toBe(404);
    const id = String(members()[2]?.id);
    const one = await call('POST', `/members/${id}/comments`, { text: 'hello' });
    const two = await call('POST', `/members/${id}/comments`, { text: 'again' });
    expect(one.body).toMatchObject({ text: 'hello', id: expect.any(String), member: id });
    expect((await call('GET', `/comments/${String(one.body.id)}`)).body).toEqual(one.body);
    expect((await call('GET', `/members/${id}`)).body.comments).toEqual({
      data: [
        { id: one.body.id, text: 'hello' },
        { id: two.body.id, text: 'again' },
      ],
      total_count: 2,
    });
    expect((await call('GET', `/members/${id}/comments`)).body).toEqual({ data: [two.body, one.body], total: 2 });
    expect((await call('GET', `/members/${String(members()[0]?.id)}/comments`)).body).toEqual({ data: [], total: 0 });
  });

  it('refuses rules the loader does not know, and a parent that names no resource', async () => {
    expect(() => parseSidecar('resources: { members: { unique: { fields: [email], status: 409 } } }')).toThrow(/unique/);
    expect(() => parseSidecar('resources: { members: { upsert: 3 } }')).toThrow(/upsert/);
    await expect(
      startOpenApiSimulator({
        description: new Description(DOC),
        sidecar: parseSidecar('resources: { comments: { parent: { param: member_id, resource: nothing } } }'),
      }),
    ).rejects.toThrow(/parent names no resource nothing/);
  });
});

describe('generic store: records the caller keeps (LazyRecords)', () => {
  let sim: OpenApiSimulator;
  let made = 0;
  const ids = Array.from({ length: 1000 }, (_, i) => `m${i}`);
  const lazy = new LazyRecords(ids, (id) => {
    made++;
    return { id, email: `${id}@example.test`, name: `Generated ${id}`, created_at: 1, updated_at: 1, comments: { data: [], total_count: 0 } };
  });
  beforeAll(async () => {
    sim = await startOpenApiSimulator({
      description: new Description(DOC),
      sidecar: parseSidecar('resources: { members: { timestamps: { updated: updated_at, unix: true } } }'),
      records: { members: lazy },
    });
  });
  afterAll(() => sim.close());

  it('generates a record when it is read, keeps it once changed, and seeds nothing over it', async () => {
    expect(made).toBe(0);
    expect(sim.resources.get('members')?.records).toBe(lazy);
    const got = await fetch(`${sim.url}/members/m500`);
    expect(await got.json()).toMatchObject({ id: 'm500', name: 'Generated m500' });
    const put = await fetch(`${sim.url}/members/m500`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Changed' }),
    });
    expect(put.status).toBe(200);
    expect(lazy.peek('m500')).toMatchObject({ name: 'Changed' });
    expect(lazy.peek('m501')).toMatchObject({ name: 'Generated m501' });
    expect((await fetch(`${sim.url}/members/m1000`)).status).toBe(404);
  });

  it('keeps stored order through creates and deletes; its source renders slices without keeping them', async () => {
    const created = (await (
      await fetch(`${sim.url}/members`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'z@example.test' }) })
    ).json()) as Rec;
    expect(lazy.size).toBe(1001);
    expect([...lazy.keys()].at(-1)).toBe(created.id);
    expect(lazy.delete('m0')).toBe(true);
    expect(lazy.has('m0')).toBe(false);
    expect([...lazy.keys()].slice(0, 2)).toEqual(['m1', 'm2']);
    const source = lazy.source((r) => r.id);
    expect(source.size()).toBe(1000);
    expect(source.slice(498, 500)).toEqual(['m499', 'm500']);
    expect(source.indexOf(String(created.id))).toBe(999);
    expect(sim.removeRecord('members', 'm1')).toBe(true);
    expect(source.slice(0, 1)).toEqual(['m2']);
  });
});
