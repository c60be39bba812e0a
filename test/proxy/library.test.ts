/**
 * The proxy in library mode and the CLI: every connector against its simulator, refusals that
 * send nothing, extra hosts, the manifest switch, OAuth refresh and idempotency keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/client/library.ts';
import { ConnectorRuntime } from '../../src/engine/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { connectorRegistry, loadManifestText, type LoadedManifest } from '../../src/manifest/index.ts';
import { startSandbox, type Sandbox } from '../../src/simulator/sandbox.ts';
import { startTestApi, testManifest, type TestApi } from '../fixtures/testapi-server.ts';
import { failure } from '../helpers/errors.ts';
import { mutate } from '../helpers/manifest.ts';
import { runSwitchboard } from '../helpers/process.ts';

interface Exchange {
  url: string;
  method: string;
  headers: Record<string, string>;
  status: number;
  body: Buffer;
}

/** A fetch that records every request and the exact bytes of every answer. */
function recordingFetch(): { fetch: FetchLike; seen: Exchange[] } {
  const seen: Exchange[] = [];
  const f: FetchLike = async (input, init) => {
    const res = await fetch(input, init);
    const body = Buffer.from(await res.clone().arrayBuffer());
    seen.push({
      url: String(input),
      method: init?.method ?? 'GET',
      headers: { ...((init?.headers ?? {}) as Record<string, string>) },
      status: res.status,
      body,
    });
    return res;
  };
  return { fetch: f, seen };
}

/** True when some request header (Basic auth decoded), or the query of an API that takes its credentials there, carries one of the credential values. */
function carriesCredentials(headers: Record<string, string>, credentials: Record<string, string>, url: URL): boolean {
  const values = Object.values(credentials).filter((v) => v.length >= 6);
  if ([...url.searchParams.values()].some((q) => values.includes(q))) return true;
  return Object.values(headers).some((h) => {
    const decoded = h.startsWith('Basic ') ? Buffer.from(h.slice(6), 'base64').toString('utf8') : h;
    return values.some((v) => decoded.includes(v));
  });
}

/**
 * (test/proxy/every-connector.test.ts derives such a request for every connector of the registry
 * from its vendor description; these hand-picked ones add the wrong-credentials half.)
 * Per connector, a request no action of its manifest renders (a credential-check or account
 * endpoint no entity models, a filter or GraphQL selection no action sends); the vendor
 * descriptions shipped with the connectors are trimmed to the operations the simulators serve.
 */
