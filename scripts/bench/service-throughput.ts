/**
 * Service throughput: `execute` of a Granola `get` through the hosted service (bearer token
 * lookup, connector row, decrypted credentials, the interpreter) against a bare Fastify route
 * that makes the same upstream call on the same transport (undici's `request`,
 * src/http/upstream-transport.ts, the interpreter's default), loaded by autocannon over loopback
 * in one run. The goals (issue 15): the service at ≥ 0.8× the bare route's requests/s, and at
 * ≤ 1/0.8 of its server CPU time per request. A second bare route on global fetch is shown for
 * reference. Every target's answer is checked equal (the whole note) before anything is timed;
 * each figure is printed as min and median of the rounds, and each ratio as the median of the
 * per-round ratios (a round runs the targets back to back, rotating their order).
 *
 * Both servers run the built JavaScript (dist/, built first), as `switchboard serve` does, not
 * the TypeScript through tsx's loader, whose transform adds work of its own to every call.
 * The sync scheduler is off: the bare route has no background work either.
 *
 * Three processes so no side's CPU is charged to another: the Granola simulator (rate limit
 * off), the servers (Switchboard on SQLite + the bare route, both logging at warn), and this
 * process driving autocannon. Upstream throttling and the per-organization limit are off: the
 * benchmark measures the service, not Granola's 5 requests/s.
 *
 * Run: npm run bench:service-throughput [-- --duration 4 --connections 16 --rounds 7]
 * (many short rounds: on a shared machine their median ratio moves less than that of a few long ones)
 * BENCH_METRICS=1 runs the service with its metrics on (SWITCHBOARD_METRICS_PORT), to compare.
 * `--cpu-prof DIR` writes the server process's V8 CPU profile into DIR (open it in Chrome DevTools).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startSimProcess } from './lib.ts';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

interface ServerInfo {
  service_url: string;
  bare_url: string;
  token: string;
  connector_id: string;
  note_id: string;
}

/** Child mode: run Switchboard and the bare route, print how to reach them, serve until killed. */
async function serveMode(): Promise<void> {
  const granolaUrl = process.env['BENCH_GRANOLA_URL'] as string;
  const apiKey = process.env['BENCH_GRANOLA_KEY'] as string;
  const { default: Fastify } = await import('fastify');
  const dist = (path: string): string => new URL(`../../dist/src/${path}`, import.meta.url).href;
  const { defaultServiceConfig, startService, createApplication } = (await import(dist('service/index.js'))) as typeof import('../../src/service/index.ts');
  const { ServiceStore } = (await import(dist('store/index.js'))) as typeof import('../../src/store/index.ts');
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-'));
  const service = await startService({
    config: defaultServiceConfig({
      databaseUrl: join(dir, 'bench.db'),
      port: 0,
      host: '127.0.0.1',
      logLevel: 'warn',
      rateLimitPerMinute: 0,
      upstreamThrottle: false,
      syncScheduler: false,
      connectorTypes: { granola: { baseUrl: granolaUrl } },
      // BENCH_METRICS=1: with Prometheus metrics on (docs/operations.md), to compare with them off.
      ...(process.env['BENCH_METRICS'] === '1' ? { metricsPort: 0 } : {}),
    }),
    // stdout carries the one JSON line the driver reads; logs go to stderr.
    logDestination: process.stderr,
  });
  const app = await createApplication(new ServiceStore(service.database.db), { orgName: 'bench' });
  const tokenRes = await fetch(`${service.url}/api/v1/account/applications/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: app.client_id, client_secret: app.client_secret }),
  });
  const token = ((await tokenRes.json()) as { access_token: string }).access_token;
  const created = await fetch(`${service.url}/api/v1/integrations/connectors`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ customer_name: 'bench', connector_type: 'granola', name: 'bench', credentials: { api_key: apiKey } }),
  });
  const connectorId = ((await created.json()) as { id: string }).id;
  const list = await fetch(`${granolaUrl}/v1/notes?page_size=1`, { headers: { authorization: `Bearer ${apiKey}` } });
  const noteId = ((await list.json()) as { notes: { id: string }[] }).notes[0]?.id as string;

  // The baseline: what a hand-written proxy route would do for the same request.
  const bare = Fastify({ logger: { level: 'warn' } });
  bare.post<{ Body: { params: { note_id: string } } }>('/bare/execute', async (request, reply) => {
    const res = await fetch(`${granolaUrl}/v1/notes/${encodeURIComponent(request.body.params.note_id)}`, {
      headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' },
    });
    const body: unknown = await res.json();
    if (!res.ok) return reply.code(502).send({ error: body });
    return { data: body };
  });
  const { createUpstreamTransport } = (await import(dist('http/upstream-transport.js'))) as typeof import('../../src/http/upstream-transport.ts');
  const transport = createUpstreamTransport();
  bare.post<{ Body: { params: { note_id: string } } }>('/bare-transport/execute', async (request, reply) => {
    // The transport's lean path (what the interpreter itself uses): status, headers and the bounded body, no WHATWG Response.
    const res = await transport.send(`${granolaUrl}/v1/notes/${encodeURIComponent(request.body.params.note_id)}`, {
      method: 'GET',
      headers: { authorization: `Bearer ${apiKey}`, accept: 'application/json' },
    });
    const body: unknown = JSON.parse(res.body.toString('utf8'));
    if (res.status < 200 || res.status > 299) return reply.code(502).send({ error: body });
    return { data: body };
  });
  // The server process's CPU time so far (µs): the driver reads it around each load to get CPU per request.
  bare.get('/bench/cpu', async () => {
    const u = process.cpuUsage();
    return { us: u.user + u.system };
  });
  await bare.listen({ port: 0, host: '127.0.0.1' });
  const addr = bare.server.address();
  const bareUrl = typeof addr === 'object' && addr !== null ? `http://127.0.0.1:${addr.port}` : '';
  const info: ServerInfo = { service_url: service.url, bare_url: bareUrl, token, connector_id: connectorId, note_id: noteId };
  process.stdout.write(`${JSON.stringify(info)}\n`);
  const stop = (): void => {
    void Promise.all([service.close(), bare.close(), transport.close()]).finally(() => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

interface Figures {
  rps: number;
  /** Server process CPU time per request, µs. */
  cpu: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

async function serverCpu(bareUrl: string): Promise<number> {
  return ((await (await fetch(`${bareUrl}/bench/cpu`)).json()) as { us: number }).us;
}

async function load(bareUrl: string, url: string, headers: Record<string, string>, body: string, duration: number, connections: number): Promise<Figures> {
  const cpu0 = await serverCpu(bareUrl);
  const r = await new Promise<autocannon.Result>((resolve, reject) => {
    autocannon({ url, method: 'POST', headers, body, duration, connections }, (err, result) => (err ? reject(err) : resolve(result)));
  });
  const cpu = (await serverCpu(bareUrl)) - cpu0;
  return { rps: r.requests.average, cpu: cpu / Math.max(1, r.requests.total), p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
}

async function driverMode(): Promise<void> {
  const duration = arg('duration', 4);
  const connections = arg('connections', 16);
  const rounds = arg('rounds', 7);
  const sims = await startSimProcess({ SIM_NO_RATE_LIMIT: '1' });
  const granola = sims.connectors['granola'];
  if (!granola) throw new Error('no Granola simulator');
  // The servers run the built JavaScript: bring dist/ up to date (incremental).
  execFileSync(process.execPath, [fileURLToPath(new URL('../build.mjs', import.meta.url))], { stdio: 'inherit' });
  const profileAt = process.argv.indexOf('--cpu-prof');
  const profile = profileAt > 0 ? ['--cpu-prof', '--cpu-prof-dir', process.argv[profileAt + 1] as string] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', fileURLToPath(import.meta.url), '--serve'], {
    env: { ...process.env, BENCH_GRANOLA_URL: granola.base_url, BENCH_GRANOLA_KEY: granola.credentials['api_key'] as string },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`server process exited with ${code}`)));
    });
    const info = JSON.parse(line) as ServerInfo;
    const body = JSON.stringify({ entity: 'notes', action: 'get', params: { note_id: info.note_id } });
    const targets = {
      service: {
        url: `${info.service_url}/api/v1/integrations/connectors/${info.connector_id}/execute`,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${info.token}` },
      },
      bare: { url: `${info.bare_url}/bare/execute`, headers: { 'content-type': 'application/json' } },
      bareTransport: { url: `${info.bare_url}/bare-transport/execute`, headers: { 'content-type': 'application/json' } },
    };
    type Target = keyof typeof targets;
    // The same answer from every target (the whole note) before measuring anything.
    const answers = new Map<string, string>();
    for (const [name, t] of Object.entries(targets)) {
      const r = await fetch(t.url, { method: 'POST', headers: t.headers, body });
      if (r.status !== 200) throw new Error(`${name} answered ${r.status}: ${await r.text()}`);
      answers.set(name, JSON.stringify(((await r.json()) as { data: unknown }).data));
    }
    if (new Set(answers.values()).size !== 1) throw new Error(`the targets answered differently:\n${[...answers].map(([k, v]) => `${k}: ${v}`).join('\n')}`);
    console.log(`the service and both bare routes return the same note (${answers.get('service')?.length ?? 0} bytes of JSON)`);
    const load1 = (): string => loadavg()[0]!.toFixed(1);
    console.log(
      `warming up (3 s each), then ${rounds} alternating round(s) of ${duration} s per target, ${connections} connections; ${availableParallelism()} cores, load average ${load1()}`,
    );
    for (const t of Object.values(targets)) await load(info.bare_url, t.url, t.headers, body, 3, connections);
    const results: Record<Target, Figures[]> = { service: [], bare: [], bareTransport: [] };
    const names: Target[] = ['service', 'bareTransport', 'bare'];
    for (let i = 0; i < rounds; i++) {
      // Rotate the order so no target always runs first or last on a warmer (or busier) machine.
      const order = names.map((_, k) => names[(k + i) % names.length] as Target);
      for (const name of order) results[name].push(await load(info.bare_url, targets[name].url, targets[name].headers, body, duration, connections));
    }
    const median = (xs: number[]): number => {
      const v = [...xs].sort((a, b) => a - b);
      return v.length % 2 === 1 ? (v[(v.length - 1) / 2] as number) : ((v[v.length / 2 - 1] as number) + (v[v.length / 2] as number)) / 2;
    };
    const pick = (xs: Figures[], k: keyof Figures): number[] => xs.map((x) => x[k]);
    const row = (name: string, xs: Figures[]): string => {
      const rps = pick(xs, 'rps');
      const cpu = pick(xs, 'cpu');
      return `${name.padEnd(34)} req/s min ${Math.min(...rps)
        .toFixed(0)
        .padStart(5)} median ${median(rps).toFixed(0).padStart(5)}   server CPU µs/request min ${Math.min(...cpu)
        .toFixed(0)
        .padStart(
          4,
        )} median ${median(cpu).toFixed(0).padStart(4)}   p50 ${median(pick(xs, 'p50')).toFixed(1)} ms  p99 ${median(pick(xs, 'p99')).toFixed(1)} ms   non-2xx ${pick(xs, 'non2xx').reduce((a, b) => a + b, 0)}  errors ${pick(xs, 'errors').reduce((a, b) => a + b, 0)}`;
    };
    console.log(
      `load average at the end: ${load1()}${loadavg()[0]! > availableParallelism() ? ' (above the core count: other work shared the machine, the figures are noisy)' : ''}`,
    );
    console.log(row('switchboard execute (granola get)', results.service));
    console.log(row('bare route, service transport', results.bareTransport));
    console.log(row('bare route, fetch (reference)', results.bare));
    const failed = names.filter((n) => results[n].some((x) => x.non2xx > 0 || x.errors > 0));
    if (failed.length > 0) throw new Error(`non-2xx answers or errors under load from: ${failed.join(', ')}`);
    // Per-round ratios: each round's targets ran back to back, so a round's ratio is least
    // disturbed by load that comes and goes on a shared machine; their median is the figure.
    const perRound = (f: (i: number) => number): number[] => results.service.map((_, i) => f(i));
    const rpsRatios = perRound((i) => (results.service[i] as Figures).rps / (results.bareTransport[i] as Figures).rps);
    const cpuRatios = perRound((i) => (results.bareTransport[i] as Figures).cpu / (results.service[i] as Figures).cpu);
    const fetchRatios = perRound((i) => (results.service[i] as Figures).rps / (results.bare[i] as Figures).rps);
    const list = (xs: number[]): string => xs.map((r) => r.toFixed(2)).join(', ');
    console.log(`reference: service / bare route on fetch, req/s ${median(fetchRatios).toFixed(3)} (rounds ${list(fetchRatios)})`);
    const rpsRatio = median(rpsRatios);
    const cpuRatio = median(cpuRatios);
    console.log(
      `goal: service req/s ≥ 0.8× a bare route on the same transport: ${rpsRatio >= 0.8 ? 'met' : 'NOT met'} (${rpsRatio.toFixed(3)}× median of rounds: ${list(rpsRatios)})`,
    );
    console.log(
      `goal: service server CPU per request ≤ 1/0.8 of a bare route's on the same transport: ${cpuRatio >= 0.8 ? 'met' : 'NOT met'} (bare/service ${cpuRatio.toFixed(3)} median of rounds: ${list(cpuRatios)}; ${median(pick(results.service, 'cpu')).toFixed(0)} vs ${median(pick(results.bareTransport, 'cpu')).toFixed(0)} µs per request)`,
    );
  } finally {
    child.kill('SIGTERM');
    sims.stop();
  }
}

if (process.argv.includes('--serve')) await serveMode();
else await driverMode();
