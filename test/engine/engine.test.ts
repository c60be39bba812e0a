/** The engine on the test API: execute, bad input, upstream failures and retries, all pages, throttling (more in engine-requests.test.ts). */
import { describe, expect, it, vi } from 'vitest';
import { SwitchboardError, type ErrorCode } from '../../src/errors/index.ts';
import { RateLimiter } from '../../src/http/index.ts';
import { failure } from '../helpers/errors.ts';
import { api, runtime, useTestApi } from './engine-helpers.ts';

useTestApi();

describe('execute', () => {
  it('list returns the envelope with records and meta', async () => {
    const r = await runtime().execute('items', 'list', { limit: 5 });
    expect(r).toEqual({ data: [1, 2, 3, 4, 5].map((n) => ({ id: `it_${n}`, n, label: null })), meta: { next: '5' } });
    expect(api.requests[0]?.headers['authorization']).toBe('Bearer good-key');
    expect(api.requests[0]?.query.get('limit')).toBe('5');
    expect(api.requests[0]?.query.has('cursor')).toBe(false);
  });

  it('get returns one record; config default header and optional header are sent', async () => {
    const r = await runtime().execute('items', 'get', { id: 'it_3', tag: 'blue' });
    expect(r).toEqual({ data: { id: 'it_3', n: 3, label: null, tag: 'blue', api_version: '7' } });
  });

  it('create sends typed JSON (numbers stay numbers, undefined keys dropped)', async () => {
    const r = await runtime().execute('items', 'create', { n: 42 });
    expect(JSON.parse(api.requests[0]!.rawBody)).toEqual({ n: 42 });
    expect(api.requests[0]?.headers['content-type']).toBe('application/json');
    const got = await runtime().execute('items', 'get', { id: (r.data as { id: string }).id });
    expect(got.data).toMatchObject({ n: 42 });
  });

  it('update sends the params minus the path param', async () => {
    await runtime().execute('items', 'update', { id: 'it_2', label: 'two' });
    expect(JSON.parse(api.requests[0]!.rawBody)).toEqual({ label: 'two' });
    expect((await runtime().execute('items', 'get', { id: 'it_2' })).data).toMatchObject({ label: 'two' });
  });

  it('maps an upstream 404 with the upstream message and body', async () => {
    const e = await failure(runtime().execute('items', 'get', { id: 'missing' }));
    expect(e.code).toBe('upstream_not_found');
    expect(e.message).toContain('no item missing');
    expect(e.details['upstream_body']).toEqual({ error: { message: 'no item missing' } });
  });

  it('maps an upstream 422 to upstream_rejected with the upstream message', async () => {
    api.inject({ path: '/items', status: 422, json: { error: { message: 'label too long' } } });
    const e = await failure(runtime().execute('items', 'create', { n: 1 }));
    expect(e.code).toBe('upstream_rejected');
    expect(e.message).toContain('label too long');
  });

  it('maps a rejected token to upstream_credentials_rejected', async () => {
    const e = await failure(runtime({}, { api_key: 'bad' }).execute('items', 'list'));
    expect(e.code).toBe('upstream_credentials_rejected');
  });

  it('GraphQL: variables in the body, not-found from an empty list', async () => {
    expect((await runtime().execute('gql', 'get', { id: 'g1' })).data).toEqual({ id: 'g1' });
    const body = JSON.parse(api.requests[0]!.rawBody) as { query: string; variables: unknown };
    expect(body.variables).toEqual({ id: 'g1' });
    expect(api.requests[0]!.query.toString()).toBe('');
    expect((await failure(runtime().execute('gql', 'get', { id: 'nope' }))).code).toBe('upstream_not_found');
  });

  it('search in library mode is hosted-only', async () => {
    const e = await failure(runtime().execute('items', 'search', {}));
    expect(e.code).toBe('search_hosted_only');
    expect(e.message).toMatch(/hosted mode only/);
  });
});

