/**
 * A sync's record writes to a SQLite file or a PostgreSQL database, in a worker thread with a
 * connection (a pool, on PostgreSQL) of its own (record-writer-worker.ts runs a RecordStore there).
 *
 * better-sqlite3 runs every statement synchronously on the thread that calls it. With the writes
 * on the service's main thread, 100 syncs storing and indexing about 480 records/s kept that
 * thread busy a third of the time, and a request waited behind their writes: an execute's p50
 * went from 3.4 to 30 ms while they ran, and to 2.8 ms with the writes left out (issue 25's fleet
 * bench). Here the records are cloned to the worker, which projects, hashes, indexes and writes
 * them; the main thread only waits for the answer. On PostgreSQL the statements do not block the
 * thread, but projecting and indexing the records does (JavaScript): there too it is the worker's.
 *
 * On SQLite each call is answered in the order it was made (on PostgreSQL, up to `connections`
 * run at once). On SQLite a page is written in parts of `partRecords`
 * records, each its own transaction, so the worker never holds the database's write lock for
 * long, and before each part it lets the main connection's writes (checkpoints, leases, the
 * API's) that are waiting for the lock go first (Database.writeGate, up to MAIN_WRITES_FIRST_MS),
 * which are woken when its part ends: they wait at most one part.
 * SQLite transactions begin IMMEDIATE (database.ts), so a transaction that reads before it
 * writes cannot fail because the other connection wrote in between. A call not answered within
 * `deadlineMs` fails, and its worker is terminated; a worker that fails or exits fails its
 * pending calls, and the next call starts a new one.
 */
import { observing } from '../observe/hooks.ts';
import { replayUpstream, type UpstreamReport } from '../observe/worker-upstream.ts';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { trackWorker } from '../store/worker-threads.ts';
import { ERROR_CODES, SwitchboardError, type ErrorCode } from '../errors/index.ts';
import { WORKER_HOLDING } from '../store/database.ts';
import type { ChangeCounts } from './changes.ts';
import { ThrottleRefused, type BucketRef, type RetryPolicy, type Throttle } from '../http/index.ts';
import type { PagesConnector, PagesFetch, ThrottledMessage } from './pages-protocol.ts';
import type { SearchEntityDef } from './query.ts';
import { recordsWithinDepth } from './record-depth.ts';

/** Records per transaction in the worker (see the module's comment). */
export const RECORD_WRITER_PART_RECORDS = 5;
/** Longest the worker waits for the main connection's writes before its next part (ms): they cannot hold it back for good. */
export const MAIN_WRITES_FIRST_MS = 50;
/** A write not answered within this many ms fails and its worker is terminated (queue time included). */
export const RECORD_WRITE_DEADLINE_MS = 60_000;

export interface RecordWriterOptions {
  /** The SQLite file (not ':memory:': the worker opens it on a connection of its own); or */
  file?: string;
  /**
   * a PostgreSQL database: the worker opens a pool of its own, of `connections` connections, and
   * runs that many writes at once (the calls of one sync come one after another).
   */
  postgres?: { url: string; schema?: string; connections: number };
  cursorSecret: string | Buffer;
  tombstoneRetentionMs?: number;
  /** The store's clock; each call carries its value at the call. Default Date.now. */
  now?: () => number;
  partRecords?: number;
  /** The main connection's Database.writeGate: the worker lets its writes go first. */
  writeGate?: Int32Array;
  deadlineMs?: number;
  /** A worker that failed, exited or was terminated; default: ignored (the next call starts a new one). */
  onError?: (e: Error) => void;
  /**
   * Make the worker the sync worker too (pages(), src/sync/pages-worker.ts): the URL of the
   * module whose pagesHost runs the jobs there (pages-protocol.ts), the upstream transport it
   * builds (or the module that makes one), and the runtimes' retry policy.
   */
  pages?: { host: string; fetch: PagesFetch; retry?: Partial<RetryPolicy> | undefined };
}

/** A sync's pages not heard of, either way, for this long (ms): the worker is taken for stuck and replaced (the run fails and is retried). */
export const PAGES_SILENCE_MS = 300_000;

