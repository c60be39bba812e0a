/**
 * The "done when", end to end: `switchboard init asana` on Asana's description, then,
 * with no edit, list/get/create/update of projects and tasks through `switchboard exec
 * --connectors <dir>` against `switchboard simulate --openapi` on the same description; a create
 * followed by a get returns the created record, and a request the description forbids gets 400.
 *
 * `switchboard simulate` is built on another branch (h6-simulate). Until both are merged this
 * suite is skipped, saying why; once `simulate` exists it runs as is. WIRING NOTE for the merge:
 * `simulatorUrl` below takes the first http://host:port URL the simulator prints on stdout, and
 * appends the path of the description's server URL (/api/1.0) when the printed URL has none;
 * adjust it to what `simulate` prints if that differs.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSwitchboard, SWITCHBOARD_BIN, startSwitchboard } from '../helpers/process.ts';
import { asanaScenario } from './asana-scenario.ts';

const ASANA = 'test/fixtures/asana/asana_oas.yaml';
const simulateExists = /^\s+simulate\b/m.test(spawnSync(process.execPath, [SWITCHBOARD_BIN, '--help'], { encoding: 'utf8' }).stdout);

function simulatorUrl(lines: string[]): string | undefined {
  const found = lines.join('\n').match(/https?:\/\/[\w.[\]:-]+:\d+(\/[^\s"',]*)?/);
  if (!found) return undefined;
  return found[1] && found[1] !== '/' ? found[0].replace(/\/$/, '') : `${found[0].replace(/\/$/, '')}/api/1.0`;
}

describe.skipIf(!simulateExists)('init → simulate → exec on Asana (skipped: `switchboard simulate` is not in this build yet)', () => {
  let stop: (() => Promise<number | null>) | undefined;
  let url: string;
  const out = join(mkdtempSync(join(tmpdir(), 'sb-init-sim-')), 'connectors');
  beforeAll(async () => {
    const sim = await startSwitchboard(['simulate', '--openapi', ASANA, '--port', '0', '--seed', '1'], /https?:\/\/[\w.[\]:-]+:\d+/);
    stop = sim.stop;
    url = simulatorUrl(sim.lines)!;
  });
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
    const r = await fetch(`${url}/projects/1/`, { method: 'PUT', headers: { authorization: 'Bearer t', 'content-type': 'application/json' }, body: JSON.stringify({ data: { name: 42 } }) });
    expect(r.status).toBe(400);
  });
});
