/**
 * What a new user meets first: --version, describe, and errors that say what to do (a base URL
 * without its scheme, malformed credentials JSON, a busy port), and a sandbox that keeps its
 * state: fixed sample credentials, endpoints in the data directory that `exec` picks up.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SIMULATORS } from '../../src/simulator/sandbox.ts';
import { freePortBlock } from '../helpers/ports.ts';
import { runNode, runSwitchboard, startSwitchboard, SWITCHBOARD_BIN } from '../helpers/process.ts';

/** Granola's place in the sandbox's port order (the base port plus this). */
const GRANOLA_AT = SIMULATORS.findIndex((e) => e.type === 'granola');

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sb-first-run-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A port held by another listener for the duration of `fn`. */
async function withBusyPort<T>(fn: (port: number) => Promise<T>): Promise<T> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  try {
    return await fn(port);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

const errorOf = (stderr: string): { code: string; message: string; details?: Record<string, unknown> } => {
  const start = stderr.indexOf('{');
  return (JSON.parse(stderr.slice(start)) as { error: { code: string; message: string } }).error;
};

describe('discoverability', () => {
  it('--version prints the package version', async () => {
    const r = await runSwitchboard(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it('--help lists describe and the other commands', async () => {
    const r = await runSwitchboard(['--help']);
    expect(r.code).toBe(0);
    for (const c of ['describe', 'exec', 'sandbox', 'serve', 'sync', 'validate', 'codegen', 'connectors'])
      expect(r.stdout).toMatch(new RegExp(`^  ${c}\\b`, 'm'));
  });

  it('describe <type> <entity> <action> prints params with type, required and description', async () => {
    const r = await runSwitchboard(['describe', 'granola', 'notes', 'get']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}PARAM\s+TYPE\s+REQUIRED\s+DESCRIPTION$/m);
    expect(r.stdout).toMatch(/^ {2}note_id\s+string\s+yes\s+\S/m);
    expect(r.stdout).toMatch(/^ {2}include\s+"transcript"\s+/m);
  });

  it('describe <type> <entity> shows actions (search marked hosted only), record fields and search fields', async () => {
    const r = await runSwitchboard(['describe', 'granola', 'notes']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}search\s+hosted only\s+query, limit, cursor, fields$/m);
    expect(r.stdout).toMatch(/^ {2}list\s+library and hosted\s+/m);
    expect(r.stdout).toMatch(/Record fields:\n {2}FIELD\s+TYPE\s+REQUIRED/);
    expect(r.stdout).toMatch(/Search fields \(hosted search over synced records\):/);
  });

  it("describe <type> names the manifest's logo (the data URI itself in --json)", async () => {
    const r = await runSwitchboard(['describe', 'granola']);
    expect(r.stdout).toMatch(/^Logo: data:image\/svg\+xml \(inline, \d+ characters; --json prints it\)$/m);
    const j = await runSwitchboard(['describe', 'granola', '--json']);
    expect((JSON.parse(j.stdout) as { logo: string }).logo).toMatch(/^data:image\/svg\+xml;base64,/);
  });

  it('describe --json is the same information for machines', async () => {
    const r = await runSwitchboard(['describe', 'intercom', 'contacts', 'create', '--json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as {
      type: string;
      entity: string;
      name: string;
      mode: string;
      params: { name: string; type: string; required: boolean }[];
    };
    expect(out).toMatchObject({ type: 'intercom', entity: 'contacts', name: 'create', mode: 'library and hosted' });
    expect(out.params.find((p) => p.name === 'role')).toMatchObject({ required: true });
  });

  it('describe of an unknown entity lists the valid ones', async () => {
    const r = await runSwitchboard(['describe', 'granola', 'meetings']);
    expect(r.code).toBe(1);
    expect(errorOf(r.stderr)).toMatchObject({ code: 'unknown_entity', message: expect.stringContaining('entities: notes') });
  });
});

describe('errors that say what to do', () => {
  it('a base URL without its scheme: invalid_base_url with the corrected URL', async () => {
    const r = await runSwitchboard(['exec', 'granola', 'notes', 'list', '--base-url', '127.0.0.1:4010'], { SWITCHBOARD_CREDENTIALS: '{"api_key":"x"}' });
    expect(r.code).toBe(1);
    const e = errorOf(r.stderr);
    expect(e.code).toBe('invalid_base_url');
    expect(e.message).toContain('include the scheme, e.g. http://127.0.0.1:4010');
  });

  it('malformed --credentials JSON: invalid_credentials_json naming the option, with an example', async () => {
    const r = await runSwitchboard(['exec', 'granola', 'notes', 'list', '--credentials', "{api_key:'x'}"]);
    expect(r.code).toBe(1);
    const e = errorOf(r.stderr);
    expect(e.code).toBe('invalid_credentials_json');
    expect(e.message).toMatch(/^--credentials is not valid JSON .*e\.g\. --credentials '\{"api_key":"\.\.\."\}'/);
  });

  it('malformed $SWITCHBOARD_CREDENTIALS: the error names the variable', async () => {
    const r = await runSwitchboard(['exec', 'granola', 'notes', 'list'], { SWITCHBOARD_CREDENTIALS: 'api_key=x' });
    expect(errorOf(r.stderr)).toMatchObject({
      code: 'invalid_credentials_json',
      message: expect.stringMatching(/^\$SWITCHBOARD_CREDENTIALS is not valid JSON/),
    });
  });

  it('sandbox on a busy port: port_in_use with the flag to change it, no stack trace', async () => {
    await withBusyPort(async (port) => {
      const r = await runSwitchboard(['sandbox', '--port', String(port)], {}, tempDir());
      expect(r.code).toBe(1);
      const e = errorOf(r.stderr);
      expect(e.code).toBe('port_in_use');
      expect(e.message).toContain(`Port ${String(port)} is already in use`);
      expect(e.message).toContain('--port <n>');
      expect(r.stderr).not.toMatch(/\n\s+at /);
    });
  });

  it('serve on a busy port: port_in_use naming --port and PORT', async () => {
    await withBusyPort(async (port) => {
      const cwd = tempDir();
      const r = await runSwitchboard(
        ['serve', '--port', String(port)],
        { SWITCHBOARD_DATABASE_URL: join(cwd, 'sb.db'), SWITCHBOARD_LOG_LEVEL: 'silent', SWITCHBOARD_SYNC_SCHEDULER: 'false' },
        cwd,
      );
      expect(r.code).toBe(1);
      const e = errorOf(r.stderr);
      expect(e.code).toBe('port_in_use');
      expect(e.message).toContain('--port <n> or PORT=<n>');
    });
  });
});

describe('a sandbox that keeps its state', () => {
  it('prints the same sample credentials on every start, records its endpoints, and exec finds it', async () => {
    const cwd = tempDir();
    const port = await freePortBlock(SIMULATORS.length);
    const start = async (): Promise<{ connectors: Record<string, { base_url: string; credentials: Record<string, string> }> }> => {
      const s = await startSwitchboard(['sandbox', '--port', String(port)], /^}$/, { cwd });
      const printed = JSON.parse(s.lines.join('\n')) as { connectors: Record<string, { base_url: string; credentials: Record<string, string> }> };
      const state = JSON.parse(readFileSync(join(cwd, 'data', `sandbox-${String(port)}.json`), 'utf8')) as { pid: number; connectors: unknown };
      expect(state).toMatchObject({
        kind: 'sandbox',
        pid: s.child.pid,
        connectors: Object.fromEntries(Object.entries(printed.connectors).map(([t, c]) => [t, { base_url: c.base_url, credentials: c.credentials }])),
      });

      // exec beside the sandbox, with its sample credentials and no --base-url, reaches the simulator.
      const g = printed.connectors['granola'];
      const r = await runSwitchboard(
        ['exec', 'granola', 'notes', 'list', '--params', '{"page_size":2}'],
        { SWITCHBOARD_CREDENTIALS: JSON.stringify(g?.credentials) },
        cwd,
      );
      expect(r.stderr).toContain(`Using the sandbox's granola simulator at ${g?.base_url ?? ''}`);
      expect((JSON.parse(r.stdout) as { data: unknown[] }).data).toHaveLength(2);
      expect(await s.stop()).toBe(0);
      return printed;
    };
    const first = await start();
    const second = await start();
    expect(second).toEqual(first);
    expect(GRANOLA_AT).toBeGreaterThanOrEqual(0);
    expect(first.connectors['granola']?.base_url).toBe(`http://127.0.0.1:${String(port + GRANOLA_AT)}`);
    expect(first.connectors['monday']?.credentials['api_key']).toMatch(/^eyJ/);
  });

  it('exec with other credentials does not go to the sandbox', async () => {
    const cwd = tempDir();
    const port = await freePortBlock(SIMULATORS.length);
    const s = await startSwitchboard(['sandbox', '--port', String(port)], /^}$/, { cwd });
    try {
      const r = await runSwitchboard(
        ['exec', 'granola', 'notes', 'list', '--base-url', 'http://127.0.0.1:9'],
        { SWITCHBOARD_CREDENTIALS: '{"api_key":"a-real-key"}' },
        cwd,
      );
      expect(r.stderr).not.toContain("Using the sandbox's");
      expect(errorOf(r.stderr).code).toBe('upstream_unavailable');
    } finally {
      await s.stop();
    }
  });
});

describe('one data directory for every command, from any directory', () => {
  it("admin run from another directory refuses to create a second database, naming the path; --data-dir finds the service's", async () => {
    const service = tempDir();
    const elsewhere = tempDir();
    const created = await runSwitchboard(['admin', 'create-app', '--org', 'acme', '--create'], {}, service);
    expect(created.code, created.stderr).toBe(0);
    expect(existsSync(join(service, 'data', 'switchboard.db'))).toBe(true);

    const r = await runSwitchboard(['admin', 'create-app', '--org', 'acme'], {}, elsewhere);
    expect(r.code).toBe(1);
    const e = errorOf(r.stderr);
    expect(e.code).toBe('database_not_found');
    expect(e.message).toContain(`No Switchboard database at ${join(elsewhere, 'data', 'switchboard.db')}`);
    expect(e.message).toContain('--create');
    expect(existsSync(join(elsewhere, 'data'))).toBe(false);

    for (const [args, env] of [
      [['admin', 'create-app', '--org', 'acme', '--data-dir', join(service, 'data')], {}],
      [
        [
          '--data-dir',
          join(service, 'data'),
          'admin',
          'grant',
          '--client-id',
          (JSON.parse(created.stdout) as { client_id: string }).client_id,
          '--org',
          'beta',
        ],
        {},
      ],
      [['admin', 'create-app', '--org', 'acme'], { SWITCHBOARD_DATA_DIR: join(service, 'data') }],
    ] as [string[], Record<string, string>][]) {
      const ok = await runSwitchboard(args, env, elsewhere);
      expect(ok.code, ok.stderr).toBe(0);
    }
    expect(existsSync(join(elsewhere, 'data'))).toBe(false);
  });

  it('serve --data-dir keeps its database (and key) there, wherever it is started', async () => {
    const dir = join(tempDir(), 'state');
    const elsewhere = tempDir();
    const s = await startSwitchboard(['serve', '--port', '0', '--data-dir', dir], /Switchboard listening/, {
      cwd: elsewhere,
      env: { SWITCHBOARD_SYNC_SCHEDULER: 'false' },
    });
    try {
      expect(existsSync(join(dir, 'switchboard.db'))).toBe(true);
      expect(existsSync(join(dir, 'switchboard.key'))).toBe(true);
      expect(existsSync(join(elsewhere, 'data'))).toBe(false);
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });
});

describe('the sandbox from any directory, and CLI texts that say the right thing', () => {
  it('mcp --print-config gives a client config that works from another directory, reaching the sandbox through SWITCHBOARD_DATA_DIR', async () => {
    const repo = tempDir();
    const elsewhere = tempDir();
    const port = await freePortBlock(SIMULATORS.length);
    const s = await startSwitchboard(['sandbox', '--port', String(port)], /^}$/, { cwd: repo });
    try {
      const file = join(repo, 'connectors.yaml');
      writeFileSync(file, 'connectors:\n  - id: granola\n    type: granola\n    credentials:\n      api_key: ${GRANOLA_API_KEY}\n');
      const printed = await runSwitchboard(['mcp', '--connectors', 'connectors.yaml', '--read-only', '--print-config'], {}, repo);
      expect(printed.code, printed.stderr).toBe(0);
      const server = (JSON.parse(printed.stdout) as { mcpServers: Record<string, { command: string; args: string[]; env: Record<string, string> }> })
        .mcpServers['switchboard']!;
      expect(server.command).toBe(process.execPath);
      expect(server.args).toEqual([SWITCHBOARD_BIN, 'mcp', '--connectors', file, '--read-only']);
      expect(server.env).toEqual({ SWITCHBOARD_DATA_DIR: join(repo, 'data'), GRANOLA_API_KEY: '<value of GRANOLA_API_KEY>' });
      expect(printed.stdout).not.toContain('npx');

      // Started as a client starts it: from another directory, the placeholder filled in.
      const sample = (JSON.parse(s.lines.join('\n')) as { connectors: { granola: { credentials: { api_key: string } } } }).connectors.granola.credentials
        .api_key;
      const client = new Client({ name: 'first-run', version: '1.0.0' });
      await client.connect(
        new StdioClientTransport({
          command: server.command,
          args: server.args,
          cwd: elsewhere,
          env: { ...getDefaultEnvironment(), ...server.env, GRANOLA_API_KEY: sample },
          stderr: 'ignore',
        }),
      );
      try {
        const notes = (await client.callTool({
          name: 'execute',
          arguments: { connector: 'granola', entity: 'notes', action: 'list', params: { page_size: 2 } },
        })) as CallToolResult;
        expect(notes.isError, JSON.stringify(notes.content)).toBeFalsy();
        expect((notes.structuredContent as { data: unknown[] }).data).toHaveLength(2);
      } finally {
        await client.close();
      }
      expect(existsSync(join(elsewhere, 'data'))).toBe(false);

      // exec from elsewhere finds it with --data-dir; the notice names the way to choose another base URL.
      const env = { SWITCHBOARD_CREDENTIALS: JSON.stringify({ api_key: sample }) };
      const r = await runSwitchboard(['exec', 'granola', 'notes', 'list', '--params', '{"page_size":1}', '--data-dir', join(repo, 'data')], env, elsewhere);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`Using the sandbox's granola simulator at http://127.0.0.1:${String(port + GRANOLA_AT)}`);
      expect(r.stderr).toContain('pass --base-url to choose another');

      // switchboard mcp has no --base-url: its notice names the file's base_url instead.
      const m = await runSwitchboard(['mcp', '--connectors', file], { GRANOLA_API_KEY: sample }, repo);
      expect(m.stderr).toContain(`Using the sandbox's granola simulator`);
      expect(m.stderr).toContain(`set base_url of granola in ${file} to choose another`);
      expect(m.stderr).not.toContain('--base-url');

      // An unknown entity is reported without a sandbox notice first.
      const unknown = await runSwitchboard(['exec', 'granola', 'meetings', 'list'], env, repo);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr.trimStart().startsWith('{'), unknown.stderr).toBe(true);
      expect(errorOf(unknown.stderr).code).toBe('unknown_entity');
    } finally {
      await s.stop();
    }

    // The sandbox stopped: its sample key is refused, never sent to the real API.
    const sample = JSON.parse(readFileSync(join(repo, 'data', `sandbox-${String(port)}.json`), 'utf8')) as {
      connectors: { granola: { credentials: Record<string, string> } };
    };
    const stopped = await runSwitchboard(
      ['exec', 'granola', 'notes', 'list'],
      { SWITCHBOARD_CREDENTIALS: JSON.stringify(sample.connectors.granola.credentials) },
      repo,
    );
    expect(stopped.code).toBe(1);
    const e = errorOf(stopped.stderr);
    expect(e.code).toBe('sandbox_not_running');
    expect(e.message).toContain('Start it with `switchboard sandbox`');
  });

  it('bad --params JSON suggests params, not a credential; the $SWITCHBOARD_CREDENTIALS example is valid shell', async () => {
    const p = await runSwitchboard(['exec', 'granola', 'notes', 'list', '--params', '{page_size:2}'], { SWITCHBOARD_CREDENTIALS: '{"api_key":"x"}' });
    const pe = errorOf(p.stderr);
    expect(pe.code).toBe('invalid_params');
    expect(pe.message).toContain(`e.g. --params '{"page_size":2}'`);
    expect(pe.message).not.toContain('api_key');

    const c = await runSwitchboard(['exec', 'granola', 'notes', 'list'], { SWITCHBOARD_CREDENTIALS: 'api_key=x' });
    const example = /e\.g\. (.*)$/.exec(errorOf(c.stderr).message)?.[1] ?? '';
    expect(example).toBe(`export SWITCHBOARD_CREDENTIALS='{"api_key":"..."}'`);
    // Valid shell: run it and read the variable back.
    const shell = await runNode([
      '-e',
      `require('child_process').execFileSync('bash', ['-c', process.argv[1] + '; printf %s "$SWITCHBOARD_CREDENTIALS"'], { stdio: 'inherit' })`,
      example,
    ]);
    expect(JSON.parse(shell.stdout)).toEqual({ api_key: '...' });
  });
});
