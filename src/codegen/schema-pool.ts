/**
 * json-schema-to-typescript over many connectors at once: their batches (one connector's schemas
 * each) go into one queue, drained by this thread and by a worker thread (started early by the
 * caller, or when two batches or more wait), so that a cold codegen compiles on two cores; the
 * worker may also start alone while this thread still loads manifests (hold/release). The output
 * does not depend on where a batch ran: the same library turns the same input into the same text.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { JSONSchema, Options } from 'json-schema-to-typescript';

/** One connector's schemas, their type names and the options. */
export interface SchemaBatch {
  inputs: JSONSchema[];
  names: string[];
  options: Partial<Options>;
}

const MODULE = createRequire(import.meta.url).resolve('json-schema-to-typescript');

/** The worker's code (CommonJS, evaluated): batches compiled one after the other, each answered with its id. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { compile } = require(workerData.module);
let last = Promise.resolve();
parentPort.on('message', ({ id, inputs, names, options }) => {
  last = last.then(async () => {
    try {
      const ts = [];
      for (let i = 0; i < inputs.length; i++) ts.push(await compile(inputs[i], names[i], options));
      parentPort.postMessage({ id, ts });
    } catch (e) {
      parentPort.postMessage({ id, error: (e && e.stack) || String(e) });
    }
  });
});`;

/** A batch compiled on this thread. */
export async function compileHere({ inputs, names, options }: SchemaBatch): Promise<string[]> {
  const { compile } = await import('json-schema-to-typescript');
  const ts: string[] = [];
  // No copy of the input here: compile clones what it is given before touching it.
  for (const [i, input] of inputs.entries()) ts.push(await compile(input, names[i]!, options));
  return ts;
}

/** The library refused a batch (the worker itself is fine). */
class Refused extends Error {}

/**
 * A worker thread and the batches it was sent, answered by id: a refused batch rejects with
 * Refused; if the thread fails or exits, every waiting batch rejects. It keeps the process alive
 * only while it has batches to answer.
 */
class SchemaWorker {
  private readonly worker = new Worker(WORKER, { eval: true, workerData: { module: MODULE } });
  private readonly waiting = new Map<number, { resolve: (ts: string[]) => void; reject: (e: Error) => void }>();
  private next = 0;

  constructor() {
    this.worker.unref();
    const fail = (e: Error): void => {
      for (const w of this.waiting.values()) w.reject(e);
      this.waiting.clear();
    };
    this.worker.on('message', (m: { id: number; ts?: string[]; error?: string }) => {
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (this.waiting.size === 0) this.worker.unref();
      if (m.ts !== undefined) w?.resolve(m.ts);
      else w?.reject(new Refused(`json-schema-to-typescript: ${m.error ?? 'no output'}`));
    });
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the json-schema-to-typescript worker exited (${code}) before answering`)));
  }

  compile(batch: SchemaBatch): Promise<string[]> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      if (this.waiting.size === 0) this.worker.ref();
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...batch });
    });
  }

  close(): void {
    void this.worker.terminate();
  }
}

interface Job {
  batch: SchemaBatch;
  resolve: (ts: string[]) => void;
  reject: (e: unknown) => void;
}

/** Batches sent to the worker ahead of its answers: it starts the next one while this thread, busy, has not read the last answer yet. */
const WORKER_AHEAD = 2;

/**
 * The queue and its lanes: this thread's, and a worker's (started by warm(), or when two batches
 * or more wait) that gets batches ahead. This thread lets its event loop turn between its own
 * batches, so that the worker's answers are read, and more batches sent, while the queue lasts.
 * hold() keeps this thread out until release(): the worker alone compiles what comes meanwhile
 * (the caller has other work, and lets its event loop turn now and then).
 */
export class SchemaPool {
  private readonly queue: Job[] = [];
  private worker: SchemaWorker | undefined;
  private hereLane = false;
  private workerLanes = 0;
  private held = false;
  private closed = false;
  private scheduled = false;

  /** `threads: false` compiles everything on this thread. */
  constructor(private threads = true) {}

  /** Start the worker now (it loads the library while the caller does other work). */
  warm(): void {
    if (this.threads && this.worker === undefined) this.worker = new SchemaWorker();
  }

  /** Leave the batches to the worker until release() (to this thread too when there is no worker). */
  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    if (this.queue.length > 0) this.schedule();
    else if (!this.hereLane && this.workerLanes === 0) this.stopWorker();
  }

  /** Stop the worker and refuse every batch not answered yet (the caller gave up). */
  close(): void {
    this.closed = true;
    this.stopWorker();
    for (const job of this.queue.splice(0)) job.reject(new Error('the schema pool was closed'));
  }

  compile(batch: SchemaBatch): Promise<string[]> {
    if (this.closed) return Promise.reject(new Error('the schema pool was closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ batch, resolve, reject });
      this.schedule();
    });
  }

  /** Lanes start after the current tick, when every batch asked for in it is queued. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.start();
    });
  }

  private start(): void {
    if (this.queue.length === 0 || this.closed) return;
    if (this.threads && (this.worker !== undefined || this.queue.length >= 2)) {
      const w = (this.worker ??= new SchemaWorker());
      for (; this.workerLanes < WORKER_AHEAD; this.workerLanes++) {
        void this.lane((batch) => w.compile(batch), true).finally(() => this.laneDone(() => this.workerLanes--));
      }
    }
    if (!this.hereLane && (!this.held || this.worker === undefined)) {
      this.hereLane = true;
      void this.lane(compileHere, false).finally(() => this.laneDone(() => (this.hereLane = false)));
    }
  }

  /** A lane ran out of batches: when none runs and none is held back, the worker stops (a new one starts if needed). */
  private laneDone(mark: () => void): void {
    mark();
    if (this.queue.length > 0) this.schedule();
    else if (!this.hereLane && this.workerLanes === 0 && !this.held) this.stopWorker();
  }

  private stopWorker(): void {
    this.worker?.close();
    this.worker = undefined;
  }

  private async lane(run: (batch: SchemaBatch) => Promise<string[]>, fallible: boolean): Promise<void> {
    for (let job = this.queue.shift(); job !== undefined; job = this.queue.shift()) {
      try {
        job.resolve(await run(job.batch));
      } catch (e) {
        if (!fallible || this.closed) {
          job.reject(e);
          continue;
        }
        if (e instanceof Refused) {
          // Compiled here again, for the library's own error (the worker's is text only).
          await compileHere(job.batch).then(job.resolve, job.reject);
          continue;
        }
        // A worker that fails hands its batch back and is not used again: this thread compiles.
        this.queue.unshift(job);
        this.threads = false;
        this.stopWorker();
        this.schedule();
        return;
      }
      // A compile here is work the event loop waits on (promises, no I/O): let it turn.
      if (!fallible) await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
