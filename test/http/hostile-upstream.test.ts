/**
 * Hostile and broken upstreams (issue 11, findings 1, 2, 3, 6, 7): a fault-injecting local HTTP
 * server behind the real transport and interpreter. Each case failed before the bound existed.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, limiterFor, type RuntimeOptions } from '../../src/engine/index.ts';
import { isRefusedAddress } from '../../src/http/egress.ts';
import { RateLimiter, ThrottleRefused } from '../../src/http/index.ts';
import { createUpstreamTransport, type UpstreamTransport } from '../../src/http/upstream-transport.ts';
import { sharedBudget } from '../../src/http/response-limit.ts';
import { testManifest } from '../fixtures/testapi-server.ts';
import { failure } from '../helpers/errors.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface Upstream {
  url: string;
  seen: { url: string; headers: IncomingMessage['headers'] }[];
  handler: Handler;
  close(): Promise<void>;
}

const ok: Handler = (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(req.url?.startsWith('/items/') ? JSON.stringify({ id: 'it_1', n: 1, label: null }) : JSON.stringify({ items: [{ id: 'it_1', n: 1, label: null }] }));
};

async function startUpstream(): Promise<Upstream> {
  const u: Partial<Upstream> & { seen: Upstream['seen']; handler: Handler } = { seen: [], handler: ok };
  const server: Server = createServer((req, res) => {
    u.seen.push({ url: req.url ?? '', headers: req.headers });
    res.on('error', () => undefined);
    u.handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  u.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  u.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return u as Upstream;
}

let up: Upstream;
let other: Upstream;
let transport: UpstreamTransport;
beforeAll(async () => {
  up = await startUpstream();
  other = await startUpstream();
  transport = createUpstreamTransport();
});
afterAll(async () => {
  await transport.close();
  await up.close();
  await other.close();
});
beforeEach(() => {
  up.seen.length = 0;
  other.seen.length = 0;
  up.handler = ok;
  other.handler = ok;
});

function runtime(options: RuntimeOptions = {}): ConnectorRuntime {
  return new ConnectorRuntime(
    testManifest,
    { api_key: 'good-key' },
    { baseUrl: up.url, fetch: transport.fetch, limiter: null, retry: { baseDelayMs: 1 }, ...options },
  );
}

describe('1. a long Retry-After does not freeze the connector', () => {
  it('fails at once with retry_after_ms, holds the connector back only up to the cap, then serves again', async () => {
    let limited = true;
    up.handler = (req, res) => {
      if (limited) return void res.writeHead(429, { 'retry-after': '3600', 'content-type': 'application/json' }).end('{"error":{"message":"slow down"}}');
      ok(req, res);
    };
    const limiter = new RateLimiter(100, 1000, 10);
    const rt = runtime({ limiter, retry: { baseDelayMs: 1, maxRetryAfterMs: 300 } });
    const e = await failure(rt.execute('items', 'get', { id: 'it_1' }));
    expect(e.code).toBe('upstream_rate_limited');
    expect(e.details['retry_after_ms']).toBe(3_600_000);
    expect(e.details['attempts']).toBe(1);
    limited = false;
    // Another entity/action on the same connector: waits at most the 300 ms cap, not an hour.
    await expect(rt.execute('items', 'list', {})).resolves.toMatchObject({ data: [{ id: 'it_1' }] });
    expect(limiter.waitedMs).toBeLessThanOrEqual(400);
  });

  it('with the default cap (60 s) and deadline (60 s), a call behind the pause is refused at once with upstream_rate_limited (reason paused)', async () => {
    up.handler = (_req, res) => void res.writeHead(429, { 'retry-after': '3600' }).end('{}');
    const rt = runtime({ limiter: limiterFor({ requests: 5, window_ms: 1000 }) });
    expect((await failure(rt.execute('items', 'get', { id: 'it_1' }))).code).toBe('upstream_rate_limited');
    const seen = up.seen.length;
    const e = await failure(rt.execute('items', 'list', {}));
    expect(e.code).toBe('upstream_rate_limited');
    expect(e.status).toBe(429);
    expect(e.details['reason']).toBe('paused');
    expect(e.details['retry_after_ms']).toBeGreaterThan(55_000);
    expect(up.seen.length).toBe(seen);
  });
});

describe('2. bounded bodies', () => {
  const streamMegabytes =
    (mb: number, headers: Record<string, string> = {}): Handler =>
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', ...headers });
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      const pump = (): void => {
        while (sent < mb) {
          sent++;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => {
        sent = mb;
      });
      pump();
    };

  it('a streamed body past the cap is cut off with upstream_response_too_large (no Content-Length)', async () => {
    up.handler = streamMegabytes(200);
    const e = await failure(runtime({ maxResponseBytes: 2 * 1024 * 1024 }).execute('items', 'list', {}));
    expect(e.code).toBe('upstream_response_too_large');
    expect(e.details['max_response_bytes']).toBe(2 * 1024 * 1024);
    expect(up.seen.length).toBe(1);
  });

  it('a declared Content-Length past the cap is refused before reading', async () => {
    up.handler = (_req, res) => void res.writeHead(200, { 'content-length': String(300 * 1024 * 1024) }).end();
    const e = await failure(runtime({ maxResponseBytes: 1024 * 1024 }).execute('items', 'list', {}));
    expect(e.code).toBe('upstream_response_too_large');
  });

  it('a gzip bomb stops at the cap on the decompressed output', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20), { level: 9 });
    expect(bomb.length).toBeLessThan(1024 * 1024);
    up.handler = (_req, res) => void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(bomb);
    const e = await failure(runtime({ maxResponseBytes: 1024 * 1024 }).execute('items', 'list', {}));
    expect(e.code).toBe('upstream_response_too_large');
  });

  it('one budget for every call of the transport: a gzip bomb under the per-call cap stops at the budget with upstream_memory_exhausted', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20), { level: 9 });
    up.handler = (_req, res) => void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(bomb);
    const small = createUpstreamTransport({ memoryBudgetBytes: 4 * 1024 * 1024 });
    try {
      // The per-call cap (50 MiB default) would let it expand to 50 MiB; the budget stops it at 4 MiB.
      const e = await failure(runtime({ fetch: small.fetch }).execute('items', 'list', {}));
      expect([e.code, e.status, e.details['memory_budget_bytes']]).toEqual(['upstream_memory_exhausted', 503, 4 * 1024 * 1024]);
      expect(small.budget.peak).toBeLessThanOrEqual(4 * 1024 * 1024);
      expect(small.budget.inUse).toBe(0);
    } finally {
      await small.close();
    }
  });

  /** Each answer: 1.5 MiB of whitespace at once, then (when the test calls open()) the JSON. */
  function heldAnswers(): () => void {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    up.handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(Buffer.alloc(1536 * 1024, 0x20));
      void gate.then(() => res.end(JSON.stringify({ items: [{ id: 'it_1', n: 1, label: null }] })));
    };
    return open;
  }

  it('concurrent calls share the budget: the one that would pass it is refused, the others finish, and every byte is given back', async () => {
    const open = heldAnswers();
    const shared = createUpstreamTransport({ memoryBudgetBytes: 2560 * 1024 });
    try {
      const rt = runtime({ fetch: shared.fetch });
      const calls = [rt.execute('items', 'list', {}), rt.execute('items', 'list', {})].map((p) =>
        p.then(
          (r) => r,
          (e: unknown) => e,
        ),
      );
      // Two answers in flight need 3 MiB of a 2.5 MiB budget: one is refused before the gate opens.
      const first = await Promise.race(calls);
      expect(first).toMatchObject({ code: 'upstream_memory_exhausted' });
      open();
      const settled = await Promise.all(calls);
      expect(settled.filter((r) => (r as { code?: string }).code === 'upstream_memory_exhausted')).toHaveLength(1);
      expect(settled.filter((r) => Array.isArray((r as { data?: unknown }).data))).toHaveLength(1);
      expect(shared.budget.inUse).toBe(0);
      expect(shared.budget.peak).toBeLessThanOrEqual(2560 * 1024);
    } finally {
      open();
      await shared.close();
    }
  });

  it("transports on one shared budget (the service's and its sync worker's, sharedBudget()) hold it together", async () => {
    const open = heldAnswers();
    const memory = sharedBudget();
    const a = createUpstreamTransport({ memoryBudgetBytes: 2560 * 1024, sharedBudget: memory });
    const b = createUpstreamTransport({ memoryBudgetBytes: 2560 * 1024, sharedBudget: memory });
    try {
      // One answer in flight through each: 3 MiB of the one 2.5 MiB budget, so one is refused.
      const calls = [runtime({ fetch: a.fetch }).execute('items', 'list', {}), runtime({ fetch: b.fetch }).execute('items', 'list', {})].map((p) =>
        p.then(
          (r) => r,
          (e: unknown) => e,
        ),
      );
      expect(await Promise.race(calls)).toMatchObject({ code: 'upstream_memory_exhausted' });
      open();
      const settled = await Promise.all(calls);
      expect(settled.filter((r) => Array.isArray((r as { data?: unknown }).data))).toHaveLength(1);
      expect([a.budget.inUse, b.budget.inUse]).toEqual([0, 0]);
    } finally {
      open();
      await a.close();
      await b.close();
    }
  });

  it('the manifest can set the cap (http.max_response_bytes)', async () => {
    const small = { ...testManifest, manifest: { ...testManifest.manifest, http: { timeout_ms: 400, max_response_bytes: 10 } } };
    const rt = new ConnectorRuntime(small, { api_key: 'good-key' }, { baseUrl: up.url, fetch: transport.fetch, limiter: null });
    expect((await failure(rt.execute('items', 'list', {}))).code).toBe('upstream_response_too_large');
  });
});

