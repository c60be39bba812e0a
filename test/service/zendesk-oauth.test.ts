/**
 * Hosted OAuth for a connector whose OAuth URLs name the account (issue 23, Zendesk:
 * https://{{credentials.subdomain}}.zendesk.com/oauth/...): initiate takes the subdomain, checks
 * it against the field's pattern before anything is stored, keeps it in the state, the callback
 * exchanges the code on that account's host and stores the subdomain with the tokens, and the
 * connector executes there. Against the Zendesk simulator (its sidecar's OAuth flow), with the
 * deployment's OAuth app on the manifest's own URLs (every *.zendesk.com host routed to the
 * simulator by the service's fetch) and as `serve --sandbox` wires it; through the API and
 * through the Connect UI; on SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FetchLike } from '../../src/http/index.ts';
import { startSandbox, type Sandbox } from '../../src/simulator/sandbox.ts';
import { defaultServiceConfig } from '../../src/service/index.ts';
import { withSandbox } from '../../src/service/data/sandbox-wiring.ts';
import { parseKeyRing } from '../../src/store/index.ts';
import { describeEachDialect, openApiErrors, startHarness, TEST_ENCRYPTION_KEY, testRegistry, type Harness, type Reply } from './helpers.ts';

const INITIATE = '/api/v1/integrations/connectors/oauth/initiate';
const CALLBACK = '/api/v1/integrations/connectors/oauth/callback';
const CONNECTORS = '/api/v1/integrations/connectors';
const SESSIONS = '/api/v1/integrations/connect/sessions';
const REDIRECT = 'https://app.example.com/integrations/done';

function isProblem(r: Reply, status: number, code: string): void {
  expect({ status: r.status, code: r.body?.code }, r.text.slice(0, 400)).toEqual({ status, code });
}

describeEachDialect('hosted OAuth with a per-account host (Zendesk) on %s', (dialect) => {
  let sandbox: Sandbox;
  let sim: string;
  let h: Harness;
  let wired: Harness;
  let token: string;
  let wiredToken: string;
  let orgId: string;
  /** Every upstream URL the service fetched, as the service asked for it (before routing). */
  const fetched: string[] = [];

  /** The service's fetch: https://<account>.zendesk.com is the simulator (which answers every account). */
  const routed: FetchLike = (input, init) => {
    const url = new URL(String(input));
    fetched.push(url.toString());
    if (!/^[a-z0-9-]+\.zendesk\.com$/.test(url.hostname) || url.protocol !== 'https:') return Promise.reject(new Error(`unexpected upstream ${url.origin}`));
    return fetch(`${sim}${url.pathname}${url.search}`, init);
  };
  /** What the user's browser does with a consent URL on the account's host. */
  const onSimulator = (consentUrl: string): string => {
    const u = new URL(consentUrl);
    return `${sim}${u.pathname}${u.search}`;
  };

  beforeAll(async () => {
    sandbox = await startSandbox();
    sim = sandbox.connectors['zendesk']!.base_url;
    const simOAuth = (sandbox.simulators['zendesk'] as unknown as { oauth: { clientId: string; clientSecret: string } }).oauth;
    // The deployment's OAuth app with no URL overrides: the manifest's per-account URLs are used.
    h = await startHarness(dialect, {
      config: { connectorTypes: { zendesk: { oauth: { clientId: simOAuth.clientId, clientSecret: simOAuth.clientSecret } } } },
      fetch: routed,
    });
    const app = await h.createApp('zd-org');
    orgId = app.organization_id;
    token = await h.token(app);
    // As `switchboard serve --sandbox` wires it: the simulator's URLs replace the manifest's.
    const registry = testRegistry();
    wired = await startHarness(dialect, { config: { connectorTypes: withSandbox(defaultServiceConfig(), sandbox, registry).connectorTypes }, registry });
    wiredToken = await wired.token(await wired.createApp('zd-wired'));
  });
  afterAll(async () => {
    await wired?.close();
    await h?.close();
    await sandbox?.close();
  });

  const initiate = (body: Record<string, unknown>, harness = h, t = token) => harness.request('POST', INITIATE, { token: t, body });

  /** The consent page (the simulator consents at once) and our callback; returns where the user lands. */
  async function consentAndCallback(consentUrl: string, harness: Harness): Promise<URL> {
    const consent = await fetch(consentUrl, { redirect: 'manual' });
    expect(consent.status, await consent.text()).toBe(302);
    const callback = consent.headers.get('location') as string;
    expect(callback.startsWith(`${harness.url}${CALLBACK}?`)).toBe(true);
    const cb = await harness.request('GET', callback);
    expect(cb.status, cb.text).toBe(302);
    return new URL(cb.headers.get('location') as string);
  }

  it('initiates with the subdomain, exchanges the code on that account, stores it with the tokens and executes tickets list', async () => {
    const init = await initiate({ customer_name: 'cust-zd', connector_type: 'zendesk', redirect_url: REDIRECT, credentials: { subdomain: 'acme' } });
    expect(init.status, init.text).toBe(200);
    expect(openApiErrors('POST', INITIATE, init)).toEqual([]);
    const consent = new URL(init.body.consent_url);
    expect(consent.origin + consent.pathname).toBe('https://acme.zendesk.com/oauth/authorizations/new');
    // The subdomain is in the host only: the query is the standard authorization request.
    expect([...consent.searchParams.keys()].sort()).toEqual(['client_id', 'redirect_uri', 'response_type', 'scope', 'state']);
    expect(consent.searchParams.get('scope')).toBe('read write');

    fetched.length = 0;
    const landed = await consentAndCallback(onSimulator(init.body.consent_url), h);
    const secret = landed.searchParams.get('secret_id') as string;
    expect(secret, landed.toString()).toMatch(/^sbo_/);
    // The code was exchanged on the account the flow started with.
    expect(fetched).toEqual(['https://acme.zendesk.com/oauth/tokens']);

    const created = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'cust-zd', connector_type: 'zendesk', name: 'Support', server_side_oauth_secret_id: secret },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ connector_type: 'zendesk', auth_variant: 'oauth' });
    const row = await h.store.getConnector(orgId, created.body.id);
    const stored = parseKeyRing(TEST_ENCRYPTION_KEY).openJson<Record<string, unknown>>(
      { keyId: row!.credentials_key_id, ciphertext: row!.credentials_ciphertext },
      `connector:${created.body.id}`,
    );
    expect(stored).toEqual({ subdomain: 'acme', access_token: expect.any(String) });

    fetched.length = 0;
    const r = await h.request('POST', `${CONNECTORS}/${created.body.id}/execute`, {
      token,
      body: { entity: 'tickets', action: 'list', params: { page_size: 2 } },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.length).toBeGreaterThan(0);
    expect(r.body.data[0]).toHaveProperty('subject');
    expect(fetched.length).toBeGreaterThan(0);
    expect(fetched.every((u) => u.startsWith('https://acme.zendesk.com/api/v2/'))).toBe(true);
  });

  it('keeps the subdomain on the server: a callback cannot change the account the code is exchanged on', async () => {
    const init = await initiate({ customer_name: 'cust-zd', connector_type: 'zendesk', redirect_url: REDIRECT, credentials: { subdomain: 'first-account' } });
    expect(init.status, init.text).toBe(200);
    const consent = await fetch(onSimulator(init.body.consent_url), { redirect: 'manual' });
    const callback = new URL(consent.headers.get('location') as string);
    callback.searchParams.set('subdomain', 'evil');
    fetched.length = 0;
    const cb = await h.request('GET', callback.toString());
    expect(cb.status, cb.text).toBe(302);
    expect(new URL(cb.headers.get('location') as string).searchParams.get('secret_id')).toMatch(/^sbo_/);
    expect(fetched).toEqual(['https://first-account.zendesk.com/oauth/tokens']);
    // Single use as before.
    isProblem(await h.request('GET', callback.toString()), 400, 'invalid_oauth_state');
  });

  it.each([
    ['no subdomain', {}, 'invalid_oauth_credentials', '/credentials/subdomain'],
    ['an empty subdomain', { subdomain: '' }, 'invalid_oauth_credentials', '/credentials/subdomain'],
    ['a subdomain outside the pattern', { subdomain: 'Acme_Corp' }, 'invalid_oauth_credentials', '/credentials/subdomain'],
    ['a subdomain naming another host', { subdomain: 'evil.example.com/x' }, 'invalid_oauth_credentials', '/credentials/subdomain'],
    ['a subdomain with a leading hyphen', { subdomain: '-acme' }, 'invalid_oauth_credentials', '/credentials/subdomain'],
    ['a field not asked for before consent', { subdomain: 'acme', access_token: 'x' }, 'invalid_oauth_credentials', '/credentials/access_token'],
    ['a non-string subdomain', { subdomain: 42 }, 'invalid_request', undefined],
  ])('refuses initiate with %s and stores nothing', async (_n, credentials, code, path) => {
    const before = await h.snapshot();
    const r = await initiate({ customer_name: 'cust-zd', connector_type: 'zendesk', redirect_url: REDIRECT, credentials });
    isProblem(r, 400, code);
    expect(openApiErrors('POST', INITIATE, r)).toEqual([]);
    if (path !== undefined) expect(r.body.errors).toEqual([expect.objectContaining({ path })]);
    expect(await h.snapshot()).toBe(before);
  });

  it('refuses pre-consent credentials for a type whose OAuth URLs need none', async () => {
    const before = await wired.snapshot();
    const r = await initiate({ customer_name: 'c', connector_type: 'intercom', redirect_url: REDIRECT, credentials: { subdomain: 'acme' } }, wired, wiredToken);
    isProblem(r, 400, 'invalid_oauth_credentials');
    expect(r.body.detail).toContain('asks for no credential before OAuth consent');
    expect(await wired.snapshot()).toBe(before);
  });

  it('works as `serve --sandbox` wires it (the simulator URLs), the subdomain stored with the tokens', async () => {
    const init = await initiate(
      { customer_name: 'cust-sb', connector_type: 'zendesk', redirect_url: REDIRECT, credentials: { subdomain: 'sandbox' } },
      wired,
      wiredToken,
    );
    expect(init.status, init.text).toBe(200);
    expect(init.body.consent_url.startsWith(`${sim}/oauth/authorizations/new?`)).toBe(true);
    const secret = (await consentAndCallback(init.body.consent_url, wired)).searchParams.get('secret_id') as string;
    const created = await wired.request('POST', CONNECTORS, {
      token: wiredToken,
      body: { customer_name: 'cust-sb', connector_type: 'zendesk', name: 'Support', server_side_oauth_secret_id: secret },
    });
    expect(created.status, created.text).toBe(201);
    const r = await wired.request('POST', `${CONNECTORS}/${created.body.id}/execute`, {
      token: wiredToken,
      body: { entity: 'tickets', action: 'list', params: { page_size: 2 } },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.length).toBeGreaterThan(0);
  });

  it('asks for the subdomain in the Connect UI before the OAuth button, refuses a bad one and connects with a good one', async () => {
    const session = await h.request('POST', SESSIONS, { token, body: { customer_name: 'cust-ui', allowed_connector_types: ['zendesk'] } });
    expect(session.status, session.text).toBe(201);
    const x = await h.request('POST', '/connect/session', { body: { token: session.body.token } });
    expect(x.status, x.text).toBe(204);
    const cookie = /sb_connect=([^;]+)/.exec(x.headers.get('set-cookie') ?? '')?.[1] as string;
    const page = async (method: 'GET' | 'POST', path: string, form?: Record<string, string>) => {
      const res = await fetch(path.startsWith('http') ? path : h.url + path, {
        method,
        redirect: 'manual',
        headers: { cookie: `sb_connect=${cookie}`, ...(form !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        ...(form !== undefined ? { body: new URLSearchParams(form).toString() } : {}),
      });
      return { status: res.status, headers: res.headers, text: await res.text() };
    };

    const form = await page('GET', '/connect/types/zendesk');
    expect(form.status).toBe(200);
    // The OAuth form: a labelled subdomain input with the field's description as hint and its pattern, then the button.
    const oauthForm = /<form method="post" action="\/connect\/types\/zendesk\/oauth">([\s\S]*?)<\/form>/.exec(form.text)?.[1] ?? '';
    expect(oauthForm).toContain('<label for="f-oauth-subdomain">Subdomain</label>');
    expect(oauthForm).toContain('<p class="muted hint" id="f-oauth-subdomain-hint">acme in acme.zendesk.com</p>');
    expect(oauthForm).toMatch(
      /<input id="f-oauth-subdomain" name="field.subdomain" type="text"[^>]* required pattern="\[a-z0-9\]\[a-z0-9-\]\{0,62\}"[^>]* aria-describedby="f-oauth-subdomain-hint">/,
    );
    expect(oauthForm.indexOf('f-oauth-subdomain')).toBeLessThan(oauthForm.indexOf('<button'));
    // Only the pre-consent field: the tokens come from Zendesk.
    expect(oauthForm).not.toContain('access_token');
    expect(form.headers.get('content-security-policy')).toContain('https://*.zendesk.com');
    const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)?.[1] as string;

    const before = await h.snapshot();
    const bad = await page('POST', '/connect/types/zendesk/oauth', { csrf, variant: 'oauth', 'field.subdomain': 'not a host!' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('aria-invalid="true"');
    expect(bad.text).toContain('This is not a valid subdomain (acme in acme.zendesk.com).');
    expect(bad.text).toContain('value="not a host!"');
    expect(await h.snapshot()).toBe(before);
    const empty = await page('POST', '/connect/types/zendesk/oauth', { csrf, variant: 'oauth', 'field.subdomain': ' ' });
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('Enter your subdomain (acme in acme.zendesk.com).');
    expect(await h.snapshot()).toBe(before);

    const start = await page('POST', '/connect/types/zendesk/oauth', { csrf, variant: 'oauth', 'field.subdomain': 'ui-account' });
    expect(start.status, start.text).toBe(303);
    const consentUrl = start.headers.get('location') as string;
    expect(consentUrl.startsWith('https://ui-account.zendesk.com/oauth/authorizations/new?')).toBe(true);
    const consent = await fetch(onSimulator(consentUrl), { redirect: 'manual' });
    fetched.length = 0;
    const cb = await page('GET', consent.headers.get('location') as string);
    expect(cb.status, cb.text).toBe(302);
    expect(fetched).toEqual(['https://ui-account.zendesk.com/oauth/tokens']);
    const back = await page('GET', cb.headers.get('location') as string);
    expect(back.status, back.text).toBe(303);
    const list = await h.request('GET', `${CONNECTORS}?customer_name=cust-ui`, { token });
    expect(list.body.data).toEqual([expect.objectContaining({ connector_type: 'zendesk', auth_variant: 'oauth' })]);
    const row = await h.store.getConnector(orgId, list.body.data[0].id);
    const stored = parseKeyRing(TEST_ENCRYPTION_KEY).openJson<Record<string, unknown>>(
      { keyId: row!.credentials_key_id, ciphertext: row!.credentials_ciphertext },
      `connector:${list.body.data[0].id}`,
    );
    expect(stored['subdomain']).toBe('ui-account');
  });
});
