/**
 * `--connectors <dir>` and $SWITCHBOARD_CONNECTORS_PATH: a manifest outside the package works in
 * every command a built-in one does (validate, connectors, describe, exec, check, codegen,
 * sandbox, serve, mcp). The outside connector is Granola's manifest under another type name,
 * `outside_notes`, run against the Granola simulator.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { runSwitchboard, SWITCHBOARD_BIN } from '../helpers/process.ts';

let sim: GranolaSimulator;
let root: string;
let dir: string;
const TYPE = 'outside_notes';

beforeAll(async () => {
  sim = await startGranolaSimulator({ size: 12, rateLimit: false });
  root = mkdtempSync(join(tmpdir(), 'sb-connectors-'));
  dir = join(root, 'connectors');
  mkdirSync(join(dir, TYPE), { recursive: true });
  // Granola's manifest without its vendor description (openapi.yaml stays in connectors/granola).
  const { vendor_description: _vd, ...m } = parse(readFileSync('connectors/granola/connector.yaml', 'utf8')) as Record<string, unknown>;
  writeFileSync(join(dir, TYPE, 'connector.yaml'), stringify({ ...m, type: TYPE, title: 'Outside notes' }));
});
afterAll(() => sim.close());

const creds = (): Record<string, string> => ({ SWITCHBOARD_CREDENTIALS: JSON.stringify({ api_key: sim.apiKey }) });
const errorCode = (stderr: string): string => (JSON.parse(stderr) as { error: { code: string } }).error.code;

/** Run a long-lived command until its output (stdout + stderr) matches `until`, then stop it; the output so far. */
function runUntil(args: string[], until: RegExp, env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SWITCHBOARD_BIN, ...args], { env: { ...process.env, ...env }, cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (until.test(out)) child.kill('SIGTERM');
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', () => (until.test(out) ? resolve(out) : reject(new Error(`switchboard ${args.join(' ')} ended without ${String(until)}: ${out}`))));
  });
}

