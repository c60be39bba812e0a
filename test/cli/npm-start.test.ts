/**
 * `npm start` stops on SIGTERM (as from `kill`, a process manager or a container runtime), not only
 * on Ctrl-C: npm forwards the signal to the script's process only, so the script must be that
 * process (`exec node ...`), not a shell that dies and leaves the service running orphaned.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'switchboard-npm-start-'));
const started: number[] = [];

afterAll(() => {
  for (const pid of started) {
    try {
      process.kill(pid, 'SIGKILL'); // only if the test failed and left it running
    } catch {
      // already gone
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

it('SIGTERM to `npm start` stops the service, which exits cleanly', async () => {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('SWITCHBOARD_') && k !== 'PORT') env[k] = v;
  const npm = spawn('npm', ['start', '--', '--port', '0', '--data-dir', dir], {
    cwd: ROOT,
    env: { ...env, SWITCHBOARD_SYNC_SCHEDULER: 'false', SWITCHBOARD_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => npm.once('exit', resolve));
  const listening = await new Promise<{ pid: number; url: string }>((resolve, reject) => {
    createInterface({ input: npm.stdout }).on('line', (line) => {
      if (line.includes('"Switchboard listening"')) resolve(JSON.parse(line) as { pid: number; url: string });
    });
    void exited.then((code) => reject(new Error(`npm start exited with ${String(code)} before listening`)));
  });
  started.push(listening.pid);
  expect((await fetch(`${listening.url}/healthz`)).status).toBe(200);
  npm.kill('SIGTERM');
  expect(await exited).toBe(0);
  // npm exits after its script's process: with the shell in between, the service lived on here
  expect(alive(listening.pid)).toBe(false);
  await expect(fetch(`${listening.url}/healthz`)).rejects.toThrow();
});
