/**
 * WAL checkpoints of a SQLite database file in a worker thread, on a connection of its own.
 *
 * SQLite copies the write-ahead log back into the database file (a checkpoint) in the
 * connection whose commit takes the log past `wal_autocheckpoint` pages, synchronously: with
 * better-sqlite3 that is the service's main thread, which meanwhile answers no request. Under
 * 100 syncs a checkpoint (4 MB copied, the log and the database file fsynced: 10-30 ms on the
 * shared VM) ran about five times a second (issue 25's fleet bench). Here the checkpoints run
 * PASSIVE (they never wait for, nor block, a reader or a writer) in a worker, asked for by the
 * sync writes between two of their parts (syncWrites in src/service/data/hosted-data.ts), and at
 * least every IDLE_CHECKPOINT_MS otherwise; the main connection's own automatic checkpoints
 * are kept as a safety net at MAIN_AUTOCHECKPOINT_PAGES (set by openDatabase), reached only
 * when these fall behind. A worker that fails or exits is replaced on the next checkpoint.
 *
 * When a checkpoint has copied the whole log, the worker also writes once (user_version set to
 * itself): the first write after a complete checkpoint starts the log afresh and fsyncs its new
 * header, which the main thread's next commit did otherwise (1-20 ms on the shared VM, ten times
 * a second). With the main connection's write gate (Database.writeGate) it takes that write only
 * when no main write waits, and marks it held meanwhile, so a main write that comes then waits
 * for it without blocking the event loop, not asleep in SQLite's busy handler (1–16 ms).
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { trackWorker } from './worker-threads.ts';

/**
 * The main connection's wal_autocheckpoint (pages) while a checkpointer keeps the log short;
 * SQLite's default is 1000. A log is started afresh only when no reader still reads it, so under
 * many syncs (a record writer writing while requests read) it can grow past a few thousand pages
 * between two restarts; past this, every main commit ran a checkpoint on the main thread (10-19
 * ms each at 4,000 pages in issue 25's fleet bench). 32,000 pages (128 MB of log) stays a bound.
 */
export const MAIN_AUTOCHECKPOINT_PAGES = 32000;
/** A checkpoint at least this often (ms) while the database is open, whether or not syncs ask for one. */
export const IDLE_CHECKPOINT_MS = 1000;
/**
 * A checkpoint not answered within this many ms is answered as failed (its callers, sync writes,
 * go on), reported to onError, and its worker terminated; the next checkpoint starts a new one.
 * A checkpoint copies at most a few thousand pages: it takes tens of ms, not seconds.
 */
export const CHECKPOINT_DEADLINE_MS = 5000;

/** What one checkpoint did (PRAGMA wal_checkpoint's row): frames in the log, frames copied into the database. */
export interface CheckpointResult {
  /** PRAGMA wal_checkpoint's busy: SQLite could not take a lock it needed (another checkpoint ran); the next one catches up. */
  busy: boolean;
  log: number;
  checkpointed: number;
  /** True when the checkpoint copied the whole log and this thread then wrote the first frame of a fresh one. */
  restarted: boolean;
}

const BETTER_SQLITE3 = createRequire(import.meta.url).resolve('better-sqlite3');

