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
 * maxWaitMs, bucket?}; {throttle: 'release', n}; {throttle: 'pause', connectorId, ms, bucket?}; and the job's end,
 * {id, result: null} or {id, error}.
 */
import { ConnectorRuntime } from '../engine/index.ts';
import { ThrottleRefused, type AcquireOptions, type BucketRef, type FetchLike, type Throttle } from '../http/index.ts';
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

/** What one host keeps between messages. */
interface HostState {
  o: PagesHostOptions;
  manifests: Map<string, LoadedManifest>;
  runtimes: Map<string, { version: string; runtime: ConnectorRuntime }>;
  jobs: Map<number, { controller: AbortController; acked: (() => void) | undefined }>;
  acquires: Map<number, { resolve: () => void; reject: (e: unknown) => void }>;
  running: Set<Promise<void>>;
  seq: number;
  transport: ReturnType<typeof createUpstreamTransport> | undefined;
  fetchImpl: Promise<FetchLike> | undefined;
}

export function pagesHost(o: PagesHostOptions): PagesHost {
  const state: HostState = {
    o,
    manifests: new Map(),
    runtimes: new Map(),
    jobs: new Map(),
    acquires: new Map(),
    running: new Set(),
    seq: 0,
    transport: 'transport' in o.fetch ? createUpstreamTransport(o.fetch.transport) : undefined,
    fetchImpl: undefined,
  };
  return {
    running: state.running,
    handle: (m) => handle(state, m as PagesMessage),
    close: () => close(state),
  };
}

function fetchOf(s: HostState): Promise<FetchLike> {
  if (s.transport !== undefined) return Promise.resolve(s.transport.fetch);
  const { module, data } = s.o.fetch as { module: string; data?: unknown };
  return (s.fetchImpl ??= import(module).then((m: { createFetch: (data: unknown) => FetchLike | Promise<FetchLike> }) => m.createFetch(data)));
}

/** The main thread's throttle of a connector, asked for each request. */
class RemoteThrottle implements Throttle {
  constructor(
    private readonly s: HostState,
    private readonly connectorId: string,
  ) {}
  acquire(a: AcquireOptions = {}): Promise<void> {
    const { o, acquires } = this.s;
    const signal = a.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const n = ++this.s.seq;
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
      o.port.postMessage({ throttle: 'acquire', n, connectorId: this.connectorId, maxWaitMs: a.maxWaitMs, bucket: a.bucket });
    });
  }
  pauseFor(ms: number, bucket?: BucketRef): void {
    this.s.o.port.postMessage({ throttle: 'pause', connectorId: this.connectorId, ms, bucket });
  }
}

async function runtimeFor(s: HostState, c: PagesConnector): Promise<{ runtime: ConnectorRuntime; manifest: LoadedManifest }> {
  let manifest = s.manifests.get(c.file);
  if (manifest === undefined) {
    manifest = loadManifestFile(c.file);
    s.manifests.set(c.file, manifest);
  }
  const cached = s.runtimes.get(c.id);
  if (cached !== undefined && cached.version === c.version) return { runtime: cached.runtime, manifest };
  const runtime = new ConnectorRuntime(manifest, c.credentials, {
    fetch: await fetchOf(s),
    limiter: c.throttled ? new RemoteThrottle(s, c.id) : null,
    authVariant: c.authVariant,
    deadlineMs: c.deadlineMs,
    ...(c.baseUrl !== undefined ? { baseUrl: c.baseUrl } : {}),
    ...(s.o.retry !== undefined ? { retry: s.o.retry } : {}),
  });
  s.runtimes.delete(c.id);
  s.runtimes.set(c.id, { version: c.version, runtime });
  if (s.runtimes.size > MAX_RUNTIMES) s.runtimes.delete(s.runtimes.keys().next().value!);
  return { runtime, manifest };
}

async function run(s: HostState, m: Extract<PagesMessage, { op: 'pages' }>, controller: AbortController): Promise<void> {
  const { o } = s;
  o.setNow(m.now);
  const { runtime, manifest } = await runtimeFor(s, m.connector);
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
        const job = s.jobs.get(m.id);
        if (job === undefined) return resolve();
        job.acked = resolve;
        o.port.postMessage({ id: m.id, part });
      }),
    signal: controller.signal,
  });
}

/** Start a pages job; its end (or error) is posted back under its id. */
function startJob(s: HostState, msg: Extract<PagesMessage, { op: 'pages' }>): void {
  const { o } = s;
  if (msg.observe === true) reportUpstreamTo(o.port);
  const controller = new AbortController();
  s.jobs.set(msg.id, { controller, acked: undefined });
  const done = run(s, msg, controller).then(
    () => o.port.postMessage({ id: msg.id, result: null }),
    (e: unknown) => o.port.postMessage({ id: msg.id, error: o.toWire(e) }),
  );
  const tracked = done.finally(() => {
    s.jobs.delete(msg.id);
    s.running.delete(tracked);
  });
  s.running.add(tracked);
}

/** The main thread's answer to an acquire settles it. */
function throttled(s: HostState, msg: ThrottledMessage): void {
  const a = s.acquires.get(msg.n);
  if (a === undefined) return;
  if (msg.refused !== undefined) a.reject(new ThrottleRefused(msg.refused.reason, msg.refused.waitMs));
  else if (msg.error !== undefined) a.reject(Object.assign(new Error(msg.error.message), { name: msg.error.name }));
  else a.resolve();
}

function handle(s: HostState, msg: PagesMessage): boolean {
  switch (msg.op) {
    case 'pages':
      startJob(s, msg);
      return true;
    case 'pages-ack': {
      s.o.setNow(msg.now);
      const job = s.jobs.get(msg.id);
      const acked = job?.acked;
      if (job !== undefined) job.acked = undefined;
      acked?.();
      return true;
    }
    case 'pages-abort': {
      const job = s.jobs.get(msg.id);
      job?.controller.abort(new Error('sync aborted'));
      // A part waiting for its bookkeeping ends too (the job then sees the abort).
      job?.acked?.();
      return true;
    }
    case 'pages-forget':
      s.runtimes.delete(msg.connectorId);
      return true;
    case 'throttled':
      throttled(s, msg);
      return true;
    default:
      return false;
  }
}

async function close(s: HostState): Promise<void> {
  for (const job of s.jobs.values()) {
    job.controller.abort(new Error('the sync worker is closing'));
    job.acked?.();
  }
  await Promise.allSettled([...s.running]);
  await s.transport?.close();
}
