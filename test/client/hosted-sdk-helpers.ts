/** Shared by hosted-sdk*.test.ts: polling with a deadline and a fetch that records what the SDK sends. */
import type { FetchLike } from '../../src/http/index.ts';

/** Poll until `fn` returns a value `ok` accepts (background syncs finish in well under a second here). */
export async function eventually<T>(fn: () => Promise<T>, ok: (t: T) => boolean, what: string): Promise<T> {
  let last: T | undefined;
  const deadline = Date.now() + 60_000; // generous: a poll with a deadline, never a fixed sleep
  while (Date.now() < deadline) {
    last = await fn();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: still ${JSON.stringify(last)?.slice(0, 300)}`);
}

/** Every request the SDK sends, with the status it got: for counting token requests, 401s and 429s. */
export interface Exchange {
  method: string;
  path: string;
  status: number;
  authorization: string | null;
  retryAfter: string | null;
  at: number;
}
export function recordingFetch(log: Exchange[]): FetchLike {
  return async (input, init) => {
    const res = await fetch(input, init);
    const headers = new Headers(init?.headers);
    log.push({
      method: init?.method ?? 'GET',
      path: new URL(input).pathname,
      status: res.status,
      authorization: headers.get('authorization'),
      retryAfter: res.headers.get('retry-after'),
      at: Date.now(),
    });
    return res;
  };
}
export const TOKEN_PATH = '/api/v1/account/applications/token';
