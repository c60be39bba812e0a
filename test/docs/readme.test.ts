/**
 * The README cannot rot: every code block in it runs, in order, in a copy of the repository
 * (node_modules linked), exactly as a reader would run it — the set-up, both offline quick
 * starts, the library and SDK examples, the search request, the embedding example, the MCP
 * clients (local and hosted) and the walk-through that adds a fourth connector. Long-running commands (the sandbox, the service,
 * simulators) run in the background until the end. Two lines are not run: `npm install`
 * (CI has just installed) and `npm test` (this suite). The Mermaid diagram is checked for shape.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { SIMULATORS } from '../../src/sandbox/index.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

interface Block {
  lang: string;
  body: string;
}

function blocks(markdown: string): Block[] {
  const out: Block[] = [];
  const re = /^```(\w*)\n([\s\S]*?)^```$/gm;
  for (let m = re.exec(markdown); m !== null; m = re.exec(markdown)) out.push({ lang: m[1] ?? '', body: m[2] ?? '' });
  return out;
}

/**
 * Shell lines that start servers: run in the background, then wait until they are ready, as a
 * reader waits for terminal 1's output: the service's port; the sandbox's state file, written
 * once every simulator listens.
 */
const BACKGROUND: [RegExp, string][] = [
  [/^npm start -- --sandbox$/, 'wait_port 3000'],
  [/^npx switchboard sandbox$/, 'wait_sandbox data/sandbox-4010.json'],
];

function shell(body: string, i: number): string {
  const lines: string[] = [];
  for (const line of body.split('\n')) {
    const t = line.trim();
    if (t === 'npm install' || /^npm install && npm test\b/.test(t)) {
      lines.push(`# not run here: ${t}`);
      continue;
    }
    const setup = /^npm install && (npm start)\b/.exec(t);
    if (setup) {
      // The set-up command: start the service on the embedded default, check it answers, stop it.
      lines.push(`npm start > start-${i}.log 2>&1 & pid=$!; wait_port 3000; curl -sf http://127.0.0.1:3000/healthz; echo; kill -- -$pid; wait_gone $pid; wait_closed 3000`);
      continue;
    }
    const bg = BACKGROUND.find(([re]) => re.test(t));
    if (bg) {
      lines.push(`${t} > background-${i}.log 2>&1 & ${bg[1]}`);
      continue;
    }
    lines.push(line);
  }
  return lines.join('\n');
}

/** Every port the README's commands open: the service's, `simulate`'s, and each simulator of the sandbox (4010+) and of `serve --sandbox` (4110+). */
const PORTS = [3000, 3001, 4000, 4020, ...SIMULATORS.flatMap((_, i) => [4010 + i, 4110 + i])].join(' ');

function script(all: Block[]): string {
  const parts = [
    'set -eo pipefail',
    'set -m', // every background job in its own process group, so the whole group can be stopped
    // Stop every background job and wait for them to exit, so the next run finds its ports free:
    // every process of their groups (a service may outlive its npm parent while it shuts down, and
    // write its state files after its ports close), then their ports.
    'cleanup() { local groups; groups="$(jobs -p)"; for p in $groups; do kill -- -$p 2>/dev/null || true; done; wait 2>/dev/null || true; for p in $groups; do wait_gone $p || echo "process group $p still running" >&2; done; for port in ${PORTS}; do wait_closed $port || echo "port $port still open" >&2; done; }',
    'wait_gone() { for _ in $(seq 1 300); do kill -0 -- -$1 2>/dev/null || return 0; sleep 0.2; done; return 1; }',
    'trap cleanup EXIT',
    'wait_port() { for _ in $(seq 1 300); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.2; done; echo "port $1 never opened" >&2; return 1; }',
    // Ready when the state file names a live process (a previous run's file names a dead one).
    `wait_sandbox() { for _ in $(seq 1 300); do node -e 'process.kill(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).pid, 0)' "$1" 2>/dev/null && return 0; sleep 0.2; done; echo "no live sandbox in $1" >&2; return 1; }`,
    'wait_closed() { for _ in $(seq 1 100); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null || return 0; sleep 0.2; done; return 1; }',
  ];
  all.forEach((b, i) => {
    parts.push(`echo "::block ${i} ${b.lang}"`);
    if (b.lang === 'sh') parts.push(shell(b.body, i));
    else if (b.lang === 'ts') {
      writeFileSync(join(copy, `readme-block-${i}.ts`), b.body);
      // The library example reads the sandbox's Granola; the SDK example the app the hosted quick start created.
      parts.push(
        `GRANOLA_BASE_URL=http://127.0.0.1:4013 GRANOLA_API_KEY=grn_Uy7nvdpkpdpjAvGFkvDh4HhGbFgn SWITCHBOARD_CLIENT_ID="$CLIENT_ID" SWITCHBOARD_CLIENT_SECRET="$CLIENT_SECRET" INTERCOM="$INTERCOM" node --import tsx readme-block-${i}.ts`,
      );
    } else if (b.lang === 'json' && b.body.includes('"mcpServers"')) {
      // An MCP client's configuration: started as a client would (test/docs/mcp-config-check.ts).
      writeFileSync(join(copy, `readme-block-${i}.json`), b.body);
      parts.push(`node --import tsx test/docs/mcp-config-check.ts readme-block-${i}.json`);
    } else if (b.lang === 'json') {
      writeFileSync(join(copy, `readme-block-${i}.json`), b.body);
      // The execute body of the search example, sent to the Intercom connector of the quick start.
      parts.push(
        `curl -sS --fail-with-body http://127.0.0.1:3000/api/v1/integrations/connectors/$INTERCOM/execute -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' -d @readme-block-${i}.json; echo`,
      );
    } else if (b.lang !== 'mermaid') throw new Error(`README block ${i}: no runner for \`${b.lang}\` blocks`);
  });
  parts.push('echo "::done"');
  return parts.join('\n');
}

