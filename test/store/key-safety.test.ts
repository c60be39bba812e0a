/**
 * Keys (issue 11, finding 5): a lost key file is never silently replaced, a missing key id or a
 * wrong key under a known id stops the service at start with a message naming the id, and the
 * SQLite database and key files are owner-only.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApplication } from '../../src/service/auth/accounts.ts';
import { defaultServiceConfig } from '../../src/service/config.ts';
import { connectorCredentialsContext } from '../../src/service/connectors/runtime-pool.ts';
import { startService, type RunningService } from '../../src/service/http/server.ts';
import { ServiceStore } from '../../src/store/index.ts';
import { createServiceLogger } from '../../src/service/ops/logger.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'sb-keys-'));
  dirs.push(d);
  return d;
}

const quiet = createServiceLogger('silent');

async function start(file: string, encryptionKey?: string): Promise<RunningService> {
  return startService({
    config: defaultServiceConfig({ databaseUrl: file, port: 0, syncScheduler: false, ...(encryptionKey !== undefined ? { encryptionKey } : {}) }),
    logger: quiet,
    noListen: true,
  });
}

/** Store one connector sealed with the running service's primary key; its key id. */
async function addConnector(s: RunningService): Promise<string> {
  const store = new ServiceStore(s.database.db);
  const app = await createApplication(store, { orgName: 'acme' });
  const id = `c-${randomBytes(4).toString('hex')}`;
  const sealed = s.ctx.keyRing.sealJson({ api_key: 'secret-value' }, connectorCredentialsContext(id));
  const now = new Date().toISOString();
  await store.insertConnector({
    id,
    organization_id: app.organization_id,
    customer_name: 'c',
    connector_type: 'granola',
    name: 'n',
    auth_variant: 'api_key',
    credentials_key_id: sealed.keyId,
    credentials_ciphertext: sealed.ciphertext,
    created_at: now,
    updated_at: now,
  });
  return sealed.keyId;
}

const key = (): string => randomBytes(32).toString('base64');

describe('keys', () => {
  it('creates the database and key files owner-only (0600)', async () => {
    const dir = tmp();
    const file = join(dir, 'sb.db');
    const s = await start(file);
    await s.close();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'switchboard.key')).mode & 0o777).toBe(0o600);
  });

  it('refuses to start when the key file beside a non-empty database is missing, and generates none', async () => {
    const dir = tmp();
    const file = join(dir, 'sb.db');
    const s = await start(file);
    const keyId = await addConnector(s);
    await s.close();
    rmSync(join(dir, 'switchboard.key'));
    await expect(start(file)).rejects.toThrow(new RegExp(`key id\\(s\\) ${keyId}.*key file .* is missing.*SWITCHBOARD_ENCRYPTION_KEY`));
    expect(existsSync(join(dir, 'switchboard.key'))).toBe(false);
  });

  it('refuses to start when a stored key id is not in SWITCHBOARD_ENCRYPTION_KEY, naming it', async () => {
    const file = join(tmp(), 'sb.db');
    const s = await start(file, `old:${key()}`);
    await addConnector(s);
    await s.close();
    await expect(start(file, `new:${key()}`)).rejects.toMatchObject({ code: 'encryption_key_missing', message: expect.stringContaining('old') });
    // The id present with other bytes is the other refusal.
    await expect(start(file, `new:${key()},old:${key()}`)).rejects.toMatchObject({ code: 'encryption_key_mismatch' });
  });

  it('a wrong key under a known id is encryption_key_mismatch, not internal_error', async () => {
    const file = join(tmp(), 'sb.db');
    const right = key();
    const s = await start(file, `k1:${right}`);
    await addConnector(s);
    await s.close();
    await expect(start(file, `k1:${key()}`)).rejects.toMatchObject({ code: 'encryption_key_mismatch', message: expect.stringContaining('"k1"') });
    const again = await start(file, `k2:${key()},k1:${right}`);
    await again.close();
  });
});