describe('3. egress', () => {
  it('a redirect to another origin is refused and nothing reaches it', async () => {
    up.handler = (_req, res) => void res.writeHead(302, { location: `${other.url}/steal` }).end();
    const e = await failure(runtime().execute('items', 'get', { id: 'it_1', tag: 'secret-tag' }));
    expect(e.code).toBe('upstream_redirect_refused');
    expect(other.seen).toEqual([]);
  });

  it('a redirect within the origin is followed', async () => {
    up.handler = (req, res) => (req.url === '/items/it_1' ? void res.writeHead(301, { location: '/items/moved' }).end() : ok(req, res));
    await expect(runtime().execute('items', 'get', { id: 'it_1' })).resolves.toMatchObject({ data: { id: 'it_1' } });
    expect(up.seen.map((s) => s.url)).toEqual(['/items/it_1', '/items/moved']);
  });

  it('link-local and metadata addresses are refused; loopback and private ranges are not', async () => {
    const e = await failure(runtime({ baseUrl: 'http://169.254.169.254' }).execute('items', 'list', {}));
    expect(e.code).toBe('egress_refused');
    for (const [ip, refused] of [
      ['169.254.169.254', true],
      ['::ffff:169.254.1.1', true],
      ['fe80::1', true],
      ['100.100.100.200', true],
      ['fd00:ec2::254', true],
      ['0.0.0.0', true],
      ['127.0.0.1', false],
      ['10.0.0.5', false],
      ['::1', false],
      ['93.184.216.34', false],
      // IPv6 forms that carry an IPv4 address (issue 37 item 5): as the URL parser writes them, too.
      ['::ffff:a9fe:a9fe', true],
      ['[::ffff:a9fe:a9fe]', true],
      ['::ffff:0.0.0.0', true],
      ['::ffff:0:0', true],
      ['::ffff:6464:64c8', true],
      ['64:ff9b::a9fe:a9fe', true],
      ['64:ff9b::169.254.169.254', true],
      ['::a9fe:a9fe', true],
      ['::169.254.169.254', true],
      ['2002:a9fe:a9fe::1', true],
      ['0:0:0:0:0:ffff:a9fe:a9fe', true],
      ['::ffff:5db8:d822', false],
      ['64:ff9b::5db8:d822', false],
      ['2606:4700::1111', false],
    ] as const) {
      expect([ip, isRefusedAddress(ip)]).toEqual([ip, refused]);
    }
  });

  it.each([
    'http://[::ffff:169.254.169.254]',
    'http://[::ffff:0.0.0.0]:1',
    'http://[::ffff:100.100.100.200]',
    'http://[64:ff9b::169.254.169.254]',
    'http://[::169.254.169.254]',
  ])('connector egress refuses %s (an IPv4 address in IPv6 form)', async (baseUrl) => {
    const e = await failure(runtime({ baseUrl }).execute('items', 'list', {}));
    expect(e.code).toBe('egress_refused');
  });
});

