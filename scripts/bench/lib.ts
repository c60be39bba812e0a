/** Shared helpers of the benchmarks: a simulator child process and simple statistics. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface SimProcess {
  child: ChildProcess;
  connectors: Record<string, { base_url: string; credentials: Record<string, string> }>;
  stop(): void;
}

/** Start scripts/bench/sim-process.ts in a child process and wait for its JSON line. */
export async function startSimProcess(env: Record<string, string> = {}): Promise<SimProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./sim-process.ts', import.meta.url).pathname], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const rl = createInterface({ input: child.stdout! });
  const line = await new Promise<string>((resolve, reject) => {
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`simulator process exited with ${code}`)));
  });
  const parsed = JSON.parse(line) as { connectors: SimProcess['connectors'] };
  return { child, connectors: parsed.connectors, stop: () => child.kill() };
}

export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i]!;
}

export const median = (v: number[]): number => percentile(v, 50);

export function fmt(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`;
}
