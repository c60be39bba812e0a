/**
 * Bounded upstream bodies: the largest response Switchboard reads from a third-party API,
 * enforced while the body streams in (never after buffering it whole), and the error that
 * reports it.
 */
import { SwitchboardError } from '../errors/index.ts';

/** Default cap on an upstream response body, decoded: 50 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 50 * 1024 * 1024;

/** RequestInit plus the response cap a transport should enforce (undici transport reads it; a plain fetch ignores it). */
export type UpstreamInit = RequestInit & { maxResponseBytes?: number };

/**
 * One budget of upstream bytes in flight (received and decoded, not yet handed over), shared by
 * every call of a transport: the service's one transport, so every connector and tenant of the
 * process. Each call's per-body cap bounds one call; this bounds them all together. Built on
 * `shared` (sharedBudget()), the count lives in shared memory: transports in several threads of
 * the process (the service's and its sync worker's) then hold one budget between them.
 */
export class ByteBudget {
  readonly #used: BigInt64Array;
  /** Highest use seen by this thread's transport (benchmarks). */
  peak = 0;
  constructor(
    readonly capacity: number,
    shared?: SharedArrayBuffer,
  ) {
    this.#used = new BigInt64Array(shared ?? new ArrayBuffer(8), 0, 1);
  }

  /** Bytes held now. */
  get inUse(): number {
    return Number(Atomics.load(this.#used, 0));
  }

  /** Reserve `n` bytes; false (nothing reserved) when that would pass the capacity. */
  take(n: number): boolean {
    for (;;) {
      const used = Atomics.load(this.#used, 0);
      const next = used + BigInt(n);
      if (next > BigInt(this.capacity)) return false;
      if (Atomics.compareExchange(this.#used, 0, used, next) !== used) continue;
      if (Number(next) > this.peak) this.peak = Number(next);
      return true;
    }
  }

  release(n: number): void {
    for (;;) {
      const used = Atomics.load(this.#used, 0);
      const next = used > BigInt(n) ? used - BigInt(n) : 0n;
      if (Atomics.compareExchange(this.#used, 0, used, next) === used) return;
    }
  }
}

/** Memory for a ByteBudget shared by the transports of several threads (UpstreamTransportOptions.sharedBudget). */
export function sharedBudget(): SharedArrayBuffer {
  return new SharedArrayBuffer(8);
}

/** Default process-wide budget of upstream bytes in flight: 128 MiB. */
export const DEFAULT_UPSTREAM_MEMORY_BYTES = 128 * 1024 * 1024;

/** The upstream_memory_exhausted error. */
export function memoryExhausted(what: string, budget: ByteBudget): SwitchboardError {
  return new SwitchboardError(
    'upstream_memory_exhausted',
    `Reading ${what}'s answer would pass this instance's budget for upstream bytes in flight (${budget.capacity} bytes, shared by every call); nothing was kept, retry shortly`,
    { details: { memory_budget_bytes: budget.capacity } },
  );
}

/** The upstream_response_too_large error. */
export function responseTooLarge(what: string, limit: number, seen?: number): SwitchboardError {
  return new SwitchboardError('upstream_response_too_large', `${what} answered with a body larger than ${limit} bytes; nothing was kept`, {
    details: { max_response_bytes: limit, ...(seen !== undefined ? { received_bytes_at_least: seen } : {}) },
  });
}

/**
 * The body of `res` as bytes, reading at most `limit` bytes: a larger body (by Content-Length or
 * as it streams) is cancelled and upstream_response_too_large thrown. `what` names the upstream.
 */
export async function readBodyCapped(res: Response, limit: number, what: string): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    await res.body?.cancel().catch(() => undefined);
    throw responseTooLarge(what, limit, declared);
  }
  if (res.body === null) return Buffer.alloc(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw responseTooLarge(what, limit, total);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? Buffer.from((chunks[0] as Uint8Array).buffer, (chunks[0] as Uint8Array).byteOffset, total) : Buffer.concat(chunks, total);
}