describe('--connectors <dir>', () => {
  it('validate checks the outside manifest beside the built-in ones', async () => {
    const r = await runSwitchboard(['validate', '--connectors', dir]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`ok ${join(dir, TYPE, 'connector.yaml')} (${TYPE}: 1 entity)`);
    expect(r.stdout).toMatch(/^ok connectors\/granola\/connector\.yaml/m);
  });

  it('a directory that does not exist is invalid_connectors_path, on any command', async () => {
    for (const args of [['validate'], ['connectors'], ['describe', TYPE]]) {
      const r = await runSwitchboard([...args, '--connectors', join(root, 'nope')]);
      expect(r.code).toBe(1);
      expect(errorCode(r.stderr)).toBe('invalid_connectors_path');
      expect(r.stderr).toContain('nope is not a directory');
    }
  });

  it('connectors lists it; SWITCHBOARD_CONNECTORS_PATH does the same as the flag', async () => {
    const flag = await runSwitchboard(['connectors', '--connectors', dir]);
    expect(flag.stdout).toMatch(new RegExp(`^${TYPE}\\s+notes\\s+list, get, search\\*$`, 'm'));
    const env = await runSwitchboard(['connectors'], { SWITCHBOARD_CONNECTORS_PATH: dir });
    expect(env.stdout).toBe(flag.stdout);
    const without = await runSwitchboard(['connectors']);
    expect(without.stdout).not.toContain(TYPE);
    const bad = await runSwitchboard(['connectors'], { SWITCHBOARD_CONNECTORS_PATH: join(root, 'gone') });
    expect(errorCode(bad.stderr)).toBe('invalid_connectors_path');
  });

  it('a connector folder itself may be given', async () => {
    const r = await runSwitchboard(['describe', TYPE, '--json', '--connectors', join(dir, TYPE)]);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { title: string }).title).toBe('Outside notes');
  });

  it('describe and exec run it; without the flag it is an unknown type', async () => {
    const d = await runSwitchboard(['describe', TYPE, 'notes', 'list', '--connectors', dir]);
    expect(d.code).toBe(0);
    expect(d.stdout).toContain(`switchboard exec ${TYPE} notes list`);
    const r = await runSwitchboard(['exec', TYPE, 'notes', 'list', '--params', '{"page_size":3}', '--base-url', sim.url, '--connectors', dir], creds());
    expect(r.stderr).toBe('');
    expect((JSON.parse(r.stdout) as { data: { id: string }[] }).data.map((n) => n.id)).toEqual(sim.ids().slice(0, 3));
    const unknown = await runSwitchboard(['exec', TYPE, 'notes', 'list', '--base-url', sim.url], creds());
    expect(errorCode(unknown.stderr)).toBe('unknown_connector_type');
  });

  it('check runs its credential check', async () => {
    const r = await runSwitchboard(['check', TYPE, '--base-url', sim.url, '--connectors', dir], creds());
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, connector_type: TYPE, checked: true });
  });

  it('codegen writes its types beside the connectors directory, and --check passes after', async () => {
    const r = await runSwitchboard(['codegen', '--connectors', dir], {}, root);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^generated\/: \d+ files/m);
    const types = readFileSync(join(root, 'generated', TYPE, 'types.ts'), 'utf8');
    expect(types).toContain('export interface OutsideNotesNotesRecord');
    expect(readFileSync(join(root, 'generated', 'index.ts'), 'utf8')).toContain(`${TYPE}: {`);
    const check = await runSwitchboard(['codegen', '--check', '--connectors', dir], {}, root);
    expect(check.stdout).toMatch(/generated\/ is current/);
    // The package's own generated/ is left alone.
    expect(existsSync(join('generated', TYPE))).toBe(false);
  });

  it('sandbox says it has no simulator for it', async () => {
    const out = await runUntil(['sandbox', '--port', '0', '--connectors', dir], new RegExp(`No simulator for ${TYPE} \\(`));
    expect(out).toContain(join(dir, TYPE, 'connector.yaml'));
  });

  it('serve offers it (its execute schema is in /openapi.json)', async () => {
    const env = { SWITCHBOARD_DATABASE_URL: join(root, 'serve', 'sb.db'), SWITCHBOARD_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };
    const child = spawn(process.execPath, [SWITCHBOARD_BIN, 'serve', '--port', '0', '--connectors', dir], {
      env: { ...process.env, ...env },
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /"url":"(http:\/\/[^"]+)"[^\n]*Switchboard listening/.exec(out);
          if (m?.[1]) resolve(m[1]);
        });
        child.on('close', () => reject(new Error(`serve exited: ${out}`)));
      });
      const doc = (await (await fetch(`${url}/openapi.json`)).json()) as unknown;
      expect(JSON.stringify(doc)).toContain(TYPE);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('mcp serves it: the instances file and the directory both given with --connectors', async () => {
    const instances = join(root, 'mcp.yaml');
    writeFileSync(instances, stringify({ connectors: [{ id: 'outside', type: TYPE, base_url: sim.url, credentials: { api_key: '${OUTSIDE_KEY}' } }] }));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [SWITCHBOARD_BIN, 'mcp', '--connectors', instances, '--connectors', dir],
      env: { PATH: process.env['PATH'] ?? '', OUTSIDE_KEY: sim.apiKey },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'switchboard-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const r = await client.callTool({ name: 'execute', arguments: { connector: 'outside', entity: 'notes', action: 'list', params: { page_size: 2 } } });
      expect(r.isError).toBeFalsy();
      expect(JSON.stringify(r.structuredContent ?? r.content)).toContain(sim.ids()[0]!);
    } finally {
      await client.close();
    }
    const none = await runSwitchboard(['mcp', '--connectors', dir]);
    expect(errorCode(none.stderr)).toBe('invalid_connectors_file');
  });

  it('mcp --print-config keeps the connector directories: the printed command serves the outside connector', async () => {
    const instances = join(root, 'mcp-print.yaml');
    writeFileSync(instances, stringify({ connectors: [{ id: 'outside', type: TYPE, base_url: sim.url, credentials: { api_key: '${OUTSIDE_KEY}' } }] }));
    const printed = await runSwitchboard(['mcp', '--connectors', 'mcp-print.yaml', '--connectors', 'connectors', '--print-config'], {}, root);
    expect(printed.code, printed.stderr).toBe(0);
    const server = (JSON.parse(printed.stdout) as { mcpServers: Record<string, { command: string; args: string[]; env: Record<string, string> }> }).mcpServers[
      'switchboard'
    ]!;
    expect(server.args).toEqual([SWITCHBOARD_BIN, 'mcp', '--connectors', instances, '--connectors', dir]);
    expect(server.env['OUTSIDE_KEY']).toBe('<value of OUTSIDE_KEY>');
    const client = new Client({ name: 'switchboard-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: server.command,
        args: server.args,
        env: { PATH: process.env['PATH'] ?? '', ...server.env, OUTSIDE_KEY: sim.apiKey },
        stderr: 'pipe',
      }),
    );
    try {
      const r = await client.callTool({ name: 'execute', arguments: { connector: 'outside', entity: 'notes', action: 'list', params: { page_size: 2 } } });
      expect(r.isError).toBeFalsy();
      expect(JSON.stringify(r.structuredContent ?? r.content)).toContain(sim.ids()[0]!);
    } finally {
      await client.close();
    }
  });
});
