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
