/**
 * The hosted proxy route on both databases: the vendor's answer passed back unchanged, refusals
 * that send nothing, retries and Retry-After, scoped tokens and the per-application switch.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createClient } from '../../src/client/hosted.ts';
import { setProxyAccess } from '../../src/service/auth/proxy-access.ts';
import { failure } from '../helpers/errors.ts';
import { describeEachDialect, fakeUpstream, startHarness, type Harness } from '../service/helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const API_KEY = 'grn_proxy_secret_key';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** Send a raw request line (fetch would resolve "..", which is the point of some tests). */
function rawRequest(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

describeEachDialect('the proxy route on %s', (dialect) => {
  let h: Harness;
  let up: Awaited<ReturnType<typeof fakeUpstream>>;
  const seen: Seen[] = [];
  /** Answers queued for the next requests (then the default 200). */
  const queued: Array<{ status: number; headers?: Record<string, string>; body: string }> = [];
  let app: Awaited<ReturnType<Harness['createApp']>>;
  let token: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    up = await fakeUpstream((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const next = queued.shift() ?? {
          status: 200,
          headers: {
            'content-type': 'application/json; charset=utf-8',
            link: '<https://public-api.granola.ai/v1/notes?cursor=2>; rel="next"',
            'x-ratelimit-remaining': '41',
            'set-cookie': 'vendor=1',
            'x-internal': 'no',
          },
          body: '{"notes":[{"id":"not_1"}],  "weird":  "spacing kept"}',
        };
        res.writeHead(next.status, next.headers ?? { 'content-type': 'application/json' });
        res.end(next.body);
      });
    });
    h = await startHarness(dialect, { config: { upstreamThrottle: false, connectorTypes: { granola: { baseUrl: `${up.url}/base` } } } });
    app = await h.createApp('org-proxy');
    token = await h.token(app);
    for (const customer of ['acme', 'globex']) {
      const r = await h.request('POST', `${CONNECTORS}?check=false`, {
        token,
        body: { name: customer, customer_name: customer, connector_type: 'granola', credentials: { api_key: API_KEY } },
      });
      expect(r.status, r.text).toBe(201);
      ids[customer] = r.body.id;
    }
  });
  afterAll(async () => {
    await h?.close();
    await up?.close();
  });
  beforeEach(() => {
    seen.length = 0;
    queued.length = 0;
  });

  const proxy = (id: string, rest: string): string => `${CONNECTORS}/${id}/proxy/${rest}`;

  it("sends method, path, query and body under the base URL with the connector's auth, and passes the answer back unchanged", async () => {
    const r = await h.request('POST', proxy(ids['acme']!, 'v1/notes/search?q=a%20b&x=1&x=2'), {
      token,
      raw: '{"query":  "kept as sent"}',
      contentType: 'application/vnd.custom+json',
      headers: { cookie: 'session=mine', 'x-forwarded-for': '10.0.0.1', 'x-custom': 'dropped', 'if-none-match': '"e1"' },
    });
    expect(r.status).toBe(200);
    expect(r.text).toBe('{"notes":[{"id":"not_1"}],  "weird":  "spacing kept"}');
    expect(r.headers.get('switchboard-proxy-source')).toBe('upstream');
    expect(r.headers.get('link')).toContain('rel="next"');
    expect(r.headers.get('x-ratelimit-remaining')).toBe('41');
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.headers.get('set-cookie')).toBeNull();
    expect(r.headers.get('x-internal')).toBeNull();
    expect(seen).toHaveLength(1);
    const s = seen[0]!;
    expect(s.method).toBe('POST');
    expect(s.url).toBe('/base/v1/notes/search?q=a%20b&x=1&x=2');
    expect(s.body).toBe('{"query":  "kept as sent"}');
    expect(s.headers['content-type']).toBe('application/vnd.custom+json');
    expect(s.headers['if-none-match']).toBe('"e1"');
    // The connector's credentials, never the caller's token, cookie or forwarding headers.
    expect(s.headers['authorization']).toBe(`Bearer ${API_KEY}`);
    for (const h of ['cookie', 'x-forwarded-for', 'x-custom']) expect(s.headers[h]).toBeUndefined();
  });

  it('passes a vendor error (404) back as the vendor sent it', async () => {
    queued.push({ status: 404, headers: { 'content-type': 'application/json' }, body: '{"message":"no such note"}' });
    const r = await h.request('GET', proxy(ids['acme']!, 'v1/notes/missing'), { token });
    expect(r.status).toBe(404);
    expect(r.text).toBe('{"message":"no such note"}');
    expect(r.headers.get('switchboard-proxy-source')).toBe('upstream');
  });

  it.each([
    ['a dot-dot segment', '../admin'],
    ['an encoded dot-dot segment', '%2e%2E/admin'],
    ['an encoded slash', 'v1%2F..%2Fadmin'],
    ['a scheme-relative //host', '/evil.example.com/x'],
    ['an absolute URL', 'http://evil.example.com/x'],
    ['a backslash', '..%5Cadmin'],
  ])('refuses %s with 400 proxy_path_refused and sends nothing', async (_name, rest) => {
    const r = await rawRequest(h.url, 'GET', proxy(ids['acme']!, rest), { authorization: `Bearer ${token}` });
    expect(r.status, r.body).toBe(400);
    expect(JSON.parse(r.body).code).toBe('proxy_path_refused');
    expect(r.headers['content-type']).toContain('application/problem+json');
    expect(r.headers['switchboard-proxy-source']).toBe('switchboard');
    expect(seen).toHaveLength(0);
  });

  it('retries a GET after a 429 with Retry-After and a 500, and answers the final 200', async () => {
    queued.push({ status: 429, headers: { 'retry-after': '0', 'content-type': 'application/json' }, body: '{"error":"slow down"}' });
    const r = await h.request('GET', proxy(ids['globex']!, 'v1/notes'), { token });
    expect(r.status).toBe(200);
    expect(seen).toHaveLength(2);
    queued.push({ status: 503, body: 'down' });
    const again = await h.request('DELETE', proxy(ids['globex']!, 'v1/notes/n1'), { token });
    expect(again.status).toBe(200);
    expect(seen).toHaveLength(4);
  });

  it("does not retry a POST: the vendor's 429 and 500 come back as sent, Retry-After included", async () => {
    queued.push({ status: 429, headers: { 'retry-after': '7', 'content-type': 'application/json' }, body: '{"error":"slow down"}' });
    const r = await h.request('POST', proxy(ids['globex']!, 'v1/notes'), { token, body: { a: 1 } });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('7');
    expect(r.headers.get('switchboard-proxy-source')).toBe('upstream');
    expect(r.text).toBe('{"error":"slow down"}');
    queued.push({ status: 500, body: 'boom' });
    const e = await h.request('PATCH', proxy(ids['globex']!, 'v1/notes/1'), { token, body: { a: 1 } });
    expect(e.status).toBe(500);
    expect(e.text).toBe('boom');
    expect(seen).toHaveLength(2);
  });

  it("answers an unknown connector with problem+json marked as Switchboard's own", async () => {
    const r = await h.request('GET', proxy('con_nope', 'v1/notes'), { token });
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('connector_not_found');
    expect(r.headers.get('switchboard-proxy-source')).toBe('switchboard');
    expect(seen).toHaveLength(0);
  });

  it("keeps a scoped token to its customer's connectors", async () => {
    const s = await h.request('POST', '/api/v1/account/applications/scoped-token', { token, body: { customer_name: 'acme' } });
    expect(s.status, s.text).toBe(200);
    const scoped = s.body.access_token as string;
    const other = await h.request('GET', proxy(ids['globex']!, 'v1/notes'), { token: scoped });
    expect(other.status).toBe(404);
    expect(other.body.code).toBe('connector_not_found');
    expect(seen).toHaveLength(0);
    const own = await h.request('GET', proxy(ids['acme']!, 'v1/notes'), { token: scoped });
    expect(own.status).toBe(200);
    expect(seen).toHaveLength(1);
  });

  it('an application limited to read methods may GET but not POST; switched off it may do neither', async () => {
    const limited = await h.createApp('org-proxy');
    await setProxyAccess(h.store, limited.client_id, 'read');
    const t = await h.token(limited);
    const before = await h.snapshot();
    const post = await h.request('POST', proxy(ids['acme']!, 'v1/notes'), { token: t, body: { a: 1 } });
    expect(post.status).toBe(403);
    expect(post.body.code).toBe('proxy_method_forbidden');
    expect(seen).toHaveLength(0);
    expect(await h.snapshot()).toBe(before);
    expect((await h.request('GET', proxy(ids['acme']!, 'v1/notes'), { token: t })).status).toBe(200);
    await setProxyAccess(h.store, limited.client_id, 'off');
    const t2 = await h.token(limited);
    const off = await h.request('GET', proxy(ids['acme']!, 'v1/notes'), { token: t2 });
    expect(off.status).toBe(403);
    expect(off.body.code).toBe('proxy_disabled');
    expect(seen).toHaveLength(1);
  });

  it('logs method, path, status and duration of each call, never the body or credentials', async () => {
    h.logs.length = 0;
    await h.request('POST', proxy(ids['acme']!, 'v1/notes?token=q'), { token, body: { secret_body: 'xyz' } });
    const line = h.logs.find((l) => l.includes('"proxy call"'));
    expect(line).toBeDefined();
    const entry = JSON.parse(line!) as Record<string, unknown>;
    expect(entry).toMatchObject({ method: 'POST', path: 'v1/notes', status: 200 });
    expect(typeof entry['duration_ms']).toBe('number');
    const all = h.logs.join('\n');
    expect(all).not.toContain(API_KEY);
    expect(all).not.toContain('secret_body');
  });

  it("the typed hosted client proxies, hands back vendor answers and throws Switchboard's own refusals", async () => {
    const client = createClient({ baseUrl: h.url, customerName: 'acme', clientId: app.client_id, clientSecret: app.client_secret });
    const c = client.connector(ids['acme']!);
    const ok = await c.proxy({ method: 'GET', path: '/v1/notes', query: { page_size: 2 } });
    expect(ok.status).toBe(200);
    expect(new TextDecoder().decode(ok.body)).toBe('{"notes":[{"id":"not_1"}],  "weird":  "spacing kept"}');
    expect(seen[0]!.url).toBe('/base/v1/notes?page_size=2');
    queued.push({ status: 404, body: '{"message":"gone"}' });
    const missing = await c.proxy({ method: 'DELETE', path: '/v1/notes/x' });
    expect(missing.status).toBe(404);
    // (fetch's URL parser resolves %2e%2e itself, so an encoded slash is what reaches the service here.)
    const refused = await failure(c.proxy({ method: 'GET', path: '/v1%2F..%2Fadmin' }));
    expect(refused.code).toBe('proxy_path_refused');
    expect(seen).toHaveLength(2);
  });

  it('parallel calls each get their own answer', async () => {
    const rs = await Promise.all(Array.from({ length: 8 }, (_, i) => h.request('GET', proxy(ids['acme']!, `v1/notes/n${i}`), { token })));
    expect(rs.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(seen.map((s) => s.url).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `/base/v1/notes/n${i}`).sort());
  });
});
