/**
 * The README and the walk-throughs in docs/ cannot rot: every code block in them runs, in a copy
 * of the repository (node_modules linked), as a reader would run it. Each walk-through (the
 * blocks after a `<!-- walkthrough: name -->` marker, up to the next one; a file without markers
 * is one) runs in a fresh shell of its own, from the checkout, with nothing from the others but
 * what they left on disk: a reader who opens a new terminal for it. Its "terminal 1" (a block that
 * is only `npx switchboard sandbox` or `npm start -- --sandbox`) runs beside it and is kept for the
 * next walk-through that asks for the same, as a reader keeps that terminal open ("if it is not
 * running yet"); another one stops it first, as the docs say. Its other long-running commands
 * (simulators, services of its own) run in the background and are stopped when it ends.
 *
 * Ports: every walk-through runs on free ports, passed as a reader would move them: `PORT` (the
 * service; the snippets' `$SB` reads it), `--port` of the sandbox, `--sandbox-port` of the
 * service, and the variables the snippets name (QUOTES_PORT, QUOTES_SERVICE_PORT,
 * EMBEDDED_PORT), so two checkouts can run the suite side by side.
 *
 * Not run: `npm install` (CI has just installed; installing the packed package into a project
 * of one's own is tested with the package), `npm test` (this suite). Mermaid diagrams are checked
 * for shape. Everything the snippets write goes under data/: nothing is left beside the sources.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { SIMULATORS } from '../../src/simulator/sandbox.ts';
import { freePortBlock } from '../helpers/ports.ts';

const ROOT = resolve(import.meta.dirname, '../..');
/** The files whose code blocks run. */
const DOCS = ['README.md', 'docs/quick-start.md', 'docs/library.md', 'docs/mcp.md', 'docs/connector-walkthrough.md', 'docs/airbyte.md', 'docs/overview.md'];
/** The order the walk-throughs run in: those on the sandbox, then those on the service (the rest after). */
const ORDER = [
  'README-md-intro',
  'README-md-library',
  'docs-library-md-library-ts',
  'docs-mcp-md-mcp-local',
  'README-md-mcp',
  'README-md-hosted',
  'docs-quick-start-md-hosted-tour',
];
/** The package's name today (its self-reference); the docs use the published name. */
const PACKAGE = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string }).name;
const PUBLISHED = '@switchboard-oss/switchboard';

interface Block {
  lang: string;
  body: string;
}

interface Walkthrough {
  name: string;
  blocks: Block[];
  /** Its terminal 1, when it has one: the sandbox or the service with its sandbox. */
  terminal1?: string;
}

function blocks(markdown: string): Block[] {
  const out: Block[] = [];
  const re = /^```(\w*)\n([\s\S]*?)^```$/gm;
  for (let m = re.exec(markdown); m !== null; m = re.exec(markdown)) out.push({ lang: m[1] ?? '', body: (m[2] ?? '').replaceAll(PUBLISHED, PACKAGE) });
  return out;
}

/** A file's walk-throughs: the blocks before its first marker, then the blocks after each marker. */
function walkthroughs(file: string): Walkthrough[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const parts = text.split(/^<!-- walkthrough: ([\w-]+) -->$/m);
  const slug = file.replace(/\W+/g, '-');
  const out: Walkthrough[] = [{ name: `${slug}-intro`, blocks: blocks(parts[0] ?? '') }];
  for (let i = 1; i < parts.length; i += 2) out.push({ name: `${slug}-${parts[i] ?? ''}`, blocks: blocks(parts[i + 1] ?? '') });
  for (const w of out) {
    const t1 = w.blocks.findIndex((b) => b.lang === 'sh' && Object.keys(TERMINAL1).includes(b.body.trim()));
    const [t] = t1 >= 0 ? w.blocks.splice(t1, 1) : [];
    if (t !== undefined) w.terminal1 = t.body.trim();
  }
  return out.filter((w) => w.blocks.length > 0);
}

/** Terminal-1 commands, with the port overrides a reader would add. */
const TERMINAL1: Record<string, string> = {
  'npx switchboard sandbox': 'npx switchboard sandbox --port $SANDBOX_PORT',
  'npm start -- --sandbox': 'npm start -- --sandbox --sandbox-port $SERVICE_SANDBOX_PORT',
};

const poll = async (what: string, ok: () => boolean | Promise<boolean>): Promise<void> => {
  for (let i = 0; i < 1500; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`gave up waiting: ${what}`);
};
const listening = (port: number): Promise<boolean> =>
  new Promise((done) => {
    const c = connect(port, '127.0.0.1');
    c.once('connect', () => (c.destroy(), done(true)));
    c.once('error', () => done(false));
  });
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The running terminal 1: kept while the next walk-through asks for the same. */
let terminal: { command: string; child: ChildProcess; ports: number[] } | undefined;

