/**
 * How `switchboard serve` stops (issue 37, item 13): on SIGTERM/SIGINT, or on a fatal condition
 * (its data gone: src/store/data-dir.ts), the service closes (requests in flight get the grace
 * period, SWITCHBOARD_SHUTDOWN_GRACE_MS), then every worker thread still alive is terminated and
 * the process exits. Bounded whatever a worker thread does: a close not done within the grace
 * period and SHUTDOWN_MARGIN_MS more is cut short (status 1); a worker thread that cannot be
 * terminated (stuck inside a native call, where neither terminate() nor process.exit() reach it)
 * ends with the process itself (SIGKILL) after WORKER_TERMINATE_MS. Never a process left running.
 */
import { terminateWorkers } from '../store/worker-threads.ts';

/** Past the grace period, how long closing the database and the sandbox may still take (ms). */
export const SHUTDOWN_MARGIN_MS = 1000;
/** How long terminated worker threads have to exit (ms) before the process ends itself with SIGKILL. */
export const WORKER_TERMINATE_MS = 1000;

interface Logger {
  error(obj: object, msg: string): void;
}

/** A stop(code) that closes, then exits with `code` (0 on a signal, 1 on a fatal condition); only the first call counts. */
export function serviceStopper(o: { graceMs: number; log: Logger; close: () => Promise<void> }): (code: number) => void {
  let stopping = false;
  const exit = async (code: number): Promise<never> => {
    if (!(await terminateWorkers(WORKER_TERMINATE_MS))) {
      // Written synchronously (stderr is a pipe or a file): the last thing the process says.
      process.stderr.write(
        `switchboard: a worker thread did not stop within ${String(WORKER_TERMINATE_MS)} ms of being terminated; the process ends itself (SIGKILL)\n`,
      );
      process.kill(process.pid, 'SIGKILL');
    }
    process.exit(code);
  };
  return (code: number): void => {
    if (stopping) return;
    stopping = true;
    const limit = o.graceMs + SHUTDOWN_MARGIN_MS;
    const cut = setTimeout(() => {
      o.log.error(
        { shutdown_grace_ms: o.graceMs },
        `shutdown not done within ${String(limit)} ms (the grace period and ${String(SHUTDOWN_MARGIN_MS)} ms): worker threads terminated, exiting with status 1`,
      );
      void exit(1);
    }, limit);
    void o.close().then(
      () => {
        clearTimeout(cut);
        return exit(code);
      },
      (e: unknown) => {
        clearTimeout(cut);
        o.log.error({ err: e }, 'shutdown failed');
        return exit(1);
      },
    );
  };
}