describe('6. the throttle queue is bounded and drops callers that went away', () => {
  it('refuses a caller past maxQueue at once', async () => {
    const limiter = new RateLimiter(1, 1000, 1, 2);
    await limiter.acquire();
    const a = new AbortController();
    const waiting = [limiter.acquire(a.signal), limiter.acquire(a.signal)];
    await expect(limiter.acquire()).rejects.toBeInstanceOf(ThrottleRefused);
    a.abort(new Error('gone'));
    await Promise.all(waiting.map((p) => expect(p).rejects.toThrow('gone')));
    expect(limiter.queued).toBe(0);
  });

  it('a disconnected caller waiting for a slot never reaches the upstream', async () => {
    const limiter = new RateLimiter(1, 60_000, 1);
    const rt = runtime({ limiter, deadlineMs: 120_000 });
    await rt.execute('items', 'list', {});
    const client = new AbortController();
    const pending = rt.execute('items', 'get', { id: 'it_1' }, { signal: client.signal });
    await expect.poll(() => limiter.queued).toBe(1);
    client.abort(new Error('client disconnected'));
    await expect(pending).rejects.toThrow('client disconnected');
    expect(limiter.queued).toBe(0);
    expect(up.seen.length).toBe(1);
  });
});

describe('6b. a caller waits at most maxThrottleWaitMs for a slot', () => {
  it('a call whose slot is further away than it may wait is refused at once with upstream_queue_full and the wait; a sync-style call without the cap still queues', async () => {
    const limiter = new RateLimiter(1, 60_000, 1);
    const rt = runtime({ limiter });
    await rt.execute('items', 'list', {});
    const e = await failure(rt.execute('items', 'get', { id: 'it_1' }, { maxThrottleWaitMs: 1_000 }));
    expect([e.code, e.status, e.details['reason']]).toEqual(['upstream_queue_full', 429, 'deadline']);
    expect(e.details['retry_after_ms']).toBeGreaterThan(1_000);
    expect(limiter.queued).toBe(0);
    expect(up.seen.length).toBe(1);
    // Without the cap the call takes its place in the queue (within its deadline).
    const client = new AbortController();
    const queued = rt.execute('items', 'get', { id: 'it_1' }, { signal: client.signal });
    await expect.poll(() => limiter.queued).toBe(1);
    client.abort(new Error('done'));
    await expect(queued).rejects.toThrow('done');
  });
});

describe('7. one deadline across attempts', () => {
  it('a hung upstream fails at the deadline, not after attempts × timeout', async () => {
    up.handler = () => undefined; // never answers
    const rt = runtime({ timeoutMs: 200, deadlineMs: 300, retry: { baseDelayMs: 1, maxAttempts: 10 } });
    const e = await failure(rt.execute('items', 'list', {}));
    expect(e.code).toBe('upstream_unavailable');
    expect(e.details['timeout']).toBe(true);
    expect(e.details['attempts'] as number).toBeLessThanOrEqual(3);
    expect(e.message).toContain('deadline');
  });
});