const CASES: Array<[string, { method: string; path: string; query?: string; body?: Record<string, unknown>; checksSecret?: false }]> = [
  ['clickup', { method: 'GET', path: '/user' }],
  ['bamboohr', { method: 'GET', path: '/meta/fields' }],
  ['github', { method: 'GET', path: '/user' }],
  ['apollo', { method: 'GET', path: '/auth/health' }],
  ['attio', { method: 'GET', path: '/v2/objects' }],
  ['airtable', { method: 'GET', path: '/v0/meta/whoami' }],
  ['gitlab', { method: 'GET', path: '/user' }],
  ['bitbucket', { method: 'GET', path: '/user' }],
  ['confluence', { method: 'GET', path: '/spaces', query: 'limit=1&sort=key' }],
  ['asana', { method: 'GET', path: '/users/me', query: 'opt_fields=name' }],
  ['close', { method: 'GET', path: '/me/' }],
  ['discord', { method: 'GET', path: '/users/@me' }],
  ['docusign', { method: 'GET', path: '/', query: 'include_account_settings=false' }],
  // Dropbox's account route takes no argument: a POST with no body (the SDK sends none).
  ['dropbox', { method: 'POST', path: '/users/get_current_account' }],
  ['freshbooks', { method: 'GET', path: '/invoices/invoices/1184349666/share_link', query: 'share_method=share_link' }],
  [
    'calendly',
    { method: 'GET', path: '/event_types', query: 'organization=https%3A%2F%2Fapi.calendly.com%2Forganizations%2FEBHAAFHDCAEQTSEZ&active=true&count=2' },
  ],
  ['figma', { method: 'GET', path: '/v1/me' }],
  ['gong', { method: 'GET', path: '/v2/users', query: 'includeAvatars=false' }],
  ['gmail', { method: 'GET', path: '/gmail/v1/users/me/profile' }],
  ['google_calendar', { method: 'GET', path: '/users/me/calendarList', query: 'minAccessRole=owner&showHidden=true' }],
  ['google_docs', { method: 'POST', path: '/v1/documents', query: 'fields=documentId,title', body: { title: 'Proxy check' } }],
  ['google_drive', { method: 'GET', path: '/about', query: 'fields=user' }],
  // Sheets has no account endpoint: a create asking only for the new spreadsheet's id and URL (a field mask no action sends).
  ['google_sheets', { method: 'POST', path: '/v4/spreadsheets', query: 'fields=spreadsheetId,spreadsheetUrl', body: { properties: { title: 'Proxy check' } } }],
  ['granola', { method: 'GET', path: '/v1/notes', query: 'created_before=2100-01-01T00:00:00Z&page_size=2' }],
  ['hubspot', { method: 'GET', path: '/crm/v3/objects/contacts', query: 'limit=2&archived=false&properties=email' }],
  ['intercom', { method: 'GET', path: '/me' }],
  ['jira', { method: 'GET', path: '/rest/api/3/myself' }],
  ['klaviyo', { method: 'GET', path: '/api/accounts' }],
  ['lever', { method: 'GET', path: '/opportunities', query: 'limit=1' }],
  ['linear', { method: 'POST', path: '/graphql', body: { query: '{ viewer { id name } }' } }],
  ['microsoft_teams', { method: 'GET', path: '/me', query: '%24select=id,displayName' }],
  ['monday', { method: 'POST', path: '/v2', body: { query: '{ me { id } }' } }],
  ['notion', { method: 'GET', path: '/users/me' }],
  ['onedrive', { method: 'GET', path: '/me/drive', query: '$select=id,driveType,quota' }],
  ['outlook', { method: 'GET', path: '/me/mailFolders/inbox' }],
  ['pipedrive', { method: 'GET', path: '/v1/users/me' }],
  ['sharepoint', { method: 'GET', path: '/sites/root', query: '$select=id,siteCollection,webUrl' }],
  ['shopify', { method: 'POST', path: '/admin/api/2026-10/graphql.json', body: { query: '{ shop { id myshopifyDomain } }' } }],
  ['okta', { method: 'GET', path: '/api/v1/users/me' }],
  ['quickbooks', { method: 'GET', path: '/preferences', query: 'minorversion=75' }],
  ['salesforce', { method: 'GET', path: '/services/data/v66.0/limits' }],
  ['sendgrid', { method: 'GET', path: '/marketing/contacts' }],
  ['slack', { method: 'GET', path: '/auth.test' }],
  ['stripe', { method: 'GET', path: '/v1/account' }],
  ['todoist', { method: 'GET', path: '/user' }],
  ['typeform', { method: 'GET', path: '/me' }],
  ['trello', { method: 'GET', path: '/members/me', query: 'fields=all' }],
  // Zendesk's simulator checks that Basic auth is present, not its token: the wrong-credentials half is skipped for it.
  ['zendesk', { method: 'GET', path: '/api/v2/tickets', query: 'sort=-updated_at&page[size]=2', checksSecret: false }],
  ['zoom', { method: 'GET', path: '/users/me' }],
  ['zoho_crm', { method: 'GET', path: '/crm/v8/org' }],
];

