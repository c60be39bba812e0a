import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaNote, type GranolaNoteSummary, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';

interface ListBody {
  notes: GranolaNoteSummary[];
  hasMore: boolean;
  cursor: string | null;
}

async function call(sim: GranolaSimulator, path: string, key: string | null = sim.apiKey): Promise<{ status: number; headers: Headers; body: unknown }> {
  const res = await fetch(`${sim.url}${path}`, { headers: key === null ? {} : { authorization: `Bearer ${key}` } });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep the raw text (malformed-body faults)
  }
  return { status: res.status, headers: res.headers, body };
}

/** Follow cursors to the end; `between` runs after each page (to change data mid-iteration). */
async function listAll(sim: GranolaSimulator, query: string, between?: (page: number) => void): Promise<{ ids: string[]; pages: ListBody[] }> {
  const ids: string[] = [];
  const pages: ListBody[] = [];
  let cursor: string | null = null;
  do {
    const sep = query === '' ? '' : '&';
    const r = await call(sim, `/v1/notes?${query}${cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(r.status).toBe(200);
    const body = r.body as ListBody;
    pages.push(body);
    ids.push(...body.notes.map((n) => n.id));
    cursor = body.cursor;
    expect(body.hasMore).toBe(cursor !== null);
    between?.(pages.length);
    if (pages.length > 1000) throw new Error('pagination does not end');
  } while (cursor !== null);
  return { ids, pages };
}

const allNotes = (sim: GranolaSimulator): GranolaNote[] => sim.ids().map((id) => sim.note(id) as GranolaNote);

describe('Granola simulator: listing', () => {
  let sim: GranolaSimulator;
  beforeAll(async () => {
    sim = await startGranolaSimulator({ seed: 7, size: 95, rateLimit: false });
  });
  afterAll(() => sim.close());

  it('pages through every note exactly once, newest first', async () => {
    const { ids, pages } = await listAll(sim, 'page_size=7');
    expect(ids).toHaveLength(95);
    expect(new Set(ids).size).toBe(95);
    expect(ids).toEqual(sim.ids());
    expect(pages).toHaveLength(14);
    expect(pages.at(-1)).toMatchObject({ hasMore: false, cursor: null });
    const created = pages.flatMap((p) => p.notes.map((n) => n.created_at));
    expect([...created].sort().reverse()).toEqual(created);
  });

  it('returns note summaries (no detail fields) with a default page size of 10', async () => {
    const r = await call(sim, '/v1/notes');
    const body = r.body as ListBody;
    expect(body.notes).toHaveLength(10);
    expect(body.hasMore).toBe(true);
    expect(typeof body.cursor).toBe('string');
    for (const n of body.notes) {
      expect(Object.keys(n).sort()).toEqual(['created_at', 'id', 'object', 'owner', 'title', 'updated_at']);
      expect(n.id).toMatch(/^not_[A-Za-z0-9]{14}$/);
      expect(n.object).toBe('note');
      expect(n.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/);
    }
  });

  it('keeps a cursor stable while notes are added and removed mid-iteration', async () => {
    const s = await startGranolaSimulator({ seed: 8, size: 50, rateLimit: false });
    try {
      const before = s.ids();
      const removed = before[20] as string;
      let added = '';
      const { ids } = await listAll(s, 'page_size=10', (page) => {
        if (page === 1) {
          s.remove(removed);
          added = s.add({ title: 'Late addition' }).id;
        }
      });
      // The new note is newer than the cursor position, so this iteration does not see it.
      expect(ids).toEqual(before.filter((id) => id !== removed));
      expect(s.ids()[0]).toBe(added);
    } finally {
      await s.close();
    }
  });

  const cases: [string, { query: (notes: GranolaNote[]) => string; want: (n: GranolaNote, notes: GranolaNote[]) => boolean }][] = [
    [
      'created_after (date: midnight UTC, exclusive)',
      { query: (ns) => `created_after=${ns[30]?.created_at.slice(0, 10)}`, want: (n, ns) => n.created_at > `${ns[30]?.created_at.slice(0, 10)}T00:00:00Z` },
    ],
    ['created_before (datetime)', { query: (ns) => `created_before=${ns[40]?.created_at}`, want: (n, ns) => n.created_at < (ns[40]?.created_at ?? '') }],
    [
      'created_after + created_before together',
      {
        query: (ns) => `created_after=${ns[60]?.created_at}&created_before=${ns[10]?.created_at}`,
        want: (n, ns) => n.created_at > (ns[60]?.created_at ?? '') && n.created_at < (ns[10]?.created_at ?? ''),
      },
    ],
    [
      'updated_after (datetime with offset)',
      {
        query: (ns) => `updated_after=${encodeURIComponent((ns[25]?.updated_at ?? '').replace('Z', '+00:00'))}`,
        want: (n, ns) => n.updated_at > (ns[25]?.updated_at ?? ''),
      },
    ],
  ];
  it.each(cases)('filters by %s across pages', async (_name, { query, want }) => {
    const notes = allNotes(sim);
    const expected = notes.filter((n) => want(n, notes)).map((n) => n.id);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(notes.length);
    const { ids } = await listAll(sim, `page_size=4&${query(notes)}`);
    expect(ids).toEqual(expected);
  });

  it('shows a touched note to an updated_after sync, with its patched fields', async () => {
    const target = sim.ids()[50] as string;
    const since = new Date(Date.now() - 1000).toISOString();
    expect(((await call(sim, `/v1/notes?updated_after=${since}`)).body as ListBody).notes).toEqual([]);
    const touched = sim.touch(target, { title: 'Renamed meeting' });
    const body = (await call(sim, `/v1/notes?updated_after=${since}`)).body as ListBody;
    expect(body.notes.map((n) => n.id)).toEqual([target]);
    expect(body.notes[0]).toMatchObject({ title: 'Renamed meeting', updated_at: touched.updated_at });
    expect(Math.max(...allNotes(sim).map((n) => Date.parse(n.updated_at)))).toBe(Date.parse(touched.updated_at));
  });
});

describe('Granola simulator: single notes', () => {
  let sim: GranolaSimulator;
  beforeAll(async () => {
    sim = await startGranolaSimulator({ seed: 3, size: 40, rateLimit: false });
  });
  afterAll(() => sim.close());

  it('returns the full note, and the transcript only with include=transcript', async () => {
    const id = sim.ids()[3] as string;
    const plain = await call(sim, `/v1/notes/${id}`);
    expect(plain.status).toBe(200);
    const note = plain.body as GranolaNote;
    expect(note).toMatchObject({ id, object: 'note' });
    expect(note).not.toHaveProperty('transcript');
    for (const k of ['title', 'owner', 'created_at', 'updated_at', 'calendar_event', 'attendees', 'folder_membership', 'summary_text', 'summary_markdown'])
      expect(note).toHaveProperty(k);
    expect(note.attendees.length).toBeGreaterThan(0);
    for (const f of note.folder_membership) expect(f).toMatchObject({ id: expect.stringMatching(/^fol_/), object: 'folder' });

    const withT = (await call(sim, `/v1/notes/${id}?include=transcript`)).body as GranolaNote;
    expect({ ...withT, transcript: undefined }).toEqual({ ...note, transcript: undefined });
    expect(withT.transcript?.length).toBeGreaterThan(3);
    for (const seg of withT.transcript ?? []) {
      expect(['microphone', 'speaker']).toContain(seg.speaker.source);
      expect(typeof seg.text).toBe('string');
      expect(seg.end_time >= seg.start_time).toBe(true);
    }
    // Lazily generated, yet the same every time.
    expect((await call(sim, `/v1/notes/${id}?include=transcript`)).body).toEqual(withT);
  });

  it("answers 404 with Granola's error body for an unknown or deleted note", async () => {
    const unknown = await call(sim, '/v1/notes/not_AAAAAAAAAAAAAA');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: 'Note not found' });
    const id = sim.ids()[0] as string;
    expect(sim.remove(id)).toBe(true);
    expect((await call(sim, `/v1/notes/${id}`)).status).toBe(404);
    expect(sim.remove(id)).toBe(false);
  });

  it('is deterministic per seed', async () => {
    const again = await startGranolaSimulator({ seed: 3, size: 40 });
    const other = await startGranolaSimulator({ seed: 4, size: 40 });
    try {
      const id = again.ids()[5] as string;
      expect(again.apiKey).toBe(sim.apiKey);
      expect(again.note(id, { transcript: true })).toEqual(sim.note(id, { transcript: true }));
      expect(other.ids()).not.toEqual(again.ids());
      expect(other.apiKey).not.toBe(again.apiKey);
    } finally {
      await Promise.all([again.close(), other.close()]);
    }
  });
});

describe('Granola simulator: errors', () => {
  let sim: GranolaSimulator;
  beforeAll(async () => {
    sim = await startGranolaSimulator({ size: 20, rateLimit: false });
  });
  afterAll(() => sim.close());

  it.each([
    ['no Authorization header', null],
    ['a wrong key', 'grn_wrongwrongwrong'],
  ])('answers 401 for %s', async (_name, key) => {
    const r = await call(sim, '/v1/notes', key);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ message: 'Unauthorized - Invalid API key' });
  });

  const bad: [string, string, string][] = [
    ['page_size=0', '/v1/notes?page_size=0', 'page_size must be an integer between 1 and 30'],
    ['page_size=31', '/v1/notes?page_size=31', 'page_size must be an integer between 1 and 30'],
    ['page_size=abc', '/v1/notes?page_size=abc', 'page_size must be an integer between 1 and 30'],
    ['a month that does not exist', '/v1/notes?created_after=2026-13-01', 'created_after must be a date (YYYY-MM-DD) or an ISO 8601 datetime'],
    ['a non-date', '/v1/notes?updated_after=yesterday', 'updated_after must be a date (YYYY-MM-DD) or an ISO 8601 datetime'],
    ['a bad datetime', '/v1/notes?created_before=2026-01-01T25:00:00Z', 'created_before must be a date (YYYY-MM-DD) or an ISO 8601 datetime'],
    ['a forged cursor', '/v1/notes?cursor=not-a-cursor', 'Invalid cursor'],
    ['an unknown include', `/v1/notes/not_AAAAAAAAAAAAAA?include=summary`, 'include must be "transcript"'],
  ];
  it.each(bad)('answers 400 for %s', async (_name, path, message) => {
    const r = await call(sim, path);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message });
  });

  it('accepts the page_size bounds', async () => {
    expect(((await call(sim, '/v1/notes?page_size=1')).body as ListBody).notes).toHaveLength(1);
    expect(((await call(sim, '/v1/notes?page_size=30')).body as ListBody).notes).toHaveLength(20);
  });
});

describe('Granola simulator: rate limit', () => {
  it('answers 429 with Retry-After and rate-limit headers after a burst of 25', async () => {
    const sim = await startGranolaSimulator({ size: 10 });
    try {
      const results = await Promise.all(Array.from({ length: 40 }, () => call(sim, '/v1/notes?page_size=1')));
      const ok = results.filter((r) => r.status === 200);
      const limited = results.filter((r) => r.status === 429);
      // 25 burst tokens, plus at most a couple refilled (5/s) while the burst is in flight.
      expect(ok.length).toBeGreaterThanOrEqual(25);
      expect(ok.length).toBeLessThanOrEqual(28);
      expect(ok.length + limited.length).toBe(40);
      const r = limited[0];
      expect(r?.body).toEqual({ message: 'Rate limit of 25 requests in 5s exceeded' });
      expect(Number(r?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(r?.headers.get('x-ratelimit-limit')).toBe('25');
      expect(r?.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(ok[0]?.headers.get('x-ratelimit-limit')).toBe('25');

      sim.resetRateLimit();
      expect((await call(sim, '/v1/notes')).status).toBe(200);
    } finally {
      await sim.close();
    }
  });

  it('refills at the sustained rate', async () => {
    const sim = await startGranolaSimulator({ size: 5, rateLimit: { burst: 2, perSecond: 10 } });
    try {
      expect((await call(sim, '/v1/notes')).status).toBe(200);
      expect((await call(sim, '/v1/notes')).status).toBe(200);
      const limited = await call(sim, '/v1/notes');
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('1');
      // At 10/s a token is back within 100 ms; poll (with a deadline) instead of guessing a sleep.
      const deadline = Date.now() + 5000;
      let status = limited.status;
      while (status === 429 && Date.now() < deadline) status = (await call(sim, '/v1/notes')).status;
      expect(status).toBe(200);
    } finally {
      await sim.close();
    }
  });

  it('does not spend tokens on unauthenticated requests', async () => {
    const sim = await startGranolaSimulator({ size: 5, rateLimit: { burst: 1, perSecond: 0.001 } });
    try {
      for (let i = 0; i < 3; i++) expect((await call(sim, '/v1/notes', 'grn_bad')).status).toBe(401);
      expect((await call(sim, '/v1/notes')).status).toBe(200);
    } finally {
      await sim.close();
    }
  });
});

describe('Granola simulator: fault injection', () => {
  let sim: GranolaSimulator;
  beforeAll(async () => {
    sim = await startGranolaSimulator({ size: 10, rateLimit: false });
  });
  afterAll(() => sim.close());

  it('injects statuses with headers, for the given number of requests', async () => {
    sim.inject({ path: '/v1/notes', status: 503, json: { message: 'Service unavailable' }, times: 2 });
    expect((await call(sim, '/v1/notes')).status).toBe(503);
    expect((await call(sim, '/v1/notes')).body).toEqual({ message: 'Service unavailable' });
    expect((await call(sim, '/v1/notes')).status).toBe(200);

    sim.inject({ status: 429, headers: { 'retry-after': '3' }, json: { message: 'Too many requests' } });
    const r = await call(sim, '/v1/notes');
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('3');
  });

  it('injects malformed bodies and latency, and matches paths', async () => {
    const id = sim.ids()[0] as string;
    sim.inject({ path: /^\/v1\/notes\/not_/, text: '{"id": "not_trunc', contentType: 'application/json' });
    expect((await call(sim, '/v1/notes')).status).toBe(200); // list path not matched
    const broken = await call(sim, `/v1/notes/${id}`);
    expect(broken.status).toBe(200);
    expect(broken.body).toBe('{"id": "not_trunc');

    sim.inject({ delayMs: 200 });
    const t0 = Date.now();
    const slow = await call(sim, `/v1/notes/${id}`);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
    expect(slow.status).toBe(200);
  });

  it('logs requests and clears faults on reset', async () => {
    sim.reset();
    sim.inject({ status: 500, times: 5 });
    sim.reset();
    expect((await call(sim, '/v1/notes?page_size=2')).status).toBe(200);
    expect(sim.requests.map((r) => `${r.method} ${r.path} ${r.query.get('page_size')}`)).toEqual(['GET /v1/notes 2']);
  });
});

describe('Granola simulator: benchmark size', () => {
  it('serves 100 000 notes with lazily generated content', async () => {
    const sim = await startGranolaSimulator({ size: 100_000, rateLimit: false });
    try {
      expect(sim.count()).toBe(100_000);
      const first = (await call(sim, '/v1/notes?page_size=30')).body as ListBody;
      expect(first.notes).toHaveLength(30);
      const oldest = sim.ids().at(-1) as string;
      const page = (await call(sim, `/v1/notes?created_before=${sim.note(sim.ids().at(-2) as string)?.created_at}`)).body as ListBody;
      expect(page.notes.map((n) => n.id)).toEqual([oldest]);
      expect(page.hasMore).toBe(false);
    } finally {
      await sim.close();
    }
  });
});
