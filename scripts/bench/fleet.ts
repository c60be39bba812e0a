/**
 * The cost of a fleet of connectors: how memory, the scheduler, sync throughput and execute
 * latency grow with the number of connectors, against the sandbox's Granola simulator (in a
 * child process, scripts/bench/fleet-sims.ts), on SQLite (one instance) and on PostgreSQL (two
 * instances sharing one schema, their limits shared through it). Each instance runs in a process
 * of its own (fleet-instance.ts), as deployed, and the probe's calls come from another
 * (fleet-probe.ts): this process only drives them and reads the database.
 *
 *   npm run bench:fleet -- [--connectors 10000] [--sync 100] [--seconds 20] [--probes 10] [--dialects sqlite,postgres] [--api-instance] [--no-pin]
 *
 * For each dialect, in order:
 * 1. Memory per idle connector: connectors created through the API and each used once (an
 *    execute of notes.list, so its runtime, throttle and cached row exist), at 100, 1,000 and
 *    10,000 (up to --connectors): JS heap + external memory after a full GC, less the same
 *    before the first connector, per connector; RSS beside it. Schedules are rows of
 *    sync_state, not memory. Goal: < 10 kB per idle connector.
 * 2. Sync throughput: --sync connectors (default 100) sync at once, each with its own API key
 *    on its own simulator with Granola's real limit (bursts of 25, 5 requests/s per key): upstream
 *    requests/s and records/s over the window after the bursts, against the sum of the keys'
 *    ceilings (5/s each); 429s counted; each connector's share (none starved: every connector's
 *    rate ≥ half the median's). Goals: ≥ 90 % of the ceilings' sum, 0 × 429, none starved.
 * 3. Execute latency of connectors that do not sync (--probes, default 10, each with its own key
 *    and a Granola get every 400 ms; their simulators in a process of their own, called from a
 *    client process of its own, fleet-probe.ts) while those syncs run, against the same
 *    connectors' latency with nothing syncing: a few hundred calls a side, so the p99 is not one
 *    call's. Goal: p99 < 2× idle p99.
 * 4. The scheduler at --connectors (default 10,000) with staggered schedules (every connector
 *    every 10 minutes, spread evenly: about 17 due per second at 10,000): the cost of each tick
 *    (find the due connectors, check and start them), and how long a due connector waits to
 *    start (started_at − its next_run_at). Goals: tick p95 < 50 ms; start delay p99 < the poll
 *    interval (5 s) + 1 s.
 *
 * One `goal:` line per goal and dialect. Exit 1 when any is not met. The instances run with
 * --expose-gc: the memory figures need full collections.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { execFileSync, fork, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { request } from 'undici';
import { createApplication } from '../../src/service/index.ts';
import { openDatabase, type Database } from '../../src/store/database.ts';
import { generateKeySpec, ServiceStore, type ServiceTables } from '../../src/store/index.ts';
import { dueConnectors } from '../../src/sync/scheduler.ts';
import type { SyncTables } from '../../src/sync/sync-migrations.ts';
import { api, execute, type Api } from './fleet-client.ts';
import type { InstanceSpec } from './fleet-instance.ts';
import type { Exchange } from './fleet-fetch.ts';
import { percentile } from './lib.ts';

const { values: args } = parseArgs({
  strict: false,
  options: {
    connectors: { type: 'string', default: '10000' },
    sync: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '20' },
    dialects: { type: 'string', default: 'sqlite,postgres' },
    'api-instance': { type: 'boolean', default: false },
    probes: { type: 'string', default: '10' },
    pin: { type: 'boolean', default: true },
    'no-pin': { type: 'boolean', default: false },
  },
});
const CONNECTORS = Number(args.connectors);
const SYNCING = Number(args.sync);
const SECONDS = Number(args.seconds);
const DIALECTS = String(args.dialects).split(',');
/**
 * Connectors measured for execute latency, each calling at 2.5/s: a p99 needs a few hundred
 * calls (over 50 calls it is the slowest one), and more calls of one connector would meet its
 * own rate limit instead of the service's latency.
 */
