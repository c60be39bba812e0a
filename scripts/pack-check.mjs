#!/usr/bin/env node
// The package as a user gets it: `npm pack`, then install the tarball into an empty project in a
// temporary directory (runtime dependencies only, from the local npm cache: --prefer-offline) and
// run it there: library mode (`connect()` against a simulator of the package's own sandbox), the
// CLI (`switchboard --version`, `connectors`, `describe`) and `switchboard serve` (/healthz, then a
// clean exit on SIGTERM). Prints each check; exits non-zero on the first that fails. CI runs it
// (.ci/run) after `npm ci`; locally: `npm run pack:check` (KEEP=1 keeps the temporary directory).
//
// better-sqlite3 compiles from source when no prebuilt binary can be downloaded (several minutes on
// a busy machine). When the repository's node_modules holds a build of the same version, it is
// offered to the consumer's install as a local prebuild (prebuild-install's
// npm_config_better_sqlite3_local_prebuilds), so the install scripts still run as they would for a
// user; a consumer that resolves another version compiles it.
// Plain JavaScript on purpose: it must run without the devDependencies' TypeScript loader.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const STEP_MS = 8 * 60_000; // the install compiles better-sqlite3 when no build can be reused
const SERVE_MS = 60_000;
const work = mkdtempSync(join(tmpdir(), 'switchboard-pack-check-'));
const started = Date.now();

/** The environment of every command run in the consumer: none of this checkout's Switchboard settings. */
function cleanEnv(extra = {}) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('SWITCHBOARD_') || k === 'PORT' || k === 'HOST' || k === 'NODE_OPTIONS' || k.startsWith('VITEST')) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

function ok(what) {
  process.stdout.write(`pack-check: ok: ${what}\n`);
}

function fail(what) {
  throw new Error(what);
}

function run(cmd, args, options = {}) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', timeout: STEP_MS, maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'], ...options });
  } catch (e) {
    fail(`${cmd} ${args.join(' ')} failed (${e.status ?? e.signal ?? e.code}):\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

function packTarball() {
  const out = run(npm, ['pack', '--json', '--pack-destination', work], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const [info] = JSON.parse(out.slice(out.indexOf('[')));
  const files = new Set(info.files.map((f) => f.path));
  for (const needed of ['bin/switchboard.js', 'dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/cli/main.js', 'package.json']) {
    if (!files.has(needed)) fail(`the tarball has no ${needed}`);
  }
  const stray = [...files].filter((f) => /^(test|node_modules|scripts|examples|data)\//.test(f) || f.endsWith('.tsbuildinfo'));
  if (stray.length > 0) fail(`the tarball holds files users do not need: ${stray.slice(0, 5).join(', ')}`);
  ok(`npm pack: ${info.filename} (${info.files.length} files, ${(info.size / 1e6).toFixed(1)} MB), dist/ built, no tests or build state`);
  return join(work, info.filename);
}

/** A local prebuild of better-sqlite3 from this checkout's build, when it has one: its env variable, or {}. */
function localPrebuild() {
  const dir = join(root, 'node_modules', 'better-sqlite3');
  const binary = join(dir, 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(binary)) return {};
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const musl = process.report?.getReport?.().header?.glibcVersionRuntime === undefined && process.platform === 'linux' ? 'musl' : '';
  const prebuilds = join(work, 'prebuilds');
  const staging = join(work, 'prebuild-staging');
  mkdirSync(join(staging, 'build', 'Release'), { recursive: true });
  execFileSync('cp', [binary, join(staging, 'build', 'Release')]);
  mkdirSync(prebuilds, { recursive: true });
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}${musl}-${process.arch}.tar.gz`;
  execFileSync('tar', ['-czf', join(prebuilds, name), '-C', staging, 'build/Release/better_sqlite3.node']);
  ok(`better-sqlite3 ${version}: this checkout's build offered as a local prebuild (${name})`);
  return { npm_config_better_sqlite3_local_prebuilds: prebuilds };
}

function install(tarball) {
  const project = join(work, 'consumer');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'pack-check-consumer', private: true, type: 'module' }, null, 2));
  const t0 = Date.now();
  run(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--omit=dev', '--foreground-scripts=false', tarball], {
    cwd: project,
    env: cleanEnv(localPrebuild()),
  });
  const installed = join(project, 'node_modules', ...pkg.name.split('/'));
  if (!existsSync(join(installed, 'dist', 'src', 'index.js'))) fail(`${pkg.name} is not installed in ${project}`);
  const dev = Object.keys(pkg.devDependencies ?? {}).filter((d) => existsSync(join(project, 'node_modules', d)));
  if (dev.some((d) => ['typescript', 'tsx', 'vitest'].includes(d))) fail(`the consumer got build tools it must run without: ${dev.join(', ')}`);
  ok(
    `installed ${pkg.name} into an empty project in ${((Date.now() - t0) / 1000).toFixed(0)} s (runtime dependencies only: no ${['typescript', 'tsx', 'vitest'].join(', ')})`,
  );
  return project;
}

