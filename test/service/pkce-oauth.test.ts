/**
 * OAuth with PKCE (RFC 7636), hosted and in library mode, against Airtable's simulator (its sidecar
 * requires an S256 code challenge): the consent URL carries the challenge of a verifier made per
 * flow and kept with the state, the callback's code exchange sends that verifier, and the stored
 * credentials hold the tokens only. The simulator refuses a consent without a challenge and an
 * exchange with the wrong verifier. On SQLite and PostgreSQL.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { authorizeUrl, exchangeAuthorizationCode, pkceVerifier } from '../../src/auth/index.ts';
import { getConnector } from '../../src/index.ts';
import type { OAuth2Auth } from '../../src/manifest/index.ts';
import { defaultServiceConfig } from '../../src/service/index.ts';
import { withSandbox } from '../../src/service/data/sandbox-wiring.ts';
import { startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { parseKeyRing } from '../../src/store/index.ts';
import { failure } from '../helpers/errors.ts';
import { describeEachDialect, startHarness, TEST_ENCRYPTION_KEY, testRegistry, type Harness } from './helpers.ts';

const INITIATE = '/api/v1/integrations/connectors/oauth/initiate';
const CALLBACK = '/api/v1/integrations/connectors/oauth/callback';
const CONNECTORS = '/api/v1/integrations/connectors';
const REDIRECT = 'https://app.example.com/integrations/done';
const variant = getConnector('airtable').auth.find((v) => v.def.name === 'oauth')!.def as OAuth2Auth;

describeEachDialect('OAuth with PKCE (Airtable) on %s', (dialect) => {
  let sim: OpenApiSimulator;
  let h: Harness;
  let token: string;
  let orgId: string;
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: 'connectors/airtable/openapi.yaml', sidecar: 'connectors/airtable/simulator.yaml', rateLimit: false });
    const registry = testRegistry();
    const sandbox = { connectors: { airtable: { base_url: sim.url, credentials: {} } }, simulators: { airtable: sim } };
    h = await startHarness(dialect, { config: { connectorTypes: withSandbox(defaultServiceConfig(), sandbox as never, registry).connectorTypes }, registry });
    const app = await h.createApp('pkce-org');
    orgId = app.organization_id;
    token = await h.token(app);
  });
  afterAll(async () => {
    await h?.close();
    await sim?.close();
  });

  it('sends an S256 challenge in the consent URL and its verifier in the code exchange; stores the tokens only', async () => {
    const init = await h.request('POST', INITIATE, { token, body: { customer_name: 'cust-at', connector_type: 'airtable', redirect_url: REDIRECT } });
    expect(init.status, init.text).toBe(200);
    const consentUrl = new URL(init.body.consent_url);
    expect(consentUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(consentUrl.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const consent = await fetch(consentUrl, { redirect: 'manual' });
    expect(consent.status, await consent.text()).toBe(302);
    const callback = consent.headers.get('location') as string;
    expect(callback.startsWith(`${h.url}${CALLBACK}?`)).toBe(true);
    const cb = await h.request('GET', callback);
    expect(cb.status, cb.text).toBe(302);
    const secret = new URL(cb.headers.get('location') as string).searchParams.get('secret_id');
    expect(secret).toMatch(/^sbo_/);
    const exchange = sim.requests.find((r) => r.method === 'POST' && r.path === '/oauth2/v1/token')!;
    const verifier = new URLSearchParams(exchange.rawBody).get('code_verifier') as string;
    expect(createHash('sha256').update(verifier).digest('base64url')).toBe(consentUrl.searchParams.get('code_challenge'));

    const created = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'cust-at', connector_type: 'airtable', name: 'Bases', server_side_oauth_secret_id: secret },
    });
    expect(created.status, created.text).toBe(201);
    const row = await h.store.getConnector(orgId, created.body.id);
    const stored = parseKeyRing(TEST_ENCRYPTION_KEY).openJson<Record<string, unknown>>(
      { keyId: row!.credentials_key_id, ciphertext: row!.credentials_ciphertext },
      `connector:${created.body.id}`,
    );
    expect(Object.keys(stored).sort()).toEqual(['access_token', 'expires_at', 'refresh_token']);
    const r = await h.request('POST', `${CONNECTORS}/${created.body.id}/execute`, { token, body: { entity: 'bases', action: 'list', params: {} } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data).toHaveLength(2);
  });

  it('library mode: the simulator refuses a consent without a challenge and an exchange with another verifier', async () => {
    const client = (sim as unknown as { oauth: { clientId: string; clientSecret: string } }).oauth;
    const redirectUri = 'https://app.example.com/cb';
    const urls = { authorizeUrl: `${sim.url}/oauth2/v1/authorize` };
    const { pkce: _pkce, ...withoutPkce } = variant;
    const bare = new URL(authorizeUrl(withoutPkce, { clientId: client.clientId, redirectUri, state: 's1', ...urls }));
    expect((await fetch(bare, { redirect: 'manual' })).status).toBe(400);
    expect(() => authorizeUrl(variant, { clientId: client.clientId, redirectUri, state: 's1', ...urls })).toThrow(/code verifier/);

    const verifier = pkceVerifier();
    const consent = await fetch(authorizeUrl(variant, { clientId: client.clientId, redirectUri, state: 's2', codeVerifier: verifier, ...urls }), {
      redirect: 'manual',
    });
    const code = new URL(consent.headers.get('location') as string).searchParams.get('code') as string;
    const app = { clientId: client.clientId, clientSecret: client.clientSecret, tokenUrl: `${sim.url}/oauth2/v1/token` };
    const wrong = await failure(exchangeAuthorizationCode(variant, app, code, redirectUri, fetch, 30_000, {}, pkceVerifier()));
    expect(wrong.code).toBe('upstream_credentials_rejected');
    const consent2 = await fetch(authorizeUrl(variant, { clientId: client.clientId, redirectUri, state: 's3', codeVerifier: verifier, ...urls }), {
      redirect: 'manual',
    });
    const code2 = new URL(consent2.headers.get('location') as string).searchParams.get('code') as string;
    const tokens = await exchangeAuthorizationCode(variant, app, code2, redirectUri, fetch, 30_000, {}, verifier);
    expect(tokens.access_token).toEqual(expect.any(String));
    expect(tokens.refresh_token).toEqual(expect.any(String));
  });
});