describe('bad input (no request is sent)', () => {
  const tenK = 'x'.repeat(10_000);
  const cases: [string, string, string, unknown, ErrorCode, RegExp?][] = [
    ['wrong type', 'items', 'list', { limit: 'ten' }, 'invalid_params', /\/limit must be integer/],
    ['out of range', 'items', 'list', { limit: 1000 }, 'invalid_params', /\/limit must be <= 100/],
    ['missing required', 'items', 'get', {}, 'invalid_params', /\/id is required/],
    ['extra param', 'items', 'get', { id: 'a', colour: 'red' }, 'invalid_params', /\/colour unknown param; valid params: id, tag/],
    ['params not an object', 'items', 'get', 'it_1', 'invalid_params'],
    ['unknown entity', 'widgets', 'list', {}, 'unknown_entity', /Valid entities: items, pages, offsets, links, gql/],
    ['unknown action', 'pages', 'get', {}, 'unknown_action', /Valid actions: list/],
    ['path param ..', 'items', 'get', { id: '..' }, 'invalid_params', /may not be ".."/],
    ['path param .', 'items', 'get', { id: '.' }, 'invalid_params'],
    ['path param empty', 'items', 'get', { id: '' }, 'invalid_params'],
    ['header with CR/LF', 'items', 'get', { id: 'it_1', tag: 'a\r\nX-Evil: 1' }, 'invalid_header_value'],
    ['header with LF', 'items', 'get', { id: 'it_1', tag: 'a\nb' }, 'invalid_header_value'],
  ];
  it.each(cases)('%s', async (_name, entity, action, params, code, message) => {
    const e = await failure(runtime().execute(entity, action, params));
    expect(e.code).toBe(code);
    if (message) expect(e.message).toMatch(message);
    expect(api.requests).toHaveLength(0);
  });

  it('lists every failure with its path', async () => {
    const e = await failure(runtime().execute('items', 'list', { limit: 0, cursor: 5, extra: true }));
    expect(e.errors.map((x) => x.path).sort()).toEqual(['/cursor', '/extra', '/limit']);
  });

  it.each([
    ['../etc/passwd', '..%2Fetc%2Fpasswd'],
    ['a?b=c', 'a%3Fb%3Dc'],
    ['a#frag', 'a%23frag'],
    ['a%2Fb', 'a%252Fb'],
    ['{{credentials.api_key}}', '%7B%7Bcredentials.api_key%7D%7D'],
    ['café ☕', 'caf%C3%A9%20%E2%98%95'],
    [tenK, tenK],
  ])('path param %# stays one encoded segment', async (id, encoded) => {
    const e = await failure(runtime().execute('items', 'get', { id }));
    expect(e.code).toBe('upstream_not_found');
    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]!.path).toBe(`/items/${encoded}`);
  });

  it.each([
    ['no known variant', { token: 'x' }],
    ['extra field', { api_key: 'x', other: 1 }],
    ['wrong type', { api_key: 5 }],
    ['not an object', 'good-key'],
  ])('credentials: %s → invalid_credentials', (_n, creds) => {
    let err: unknown;
    try {
      runtime({}, creds);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SwitchboardError);
    expect((err as SwitchboardError).code).toBe('invalid_credentials');
    expect((err as SwitchboardError).message).toMatch(/Variants: key \{api_key\}; oauth/);
  });
});

