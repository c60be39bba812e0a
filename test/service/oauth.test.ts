/**
 * Service-side OAuth over real HTTP, as a browser would follow it: initiate → provider consent
 * → our callback → redirect_url?secret_id → create (variant B) → execute; against the `acme`
 * fixture provider (expiring tokens that refresh) and the Intercom and Monday simulators. Plus
 * every misuse of states and secrets, and two service instances racing for one of each.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/simulator/sandbox.ts';
import { defaultServiceConfig, type CreatedApplication } from '../../src/service/index.ts';
import { withSandbox } from '../../src/service/data/sandbox-wiring.ts';
import { parseKeyRing } from '../../src/store/index.ts';
import { startAcmeProvider, type AcmeProvider } from './fixtures/acme-provider.ts';
import { describeEachDialect, openApiErrors, startHarness, TEST_ENCRYPTION_KEY, testRegistry, type Harness, type Reply } from './helpers.ts';

const INITIATE = '/api/v1/integrations/connectors/oauth/initiate';
const CALLBACK = '/api/v1/integrations/connectors/oauth/callback';
const CONNECTORS = '/api/v1/integrations/connectors';
const REDIRECT = 'https://app.example.com/integrations/done?tab=crm';

function isProblem(r: Reply, status: number, code: string): void {
  expect({ status: r.status, code: r.body?.code }, r.text.slice(0, 400)).toEqual({ status, code });
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

describeEachDialect('service-side OAuth on %s', (dialect) => {
  let provider: AcmeProvider;
  let sandbox: Sandbox;
  let h: Harness;
  let app: CreatedApplication;
  let token: string;
  let otherToken: string;

  const config = () => {
    const registry = testRegistry();
    const types = withSandbox(defaultServiceConfig(), sandbox, registry).connectorTypes;
    types['acme'] = {
      baseUrl: provider.url,
      oauth: {
        clientId: provider.clientId,
        clientSecret: provider.clientSecret,
        authorizeUrl: `${provider.url}/oauth/authorize`,
        tokenUrl: `${provider.url}/oauth/token`,
      },
    };
    return { config: { connectorTypes: types }, registry };
  };

  beforeAll(async () => {
    provider = await startAcmeProvider();
    sandbox = await startSandbox();
    h = await startHarness(dialect, config());
    app = await h.createApp('org-a');
    token = await h.token(app);
    otherToken = await h.token(await h.createApp('org-b'));
  });
  afterAll(async () => {
    await h?.close();
    await sandbox?.close();
    await provider?.close();
  });

  const initiate = (body: Record<string, unknown>, t = token, harness = h) => harness.request('POST', INITIATE, { token: t, body });

  /** initiate → consent (provider) → callback; returns the callback's redirect and the consent URL. */
  async function dance(type: string, customer = 'cust-1', harness = h): Promise<{ location: URL; consentUrl: string; callbackUrl: string }> {
    const init = await initiate({ customer_name: customer, connector_type: type, redirect_url: REDIRECT }, token, harness);
    expect(init.status, init.text).toBe(200);
    expect(openApiErrors('POST', INITIATE, init)).toEqual([]);
    const consent = await harness.request('GET', init.body.consent_url);
    expect(consent.status, consent.text).toBe(302);
    const callbackUrl = consent.headers.get('location') as string;
    expect(callbackUrl.startsWith(`${harness.url}${CALLBACK}?`)).toBe(true);
    const cb = await harness.request('GET', callbackUrl);
    expect(cb.status, cb.text).toBe(302);
    expect(openApiErrors('GET', CALLBACK, cb)).toEqual([]);
    expect(cb.headers.get('cache-control')).toBe('no-store');
    return { location: new URL(cb.headers.get('location') as string), consentUrl: init.body.consent_url, callbackUrl };
  }

  const createB = (secret: string, o: { type?: string; customer?: string; t?: string } = {}) =>
    h.request('POST', CONNECTORS, {
      token: o.t ?? token,
      body: { customer_name: o.customer ?? 'cust-1', connector_type: o.type ?? 'acme', name: 'via OAuth', server_side_oauth_secret_id: secret },
    });

  it('runs the full redirect dance, creates the connector from the secret, executes and refreshes expired tokens', async () => {
    const { location, consentUrl } = await dance('acme');
    const consent = new URL(consentUrl);
    expect(consent.origin + consent.pathname).toBe(`${provider.url}/oauth/authorize`);
    expect(consent.searchParams.get('client_id')).toBe(provider.clientId);
    expect(consent.searchParams.get('redirect_uri')).toBe(`${h.url}${CALLBACK}`);
    expect(consent.searchParams.get('scope')).toBe('read write');
    expect(consent.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // The caller's redirect_url keeps its own query and gains secret_id.
    expect(location.origin + location.pathname).toBe('https://app.example.com/integrations/done');
    expect(location.searchParams.get('tab')).toBe('crm');
    const secret = location.searchParams.get('secret_id') as string;
    expect(secret).toMatch(/^sbo_/);

    const created = await createB(secret);
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ connector_type: 'acme', auth_variant: 'oauth', customer_name: 'cust-1' });
    // Stored credentials: the provider's tokens plus the deployment app's client id/secret (the
    // variant requires them, as Monday's does), sealed at rest.
    const row = await h.store.getConnector(app.organization_id, created.body.id);
    const ring = parseKeyRing(TEST_ENCRYPTION_KEY);
    const stored = ring.openJson<Record<string, unknown>>(
      { keyId: row!.credentials_key_id, ciphertext: row!.credentials_ciphertext },
      `connector:${created.body.id}`,
    );
    expect(stored).toMatchObject({
      access_token: expect.stringMatching(/^acme_at_/),
      refresh_token: expect.stringMatching(/^acme_rt_/),
      expires_at: expect.any(Number),
      client_id: provider.clientId,
      client_secret: provider.clientSecret,
    });

    const exec = (params: Record<string, unknown>) =>
      h.request('POST', `${CONNECTORS}/${created.body.id}/execute`, { token, body: { entity: 'widgets', action: 'get', params } });
    expect((await exec({ id: 'w7' })).body).toEqual({ data: { id: 'w7', name: 'Widget w7' } });

    // The provider expires every access token: the next call gets 401, refreshes, retries,
    // and the new tokens are stored (encrypted) for the next request and other instances.
    provider.expireAccessTokens();
    const again = await exec({ id: 'w8' });
    expect(again.status, again.text).toBe(200);
    expect(provider.grants).toContain('refresh_token');
    const row2 = await h.store.getConnector(app.organization_id, created.body.id);
    expect(row2!.credentials_ciphertext).not.toBe(row!.credentials_ciphertext);
    const refreshed = ring.openJson<Record<string, unknown>>(
      { keyId: row2!.credentials_key_id, ciphertext: row2!.credentials_ciphertext },
      `connector:${created.body.id}`,
    );
    expect(refreshed['access_token']).not.toBe(stored['access_token']);
    expect(provider.accessTokens.has(refreshed['access_token'] as string)).toBe(true);
    expect(refreshed['client_id']).toBe(provider.clientId);

    // An upstream error that echoes the token comes back with the token scrubbed.
    const echo = await exec({ id: 'echo' });
    isProblem(echo, 422, 'upstream_rejected');
    expect(echo.text).not.toContain(refreshed['access_token'] as string);
    expect(echo.text).toContain('[redacted]');
  });

  it('refuses a reused state, a forged state, a missing state and an expired state', async () => {
    const { callbackUrl } = await dance('acme');
    const before = await h.snapshot();
    isProblem(await h.request('GET', callbackUrl), 400, 'invalid_oauth_state');
    const forged = new URL(callbackUrl);
    forged.searchParams.set('state', 'A'.repeat(43));
    isProblem(await h.request('GET', forged.toString()), 400, 'invalid_oauth_state');
    forged.searchParams.delete('state');
    isProblem(await h.request('GET', forged.toString()), 400, 'invalid_oauth_state');
    expect(await h.snapshot()).toBe(before);

    const init = await initiate({ customer_name: 'c', connector_type: 'acme', redirect_url: REDIRECT });
    const consent = await h.request('GET', init.body.consent_url);
    h.clock.offsetMs = 601_000;
    try {
      isProblem(await h.request('GET', consent.headers.get('location') as string), 400, 'invalid_oauth_state');
    } finally {
      h.clock.offsetMs = 0;
    }
  });

  it("redirects the provider's refusal as an error parameter, not a secret", async () => {
    provider.deny = true;
    const { location } = await dance('acme');
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('error_description')).toBe('The user said no');
    expect(location.searchParams.get('secret_id')).toBeNull();
  });

  it('lets a secret be used once, only by the organization, customer and type that started the flow, before it expires', async () => {
    const secret = (await dance('acme', 'cust-9')).location.searchParams.get('secret_id') as string;
    let before = await h.snapshot();
    isProblem(await createB(secret, { t: otherToken, customer: 'cust-9' }), 400, 'invalid_oauth_secret');
    isProblem(await createB(secret, { customer: 'cust-other' }), 400, 'invalid_oauth_secret');
    isProblem(await createB(secret, { type: 'intercom', customer: 'cust-9' }), 400, 'invalid_oauth_secret');
    expect(await h.snapshot()).toBe(before);
    // None of those consumed it.
    expect((await createB(secret, { customer: 'cust-9' })).status).toBe(201);
    before = await h.snapshot();
    isProblem(await createB(secret, { customer: 'cust-9' }), 400, 'invalid_oauth_secret');
    expect(await h.snapshot()).toBe(before);

    const late = (await dance('acme')).location.searchParams.get('secret_id') as string;
    h.clock.offsetMs = 901_000;
    try {
      isProblem(await createB(late), 400, 'invalid_oauth_secret');
    } finally {
      h.clock.offsetMs = 0;
    }
  });

  it.each([
    ['a type without an OAuth variant', { customer_name: 'c', connector_type: 'granola', redirect_url: REDIRECT }, 400, 'oauth_not_supported'],
    ['an unknown type', { customer_name: 'c', connector_type: 'nope', redirect_url: REDIRECT }, 400, 'unknown_connector_type'],
    ['a redirect_url that is not a URL', { customer_name: 'c', connector_type: 'acme', redirect_url: 'not a url' }, 400, 'invalid_request'],
    ['a non-http redirect_url', { customer_name: 'c', connector_type: 'acme', redirect_url: 'javascript:alert(1)' }, 400, 'invalid_request'],
    ['a missing customer_name', { connector_type: 'acme', redirect_url: REDIRECT }, 400, 'invalid_request'],
  ])('refuses initiate with %s and stores nothing', async (_n, body, status, code) => {
    const before = await h.snapshot();
    const r = await initiate(body);
    isProblem(r, status, code);
    expect(openApiErrors('POST', INITIATE, r)).toEqual([]);
    expect(await h.snapshot()).toBe(before);
  });

  it('answers 501 oauth_not_configured when the deployment has no OAuth app for the type', async () => {
    const bare = await startHarness(dialect);
    try {
      const t = await bare.token(await bare.createApp('o'));
      const r = await bare.request('POST', INITIATE, { token: t, body: { customer_name: 'c', connector_type: 'monday', redirect_url: REDIRECT } });
      isProblem(r, 501, 'oauth_not_configured');
      expect(r.body.detail).toContain('SWITCHBOARD_MONDAY_OAUTH_CLIENT_ID');
    } finally {
      await bare.close();
    }
  });

  it.each([
    ['intercom', 'contacts', 'list', { per_page: 2 }],
    ['monday', 'users', 'list', {}],
    // Linear on the generic GraphQL simulator: its sidecar's OAuth flow issues refresh tokens.
    ['linear', 'issues', 'list', { first: 2 }],
    // HubSpot on the generic OpenAPI simulator: 30-minute tokens with a refresh token.
    ['hubspot', 'contacts', 'list', { limit: 2 }],
  ])('creates a %s connector through the simulated OAuth provider and executes', async (type, entity, action, params) => {
    if (sandbox.connectors[type] === undefined) return;
    const secret = (await dance(type)).location.searchParams.get('secret_id') as string;
    const created = await createB(secret, { type });
    expect(created.status, created.text).toBe(201);
    expect(created.body.auth_variant).toBe('oauth');
    const r = await h.request('POST', `${CONNECTORS}/${created.body.id}/execute`, { token, body: { entity, action, params } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.length).toBeGreaterThan(0);
    if (type === 'monday') {
      const row = await h.store.getConnector(app.organization_id, created.body.id);
      const creds = parseKeyRing(TEST_ENCRYPTION_KEY).openJson<Record<string, unknown>>(
        { keyId: row!.credentials_key_id, ciphertext: row!.credentials_ciphertext },
        `connector:${created.body.id}`,
      );
      const simOAuth = (sandbox.simulators['monday'] as unknown as { oauth: { clientId: string; clientSecret: string } }).oauth;
      expect(creds).toEqual({ access_token: expect.any(String), client_id: simOAuth.clientId, client_secret: simOAuth.clientSecret });
    }
  });

  it('lets exactly one of two instances consume a state, and one a secret', async () => {
    // Instances behind one load balancer share SWITCHBOARD_PUBLIC_URL: the redirect_uri of the
    // code exchange must be the one the flow started with, whichever instance finishes it.
    const shared = config();
    const second = await startHarness(dialect, { ...shared, config: { ...shared.config, publicUrl: h.url }, database: h.db });
    try {
      // The same state presented to both instances at once.
      const init = await initiate({ customer_name: 'race', connector_type: 'acme', redirect_url: REDIRECT });
      const consent = await h.request('GET', init.body.consent_url);
      const callbackPath = new URL(consent.headers.get('location') as string);
      const [a, b] = await Promise.all([
        h.request('GET', h.url + callbackPath.pathname + callbackPath.search),
        second.request('GET', second.url + callbackPath.pathname + callbackPath.search),
      ]);
      expect([a.status, b.status].sort()).toEqual([302, 400]);
      const winner = a.status === 302 ? a : b;
      const secret = new URL(winner.headers.get('location') as string).searchParams.get('secret_id') as string;
      expect(secret, winner.headers.get('location') ?? '').toMatch(/^sbo_/);
      // The same secret sent to both instances at once.
      const body = { customer_name: 'race', connector_type: 'acme', name: 'race', server_side_oauth_secret_id: secret };
      const [c1, c2] = await Promise.all([h.request('POST', CONNECTORS, { token, body }), second.request('POST', CONNECTORS, { token, body })]);
      expect([c1.status, c2.status].sort()).toEqual([201, 400]);
      const list = await h.request('GET', `${CONNECTORS}?customer_name=race`, { token });
      expect(list.body.data).toHaveLength(1);
    } finally {
      await second.close();
    }
  });
});
