/**
 * The proxy's cost: a GET of a 50-record page through the service's proxy route against a static
 * loopback upstream, beside the same request forwarded by a bare reverse proxy written on the
 * same stack (Fastify + undici's request, streaming the answer through). Same client, same
 * upstream, both in this process, measured alternately per round; answers checked byte-equal.
 * Prints latency (median per request) and CPU (process CPU per request) ratios and a verdict
 * per goal (≤ 1.15× each). Not a test: timings are never asserted anywhere.
 *
 *   npm run bench:proxy [-- --requests 400 --rounds 5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { Agent, request } from 'undici';
import { createApplication, defaultServiceConfig, startService } from '../../src/service/index.ts';
import { ServiceStore } from '../../src/store/index.ts';
import { median } from './lib.ts';

const { values: args } = parseArgs({ strict: false, options: { requests: { type: 'string', default: '400' }, rounds: { type: 'string', default: '5' } } });
const REQUESTS = Number(args.requests);
const ROUNDS = Number(args.rounds);

const page = JSON.stringify({
  notes: Array.from({ length: 50 }, (_, i) => ({
    id: `not_${i}`,
    title: `Note ${i}`,
    owner: { name: 'A', email: 'a@example.com' },
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-02T00:00:00Z',
    summary: 'x'.repeat(200),
  })),
  hasMore: true,
  cursor: 'c2',
});
const upstream = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'x-ratelimit-remaining': '99' });
  res.end(page);
});
await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;

// The baseline: a bare streaming reverse proxy on Fastify + undici, adding the same bearer header.
const agent = new Agent({ keepAliveTimeout: 10_000 });
const bare = Fastify();
bare.get('/proxy/*', async (req, reply) => {
  const rest = req.url.slice('/proxy/'.length);
  const res = await request(`${upstreamUrl}/${rest}`, { dispatcher: agent, headers: { authorization: 'Bearer grn_bench', accept: 'application/json' } });
  reply.code(res.statusCode).header('content-type', String(res.headers['content-type']));
  return reply.send(res.body);
});
const bareUrl = await bare.listen({ port: 0, host: '127.0.0.1' });

const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-proxy-'));
const service = await startService({
  config: defaultServiceConfig({
    databaseUrl: join(dir, 'bench.db'),
    port: 0,
    host: '127.0.0.1',
    logLevel: 'warn',
    rateLimitPerMinute: 0,
    upstreamThrottle: false,
    syncScheduler: false,
    connectorTypes: { granola: { baseUrl: upstreamUrl } },
  }),
  logDestination: process.stderr,
});
const app = await createApplication(new ServiceStore(service.database.db), { orgName: 'bench' });
const token = (
  (await (
    await fetch(`${service.url}/api/v1/account/applications/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: app.client_id, client_secret: app.client_secret }),
    })
  ).json()) as { access_token: string }
).access_token;
const created = (await (
  await fetch(`${service.url}/api/v1/integrations/connectors?check=false`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ customer_name: 'bench', connector_type: 'granola', name: 'bench', credentials: { api_key: 'grn_bench' } }),
  })
).json()) as { id: string };

const client = new Agent({ keepAliveTimeout: 10_000 });
const sides = {
  service: { url: `${service.url}/api/v1/integrations/connectors/${created.id}/proxy/v1/notes?page_size=50`, headers: { authorization: `Bearer ${token}` } },
  bare: { url: `${bareUrl}/proxy/v1/notes?page_size=50`, headers: {} },
};

async function once(side: keyof typeof sides): Promise<string> {
  const res = await request(sides[side].url, { dispatcher: client, headers: sides[side].headers });
  return res.body.text();
}

const service1 = await once('service');
const bare1 = await once('bare');
const equal = service1 === page && bare1 === page;
console.log(`results equal on both sides: ${equal ? 'yes' : 'NO'}`);

const results: Record<keyof typeof sides, { latency: number[]; cpu: number[] }> = { service: { latency: [], cpu: [] }, bare: { latency: [], cpu: [] } };
for (let round = 0; round < ROUNDS; round++) {
  for (const side of (round % 2 === 0 ? ['service', 'bare'] : ['bare', 'service']) as (keyof typeof sides)[]) {
    for (let i = 0; i < 50; i++) await once(side);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < REQUESTS; i++) await once(side);
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    results[side].latency.push((ms * 1000) / REQUESTS);
    results[side].cpu.push((cpu.user + cpu.system) / REQUESTS);
  }
}
const lat = median(results.service.latency) / median(results.bare.latency);
const cpu = median(results.service.cpu) / median(results.bare.cpu);
console.log(
  `proxy GET of a 50-record page: ${median(results.service.latency).toFixed(0)} vs ${median(results.bare.latency).toFixed(0)} µs per request; CPU ${median(results.service.cpu).toFixed(0)} vs ${median(results.bare.cpu).toFixed(0)} µs per request (client, service and upstream in one process)`,
);
console.log(
  `goal: proxy latency ≤ 1.15× a bare Fastify + undici reverse proxy (results equal): ${lat <= 1.15 && equal ? 'met' : 'NOT met'} (${lat.toFixed(3)}×)`,
);
console.log(
  `goal: proxy CPU per request ≤ 1.15× a bare Fastify + undici reverse proxy (results equal): ${cpu <= 1.15 && equal ? 'met' : 'NOT met'} (${cpu.toFixed(3)}×)`,
);

await service.close();
await bare.close();
await agent.close();
await client.close();
upstream.close();
rmSync(dir, { recursive: true, force: true });
