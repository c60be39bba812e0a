/**
 * Rate limits keyed finer than the connector (src/engine/rate-buckets.ts, src/http/buckets.ts):
 * `rate_limit.key` gives each key its own bucket at the manifest's rate, `rate_limit.global` caps
 * them all, an action's own `rate_limit` is its tier, `rate_limit.headers` learns a spent bucket
 * from an answer, and the live buckets are bounded (LRU). A fake clock drives every wait: what is
 * asserted is which requests were sent by which (fake) time, never how long anything took.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConnectorRuntime } from '../../src/index.ts';
import { BucketedThrottle } from '../../src/http/buckets.ts';
import { RateLimiter, ThrottleRefused } from '../../src/http/index.ts';
import { loadManifestText } from '../../src/manifest/index.ts';
import { mutate, problems } from '../helpers/manifest.ts';

type Rec = Record<string, any>;

const NOTE = (id: string) => ({
  id,
  title: 'Kick-off',
  owner: { name: 'A', email: 'a@example.com' },
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-01T00:00:00Z',
});
const A = 'not_AAAAAAAAAAAAAA';
const B = 'not_BBBBBBBBBBBBBB';

/** A fake upstream answering every note get at once, with `headers` (by note id); the paths asked, in order. */
function upstream(headers: Record<string, Record<string, string>> = {}) {
  const seen: string[] = [];
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(new Request(input, init).url);
    seen.push(url.pathname);
    const id = url.pathname.split('/').pop() ?? '';
    const body = url.pathname === '/v1/notes' ? { notes: [], hasMore: false, cursor: null } : NOTE(id);
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json', ...(headers[id] ?? {}) } });
  }) as typeof fetch;
  return { seen, fetchImpl };
}

/** Granola's manifest with its rate_limit (and the notes actions') changed. */
function runtime(change: (m: Rec) => void, fetchImpl: typeof fetch): ConnectorRuntime {
  const manifest = loadManifestText(mutate(change), 'test.yaml');
  return new ConnectorRuntime(manifest, { api_key: 'grn_test' } as never, {
    baseUrl: 'https://api.example.com',
    fetch: fetchImpl,
    retry: { baseDelayMs: 1, maxAttempts: 1 },
  });
}

const notes = (seen: string[], id: string) => seen.filter((p) => p === `/v1/notes/${id}`).length;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('rate_limit.key: a bucket per key', () => {
  it('one busy key waits for its own bucket; another key is served at once', async () => {
    const { seen, fetchImpl } = upstream();
    const rt = runtime((m) => (m.rate_limit = { requests: 1, window_ms: 1000, burst: 1, key: '{{params.note_id}}' }), fetchImpl);
    const calls = [A, A, B].map((id) => rt.execute('notes', 'get', { note_id: id }));
    await vi.advanceTimersByTimeAsync(0);
    expect([notes(seen, A), notes(seen, B)]).toEqual([1, 1]);
    await vi.advanceTimersByTimeAsync(1100);
    expect([notes(seen, A), notes(seen, B)]).toEqual([2, 1]);
    await Promise.all(calls);
  });

  it('without a key, the connector has one bucket, as before', async () => {
    const { seen, fetchImpl } = upstream();
    const rt = runtime((m) => (m.rate_limit = { requests: 1, window_ms: 1000, burst: 1 }), fetchImpl);
    const calls = [A, B].map((id) => rt.execute('notes', 'get', { note_id: id }));
    await vi.advanceTimersByTimeAsync(0);
    expect(seen).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1100);
    expect(seen).toHaveLength(2);
    await Promise.all(calls);
  });

  it('rate_limit.global caps every key together', async () => {
    const { seen, fetchImpl } = upstream();
    const rt = runtime(
      (m) => (m.rate_limit = { requests: 5, window_ms: 1000, key: '{{params.note_id}}', global: { requests: 1, window_ms: 1000, burst: 1 } }),
      fetchImpl,
    );
    const calls = [A, B].map((id) => rt.execute('notes', 'get', { note_id: id }));
    await vi.advanceTimersByTimeAsync(0);
    expect(seen).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1100);
    expect(seen).toHaveLength(2);
    await Promise.all(calls);
  });

  it("an action's own rate_limit is its tier: a spent get bucket does not hold back list", async () => {
    const { seen, fetchImpl } = upstream();
    const rt = runtime((m) => {
      m.rate_limit = { requests: 100, window_ms: 1000 };
      m.entities.notes.actions.get.rate_limit = { requests: 1, window_ms: 10_000, burst: 1 };
    }, fetchImpl);
    const gets = [A, B].map((id) => rt.execute('notes', 'get', { note_id: id }));
    await vi.advanceTimersByTimeAsync(0);
    expect(seen.filter((p) => p.startsWith('/v1/notes/'))).toHaveLength(1);
    await rt.execute('notes', 'list', {});
    expect(seen.filter((p) => p === '/v1/notes')).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(11_000);
    await Promise.all(gets);
    expect(seen.filter((p) => p.startsWith('/v1/notes/'))).toHaveLength(2);
  });
});

