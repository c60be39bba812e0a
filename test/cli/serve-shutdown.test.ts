/**
 * A service whose data goes away (issue 37, item 13), with the real `switchboard serve` process:
 * stopped and its directory removed right after, it exits (it spun forever in a worker thread's
 * mkdir); its data directory removed while it runs, it stops with a fatal, clear error (it wrote
 * on into a deleted file). Every wait is bounded by the service's own settings (the shutdown grace
 * period, the data directory check), never by a sleep.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SHUTDOWN_MARGIN_MS, WORKER_TERMINATE_MS } from '../../src/cli/serve-shutdown.ts';
import { startSwitchboard } from '../helpers/process.ts';

/** The grace period the services here run with (SWITCHBOARD_SHUTDOWN_GRACE_MS). */
const GRACE_MS = 2000;
/** The data directory check of the services here (SWITCHBOARD_DATA_DIR_CHECK_MS). */
const CHECK_MS = 200;
/**
 * The longest a stop may take: the grace period, the margin after it, the worker threads'
 * termination, and the process's own exit on a shared, loaded machine (starting Node's teardown).
 */
const STOP_BOUND_MS = GRACE_MS + SHUTDOWN_MARGIN_MS + WORKER_TERMINATE_MS + 5000;

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  // A process a failed test left running is ended (it would spin on), and its directory removed.
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sb-shutdown-'));
  dirs.push(d);
  return d;
}

/** The child's exit, or 'still running' once `ms` have passed (the child is then left to afterEach). */
function exitWithin(child: ChildProcess, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null } | 'still running'> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('still running'), ms);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

const ENV = { SWITCHBOARD_SHUTDOWN_GRACE_MS: String(GRACE_MS), SWITCHBOARD_DATA_DIR_CHECK_MS: String(CHECK_MS), SWITCHBOARD_LOG_LEVEL: 'info' };

describe('serve: a service whose data goes away', () => {
  it(
    'SIGTERM, then its working directory (and ./data) removed at once: it exits within its grace period, no worker thread left spinning',
    async () => {
      const cwd = tempDir();
      // The sync scheduler on (the default): its record writer's worker thread starts with the service.
      const s = await startSwitchboard(['serve', '--port', '0'], /Switchboard listening/, { cwd, env: ENV, deadlineMs: 60_000 });
      children.push(s.child);
      const url = /"url":"([^"]+)"/.exec(s.lines.find((l) => l.includes('Switchboard listening'))!)![1]!;
      expect((await fetch(`${url}/openapi.json`)).status).toBe(200);
      s.child.kill('SIGTERM');
      rmSync(cwd, { recursive: true, force: true });
      const exit = await exitWithin(s.child, STOP_BOUND_MS);
      expect(exit).not.toBe('still running');
      // It exited by itself (0, or 1 when its close was cut short), not by a signal.
      expect(exit).toMatchObject({ signal: null, code: expect.any(Number) });
    },
    STOP_BOUND_MS + 70_000,
  );

  it(
    'its data directory removed while it runs: a fatal, clear error in the log, then it stops with status 1',
    async () => {
      const cwd = tempDir();
      const s = await startSwitchboard(['serve', '--port', '0'], /Switchboard listening/, { cwd, env: ENV, deadlineMs: 60_000 });
      children.push(s.child);
      const fatal = new Promise<string>((resolve) =>
        s.child.stdout!.on('data', (d: Buffer) => (/"level":60/.test(d.toString()) ? resolve(d.toString()) : undefined)),
      );
      rmSync(join(cwd, 'data'), { recursive: true, force: true });
      const exit = await exitWithin(s.child, CHECK_MS + STOP_BOUND_MS);
      expect(exit).toEqual({ code: 1, signal: null });
      expect(await fatal).toMatch(
        /the database file \S*switchboard\.db \(or its data directory\) was removed under the running service: the service cannot keep its data and stops/,
      );
    },
    CHECK_MS + STOP_BOUND_MS + 70_000,
  );

  it(
    "opening the database in a working directory that was removed fails at once with a clear error (Node's recursive mkdir never returned)",
    async () => {
      const cwd = tempDir();
      mkdirSync(join(cwd, 'gone'));
      const database = new URL('../../dist/src/store/database.js', import.meta.url).href;
      const script = `
      const { rmSync } = await import('node:fs');
      process.chdir(${JSON.stringify(join(cwd, 'gone'))});
      rmSync(${JSON.stringify(join(cwd, 'gone'))}, { recursive: true });
      const { openDatabase } = await import(${JSON.stringify(database)});
      try { openDatabase('./data/switchboard.db'); console.log('opened'); } catch (e) { console.log('refused: ' + e.message); }`;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      // Bounded by the grace period too: the call either returns or it spins.
      const exit = await exitWithin(child, STOP_BOUND_MS + 10_000);
      expect(exit).toEqual({ code: 0, signal: null });
      expect(out).toMatch(/^refused: cannot create the directory \.\/data: .*ENOENT/m);
    },
    STOP_BOUND_MS + 30_000,
  );
});
