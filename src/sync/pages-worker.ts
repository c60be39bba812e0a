/**
 * The sync side of the record writer's worker (src/search/record-writer-worker.ts): the pages of
 * syncs (pages.ts) run there, on runtimes of their own, so the syncs' upstream responses, their
 * parsing and hydrated records, and the garbage they leave never reach the thread that serves
 * requests. The main thread keeps what the run must share with it: each connector's upstream
 * throttle (asked here through messages, RemoteThrottle), the run's bookkeeping (each stored
 * part is sent to it, and the next waits for its answer) and the credentials (sent, decrypted,
 * with each job).
 *
 * Messages, main → worker: {op: 'pages', id, now, connector, job, observe} (observe: report each
 * upstream call, {upstream}, for the main thread's metrics); {op: 'pages-ack', id, now}
 * after a part's bookkeeping; {op: 'pages-abort', id}; {op: 'pages-forget', connectorId} (its
 * cached runtime dropped); {op: 'throttled', n, refused?, error?},
 * the answer to an acquire. Worker → main: {id, part}; {throttle: 'acquire', n, connectorId,
 * maxWaitMs}; {throttle: 'release', n}; {throttle: 'pause', connectorId, ms}; and the job's end,
 * {id, result: null} or {id, error}.
 */
import { ConnectorRuntime } from '../engine/index.ts';
import { ThrottleRefused, type AcquireOptions, type FetchLike, type Throttle } from '../http/index.ts';
import { createUpstreamTransport } from '../http/upstream-transport.ts';
import { loadManifestFile, type LoadedManifest } from '../manifest/index.ts';
import { searchDef } from './apply.ts';
import { reportUpstreamTo } from '../observe/worker-upstream.ts';
import { syncPages, type PagesJob, type PartStored } from './pages.ts';
import type { PagesConnector, PagesHost, PagesHostOptions, ThrottledMessage } from '../search/pages-protocol.ts';

export type PagesMessage =
  | { op: 'pages'; id: number; now: number; connector: PagesConnector; job: PagesJob; observe?: boolean }
  | { op: 'pages-ack'; id: number; now: number }
  | { op: 'pages-abort'; id: number }
  | { op: 'pages-forget'; connectorId: string }
  | ThrottledMessage;

/** Runtimes kept for connectors that sync again (a minted token is kept with its runtime). */
const MAX_RUNTIMES = 1_000;

/** This module's URL: what RecordWriterOptions.pages.host names, so that the record writer's worker runs these hosts. */
export const PAGES_HOST_MODULE = import.meta.url;

