/**
 * Generic simulator keys Granola's sidecar brought, on a small description of our own (a
 * "memos" API): ids shaped like a prefixed example, list items cut to an item schema that allows
 * nothing else, fields only an include parameter asks for, newest-first lists whose next-page
 * tokens survive records added meanwhile, the token-bucket rate limit that only accepted
 * credentials spend, and the record API tests change upstream data with.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, startOpenApiSimulator, type OpenApiSimulator, type Sidecar } from '../../src/simulator/index.ts';

type Rec = Record<string, unknown>;

const memo = {
  type: 'object',
  properties: {
    id: { type: 'string', example: 'mem_Ab3dE5gH9k' },
    title: { type: 'string' },
    body: { type: 'string' },
    attachments: { type: 'array', items: { type: 'string' } },
    created_at: { type: 'string', format: 'date-time' },
  },
};
const DOC = {
  openapi: '3.0.3',
  info: { title: 'Memos (test)', version: '1' },
  components: {
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    schemas: {
      Memo: memo,
      MemoSummary: { type: 'object', additionalProperties: false, properties: { id: { type: 'string' }, title: { type: 'string' } } },
      MemoList: {
        type: 'object',
        properties: { memos: { type: 'array', items: { $ref: '#/components/schemas/MemoSummary' } }, next: { type: 'string', nullable: true } },
      },
    },
  },
  security: [{ bearer: [] }],
  paths: {
    '/memos': {
      get: {
        parameters: [
          { name: 'cursor', in: 'query', schema: { type: 'string' } },
          { name: 'limit', in: 'query', schema: { type: 'integer', default: 2 } },
        ],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/MemoList' } } } } },
      },
    },
    '/memos/{memo_id}': {
      get: {
        parameters: [
          { name: 'memo_id', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'expand', in: 'query', schema: { type: 'string' } },
        ],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Memo' } } } } },
      },
    },
  },
};
const SIDECAR: Sidecar = {
  auth: { tokens: ['tok'] },
  pagination: { next_cursor: 'next', order: 'newest_first' },
  rate_limit: { limit: 2, window_seconds: 1000, bucket: true, per_credential: true, headers: { remaining: 'x-left' } },
  resources: {
    memos: {
      records: 5,
      timestamps: { created: 'created_at' },
      include: { param: 'expand', fields: ['body', 'attachments'] },
      template: { id: '{{id}}', title: 'Memo {{n}}', body: 'Text {{n}}', attachments: ['a.pdf'] },
    },
  },
};

let sim: OpenApiSimulator;
const call = async (path: string, token: string | null = 'tok'): Promise<{ status: number; headers: Headers; body: Rec }> => {
  const r = await fetch(`${sim.url}${path}`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  return { status: r.status, headers: r.headers, body: (await r.json()) as Rec };
};

beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: new Description(structuredClone(DOC) as never), sidecar: SIDECAR });
});
afterAll(() => sim.close());

describe('records and their views', () => {
  it('seeds ids shaped like a prefixed example, and answers a get without the include-only fields unless asked', async () => {
    sim.setRateLimit(false);
    const ids = [...(sim.resources.get('memos')?.records.keys() ?? [])];
    expect(ids).toHaveLength(5);
    for (const id of ids) expect(id).toMatch(/^mem_[A-Za-z0-9]{10}$/);
    const plain = await call(`/memos/${ids[0]}`);
    expect(plain.body).toEqual({ id: ids[0], title: 'Memo 1', created_at: expect.any(String) });
    expect((await call(`/memos/${ids[0]}?expand=body`)).body).toMatchObject({ body: 'Text 1' });
    expect((await call(`/memos/${ids[0]}?expand=body`)).body).not.toHaveProperty('attachments');
    expect((await call(`/memos/${ids[0]}?expand=attachments,body`)).body).toMatchObject({ body: 'Text 1', attachments: ['a.pdf'] });
  });

  it('lists newest first, items cut to the item schema, and a next-page token survives a record added meanwhile', async () => {
    sim.setRateLimit(false);
    const newest = [...(sim.resources.get('memos')?.records.keys() ?? [])].reverse();
    const first = await call('/memos');
    expect(first.body['memos']).toEqual(newest.slice(0, 2).map((id, i) => ({ id, title: `Memo ${String(5 - i)}` })));
    const added = sim.addRecord('memos', { title: 'Late' });
    const seen = (first.body['memos'] as Rec[]).map((m) => m['id']);
    let next = first.body['next'] as string | null;
    while (next !== null) {
      const page = await call(`/memos?cursor=${next}`);
      seen.push(...(page.body['memos'] as Rec[]).map((m) => m['id']));
      next = page.body['next'] as string | null;
    }
    expect(seen).toEqual(newest);
    expect(((await call('/memos')).body['memos'] as Rec[])[0]).toEqual({ id: added['id'], title: 'Late' });
  });

  it('changes records through addRecord, updateRecord and removeRecord', async () => {
    sim.setRateLimit(false);
    const added = sim.addRecord('memos', { body: 'fresh' });
    expect(added).toMatchObject({ title: expect.stringMatching(/^Memo \d+$/), body: 'fresh' });
    expect(sim.updateRecord('memos', String(added['id']), { title: 'Edited' })).toMatchObject({ title: 'Edited', body: 'fresh' });
    expect((await call(`/memos/${String(added['id'])}`)).body).toMatchObject({ title: 'Edited' });
    expect(sim.updateRecord('memos', 'mem_nonexistent', { title: 'x' })).toBeUndefined();
    expect(sim.removeRecord('memos', String(added['id']))).toBe(true);
    expect(sim.removeRecord('memos', String(added['id']))).toBe(false);
    expect((await call(`/memos/${String(added['id'])}`)).status).toBe(404);
    expect(() => sim.addRecord('widgets')).toThrow(/no resource widgets/);
  });
});

describe('rate_limit.bucket with per_credential', () => {
  it('spends the bucket only on accepted credentials, and answers 429 with Retry-After once it is empty', async () => {
    sim.setRateLimit({ ...(SIDECAR.rate_limit as NonNullable<Sidecar['rate_limit']>) });
    for (let i = 0; i < 3; i++) {
      const refused = await call('/memos', 'wrong');
      expect(refused.status).toBe(401);
      expect(refused.headers.get('x-left')).toBeNull();
    }
    const a = await call('/memos');
    expect(a.status).toBe(200);
    expect(a.headers.get('x-left')).toBe('1');
    expect((await call('/memos')).status).toBe(200);
    const limited = await call('/memos');
    expect(limited.status).toBe(429);
    // 2 requests per 1000 s: a token comes back in 500 s.
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(400);
    sim.resetRateLimit();
    expect((await call('/memos')).status).toBe(200);
  });
});