describe('rate_limit.headers: a spent bucket learned from an answer', () => {
  const learning = (m: Rec) =>
    (m.rate_limit = {
      requests: 100,
      window_ms: 1000,
      key: '{{params.note_id}}',
      headers: { remaining: 'X-RateLimit-Remaining', reset_after: { name: 'X-RateLimit-Reset-After', format: 'seconds' } },
    });

  it('remaining 0 holds the next call of that bucket for reset_after, not the other buckets', async () => {
    const { seen, fetchImpl } = upstream({ [A]: { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset-After': '2.5' } });
    const rt = runtime(learning, fetchImpl);
    await rt.execute('notes', 'get', { note_id: A });
    const again = rt.execute('notes', 'get', { note_id: A });
    await rt.execute('notes', 'get', { note_id: B });
    await vi.advanceTimersByTimeAsync(2000);
    expect([notes(seen, A), notes(seen, B)]).toEqual([1, 1]);
    await vi.advanceTimersByTimeAsync(600);
    await again;
    expect(notes(seen, A)).toBe(2);
  });

  it('remaining above 0, or no header, changes nothing', async () => {
    const { seen, fetchImpl } = upstream({ [A]: { 'X-RateLimit-Remaining': '3', 'X-RateLimit-Reset-After': '9' } });
    const rt = runtime(learning, fetchImpl);
    await rt.execute('notes', 'get', { note_id: A });
    await rt.execute('notes', 'get', { note_id: A });
    await rt.execute('notes', 'get', { note_id: B });
    expect(seen).toHaveLength(3);
  });
});

describe('BucketedThrottle: bounded buckets', () => {
  const rate = { requests: 1, window_ms: 1000, burst: 1 };

  it('keeps at most maxKeys buckets, dropping the least recently used', async () => {
    const t = new BucketedThrottle(null, (_id, r) => new RateLimiter(r.requests, r.window_ms, r.burst), 3);
    for (let i = 0; i < 50; i++) await t.acquire({ bucket: { id: `k${i}`, rate } });
    expect(t.size).toBe(3);
    expect(t.evicted).toBe(47);
  });

  it('drops a full bucket before one whose budget is spent, so a hostile key stream does not reset a busy key', async () => {
    const t = new BucketedThrottle(null, (_id, r) => new RateLimiter(r.requests, r.window_ms, r.burst), 2);
    await t.acquire({ bucket: { id: 'busy', rate } });
    const full = t.bucket({ id: 'idle', rate });
    expect((full as RateLimiter).full).toBe(true);
    t.bucket({ id: 'busy', rate }); // busy is now the most recently used...
    t.bucket({ id: 'new', rate }); // ...and idle (full) goes
    t.bucket({ id: 'newer', rate }); // then new (full), not busy
    await expect(t.acquire({ bucket: { id: 'busy', rate }, maxWaitMs: 0 })).rejects.toBeInstanceOf(ThrottleRefused);
  });

  it('a call is refused when its bucket is spent beyond its longest wait; pauseFor holds one bucket only', async () => {
    const t = new BucketedThrottle(null, (_id, r) => new RateLimiter(r.requests, r.window_ms, r.burst));
    t.pauseFor(5000, { id: 'a', rate });
    const e = await t.acquire({ bucket: { id: 'a', rate }, maxWaitMs: 100 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ThrottleRefused);
    expect((e as ThrottleRefused).reason).toBe('paused');
    await t.acquire({ bucket: { id: 'b', rate }, maxWaitMs: 0 });
  });
});

describe('the loader', () => {
  it('checks the key templates: roots, and an action key names only declared params', () => {
    const bad = mutate((m) => {
      m.rate_limit = { requests: 5, window_ms: 1000, key: '{{body.x}}' };
      m.entities.notes.actions.get.rate_limit = { requests: 1, window_ms: 1000, key: '{{params.nope}}' };
    });
    const found = problems(bad);
    expect(found.some((p) => p.includes('rate_limit.key') && p.includes('unknown variable "body.x"'))).toBe(true);
    expect(found.some((p) => p.includes('actions.get.rate_limit.key') && p.includes('"params.nope" is not a declared param'))).toBe(true);
  });

  it('takes a connector key over params it does not check by name, and action keys over the action', () => {
    const ok = mutate((m) => {
      m.rate_limit = { requests: 5, window_ms: 1000, key: '{{params.note_id}}', max_keys: 50, global: { requests: 50, window_ms: 1000 } };
      m.entities.notes.actions.get.rate_limit = { requests: 1, window_ms: 1000, key: '{{action}}:{{params.note_id}}' };
    });
    expect(problems(ok)).toEqual([]);
  });
});

describe('docs/manifest.md', () => {
  it('the Rate-limit buckets example loads (its action over Granola’s notes create)', async () => {
    const { readFileSync } = await import('node:fs');
    const { parse } = await import('yaml');
    const doc = readFileSync('docs/manifest.md', 'utf8');
    const block = /<!-- rate-limit-example -->\n```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
    const example = parse(block ?? '') as Rec;
    const own = example.entities.records.actions.create.rate_limit as Rec;
    const text = mutate((m) => {
      m.rate_limit = example.rate_limit;
      m.entities.notes.actions.get.rate_limit = { ...own, key: own.key.replace('params.channel', 'params.note_id') };
    });
    expect(problems(text)).toEqual([]);
  });
});