describe("the proxy against every connector's simulator", () => {
  let sandbox: Sandbox;
  const registry = connectorRegistry();
  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(() => sandbox?.close());

  it('covers every connector', () => {
    expect(CASES.map(([t]) => t).sort()).toEqual([...registry.keys()].sort());
  });

  it.each(CASES)("%s: the vendor accepts it with the connector's auth, and the answer comes back unchanged", async (type, req) => {
    const c = sandbox.connectors[type];
    expect(c, `no simulator for ${type}`).toBeDefined();
    const { fetch, seen } = recordingFetch();
    const rt = new ConnectorRuntime(registry.get(type) as LoadedManifest, c!.credentials, { baseUrl: c!.base_url, fetch, limiter: null });
    const answer = await rt.proxy({
      method: req.method,
      path: req.path,
      ...(req.query !== undefined ? { query: req.query } : {}),
      ...(req.body !== undefined ? { body: req.body } : {}),
    });
    expect(answer.status, answer.body.toString()).toBeGreaterThanOrEqual(200);
    expect(answer.status).toBeLessThan(300);
    expect(seen).toHaveLength(1);
    expect(answer.body.equals(seen[0]!.body)).toBe(true);
    expect(answer.body.length).toBeGreaterThan(0);
    expect(new URL(seen[0]!.url).pathname).toBe(new URL(c!.base_url).pathname.replace(/\/$/, '') + req.path);
    expect(carriesCredentials(seen[0]!.headers, c!.credentials, new URL(seen[0]!.url))).toBe(true);
    // The same request with wrong credentials is refused by the simulator: the auth above is what let it through.
    if (req.checksSecret === false) return;
    // Only the secret fields are spoiled: ids and hosts (a team id, a subdomain) stay valid, so a variant still matches.
    const secret = new Set((registry.get(type) as LoadedManifest).auth.flatMap((v) => v.secretFields));
    const wrong = Object.fromEntries(Object.entries(c!.credentials).map(([k, v]) => [k, secret.has(k) ? `${v}x` : v]));
    const refused = await new ConnectorRuntime(registry.get(type) as LoadedManifest, wrong, {
      baseUrl: c!.base_url,
      limiter: null,
      retry: { maxAttempts: 1 },
    }).proxy({ method: req.method, path: req.path, ...(req.body !== undefined ? { body: req.body } : {}) });
    const text = refused.body.toString();
    expect(refused.status === 401 || refused.status === 403 || /invalid_auth|not_authed|"errors"/.test(text), `${refused.status} ${text}`).toBe(true);
  });
});

describe('refusals send nothing', () => {
  const { fetch, seen } = recordingFetch();
  const manifest = loadManifestText(
    mutate((m) => {
      m['proxy'] = { headers: ['X-Granola-Version'], hosts: ['https://files.granola.example'] };
    }),
    'granola-proxy.yaml',
  );
  const rt = new ConnectorRuntime(manifest, { api_key: 'grn_secret_abcdef' }, { baseUrl: 'http://127.0.0.1:9/base', fetch, limiter: null });

  it.each([
    ['a dot-dot segment', '/v1/../../admin'],
    ['an encoded dot-dot', '/v1/%2E%2e/admin'],
    ['an encoded slash', '/v1%2fadmin'],
    ['a scheme-relative path', '//evil.example.com/v1'],
    ['an absolute URL', 'https://evil.example.com/v1'],
    ['a backslash', '/v1\\..\\admin'],
  ])('%s: proxy_path_refused', async (_n, path) => {
    const e = await failure(rt.proxy({ method: 'GET', path }));
    expect(e.code).toBe('proxy_path_refused');
    expect(seen).toHaveLength(0);
  });

  it.each([['Authorization'], ['Cookie'], ['Host'], ['X-Forwarded-For'], ['Connection'], ['X-Unlisted']])(
    'the header %s: proxy_header_refused',
    async (name) => {
      const e = await failure(rt.proxy({ method: 'GET', path: '/v1/notes', headers: { [name]: 'v' } }));
      expect(e.code).toBe('proxy_header_refused');
      expect(seen).toHaveLength(0);
    },
  );

  it('a host the manifest does not declare: proxy_host_refused', async () => {
    const e = await failure(rt.proxy({ method: 'GET', path: '/x', host: 'https://evil.example.com' }));
    expect(e.code).toBe('proxy_host_refused');
    expect(seen).toHaveLength(0);
  });

  it('a connector type whose manifest switches the proxy off: proxy_disabled', async () => {
    const off = new ConnectorRuntime(
      loadManifestText(
        mutate((m) => void (m['proxy'] = { enabled: false })),
        'granola-off.yaml',
      ),
      { api_key: 'k' },
      { baseUrl: 'http://127.0.0.1:9', fetch, limiter: null },
    );
    expect((await failure(off.proxy({ method: 'GET', path: '/v1/notes' }))).code).toBe('proxy_disabled');
    expect(seen).toHaveLength(0);
  });

  it("the manifest's extra headers and hosts are forwarded and reached", async () => {
    const answers: string[] = [];
    const hosted = new ConnectorRuntime(
      manifest,
      { api_key: 'grn_secret_abcdef' },
      {
        fetch: async (input, init) => {
          answers.push(
            `${String(input)} ${(init?.headers as Record<string, string>)['x-granola-version']} ${(init?.headers as Record<string, string>)['authorization']}`,
          );
          return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
        },
        limiter: null,
      },
    );
    await hosted.proxy({ method: 'GET', path: '/v1/files/1', host: 'https://files.granola.example', headers: { 'X-Granola-Version': '2' } });
    expect(answers).toEqual(['https://files.granola.example/v1/files/1 2 Bearer grn_secret_abcdef']);
  });
});