let copy = '';
const copies: string[] = [];
afterAll(() => {
  if (process.env['KEEP_README_COPY'] === undefined) for (const c of copies) rmSync(c, { recursive: true, force: true });
});

/** Run the README's script in the copy; resolves with its exit code and output. */
function runScript(env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn('bash', ['readme.sh'], { cwd: copy, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => done({ code: code ?? -1, stdout, stderr }));
  });
}

// No retry: every wait in the script is a readiness poll with a deadline, never a sleep. The
// script runs twice in the same copy, the service restarted in between (the second run starts
// it again on the same database and sandbox state), as a reader coming back the next day would.
it('every code block of the README runs as written, twice, with a service restart in between', { timeout: 600_000 }, async () => {
  copy = mkdtempSync(join(tmpdir(), 'switchboard-readme-'));
  copies.push(copy);
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const f of files) {
    mkdirSync(dirname(join(copy, f)), { recursive: true });
    cpSync(join(ROOT, f), join(copy, f));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  // What `npm install` builds (prepare): the JavaScript the `switchboard` command runs. Copied,
  // not linked, so that it finds the copy's connectors/ (the walk-through adds one).
  cpSync(join(ROOT, 'dist'), join(copy, 'dist'), { recursive: true });

  const all = blocks(README);
  expect(all.length).toBeGreaterThan(10);
  const mermaid = all.filter((b) => b.lang === 'mermaid');
  for (const m of mermaid) {
    expect(m.body.startsWith('sequenceDiagram\n')).toBe(true);
    for (const line of m.body.trim().split('\n').slice(1)) expect(line.trim()).toMatch(/^(participant \w+ as .+|\w+-{1,2}>>\w+: .+)$/);
  }
  writeFileSync(join(copy, 'readme.sh'), script(all));

  // As on a reader's machine: none of our own settings from the test environment.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(SWITCHBOARD_|PORT$|HOST$|VITEST|NODE_ENV$)/.test(k)));
  for (const round of [1, 2]) {
    const out = await runScript(env);
    writeFileSync(join(copy, `readme-${String(round)}.out`), `${out.stdout}\n--- stderr ---\n${out.stderr}`);
    const tail = `round ${String(round)}\n${out.stdout.slice(-3000)}\n--- stderr ---\n${out.stderr.slice(-3000)}`;
    expect(out.code, tail).toBe(0);
    expect(out.stdout, tail).toContain('::done');
    // What each part prints when it works.
    expect(out.stdout, tail).toContain('"status":"ok"'); // the set-up's npm start answered /healthz
    expect(out.stdout, tail).toMatch(/^ {2}page_size\s+integer\s+/m); // switchboard describe
    expect(out.stdout, tail).toMatch(/"has_more": true/); // switchboard exec against the sandbox
    expect(out.stdout, tail).toContain('secret_id=sbo_'); // the service-side OAuth dance
    expect(out.stdout, tail).toMatch(/"data":\[\{"id":"[^"]+","email":"[^"]*","role":"lead"\}/); // search over the synced contacts
    expect(out.stderr, tail).toContain('Using the simulators of the running sandbox'); // switchboard sync beside the service...
    expect(out.stderr, tail).toMatch(/^contacts: \d+ records? in \d+ pages?$/m); // ...with its progress
    expect(out.stdout, tail).toContain('search: search_hosted_only'); // the library example... or its README twin
    expect(out.stdout, tail).toMatch(/^mcp config ok: switchboard, \d+ tools, connectors granola, intercom, monday$/m); // the MCP client configuration (read-only)
    expect(out.stdout, tail).toMatch(/^54 tools: list_connectors, describe, execute, search/m); // the MCP client over stdio...
    expect(out.stdout, tail).toMatch(/^granola notes list: 30 records on this page; cut to \d+ to fit 4000 bytes/m); // ...a list cut to the budget
    expect(out.stdout, tail).toMatch(/^monday items create: one record \{"id":"\d+","name":"Follow up with Ada"/m); // ...a Monday item created
    expect(out.stdout, tail).toMatch(/^intercom \(intercom\) contacts: actions list, get, create, update, search/m); // ...Intercom contacts described
    expect(out.stdout, tail).toMatch(/^\S+ contacts search: [1-3] records/m); // the hosted MCP endpoint's search over synced contacts
    expect(out.stdout, tail).toContain('quotes simulator on http://127.0.0.1:4020'); // the walk-through
    expect(out.stdout, tail).toContain('"id": "q7"');
    expect(out.stdout, tail).toContain('{"data":[{"id":"q10","author":"Ada"},{"id":"q12","author":"Ada"},{"id":"q14","author":"Ada"}]'); // its hosted search
  }
});
