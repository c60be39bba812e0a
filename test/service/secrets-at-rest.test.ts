/**
 * Known secrets go through the service — connector credentials, OAuth tokens, the OAuth app's
 * client secret, our client secret, access tokens, OAuth states and secret ids — and are then
 * searched for in the SQLite database files (main, WAL, SHM) and in every captured log line.
 * None may be found. Also: the key file generated when no key is configured.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/simulator/sandbox.ts';
import { createServiceLogger, defaultServiceConfig, startService } from '../../src/service/index.ts';
import { withSandbox } from '../../src/service/data/sandbox-wiring.ts';
import { startAcmeProvider, type AcmeProvider } from './fixtures/acme-provider.ts';
import { generateKeySpec } from '../../src/store/index.ts';
import { freshDatabase, startHarness, TEST_ENCRYPTION_KEY, testRegistry, type Harness, type TestDatabase } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';

describe('secrets at rest and in logs (SQLite file)', () => {
  let provider: AcmeProvider;
  let sandbox: Sandbox;
  let h: Harness;
  const secrets: string[] = [];

  beforeAll(async () => {
    provider = await startAcmeProvider();
    sandbox = await startSandbox();
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
    h = await startHarness('sqlite', { config: { connectorTypes: types, logLevel: 'trace' }, registry });
  });
  afterAll(async () => {
    await h?.close();
    await sandbox?.close();
    await provider?.close();
  });

  it('finds no known secret in the database files or the logs', async () => {
    const app = await h.createApp('org-secret');
    secrets.push(app.client_secret, provider.clientSecret);
    const token = await h.token(app);
    secrets.push(token);
    const KNOWN = 'sk_live_KNOWN_SECRET_4f2a9c1e77';
    secrets.push(KNOWN);
    const granolaKey = sandbox.connectors['granola']?.credentials['api_key'] as string;
    secrets.push(granolaKey);

    // Variant A with a key the upstream refuses: the check refuses it (nothing stored, the key not echoed)...
    const checked = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { api_key: KNOWN } },
    });
    expect(checked.status).toBe(424);
    expect(checked.text).not.toContain(KNOWN);
    // ...and stored unchecked, refused on execute, then the real one through PATCH.
    const a = await h.request('POST', `${CONNECTORS}?check=false`, {
      token,
      body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { api_key: KNOWN } },
    });
    expect(a.status).toBe(201);
    const refused = await h.request('POST', `${CONNECTORS}/${a.body.id}/execute`, { token, body: { entity: 'notes', action: 'list' } });
    expect(refused.status).toBe(424);
    expect((await h.request('PATCH', `${CONNECTORS}/${a.body.id}`, { token, body: { credentials: { api_key: granolaKey } } })).status).toBe(200);
    expect(
      (await h.request('POST', `${CONNECTORS}/${a.body.id}/execute`, { token, body: { entity: 'notes', action: 'list', params: { page_size: 1 } } })).status,
    ).toBe(200);
    // A refused create whose credentials carry the secret under a wrong field name.
    const wrong = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { apikey: KNOWN } },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.text).not.toContain(KNOWN);

    // Variant B through the OAuth dance, then a refresh.
    const init = await h.request('POST', '/api/v1/integrations/connectors/oauth/initiate', {
      token,
      body: { customer_name: 'c', connector_type: 'acme', redirect_url: 'https://app.example.com/done' },
    });
    const state = new URL(init.body.consent_url).searchParams.get('state') as string;
    secrets.push(state);
    const consent = await h.request('GET', init.body.consent_url);
    const callback = consent.headers.get('location') as string;
    secrets.push(new URL(callback).searchParams.get('code') as string);
    const cb = await h.request('GET', callback);
    const secretId = new URL(cb.headers.get('location') as string).searchParams.get('secret_id') as string;
    secrets.push(secretId);
    const b = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'c', connector_type: 'acme', name: 'a', server_side_oauth_secret_id: secretId },
    });
    expect(b.status).toBe(201);
    secrets.push(...provider.accessTokens);
    provider.expireAccessTokens();
    expect((await h.request('POST', `${CONNECTORS}/${b.body.id}/execute`, { token, body: { entity: 'widgets', action: 'list' } })).status).toBe(200);
    secrets.push(...provider.accessTokens);
    // Error paths log too.
    await h.request('POST', `${CONNECTORS}/${b.body.id}/execute`, { token, body: { entity: 'widgets', action: 'get', params: { id: 'echo' } } });
    await h.request('GET', callback);

    await h.service.close(); // flush the WAL into the main file as SQLite does on close
    const file = h.db.file as string;
    const dbBytes = [file, `${file}-wal`, `${file}-shm`].filter((f) => existsSync(f)).map((f) => readFileSync(f).toString('latin1'));
    const logText = h.logs.join('\n');
    expect(h.logs.length).toBeGreaterThan(20);
    expect(logText).toContain('[redacted]'); // the callback URL's code and state were masked
    // Positive controls: the search does see what is stored and logged in the clear.
    expect(dbBytes.some((bytes) => bytes.includes('org-secret'))).toBe(true);
    expect(logText).toContain(a.body.id);
    for (const s of secrets) {
      expect(s.length).toBeGreaterThan(8);
      for (const bytes of dbBytes) expect(bytes.includes(s), `secret ${s.slice(0, 6)}… found in the database`).toBe(false);
      expect(logText.includes(s), `secret ${s.slice(0, 6)}… found in the logs`).toBe(false);
    }
  });
});

describe('encryption key file', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase('sqlite');
  });
  afterAll(async () => {
    await db.drop();
  });

  it('is generated beside the SQLite file with mode 0600 and a warning, then reused', async () => {
    const lines: string[] = [];
    const logger = createServiceLogger('info', { write: (l: string) => void lines.push(l) });
    const config = defaultServiceConfig({ databaseUrl: db.url, port: 0, syncScheduler: false });
    const first = await startService({ config, logger, noListen: true });
    await first.close();
    const keyFile = join(dirname(db.file as string), 'switchboard.key');
    expect(existsSync(keyFile)).toBe(true);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(lines.join('\n')).toContain('generated an encryption key');
    const key = readFileSync(keyFile, 'utf8');
    const second = await startService({ config, logger, noListen: true });
    await second.close();
    expect(readFileSync(keyFile, 'utf8')).toBe(key);
  });

  it('is refused on PostgreSQL without SWITCHBOARD_ENCRYPTION_KEY', async () => {
    const { resolveKeyRing } = await import('../../src/store/index.ts');
    expect(() => resolveKeyRing(undefined, { dialect: 'postgres' })).toThrow(/SWITCHBOARD_ENCRYPTION_KEY is required/);
  });
});

describe('key rotation', () => {
  it('re-encrypts credentials with the new primary key when they are next used', async () => {
    const sandbox = await startSandbox();
    const registry = testRegistry();
    const types = withSandbox(defaultServiceConfig(), sandbox, registry).connectorTypes;
    const before = await startHarness('sqlite', { config: { connectorTypes: types }, registry });
    try {
      const token = await before.token(await before.createApp('rot'));
      const c = await before.request('POST', CONNECTORS, {
        token,
        body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: sandbox.connectors['granola']?.credentials },
      });
      const oldKeyId = TEST_ENCRYPTION_KEY.split(':')[0];
      const orgId = c.body.organization_id as string;
      expect((await before.store.getConnector(orgId, c.body.id))?.credentials_key_id).toBe(oldKeyId);
      // A new instance whose ring has a new primary key and the old one after it.
      const next = generateKeySpec();
      const after = await startHarness('sqlite', {
        config: { connectorTypes: types, encryptionKey: `${next},${TEST_ENCRYPTION_KEY}` },
        registry,
        database: before.db,
      });
      try {
        const r = await after.request('POST', `${CONNECTORS}/${c.body.id}/execute`, {
          token,
          body: { entity: 'notes', action: 'list', params: { page_size: 1 } },
        });
        expect(r.status).toBe(200);
        // The re-seal is written in the background: poll for it, with a deadline.
        const want = next.split(':')[0];
        const deadline = Date.now() + 10_000;
        let keyId = (await after.store.getConnector(orgId, c.body.id))?.credentials_key_id;
        while (keyId !== want && Date.now() < deadline) {
          await new Promise((resolve) => setImmediate(resolve));
          keyId = (await after.store.getConnector(orgId, c.body.id))?.credentials_key_id;
        }
        expect(keyId).toBe(want);
        expect(
          (await after.request('POST', `${CONNECTORS}/${c.body.id}/execute`, { token, body: { entity: 'notes', action: 'list', params: { page_size: 1 } } }))
            .status,
        ).toBe(200);
      } finally {
        await after.close();
      }
    } finally {
      await before.close();
      await sandbox.close();
    }
  });
});
