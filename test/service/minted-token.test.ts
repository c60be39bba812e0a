/**
 * A GitHub App connector in the hosted service: created with the app's credentials (the check
 * mints an installation token from the generic simulator), then executes reuse the token the
 * connector's cached runtime minted; neither the private key nor the minted token is returned,
 * stored in the clear or logged. The RSA key is generated here.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { describeEachDialect, startHosted, type Harness } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const DESCRIPTION = new URL('../../connectors/github/openapi.json', import.meta.url).pathname;
const SIDECAR = new URL('../../connectors/github/simulator.yaml', import.meta.url).pathname;
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();

describeEachDialect('a GitHub App connector (minted_bearer) in the hosted service on %s', (dialect) => {
  let sim: OpenApiSimulator;
  let h: Harness;
  let token: string;
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: DESCRIPTION, sidecar: SIDECAR, seed: 9, jwtKeys: { '77': publicKey } });
    sim.setRateLimit(false);
    ({ h, token } = await startHosted(dialect, { org: 'app-org', upstreams: { github: sim.url } }));
  });
  afterAll(async () => {
    await h?.close();
    await sim?.close();
  });

  it('creates with a check that mints, executes with the cached token, and never shows the key or the token', async () => {
    const created = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'octo', connector_type: 'github', name: 'GitHub App', credentials: { app_id: '77', installation_id: '5', private_key: PEM } },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    for (let i = 0; i < 2; i++) {
      const r = await h.request('POST', `${CONNECTORS}/${id}/execute`, { token, body: { entity: 'repositories', action: 'list', params: {} } });
      expect(r.status, r.text).toBe(200);
      expect((r.body.data as unknown[]).length).toBeGreaterThan(0);
    }
    const mints = sim.requests.filter((r) => r.path === '/app/installations/5/access_tokens');
    // One mint for the check on create (a runtime of its own), one by the connector's cached runtime for both executes.
    expect(mints).toHaveLength(2);
    const minted = sim.requests.filter((r) => r.path === '/user/repos').map((r) => String(r.headers.authorization).slice(7));
    expect(new Set(minted).size).toBe(1);
    const keyLine = PEM.split('\n')[1] as string;
    const shown = JSON.stringify([created.body, (await h.request('GET', `${CONNECTORS}/${id}`, { token })).body, h.logs]);
    expect(shown).not.toContain(keyLine);
    expect(shown).not.toContain(minted[0]);
  });

  it('a key the upstream refuses fails the create with upstream_credentials_rejected; a bad PEM with invalid_credentials', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const refused = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'octo2', connector_type: 'github', name: 'x', credentials: { app_id: '77', installation_id: '5', private_key: other } },
    });
    expect(refused.status, refused.text).toBeGreaterThanOrEqual(400);
    expect(refused.text).toContain('upstream_credentials_rejected');
    const bad = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'octo3', connector_type: 'github', name: 'x', credentials: { app_id: '77', installation_id: '5', private_key: 'nope' } },
    });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.text).toContain('invalid_credentials');
    expect(bad.text).not.toContain(other.split('\n')[1] as string);
  });
});