async function stopTerminal(): Promise<void> {
  if (terminal === undefined) return;
  const { child, ports } = terminal;
  terminal = undefined;
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    process.kill(-(child.pid ?? 0), 'SIGTERM');
    await exited;
  }
  // Every process of its group gone (npm's child may outlive it while it shuts down), its ports closed.
  await poll('terminal 1 to exit', () => !alive(-(child.pid ?? 0)));
  for (const p of ports) await poll(`port ${String(p)} to close`, async () => !(await listening(p)));
}

/** Start `command` as terminal 1 (unless it runs already) and wait until it is ready, as a reader waits for its output. */
async function startTerminal(command: string, env: NodeJS.ProcessEnv, ports: Record<string, number>, log: string): Promise<void> {
  if (terminal?.command === command && terminal.child.exitCode === null) return;
  await stopTerminal();
  const since = Date.now();
  const out = openSync(join(copy, '.readme-test', log), 'w');
  const child = spawn('bash', ['-c', TERMINAL1[command] ?? command], { cwd: copy, env, stdio: ['ignore', out, out], detached: true });
  const sandbox = command === 'npx switchboard sandbox';
  const first = sandbox ? (ports['SANDBOX_PORT'] ?? 0) : (ports['SERVICE_SANDBOX_PORT'] ?? 0);
  terminal = { command, child, ports: [...(sandbox ? [] : [ports['PORT'] ?? 0]), ...SIMULATORS.map((_, i) => first + i)] };
  const exited = (): boolean => child.exitCode !== null;
  // Ready: the service's port answers; the sandbox's state file is written anew (once every simulator listens).
  const state = join(copy, 'data', `sandbox-${String(first)}.json`);
  await poll(`${command} to be ready (log: ${log})`, async () => {
    if (exited()) throw new Error(`${command} exited: ${readFileSync(join(copy, '.readme-test', log), 'utf8').slice(-2000)}`);
    if (!sandbox) return listening(ports['PORT'] ?? 0);
    try {
      return statSync(state).mtimeMs >= since;
    } catch {
      return false;
    }
  });
}

function shell(body: string, at: string): string {
  const lines: string[] = [];
  for (const line of body.split('\n')) {
    const t = line.trim();
    if (/^npm install( && npm test\b| <)/.test(t) || t === 'npm install') {
      lines.push(`# not run here: ${t}`);
      continue;
    }
    if (/^npm install && npm start\b/.test(t)) {
      // The set-up command: start the service on its port, check it answers, stop it.
      lines.push(
        `npm start > .readme-test/${at}.log 2>&1 & pid=$!; wait_port $PORT; curl -sf http://127.0.0.1:$PORT/healthz; echo; kill -- -$pid; wait_gone $pid; wait_closed $PORT`,
      );
      continue;
    }
    lines.push(line);
  }
  return lines.join('\n');
}

function script(w: Walkthrough, ports: string): string {
  const parts = [
    'set -eo pipefail',
    'set -m', // every background job in its own process group, so the whole group can be stopped
    // Stop every background job and wait for them to exit, so the next walk-through finds its ports
    // free: every process of their groups (a service may outlive its npm parent while it shuts
    // down, and write its state files after its ports close), then their ports.
    `cleanup() { local groups; groups="$(jobs -p)"; for p in $groups; do kill -- -$p 2>/dev/null || true; done; wait 2>/dev/null || true; for p in $groups; do wait_gone $p || echo "process group $p still running" >&2; done; for port in ${ports}; do wait_closed $port || echo "port $port still open" >&2; done; }`,
    'wait_gone() { for _ in $(seq 1 300); do kill -0 -- -$1 2>/dev/null || return 0; sleep 0.2; done; return 1; }',
    'trap cleanup EXIT',
    'wait_port() { for _ in $(seq 1 300); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.2; done; echo "port $1 never opened" >&2; return 1; }',
    'wait_closed() { for _ in $(seq 1 100); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null || return 0; sleep 0.2; done; return 1; }',
  ];
  w.blocks.forEach((b, i) => {
    const at = `${w.name}-${String(i)}`;
    parts.push(`echo "::block ${at} ${b.lang}"`);
    if (b.lang === 'sh') parts.push(shell(b.body, at));
    else if (b.lang === 'ts') {
      writeFileSync(join(copy, '.readme-test', `${at}.ts`), b.body);
      // The README's install example reads Granola's key and address from the environment: the running sandbox's.
      const granola = w.name.startsWith('README') ? 'GRANOLA_API_KEY=grn_Uy7nvdpkpdpjAvGFkvDh4HhGbFgn GRANOLA_BASE_URL=$(sandbox_url granola) ' : '';
      parts.push(`${granola}node --import tsx .readme-test/${at}.ts`);
    } else if (b.lang === 'json' && b.body.includes('"mcpServers"')) {
      // An MCP client's configuration: started as a client would (test/docs/mcp-config-check.ts).
      writeFileSync(join(copy, '.readme-test', `${at}.json`), b.body);
      parts.push(`node --import tsx test/docs/mcp-config-check.ts .readme-test/${at}.json`);
    } else if (b.lang === 'json') {
      writeFileSync(join(copy, '.readme-test', `${at}.json`), b.body);
      // An execute body (the search example), sent to the Intercom connector of the walk-through.
      parts.push(
        `curl -sS --fail-with-body $SB/api/v1/integrations/connectors/$INTERCOM/execute -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' -d @.readme-test/${at}.json; echo`,
      );
    } else if (b.lang !== 'mermaid') throw new Error(`${w.name} block ${String(i)}: no runner for \`${b.lang}\` blocks`);
  });
  parts.push(`echo "::done ${w.name}"`);
  return parts.join('\n');
}

