/**
 * The commands as a user runs them: `switchboard serve` (what `npm start` runs) comes up, serves
 * /healthz and a token for an application made by `switchboard admin create-app`, and stops
 * cleanly on SIGTERM; `admin grant` gives an application a second organization; admin never
 * creates a database unless told to (--create).
 */
import { spawn, execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from './helpers.ts';

const BIN = new URL('../../bin/switchboard.js', import.meta.url).pathname;
const run = promisify(execFile);

describe('switchboard serve and admin', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await freshDatabase('sqlite');
  });
  afterAll(async () => {
    await db.drop();
  });

  it('creates an application, serves it a token, grants a second organization, and stops on SIGTERM', async () => {
    const env = { ...process.env, SWITCHBOARD_DATABASE_URL: db.url, PORT: '0', SWITCHBOARD_LOG_LEVEL: 'info' };
    // No database yet: admin refuses to create one unless told to, naming the file it looked at.
    const refused = await run(process.execPath, [BIN, 'admin', 'create-app', '--org', 'cli-org'], { env }).catch((e: { code: number; stderr: string }) => e);
    expect((refused as { code: number }).code).toBe(1);
    expect((refused as { stderr: string }).stderr).toContain('database_not_found');
    expect((refused as { stderr: string }).stderr).toContain(`No Switchboard database at ${db.url}`);
    expect(existsSync(db.url)).toBe(false);
    const { stdout } = await run(process.execPath, [BIN, 'admin', 'create-app', '--org', 'cli-org', '--create'], { env });
    const app = JSON.parse(stdout) as { organization_id: string; client_id: string; client_secret: string };
    expect(app).toEqual({ organization_id: expect.any(String), client_id: expect.stringMatching(/^sbc_/), client_secret: expect.stringMatching(/^sbs_/) });

    const server = spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: server.stdout }).on('line', (line) => {
          const m = /"msg":"Switchboard listening"/.test(line) ? (JSON.parse(line) as { url: string }).url : undefined;
          if (m !== undefined) resolve(m);
        });
        server.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
      });
      expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' });
      const token = await fetch(`${url}/api/v1/account/applications/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_id: app.client_id, client_secret: app.client_secret }),
      });
      expect(token.status).toBe(200);
      const { access_token } = (await token.json()) as { access_token: string };

      const granted = JSON.parse(
        (await run(process.execPath, [BIN, 'admin', 'grant', '--client-id', app.client_id, '--org', 'second-org'], { env })).stdout,
      ) as { granted: boolean; organization_id: string };
      expect(granted).toMatchObject({ client_id: app.client_id, granted: true });
      const list = await fetch(`${url}/api/v1/integrations/connectors`, { headers: { authorization: `Bearer ${access_token}` } });
      expect(list.status).toBe(400); // now two organizations: X-Organization-Id is required
      const second = await fetch(`${url}/api/v1/integrations/connectors`, {
        headers: { authorization: `Bearer ${access_token}`, 'x-organization-id': granted.organization_id },
      });
      expect(second.status).toBe(200);
    } finally {
      const exited = new Promise<number | null>((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });

  it('fails clearly when granting to an unknown client id', async () => {
    const env = { ...process.env, SWITCHBOARD_DATABASE_URL: db.url };
    const err = await run(process.execPath, [BIN, 'admin', 'grant', '--client-id', 'sbc_nobody', '--org', 'x'], { env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((err as { code: number }).code).toBe(1);
    expect((err as { stderr: string }).stderr).toContain('invalid_client');
  });
});
