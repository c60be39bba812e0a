import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connect, SwitchboardError } from '../../src/index.ts';
import { createAjv } from '../../src/manifest/index.ts';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';

const ajv = createAjv();
const recordSchema = JSON.parse(readFileSync('generated/granola/schemas/notes.record.json', 'utf8')) as Record<string, unknown>;
delete recordSchema['$comment'];
const validRecord = ajv.compile(recordSchema);

let sim: GranolaSimulator;
beforeAll(async () => {
  sim = await startGranolaSimulator({ size: 120 });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const granola = () => connect('granola', { credentials: { api_key: sim.apiKey }, baseUrl: sim.url, retry: { baseDelayMs: 10 } });

describe('granola notes', () => {
  it('list: a page of notes with meta.cursor and meta.has_more, records valid and as seeded', async () => {
    const page = await granola().execute('notes', 'list', { page_size: 7 });
    expect(page.data).toHaveLength(7);
    expect(page.meta.has_more).toBe(true);
    expect(typeof page.meta.cursor).toBe('string');
    expect(page.data.map((n) => n.id)).toEqual(sim.ids().slice(0, 7));
    for (const n of page.data) {
      expect(validRecord(n), JSON.stringify(validRecord.errors)).toBe(true);
      const seeded = sim.note(n.id);
      expect(n.title).toBe(seeded?.title);
      expect(n.created_at).toBe(seeded?.created_at);
    }
  });

  it('list: the cursor from meta fetches the next page', async () => {
    const first = await granola().execute('notes', 'list', { page_size: 5 });
    const second = await granola().execute('notes', 'list', { page_size: 5, cursor: first.meta.cursor! });
    expect(second.data.map((n) => n.id)).toEqual(sim.ids().slice(5, 10));
  });

  it('list: every page, every note exactly once, within the rate limit (no 429)', async () => {
    const ids: string[] = [];
    for await (const n of granola().records('notes', { page_size: 30 })) ids.push(n.id);
    expect(ids).toEqual(sim.ids());
    expect(sim.requests.every((r) => r.path === '/v1/notes')).toBe(true);
  });

  it('list: date filters are sent as the API expects', async () => {
    const all = sim.ids().map((id) => sim.note(id)!);
    const mid = all[60]!.created_at.slice(0, 10);
    const page = await granola().execute('notes', 'list', { page_size: 30, created_after: mid });
    expect(sim.requests[0]?.query.get('created_after')).toBe(mid);
    for (const n of page.data) expect(n.created_at! >= mid).toBe(true);
    const updated = await granola().execute('notes', 'list', { updated_after: '2100-01-01' });
    expect(updated.data).toEqual([]);
    expect(updated.meta).toEqual({ cursor: null, has_more: false });
  });

  it('get: the note, and its transcript only with include=transcript', async () => {
    const id = sim.ids()[3]!;
    const plain = await granola().execute('notes', 'get', { note_id: id });
    expect(validRecord(plain.data)).toBe(true);
    expect(plain.data.id).toBe(id);
    expect(plain.data.transcript ?? null).toBeNull();
    const full = await granola().execute('notes', 'get', { note_id: id, include: 'transcript' });
    expect(validRecord(full.data)).toBe(true);
    expect(full.data.transcript).toEqual(sim.note(id, { transcript: true })?.transcript);
    expect((full.data.transcript ?? []).length).toBeGreaterThan(0);
  });

  it('get: an unknown note is upstream_not_found with the upstream body in details', async () => {
    const err = await granola()
      .execute('notes', 'get', { note_id: 'not_doesnotexist00' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SwitchboardError);
    expect((err as SwitchboardError).code).toBe('upstream_not_found');
    expect((err as SwitchboardError).details['upstream_status']).toBe(404);
    expect((err as SwitchboardError).details['upstream_body']).toBeTruthy();
  });

  it("a 429 is upstream_rate_limited with Granola's message, marked not executed (error rule), and retried after Retry-After", async () => {
    sim.inject({ path: '/v1/notes', status: 429, json: { message: 'Too many requests' }, headers: { 'retry-after': '0' }, times: 4 });
    const err = await granola()
      .execute('notes', 'list')
      .then(
        () => undefined,
        (e: unknown) => e as SwitchboardError,
      );
    expect(err?.code).toBe('upstream_rate_limited');
    expect(err?.message).toBe('granola: Too many requests');
    expect(err?.details).toMatchObject({ not_executed: true, attempts: 4 });
    sim.inject({ path: '/v1/notes', status: 429, json: { message: 'Too many requests' }, headers: { 'retry-after': '0' } });
    expect((await granola().execute('notes', 'list', { page_size: 3 })).data).toHaveLength(3);
  });

  it("the client-side limiter keeps a burst under Granola's limit: no 429 from the simulator", async () => {
    // A fresh simulator, so no earlier test has spent part of the upstream's budget.
    const fresh = await startGranolaSimulator({ size: 5 });
    const statuses: number[] = [];
    const c = connect('granola', {
      credentials: { api_key: fresh.apiKey },
      baseUrl: fresh.url,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        statuses.push(res.status);
        return res;
      },
    });
    const id = fresh.ids()[0]!;
    await Promise.all(Array.from({ length: 35 }, () => c.execute('notes', 'get', { note_id: id })));
    await fresh.close();
    expect(statuses.filter((s) => s === 429)).toEqual([]);
    expect(statuses).toHaveLength(35);
  });

  it('search in library mode fails with search_hosted_only', async () => {
    await expect(granola().search('notes', { query: {} })).rejects.toMatchObject({ code: 'search_hosted_only' });
  });
});
