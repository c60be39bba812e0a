/**
 * Memory while hostile upstream bodies are refused: the hosted service (SQLite) executes
 * against a local upstream that answers a 200 MB body (streamed, no Content-Length) and a gzip
 * bomb (about 1 MB that expands to 1 GB), several calls of each at once, while this process's
 * RSS is sampled every 20 ms. The upstream runs in this process too, so the figure is an upper
 * bound for the service alone.
 *
 * Prints the baseline and peak RSS and the answers, and a verdict line (goal: peak RSS under
 * 300 MB, or 400 MB with more than 4 calls at once; every call refused, with
 * upstream_response_too_large at its cap or upstream_memory_exhausted at the process-wide
 * budget, SWITCHBOARD_UPSTREAM_MEMORY_BYTES).
 *
 * Run: npm run bench:upstream-memory [-- --concurrency 1] [--bombs N] [--bodies N]
 *   --concurrency N: N × 200 MB bodies and N × gzip bombs at once; --bombs / --bodies set each
 *   count on its own (issue 21: --bombs 12 --bodies 0).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGzip } from 'node:zlib';
import { request } from 'undici';
import { createApplication, defaultServiceConfig, startService } from '../../src/service/index.ts';
import { ServiceStore } from '../../src/store/index.ts';

const arg = (name: string): number | undefined => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : undefined;
};
const concurrency = arg('--concurrency') ?? 1;
const bombs = arg('--bombs') ?? concurrency;
const bodies = arg('--bodies') ?? concurrency;
const MB = 1024 * 1024;

/** A gzip of `size` bytes of spaces, built by streaming (never holding the expanded bytes). */
async function gzipBomb(size: number): Promise<Buffer> {
  const gz = createGzip({ level: 9 });
  const out: Buffer[] = [];
  gz.on('data', (c: Buffer) => out.push(c));
  const done = new Promise<void>((r) => gz.on('end', r));
  const chunk = Buffer.alloc(MB, 0x20);
  for (let n = 0; n < size / MB; n++) if (!gz.write(chunk)) await new Promise((r) => gz.once('drain', r));
  gz.end();
  await done;
  return Buffer.concat(out);
}

const bomb = await gzipBomb(1024 * MB);
const upstream = createServer((req, res) => {
  if (req.url?.startsWith('/v1/notes/bomb')) return void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(bomb);
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(MB, 0x20);
  let sent = 0;
  res.on('close', () => (sent = Infinity));
  const pump = (): void => {
    while (sent < 200) {
      sent++;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    if (sent !== Infinity) res.end();
  };
  pump();
});
await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

const dir = mkdtempSync(join(tmpdir(), 'switchboard-mem-'));
const service = await startService({
  config: defaultServiceConfig({
    databaseUrl: join(dir, 'mem.db'),
    port: 0,
    logLevel: 'warn',
    syncScheduler: false,
    upstreamThrottle: false,
    rateLimitPerMinute: 0,
    connectorTypes: { granola: { baseUrl: upstreamUrl } },
  }),
  logDestination: process.stderr,
});
try {
  const app = await createApplication(new ServiceStore(service.database.db), { orgName: 'mem' });
  const tok = await request(`${service.url}/api/v1/account/applications/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: app.client_id, client_secret: app.client_secret }),
  });
  const token = ((await tok.body.json()) as { access_token: string }).access_token;
  // No credential check: this upstream answers every path with a hostile body.
  const c = await request(`${service.url}/api/v1/integrations/connectors?check=false`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ customer_name: 'm', connector_type: 'granola', name: 'g', credentials: { api_key: 'grn_memory_key' } }),
  });
  const connectorId = ((await c.body.json()) as { id: string }).id;
  global.gc?.();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const call = async (noteId: string): Promise<string> => {
    const r = await request(`${service.url}/api/v1/integrations/connectors/${connectorId}/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ entity: 'notes', action: 'get', params: { note_id: noteId } }),
    });
    const body = (await r.body.json()) as { code?: string };
    return `${r.statusCode} ${body.code ?? ''}`;
  };
  const answers = await Promise.all([...Array.from({ length: bodies }, () => call('not_big')), ...Array.from({ length: bombs }, () => call('bomb'))]);
  clearInterval(sampler);
  const counts = new Map<string, number>();
  for (const a of answers) counts.set(a, (counts.get(a) ?? 0) + 1);
  const mb = (n: number): string => `${(n / MB).toFixed(0)} MB`;
  console.log(`${bodies} × 200 MB body and ${bombs} × gzip bomb (${(bomb.length / MB).toFixed(2)} MB → 1024 MB) at once`);
  console.log(`answers: ${[...counts].map(([k, v]) => `${k} × ${v}`).join(', ')}`);
  console.log(`RSS: baseline ${mb(baseline)}, peak ${mb(peak)}`);
  const goal = bodies + bombs > 4 ? 400 : 300;
  const ok = peak < goal * MB && answers.every((a) => a === '502 upstream_response_too_large' || a === '503 upstream_memory_exhausted');
  console.log(
    `verdict: ${ok ? 'PASS' : 'FAIL'} (goal: peak RSS < ${goal} MB, every call refused: 502 upstream_response_too_large or 503 upstream_memory_exhausted): peak ${mb(peak)}`,
  );
  process.exitCode = ok ? 0 : 1;
} finally {
  await service.close();
  upstream.closeAllConnections();
  await new Promise<void>((r) => upstream.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
}
