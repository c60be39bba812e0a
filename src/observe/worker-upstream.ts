/**
 * Upstream calls made in the sync worker (src/sync/pages-worker.ts), reported to the main
 * thread as messages and replayed there into its observers, so the process's metrics count them.
 * Only counts and names cross: the same fields as an observation, nothing of the request.
 */
import type { MessagePort } from 'node:worker_threads';
import { addObserver, upstreamStarted, type UpstreamCallEnd, type UpstreamCallInfo } from './hooks.ts';

/** One finished upstream call of the worker. */
export interface UpstreamReport {
  info: UpstreamCallInfo;
  end: UpstreamCallEnd;
}

let reporting: MessagePort | undefined;

/** In the worker: report every upstream call to `port` (once; later calls do nothing). */
export function reportUpstreamTo(port: MessagePort): void {
  if (reporting !== undefined) return;
  reporting = port;
  addObserver({
    upstream: (info) => ({ end: (end) => port.postMessage({ upstream: { info, end } satisfies UpstreamReport }) }),
  });
}

/** In the main thread: a worker's call, as if it had been made here (marked remote: no span of its own). */
export function replayUpstream(r: UpstreamReport): void {
  upstreamStarted({ ...r.info, remote: true })?.end(r.end);
}