describe('auth and retries through the proxy', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api.close());

  it('an expired OAuth token is refreshed once and the call retried', async () => {
    const refreshed: unknown[] = [];
    const rt = new ConnectorRuntime(
      testManifest,
      { access_token: 'expired', refresh_token: 'refresh-1', client_id: 'app', client_secret: 'app-secret' },
      {
        baseUrl: api.url,
        limiter: null,
        oauthClient: { clientId: 'app', clientSecret: 'app-secret', tokenUrl: `${api.url}/token` },
        onTokenRefresh: (c) => void refreshed.push(c),
      },
    );
    const r = await rt.proxy({ method: 'GET', path: '/items', query: { limit: 2 } });
    expect(r.status).toBe(200);
    expect((JSON.parse(r.body.toString()) as { items: unknown[] }).items).toHaveLength(2);
    expect(refreshed).toHaveLength(1);
    expect(api.tokenRequests).toBe(1);
  });

  const flaky = (statuses: number[]): { fetch: FetchLike; calls: () => number } => {
    let n = 0;
    return {
      fetch: async () => {
        const s = statuses[n++] ?? 200;
        return new Response(s === 200 ? '{"ok":true}' : '{"error":"x"}', {
          status: s,
          headers: { 'content-type': 'application/json', ...(s === 429 ? { 'retry-after': '0' } : {}) },
        });
      },
      calls: () => n,
    };
  };

  it("a POST is retried only when it carries the vendor's idempotency key", async () => {
    const manifest = loadManifestText(
      mutate((m) => void (m['proxy'] = { idempotency_header: 'Idempotency-Key' })),
      'granola-idem.yaml',
    );
    const without = flaky([503]);
    const a = await new ConnectorRuntime(manifest, { api_key: 'k' }, { fetch: without.fetch, limiter: null, retry: { baseDelayMs: 1 } }).proxy({
      method: 'POST',
      path: '/v1/notes',
      body: { a: 1 },
    });
    expect(a.status).toBe(503);
    expect(without.calls()).toBe(1);
    const withKey = flaky([503, 429]);
    const b = await new ConnectorRuntime(manifest, { api_key: 'k' }, { fetch: withKey.fetch, limiter: null, retry: { baseDelayMs: 1 } }).proxy({
      method: 'POST',
      path: '/v1/notes',
      body: { a: 1 },
      headers: { 'Idempotency-Key': 'k1' },
    });
    expect(b.status).toBe(200);
    expect(withKey.calls()).toBe(3);
  });

  it('connect() exposes proxy()', async () => {
    const sim = flaky([]);
    const c = connect('granola', { credentials: { api_key: 'grn_k' }, fetch: sim.fetch });
    const r = await c.proxy({ method: 'GET', path: '/v1/notes' });
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe('{"ok":true}');
  });
});

describe('switchboard proxy', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(() => sandbox?.close());

  it("prints the vendor's status, headers and body; exits 1 on a vendor error", async () => {
    const g = sandbox.connectors['granola']!;
    const env = { SWITCHBOARD_CREDENTIALS: JSON.stringify(g.credentials) };
    const r = await runSwitchboard(['proxy', 'granola', 'GET', '/v1/notes', '--query', 'page_size=2', '--base-url', g.base_url], env);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { status: number; body: { notes: unknown[] } };
    expect(out.status).toBe(200);
    expect(out.body.notes).toHaveLength(2);
    const missing = await runSwitchboard(['proxy', 'granola', 'GET', '/v1/notes/not_nope', '--base-url', g.base_url], env);
    expect(missing.code).toBe(1);
    expect((JSON.parse(missing.stdout) as { status: number }).status).toBe(404);
    const refused = await runSwitchboard(['proxy', 'granola', 'GET', '/../admin', '--base-url', g.base_url], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('proxy_path_refused');
  });
});