describe('upstream failures, retries and timeouts', () => {
  it('429 with Retry-After is retried after the given delay, then succeeds', async () => {
    api.inject({ path: '/items', status: 429, headers: { 'retry-after': '1' }, json: { error: { message: 'slow down' } } });
    const rt = runtime();
    const r = await rt.execute('items', 'list', { limit: 1 });
    expect(r.data).toHaveLength(1);
    expect(rt.lastCall).toMatchObject({ attempts: 2, retries: 1 });
    // The wait used is the server's, not the 1 ms backoff base.
    expect(rt.lastCall.waitedMs).toBeGreaterThanOrEqual(1000);
  });

  it('X-RateLimit-Reset (Unix seconds) is honoured', async () => {
    // The wait is computed from the clock when the 429 arrives: freeze Date (only Date: the
    // sleep itself and the sockets run on real timers) so the expected wait is exact.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const now = Math.floor(Date.now() / 1000) * 1000 + 250;
      vi.setSystemTime(now);
      const reset = Math.floor(now / 1000) + 1;
      api.inject({ path: '/items', status: 429, headers: { 'x-ratelimit-reset': String(reset) }, json: {} });
      const rt = runtime({ retry: { retryAfterHeaders: [{ name: 'X-RateLimit-Reset', format: 'unix_seconds' }] } });
      await rt.execute('items', 'list', { limit: 1 });
      expect(rt.lastCall.attempts).toBe(2);
      expect(rt.lastCall.waitedMs).toBe(reset * 1000 - now);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a reset header in epoch milliseconds (unix_ms) is waited for exactly', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const now = Math.floor(Date.now() / 1000) * 1000 + 250;
      vi.setSystemTime(now);
      const reset = now + 400;
      api.inject({ path: '/items', status: 429, headers: { 'x-ratelimit-requests-reset': String(reset) }, json: {} });
      const rt = runtime({ retry: { retryAfterHeaders: [{ name: 'X-RateLimit-Requests-Reset', format: 'unix_ms' }] } });
      await rt.execute('items', 'list', { limit: 1 });
      expect(rt.lastCall.attempts).toBe(2);
      expect(rt.lastCall.waitedMs).toBe(400);
    } finally {
      vi.useRealTimers();
    }
  });

  it('429 every time: rate limited after a bounded number of attempts', async () => {
    api.inject({ path: '/items', status: 429, headers: { 'retry-after': '0' }, json: { error: { message: 'slow down' } }, times: 10 });
    const e = await failure(runtime().execute('items', 'list'));
    expect(e.code).toBe('upstream_rate_limited');
    expect(e.details['attempts']).toBe(3);
    expect(api.requests).toHaveLength(3);
  });

  it('a server asking to wait longer than the cap fails at once', async () => {
    api.inject({ path: '/items', status: 429, headers: { 'retry-after': '3600' }, json: {} });
    const e = await failure(runtime().execute('items', 'list'));
    expect(e.code).toBe('upstream_rate_limited');
    expect(e.details['retry_after_ms']).toBe(3_600_000);
    expect(api.requests).toHaveLength(1);
  });

  it('503 is retried with backoff, then reported as unavailable', async () => {
    api.inject({ path: '/items', status: 503, text: 'down', times: 5 });
    const e = await failure(runtime().execute('items', 'get', { id: 'it_1' }));
    expect(e.code).toBe('upstream_unavailable');
    expect(api.requests).toHaveLength(3);
  });

  it('a create is sent exactly once, even on 503 or 429', async () => {
    api.inject({ path: '/items', status: 503, json: {} });
    expect((await failure(runtime().execute('items', 'create', { n: 1 }))).code).toBe('upstream_unavailable');
    api.inject({ path: '/items', status: 429, headers: { 'retry-after': '0' }, json: {} });
    expect((await failure(runtime().execute('items', 'create', { n: 1 }))).code).toBe('upstream_rate_limited');
    expect(api.requests.filter((r) => r.method === 'POST')).toHaveLength(2);
  });

  it('a slow response past the timeout is upstream_unavailable (timeout), retried within budget', async () => {
    api.inject({ path: '/items', delayMs: 1000, times: 3 });
    const e = await failure(runtime().execute('items', 'list'));
    expect(e.code).toBe('upstream_unavailable');
    expect(e.details['timeout']).toBe(true);
    expect(e.details['attempts']).toBe(3);
  });

  it.each([
    ['invalid JSON', { text: '{"items": [', contentType: 'application/json' }],
    ['HTML', { text: '<html><body>Gateway</body></html>', contentType: 'text/html' }],
    ['an empty body', { text: '' }],
    ['JSON of the wrong shape', { text: '{"unexpected": true}', contentType: 'application/json' }],
  ])('a 200 with %s is an upstream protocol error', async (_n, fault) => {
    api.inject({ path: '/items', status: 200, ...fault });
    const e = await failure(runtime().execute('items', 'list'));
    expect(e.code).toBe('upstream_protocol_error');
    expect(api.requests).toHaveLength(1);
  });

  it('a GraphQL error inside a 200 is an upstream error with the upstream message', async () => {
    const e = await failure(runtime().execute('gql', 'list', { fail: 'other' }));
    expect(e.code).toBe('upstream_error');
    expect(e.message).toContain('Field "x" does not exist');
    expect(api.requests).toHaveLength(1);
  });

  it('a budget error inside a 200 is rate limited and retried', async () => {
    const e = await failure(runtime().execute('gql', 'list', { fail: 'budget' }));
    expect(e.code).toBe('upstream_rate_limited');
    expect(api.requests).toHaveLength(3);
  });
});

describe('all pages', () => {
  it.each([
    ['cursor', 'items', { limit: 10 }, -1],
    ['page number', 'pages', {}, 6],
    ['offset', 'offsets', { limit: 10 }, 25],
    ['link header', 'links', {}, 3],
    ['GraphQL cursor', 'gql', {}, 3],
  ])('%s pagination visits every record once', async (_n, entity, params, count) => {
    const ids: string[] = [];
    for await (const r of runtime().records(entity, params)) ids.push(String(r['id']));
    const want = count === -1 ? api.items.size : count;
    expect(ids).toHaveLength(want);
    expect(new Set(ids).size).toBe(want);
  });

  it('fails clearly when the upstream returns the same cursor twice', async () => {
    const seen: unknown[] = [];
    const e = await failure(
      (async () => {
        for await (const r of runtime().records('items', { limit: 5, loop: true })) seen.push(r);
      })(),
    );
    expect(e.code).toBe('pagination_loop');
    expect(seen.length).toBe(10);
  });

  it('streams: the first page is yielded before later pages are fetched', async () => {
    const it = runtime().pages('items', { limit: 50 });
    const first = await it.next();
    expect(first.value?.data).toHaveLength(50);
    expect(api.requests).toHaveLength(1);
    await it.return(undefined);
  });
});

describe('throttling', () => {
  it('a per-instance limiter spaces requests to the manifest rate', async () => {
    const started = Date.now();
    const limiter = new RateLimiter(10, 1000, 2);
    const rt = runtime({ limiter });
    for (let i = 0; i < 5; i++) await rt.execute('items', 'get', { id: 'it_1' });
    // 2 go at once (the burst), the next 3 each need a token refilled at 10/s (100 ms): the 5th
    // is sent 300 ms after the limiter started at the earliest, however fast or slow the calls
    // were (how much of that is waiting rather than calling depends on the machine's load).
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });
});
