/**
 * The "done when", end to end: `switchboard init asana` on Asana's description, then,
 * with no edit, list/get/create/update of projects and tasks through `switchboard exec
 * --connectors <dir>` against `switchboard simulate --openapi` on the same description; a create
 * followed by a get returns the created record, and a request the description forbids gets 400.
 * The simulator serves the description under the path of its server URL (/api/1.0), which is the
 * scaffolded base URL's path, so exec's --base-url is the printed base_url plus that path.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSwitchboard, startSwitchboard } from '../helpers/process.ts';
import { asanaScenario } from './asana-scenario.ts';

const ASANA = 'test/fixtures/asana/asana_oas.yaml';
describe('init → simulate → exec on Asana', () => {
  let stop: (() => Promise<number | null>) | undefined;
  let url: string;
  const out = join(mkdtempSync(join(tmpdir(), 'sb-init-sim-')), 'connectors');
  beforeAll(async () => {
    const sim = await startSwitchboard(['simulate', '--openapi', ASANA, '--port', '0', '--seed', '1'], /^}$/, { deadlineMs: 60_000 });
    stop = sim.stop;
    url = `${(JSON.parse(sim.lines.join('\n')) as { base_url: string }).base_url.replace(/\/$/, '')}/api/1.0`;
  }, 90_000);
  afterAll(async () => {
    await stop?.();
  });

  it('scaffolds a manifest that runs unedited against the simulator of the same description', async () => {
    const init = await runSwitchboard(['init', 'asana', '--from-openapi', ASANA, '--entities', 'projects,tasks', '--out', out]);
    expect(init.code).toBe(0);
    expect((await runSwitchboard(['validate', '--connectors', out])).code).toBe(0);
    await asanaScenario(out, url);
  }, 240_000);

  it('the simulator refuses a request the description forbids with 400', async () => {
    const made = (await (
      await fetch(`${url}/projects`, {
        method: 'POST',
        headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
        body: JSON.stringify({ data: { name: 'Kept' } }),
      })
    ).json()) as { data: { gid: string } };
    const r = await fetch(`${url}/projects/${made.data.gid}`, {
      method: 'PUT',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: JSON.stringify({ data: { name: 42 } }),
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { errors: { message: string }[] }).errors[0]?.message).toMatch(/data\.name must be string/);
    // Nothing changed.
    const got = (await (await fetch(`${url}/projects/${made.data.gid}`, { headers: { authorization: 'Bearer t' } })).json()) as { data: { name: string } };
    expect(got.data.name).toBe('Kept');
  });
});

describe('init → simulate → exec on a description that declares its next page (our own offset-token.yaml)', () => {
  const OFFSET_TOKEN = 'test/fixtures/factory/offset-token.yaml';
  let stop: (() => Promise<number | null>) | undefined;
  let url: string;
  let seeded: number;
  const out = join(mkdtempSync(join(tmpdir(), 'sb-init-sim-')), 'connectors');
  beforeAll(async () => {
    const sim = await startSwitchboard(['simulate', '--openapi', OFFSET_TOKEN, '--port', '0', '--seed', '1'], /^}$/, { deadlineMs: 60_000 });
    stop = sim.stop;
    const printed = JSON.parse(sim.lines.join('\n')) as { base_url: string; resources: Record<string, { records: number }> };
    url = `${printed.base_url.replace(/\/$/, '')}/api/1.0`;
    seeded = printed.resources['items']!.records;
  }, 90_000);
  afterAll(async () => {
    await stop?.();
  });

  it('the pagination init inferred walks the simulator’s pages (next_page.offset) to the last', async () => {
    expect((await runSwitchboard(['init', 'tracker', '--from-openapi', OFFSET_TOKEN, '--out', out])).code).toBe(0);
    const exec = async (action: string, params: Record<string, unknown>, extra: string[] = []): Promise<Record<string, any>> => {
      const r = await runSwitchboard(
        ['exec', 'tracker', 'items', action, '--params', JSON.stringify(params), '--base-url', url, '--connectors', out, ...extra],
        { SWITCHBOARD_CREDENTIALS: JSON.stringify({ token: 't' }) },
      );
      expect(r.stderr).toBe('');
      return JSON.parse(r.stdout) as Record<string, any>;
    };
    const made = (await exec('create', { name: 'Made here' }))['data'];
    expect((await exec('get', { item_gid: made.gid }))['data']).toMatchObject({ gid: made.gid, name: 'Made here' });
    const page = await exec('list', { limit: 2 });
    expect(page['data']).toHaveLength(2);
    expect(typeof page['meta'].next_page).toBe('string');
    const all = await exec('list', { limit: 2 }, ['--all-pages']);
    const gids = (all['data'] as { gid: string }[]).map((r) => r.gid);
    expect(gids).toHaveLength(seeded + 1);
    expect(new Set(gids).size).toBe(gids.length);
    expect(gids).toContain(made.gid);
  }, 120_000);
});
