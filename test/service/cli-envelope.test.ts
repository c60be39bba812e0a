/** `switchboard admin create-app --envelope airbyte`: an application whose every call gets Airbyte's envelope. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, startHarness, type Harness, type TestDatabase } from './helpers.ts';

const BIN = new URL('../../bin/switchboard.js', import.meta.url).pathname;
const run = promisify(execFile);

describe('admin create-app --envelope', () => {
  let db: TestDatabase;
  let h: Harness | undefined;
  beforeAll(async () => {
    db = await freshDatabase('sqlite');
  });
  afterAll(async () => {
    await h?.close();
    await db.drop();
  });

  it('creates an application that speaks the airbyte envelope; an unknown envelope is refused', async () => {
    const env = { ...process.env, SWITCHBOARD_DATABASE_URL: db.url };
    const bad = await run(process.execPath, [BIN, 'admin', 'create-app', '--org', 'o', '--envelope', 'soap'], { env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((bad as { code: number }).code).toBe(1);
    expect((bad as { stderr: string }).stderr).toContain('--envelope must be one of: switchboard, airbyte');

    const created = JSON.parse(
      (await run(process.execPath, [BIN, 'admin', 'create-app', '--org', 'o', '--envelope', 'airbyte', '--create'], { env })).stdout,
    ) as { client_id: string; client_secret: string; organization_id: string };
    const plain = JSON.parse((await run(process.execPath, [BIN, 'admin', 'create-app', '--org', 'o'], { env })).stdout) as typeof created;
    h = await startHarness('sqlite', { database: db });
    // An error is the cheapest answer that shows the envelope: no upstream needed.
    const missing = '/api/v1/integrations/connectors/00000000-0000-4000-8000-000000000000';
    const airbyte = await h.request('GET', missing, { token: await h.token(created) });
    expect(airbyte.status).toBe(404);
    expect(airbyte.body).toMatchObject({ code: 'connector_not_found', message: airbyte.body.detail, errors: [{ message: airbyte.body.detail }] });
    const today = await h.request('GET', missing, { token: await h.token(plain) });
    expect(today.body.message).toBeUndefined();
    expect(today.body.errors).toBeUndefined();
  });
});
