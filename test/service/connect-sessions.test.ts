/**
 * Connect sessions over HTTP, without a browser, on SQLite and PostgreSQL: the session endpoint,
 * the fragment-token exchange (once), the page's security headers, CSRF, what a session may and
 * may not touch, re-authorization, expiry, and the operator's frame-ancestors setting.
 */
import { createApplication } from '../../src/service/auth/accounts.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/hosted.ts';
import { startSandbox, type Sandbox } from '../../src/simulator/sandbox.ts';
import { defaultServiceConfig, loadServiceConfig, type CreatedApplication } from '../../src/service/index.ts';
import { withSandbox } from '../../src/service/data/sandbox-wiring.ts';
import { sandboxConnectLink } from '../../src/service/connect/sandbox-demo.ts';
import { homePage } from '../../src/service/connect/connect-html.ts';
import { parseKeyRing } from '../../src/store/index.ts';
import { describeEachDialect, openApiErrors, startHarness, TEST_ENCRYPTION_KEY, testRegistry, type Harness } from './helpers.ts';

const SESSIONS = '/api/v1/integrations/connect/sessions';
const CONNECTORS = '/api/v1/integrations/connectors';

interface Page {
  status: number;
  headers: Headers;
  text: string;
}

describeEachDialect('connect sessions on %s', (dialect) => {
  let sandbox: Sandbox;
  let h: Harness;
  let app: CreatedApplication;
  let token: string;

  beforeAll(async () => {
    sandbox = await startSandbox();
    const registry = testRegistry();
    h = await startHarness(dialect, { config: { connectorTypes: withSandbox(defaultServiceConfig(), sandbox, registry).connectorTypes }, registry });
    app = await h.createApp('connect-org');
    token = await h.token(app);
  });
  afterAll(async () => {
    await h?.close();
    await sandbox?.close();
  });

  const create = (body: Record<string, unknown>) => h.request('POST', SESSIONS, { token, body });

  /** The page's fetch: JSON exchange of the fragment token; returns the cookie. */
  async function exchange(sessionToken: string, cookie?: string): Promise<{ status: number; cookie?: string; setCookie: string | null; body: any }> {
    const r = await h.request('POST', '/connect/session', {
      body: { token: sessionToken },
      ...(cookie !== undefined ? { headers: { cookie: `sb_connect=${cookie}` } } : {}),
    });
    const setCookie = r.headers.get('set-cookie');
    const m = /sb_connect=([^;]+)/.exec(setCookie ?? '');
    return { status: r.status, setCookie, body: r.body, ...(m ? { cookie: m[1] as string } : {}) };
  }

  async function page(method: 'GET' | 'POST', path: string, cookie: string | undefined, form?: Record<string, string>): Promise<Page> {
    const res = await fetch(h.url + path, {
      method,
      redirect: 'manual',
      headers: {
        ...(cookie !== undefined ? { cookie: `sb_connect=${cookie}` } : {}),
        ...(form !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(form !== undefined ? { body: new URLSearchParams(form).toString() } : {}),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  const connectorsCount = async (customer: string): Promise<number> =>
    (await h.request('GET', `${CONNECTORS}?customer_name=${customer}`, { token })).body.data.length;

  const csrfOf = (html: string): string => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

  async function opened(customer: string, types?: string[]): Promise<{ cookie: string; sessionToken: string }> {
    const r = await create({ customer_name: customer, ...(types !== undefined ? { allowed_connector_types: types } : {}) });
    expect(r.status, r.text).toBe(201);
    const sessionToken = r.body.token as string;
    const x = await exchange(sessionToken);
    expect(x.status).toBe(204);
    return { cookie: x.cookie as string, sessionToken };
  }

  it('creates a session: a short-lived token in the URL fragment, every type by default', async () => {
    const r = await create({ customer_name: 'alice', redirect_url: 'https://app.example.com/integrations' });
    expect(r.status, r.text).toBe(201);
    expect(openApiErrors('POST', SESSIONS, r)).toEqual([]);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body.token).toMatch(/^sbx_[A-Za-z0-9_-]{43}$/);
    expect(r.body.url).toBe(`${h.url}/connect#session=${r.body.token}`);
    const ttl = Date.parse(r.body.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(29 * 60 * 1000);
    expect(ttl).toBeLessThanOrEqual(30 * 60 * 1000);
    const x = await exchange(r.body.token);
    const home = await page('GET', '/connect', x.cookie);
    for (const t of ['Granola', 'Intercom', 'monday.com']) expect(home.text).toContain(`Connect ${t}`);
    // Only a hash of the token is stored; no log line carries it.
    const rows = await h.service.database.db
      .selectFrom('connect_sessions' as never)
      .selectAll()
      .execute();
    expect(JSON.stringify(rows)).not.toContain(r.body.token);
    expect(h.logs.join('\n')).not.toContain(r.body.token);
  });

  it('is created by the SDK: client.connect.createSession', async () => {
    const client = createClient({ baseUrl: h.url, customerName: 'sdk-customer', clientId: app.client_id, clientSecret: app.client_secret });
    const session = await client.connect.createSession({ allowed_connector_types: ['granola'], redirect_url: 'https://app.example.com/done' });
    expect(session.url).toBe(`${h.url}/connect#session=${session.token}`);
    const x = await exchange(session.token);
    const home = await page('GET', '/connect', x.cookie);
    expect(home.text).toContain('Connect Granola');
    expect(home.text).not.toContain('Connect Intercom');
    await expect(client.connect.createSession({ allowed_connector_types: ['nope'] })).rejects.toMatchObject({ code: 'unknown_connector_type', status: 400 });
  });

  it.each([
    [
      'an unknown connector type',
      { customer_name: 'a', allowed_connector_types: ['granola', 'no_such_connector'] },
      400,
      'unknown_connector_type',
      '/allowed_connector_types/1',
    ],
    ['a redirect_url that is not http(s)', { customer_name: 'a', redirect_url: 'javascript:alert(1)' }, 400, 'invalid_request', '/redirect_url'],
    ['no customer_name', { allowed_connector_types: ['granola'] }, 400, 'invalid_request', '/customer_name'],
    ['an empty type list', { customer_name: 'a', allowed_connector_types: [] }, 400, 'invalid_request', '/allowed_connector_types'],
  ])('refuses %s', async (_n, body, status, code, path) => {
    const r = await create(body);
    expect({ status: r.status, code: r.body.code }, r.text).toEqual({ status, code });
    expect(r.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    expect(openApiErrors('POST', SESSIONS, r)).toEqual([]);
  });

  it('needs the organization token, and its own token is no API token', async () => {
    expect((await h.request('POST', SESSIONS, { body: { customer_name: 'a' } })).status).toBe(401);
    const r = await create({ customer_name: 'a' });
    for (const [m, p] of [
      ['GET', CONNECTORS],
      ['POST', SESSIONS],
    ] as const) {
      const asApi = await h.request(m, p, { token: r.body.token, ...(m === 'POST' ? { body: { customer_name: 'a' } } : {}) });
      expect({ status: asApi.status, code: asApi.body.code }).toEqual({ status: 401, code: 'unauthorized' });
    }
  });

  it('exchanges the token once, for an HttpOnly cookie; the same browser may open the link again', async () => {
    const r = await create({ customer_name: 'bob', allowed_connector_types: ['granola'] });
    const first = await exchange(r.body.token);
    expect(first.status).toBe(204);
    expect(first.setCookie).toMatch(/^sb_connect=[A-Za-z0-9_-]{43}; Path=\/connect; HttpOnly; Max-Age=\d+; SameSite=Lax$/);
    const elsewhere = await exchange(r.body.token);
    expect({ status: elsewhere.status, code: elsewhere.body.code, reason: elsewhere.body.details.reason }).toEqual({
      status: 401,
      code: 'connect_session_invalid',
      reason: 'opened',
    });
    expect(elsewhere.setCookie).toBeNull();
    expect((await exchange(r.body.token, first.cookie)).status).toBe(204);
    const unknown = await exchange('sbx_nope');
    expect(unknown.body.details).toMatchObject({ reason: 'invalid', heading: 'This link is not valid' });
  });

  it('serves the page with a strict CSP, no inline code, and no framing by default', async () => {
    const { cookie } = await opened('carol', ['granola']);
    for (const p of ['/connect', '/connect/types/granola']) {
      const r = await page('GET', p, cookie);
      expect(r.status, r.text).toBe(200);
      const csp = r.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(r.headers.get('x-frame-options')).toBe('DENY');
      expect(r.headers.get('cache-control')).toBe('no-store');
      expect(r.headers.get('referrer-policy')).toBe('no-referrer');
      expect(r.text).not.toMatch(/<script(?![^>]*\bsrc=)/);
      expect(r.text).not.toMatch(/\sstyle=|\son[a-z]+=/);
    }
    const form = await page('GET', '/connect/types/granola', cookie);
    expect(form.text).toMatch(/<label for="f-api_key-api_key">Granola API key<\/label>/);
    expect(form.text).toMatch(/<input id="f-api_key-api_key" name="field.api_key" type="password"/);
    expect(form.text).toContain('Settings → API');
  });

  it("refuses forms without the CSRF token, types outside the session and other customers' connectors", async () => {
    const { cookie } = await opened('dave', ['granola']);
    const key = sandbox.connectors['granola']!.credentials['api_key']!;
    const csrf = csrfOf((await page('GET', '/connect/types/granola', cookie)).text);
    expect(csrf).not.toBe('');
    const before = await h.snapshot();
    for (const bad of ['', 'x'.repeat(csrf.length)]) {
      const r = await page('POST', '/connect/types/granola/credentials', cookie, { csrf: bad, variant: 'api_key', 'field.api_key': key });
      expect(r.status).toBe(403);
      expect(r.text).toContain('This form has expired');
    }
    expect((await page('GET', '/connect/types/intercom', cookie)).status).toBe(404);
    expect((await page('POST', '/connect/types/intercom/credentials', cookie, { csrf, variant: 'access_token', 'field.access_token': 'x' })).status).toBe(404);
    const other = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'erin', connector_type: 'granola', name: 'Erin', credentials: { api_key: key } },
    });
    expect(other.status).toBe(201);
    const mid = await h.snapshot();
    expect((await page('GET', `/connect/types/granola?reconnect=${other.body.id}`, cookie)).status).toBe(404);
    expect(
      (await page('POST', '/connect/types/granola/credentials', cookie, { csrf, variant: 'api_key', reconnect: other.body.id, 'field.api_key': 'grn_new' }))
        .status,
    ).toBe(404);
    expect(await h.snapshot()).toBe(mid);
    // Without a cookie, forms say the link is not valid; nothing changed.
    const none = await page('POST', '/connect/types/granola/credentials', undefined, { csrf, variant: 'api_key', 'field.api_key': key });
    expect(none.status).toBe(401);
    expect(none.text).toContain('This link is not valid');
    expect(before).not.toBe(mid);
  });

  it('asks for a missing required field by name, and stores nothing', async () => {
    const { cookie } = await opened('hank', ['granola']);
    const csrf = csrfOf((await page('GET', '/connect/types/granola', cookie)).text);
    const before = await h.snapshot();
    const r = await page('POST', '/connect/types/granola/credentials', cookie, { csrf, variant: 'api_key', 'field.api_key': '  ' });
    expect(r.status).toBe(400);
    expect(r.text).toContain('Fill in the required fields.');
    expect(r.text).toMatch(/aria-describedby="help-api_key f-api_key-api_key-error" aria-invalid="true"/);
    expect(r.text).toContain('Enter your Granola API key.');
    expect(await h.snapshot()).toBe(before);
  });

  it("re-authorizes one of the customer's connectors with new credentials, then the session is used", async () => {
    const key = sandbox.connectors['granola']!.credentials['api_key']!;
    // Stale credentials, stored unchecked (as an operator pre-provisioning would), to reconnect.
    const old = await h.request('POST', `${CONNECTORS}?check=false`, {
      token,
      body: { customer_name: 'frank', connector_type: 'granola', name: 'Frank notes', credentials: { api_key: 'grn_old' } },
    });
    const { cookie } = await opened('frank', ['granola']);
    const form = await page('GET', `/connect/types/granola?reconnect=${old.body.id}`, cookie);
    expect(form.status).toBe(200);
    expect(form.text).toContain('Reconnect Granola');
    const posted = await page('POST', '/connect/types/granola/credentials', cookie, {
      csrf: csrfOf(form.text),
      variant: 'api_key',
      reconnect: old.body.id,
      'field.api_key': key,
    });
    expect(posted.status, posted.text).toBe(303); // post/redirect/get: the success page is a GET
    const done = await page('GET', posted.headers.get('location') as string, cookie);
    expect(done.status, done.text).toBe(200);
    expect(done.text).toContain('Granola is reconnected');
    expect(done.text).not.toContain(key);
    const row = await h.store.getConnector(app.organization_id, old.body.id);
    const creds = parseKeyRing(TEST_ENCRYPTION_KEY).openJson<Record<string, unknown>>(
      { keyId: row!.credentials_key_id, ciphertext: row!.credentials_ciphertext },
      `connector:${old.body.id}`,
    );
    expect(creds).toEqual({ api_key: key });
    const exec = await h.request('POST', `${CONNECTORS}/${old.body.id}/execute`, {
      token,
      body: { entity: 'notes', action: 'list', params: { page_size: 1 } },
    });
    expect(exec.status, exec.text).toBe(200);
    const after = await page('GET', '/connect', cookie);
    expect(after.status).toBe(410);
    expect(after.text).toContain('This link has already been used');
  });

  /** Follow the OAuth button's redirects as a browser would (provider consent is immediate in the simulator). */
  async function oauthRoundTrip(cookie: string, form: Record<string, string>): Promise<Page> {
    const start = await page('POST', '/connect/types/intercom/oauth', cookie, form);
    expect(start.status, start.text).toBe(303);
    let location = start.headers.get('location') as string;
    expect(location.startsWith(sandbox.connectors['intercom']!.base_url)).toBe(true);
    for (let hop = 0; hop < 4; hop++) {
      const own = location.startsWith(h.url) || location.startsWith('/');
      const res = await fetch(own && location.startsWith('/') ? h.url + location : location, {
        redirect: 'manual',
        headers: own ? { cookie: `sb_connect=${cookie}` } : {},
      });
      if (res.status !== 302 && res.status !== 303) return { status: res.status, headers: res.headers, text: await res.text() };
      location = res.headers.get('location') as string;
    }
    throw new Error(`too many redirects, last ${location}`);
  }

  it("re-authorizes through OAuth, and shows the provider's refusal in words", async () => {
    // Stale credentials, stored unchecked (as an operator pre-provisioning would), to reconnect.
    const old = await h.request('POST', `${CONNECTORS}?check=false`, {
      token,
      body: { customer_name: 'ivy', connector_type: 'intercom', name: 'Support', credentials: { access_token: 'revoked' } },
    });
    expect(old.status).toBe(201);
    const { cookie } = await opened('ivy', ['intercom']);
    const form = await page('GET', `/connect/types/intercom?reconnect=${old.body.id}`, cookie);
    expect(form.text).toContain('Continue with Intercom');
    const csrf = csrfOf(form.text);
    const csp = form.headers.get('content-security-policy') ?? '';
    expect(csp).toContain(`form-action 'self' ${new URL(sandbox.connectors['intercom']!.base_url).origin}`);

    if (sandbox.simulators['intercom']!['oauth']) (sandbox.simulators['intercom']!['oauth'] as { deny: boolean }).deny = true;
    try {
      const denied = await oauthRoundTrip(cookie, { csrf, reconnect: old.body.id });
      expect(denied.status).toBe(400);
      expect(denied.text).toContain('Access to Intercom was not granted (access_denied).');
    } finally {
      (sandbox.simulators['intercom']!['oauth'] as { deny: boolean }).deny = false;
    }
    const done = await oauthRoundTrip(cookie, { csrf, reconnect: old.body.id });
    expect(done.status, done.text).toBe(200);
    expect(done.text).toContain('Intercom is reconnected');
    const after = await h.request('GET', `${CONNECTORS}/${old.body.id}`, { token });
    expect(after.body).toMatchObject({ id: old.body.id, name: 'Support', auth_variant: 'oauth' });
    const exec = await h.request('POST', `${CONNECTORS}/${old.body.id}/execute`, { token, body: { entity: 'contacts', action: 'list', params: {} } });
    expect(exec.status, exec.text).toBe(200);
    expect(await connectorsCount('ivy')).toBe(1);
    // The secret_id the callback handed over is masked in the request log.
    expect(h.logs.join('\n')).toMatch(/secret_id=%5Bredacted%5D|secret_id=\[redacted\]/);
  });

  it('ends at expiry: the exchange and the page both say so', async () => {
    const r = await create({ customer_name: 'gina', allowed_connector_types: ['granola'] });
    const late = await create({ customer_name: 'gina', allowed_connector_types: ['granola'] });
    const x = await exchange(r.body.token);
    h.clock.offsetMs += 30 * 60 * 1000 + 1000;
    try {
      const p = await page('GET', '/connect', x.cookie);
      expect(p.status).toBe(410);
      expect(p.text).toContain('This link has expired');
      const e = await exchange(late.body.token);
      expect({ status: e.status, reason: e.body.details.reason }).toEqual({ status: 401, reason: 'expired' });
    } finally {
      h.clock.offsetMs -= 30 * 60 * 1000 + 1000;
    }
  });
});

describe('connect UI home page', () => {
  it('offers "Reconnect" for connectors whose credentials were rejected, and escapes names', () => {
    const html = homePage([
      {
        type: 'granola',
        title: 'Granola',
        connectors: [
          { id: 'c1', name: 'Team <notes>', status: 'auth_failed', created_at: '2026-01-02T00:00:00.000Z' },
          { id: 'c2', name: 'Mine', status: 'active', created_at: '2026-01-03T00:00:00.000Z' },
        ],
      },
    ]);
    expect(html).toContain('<a class="button secondary" href="/connect/types/granola?reconnect=c1" aria-label="Reconnect Team &lt;notes&gt;">Reconnect</a>');
    expect(html).not.toContain('reconnect=c2');
    expect(html).toContain('credentials rejected');
    expect(html).not.toContain('<notes>');
  });
});

describe('connect UI frame-ancestors setting', () => {
  it('reads SWITCHBOARD_CONNECT_FRAME_ANCESTORS and refuses what is not an origin', () => {
    expect(loadServiceConfig({}, []).connectFrameAncestors).toEqual([]);
    expect(
      loadServiceConfig({ SWITCHBOARD_CONNECT_FRAME_ANCESTORS: "https://app.example.com 'self', https://*.example.org:8443" }, []).connectFrameAncestors,
    ).toEqual(['https://app.example.com', "'self'", 'https://*.example.org:8443']);
    expect(() => loadServiceConfig({ SWITCHBOARD_CONNECT_FRAME_ANCESTORS: "https://a.com; script-src 'unsafe-inline'" }, [])).toThrow(
      /SWITCHBOARD_CONNECT_FRAME_ANCESTORS/,
    );
  });

  it('lets only the configured origins frame the page, with a cookie that works in a frame', async () => {
    const h = await startHarness('sqlite', { config: { connectFrameAncestors: ['https://app.example.com'] } });
    try {
      const t = await h.token(await h.createApp('framed'));
      const s = await h.request('POST', SESSIONS, { token: t, body: { customer_name: 'x', allowed_connector_types: ['granola'] } });
      const x = await h.request('POST', '/connect/session', { body: { token: s.body.token } });
      expect(x.headers.get('set-cookie')).toMatch(/; SameSite=None; Secure; Partitioned$/);
      const cookie = /sb_connect=([^;]+)/.exec(x.headers.get('set-cookie') ?? '')?.[1];
      const res = await fetch(`${h.url}/connect`, { headers: { cookie: `sb_connect=${cookie}` } });
      expect(res.headers.get('content-security-policy')).toContain('frame-ancestors https://app.example.com');
      expect(res.headers.get('x-frame-options')).toBeNull();
    } finally {
      await h.close();
    }
  });
});

describe('serve --sandbox connect link', () => {
  it('is a working link for a demo customer, with an application that can call the API', async () => {
    const sandbox = await startSandbox();
    const registry = testRegistry();
    const h = await startHarness('sqlite', { config: { connectorTypes: withSandbox(defaultServiceConfig(), sandbox, registry).connectorTypes }, registry });
    try {
      const link = await sandboxConnectLink(h.service.ctx);
      expect(link).toMatchObject({ organization: 'sandbox', customer_name: 'demo-customer' });
      const sessionToken = new URL(link.connect_url).hash.replace('#session=', '');
      expect(link.connect_url).toBe(`${h.url}/connect#session=${sessionToken}`);
      const x = await h.request('POST', '/connect/session', { body: { token: sessionToken } });
      expect(x.status).toBe(204);
      const cookie = /sb_connect=([^;]+)/.exec(x.headers.get('set-cookie') ?? '')?.[1];
      const home = await (await fetch(`${h.url}/connect`, { headers: { cookie: `sb_connect=${cookie}` } })).text();
      for (const t of ['Granola', 'Intercom', 'monday.com']) expect(home).toContain(`Connect ${t}`);
      // No application credentials are handed out with the link; an application of the organization sees what it connects.
      expect(Object.keys(link).sort()).toEqual(['connect_url', 'customer_name', 'expires_at', 'organization']);
      const app = await createApplication(h.service.ctx.store, { orgName: link.organization });
      const t = await h.token({ client_id: app.client_id, client_secret: app.client_secret, organization_id: '' });
      expect((await h.request('GET', `${CONNECTORS}?customer_name=demo-customer`, { token: t })).status).toBe(200);
    } finally {
      await h.close();
      await sandbox.close();
    }
  });
});
