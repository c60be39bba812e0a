/**
 * Blocks of fixed ports for tests that must name their ports (`sandbox --port N` listens on N, N+1, ...).
 *
 * A random port between 20000 and 50000 can collide: Linux hands out ephemeral ports from 32768 up, so
 * another test's `listen(0)` or outgoing connection may hold it (CI once failed on exactly that).
 * Blocks here come from below the ephemeral range, each vitest worker (VITEST_POOL_ID) gets its own
 * stretch so parallel files never pick the same block, and every port of a block is checked free by
 * listening on it (all interfaces, as the CLI does) before the block is handed out.
 */
import { createServer } from 'node:net';

const FIRST = 10_000;
const STRETCH = 1_500; // ports per worker: 10000..(10000 + 15 × 1500) stays below 32768
const taken = { next: 0 };

function worker(): number {
  const id = Number(process.env['VITEST_POOL_ID'] ?? process.env['VITEST_WORKER_ID'] ?? '1');
  return Number.isInteger(id) && id > 0 ? (id - 1) % 15 : 0;
}

function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

/** The first port of `count` consecutive ports that were free a moment ago and no other worker will pick. */
export async function freePortBlock(count: number): Promise<number> {
  const start = FIRST + worker() * STRETCH;
  while (taken.next + count <= STRETCH) {
    const base = start + taken.next;
    taken.next += count;
    const checks = await Promise.all(Array.from({ length: count }, (_, i) => free(base + i)));
    if (checks.every(Boolean)) return base;
  }
  throw new Error(`No free block of ${String(count)} ports left in this worker's stretch from ${String(start)}`);
}
