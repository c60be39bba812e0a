/**
 * The Connect UI as a new user and an operator meet it, over HTTP on SQLite and PostgreSQL: the
 * success page is a GET of its own (post/redirect/get), safe to reload; an app already connected
 * offers "Add another" instead of a second full "Connect" button; a wrong key is explained in
 * plain words with the third-party API's text as detail; /favicon.ico needs no session; the
 * operator's name, logo and accent colour come from configuration; each manifest's logo shows
 * beside its app. (The layout at 390 px is checked in a browser: connect-ui.test.ts.)
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/simulator/sandbox.ts';
import { defaultServiceConfig, loadServiceConfig, type CreatedApplication } from '../../src/service/index.ts';
import { connectBrandFromEnv, whiteContrast } from '../../src/service/connect/connect-brand.ts';
import { withSandbox } from '../../src/service/data/sandbox-wiring.ts';
import { describeEachDialect, startHarness, testRegistry, type Harness } from './helpers.ts';

const SESSIONS = '/api/v1/integrations/connect/sessions';
const CONNECTORS = '/api/v1/integrations/connectors';
const BRAND = { name: 'Acme CRM', logoUrl: 'https://cdn.acme.example/logo.svg', accent: '#0f766e' };

describeEachDialect('Connect UI for a new user and its operator on %s', (dialect) => {
  let sandbox: Sandbox;
  let h: Harness;
  let app: CreatedApplication;
  let token: string;

  beforeAll(async () => {
    sandbox = await startSandbox();
    const registry = testRegistry();
    h = await startHarness(dialect, {
      config: { connectorTypes: withSandbox(defaultServiceConfig(), sandbox, registry).connectorTypes, connectBrand: BRAND },
      registry,
    });
    app = await h.createApp('connect-first-run');
    token = await h.token(app);
  });
  afterAll(async () => {
    await h?.close();
    await sandbox?.close();
  });

  async function page(
    method: 'GET' | 'POST',
    path: string,
    cookie?: string,
    form?: Record<string, string>,
  ): Promise<{ status: number; headers: Headers; text: string }> {
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
  const csrfOf = (html: string): string => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

  async function opened(customer: string, types: string[]): Promise<string> {
    const r = await h.request('POST', SESSIONS, {
      token,
      body: { customer_name: customer, allowed_connector_types: types, redirect_url: 'https://app.example.com/done' },
    });
    expect(r.status, r.text).toBe(201);
    const x = await h.request('POST', '/connect/session', { body: { token: r.body.token } });
    expect(x.status, x.text).toBe(204);
    return /sb_connect=([^;]+)/.exec(x.headers.get('set-cookie') ?? '')?.[1] as string;
  }
  const granolaKey = (): string => sandbox.connectors['granola']!.credentials['api_key']!;

  it('answers the form with a redirect to the success page, which reloads without posting again', async () => {
    const cookie = await opened('prg', ['granola']);
    const csrf = csrfOf((await page('GET', '/connect/types/granola', cookie)).text);
    const posted = await page('POST', '/connect/types/granola/credentials', cookie, { csrf, variant: 'api_key', 'field.api_key': granolaKey() });
    expect(posted.status, posted.text).toBe(303);
    const location = posted.headers.get('location') ?? '';
    expect(location).toMatch(/^\/connect\/done\?connector_id=[^&]+$/);
    const id = new URLSearchParams(location.split('?')[1]).get('connector_id');
    for (let reload = 0; reload < 3; reload++) {
      const done = await page('GET', location, cookie);
      expect(done.status, done.text).toBe(200);
      expect(done.text).toContain('Granola is connected');
      expect(done.text).not.toContain('already been used');
      expect(done.text).toContain(`data-redirect="https://app.example.com/done?connector_id=${id}&amp;connector_type=granola"`);
    }
    expect((await h.request('GET', `${CONNECTORS}?customer_name=prg`, { token })).body.data).toHaveLength(1);
    // Without the session's cookie, or for a connector that is not the customer's, no page.
    expect((await page('GET', location)).status).toBe(401);
    const other = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'someone-else', connector_type: 'granola', name: 'x', credentials: { api_key: granolaKey() } },
    });
    expect((await page('GET', `/connect/done?connector_id=${other.body.id}`, cookie)).status).toBe(404);
  });

  it('offers "Add another" for an app already connected, and the full button for the others', async () => {
    const made = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'returning', connector_type: 'granola', name: 'Notes', credentials: { api_key: granolaKey() } },
    });
    expect(made.status, made.text).toBe(201);
    const home = await page('GET', '/connect', await opened('returning', ['granola', 'intercom']));
    expect(home.status).toBe(200);
    expect(home.text).not.toContain('>Connect Granola</a>');
    expect(home.text).toContain('aria-label="Connect another Granola account">Add another</a>');
    expect(home.text).toContain('>Connect Intercom</a>');
  });

  it("explains a wrong key in plain words, with the upstream's text as detail", async () => {
    const cookie = await opened('wrong', ['granola']);
    const csrf = csrfOf((await page('GET', '/connect/types/granola', cookie)).text);
    const r = await page('POST', '/connect/types/granola/credentials', cookie, { csrf, variant: 'api_key', 'field.api_key': 'grn_not_the_right_key' });
    expect(r.status).toBe(424);
    const alert = /<div class="alert" role="alert" id="error"[^>]*>([\s\S]*?)<\/div>/.exec(r.text)?.[1] ?? '';
    expect(alert).toContain('Granola did not accept this key. Check that you copied all of it from the right Granola account, then try again.');
    expect(alert).toMatch(/<p class="detail">Granola said: <q>[^<]*Invalid API key[^<]*<\/q><\/p>/);
    expect(alert).not.toContain('granola:');
    expect(r.text).not.toContain('grn_not_the_right_key');
  });

  it('answers /favicon.ico without a session, and names the icon in every page', async () => {
    const r = await page('GET', '/favicon.ico');
    expect(r.status).toBe(204);
    expect((await page('GET', '/connect')).text).toContain(`<link rel="icon" href="${BRAND.logoUrl}">`);
  });

  it("shows the operator's name, logo and accent colour, and each app's logo", async () => {
    const home = await page('GET', '/connect', await opened('branded', ['granola', 'intercom', 'monday']));
    expect(home.text).toContain('<title>Connect an account · Acme CRM</title>');
    expect(home.text).toContain(
      `<header class="brand"><img class="brand-logo" src="${BRAND.logoUrl}" alt="" width="28" height="28"><span class="brand-name">Acme CRM</span></header>`,
    );
    expect(home.text).toContain('<link rel="stylesheet" href="/connect/assets/brand.css">');
    expect(home.headers.get('content-security-policy')).toContain("img-src 'self' data: https://cdn.acme.example;");
    const css = await page('GET', '/connect/assets/brand.css');
    expect(css.status).toBe(200);
    expect(css.text).toContain('--accent: #0f766e;');
    const logos = [...home.text.matchAll(/<img class="app-logo" src="(data:image\/svg\+xml;base64,[^"]+)" alt=""/g)].map((m) => m[1]);
    expect(logos).toHaveLength(3);
    for (const [i, type] of ['granola', 'intercom', 'monday'].entries()) expect(logos[i]).toBe(testRegistry().get(type)?.manifest.logo);
  });
});

it('reads the branding from the environment and refuses what would not work', () => {
  const registry = ['granola'];
  expect(
    loadServiceConfig(
      { SWITCHBOARD_CONNECT_BRAND_NAME: 'Acme CRM', SWITCHBOARD_CONNECT_LOGO_URL: BRAND.logoUrl, SWITCHBOARD_CONNECT_ACCENT_COLOR: '#0F766E' },
      registry,
    ).connectBrand,
  ).toEqual(BRAND);
  expect(loadServiceConfig({}, registry).connectBrand).toEqual({});
  expect(() => connectBrandFromEnv({ SWITCHBOARD_CONNECT_ACCENT_COLOR: '#facc15' })).toThrow(
    /SWITCHBOARD_CONNECT_ACCENT_COLOR: #facc15 is too light for white button text \(contrast 1\.\d\d:1/,
  );
  expect(() => connectBrandFromEnv({ SWITCHBOARD_CONNECT_ACCENT_COLOR: 'teal' })).toThrow(/a hex colour such as #0f766e/);
  expect(() => connectBrandFromEnv({ SWITCHBOARD_CONNECT_LOGO_URL: 'http://insecure.example/logo.png' })).toThrow(
    /SWITCHBOARD_CONNECT_LOGO_URL: an https:\/\/ URL/,
  );
  expect(() => connectBrandFromEnv({ SWITCHBOARD_CONNECT_LOGO_URL: 'javascript:alert(1)' })).toThrow(/SWITCHBOARD_CONNECT_LOGO_URL/);
  expect(whiteContrast('#1d4ed8')).toBeGreaterThan(4.5); // the default accent
});
