import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { runSwitchboard } from '../helpers/process.ts';

const run = runSwitchboard;

let sim: GranolaSimulator;
beforeAll(async () => {
  sim = await startGranolaSimulator({ size: 40, rateLimit: false });
});
afterAll(() => sim.close());

describe('switchboard CLI', () => {
  it('validate accepts every shipped manifest', async () => {
    const r = await run(['validate']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/ok connectors\/granola\/connector.yaml/);
  });

  it('validate rejects a bad manifest with file, line and location', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-'));
    const file = join(dir, 'connector.yaml');
    writeFileSync(file, 'manifest_version: 1\ntype: Bad-Name\ntitle: x\n');
    const r = await run(['validate', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/connector\.yaml:2:7 type: must match pattern/);
    expect(r.stderr).toMatch(/missing required key "entities"/);
  });

  it('codegen --check passes on a current tree', async () => {
    const r = await run(['codegen', '--check']);
    expect(r.stderr + r.stdout).toMatch(/generated\/ is current/);
    expect(r.code).toBe(0);
  });

  it('connectors lists types, entities and actions', async () => {
    const r = await run(['connectors']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^granola\s+notes\s+list, get, search\*$/m);
    expect(r.stdout).toMatch(/\* hosted only/);
  });

  it('exec prints the envelope; credentials from the environment', async () => {
    const r = await run(['exec', 'granola', 'notes', 'list', '--params', '{"page_size":3}', '--base-url', sim.url], {
      SWITCHBOARD_CREDENTIALS: JSON.stringify({ api_key: sim.apiKey }),
    });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { data: { id: string }[]; meta: { has_more: boolean } };
    expect(out.data.map((n) => n.id)).toEqual(sim.ids().slice(0, 3));
    expect(out.meta.has_more).toBe(true);
  });

  it('exec --all-pages prints every record; --credentials @file works', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-'));
    const creds = join(dir, 'creds.json');
    writeFileSync(creds, JSON.stringify({ api_key: sim.apiKey }));
    const r = await run([
      'exec',
      'granola',
      'notes',
      'list',
      '--all-pages',
      '--params',
      '{"page_size":7}',
      '--credentials',
      `@${creds}`,
      '--base-url',
      sim.url,
    ]);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { data: unknown[] }).data).toHaveLength(40);
  });

  it.each([
    ['unknown entity', ['exec', 'granola', 'meetings', 'list'], 'unknown_entity'],
    ['bad params', ['exec', 'granola', 'notes', 'list', '--params', '{"page_size":99}'], 'invalid_params'],
    ['params not JSON', ['exec', 'granola', 'notes', 'list', '--params', '{page_size'], 'invalid_params'],
    ['credentials not JSON', ['exec', 'granola', 'notes', 'list', '--credentials', '{api_key:'], 'invalid_credentials_json'],
    ['upstream 404', ['exec', 'granola', 'notes', 'get', '--params', '{"note_id":"not_AAAAAAAAAAAAAA"}'], 'upstream_not_found'],
  ])('exec failure (%s): JSON error on stderr, non-zero exit', async (_n, args, code) => {
    const r = await run([...args, '--base-url', sim.url], { SWITCHBOARD_CREDENTIALS: JSON.stringify({ api_key: sim.apiKey }) });
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect((JSON.parse(r.stderr) as { error: { code: string } }).error.code).toBe(code);
  });

  it('exec without credentials says where they come from', async () => {
    const r = await run(['exec', 'granola', 'notes', 'list'], { SWITCHBOARD_CREDENTIALS: '' });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/SWITCHBOARD_CREDENTIALS/);
  });
});
