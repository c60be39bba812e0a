/**
 * The process's worker threads (record writers, WAL checkpointers), so that a shutdown past its
 * grace period can terminate them all (serve-command.ts) whatever they are doing.
 */
import type { Worker } from 'node:worker_threads';

const live = new Set<Worker>();

/** Count a worker in until it exits. */
export function trackWorker(worker: Worker): void {
  live.add(worker);
  worker.once('exit', () => live.delete(worker));
}

/** Workers not yet exited. */
export function liveWorkers(): number {
  return live.size;
}

/**
 * Terminate every live worker; true once all have exited, false if some had not within `withinMs`
 * (a thread inside a native call that never returns cannot be terminated: only the process can end).
 */
export async function terminateWorkers(withinMs: number): Promise<boolean> {
  if (live.size === 0) return true;
  const all = Promise.allSettled([...live].map((w) => w.terminate())).then(() => true);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), withinMs);
    timer.unref();
  });
  try {
    return await Promise.race([all, late]);
  } finally {
    clearTimeout(timer);
  }
}