let copy = '';
const copies: string[] = [];
afterAll(async () => {
  await stopTerminal().catch(() => undefined);
  if (process.env['KEEP_README_COPY'] === undefined) for (const c of copies) rmSync(c, { recursive: true, force: true });
});

/** Run one walk-through's script in the copy, in a fresh shell; resolves with its exit code and output. */
function runScript(file: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn('bash', [file], { cwd: copy, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => done({ code: code ?? -1, stdout, stderr }));
  });
}

// No retry: every wait in the scripts is a readiness poll with a deadline, never a sleep. The
// walk-throughs run twice in the same copy, every server stopped in between (the second round
// starts them again on the same database and sandbox state), as a reader coming back the next day would.
it(
  'every code block of the README and of the walk-throughs in docs/ runs as written, each walk-through in a fresh shell on free ports, twice',
  { timeout: 2_400_000 },
  async () => {
    copy = mkdtempSync(join(tmpdir(), 'switchboard-readme-'));
    copies.push(copy);
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
    for (const f of files) {
      mkdirSync(dirname(join(copy, f)), { recursive: true });
      cpSync(join(ROOT, f), join(copy, f));
    }
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
    // What `npm install` builds (prepare): the JavaScript the `switchboard` command runs. Copied,
    // not linked, so that it finds the copy's connectors/.
    cpSync(join(ROOT, 'dist'), join(copy, 'dist'), { recursive: true });
    mkdirSync(join(copy, '.readme-test'));
    const before = readdirSync(copy).sort();

    const all = DOCS.flatMap(walkthroughs);
    expect(all.map((w) => w.name)).toEqual(
      expect.arrayContaining([
        'README-md-library',
        'README-md-hosted',
        'README-md-mcp',
        'docs-quick-start-md-hosted-tour',
        'docs-connector-walkthrough-md-connector',
      ]),
    );
    for (const m of all.flatMap((w) => w.blocks).filter((b) => b.lang === 'mermaid')) {
      expect(m.body.startsWith('sequenceDiagram\n')).toBe(true);
      for (const line of m.body.trim().split('\n').slice(1)) expect(line.trim()).toMatch(/^(participant \w+ as .+|\w+-{1,2}>>\w+: .+)$/);
    }

    // Free ports: the service, the two sandboxes (a block each), the walk-through's own servers.
    const port = await freePortBlock(1);
    const sandboxPort = await freePortBlock(SIMULATORS.length);
    const serviceSandboxPort = await freePortBlock(SIMULATORS.length);
    const own = await freePortBlock(3);
    const ports = {
      PORT: port,
      SANDBOX_PORT: sandboxPort,
      SERVICE_SANDBOX_PORT: serviceSandboxPort,
      QUOTES_PORT: own,
      QUOTES_SERVICE_PORT: own + 1,
      EMBEDDED_PORT: own + 2,
    };
    // The walk-throughs' own background jobs: checked closed when each ends (terminal 1 is the test's).
    const every = [own, own + 1, own + 2].join(' ');
    const rank = (w: Walkthrough): number => (ORDER.includes(w.name) ? ORDER.indexOf(w.name) : ORDER.length);
    const runnable = all.filter((w) => w.blocks.some((b) => b.lang !== 'mermaid')).sort((a, b) => rank(a) - rank(b));
    for (const w of runnable) writeFileSync(join(copy, '.readme-test', `${w.name}.sh`), script(w, every));

    // As on a reader's machine: none of our own settings from the test environment; the ports moved as a reader moves them.
    const env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(SWITCHBOARD_|PORT$|HOST$|VITEST|NODE_ENV$|SB$|QS$)/.test(k))),
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    };
    for (const round of [1, 2]) {
      let stdout = '';
      let stderr = '';
      for (const w of runnable) {
        if (w.terminal1 !== undefined) await startTerminal(w.terminal1, env, ports, `${w.name}-terminal1-${String(round)}.log`);
        else if (w.name === 'README-md-intro') await stopTerminal(); // the set-up starts the service on its port
        const out = await runScript(join('.readme-test', `${w.name}.sh`), env);
        writeFileSync(join(copy, '.readme-test', `${w.name}-${String(round)}.out`), `${out.stdout}\n--- stderr ---\n${out.stderr}`);
        const tail = `round ${String(round)}, ${w.name}\n${out.stdout.slice(-3000)}\n--- stderr ---\n${out.stderr.slice(-3000)}`;
        expect(out.code, tail).toBe(0);
        expect(out.stdout, tail).toContain(`::done ${w.name}`);
        stdout += out.stdout;
        stderr += out.stderr;
      }
      await stopTerminal();
      const tail = `round ${String(round)}: the outputs are in ${copy}/.readme-test (KEEP_README_COPY=1 keeps them)`;
      // What each part prints when it works.
      expect(stdout, tail).toContain('"status":"ok"'); // the set-up's npm start answered /healthz
      expect(stdout, tail).toMatch(/^ {2}page_size\s+integer\s+/m); // switchboard describe
      expect(stdout, tail).toMatch(/"has_more": true/); // switchboard exec against the sandbox
      expect(stderr, tail).toContain(
        `Using the sandbox's granola simulator at http://127.0.0.1:${String(sandboxPort + SIMULATORS.findIndex((s) => s.type === 'granola'))}`,
      ); // ...on the moved port, saying which
      expect(stdout, tail).toMatch(/^\d+ notes, more: true$/m); // the README's install example, typed
      expect(stdout, tail).toContain('"mcpServers"'); // the README's MCP: print-config
      expect(stdout, tail).toContain('secret_id=sbo_'); // the service-side OAuth dance
      expect(stdout, tail).toMatch(/"data":\[\{"id":"[^"]+","email":"[^"]*","role":"lead"\}/); // search over the synced contacts
      expect(stderr, tail).toContain('Using the simulators of the running sandbox'); // switchboard sync beside the service...
      expect(stderr, tail).toMatch(/^contacts: \d+ records? in \d+ pages?$/m); // ...with its progress
      expect(stdout, tail).toMatch(/"result":\{"tools":\[/); // hosted MCP over curl, with its Accept header
      expect(stdout, tail).toContain('search_hosted_only'); // the library example
      expect(stdout, tail).toMatch(/^mcp config ok: switchboard, \d+ tools, connectors granola, intercom, monday$/m); // the MCP client configuration (read-only)
      expect(stdout, tail).toMatch(/^54 tools: list_connectors, describe, execute, search/m); // the MCP client over stdio...
      expect(stdout, tail).toMatch(/^granola notes list: 30 records on this page; cut to \d+ to fit 4000 bytes/m); // ...a list cut to the budget
      expect(stdout, tail).toMatch(/^monday items create: one record \{"id":"\d+","name":"Follow up with Ada"/m); // ...a Monday item created
      expect(stdout, tail).toMatch(/^intercom \(intercom\) contacts: actions list, get, create, update, search/m); // ...Intercom contacts described
      expect(stdout, tail).toMatch(/^\S+ contacts search: [1-3] records/m); // the hosted MCP endpoint's search over synced contacts
      expect(stdout, tail).toContain(`quotes simulator on http://127.0.0.1:${String(ports.QUOTES_PORT)}`); // the walk-through, on its moved port
      expect(stdout, tail).toContain('"id": "q7"');
      expect(stdout, tail).toContain('{"data":[{"id":"q10","author":"Ada"},{"id":"q12","author":"Ada"},{"id":"q14","author":"Ada"}]'); // its hosted search
      // Nothing written beside the sources: only under data/ (and this test's own .readme-test/).
      expect(
        readdirSync(copy)
          .sort()
          .filter((f) => f !== 'data'),
      ).toEqual(before.filter((f) => f !== 'data'));
    }
  },
);