/** A write the worker runs (the message, less its id and clock). */
export type RecordWriteOp =
  | { op: 'upsert'; connectorId: string; entity: string; def: SearchEntityDef; records: Record<string, unknown>[]; syncRun?: string | undefined }
  | { op: 'deleteMissing'; connectorId: string; entity: string; syncRun: string }
  | { op: 'deleteRecords'; connectorId: string; entity: string; ids: string[] };

/** An error as it crosses from the worker: enough to rebuild a SwitchboardError. */
export interface WireError {
  name: string;
  message: string;
  code?: string;
  details?: Record<string, unknown>;
}

export function toWire(e: unknown): WireError {
  if (e instanceof SwitchboardError) return { name: e.name, message: e.message, code: e.code, details: e.details };
  const err = e instanceof Error ? e : new Error(String(e));
  const code = (err as { code?: unknown }).code;
  return { name: err.name, message: err.message, ...(typeof code === 'string' ? { code } : {}) };
}

export function fromWire(w: WireError): Error {
  if (w.name === 'SwitchboardError' && w.code !== undefined && Object.hasOwn(ERROR_CODES, w.code))
    return new SwitchboardError(w.code as ErrorCode, w.message, { details: w.details ?? {} });
  const e = new Error(w.message);
  e.name = w.name;
  if (w.code !== undefined) (e as { code?: string }).code = w.code;
  return e;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
  worker: Worker;
  /** A sync's pages: its parts' bookkeeping, and the deadline restarted at each message. */
  pages?: { stored: (part: never) => Promise<void>; rearm: () => void; failed?: Error };
}

/** A connector whose pages run in the worker: its main-thread throttle, and the acquires in flight. */
interface Throttled {
  throttle: Throttle;
  acquires: Map<number, AbortController>;
}

/** The worker's entry: plain JavaScript from dist/, or the TypeScript source through tsx's loader (tests, `npm run dev`). */
function workerCode(): string {
  const source = import.meta.url.endsWith('.ts');
  const entry = new URL(source ? './record-writer-worker.ts' : './record-writer-worker.js', import.meta.url).href;
  return source ? `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(entry)}); })` : `import(${JSON.stringify(entry)})`;
}

export class RecordWriter {
  readonly #options: RecordWriterOptions;
  readonly #now: () => number;
  readonly #deadlineMs: number;
  #worker: Worker | undefined;
  readonly #pending = new Map<number, Pending>();
  #next = 0;
  #closed = false;
  /** Throttles of the connectors whose pages run in the worker, by connector id. */
  readonly #throttles = new Map<string, Throttled>();
  /** Workers started so far (a failed one is replaced on the next call). */
  workersStarted = 0;
  /** Sync pages jobs (one entity of one run each) sent to the worker so far. */
  pagesRun = 0;

  constructor(options: RecordWriterOptions) {
    if (options.postgres === undefined && (options.file === undefined || options.file === ':memory:' || options.file === ''))
      throw new Error('RecordWriter needs a SQLite file or a PostgreSQL URL: an in-memory database cannot be opened by a second connection');
    // The file by absolute path, taken now: the worker opens it whatever the working directory becomes.
    this.#options = options.file === undefined ? options : { ...options, file: resolve(options.file) };
    this.#now = options.now ?? Date.now;
    this.#deadlineMs = options.deadlineMs ?? RECORD_WRITE_DEADLINE_MS;
  }

  upsert(connectorId: string, entity: string, def: SearchEntityDef, records: Record<string, unknown>[], syncRun?: string): Promise<ChangeCounts> {
    // Deep values are cut before the hand-off: structured clone overflows the stack on them (record-depth.ts).
    return this.#call({ op: 'upsert', connectorId, entity, def, records: recordsWithinDepth(records), syncRun }) as Promise<ChangeCounts>;
  }

  deleteMissing(connectorId: string, entity: string, syncRun: string): Promise<number> {
    return this.#call({ op: 'deleteMissing', connectorId, entity, syncRun }) as Promise<number>;
  }

  deleteRecords(connectorId: string, entity: string, ids: string[]): Promise<number> {
    return this.#call({ op: 'deleteRecords', connectorId, entity, ids }) as Promise<number>;
  }

