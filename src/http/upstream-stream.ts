/**
 * A body the lean transport hands over as a stream instead of collecting it (UpstreamRequest.stream:
 * the pass-through proxy's 2xx answers): the bytes go to the caller as they arrive, with
 * backpressure (undici stops reading the socket while the reader is behind), so one answer holds
 * a small fixed window of the transport's memory budget (STREAM_WINDOW_BYTES) for as long as it
 * streams, whatever its size. The per-call cap still holds, raw and decoded: the stream fails
 * with upstream_response_too_large as soon as it passes it (the reader has already been sent
 * what came before, so it can only cut its own answer short). The exchange's timer and the
 * caller's signal end the stream as they end a collected body.
 */
import { Readable, Transform, pipeline } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Dispatcher } from 'undici';
import { responseTooLarge } from './response-limit.ts';

const CHUNK = 64 * 1024;

/**
 * What a streamed body holds of the memory budget until it ends: the raw stream's buffer, a
 * decoder's, and the chunk in hand (each about CHUNK, kept there by backpressure).
 */
export const STREAM_WINDOW_BYTES = 4 * CHUNK;

/** The raw body as a Readable fed by a dispatch handler, pausing the connection when the reader is behind. */
export class RawBodyStream extends Readable {
  private total = 0;
  constructor(
    private readonly controller: Dispatcher.DispatchController,
    private readonly limit: number,
    private readonly host: string,
  ) {
    super({ highWaterMark: CHUNK });
  }

  override _read(): void {
    this.controller.resume();
  }

  /** One chunk from undici: passed on, or the stream failed once past the cap. */
  chunk(c: Buffer): void {
    if (this.destroyed) return;
    this.total += c.length;
    if (this.total > this.limit) {
      const e = responseTooLarge(this.host, this.limit, this.total);
      this.controller.abort(e);
      this.destroy(e);
      return;
    }
    if (!this.push(c)) this.controller.pause();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // A reader that went away (or a failure) ends the exchange: the connection is not drained.
    if (!this.readableEnded) this.controller.abort(error ?? new Error('upstream body stream closed'));
    callback(error);
  }
}

const DECODERS: Record<string, () => Transform> = {
  gzip: () => createGunzip({ chunkSize: CHUNK }),
  'x-gzip': () => createGunzip({ chunkSize: CHUNK }),
  deflate: () => createInflate({ chunkSize: CHUNK }),
  br: () => createBrotliDecompress({ chunkSize: CHUNK }),
};

/** True when a Content-Encoding value names only codings the stream can undo (or none). */
export function streamableEncoding(encoding: string | null): boolean {
  if (encoding === null || encoding === '' || encoding === 'identity') return true;
  return encoding.split(',').every((c) => DECODERS[c.trim().toLowerCase()] !== undefined);
}

/**
 * The body the caller reads: `raw` itself, or `raw` through the decoders of its content codings
 * (in reverse order of application, RFC 9110 §8.4) and a counter that fails past `limit` decoded
 * bytes (a compression bomb stops there). A failure anywhere destroys every stage.
 */
export function decodedStream(raw: Readable, encoding: string | null, limit: number, host: string): Readable {
  if (encoding === null || encoding === '' || encoding === 'identity') return raw;
  const stages = encoding
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .reverse()
    .map((c) => (DECODERS[c] as () => Transform)());
  let total = 0;
  const counter = new Transform({
    highWaterMark: CHUNK,
    transform(chunk: Buffer, _encoding, done) {
      total += chunk.length;
      if (total > limit) done(responseTooLarge(`${host} (decompressed)`, limit));
      else done(null, chunk);
    },
  });
  pipeline([raw, ...stages, counter], () => undefined);
  return counter;
}