const PROBES = Number(args.probes);
/** PostgreSQL: the probe calls a third instance that syncs nothing (SWITCHBOARD_SYNC_SCHEDULER=false), as the README advises for request latency. */
const API_INSTANCE = args['api-instance'] === true;
const PG_URL = process.env['SWITCHBOARD_BENCH_POSTGRES_URL'] ?? process.env['SWITCHBOARD_TEST_POSTGRES_URL'];
/**
 * Where the processes run. In production the upstreams and the callers are other machines: their
 * CPU is not the service's. Here they share the machine; with --pin (Linux, `taskset`, 2 CPUs or
 * more) the service's instances get the first CPUs and everything standing in for the rest of
 * the world (the simulators, the probes' client, this process) the last one. Each process is
 * pinned with all its threads; threads started later inherit their creator's CPUs. The
 * PostgreSQL server is not pinned: it is the machine's, and serves both sides. On by default
 * since the sync worker (issue 25's seventh round): with the syncs' pages off the thread that
 * serves requests, one CPU holds an instance syncing 100 connectors of 10,000; `--no-pin` shares
 * every CPU with everything, as before.
 */
const CPUS = availableParallelism();
const WORLD_CPU = String(CPUS - 1);
const SERVICE_CPUS = CPUS === 2 ? '0' : `0-${CPUS - 2}`;
const pin = (pid: number, cpus: string): boolean => {
  try {
    execFileSync('taskset', ['-a', '-cp', cpus, String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
// Pinning this process first: the simulators and the probes' client, its children, inherit it.
// (With several dialects, this process only starts one process per dialect, each pinning itself.)
const PIN = args.pin === true && args['no-pin'] !== true;
const PINNED = DIALECTS.length === 1 && PIN && process.platform === 'linux' && CPUS >= 2 && pin(process.pid, WORLD_CPU);
/** Granola's limit per key: the simulators enforce it, the manifest states it. */
const BURST = 25;
const PER_SECOND = 5;
/** The sync engine's default poll interval (SyncEngineOptions.pollMs), which the service keeps. */
const POLL_MS = 5000;
/** Notes per limited simulator: enough that every sync outlasts the window. */
const NOTES = BURST + PER_SECOND * (SECONDS + 10) + 30;
const CHECKPOINTS = [...new Set([100, 1000, 10_000].filter((n) => n < CONNECTORS).concat(CONNECTORS))];

// Several dialects: each in a process of its own, so one's memory figures start clean of the
// other's (connections kept alive, buffers not yet collected).
if (DIALECTS.length > 1) {
  const lines: string[] = [];
  let failed = false;
  for (const d of DIALECTS) {
    const argv = process.argv.slice(2).filter((a, i, all) => a !== '--dialects' && all[i - 1] !== '--dialects' && !a.startsWith('--dialects='));
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, ...argv, '--dialects', d], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      process.stdout.write(b);
      out += b.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    lines.push(...out.split('\n').filter((l) => l.startsWith('goal: ')));
    if (code !== 0) failed = true;
  }
  console.log(`\nall dialects: ${lines.filter((g) => /: met \(/.test(g)).length} of ${lines.length} fleet goals met`);
  process.exit(failed ? 1 : 0);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const fmt = (ms: number): string => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const goals: string[] = [];
const goal = (text: string, ok: boolean, detail: string): void => {
  const line = `goal: ${text}: ${ok ? 'met' : 'NOT met'} (${detail})`;
  goals.push(line);
  console.log(line);
};

async function mapLimit<T>(items: T[], limit: number, fn: (t: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

// --- the simulators, in their own process -------------------------------------------------------
interface Sims {
  limited: { url: string; apiKey: string }[];
  idle: { url: string; apiKey: string };
}
function startSims(argv: string[]): Promise<{ child: ReturnType<typeof spawn>; sims: Sims }> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./fleet-sims.ts', import.meta.url).pathname, ...argv], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', (l) => resolve({ child, sims: JSON.parse(l) as Sims }));
    child.once('exit', (code) => reject(new Error(`simulators exited with ${code}`)));
  });
}
const { child: simChild, sims } = await startSims(['--limited', String(SYNCING), '--size', String(NOTES)]);
// The probe connectors' upstreams in a process of their own: a customer's upstream is not slowed
// down by other customers' syncs, so their latency here is the service's.
const { child: probeChild, sims: probeSims } = await startSims(['--limited', String(PROBES), '--size', '50', '--key-prefix', 'grn_fleet_probe_']);
const PROBE_KEYS = probeSims.limited.map((s) => s.apiKey);
// The probe's client, in a process of its own too (fleet-probe.ts): it measures the service, not this process's event loop.
const probeClient = fork(new URL('./fleet-probe.ts', import.meta.url).pathname, [], {
  execArgv: ['--import', 'tsx'],
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});

// --- the instances, each in a process of its own (fleet-instance.ts) ------------------------------
const epochNow = (): number => performance.timeOrigin + performance.now();
/** Every instance reaches the simulators the same way: each key to its own, the idle fleet's to the unlimited one. */
const ROUTING = {
  routes: Object.fromEntries([...sims.limited, ...probeSims.limited].map((s) => [s.apiKey, s.url])),
  idle: sims.idle,
  syncKeys: sims.limited.map((s) => s.apiKey),
  probeKeys: PROBE_KEYS,
};
interface Instance {
  url: string;
  call<T = unknown>(op: string): Promise<T>;
  /** Close the service and wait for the process to end. */
  close(): Promise<void>;
}

function startInstance(spec: InstanceSpec): Promise<Instance> {
  const child = fork(new URL('./fleet-instance.ts', import.meta.url).pathname, [JSON.stringify(spec)], {
    // FLEET_CPU_PROF=<dir>: each instance writes a CPU profile there when it closes (node --cpu-prof).
    // FLEET_NODE_ARGS: more of node's flags for the instances only (e.g. --trace-gc).
    execArgv: [
      '--expose-gc',
      '--max-old-space-size=4096',
      '--import',
      'tsx',
      ...(process.env['FLEET_CPU_PROF'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['FLEET_CPU_PROF']}`] : []),
      ...(process.env['FLEET_NODE_ARGS']?.split(' ').filter(Boolean) ?? []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  if (PINNED && child.pid !== undefined && !pin(child.pid, SERVICE_CPUS)) {
    child.kill();
    throw new Error(`could not pin instance ${child.pid} to CPUs ${SERVICE_CPUS}`);
  }
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let next = 0;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      const e = new Error(`a fleet instance exited with ${code}`);
      reject(e);
      for (const w of waiting.values()) w.reject(e);
    });
    child.on('message', (m: { ready?: string; id?: number; result?: unknown; error?: string }) => {
      if (m.ready !== undefined) {
        const call = <T>(op: string): Promise<T> =>
          new Promise<T>((res, rej) => {
            const id = next++;
            waiting.set(id, { resolve: res as (v: unknown) => void, reject: rej });
            child.send({ id, op });
          });
        resolve({
          url: m.ready,
          call,
          close: async () => {
            await call('close').catch(() => undefined);
            await exited;
          },
        });
        return;
      }
      const w = waiting.get(m.id!);
      waiting.delete(m.id!);
      if (m.error !== undefined) w?.reject(new Error(m.error));
      else w?.resolve(m.result);
    });
  });
}

// --- one dialect ----------------------------------------------------------------------------------
async function createConnector(a: Api, name: string, apiKey: string): Promise<string> {
  const r = await api(a, 'POST', '/integrations/connectors?check=false', {
    customer_name: name,
    connector_type: 'granola',
    name,
    credentials: { api_key: apiKey },
  });
  if (r.status !== 201 && r.status !== 200) throw new Error(`create ${name}: ${r.status} ${JSON.stringify(r.json)}`);
  return String(r.json['id']);
}

async function runDialect(dialect: 'sqlite' | 'postgres'): Promise<void> {
  console.log(
    `\n=== ${dialect}${dialect === 'postgres' ? ` (two instances${API_INSTANCE ? ', and a third that serves the probe and syncs nothing' : ''})` : ''} ===`,
  );
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-fleet-'));
  const schema = `fleet_bench_${process.pid}`;
  let admin: pg.Client | undefined;
  if (dialect === 'postgres') {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
  }
  const spec: InstanceSpec = {
    databaseUrl: dialect === 'sqlite' ? join(dir, 'fleet.db') : PG_URL!,
    encryptionKey: generateKeySpec(),
    ...(dialect === 'postgres' ? { schema } : {}),
    ...ROUTING,
  };
  const instances: Instance[] = [];
  let apiOnly: Instance | undefined;
  let database: Database | undefined;
  try {
    for (let i = 0; i < (dialect === 'postgres' ? 2 : 1); i++) instances.push(await startInstance(spec));
    // The bench's own connection, to set schedules and read sync state beside the instances.
    database = openDatabase(spec.databaseUrl, spec.schema !== undefined ? { schema: spec.schema } : {});
    const db = database.db as Kysely<Record<string, Record<string, unknown>>>;
    const app = await createApplication(new ServiceStore(database.db as Kysely<ServiceTables>), { orgName: 'fleet' });
    const tok = await request(`${instances[0]!.url}/api/v1/account/applications/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: app.client_id, client_secret: app.client_secret }),
    });
    const token = ((await tok.body.json()) as { access_token: string }).access_token;
    const apis: Api[] = instances.map((s) => ({ url: s.url, token }));
    if (API_INSTANCE && dialect === 'postgres') apiOnly = await startInstance(spec);
    const probeApis: Api[] = apiOnly !== undefined ? [{ url: apiOnly.url, token }] : apis;
    const A = apis[0]!;
    const memory = (): Promise<{ heap: number; rss: number }> => instances[0]!.call('memory');

    // 1. Memory per idle connector.
    // Warm up with 50 connectors of their own (code compiled, pools and caches allocated), so the
    // figures are what one more connector costs, not the first one's one-off allocations.
    const warm = await Promise.all(Array.from({ length: 50 }, (_, i) => createConnector(A, `warm-${i}`, `grn_fleet_warm_${i}`)));
    for (let k = 0; k < 4; k++) for (const id of warm) await execute(A, id, 'list', {});
    const base = await memory();
    const idle: string[] = [];
    for (const n of CHECKPOINTS) {
      const started = performance.now();
      const fresh = Array.from({ length: n - idle.length }, (_, k) => idle.length + k);
      const ids: string[] = new Array(fresh.length);
      await mapLimit(fresh, 8, async (i, k) => {
        ids[k] = await createConnector(A, `idle-${i}`, `grn_fleet_idle_${i}`);
        await execute(A, ids[k]!, 'list', {});
      });
      idle.push(...ids);
      const m = await memory();
      const per = (m.heap - base.heap) / idle.length;
      console.log(
        `${idle.length.toLocaleString()} connectors created and used once in ${((performance.now() - started) / 1000).toFixed(0)} s; heap + external ${((m.heap - base.heap) / 1e6).toFixed(1)} MB above the start; the instance's RSS ${(m.rss / 1e6).toFixed(0)} MB (${(base.rss / 1e6).toFixed(0)} MB at the start: the allocator returns start-up pages late, so RSS is not a per-connector figure)`,
      );
      goal(
        `fleet memory per idle connector < 10 kB at ${idle.length.toLocaleString()} connectors (${dialect})`,
        per < 10_000,
        `${per.toFixed(0)} B per connector (heap + external after GC)`,
      );
    }

    // Pause the idle fleet while the syncs are measured.
    await db.updateTable('sync_state').set({ next_run_at: null }).execute();

    // 2. and 3. Throughput of concurrent syncs, and one connector's execute latency meanwhile.
    const syncing = await Promise.all(sims.limited.slice(0, SYNCING).map((s, i) => createConnector(A, `sync-${i}`, s.apiKey)));
    const probes = await Promise.all(PROBE_KEYS.map((key, i) => createConnector(A, `probe-${i}`, key)));
    await db
      .updateTable('sync_state')
      .set({ next_run_at: null })
      .where('connector_id', 'in', [...syncing, ...probes])
      .execute();
    // Each probe's simulator has notes of its own (its own seed).
    const probeTargets = await Promise.all(
      probes.map(async (connector) => ({
        connector,
        noteIds: (
          (await api(A, 'POST', `/integrations/connectors/${connector}/execute`, { entity: 'notes', action: 'list', params: {} })).json['data'] as {
            id: string;
          }[]
        ).map((n) => n.id),
      })),
    );
    /** The probes' calls for `seconds`, from the probe process (fleet-probe.ts): their latencies. */
    const probeRun = (seconds: number): Promise<number[]> =>
      new Promise((resolve, reject) => {
        const onExit = (code: number | null): void => reject(new Error(`the probe process exited with ${code}`));
        probeClient.once('exit', onExit);
        probeClient.once('message', (m: { latencies?: number[]; error?: string }) => {
          probeClient.off('exit', onExit);
          if (m.latencies !== undefined) resolve(m.latencies);
          else reject(new Error(`probe: ${m.error ?? 'no answer'}`));
        });
        probeClient.send({ apis: probeApis, targets: probeTargets, seconds });
      });
    await probeRun(3); // warm
    const serving = apiOnly !== undefined ? [apiOnly] : instances;
    await Promise.all(serving.map((s) => s.call('probe-upstream')));
    const idleLatency = await probeRun(Math.max(12, SECONDS / 2));
    const idleUpstream = (await Promise.all(serving.map((s) => s.call<number[]>('probe-upstream')))).flat();
    await Promise.all(instances.map((s) => s.call('exchanges')));
    const t0 = epochNow();
    await db.updateTable('sync_state').set({ next_run_at: new Date().toISOString() }).where('connector_id', 'in', syncing).execute();
    for (const s of instances) await s.call('sync-start');
    // The bursts are spent in the first 5 s (25 requests at 5/s of credit): measure after.
    await sleep(6000);
    for (const s of instances) await s.call('loop-start');
    const w0 = epochNow();
    const busyLatency = await probeRun(SECONDS);
    const w1 = epochNow();
    const busyUpstream = (await Promise.all(serving.map((s) => s.call<number[]>('probe-upstream')))).flat();
    for (const [i, s] of instances.entries()) {
      const loop = await s.call<{ p50: number; p99: number; max: number }>('loop-stop');
      console.log(
        `event loop delay of instance ${i + 1} while syncing: p50 ${loop.p50.toFixed(1)} ms, p99 ${loop.p99.toFixed(1)} ms, max ${loop.max.toFixed(1)} ms`,
      );
    }
    for (const s of instances) await s.call('sync-stop');
    const inWorker = (await Promise.all(instances.map((s) => s.call<number>('pages-run')))).reduce((a, b) => a + b, 0);
    console.log(`syncs' pages run in the sync worker (SWITCHBOARD_SYNC_IN_WORKER): ${inWorker} entity runs`);
    const exchanges = (await Promise.all(instances.map((s) => s.call<Exchange[]>('exchanges')))).flat();
    const startedBy = (await db.selectFrom('sync_state').select(['connector_id', 'started_at']).where('connector_id', 'in', syncing).execute()).filter(
      (r) => r['started_at'] !== null,
    ).length;
    const inWindow = exchanges.filter((e) => e.at >= w0 && e.at <= w1);
    const ok = inWindow.filter((e) => e.status < 400);
    const limited = exchanges.filter((e) => e.status === 429).length;
    if (process.env['FLEET_DEBUG'])
      console.log(
        exchanges
          .filter((e) => e.status === 429)
          .map((e) => `${e.key} +${((e.at - t0) / 1000).toFixed(2)}s n=${exchanges.filter((x) => x.key === e.key && x.at <= e.at).length}`)
          .join('\n'),
      );
    if (process.env['FLEET_DEBUG']) {
      // How bursty the syncs' upstream traffic is: exchanges per 50 ms over the window.
      const bins = new Array<number>(Math.ceil((w1 - w0) / 50)).fill(0);
      for (const e of inWindow) bins[Math.min(bins.length - 1, Math.floor((e.at - w0) / 50))]! += 1;
      const phase = new Array<number>(20).fill(0);
      for (const e of inWindow) phase[Math.floor((e.at % 1000) / 50)]! += 1;
      console.log(
        `sync exchanges per 50 ms: mean ${(inWindow.length / bins.length).toFixed(1)}, p90 ${percentile(bins, 90)}, max ${Math.max(...bins)}; by 50 ms of the second: ${phase.join(' ')}`,
      );
    }
    const secs = (w1 - w0) / 1000;
    const rate = ok.length / secs;
    const ceiling = SYNCING * PER_SECOND;
    const perKey = sims.limited.slice(0, SYNCING).map((s) => ok.filter((e) => e.key === s.apiKey).length / secs);
    const med = percentile(perKey, 50);
    const min = Math.min(...perKey);
    console.log(
      `${SYNCING} syncs at once (${startedBy} started within ${((w1 - t0) / 1000).toFixed(0)} s): ${rate.toFixed(1)} upstream requests/s and ${(ok.filter((e) => e.get).length / secs).toFixed(1)} records/s over ${secs.toFixed(0)} s, against the keys' ceilings ${ceiling}/s; per connector min ${min.toFixed(2)} / median ${med.toFixed(2)} / max ${Math.max(...perKey).toFixed(2)} requests/s; 429s: ${limited}`,
    );
    goal(
      `fleet sync throughput of ${SYNCING} concurrent syncs within 10 % of the sum of the upstreams' ceilings (${dialect})`,
      rate >= 0.9 * ceiling,
      `${rate.toFixed(1)} of ${ceiling} requests/s, ${((rate / ceiling) * 100).toFixed(1)} %; ${(ok.filter((e) => e.get).length / secs).toFixed(1)} records/s`,
    );
    goal(`fleet 0 × 429 during ${SYNCING} concurrent syncs (${dialect})`, limited === 0, `${limited} × 429 of ${exchanges.length} upstream requests`);
    goal(
      `fleet no connector starved during ${SYNCING} concurrent syncs (${dialect})`,
      perKey.every((r) => r >= 0.5 * med) && med > 0,
      `slowest ${min.toFixed(2)} requests/s vs median ${med.toFixed(2)} (${((min / med) * 100).toFixed(0)} %; starved: below 50 %)`,
    );
    const p = (xs: number[], q: number): number => percentile(xs, q);
    const tail = (xs: number[]): string => `p50 ${fmt(p(xs, 50))} / p90 ${fmt(p(xs, 90))} / p99 ${fmt(p(xs, 99))} / max ${fmt(Math.max(...xs))} ms`;
    console.log(`the probes' execute: idle ${tail(idleLatency)}; while syncing ${tail(busyLatency)}`);
    console.log(`its upstream round trips (the simulator's, as the instance saw them): idle ${tail(idleUpstream)}; while syncing ${tail(busyUpstream)}`);
    goal(
      `fleet execute p99 of ${PROBES} connector(s) while ${SYNCING} others sync < 2× their idle p99 (${dialect}${apiOnly !== undefined ? ', served by an instance that does not sync' : ''})`,
      p(busyLatency, 99) < 2 * p(idleLatency, 99),
      `p50 ${fmt(p(busyLatency, 50))} ms / p99 ${fmt(p(busyLatency, 99))} ms over ${busyLatency.length} calls, idle p50 ${fmt(p(idleLatency, 50))} ms / p99 ${fmt(p(idleLatency, 99))} ms over ${idleLatency.length}`,
    );

    // 4. The scheduler at the whole fleet, staggered schedules. A stopped sync engine never starts
    // again (stop() is the shutdown's), so this phase runs on instances started afresh over the
    // same database, as after a deploy.
    for (let i = 0; i < instances.length; i++) {
      await instances[i]!.close();
      instances[i] = await startInstance(spec);
    }
    await db.updateTable('sync_state').set({ next_run_at: null, lease_owner: null, lease_until: null }).execute();
    const everyMs = 600_000;
    const startAt = Date.now() + 2000;
    const scheduled = new Map<string, number>();
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < idle.length; i++) {
        const at = startAt + Math.floor((i / idle.length) * everyMs);
        scheduled.set(idle[i]!, at);
        await trx
          .updateTable('sync_state')
          .set({ next_run_at: new Date(at).toISOString(), interval_ms: everyMs })
          .where('connector_id', '=', idle[i]!)
          .execute();
      }
    });
    if (dialect === 'postgres') {
      const plan = await sql<{
        'QUERY PLAN': string;
      }>`EXPLAIN SELECT connector_id FROM sync_state WHERE next_run_at <= ${new Date(startAt + 10_000).toISOString()} AND (lease_until IS NULL OR lease_until < ${new Date().toISOString()}) ORDER BY next_run_at LIMIT 16`.execute(
        db,
      );
      console.log(`the scheduler's due query on PostgreSQL: ${plan.rows.map((r) => r['QUERY PLAN'].trim()).join(' / ')}`);
    }
    for (const s of instances) await s.call('time-ticks');
    for (const s of instances) await s.call('sync-start');
    await sleep(SECONDS * 1000 + 2000);
    const end = Date.now();
    for (const s of instances) await s.call('sync-stop');
    const ticks = (await Promise.all(instances.map((s) => s.call<number[]>('ticks')))).flat();
    const rows = await db
      .selectFrom('sync_state')
      .select(['connector_id', 'started_at'])
      .where('connector_id', 'in', idle.slice(0, Math.ceil((idle.length * (SECONDS + 2) * 1000) / everyMs) + 50))
      .execute();
    const delays: number[] = [];
    let notStarted = 0;
    for (const r of rows) {
      const at = scheduled.get(String(r['connector_id']))!;
      if (at > end - 1000) continue;
      if (r['started_at'] === null) {
        notStarted++;
        delays.push(end - at);
      } else delays.push(Date.parse(String(r['started_at'])) - at);
    }
    // The due query alone, with nothing else running: what a tick costs the database.
    const query: number[] = [];
    for (let k = 0; k < 200; k++) {
      const t = new Date(startAt + ((k * 7919) % everyMs)).toISOString();
      const q0 = performance.now();
      await dueConnectors(db as unknown as Kysely<SyncTables>, t, 16);
      query.push(performance.now() - q0);
    }
    console.log(
      `the scheduler's due query alone at ${idle.length.toLocaleString()} connectors, nothing else running: p50 ${fmt(percentile(query, 50))} ms, p95 ${fmt(percentile(query, 95))} ms over 200 runs`,
    );
    console.log(
      `scheduler over ${idle.length.toLocaleString()} connectors, one due every ${(everyMs / idle.length).toFixed(0)} ms: ${ticks.length} ticks on ${instances.length} instance(s), p50 ${fmt(percentile(ticks, 50))} / p95 ${fmt(percentile(ticks, 95))} / max ${fmt(Math.max(...ticks))} ms; ${delays.length} connectors came due, ${notStarted} not started by the end`,
    );
    goal(
      `fleet scheduler tick < 50 ms at ${idle.length.toLocaleString()} connectors, staggered schedules (${dialect})`,
      percentile(ticks, 95) < 50,
      `p95 ${fmt(percentile(ticks, 95))} ms, p50 ${fmt(percentile(ticks, 50))} ms, max ${fmt(Math.max(...ticks))} ms over ${ticks.length} ticks`,
    );
    goal(
      `fleet due connector start delay p99 < ${(POLL_MS + 1000) / 1000} s (the poll interval + 1 s) at ${idle.length.toLocaleString()} connectors (${dialect})`,
      delays.length > 0 && percentile(delays, 99) < POLL_MS + 1000,
      `p50 ${(percentile(delays, 50) / 1000).toFixed(2)} s, p99 ${(percentile(delays, 99) / 1000).toFixed(2)} s, max ${(Math.max(...delays) / 1000).toFixed(2)} s over ${delays.length} due connectors (${notStarted} not started by the end, counted at the end)`,
    );
  } finally {
    for (const s of instances) await s.close();
    await apiOnly?.close();
    await database?.close();
    if (admin !== undefined) {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  console.log(
    `fleet bench: up to ${CONNECTORS.toLocaleString()} connectors, ${SYNCING} syncing at once, ${SECONDS} s windows; Granola simulators in a child process (${NOTES} notes per limited key)`,
  );
  if (PIN) {
    console.log(
      PINNED
        ? `CPUs (--pin): the instances on ${SERVICE_CPUS}, the simulators, the probes' client and this process on ${WORLD_CPU}, of ${CPUS}`
        : `CPUs: --pin not applied (needs Linux, taskset and 2 CPUs or more; ${CPUS} here)`,
    );
  }
  for (const d of DIALECTS) {
    if (d === 'postgres' && (PG_URL === undefined || PG_URL === '')) {
      goal('fleet on PostgreSQL (two instances)', false, 'not measured: set SWITCHBOARD_TEST_POSTGRES_URL');
      continue;
    }
    await runDialect(d as 'sqlite' | 'postgres');
  }
} finally {
  simChild.kill();
  probeChild.kill();
  probeClient.kill();
}
console.log(`\n${goals.filter((g) => /: met \(/.test(g)).length} of ${goals.length} fleet goals met`);
if (goals.some((g) => !/: met \(/.test(g))) process.exitCode = 1;
