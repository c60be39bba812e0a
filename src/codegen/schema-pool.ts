/**
 * json-schema-to-typescript over many connectors at once: their batches (one connector's schemas
 * each) go into one queue, drained by this thread and, when two or more are waiting, by a worker
 * thread too, so that a cold codegen compiles on two cores. The output does not depend on where a
 * batch ran: the same library turns the same input into the same text.
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

/** A worker thread and the batches it was sent, answered by id; if it fails or exits, every waiting batch is rejected. */
class SchemaWorker {
  private readonly worker = new Worker(WORKER, { eval: true, workerData: { module: MODULE } });
  private readonly waiting = new Map<number, { resolve: (ts: string[]) => void; reject: (e: Error) => void }>();
  private next = 0;

  constructor() {
    const fail = (e: Error): void => {
      for (const w of this.waiting.values()) w.reject(e);
      this.waiting.clear();
    };
    this.worker.on('message', (m: { id: number; ts?: string[]; error?: string }) => {
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (m.ts !== undefined) w?.resolve(m.ts);
      else w?.reject(new Error(`json-schema-to-typescript: ${m.error ?? 'no output'}`));
    });
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the json-schema-to-typescript worker exited (${code}) before answering`)));
  }

  compile(batch: SchemaBatch): Promise<string[]> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
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
 * The queue and its lanes: this thread, and a worker (started by warm(), or by a drain that finds
 * two batches or more waiting) that gets batches ahead. This thread lets the event loop turn
 * between its own batches, so that the worker's answers are read, and more batches sent to it,
 * while the queue lasts.
 */
export class SchemaPool {
  private readonly queue: Job[] = [];
  private draining = false;
  private worker: SchemaWorker | undefined;

  /** `threads: false` compiles everything on this thread. */
  constructor(private readonly threads = true) {}

  /** Start the worker now (it loads the library while the caller does other work); close() stops it. */
  warm(): void {
    if (this.threads && this.worker === undefined) this.worker = new SchemaWorker();
  }

  /** Stop the worker, if one is running (drains stop theirs when done). */
  close(): void {
    this.worker?.close();
    this.worker = undefined;
  }

  compile(batch: SchemaBatch): Promise<string[]> {
    return new Promise((resolve, reject) => {
      this.queue.push({ batch, resolve, reject });
      if (this.draining) return;
      this.draining = true;
      // After the current tick, when every batch asked for in it is queued.
      setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const lanes = [this.lane(compileHere, false, true)];
      if (this.threads && (this.worker !== undefined || this.queue.length >= 2)) {
        const w = this.worker ?? new SchemaWorker();
        this.worker = w;
        // A worker that fails hands its batch back to this thread's lane and stops taking more.
        for (let i = 0; i < WORKER_AHEAD; i++) lanes.push(this.lane((batch) => w.compile(batch), true));
      }
      await Promise.all(lanes);
      this.close();
    }
    this.draining = false;
  }

  private async lane(run: (batch: SchemaBatch) => Promise<string[]>, fallible: boolean, yields = false): Promise<void> {
    for (let job = this.queue.shift(); job !== undefined; job = this.queue.shift()) {
      try {
        job.resolve(await run(job.batch));
      } catch (e) {
        if (!fallible) {
          job.reject(e);
          continue;
        }
        this.queue.unshift(job);
        return this.lane(compileHere, false, true);
      }
      // A compile here is work the event loop waits on (promises, no I/O): let it turn.
      if (yields) await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
