/**
 * The proxy route streams a vendor's 2xx answer through (docs/proxy.md), on both databases: the
 * caller has the first bytes while the vendor is still sending; a body four times the process's
 * upstream memory budget goes through (read whole it would be refused); a gzip body is decoded
 * as it streams; past the size cap the answer is 502 upstream_response_too_large when nothing
 * was sent yet, and is cut off (the connection ends before the body does) when it was.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDialect, fakeUpstream, startHarness, type Harness } from '../service/helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const MIB = 1024 * 1024;
const CAP = 8 * MIB;
const BUDGET = 1 * MIB;

interface Streamed {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
  /** The whole message arrived (false: the connection ended before the body did). */
  complete: boolean;
}

/** GET through the proxy, reading the answer as it arrives; `onFirstBytes` runs at its first chunk. */
function streamGet(base: string, path: string, token: string, onFirstBytes?: () => void): Promise<Streamed> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, method: 'GET', path, headers: { authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Buffer[] = [];
      let settled = false;
      res.on('data', (c: Buffer) => {
        if (chunks.length === 0) onFirstBytes?.();
        chunks.push(c);
      });
      // An answer cut short ends with an 'aborted' error on the response: 'close' says what arrived.
      res.on('error', () => undefined);
      res.on('close', () => {
        if (settled) return;
        settled = true;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete: res.complete });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Bytes that look like a JSON page, `size` long. */
function page(size: number): Buffer {
  const unit = Buffer.from('{"id":"not_0123456789","title":"a streamed note"},');
  const out = Buffer.alloc(size);
  for (let i = 0; i < size; i += unit.length) unit.copy(out, i);
  return out;
}

describeEachDialect('the proxy route streams answers on %s', (dialect) => {
  let h: Harness;
  let token: string;
  let id: string;
  let up: Awaited<ReturnType<typeof fakeUpstream>>;
  /** What the vendor does next: its first bytes, then (once `go` is called) the rest. */
  let plan: { headers: Record<string, string>; first: Buffer; rest: Buffer };
  let go: () => void = () => undefined;
  let gate: Promise<void>;

  beforeAll(async () => {
    up = await fakeUpstream((req, res) => {
      req.resume();
      req.on('end', () => {
        const p = plan;
        res.writeHead(200, p.headers);
        res.write(p.first);
        void gate.then(() => res.end(p.rest));
      });
    });
    h = await startHarness(dialect, {
      config: { upstreamThrottle: false, proxyMaxResponseBytes: CAP, upstreamMemoryBytes: BUDGET, connectorTypes: { granola: { baseUrl: up.url } } },
    });
    token = await h.token(await h.createApp(`proxy-stream-${dialect}`));
    const r = await h.request('POST', `${CONNECTORS}?check=false`, {
      token,
      body: { name: 's', customer_name: 's', connector_type: 'granola', credentials: { api_key: 'grn_stream_key' } },
    });
    expect(r.status, r.text).toBe(201);
    id = r.body.id;
  });
  afterAll(async () => {
    go();
    await h?.close();
    await up?.close();
  });
  beforeEach(() => {
    gate = new Promise<void>((resolve) => (go = resolve));
  });

  const path = (): string => `${CONNECTORS}/${id}/proxy/v1/notes?page_size=50`;

  it('hands over the first bytes while the vendor is still sending, and a body four times the memory budget whole', async () => {
    const body = page(4 * BUDGET);
    plan = {
      headers: { 'content-type': 'application/json', link: '<https://x/next>; rel="next"' },
      first: body.subarray(0, 64 * 1024),
      rest: body.subarray(64 * 1024),
    };
    // The vendor sends the rest only once the caller has the first bytes: read whole, this would never finish.
    const r = await streamGet(h.url, path(), token, go);
    expect(r.status).toBe(200);
    expect(r.complete).toBe(true);
    expect(r.headers['switchboard-proxy-source']).toBe('upstream');
    expect(r.headers['link']).toContain('rel="next"');
    expect(r.body.equals(body)).toBe(true);
  });

  it('decodes a gzip answer as it streams', async () => {
    const body = page(2 * BUDGET);
    const zipped = gzipSync(body);
    plan = { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, first: zipped.subarray(0, 1024), rest: zipped.subarray(1024) };
    const r = await streamGet(h.url, path(), token, go);
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.body.equals(body)).toBe(true);
  });

  it('a body declared over the cap: 502 upstream_response_too_large, nothing of it sent', async () => {
    go();
    plan = { headers: { 'content-type': 'application/json', 'content-length': String(CAP + 1) }, first: Buffer.from('{'), rest: Buffer.alloc(0) };
    const r = await h.request('GET', path(), { token });
    expect(r.status).toBe(502);
    expect(r.body.code).toBe('upstream_response_too_large');
    expect(r.headers.get('switchboard-proxy-source')).toBe('switchboard');
    expect(r.headers.get('content-type')).toContain('application/problem+json');
  });

  it('a body that grows past the cap after its first bytes were sent is cut off: the connection ends before the body does', async () => {
    plan = { headers: { 'content-type': 'application/octet-stream' }, first: page(MIB), rest: page(CAP) };
    const r = await streamGet(h.url, path(), token, go);
    expect(r.status).toBe(200);
    expect(r.complete).toBe(false);
    expect(r.body.length).toBeGreaterThan(0);
    expect(r.body.length).toBeLessThanOrEqual(CAP);
    // The service goes on answering.
    gate = new Promise<void>((resolve) => (go = resolve));
    go();
    plan = { headers: { 'content-type': 'application/json' }, first: Buffer.from('{"ok":'), rest: Buffer.from('true}') };
    const after = await h.request('GET', path(), { token });
    expect([after.status, after.text]).toEqual([200, '{"ok":true}']);
  });
});
