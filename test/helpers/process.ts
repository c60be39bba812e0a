/** Shared test helper: run a Node process to completion and collect its output. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface ProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The `switchboard` command, by absolute path (tests may run it from another directory). */
export const SWITCHBOARD_BIN = fileURLToPath(new URL('../../bin/switchboard.js', import.meta.url));

/** Run `node <args>` (from the repository root unless `cwd` is given) with extra environment variables. */
export function runNode(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<ProcessResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], ...(cwd !== undefined ? { cwd } : {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Run the `switchboard` command (bin/switchboard.js). */
export const runSwitchboard = (args: string[], env: Record<string, string> = {}, cwd?: string): Promise<ProcessResult> =>
  runNode([SWITCHBOARD_BIN, ...args], env, cwd);

/**
 * Start a long-running `switchboard` command and resolve once a line of its stdout matches
 * `ready` (no sleeping: the process says when it is ready); rejects if it exits first or the
 * deadline passes. `stop()` sends SIGTERM and waits for the exit.
 */
export function startSwitchboard(
  args: string[],
  ready: RegExp,
  options: { env?: Record<string, string>; cwd?: string; deadlineMs?: number } = {},
): Promise<{ child: ChildProcess; lines: string[]; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [SWITCHBOARD_BIN, ...args], {
    env: { ...process.env, ...(options.env ?? {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
  });
  const lines: string[] = [];
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const stop = async (): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`switchboard ${args.join(' ')} not ready within ${String(options.deadlineMs ?? 20_000)} ms; stderr: ${stderr}`));
    }, options.deadlineMs ?? 20_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      if (ready.test(line)) {
        clearTimeout(timer);
        resolve({ child, lines, stop });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`switchboard ${args.join(' ')} exited with ${String(code)} before it was ready; stderr: ${stderr}`));
    });
  });
}
