/**
 * Every benchmark at a quick size, one after the other, each in its own process: the engine
 * against a hand-written client, the service against a bare route, search against hand-written
 * SQL and a JavaScript scan, sync against the upstream's rate limit, the CLI's cold start, and
 * codegen's wall time.
 * Each prints its own verdict lines; this prints them again at the end.
 *
 *   npm run bench [-- --records N]    (N: search records; default 20,000, the full size is 1,000,000)
 */
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({ strict: false, options: { records: { type: 'string', default: '20000' } } });
const RECORDS = String(args.records);

const RUNS: { name: string; argv: string[] }[] = [
  { name: 'engine overhead', argv: ['--import', 'tsx', 'scripts/bench/engine-overhead.ts', '--iterations', '150'] },
  { name: 'service throughput', argv: ['--import', 'tsx', 'scripts/bench/service-throughput.ts', '--duration', '2', '--rounds', '5'] },
  { name: 'search', argv: ['--max-old-space-size=8192', '--import', 'tsx', 'scripts/bench/search.ts', '--records', RECORDS, '--runs', '15', '--scan-runs', '3'] },
  { name: 'sync', argv: ['--import', 'tsx', 'scripts/bench/sync.ts', '--records', '40'] },
  { name: 'cli startup', argv: ['--import', 'tsx', 'scripts/bench/cli-startup.ts', '--runs', '5'] },
];

function run(argv: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      process.stdout.write(d);
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, out }));
  });
}

const verdicts: string[] = [];
let failed = false;
for (const r of RUNS) {
  console.log(`\n=== ${r.name} ===`);
  const started = performance.now();
  const { code, out } = await run(r.argv);
  console.log(`(${r.name}: ${((performance.now() - started) / 1000).toFixed(0)} s, exit ${code})`);
  if (code !== 0) failed = true;
  verdicts.push(...out.split('\n').filter((l) => /^goal\b/i.test(l.trim())).map((l) => `${r.name}: ${l.trim()}`));
}

// Codegen: wall time of generating every manifest's output (compared, not written: --check),
// through the built command a user runs (`npx switchboard codegen --check`).
console.log('\n=== codegen ===');
const times: number[] = [];
for (let i = 0; i < 3; i++) {
  const t = performance.now();
  const { code } = await run(['bin/switchboard.js', 'codegen', '--check']);
  times.push((performance.now() - t) / 1000);
  if (code !== 0) failed = true;
}
times.sort((a, b) => a - b);
verdicts.push(`codegen: goal: codegen of all manifests < 3 s: ${times[1]! < 3 ? 'met' : 'NOT met'} (min ${times[0]!.toFixed(2)} s, median ${times[1]!.toFixed(2)} s, process start included)`);

console.log('\n=== verdicts ===');
for (const v of verdicts) console.log(v);
if (failed) process.exitCode = 1;
