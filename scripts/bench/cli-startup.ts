/**
 * Cold start of the `switchboard` command: `--help` and one `exec` against the Granola simulator
 * (in another process), each as a fresh process, measured as a user meets it:
 *   - after: the bin running the built JavaScript (dist/, what `npm install` builds);
 *   - before: the TypeScript sources through tsx's loader (what the bin ran before dist/);
 *   - floor: `node -e ""`, the cost of starting Node at all.
 * Runs are interleaved; prints min and median per case and the verdict for the goal
 * (`--help` under 0.5 s). Both exec variants' outputs are checked equal.
 *
 *   npm run bench:cli-startup [-- --runs N]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { fmt, median, startSimProcess } from './lib.ts';

const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 10;
const root = fileURLToPath(new URL('../..', import.meta.url));
execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'ignore' });

const sim = await startSimProcess();
const granola = sim.connectors['granola']!;
const execArgs = ['exec', 'granola', 'notes', 'list', '--params', '{"page_size":2}', '--base-url', granola.base_url];
const env = { ...process.env, SWITCHBOARD_CREDENTIALS: JSON.stringify(granola.credentials) };

const cases: [string, string[]][] = [
  ['node floor: node -e ""', ['-e', '']],
  ['--help, built (after)', ['bin/switchboard.js', '--help']],
  ['--help, tsx sources (before)', ['--import', 'tsx', 'src/cli/main.ts', '--help']],
  ['exec, built (after)', ['bin/switchboard.js', ...execArgs]],
  ['exec, tsx sources (before)', ['--import', 'tsx', 'src/cli/main.ts', ...execArgs]],
];
const times = new Map<string, number[]>(cases.map(([name]) => [name, []]));
const outputs = new Map<string, string>();
for (let i = 0; i < runs; i++) {
  for (const [name, args] of cases) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { cwd: root, env, encoding: 'utf8' });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.status !== 0) throw new Error(`${name} failed: ${r.stderr}`);
    times.get(name)!.push(ms);
    outputs.set(name, r.stdout);
  }
}
sim.stop();
if (outputs.get('exec, built (after)') !== outputs.get('exec, tsx sources (before)')) throw new Error('exec printed different results built and from sources');

console.log(`CLI cold start, ${String(runs)} interleaved runs each (ms)\n`);
console.log('| case | min | median |');
console.log('|---|---|---|');
for (const [name, t] of times) console.log(`| ${name} | ${fmt(Math.min(...t))} | ${fmt(median(t))} |`);
const help = median(times.get('--help, built (after)')!);
const before = median(times.get('--help, tsx sources (before)')!);
console.log(`\nresults checked equal: exec built and from sources printed the same envelope`);
console.log(`goal: switchboard --help cold start median ${fmt(help)} (was ${fmt(before)} through tsx) — goal < 500 ms: ${help < 500 ? 'met' : 'NOT met'}`);