export function pagesHost(o: PagesHostOptions): PagesHost {
  const manifests = new Map<string, LoadedManifest>();
  const runtimes = new Map<string, { version: string; runtime: ConnectorRuntime }>();
  const jobs = new Map<number, { controller: AbortController; acked: (() => void) | undefined }>();
  const acquires = new Map<number, { resolve: () => void; reject: (e: unknown) => void }>();
  const running = new Set<Promise<void>>();
  let seq = 0;
  const transport = 'transport' in o.fetch ? createUpstreamTransport(o.fetch.transport) : undefined;
  let fetchImpl: Promise<FetchLike> | undefined;
  const fetchOf = (): Promise<FetchLike> => {
    if (transport !== undefined) return Promise.resolve(transport.fetch);
    const { module, data } = o.fetch as { module: string; data?: unknown };
    return (fetchImpl ??= import(module).then((m: { createFetch: (data: unknown) => FetchLike | Promise<FetchLike> }) => m.createFetch(data)));
  };

  /** The main thread's throttle of a connector, asked for each request. */
  class RemoteThrottle implements Throttle {
    constructor(private readonly connectorId: string) {}
    acquire(a: AcquireOptions = {}): Promise<void> {
      const signal = a.signal;
      if (signal?.aborted) return Promise.reject(signal.reason);
      const n = ++seq;
      return new Promise<void>((resolve, reject) => {
        const onAbort = (): void => {
          acquires.delete(n);
          o.port.postMessage({ throttle: 'release', n });
          reject(signal!.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        const settled = (): void => {
          acquires.delete(n);
          signal?.removeEventListener('abort', onAbort);
        };
        acquires.set(n, {
          resolve: () => {
            settled();
            resolve();
          },
          reject: (e) => {
            settled();
            reject(e);
          },
        });
        o.port.postMessage({ throttle: 'acquire', n, connectorId: this.connectorId, maxWaitMs: a.maxWaitMs });
      });
    }
    pauseFor(ms: number): void {
      o.port.postMessage({ throttle: 'pause', connectorId: this.connectorId, ms });
    }
  }

  async function runtimeFor(c: PagesConnector): Promise<{ runtime: ConnectorRuntime; manifest: LoadedManifest }> {
    let manifest = manifests.get(c.file);
    if (manifest === undefined) {
      manifest = loadManifestFile(c.file);
      manifests.set(c.file, manifest);
    }
    const cached = runtimes.get(c.id);
    if (cached !== undefined && cached.version === c.version) return { runtime: cached.runtime, manifest };
    const runtime = new ConnectorRuntime(manifest, c.credentials, {
      fetch: await fetchOf(),
      limiter: c.throttled ? new RemoteThrottle(c.id) : null,
      authVariant: c.authVariant,
      deadlineMs: c.deadlineMs,
      ...(c.baseUrl !== undefined ? { baseUrl: c.baseUrl } : {}),
      ...(o.retry !== undefined ? { retry: o.retry } : {}),
    });
    runtimes.delete(c.id);
    runtimes.set(c.id, { version: c.version, runtime });
    if (runtimes.size > MAX_RUNTIMES) runtimes.delete(runtimes.keys().next().value!);
    return { runtime, manifest };
  }

  async function run(m: Extract<PagesMessage, { op: 'pages' }>, controller: AbortController): Promise<void> {
    o.setNow(m.now);
    const { runtime, manifest } = await runtimeFor(m.connector);
    const entity = manifest.entities.get(m.job.entity);
    if (entity?.def.sync === undefined) throw new Error(`${m.connector.file}: entity ${m.job.entity} does not sync`);
    const def = searchDef(entity);
    const connectorId = m.connector.id;
    await syncPages(runtime, entity, m.job, {
      upsert: (records) => o.upsert(connectorId, entity.name, def, records, m.job.runId),
      delete: (ids) => o.deleteRecords(connectorId, entity.name, ids),
      // The run's bookkeeping is the main thread's: the next part waits for its answer.
      stored: (part: PartStored) =>
        new Promise<void>((resolve) => {
          const job = jobs.get(m.id);
          if (job === undefined) return resolve();
          job.acked = resolve;
          o.port.postMessage({ id: m.id, part });
        }),
      signal: controller.signal,
    });
  }

  return {
    running,
    handle(m) {
      const msg = m as PagesMessage;
      switch (msg.op) {
        case 'pages': {
          if (msg.observe === true) reportUpstreamTo(o.port);
          const controller = new AbortController();
          jobs.set(msg.id, { controller, acked: undefined });
          const done = run(msg, controller).then(
            () => o.port.postMessage({ id: msg.id, result: null }),
            (e: unknown) => o.port.postMessage({ id: msg.id, error: o.toWire(e) }),
          );
          const tracked = done.finally(() => {
            jobs.delete(msg.id);
            running.delete(tracked);
          });
          running.add(tracked);
          return true;
        }
        case 'pages-ack': {
          o.setNow(msg.now);
          const job = jobs.get(msg.id);
          const acked = job?.acked;
          if (job !== undefined) job.acked = undefined;
          acked?.();
          return true;
        }
        case 'pages-abort': {
          const job = jobs.get(msg.id);
          job?.controller.abort(new Error('sync aborted'));
          // A part waiting for its bookkeeping ends too (the job then sees the abort).
          job?.acked?.();
          return true;
        }
        case 'pages-forget':
          runtimes.delete(msg.connectorId);
          return true;
        case 'throttled': {
          const a = acquires.get(msg.n);
          if (a === undefined) return true;
          if (msg.refused !== undefined) a.reject(new ThrottleRefused(msg.refused.reason, msg.refused.waitMs));
          else if (msg.error !== undefined) a.reject(Object.assign(new Error(msg.error.message), { name: msg.error.name }));
          else a.resolve();
          return true;
        }
        default:
          return false;
      }
    },
    async close() {
      for (const job of jobs.values()) {
        job.controller.abort(new Error('the sync worker is closing'));
        job.acked?.();
      }
      await Promise.allSettled([...running]);
      await transport?.close();
    },
  };
}
