/** The engine on the test API: auth variants, form bodies, base URLs, errors in 2xx bodies, rate-limit headers, idempotency keys, pagination shapes (more in engine.test.ts). */
import { describe, expect, it } from 'vitest';
import { ConnectorRuntime } from '../../src/engine/index.ts';
import { testManifest } from '../fixtures/testapi-server.ts';
import { failure } from '../helpers/errors.ts';
import { api, runtime, useTestApi } from './engine-helpers.ts';

useTestApi();

describe('OAuth refresh', () => {
  const oauthCreds = (over: Record<string, unknown> = {}) => ({
    access_token: 'expired',
    refresh_token: 'refresh-1',
    client_id: 'app',
    client_secret: 'app-secret',
    ...over,
  });

  it('refreshes on a 401, retries once, and hands the new tokens to onTokenRefresh', async () => {
    const refreshed: Record<string, unknown>[] = [];
    const rt = runtime(
      { oauthClient: { clientId: 'app', clientSecret: 'app-secret', tokenUrl: `${api.url}/token` }, onTokenRefresh: (c) => void refreshed.push(c) },
      oauthCreds(),
    );
    expect(rt.authVariant).toBe('oauth');
    const r = await rt.execute('items', 'get', { id: 'it_1' });
    expect(r.data).toMatchObject({ id: 'it_1' });
    expect(refreshed).toHaveLength(1);
    expect(refreshed[0]).toMatchObject({
      access_token: expect.stringMatching(/^access-/),
      refresh_token: expect.stringMatching(/^refresh-/),
      client_id: 'app',
    });
    expect(typeof refreshed[0]!['expires_at']).toBe('number');
  });

  it('refreshes before the call when the token is about to expire', async () => {
    const refreshed: Record<string, unknown>[] = [];
    const before = api.tokenRequests;
    const rt = runtime(
      { oauthClient: { clientId: 'app', clientSecret: 'app-secret', tokenUrl: `${api.url}/token` }, onTokenRefresh: (c) => void refreshed.push(c) },
      oauthCreds({ access_token: 'access-1', expires_at: Math.floor(Date.now() / 1000) + 10 }),
    );
    await rt.execute('items', 'get', { id: 'it_1' });
    expect(api.tokenRequests - before).toBe(1);
    expect(refreshed).toHaveLength(1);
    expect(api.requests.filter((r) => r.path.startsWith('/items'))).toHaveLength(1);
  });

  it('a refused refresh is oauth_refresh_failed', async () => {
    const rt = runtime(
      { oauthClient: { clientId: 'app', clientSecret: 'app-secret', tokenUrl: `${api.url}/token` } },
      oauthCreds({ refresh_token: 'revoked' }),
    );
    const e = await failure(rt.execute('items', 'get', { id: 'it_1' }));
    expect(e.code).toBe('oauth_refresh_failed');
  });
});