/** The worker's code (CommonJS, evaluated): one connection, one PASSIVE checkpoint per message. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.module);
// No busy wait: a checkpoint or restart that would wait is skipped, and the next one does it.
const db = new SQLite(workerData.file, { fileMustExist: true, timeout: 0 });
// The log's length right after this worker's own write: while it stays so, nothing to do.
let own = -1;
const gate = workerData.writeGate;
/** Mark the write lock as this worker's (the gate's holding slot) unless a main write waits for it. */
function takeTurn() {
  if (gate === undefined) return true;
  Atomics.store(gate.gate, gate.holding, 1);
  if (Atomics.load(gate.gate, gate.mainWaiting) === 0) return true;
  endTurn();
  return false;
}
function endTurn() {
  if (gate === undefined) return;
  Atomics.store(gate.gate, gate.holding, 0);
  Atomics.notify(gate.gate, gate.holding);
}
parentPort.on('message', (m) => {
  if (m === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  // Tests: a worker that never answers (a hung one).
  if (workerData.stall) return;
  let reply;
  try {
    const now = db.pragma('wal_checkpoint(NOOP)')[0];
    if (now.log === own) {
      parentPort.postMessage({ id: m, busy: false, log: now.log, checkpointed: now.checkpointed, restarted: false });
      return;
    }
    const r = db.pragma('wal_checkpoint(PASSIVE)')[0];
    let restarted = false;
    if (r.log > 0 && r.checkpointed === r.log && takeTurn()) {
      // The whole log is in the database file now: the next write starts it afresh, writing its
      // header and fsyncing it. Make that write this thread's: user_version set to itself.
      try {
        db.exec('BEGIN IMMEDIATE');
        const v = db.pragma('user_version', { simple: true });
        db.pragma('user_version = ' + Number(v));
        db.exec('COMMIT');
        restarted = true;
        own = db.pragma('wal_checkpoint(NOOP)')[0].log;
      } catch {
        if (db.inTransaction) db.exec('ROLLBACK');
      } finally {
        endTurn();
      }
    }
    reply = { id: m, busy: r.busy === 1, log: r.log, checkpointed: r.checkpointed, restarted };
  } catch (e) {
    reply = { id: m, error: String((e && e.message) || e) };
  }
  parentPort.postMessage(reply);
});`;

export interface WalCheckpointerOptions {
  /** A checkpoint that failed, or a worker that failed; default: ignored (the next checkpoint starts a new worker). */
  onError?: (e: Error) => void;
  /** Default IDLE_CHECKPOINT_MS; 0 turns the timer off (checkpoints only when asked). */
  idleMs?: number;
  /** Default CHECKPOINT_DEADLINE_MS. */
  deadlineMs?: number;
  /** Tests only: the workers never answer, as a hung worker would not. */
  stallWorkers?: boolean;
  /** The main connection's write gate (Database.writeGate) and its slots: the log's restart gives way to the main connection's writes. */
  writeGate?: { gate: Int32Array; mainWaiting: number; holding: number };
}

export class WalCheckpointer {
  readonly #file: string;
  readonly #onError: (e: Error) => void;
  #worker: Worker | undefined;
  /** Checkpoints asked for and not answered: how to answer each, and the worker asked. */
  readonly #pending = new Map<number, { resolve: (r: CheckpointResult | undefined) => void; worker: Worker }>();
  readonly #deadlineMs: number;
  readonly #stall: boolean;
  readonly #writeGate: WalCheckpointerOptions['writeGate'];
  #next = 0;
  #running: Promise<CheckpointResult | undefined> | undefined;
  #closed = false;
  #last = performance.now();
  readonly #timer: NodeJS.Timeout | undefined;
  /** Workers started so far (a failed one is replaced on the next checkpoint). */
  workersStarted = 0;

  constructor(file: string, options: WalCheckpointerOptions = {}) {
    // By absolute path, taken now: its worker opens it whatever the working directory becomes.
    this.#file = file === ':memory:' || file === '' ? file : resolve(file);
    this.#onError = options.onError ?? (() => undefined);
    this.#deadlineMs = options.deadlineMs ?? CHECKPOINT_DEADLINE_MS;
    this.#stall = options.stallWorkers === true;
    this.#writeGate = options.writeGate;
    const idleMs = options.idleMs ?? IDLE_CHECKPOINT_MS;
    if (idleMs > 0) {
      this.#timer = setInterval(() => {
        if (performance.now() - this.#last >= idleMs) void this.#checkpoint();
      }, idleMs);
      this.#timer.unref();
    }
  }

  /** ms since the last checkpoint started. */
  get sinceLast(): number {
    return performance.now() - this.#last;
  }

  /**
   * One PASSIVE checkpoint in the worker (the one running, if one is). Never rejects: undefined
   * when it failed or the worker went away (reported to onError; the next call starts a new one).
   */
  checkpoint(): Promise<CheckpointResult | undefined> {
    return this.#checkpoint();
  }

  #checkpoint(): Promise<CheckpointResult | undefined> {
    if (this.#closed) return Promise.resolve(undefined);
    if (this.#running !== undefined) return this.#running;
    this.#last = performance.now();
    const worker = this.#ensureWorker();
    const id = ++this.#next;
    const answer = new Promise<CheckpointResult | undefined>((resolve) => this.#pending.set(id, { resolve, worker }));
    // Referenced while a checkpoint is asked for (a caller waits on it), not while idle.
    worker.ref();
    worker.postMessage(id);
    // Bounded: a worker that does not answer is given up on, and replaced.
    const deadline = setTimeout(() => {
      const entry = this.#pending.get(id);
      if (entry === undefined) return;
      this.#pending.delete(id);
      this.#onError(new Error(`WAL checkpoint: no answer in ${this.#deadlineMs} ms; worker replaced`));
      if (this.#worker === worker) this.#worker = undefined;
      void worker.terminate();
      entry.resolve(undefined);
    }, this.#deadlineMs);
    deadline.unref();
    const running = answer.finally(() => {
      clearTimeout(deadline);
      if (this.#running === running) this.#running = undefined;
      if (this.#pending.size === 0) this.#worker?.unref();
    });
    this.#running = running;
    return running;
  }

  /** Stop the timer and the worker (its connection closed); checkpoints asked for afterwards do nothing. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    const worker = this.#worker;
    if (worker === undefined) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // Referenced until it has exited: a caller awaiting close() (a CLI command's last step) keeps the process alive.
    worker.ref();
    worker.postMessage('close');
    // Bounded too: a worker that does not exit within the deadline is terminated.
    const deadline = setTimeout(() => void worker.terminate(), this.#deadlineMs);
    await exited;
    clearTimeout(deadline);
  }

  #ensureWorker(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = new Worker(WORKER, { eval: true, workerData: { module: BETTER_SQLITE3, file: this.#file, stall: this.#stall, writeGate: this.#writeGate } });
    this.workersStarted++;
    this.#worker = worker;
    worker.unref();
    trackWorker(worker);
    worker.on('message', (m: { id: number; busy?: boolean; log?: number; checkpointed?: number; restarted?: boolean; error?: string }) => {
      const entry = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      if (m.error !== undefined) this.#onError(new Error(`WAL checkpoint failed: ${m.error}`));
      entry?.resolve(
        m.error !== undefined ? undefined : { busy: m.busy === true, log: m.log ?? 0, checkpointed: m.checkpointed ?? 0, restarted: m.restarted === true },
      );
    });
    worker.on('error', (e) => this.#onError(e));
    worker.on('exit', () => {
      if (this.#worker === worker) this.#worker = undefined;
      // A worker gone in the middle of its write would leave the main connection's writes waiting for its end.
      const g = this.#writeGate;
      if (g !== undefined && this.#worker === undefined) {
        Atomics.store(g.gate, g.holding, 0);
        Atomics.notify(g.gate, g.holding);
      }
      // Whatever it was asked and did not answer: answered as failed, so no caller waits forever.
      for (const [id, entry] of [...this.#pending]) {
        if (entry.worker !== worker) continue;
        this.#pending.delete(id);
        entry.resolve(undefined);
      }
    });
    return worker;
  }
}