  /** Start the worker now rather than at the first call (a service that will sync: its start-up is not a first run's wait). */
  warm(): void {
    if (!this.#closed) this.#worker ??= this.#start();
  }

  /** Whether the worker also runs syncs' pages (options.pages). */
  get runsPages(): boolean {
    return this.#options.pages !== undefined;
  }

  /**
   * Run one entity's pages of a sync in the worker (src/sync/pages-worker.ts): it fetches,
   * hydrates and stores them; `stored` runs here after each part (the next waits for it), and
   * the connector's upstream requests wait for `throttle` here. Resolves when the pages are done;
   * rejects with the job's error, or when `signal` aborts it. The job and its parts are the sync
   * module's plain data (src/sync/pages.ts), carried as they are.
   */
  pages<Job, Part>(connector: PagesConnector, job: Job, stored: (part: Part) => Promise<void>, throttle: Throttle | null, signal?: AbortSignal): Promise<void> {
    if (this.#options.pages === undefined) return Promise.reject(new Error('this record writer does not run syncs'));
    if (throttle !== null) this.#throttles.set(connector.id, { throttle, acquires: new Map() });
    this.pagesRun++;
    // While something observes upstream calls here, the worker reports its own (upstream messages).
    const job_ = this.#call({ op: 'pages', connector, job, observe: observing } as never, stored);
    const onAbort = (): void => {
      const worker = this.#worker;
      const id = this.#jobIds.get(job_);
      if (worker !== undefined && id !== undefined) worker.postMessage({ op: 'pages-abort', id });
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted === true) onAbort();
    return job_.finally(() => {
      signal?.removeEventListener('abort', onAbort);
      this.#jobIds.delete(job_);
      const t = this.#throttles.get(connector.id);
      if (t === undefined) return;
      for (const a of t.acquires.values()) a.abort();
      this.#throttles.delete(connector.id);
    }) as Promise<void>;
  }

  /** Drop the worker's runtime of a connector (deleted, or its credentials replaced), with the credentials it holds. */
  forget(connectorId: string): void {
    if (this.#options.pages !== undefined) this.#worker?.postMessage({ op: 'pages-forget', connectorId });
  }

  /** A job's message id, by its promise (to abort it). */
  readonly #jobIds = new Map<Promise<unknown>, number>();

  /** An acquire of a connector's throttle asked by the worker: answered once the throttle answers. */
  #acquire(worker: Worker, m: { n: number; connectorId: string; maxWaitMs?: number; bucket?: BucketRef }): void {
    const t = this.#throttles.get(m.connectorId);
    const answer = (a: Omit<ThrottledMessage, 'op' | 'n'> = {}): void => worker.postMessage({ op: 'throttled', n: m.n, ...a });
    if (t === undefined) return answer({ error: { name: 'Error', message: 'the sync has ended' } });
    const controller = new AbortController();
    t.acquires.set(m.n, controller);
    t.throttle
      .acquire({
        signal: controller.signal,
        ...(m.maxWaitMs !== undefined ? { maxWaitMs: m.maxWaitMs } : {}),
        ...(m.bucket !== undefined ? { bucket: m.bucket } : {}),
      })
      .then(
        () => {
          t.acquires.delete(m.n);
          if (!controller.signal.aborted) answer();
        },
        (e: unknown) => {
          t.acquires.delete(m.n);
          if (controller.signal.aborted) return;
          answer(
            e instanceof ThrottleRefused
              ? { refused: { reason: e.reason, waitMs: e.waitMs } }
              : { error: { name: (e as Error).name ?? 'Error', message: (e as Error).message ?? String(e) } },
          );
        },
      );
  }

  /** Let the worker finish what it was asked, close its connection and exit (terminated after `deadlineMs`). */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker === undefined) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => void worker.terminate(), this.#deadlineMs);
      worker.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      worker.postMessage({ op: 'close' });
    });
  }

  #start(): Worker {
    const o = this.#options;
    const worker = new Worker(workerCode(), {
      eval: true,
      workerData: {
        file: o.file,
        postgres: o.postgres,
        cursorSecret: o.cursorSecret,
        tombstoneRetentionMs: o.tombstoneRetentionMs,
        partRecords: o.partRecords ?? RECORD_WRITER_PART_RECORDS,
        writeGate: o.writeGate,
        mainFirstMs: MAIN_WRITES_FIRST_MS,
        pages: o.pages,
      },
    });
    // The calls waiting for it keep the process alive, not the worker itself.
    worker.unref();
    trackWorker(worker);
    worker.on(
      'message',
      (m: {
        id: number;
        result?: unknown;
        error?: WireError;
        part?: unknown;
        throttle?: 'acquire' | 'release' | 'pause';
        n?: number;
        connectorId?: string;
        maxWaitMs?: number;
        ms?: number;
        bucket?: BucketRef;
        upstream?: UpstreamReport;
      }) => {
        if (m.upstream !== undefined) {
          replayUpstream(m.upstream);
          return;
        }
        if (m.throttle !== undefined) {
          if (m.throttle === 'acquire') this.#acquire(worker, m as { n: number; connectorId: string; maxWaitMs?: number; bucket?: BucketRef });
          else if (m.throttle === 'pause') this.#throttles.get(m.connectorId!)?.throttle.pauseFor(m.ms!, m.bucket);
          else for (const t of this.#throttles.values()) t.acquires.get(m.n!)?.abort();
          return;
        }
        const p = this.#pending.get(m.id);
        if (p === undefined) return;
        if (m.part !== undefined) {
          // A part stored by a sync's pages: its bookkeeping here, then the worker goes on.
          const pages = p.pages!;
          pages.rearm();
          if (pages.failed !== undefined) return;
          const part = m.part;
          void pages.stored(part as never).then(
            () => {
              pages.rearm();
              worker.postMessage({ op: 'pages-ack', id: m.id, now: this.#now() });
            },
            (e: unknown) => {
              // The bookkeeping failed (the lease is lost, the connector deleted): the job stops, and
              // fails with this error once the worker has ended it, its writes in flight included (a
              // deleted connector's records are removed after them, see SyncEngine.runOnce).
              pages.failed ??= e instanceof Error ? e : new Error(String(e));
              worker.postMessage({ op: 'pages-abort', id: m.id });
            },
          );
          return;
        }
        this.#pending.delete(m.id);
        clearTimeout(p.timer);
        if (p.pages?.failed !== undefined) p.reject(p.pages.failed);
        else if (m.error !== undefined) p.reject(fromWire(m.error));
        else p.resolve(m.result);
      },
    );
    worker.on('error', (e) => this.#fail(worker, e));
    worker.on('exit', (code) => this.#fail(worker, new Error(`the record writer's worker exited (code ${code})`)));
    this.workersStarted++;
    return worker;
  }

  #fail(worker: Worker, e: Error): void {
    if (this.#worker === worker) this.#worker = undefined;
    // A worker gone in the middle of a part would leave the main connection's writes waiting for its end.
    if (this.#options.writeGate !== undefined) {
      Atomics.store(this.#options.writeGate, WORKER_HOLDING, 0);
      Atomics.notify(this.#options.writeGate, WORKER_HOLDING);
    }
    let failed = false;
    for (const [id, p] of this.#pending) {
      if (p.worker !== worker) continue;
      this.#pending.delete(id);
      clearTimeout(p.timer);
      p.reject(e);
      failed = true;
    }
    if (failed) this.#options.onError?.(e);
  }

  #call(op: RecordWriteOp, stored?: (part: never) => Promise<void>): Promise<unknown> {
    if (this.#closed) return Promise.reject(new Error('the record writer is closed'));
    const worker = (this.#worker ??= this.#start());
    const id = ++this.#next;
    // A write has deadlineMs in all; a sync's pages run for as long as the sync, so their deadline
    // is a silence: PAGES_SILENCE_MS without a message either way.
    const limit = stored !== undefined ? Math.max(this.#deadlineMs, PAGES_SILENCE_MS) : this.#deadlineMs;
    const expire = (): void => {
      this.#fail(worker, new Error(`the record writer did not answer within ${limit} ms`));
      void worker.terminate();
    };
    const promise = new Promise((resolve, reject) => {
      const pending: Pending = { resolve, reject, timer: setTimeout(expire, limit), worker };
      if (stored !== undefined)
        pending.pages = {
          stored,
          rearm: () => {
            // Not once the job has ended (a part's bookkeeping may finish after an abort ended it).
            if (this.#pending.get(id) !== pending) return;
            clearTimeout(pending.timer);
            pending.timer = setTimeout(expire, limit);
          },
        };
      this.#pending.set(id, pending);
      worker.postMessage({ id, now: this.#now(), ...op });
    });
    if (stored !== undefined) this.#jobIds.set(promise, id);
    return promise;
  }
}
