/**
 * Library mode beside several sandboxes: `switchboard sandbox` and `serve --sandbox` (or two on
 * other ports) issue the same sample credentials, each simulator with its own data. `exec`,
 * `check` and `mcp` never pick one silently (a contact created in one would "disappear" when a
 * later command picked the other): they stop with sandbox_ambiguous, naming each one's URL,
 * before any request. With one sandbox running, the notice says which one it is.
 * And the missing-credentials hint names the connector type's own fields (from its manifest).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { runSwitchboard } from '../helpers/process.ts';

const KEY = 'grn_sample_key_of_both';
const errorOf = (stderr: string): { code: string; message: string; details?: Record<string, unknown> } =>
  (JSON.parse(stderr.slice(stderr.indexOf('{'))) as { error: { code: string; message: string } }).error;

let sim: GranolaSimulator;
beforeAll(async () => {
  sim = await startGranolaSimulator({ size: 5, rateLimit: false, apiKey: KEY });
});
afterAll(() => sim.close());

/** A data directory holding the state files of running sandboxes (this process stands for them: alive). */
function dataDirWith(states: { port: number; kind: 'sandbox' | 'service'; url: string }[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'sb-choice-'));
  for (const s of states) {
    writeFileSync(
      join(dir, `sandbox-${String(s.port)}.json`),
      JSON.stringify({ kind: s.kind, pid: process.pid, connectors: { granola: { base_url: s.url, credentials: { api_key: KEY } } }, tokens: {} }),
    );
  }
  return dir;
}

describe('sandbox discovery beside several sandboxes', () => {
  it('one running sandbox: exec uses it and says which one started it', async () => {
    const dir = dataDirWith([{ port: 14110, kind: 'service', url: sim.url }]);
    const r = await runSwitchboard(['exec', 'granola', 'notes', 'list', '--params', '{"page_size":1}', '--data-dir', dir], {
      SWITCHBOARD_CREDENTIALS: JSON.stringify({ api_key: KEY }),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `Using the sandbox's granola simulator at ${sim.url} (${join(dir, 'sandbox-14110.json')}, started by serve --sandbox); pass --base-url to choose another.`,
    );
  });

  it('two running sandboxes: exec and check refuse with sandbox_ambiguous, naming both URLs; --base-url chooses', async () => {
    // Both "sandboxes" are this simulator: a request sent to either would succeed, so the refusal is a decision.
    const dir = dataDirWith([
      { port: 14010, kind: 'sandbox', url: sim.url },
      { port: 14110, kind: 'service', url: `${sim.url}/` },
    ]);
    const env = { SWITCHBOARD_CREDENTIALS: JSON.stringify({ api_key: KEY }) };
    for (const args of [
      ['exec', 'granola', 'notes', 'list'],
      ['check', 'granola'],
    ]) {
      const r = await runSwitchboard([...args, '--data-dir', dir], env);
      expect(r.code).toBe(1);
      const e = args[0] === 'check' ? (JSON.parse(r.stdout) as { error: ReturnType<typeof errorOf> }).error : errorOf(r.stderr);
      expect(e.code).toBe('sandbox_ambiguous');
      expect(e.message).toContain(`${sim.url} (switchboard sandbox, ${join(dir, 'sandbox-14010.json')})`);
      expect(e.message).toContain(`${sim.url}/ (serve --sandbox, ${join(dir, 'sandbox-14110.json')})`);
      expect(e.message).toContain('Choose one: pass --base-url');
      expect(r.stderr).not.toContain('Using the sandbox');
    }
    const chosen = await runSwitchboard(['exec', 'granola', 'notes', 'list', '--params', '{"page_size":1}', '--data-dir', dir, '--base-url', sim.url], env);
    expect(chosen.code, chosen.stderr).toBe(0);
  });

  it('two running sandboxes: mcp stops at start, naming base_url of its instances file', async () => {
    const dir = dataDirWith([
      { port: 14010, kind: 'sandbox', url: sim.url },
      { port: 14110, kind: 'service', url: sim.url },
    ]);
    const file = join(dir, 'connectors.yaml');
    writeFileSync(file, 'connectors:\n  - id: notes\n    type: granola\n    credentials:\n      api_key: ${GRANOLA_API_KEY}\n');
    const r = await runSwitchboard(['mcp', '--connectors', file, '--data-dir', dir], { GRANOLA_API_KEY: KEY });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('sandbox_ambiguous');
    expect(r.stderr).toContain(`set base_url of notes in ${file}`);
  });
});

describe("the missing-credentials hint names the type's own fields", () => {
  it.each([
    ['github', `'{"token":"..."}'`, "github's token variant; the others, installation_token, app, oauth"],
    ['zendesk', `'{"subdomain":"...","email":"...","api_token":"..."}'`, "zendesk's api_token variant"],
    ['granola', `'{"api_key":"..."}'`, undefined],
  ])('%s', async (type, example, note) => {
    const r = await runSwitchboard(['exec', type, 'x', 'list'], { SWITCHBOARD_CREDENTIALS: '' });
    const e = errorOf(r.stderr);
    expect(e.code).toBe('invalid_credentials');
    expect(e.message).toContain(`pass --credentials ${example}`);
    expect(e.message).toContain(`export SWITCHBOARD_CREDENTIALS=${example}`);
    if (note === undefined) expect(e.message).not.toContain('variant');
    else expect(e.message).toContain(note);
    // Malformed JSON: the example of that type too.
    const bad = errorOf((await runSwitchboard(['exec', type, 'x', 'list', '--credentials', '{token:'])).stderr);
    expect(bad.message).toContain(`e.g. --credentials ${example}`);
  });
});

it('serve --help says the sandbox starts a simulator per connector (not three named ones)', async () => {
  const r = await runSwitchboard(['serve', '--help']);
  expect(r.stdout.replace(/\s+/g, ' ')).toContain('one simulator per connector on consecutive ports');
  expect(r.stdout).not.toMatch(/Granola, Intercom, Monday/);
});
