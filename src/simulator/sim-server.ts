/**
 * Shared plumbing for the upstream API simulators: a node:http server on a loopback port,
 * JSON helpers, a request log, a token bucket, and per-test fault injection (status codes with
 * headers, latency, malformed bodies). Each simulator (the generic ones, a connector's own) is a handler
 * on top of this; the same simulators back tests, `switchboard sandbox` and the benchmarks.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as a simulator handler sees it. */
export interface SimRequest {
  method: string;
  /** Path without the query string, e.g. /v1/notes/abc. */
  path: string;
  /** Path split into decoded segments. */
  segments: string[];
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  /** Raw body text ('' when none). */
  rawBody: string;
}

/** What a handler answers: JSON by default, or raw text with a content type. */
export interface SimResponse {
  status: number;
  headers?: Record<string, string>;
  json?: unknown;
  text?: string;
}

export type SimHandler = (req: SimRequest) => SimResponse | Promise<SimResponse>;

/** One injected fault, consumed by the next `times` requests whose path matches. */
export interface Fault {
  /** Match on the request path (substring or regexp); default every path. */
  path?: string | RegExp;
  /** Answer with this status instead of calling the handler. */
  status?: number;
  headers?: Record<string, string>;
  /** JSON body for the injected status. */
  json?: unknown;
  /** Raw text body (e.g. HTML or truncated JSON) for the injected status, or for a 200 with status omitted. */
  text?: string;
  contentType?: string;
  /** Wait this long before answering (the handler still answers unless status/text is set). */
  delayMs?: number;
  /** How many requests this fault applies to; default 1. */
  times?: number;
}

/** A running simulator. */
export interface Simulator {
  url: string;
  port: number;
  /** Every request received, in order (including faulted ones). */
  requests: SimRequest[];
  /** Queue a fault for upcoming requests. */
  inject(fault: Fault): void;
  /** Drop queued faults and the request log. */
  reset(): void;
  close(): Promise<void>;
}

export interface StartOptions {
  port?: number;
  host?: string;
  /** Largest accepted request body in bytes; default 1 MiB. */
  maxBodyBytes?: number;
}

/** Token bucket: `capacity` tokens, refilled at `perSecond`; used by simulators to enforce limits. */
export class TokenBucket {
  private tokens: number;
  private last: number;
  constructor(
    private readonly capacity: number,
    private readonly perSecond: number,
  ) {
    this.tokens = capacity;
    this.last = Date.now();
  }
  private refill(): void {
    const now = Date.now();
    this.tokens = Math.min(this.capacity, this.tokens + ((now - this.last) / 1000) * this.perSecond);
    this.last = now;
  }
  /** Take one token; returns 0 when granted, else the seconds until one is available. */
  take(): number {
    this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return (1 - this.tokens) / this.perSecond;
  }
  /** Tokens currently available (after refill). */
  remaining(): number {
    this.refill();
    return Math.floor(this.tokens);
  }
}

function readBody(req: IncomingMessage, max: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        resolve(null);
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(size > max ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, r: SimResponse): void {
  const headers: Record<string, string> = { ...(r.headers ?? {}) };
  let payload = '';
  if (r.text !== undefined) {
    payload = r.text;
    headers['content-type'] ??= 'text/plain; charset=utf-8';
  } else if (r.json !== undefined) {
    payload = JSON.stringify(r.json);
    headers['content-type'] ??= 'application/json; charset=utf-8';
  }
  res.writeHead(r.status, headers);
  res.end(payload);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Start a simulator on a loopback port (0 = any free port). */
export async function startSimulator(handler: SimHandler, options: StartOptions = {}): Promise<Simulator> {
  const faults: Fault[] = [];
  const requests: SimRequest[] = [];
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://sim.local');
      const raw = await readBody(req, maxBody);
      const simReq: SimRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        segments: url.pathname
          .split('/')
          .filter((s) => s !== '')
          .map((s) => {
            try {
              return decodeURIComponent(s);
            } catch {
              return s;
            }
          }),
        query: url.searchParams,
        headers: req.headers,
        rawBody: raw ?? '',
      };
      requests.push(simReq);
      if (raw === null) return send(res, { status: 413, json: { error: 'request body too large' } });
      const i = faults.findIndex((f) => f.path === undefined || (typeof f.path === 'string' ? simReq.path.includes(f.path) : f.path.test(simReq.path)));
      const fault = i >= 0 ? faults[i] : undefined;
      if (fault !== undefined) {
        fault.times = (fault.times ?? 1) - 1;
        if (fault.times <= 0) faults.splice(i, 1);
        if (fault.delayMs !== undefined) await sleep(fault.delayMs);
        if (fault.status !== undefined || fault.text !== undefined) {
          const headers = { ...(fault.headers ?? {}), ...(fault.contentType ? { 'content-type': fault.contentType } : {}) };
          return send(res, { status: fault.status ?? 200, headers, ...(fault.text !== undefined ? { text: fault.text } : { json: fault.json ?? {} }) });
        }
      }
      send(res, await handler(simReq));
    })().catch((e: unknown) => {
      if (!res.headersSent) send(res, { status: 500, json: { error: 'simulator error', message: String(e) } });
    });
  });
  server.keepAliveTimeout = 5000;
  // A busy port rejects (EADDRINUSE) instead of crashing the process with an unhandled 'error'.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    inject: (f) => faults.push({ ...f }),
    reset: () => {
      faults.length = 0;
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Parse a JSON body, or undefined when it is not JSON. */
export function parseJson(raw: string): unknown {
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

/** Deterministic PRNG (mulberry32) so seeded data is the same on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Combine integers into one 32-bit seed (FNV-1a-style mixing), so derived generators are independent of each other and of list order. */
export function mixSeed(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x01000193);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    h ^= h >>> 12;
  }
  return h >>> 0;
}

/** Pick one element of a non-empty array with the given PRNG. */
export function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)] as T;
}