describe('form-encoded bodies (request.body_encoding: form)', () => {
  it('sends nested keys as Stripe reads them; undefined dropped, null sent empty', async () => {
    const r = await runtime().execute('forms', 'create', {
      email: 'a+b@example.com',
      plan: 'pro',
      note: null,
      expand: ['customer', 'invoice'],
      items: [{ price: 'price_1', quantity: 2 }, { price: 'price_2' }],
      active: false,
    });
    const sent = api.requests[0]!;
    expect(sent.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect((r.data as { form: string }).form).toBe(sent.rawBody);
    expect([...new URLSearchParams(sent.rawBody)]).toEqual([
      ['email', 'a+b@example.com'],
      ['metadata[plan]', 'pro'],
      ['metadata[note]', ''],
      ['expand[]', 'customer'],
      ['expand[]', 'invoice'],
      ['items[0][price]', 'price_1'],
      ['items[0][quantity]', '2'],
      ['items[1][price]', 'price_2'],
      ['active', 'false'],
    ]);
    expect(sent.rawBody).toContain('email=a%2Bb%40example.com');
  });

  it('leaves out keys whose templates render nothing (Slack-style flat form)', async () => {
    await runtime().execute('forms', 'create', { email: 'x@example.com' });
    expect(api.requests[0]!.rawBody).toBe('email=x%40example.com');
  });
});

describe('HTTP basic auth (type: basic)', () => {
  const good = { email: 'agent@example.com', api_token: 'zd-sécret' };

  it('sends Basic base64("<username>:<password>") rendered from two fields (UTF-8)', async () => {
    const rt = runtime({}, good);
    expect(rt.authVariant).toBe('basic');
    const r = await rt.execute('items', 'get', { id: 'it_1' });
    expect(r.data).toMatchObject({ id: 'it_1' });
    const header = api.requests[0]!.headers['authorization']!;
    expect(header).toBe(`Basic ${Buffer.from('agent@example.com/token:zd-sécret', 'utf8').toString('base64')}`);
  });

  it('a refused password is upstream_credentials_rejected, and the secret appears nowhere in the error', async () => {
    const e = await failure(runtime({}, { ...good, api_token: 'wrong-s3cret-value' }).execute('items', 'get', { id: 'it_1' }));
    expect(e.code).toBe('upstream_credentials_rejected');
    const shown = JSON.stringify({ message: e.message, details: e.details, errors: e.errors });
    expect(shown).not.toContain('wrong-s3cret-value');
    expect(shown).not.toContain(Buffer.from('agent@example.com/token:wrong-s3cret-value').toString('base64'));
  });

  it('a user name with ":" is refused before anything is sent', async () => {
    const e = await failure(runtime({}, { ...good, email: 'a:b@example.com' }).execute('items', 'get', { id: 'it_1' }));
    expect(e.code).toBe('invalid_credentials');
    expect(api.requests).toHaveLength(0);
  });
});

describe('base URLs with per-customer variables', () => {
  const cloud = '11111111-2222-3333-4444-555555555555';
  /** A transport that sends every request to the test API, remembering the URL the interpreter built. */
  function via(sent: string[]): typeof fetch {
    return (input, init) => {
      const u = new URL(String(input));
      sent.push(u.toString());
      return fetch(`${api.url}${u.pathname.replace(/^\/ex\/[^/]+/, '')}${u.search}`, init);
    };
  }

  it('fills the host label from a credential field and a path segment from config', async () => {
    const sent: string[] = [];
    const rt = new ConnectorRuntime(
      testManifest,
      { site: 'acme-eu', site_token: 'good-key' },
      { config: { cloud_id: cloud }, fetch: via(sent), limiter: null },
    );
    expect(rt.authVariant).toBe('site');
    const r = await rt.execute('items', 'get', { id: 'it_4' });
    expect(r.data).toMatchObject({ id: 'it_4' });
    expect(sent).toEqual([`https://acme-eu.example.test/ex/${cloud}/items/it_4`]);
    expect(api.requests[0]?.path).toBe('/items/it_4');
  });

  it.each([
    ['a dotted host', 'evil.com/x'],
    ['userinfo', 'a@evil'],
    ['a port', 'acme:1'],
    ['an encoded dot', 'evil%2ecom'],
  ])('refuses %s in a host variable before anything is sent (invalid_credentials)', async (_, site) => {
    const sent: string[] = [];
    const e = await failure(
      Promise.resolve().then(() => new ConnectorRuntime(testManifest, { site, site_token: 'good-key' }, { config: { cloud_id: cloud }, fetch: via(sent) })),
    );
    expect(e.code).toBe('invalid_credentials');
    expect(sent).toEqual([]);
  });

  it('refuses a config value outside its pattern, and a missing one', async () => {
    const bad = await failure(
      Promise.resolve().then(() => new ConnectorRuntime(testManifest, { site: 'acme', site_token: 'good-key' }, { config: { cloud_id: '../../admin' } })),
    );
    expect(bad.code).toBe('invalid_params');
    expect(bad.errors[0]?.path).toBe('/config/cloud_id');
    const missing = await failure(Promise.resolve().then(() => new ConnectorRuntime(testManifest, { site: 'acme', site_token: 'good-key' })));
    expect(missing.code).toBe('invalid_params');
    expect(missing.message).toContain('config.cloud_id is required');
  });
});

describe('base URL variables: the built-in guard behind a lax pattern', () => {
  it('a variable is one host label even when its field pattern allows more', async () => {
    const { readFileSync } = await import('node:fs');
    const { loadManifestText } = await import('../../src/manifest/index.ts');
    const text = readFileSync('test/fixtures/testapi.yaml', 'utf8').replace(
      'site: { type: string, pattern: "[a-z0-9][a-z0-9-]{0,62}" }',
      'site: { type: string, pattern: ".+" }',
    );
    const lax = loadManifestText(text, 'lax.yaml');
    const e = await failure(
      Promise.resolve().then(
        () => new ConnectorRuntime(lax, { site: 'evil.com#', site_token: 'k' }, { config: { cloud_id: '11111111-2222-3333-4444-555555555555' } }),
      ),
    );
    expect(e.code).toBe('invalid_credentials');
    expect(e.message).toContain('credentials.site must be one host label');
  });
});

describe('errors inside 2xx bodies (Slack ok: false)', () => {
  it.each([
    ['invalid_auth', 'upstream_credentials_rejected'],
    ['channel_not_found', 'upstream_not_found'],
    ['missing_scope', 'upstream_error'],
  ] as const)('{ok: false, error: %s} is %s with the upstream code as message', async (code, expected) => {
    api.inject({ path: '/rpc', status: 200, json: { ok: false, error: code } });
    const e = await failure(runtime().execute('rpc', 'get', { id: 'r1' }));
    expect(e.code).toBe(expected);
    expect(e.message).toBe(`testapi: ${code}`);
    expect(api.requests).toHaveLength(1);
  });

  it('{ok: false, error: ratelimited} with Retry-After is retried, then succeeds', async () => {
    api.inject({ path: '/rpc', status: 200, headers: { 'retry-after': '0' }, json: { ok: false, error: 'ratelimited' } });
    const rt = runtime();
    expect((await rt.execute('rpc', 'get', { id: 'r1' })).data).toEqual({ id: 'r1' });
    expect(rt.lastCall.attempts).toBe(2);
  });

  it('ratelimited every time: upstream_rate_limited carrying the Retry-After wait', async () => {
    api.inject({ path: '/rpc', status: 200, headers: { 'retry-after': '0' }, json: { ok: false, error: 'ratelimited' }, times: 5 });
    const e = await failure(runtime().execute('rpc', 'get', { id: 'r1' }));
    expect(e.code).toBe('upstream_rate_limited');
    expect(e.details['retry_after_ms']).toBe(0);
    expect(e.details['not_executed']).toBe(true);
  });

  it('{ok: true} passes', async () => {
    expect((await runtime().execute('rpc', 'get', { id: 'r2' })).data).toEqual({ id: 'r2' });
  });
});

describe('rate-limit headers on 403 (GitHub)', () => {
  it('a 403 with X-RateLimit-Remaining: 0 is a rate limit: waits for X-RateLimit-Reset and retries', async () => {
    const reset = Math.floor(Date.now() / 1000);
    api.inject({
      path: '/items',
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
      json: { message: 'API rate limit exceeded' },
    });
    const rt = runtime();
    await rt.execute('items', 'list', { limit: 1 });
    expect(rt.lastCall.attempts).toBe(2);
  });

  it('rate limited on every attempt: upstream_rate_limited with the upstream message, not credentials rejected', async () => {
    api.inject({
      path: '/items',
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '0' },
      json: { message: 'API rate limit exceeded' },
      times: 5,
    });
    const e = await failure(runtime().execute('items', 'list', { limit: 1 }));
    expect(e.code).toBe('upstream_rate_limited');
    expect(e.message).toContain('API rate limit exceeded');
    expect(e.details['not_executed']).toBe(true);
  });

  it('a secondary limit (403 with Retry-After) is retried, even for a create (not executed)', async () => {
    api.inject({ path: '/items', status: 403, headers: { 'retry-after': '0' }, json: { message: 'You have exceeded a secondary rate limit' } });
    const rt = runtime();
    await rt.execute('items', 'create', { n: 7 });
    expect(rt.lastCall.attempts).toBe(2);
    expect(api.requests.filter((r) => r.method === 'POST')).toHaveLength(2);
  });

  it('a 403 with requests remaining is refused credentials', async () => {
    api.inject({
      path: '/items',
      status: 403,
      headers: { 'x-ratelimit-remaining': '4999' },
      json: { error: { message: 'Resource not accessible by integration' } },
    });
    const e = await failure(runtime().execute('items', 'list', { limit: 1 }));
    expect(e.code).toBe('upstream_credentials_rejected');
  });
});

