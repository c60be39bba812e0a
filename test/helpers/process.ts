/** Shared test helper: run a Node process to completion and collect its output. */
import { spawn } from 'node:child_process';

export interface ProcessResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `node <args>` from the repository root with extra environment variables. */
export function runNode(args: string[], env: Record<string, string> = {}): Promise<ProcessResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Run the `switchboard` command (bin/switchboard.js). */
export const runSwitchboard = (args: string[], env: Record<string, string> = {}): Promise<ProcessResult> => runNode(['bin/switchboard.js', ...args], env);
