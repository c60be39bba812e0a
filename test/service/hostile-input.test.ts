/**
 * The hosted service against hostile input and hostile upstreams (issue 11): a NUL-byte sweep
 * over every endpoint on both databases, the HTTP layer's refusals as problem+json, the token
 * endpoint limit, a duplicated X-Organization-Id, CR/LF credentials, and upstream faults
 * (Retry-After 3600, a body past the cap) reached through SWITCHBOARD_<TYPE>_BASE_URL.
 */
import { createServer, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect, startHarness, type Harness } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';

/** A raw HTTP exchange (headers as given, repeated ones included). */
function raw(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string | string[]>,
  body?: string,
): Promise<{ status: number; contentType: string; body: Record<string, unknown> }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        const contentType = String(res.headers['content-type'] ?? '');
        // The Connect UI's pages answer HTML (a plain page saying what went wrong), the API JSON.
        resolve({
          status: res.statusCode ?? 0,
          contentType,
          body: text === '' || contentType.startsWith('text/html') ? { html: text } : (JSON.parse(text) as Record<string, unknown>),
        });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

let upstream: Server;
let upstreamUrl: string;
let mode: 'ok' | 'retry-after' | 'huge' = 'ok';
beforeAll(async () => {
  upstream = createServer((req, res: ServerResponse) => {
    if (mode === 'retry-after') return void res.writeHead(429, { 'retry-after': '3600', 'content-type': 'application/json' }).end('{"message":"slow down"}');
    if (mode === 'huge') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let n = 0;
      const pump = (): void => {
        while (n++ < 200 * 16) if (!res.write(chunk)) return void res.once('drain', pump);
        res.end();
      };
      res.on('close', () => (n = Infinity));
      return pump();
    }
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(req.url?.startsWith('/v1/notes/') ? '{"id":"not_1","title":"t"}' : '{"notes":[],"hasMore":false,"cursor":null}');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise<void>((r) => upstream.close(() => r()));
});

describeEachDialect('hostile input on %s', (dialect) => {
  let h: Harness;
  let token: string;
  let orgId: string;
  let connectorId: string;

  beforeAll(async () => {
    h = await startHarness(dialect, {
      config: {
        tokenRateLimitPerMinute: 5,
        upstreamDeadlineMs: 20_000,
        upstreamMaxResponseBytes: 1024 * 1024,
        connectorTypes: { granola: { baseUrl: upstreamUrl } },
      },
    });
    const app = await h.createApp('acme');
    orgId = app.organization_id;
    token = await h.token(app);
    // The fake upstream here answers only what each test injects: no credential check at create.
    const r = await h.request('POST', `${CONNECTORS}?check=false`, {
      token,
      body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { api_key: 'grn_secret_key_1' } },
    });
    expect(r.status).toBe(201);
    connectorId = (r.body as { id: string }).id;
  });
  afterAll(() => h.close());

  it('NUL sweep: every endpoint refuses NUL in its path, query and body with 400 invalid_characters, never 500', async () => {
    const all = await routeList();
    expect(all.length).toBeGreaterThan(10);
    const cases: { method: string; path: string; body?: string; where: string }[] = [];
    for (const route of all) {
      const [method, template] = route.split(' ') as [string, string];
      const withParams = template
        .replace(/\{connector_id\}/g, connectorId)
        .replace(/\{connector_type\}/g, 'granola')
        .replace(/\{[a-z_]+\}/g, 'x');
      if (template.includes('{'))
        cases.push({
          method,
          path: template
            .replace(/\{[a-z_]+\}/, 'a%00b')
            .replace(/\{connector_id\}/g, connectorId)
            .replace(/\{[a-z_]+\}/g, 'x'),
          where: 'path',
        });
      cases.push({ method, path: `${withParams}?customer_name=a%00b&cursor=%00&limit=5`, where: 'query' });
      if (method === 'POST' || method === 'PATCH' || method === 'PUT') {
        cases.push({
          method,
          path: withParams,
          body: JSON.stringify({
            name: 'a\u0000b',
            customer_name: 'x\u0000',
            client_id: '\u0000',
            client_secret: 's',
            entity: 'notes',
            action: 'list',
            params: { q: '\u0000' },
          }),
          where: 'body',
        });
      }
    }
    for (const c of cases) {
      const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...(c.body !== undefined ? { 'content-type': 'application/json' } : {}) };
      const r = await raw(h.url, c.method, c.path, headers, c.body);
      if (r.contentType.startsWith('text/html')) {
        // A Connect UI page: the same 400, as a page that says so (never a stack trace).
        expect([c.method, c.path, c.where, r.status]).toEqual([c.method, c.path, c.where, 400]);
        expect(String(r.body['html'])).toContain('control characters');
        continue;
      }
      if (c.where === 'body' && c.path.startsWith('/api/v1/webhooks/')) {
        // A vendor delivery's body is read raw and verified before anything reads it: unsigned, it
        // is refused (401), and a type that declares no webhooks is 404; never parsed, never a 500.
        expect([c.method, c.path, c.where, [401, 404].includes(r.status)]).toEqual([c.method, c.path, c.where, true]);
        expect(r.contentType).toContain('application/problem+json');
        continue;
      }
      if (c.where === 'body' && c.path.includes('/proxy/')) {
        // The proxy's body is the caller's bytes for the vendor, passed on unparsed (docs/proxy.md): never a 500.
        expect([c.method, c.path, c.where, r.status < 500]).toEqual([c.method, c.path, c.where, true]);
        continue;
      }
      expect([c.method, c.path, c.where, r.status, r.body['code']]).toEqual([c.method, c.path, c.where, 400, 'invalid_characters']);
      expect(r.contentType).toContain('application/problem+json');
    }
    // The unauthenticated token endpoint too, and the OAuth customer name.
    const t = await h.request('POST', '/api/v1/account/applications/token', { body: { client_id: 'a\u0000', client_secret: 'b' } });
    expect([t.status, (t.body as { code: string }).code]).toEqual([400, 'invalid_characters']);
    expect(h.logs.filter((l) => l.includes('"level":50'))).toEqual([]);
  });

  it('a duplicated X-Organization-Id is 400, not 403', async () => {
    const r = await raw(h.url, 'GET', CONNECTORS, { authorization: `Bearer ${token}`, 'x-organization-id': [orgId, orgId] });
    expect([r.status, r.body['code']]).toEqual([400, 'invalid_request']);
  });

  it('431, 414 and malformed URLs answer problem+json with codes', async () => {
    const big = await raw(h.url, 'GET', CONNECTORS, { authorization: `Bearer ${token}`, 'x-padding': 'a'.repeat(20_000) });
    expect([big.status, big.body['code'], big.contentType]).toEqual([431, 'headers_too_large', 'application/problem+json']);
    const long = await raw(h.url, 'GET', `${CONNECTORS}/${'a'.repeat(300)}`, { authorization: `Bearer ${token}` });
    expect([long.status, long.body['code']]).toEqual([414, 'uri_too_long']);
    expect(long.contentType).toContain('application/problem+json');
    const bad = await raw(h.url, 'GET', `${CONNECTORS}/%E0%A4%A`, { authorization: `Bearer ${token}` });
    expect([bad.status, bad.body['code']]).toEqual([400, 'invalid_url']);
  });

  it('sets request and keep-alive timeouts on the server', () => {
    expect(h.service.app.server.requestTimeout).toBe(30_000);
    expect(h.service.app.server.keepAliveTimeout).toBe(5_000);
  });

  it('credentials with CR/LF are refused at create (and at patch)', async () => {
    const r = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { api_key: 'abc\r\nX-Evil: 1' } },
    });
    expect([r.status, (r.body as { code: string }).code]).toEqual([400, 'invalid_credentials']);
    expect((r.body as { errors: unknown[] }).errors).toEqual([{ path: '/credentials/api_key', message: 'contains CR, LF or NUL' }]);
    const p = await h.request('PATCH', `${CONNECTORS}/${connectorId}`, { token, body: { credentials: { api_key: 'x\ny' } } });
    expect(p.status).toBe(400);
  });

  it('the token endpoint is rate limited per client id', async () => {
    const app = await h.createApp('guessers');
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++)
      statuses.push(
        (await h.request('POST', '/api/v1/account/applications/token', { body: { client_id: app.client_id, client_secret: `wrong-${i}` } })).status,
      );
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    const limited = await h.request('POST', '/api/v1/account/applications/token', { body: { client_id: app.client_id, client_secret: app.client_secret } });
    expect([limited.status, (limited.body as { code: string }).code]).toEqual([429, 'token_rate_limited']);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('an upstream Retry-After: 3600 answers 429 at once with Retry-After, and a body past the cap is 502 upstream_response_too_large', async () => {
    mode = 'retry-after';
    try {
      const r = await h.request('POST', `${CONNECTORS}/${connectorId}/execute`, { token, body: { entity: 'notes', action: 'list', params: {} } });
      expect([r.status, (r.body as { code: string }).code, r.headers.get('retry-after')]).toEqual([429, 'upstream_rate_limited', '3600']);
      // A second call on that connector is not hung behind the hour: the connector is held back for the 60 s cap, longer than a call may wait, so it is refused at once.
      const again = await h.request('POST', `${CONNECTORS}/${connectorId}/execute`, {
        token,
        body: { entity: 'notes', action: 'get', params: { note_id: 'not_10000000000000' } },
      });
      expect([again.status, (again.body as { code: string }).code, again.headers.get('retry-after') !== null]).toEqual([429, 'upstream_rate_limited', true]);
      mode = 'huge';
      const other = await h.request('POST', `${CONNECTORS}?check=false`, {
        token,
        body: { customer_name: 'c2', connector_type: 'granola', name: 'g2', credentials: { api_key: 'grn_secret_key_2' } },
      });
      const big = await h.request('POST', `${CONNECTORS}/${(other.body as { id: string }).id}/execute`, {
        token,
        body: { entity: 'notes', action: 'list', params: {} },
      });
      expect([big.status, (big.body as { code: string }).code]).toEqual([502, 'upstream_response_too_large']);
    } finally {
      mode = 'ok';
    }
  });
});

/** The app's routes as "METHOD /path" (buildApp's list), built on a throwaway in-memory service. */
async function routeList(): Promise<string[]> {
  const { buildApp } = await import('../../src/service/http/app.ts');
  const { openDatabase, migrate, parseKeyRing, generateKeySpec } = await import('../../src/store/index.ts');
  const { HOSTED_MIGRATIONS } = await import('../../src/service/http/server.ts');
  const { defaultServiceConfig } = await import('../../src/service/config.ts');
  const { createServiceLogger } = await import('../../src/service/ops/logger.ts');
  const database = openDatabase<import('../../src/store/index.ts').ServiceTables>(':memory:');
  await migrate(database as import('../../src/store/index.ts').Database, [...HOSTED_MIGRATIONS]);
  const { app, routes } = await buildApp({
    database,
    keyRing: parseKeyRing(generateKeySpec()),
    config: defaultServiceConfig({ syncScheduler: false }),
    logger: createServiceLogger('silent'),
  });
  await app.close();
  await database.close();
  return routes;
}