describe('idempotency keys ({{call.id}})', () => {
  it('one key per logical call: the same in every retry, a new one for the next call', async () => {
    api.inject({ path: '/items', status: 503, json: { error: { message: 'try again' } } });
    const rt = runtime();
    await rt.execute('charges', 'create', { n: 1 });
    await rt.execute('charges', 'create', { n: 2 });
    const keys = api.requests.map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).not.toBe(keys[0]);
  });

  it('parallel calls on one runtime each get their own key', async () => {
    const rt = runtime();
    await Promise.all(Array.from({ length: 8 }, (_, n) => rt.execute('charges', 'create', { n })));
    const keys = new Set(api.requests.map((r) => r.headers['idempotency-key']));
    expect(api.requests).toHaveLength(8);
    expect(keys.size).toBe(8);
  });
});

describe('pagination: Relay connections and next-page URLs', () => {
  async function all(rt: ConnectorRuntime, entity: string, params: Record<string, unknown> = {}): Promise<string[]> {
    const ids: string[] = [];
    for await (const page of rt.pages(entity, params)) ids.push(...page.data.map((r) => String(r['id'])));
    return ids;
  }

  it('graphql_cursor over pageInfo: endCursor as the next after, hasNextPage false ends (no extra call)', async () => {
    expect(await all(runtime(), 'relay')).toEqual(['r0', 'r1', 'r2']);
    expect(api.requests.map((r) => (JSON.parse(r.rawBody) as { variables: Record<string, unknown> }).variables)).toEqual([
      {},
      { after: 'c1' },
      { after: 'c2' },
    ]);
  });

  it('next_url follows links.next (query carried by the URL) until has_more is false', async () => {
    expect(await all(runtime(), 'zd', { size: 1 })).toEqual(['z0', 'z1', 'z2']);
    expect(api.requests.map((r) => r.query.get('page[after]'))).toEqual([null, '1', '2']);
    expect(api.requests.every((r) => r.query.get('page[size]') === '1' && r.headers['authorization'] === 'Bearer good-key')).toBe(true);
  });

  it("next_url to another origin is refused: credentials never leave the base URL's host", async () => {
    const rt = runtime();
    const seen: string[] = [];
    const e = await failure(
      (async () => {
        for await (const page of rt.pages('zd', { elsewhere: true })) seen.push(...page.data.map((r) => String(r['id'])));
      })(),
    );
    expect(seen).toEqual(['z0']);
    expect(e.code).toBe('upstream_protocol_error');
    expect(e.message).toContain('another host');
    expect(api.requests).toHaveLength(1);
  });
});

describe('basic auth secrets are scrubbed in their sent form too', () => {
  it('secretValues holds the api token and the base64 "user:password" the upstream might echo', async () => {
    const { scrubSecrets, secretValues } = await import('../../src/engine/secret-scrub.ts');
    const creds = { email: 'agent@example.com', api_token: 'zd-sécret' };
    const b64 = Buffer.from('agent@example.com/token:zd-sécret', 'utf8').toString('base64');
    const secrets = secretValues(testManifest, 'basic', creds);
    expect(secrets).toEqual(['zd-sécret', b64]);
    expect(JSON.stringify(scrubSecrets({ echoed: `Authorization: Basic ${b64}` }, secrets))).not.toContain(b64);
  });
});
