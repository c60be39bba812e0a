/**
 * Two service instances, one Granola connector, Granola's real limit (5 requests/s sustained,
 * bursts of 25): both instances execute `notes.get` under load from their own clients while
 * their schedulers sync the connector, and every upstream request goes through a counting
 * proxy in front of the simulator. The connector's throttle is shared through PostgreSQL
 * (default) or Redis (`--redis`), so together they should hold Granola's ceiling without 429s.
 *
 * Prints the achieved upstream rate over the measured window (after the first burst) against
 * the 5/s ceiling, the count of 429s, and a verdict line (goal: ≥ 90 % of the ceiling, 0 × 429).
 *
 * Needs PostgreSQL: SWITCHBOARD_TEST_POSTGRES_URL (or BENCH_POSTGRES_URL); a fresh schema is
 * created and dropped. Run: npm run bench:two-instances [-- --seconds 30 --clients 8 --redis]
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { request } from 'undici';
import { startGranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { createApplication, defaultServiceConfig, startService, type RunningService } from '../../src/service/index.ts';
import { generateKeySpec, ServiceStore } from '../../src/store/index.ts';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

const PG = process.env['BENCH_POSTGRES_URL'] ?? process.env['SWITCHBOARD_TEST_POSTGRES_URL'];
if (PG === undefined || PG.trim() === '') {
  console.error('two-instances bench: set SWITCHBOARD_TEST_POSTGRES_URL (or BENCH_POSTGRES_URL) to a PostgreSQL database');
  process.exit(2);
}
const seconds = arg('seconds', 30);
const clientsPerInstance = arg('clients', 8);
const warmupSeconds = arg('warmup', 6);
const useRedis = process.argv.includes('--redis');
const CEILING = 5; // Granola: 5 requests/s sustained

const sim = await startGranolaSimulator({ size: 120 });

// Counting proxy: every upstream request of both instances, with its status and time.
const log: { at: number; status: number }[] = [];
const proxy: Server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    void (async () => {
      const headers = { ...req.headers };
      delete headers['host'];
      delete headers['connection'];
      const body = Buffer.concat(chunks);
      const up = await request(sim.url + (req.url ?? '/'), { method: (req.method ?? 'GET') as 'GET', headers, ...(body.length > 0 ? { body } : {}) });
      const out = Buffer.from(await up.body.arrayBuffer());
      log.push({ at: Date.now(), status: up.statusCode });
      const h: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && k !== 'transfer-encoding' && k !== 'connection') h[k] = v;
      res.writeHead(up.statusCode, h).end(out);
    })().catch((e: unknown) => res.writeHead(502).end(String(e)));
  });
});
await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

const schema = `sbbench_${randomBytes(5).toString('hex')}`;
const admin = new pg.Client({ connectionString: PG });
await admin.connect();
await admin.query(`create schema ${schema}`);

const encryptionKey = generateKeySpec();
const config = defaultServiceConfig({
  databaseUrl: PG,
  encryptionKey,
  port: 0,
  host: '127.0.0.1',
  logLevel: 'warn',
  rateLimitPerMinute: 0,
  syncIntervalSeconds: 5,
  connectorTypes: { granola: { baseUrl: proxyUrl } },
  ...(useRedis ? { redisUrl: process.env['SWITCHBOARD_REDIS_URL'] ?? 'redis://127.0.0.1:6379' } : {}),
});
const instances: RunningService[] = [];
let exitCode = 0;
try {
  for (let i = 0; i < 2; i++) instances.push(await startService({ config, schema, logDestination: process.stderr }));
  const [a, b] = instances as [RunningService, RunningService];
  const app = await createApplication(new ServiceStore(a.database.db), { orgName: 'bench' });
  const tokenRes = await request(`${a.url}/api/v1/account/applications/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: app.client_id, client_secret: app.client_secret }),
  });
  const token = ((await tokenRes.body.json()) as { access_token: string }).access_token;
  const created = await request(`${a.url}/api/v1/integrations/connectors`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ customer_name: 'bench', connector_type: 'granola', name: 'granola', credentials: { api_key: sim.apiKey } }),
  });
  const connectorId = ((await created.body.json()) as { id: string }).id;
  const ids = sim.ids();
  const start = Date.now();
  const end = start + seconds * 1000;
  const outcomes = new Map<string, number>();
  const client = async (url: string, n: number): Promise<void> => {
    for (let i = n; Date.now() < end; i += clientsPerInstance) {
      const r = await request(`${url}/api/v1/integrations/connectors/${connectorId}/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ entity: 'notes', action: 'get', params: { note_id: ids[i % ids.length] } }),
      });
      const body = (await r.body.json()) as { code?: string };
      const key = r.statusCode === 200 ? '200' : `${r.statusCode} ${body.code ?? ''}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    }
  };
  await Promise.all([a, b].flatMap((s) => Array.from({ length: clientsPerInstance }, (_, n) => client(s.url, n))));
  const windowStart = start + warmupSeconds * 1000;
  const inWindow = log.filter((e) => e.at >= windowStart && e.at <= end && e.status < 400).length;
  const windowSeconds = (end - windowStart) / 1000;
  const rate = inWindow / windowSeconds;
  const limited = log.filter((e) => e.status === 429).length;
  const status = await request(`${b.url}/api/v1/integrations/connectors/${connectorId}/sync`, { headers: { authorization: `Bearer ${token}` } });
  const sync = (await status.body.json()) as { status: string; entities: Record<string, { records: number }> };
  console.log(
    `two instances on PostgreSQL, limits through ${useRedis ? 'Redis' : 'PostgreSQL'}; ${clientsPerInstance} clients per instance for ${seconds} s, plus both schedulers syncing`,
  );
  console.log(`upstream requests: ${log.length} (${log.filter((e) => e.status < 400).length} ok, ${limited} × 429)`);
  console.log(`client outcomes: ${[...outcomes].map(([k, v]) => `${k}: ${v}`).join(', ')}`);
  console.log(`sync: ${sync.status}, notes stored: ${sync.entities['notes']?.records ?? 0}`);
  console.log(
    `achieved ${rate.toFixed(2)} req/s over the last ${windowSeconds.toFixed(0)} s vs ceiling ${CEILING}/s = ${((rate / CEILING) * 100).toFixed(1)} %`,
  );
  const ok = rate >= 0.9 * CEILING && limited === 0;
  console.log(`verdict: ${ok ? 'PASS' : 'FAIL'} (goal: ≥ 90 % of Granola's ceiling with 0 × 429): ${((rate / CEILING) * 100).toFixed(1)} %, ${limited} × 429`);
  if (!ok) exitCode = 1;
} finally {
  for (const s of instances) await s.close();
  await admin.query(`drop schema if exists ${schema} cascade`);
  await admin.end();
  proxy.closeAllConnections();
  await new Promise<void>((r) => proxy.close(() => r()));
  await sim.close();
}
process.exit(exitCode);
