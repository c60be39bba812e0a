/**
 * The suite shares the machine: no test listens on a fixed port, so two checkouts can run
 * `npm test` side by side, and neither collides with a quick start's service (3000) or sandbox
 * (4010 up, 4110 up) left running. Tests listen on port 0 and read the port back, or take a block
 * from test/helpers/ports.ts (below the ephemeral range, per worker, checked free).
 *
 * This scans the test sources for the ways a fixed port gets in: a literal port given to
 * `listen`, to `--port`/`--sandbox-port` or to a `port`/`basePort` option, a `PORT` of the
 * commands' defaults, and a command (`serve`, `sandbox`, `simulate`) started without a port, which
 * then listens on its default. The README test (test/docs/readme*.ts) runs the README's commands
 * as written and is not scanned.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SANDBOX_PORT } from '../../src/cli/sandbox-command.ts';
import { SERVICE_SANDBOX_PORT } from '../../src/cli/serve-command.ts';
import { SIMULATE_PORT } from '../../src/cli/simulate-command.ts';
import { postgresSkipNotice, PG_SKIP_REASON } from '../helpers/postgres-skip.ts';

const TEST_DIR = new URL('../', import.meta.url).pathname;
/**
 * The ports the commands listen on by default: serve 3000, the examples 4000/3001, the walk-through's
 * simulator 4008, simulate 4009, sandbox 4010 up, serve --sandbox 4110 up (each range: room for 100 connectors).
 */
const WELL_KNOWN = new Set([
  3000,
  3001,
  4000,
  4008,
  SIMULATE_PORT,
  ...Array.from({ length: 100 }, (_, i) => SANDBOX_PORT + i),
  ...Array.from({ length: 100 }, (_, i) => SERVICE_SANDBOX_PORT + i),
]);
const SKIP = [/^docs\/readme/, /^suite\/free-ports\.test\.ts$/, /^fixtures\//];

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(p);
    else if (/\.(ts|mjs|js)$/.test(entry.name)) yield p;
  }
}

/** Fixed ports in one source text: each finding names the line. */
export function fixedPorts(text: string): string[] {
  const found = new Map<number, string>(); // by line: one finding each
  const lines = text.split('\n');
  const at = (index: number): number => text.slice(0, index).split('\n').length;
  const rules: [RegExp, (port: number) => boolean][] = [
    [/\.listen\(\s*(?:\{[^}]*?\bport:\s*)?([1-9]\d{1,4})\b/g, () => true],
    [/--(?:sandbox-)?port['"`]?\s*[,=\s]\s*['"`]?([1-9]\d{1,4})\b/g, () => true],
    [/\b(?:basePort|port):\s*['"`]?([1-9]\d{1,4})\b/g, (p) => WELL_KNOWN.has(p)],
    [/\bPORT\b['"]?\s*[:=]\s*['"`]([1-9]\d{1,4})['"`]/g, (p) => WELL_KNOWN.has(p)],
  ];
  for (const [re, applies] of rules) {
    for (const m of text.matchAll(re)) {
      const port = Number(m[1]);
      if (applies(port)) found.set(at(m.index), `line ${String(at(m.index))}: ${lines[at(m.index) - 1]!.trim()}`);
    }
  }
  // A command that listens, started without a port: it takes its default.
  const portZeroEnv = /\bPORT\b['"]?\s*:\s*['"]0['"]/.test(text);
  for (const m of text.matchAll(/\[[^\][]*?['"](serve|sandbox|simulate)['"][^\][]*\]/g)) {
    const args = m[0];
    if (!/^\[\s*(?:[\w.]*(?:BIN|bin)\w*\s*,\s*)?['"](serve|sandbox|simulate)['"]/.test(args)) continue; // not a command line
    const command = m[1]!;
    // --help prints and exits: it listens on nothing.
    const hasPort = /['"]--port['"]/.test(args) || /['"]--help['"]/.test(args) || (command === 'serve' && portZeroEnv);
    const sandboxWithoutPort = command === 'serve' && /['"]--sandbox['"]/.test(args) && !/['"]--sandbox-port['"]/.test(args);
    if (!hasPort || sandboxWithoutPort)
      found.set(at(m.index), `line ${String(at(m.index))}: \`${command}\` without ${hasPort ? '--sandbox-port' : '--port'}: ${args}`);
  }
  return [...found.values()];
}

describe('tests take free ports', () => {
  it('finds the fixed ports it is meant to find', () => {
    expect(fixedPorts("await app.listen({ port: 3000, host: '127.0.0.1' });")).toHaveLength(1);
    expect(fixedPorts('server.listen(4010, cb)')).toHaveLength(1);
    expect(fixedPorts("runSwitchboard(['sandbox', '--port', '4010'])")).toHaveLength(1);
    expect(fixedPorts("startSwitchboard(['serve', '--port', '0', '--sandbox'], re)")).toHaveLength(1);
    expect(fixedPorts("runSwitchboard(['simulate', '--openapi', f])")).toHaveLength(1);
    expect(fixedPorts("spawn(process.execPath, [BIN, 'serve'], { env })")).toHaveLength(1);
    expect(fixedPorts('startSandbox({ basePort: 4110 })')).toHaveLength(1);
    expect(fixedPorts("const env = { PORT: '3000' };")).toHaveLength(1);
    // and leaves alone what listens on a free port, or names a port it never listens on
    expect(fixedPorts("app.listen({ port: 0 }); runSwitchboard(['sandbox', '--port', String(base)]); const r = { port: 8080 };")).toEqual([]);
    expect(fixedPorts("const env = { PORT: '0' }; spawn(process.execPath, [BIN, 'serve'], { env });")).toEqual([]);
    expect(fixedPorts("expect(e.message).toContain('e.g. http://127.0.0.1:4010');")).toEqual([]);
  });

  it('no test source listens on a fixed port', () => {
    const findings: string[] = [];
    for (const file of sources(TEST_DIR)) {
      const rel = relative(TEST_DIR, file);
      if (SKIP.some((re) => re.test(rel))) continue;
      for (const f of fixedPorts(readFileSync(file, 'utf8'))) findings.push(`test/${rel} ${f}`);
    }
    expect(findings).toEqual([]);
  });
});

describe('skipped PostgreSQL tests say why', () => {
  it('the end-of-run notice names the variable when it is unset, and is absent when it is set', () => {
    expect(postgresSkipNotice({})).toContain('SWITCHBOARD_TEST_POSTGRES_URL is not set');
    expect(postgresSkipNotice({ SWITCHBOARD_TEST_POSTGRES_URL: '  ' })).toContain(PG_SKIP_REASON);
    expect(postgresSkipNotice({ SWITCHBOARD_TEST_POSTGRES_URL: 'postgres://postgres@127.0.0.1:5432/test' })).toBeUndefined();
  });
});
