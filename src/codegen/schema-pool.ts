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

/** The worker's code (CommonJS, evaluated): one batch per message, answered in order. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { compile } = require(workerData.module);
parentPort.on('message', async ({ inputs, names, options }) => {
  try {
    const ts = [];
    for (let i = 0; i < inputs.length; i++) ts.push(await compile(inputs[i], names[i], options));
    parentPort.postMessage({ ts });
  } catch (e) {
    parentPort.postMessage({ error: (e && e.stack) || String(e) });
  }
});`;

/** A batch compiled on this thread. */
export async function compileHere({ inputs, names, options }: SchemaBatch): Promise<string[]> {
  const { compile } = await import('json-schema-to-typescript');
  const ts: string[] = [];
  // No copy of the input here: compile clones what it is given before touching it.
  for (const [i, input] of inputs.entries()) ts.push(await compile(input, names[i]!, options));
  return ts;
}

/** A batch compiled by `worker`; rejects if the worker fails or exits first. */
function compileThere(worker: Worker, batch: SchemaBatch): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      worker.off('message', onMessage).off('error', reject).off('exit', onExit);
    };
    const onMessage = (m: { ts?: string[]; error?: string }): void => {
      done();
      if (m.ts !== undefined) resolve(m.ts);
      else reject(new Error(`json-schema-to-typescript: ${m.error ?? 'no output'}`));
    };
    const onExit = (code: number): void => {
      done();
      reject(new Error(`the json-schema-to-typescript worker exited (${code}) before answering`));
    };
    worker.on('message', onMessage).once('error', reject).once('exit', onExit);
    worker.postMessage(batch);
  });
}

interface Job {
  batch: SchemaBatch;
  resolve: (ts: string[]) => void;
  reject: (e: unknown) => void;
}

/** The queue and its two lanes (this thread; a worker while batches wait). */
export class SchemaPool {
  private readonly queue: Job[] = [];
  private draining = false;

  /** `threads: false` compiles everything on this thread. */
  constructor(private readonly threads = true) {}

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
      const lanes = [this.lane(compileHere)];
      let worker: Worker | undefined;
      if (this.threads && this.queue.length >= 2) {
        const w = new Worker(WORKER, { eval: true, workerData: { module: MODULE } });
        worker = w;
        // A worker that fails hands its batch back to this thread's lane and stops taking more.
        lanes.push(this.lane((batch) => compileThere(w, batch), true));
      }
      await Promise.all(lanes);
      void worker?.terminate();
    }
    this.draining = false;
  }

  private async lane(run: (batch: SchemaBatch) => Promise<string[]>, fallible = false): Promise<void> {
    for (let job = this.queue.shift(); job !== undefined; job = this.queue.shift()) {
      try {
        job.resolve(await run(job.batch));
      } catch (e) {
        if (!fallible) {
          job.reject(e);
          continue;
        }
        this.queue.unshift(job);
        return this.lane(compileHere);
      }
    }
  }
}