function libraryMode(project) {
  const script = `
import { connect, SwitchboardError } from '${pkg.name}';
import { startSandbox } from '${pkg.name}/sandbox';
const sandbox = await startSandbox();
try {
  const g = sandbox.connectors['granola'];
  const granola = connect('granola', { credentials: g.credentials, baseUrl: g.base_url });
  const page = await granola.execute('notes', 'list', { page_size: 2 });
  const note = await granola.execute('notes', 'get', { note_id: page.data[0].id });
  let refused = '';
  try { await connect('granola', { credentials: { api_key: 'wrong' }, baseUrl: g.base_url }).execute('notes', 'list', {}); } catch (e) { if (e instanceof SwitchboardError) refused = e.code; }
  console.log(JSON.stringify({ listed: page.data.length, got: note.data.id === page.data[0].id, refused }));
} finally {
  await sandbox.close();
}
`;
  writeFileSync(join(project, 'library.mjs'), script);
  const out = run(process.execPath, ['library.mjs'], { cwd: project, env: cleanEnv() }).trim().split('\n').pop();
  const r = JSON.parse(out);
  if (r.listed !== 2 || r.got !== true || r.refused === '') fail(`library mode: unexpected result ${out}`);
  ok(`library mode: connect('granola') against the sandbox simulator listed 2 notes, got one, bad credentials gave ${r.refused}`);
}

function cli(project) {
  const bin = join(project, 'node_modules', '.bin', 'switchboard');
  if (!existsSync(bin)) fail('node_modules/.bin/switchboard is missing');
  const version = run(npm, ['exec', '--no', '--', 'switchboard', '--version'], { cwd: project, env: cleanEnv() }).trim();
  if (version !== pkg.version) fail(`switchboard --version printed "${version}", expected ${pkg.version}`);
  const connectors = run(npm, ['exec', '--no', '--', 'switchboard', 'connectors'], { cwd: project, env: cleanEnv() });
  if (!/^granola\s+notes\s/m.test(connectors)) fail(`switchboard connectors does not list granola notes:\n${connectors}`);
  const described = run(npm, ['exec', '--no', '--', 'switchboard', 'describe', 'granola'], { cwd: project, env: cleanEnv() });
  if (!described.includes('api_key') || !/\bnotes\b/.test(described)) fail(`switchboard describe granola:\n${described}`);
  ok(`CLI: npx switchboard --version (${version}), connectors (${connectors.trim().split('\n').length - 1} rows), describe granola`);
}

function serve(project) {
  return new Promise((resolve, reject) => {
    const child = spawn(join(project, 'node_modules', '.bin', 'switchboard'), ['serve', '--port', '0', '--data-dir', join(project, 'data')], {
      cwd: project,
      env: cleanEnv({ SWITCHBOARD_SYNC_SCHEDULER: 'false' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d.toString()).length > 100_000 && (stderr = stderr.slice(-50_000)));
    const exited = new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`switchboard serve did not answer within ${SERVE_MS / 1000} s; stderr: ${stderr}`));
    }, SERVE_MS);
    let seen = false;
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (seen || !line.includes('Switchboard listening')) return;
      seen = true;
      const { url } = JSON.parse(line);
      void (async () => {
        const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) });
        const body = await res.json();
        if (res.status !== 200 || body.status !== 'ok') throw new Error(`GET /healthz: ${res.status} ${JSON.stringify(body)}`);
        child.kill('SIGTERM');
        const { code, signal } = await exited;
        if (code !== 0) throw new Error(`switchboard serve exited with ${code ?? signal} on SIGTERM; stderr: ${stderr}`);
        if (!existsSync(join(project, 'data'))) throw new Error('switchboard serve wrote no data directory');
        ok(`switchboard serve: listening at ${url}, GET /healthz {"status":"ok"}, SQLite in ./data, exit 0 on SIGTERM`);
      })()
        .then(resolve, (e) => {
          child.kill('SIGKILL');
          reject(e);
        })
        .finally(() => clearTimeout(timer));
    });
    void exited.then(({ code, signal }) => {
      if (!seen) {
        clearTimeout(timer);
        reject(new Error(`switchboard serve exited (${code ?? signal}) before listening; stderr: ${stderr}`));
      }
    });
  });
}

try {
  process.stdout.write(`pack-check: ${pkg.name}@${pkg.version} in ${work}\n`);
  const project = install(packTarball());
  libraryMode(project);
  cli(project);
  await serve(project);
  process.stdout.write(`pack-check: all checks passed in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
} catch (e) {
  process.stderr.write(`pack-check: FAILED: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
} finally {
  if (process.env['KEEP'] === '1') process.stdout.write(`pack-check: kept ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
}
