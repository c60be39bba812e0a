/** The service's upstream transport behaves as the interpreter expects fetch to. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUpstreamTransport, ResponseHeaders, sendOverFetch, type UpstreamTransport } from '../../src/http/upstream-transport.ts';

describe('upstream transport', () => {
  let server: Server;
  let base: string;
  let t: UpstreamTransport;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (req.url === '/redirect') return void res.writeHead(302, { location: '/echo' }).end();
        if (req.url === '/gzip') {
          const accepts = String(req.headers['accept-encoding'] ?? '');
          return void res
            .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
            .end(accepts.includes('gzip') ? gzipSync('{"zipped":true}') : '');
        }
        if (req.url === '/empty') return void res.writeHead(204).end();
        if (req.url === '/slow') return void setTimeout(() => res.writeHead(200).end('{}'), 500);
        res.writeHead(201, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'], 'x-ratelimit-remaining': '7' });
        res.end(JSON.stringify({ method: req.method, url: req.url, body, auth: req.headers.authorization ?? null }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = createUpstreamTransport();
  });
  afterAll(async () => {
    await t.close();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('sends method, headers and body, and answers a standard Response with every header', async () => {
    const res = await t.fetch(`${base}/echo`, { method: 'POST', headers: { authorization: 'Bearer x', 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(res).toBeInstanceOf(Response);
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('7');
    expect(res.headers.get('set-cookie')).toBe('a=1, b=2');
    expect(JSON.parse(await res.text())).toEqual({ method: 'POST', url: '/echo', body: '{"a":1}', auth: 'Bearer x' });
  });

  it('follows redirects, decodes gzip, and gives 204 a null body', async () => {
    expect(JSON.parse(await (await t.fetch(`${base}/redirect`)).text())).toMatchObject({ url: '/echo', method: 'GET' });
    const zipped = await t.fetch(`${base}/gzip`);
    expect(zipped.headers.get('content-encoding')).toBeNull();
    expect(await zipped.json()).toEqual({ zipped: true });
    const empty = await t.fetch(`${base}/empty`);
    expect(empty.status).toBe(204);
    expect(await empty.text()).toBe('');
  });

  it('send answers status, lower-case headers (a repeated one as an array) and the decoded body, without a Response', async () => {
    const res = await t.send(`${base}/echo`, { method: 'POST', headers: { authorization: 'Bearer x' }, body: 'hi' });
    expect(res).not.toBeInstanceOf(Response);
    expect(res.status).toBe(201);
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(new ResponseHeaders(res.headers).get('Set-Cookie')).toBe('a=1, b=2');
    expect(JSON.parse(res.body.toString('utf8'))).toMatchObject({ method: 'POST', body: 'hi', auth: 'Bearer x' });
    const zipped = await t.send(`${base}/gzip`);
    expect(zipped.headers['content-encoding']).toBeUndefined();
    expect(zipped.body.toString('utf8')).toBe('{"zipped":true}');
    expect(t.fetch.send).toBe(t.send);
  });

  it('send bounds the whole exchange with timeoutMs (TimeoutError) and the caller signal (its reason)', async () => {
    await expect(t.send(`${base}/slow`, { timeoutMs: 50 })).rejects.toMatchObject({ name: 'TimeoutError' });
    const caller = new AbortController();
    const pending = t.send(`${base}/slow`, { signal: caller.signal, timeoutMs: 10_000 });
    caller.abort(new Error('caller went away'));
    await expect(pending).rejects.toThrow('caller went away');
  });

  it('sendOverFetch gives any FetchLike the same answer shape and body cap', async () => {
    const send = sendOverFetch(fetch, 'test');
    const res = await send(`${base}/echo`, { headers: { authorization: 'Bearer y' } });
    expect(res.status).toBe(201);
    expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(res.headers['x-ratelimit-remaining']).toBe('7');
    expect(JSON.parse(res.body.toString('utf8'))).toMatchObject({ auth: 'Bearer y' });
    await expect(send(`${base}/echo`, { maxResponseBytes: 10 })).rejects.toMatchObject({ code: 'upstream_response_too_large' });
  });

  it('aborts with the signal reason (TimeoutError for AbortSignal.timeout), as the interpreter checks', async () => {
    await expect(t.fetch(`${base}/slow`, { signal: AbortSignal.timeout(50) })).rejects.toMatchObject({ name: 'TimeoutError' });
  });
});
