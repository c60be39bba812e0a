/**
 * Hosted OAuth for a variant with follow_up requests (docs/manifest.md, Auth variants): Jira's
 * OAuth 2.0 (3LO) needs the site's cloud id, which the token answer lacks and
 * accessible-resources gives. Over real HTTP against Jira's generic simulator (its sidecar's
 * oauth.endpoints): initiate → consent → callback (code exchange, then the follow_up) → create
 * with server_side_oauth_secret_id → execute; and the user who granted no site, which ends in
 * oauth_nothing_granted with nothing stored. Tokens never reach the logs.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CONNECTORS_DIR } from '../../src/manifest/connectors-dir.ts';
import { describedSimulators, type AnySimulator } from '../../src/simulator/sandbox.ts';
import { defaultServiceConfig, type CreatedApplication } from '../../src/service/index.ts';
import { withSandbox } from '../../src/service/data/sandbox-wiring.ts';
import { parseKeyRing } from '../../src/store/index.ts';
import { describeEachDialect, openApiErrors, startHarness, TEST_ENCRYPTION_KEY, testRegistry, type Harness } from './helpers.ts';

const INITIATE = '/api/v1/integrations/connectors/oauth/initiate';
const CALLBACK = '/api/v1/integrations/connectors/oauth/callback';
const CONNECTORS = '/api/v1/integrations/connectors';
const REDIRECT = 'https://app.example.com/integrations/done';
// The one site the Jira sidecar's accessible-resources lists.
const CLOUD_ID = '11223344-a1b2-3b33-c444-def123456789';

describeEachDialect('hosted OAuth with follow_up requests (Jira cloud_id) on %s', (dialect) => {
  let sim: AnySimulator;
  let h: Harness;
  let app: CreatedApplication;
  let token: string;

  beforeAll(async () => {
    const entry = describedSimulators(CONNECTORS_DIR).find((e) => e.type === 'jira');
    if (entry === undefined) throw new Error('connectors/jira has no simulator');
    sim = (await entry.start({})) as AnySimulator;
    const registry = testRegistry();
    const sandbox = { connectors: { jira: { base_url: sim.url as string, credentials: entry.credentials(sim) } }, simulators: { jira: sim } };
    h = await startHarness(dialect, { config: { connectorTypes: withSandbox(defaultServiceConfig(), sandbox, registry).connectorTypes }, registry });
    app = await h.createApp('org-jira');
    token = await h.token(app);
  });
  afterAll(async () => {
    await h?.close();
    await sim?.close();
  });

  /** initiate → consent (the simulator; `extra` adds query parameters to the consent URL) → callback; the callback's redirect. */
  async function dance(customer: string, extra: Record<string, string> = {}): Promise<URL> {
    const init = await h.request('POST', INITIATE, { token, body: { customer_name: customer, connector_type: 'jira', redirect_url: REDIRECT } });
    expect(init.status, init.text).toBe(200);
    const consentUrl = new URL(init.body.consent_url);
    expect(consentUrl.searchParams.get('audience')).toBe('api.atlassian.com');
    for (const [k, v] of Object.entries(extra)) consentUrl.searchParams.set(k, v);
    const consent = await h.request('GET', consentUrl.toString());
    expect(consent.status, consent.text).toBe(302);
    const cb = await h.request('GET', consent.headers.get('location') as string);
    expect(cb.status, cb.text).toBe(302);
    expect(openApiErrors('GET', CALLBACK, cb)).toEqual([]);
    return new URL(cb.headers.get('location') as string);
  }

  const stored = async (id: string): Promise<Record<string, unknown>> => {
    const row = await h.store.getConnector(app.organization_id, id);
    return parseKeyRing(TEST_ENCRYPTION_KEY).openJson<Record<string, unknown>>(
      { keyId: row!.credentials_key_id, ciphertext: row!.credentials_ciphertext },
      `connector:${id}`,
    );
  };

  it('fills cloud_id from accessible-resources after the code exchange, creates the connector and lists issues through api.atlassian.com/ex/jira/<cloud id>', async () => {
    const location = await dance('cust-jira');
    const secret = location.searchParams.get('secret_id') as string;
    expect(secret, location.toString()).toMatch(/^sbo_/);
    const created = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'cust-jira', connector_type: 'jira', name: 'Jira via OAuth', server_side_oauth_secret_id: secret },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({ connector_type: 'jira', auth_variant: 'oauth' });

    const creds = await stored(created.body.id);
    expect(creds).toEqual({ access_token: expect.any(String), expires_at: expect.any(Number), cloud_id: CLOUD_ID });
    // The follow_up ran once, with the new token, on the path the manifest names.
    const followUps = (sim.requests as { method: string; path: string; headers: Record<string, unknown> }[]).filter(
      (r) => r.path === '/oauth/token/accessible-resources',
    );
    expect(followUps).toHaveLength(1);
    expect(followUps[0]?.headers['authorization']).toBe(`Bearer ${String(creds['access_token'])}`);

    const r = await h.request('POST', `${CONNECTORS}/${created.body.id}/execute`, {
      token,
      body: { entity: 'issues', action: 'list', params: { jql: 'order by created', max_results: 2 } },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.length).toBeGreaterThan(0);
    expect(r.body.data[0]).toMatchObject({ id: expect.any(String), key: expect.any(String) });

    // Neither the tokens nor the secret id reach the logs.
    const logs = h.logs.join('\n');
    expect(logs).toContain('OAuth callback handled');
    expect(logs).not.toContain(String(creds['access_token']));
    expect(logs).not.toContain(secret);
  });

  it("connects Jira through the Connect UI's OAuth button too, and shows the no-site error in words", async () => {
    const session = async (customer: string): Promise<{ cookie: string; csrf: string }> => {
      const r = await h.request('POST', '/api/v1/integrations/connect/sessions', {
        token,
        body: { customer_name: customer, allowed_connector_types: ['jira'] },
      });
      expect(r.status, r.text).toBe(201);
      const x = await h.request('POST', '/connect/session', { body: { token: r.body.token } });
      const cookie = /sb_connect=([^;]+)/.exec(x.headers.get('set-cookie') ?? '')?.[1] as string;
      const form = await fetch(`${h.url}/connect/types/jira`, { headers: { cookie: `sb_connect=${cookie}` } });
      return { cookie, csrf: /name="csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '' };
    };
    /** The OAuth button, then every redirect as a browser follows it; `extra` is added to the consent URL. */
    const roundTrip = async (customer: string, extra = ''): Promise<{ status: number; text: string }> => {
      const { cookie, csrf } = await session(customer);
      let res = await fetch(`${h.url}/connect/types/jira/oauth`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: `sb_connect=${cookie}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf }).toString(),
      });
      for (let hop = 0; hop < 5 && (res.status === 302 || res.status === 303); hop++) {
        let location = res.headers.get('location') as string;
        if (location.startsWith('/')) location = h.url + location;
        if (location.startsWith(sim.url as string) && location.includes('/authorize?')) location += extra;
        res = await fetch(location, { redirect: 'manual', headers: location.startsWith(h.url) ? { cookie: `sb_connect=${cookie}` } : {} });
      }
      return { status: res.status, text: await res.text() };
    };
    const connectorsOf = async (customer: string) =>
      (await h.request('GET', `${CONNECTORS}?customer_name=${customer}`, { token })).body.data as { id: string; auth_variant: string }[];

    const done = await roundTrip('cust-connect');
    expect(done.status, done.text.slice(0, 300)).toBe(200);
    const [made] = await connectorsOf('cust-connect');
    expect(made).toMatchObject({ auth_variant: 'oauth' });
    expect((await stored(made!.id))['cloud_id']).toBe(CLOUD_ID);

    const refused = await roundTrip('cust-connect-nosite', '&sim_grant=none');
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('granted this app access to no Jira site');
    expect(refused.text).toContain('oauth_nothing_granted');
    expect(await connectorsOf('cust-connect-nosite')).toEqual([]);
  });

  it('redirects with oauth_nothing_granted when the user granted no site, and stores nothing', async () => {
    const rows = async (): Promise<string> => {
      const snap = JSON.parse(await h.snapshot()) as Record<string, unknown>;
      return JSON.stringify([snap['oauth_secrets'], snap['connectors']]);
    };
    const before = await rows();
    const location = await dance('cust-nosite', { sim_grant: 'none' });
    expect(location.origin + location.pathname).toBe(REDIRECT);
    expect(location.searchParams.get('secret_id')).toBeNull();
    expect(location.searchParams.get('error')).toBe('oauth_nothing_granted');
    expect(location.searchParams.get('error_description')).toBe(
      'The Atlassian account granted this app access to no Jira site; start again and choose a site on the consent screen.',
    );
    expect(await rows()).toBe(before);
    const logs = h.logs.join('\n');
    expect(logs).toContain('"err_code":"oauth_nothing_granted"');
    // The simulator issued a token for that grant: it is in no log line.
    const issued = [...(sim['tokens'] as Set<string>)].filter((t) => t !== 'sim-jira-api-token' && t !== 'sim-jira-oauth-token');
    expect(issued.length).toBeGreaterThanOrEqual(2);
    for (const t of issued) expect(logs).not.toContain(t);
  });
});
