/**
 * One Switchboard instance of the fleet bench (scripts/bench/fleet.ts), in a process of its own
 * as in a deployment: its heap, event loop and CPU are its own, not the bench's or the other
 * instance's. Started with fork(); its one argument is the JSON of InstanceSpec. It routes each
 * upstream request to the simulator of the request's API key (fleet-fetch.ts, on its main thread
 * and in its sync worker), records the sync keys' exchanges,
 * and answers the bench's requests over IPC ({id, op}) with {id, result} or {id, error}:
 *
 * - memory: heap + external and RSS after two full GCs (run with --expose-gc);
 * - sync-start / sync-stop: the sync scheduler (started by hand: the config turns it off);
 * - probe-upstream: the probe key's upstream round trips (ms) since the last call;
 * - exchanges: the sync keys' upstream exchanges since the last call ({key, at, status, get},
 *   `at` in ms since the epoch, performance.timeOrigin-based, comparable across processes);
 * - loop-start / loop-stop: this process's event-loop delay over the span (p50, p99, max in ms);
 * - time-ticks / ticks: time every scheduler tick from now on / the times so far;
 * - pages-run: entity runs whose pages ran in the sync worker so far;
 * - close: close the service, then exit.
 *
 * It prints nothing; the first message it sends is {ready: url}.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { defaultServiceConfig, startService } from '../../src/service/index.ts';
import { fleetTransport, type FleetRoutes } from './fleet-fetch.ts';

export interface InstanceSpec extends FleetRoutes {
  databaseUrl: string;
  encryptionKey: string;
  schema?: string;
}

const FLEET_BASE = 'http://granola.fleet.invalid';

const spec = JSON.parse(process.argv[2]!) as InstanceSpec;
const gc = (globalThis as { gc?: () => void }).gc;
const routes: FleetRoutes = { routes: spec.routes, idle: spec.idle, syncKeys: spec.syncKeys, probeKeys: spec.probeKeys };
// Routed to the simulators here, and in the sync worker by the same module (its exchanges come back to this thread).
const upstream = fleetTransport(routes);

const config = defaultServiceConfig({
  databaseUrl: spec.databaseUrl,
  encryptionKey: spec.encryptionKey,
  port: 0,
  host: '127.0.0.1',
  logLevel: 'error',
  rateLimitPerMinute: 0,
  syncScheduler: false,
  syncIntervalSeconds: 3600,
  connectorTypes: { granola: { baseUrl: FLEET_BASE } },
  // SWITCHBOARD_SYNC_IN_WORKER=false: the syncs on the main thread, as before the sync worker.
  syncInWorker: process.env['SWITCHBOARD_SYNC_IN_WORKER'] !== 'false',
  // FLEET_REDIS_URL: the shared limits in Redis instead of PostgreSQL (SWITCHBOARD_REDIS_URL).
  ...(process.env['FLEET_REDIS_URL'] ? { redisUrl: process.env['FLEET_REDIS_URL'] } : {}),
});
const service = await startService({
  config,
  fetch: upstream.fetch,
  syncFetchModule: { module: new URL('./fleet-fetch.ts', import.meta.url).href, data: routes },
  logDestination: process.stderr,
  ...(spec.schema !== undefined ? { schema: spec.schema } : {}),
});
// As the service does when it starts its scheduler (here started by hand, sync-start).
service.ctx.syncWorker?.warm();
let loop: IntervalHistogram | undefined;
const ticks: number[] = [];

const ops: Record<string, () => unknown> = {
  memory: () => {
    gc?.();
    gc?.();
    const m = process.memoryUsage();
    return { heap: m.heapUsed + m.external, rss: m.rss };
  },
  'sync-start': () => service.ctx.sync.start(),
  'sync-stop': () => service.ctx.sync.stop(),
  exchanges: () => upstream.takeExchanges(),
  /** The probe's upstream round trips (ms, headers received) since the last call. */
  'probe-upstream': () => upstream.takeProbeTimes(),
  'loop-start': () => {
    loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
  },
  'loop-stop': () => {
    loop?.disable();
    return loop === undefined ? null : { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
  },
  'time-ticks': () => {
    const engine = service.ctx.sync as unknown as { tick?: () => Promise<void> };
    const tick = engine.tick?.bind(engine);
    if (tick === undefined) throw new Error('SyncEngine has no tick() to time: update the fleet bench');
    engine.tick = async () => {
      const t = performance.now();
      try {
        await tick();
      } finally {
        ticks.push(performance.now() - t);
      }
    };
  },
  ticks: () => ticks,
  /** Entity runs whose pages ran in the sync worker so far. */
  'pages-run': () => service.ctx.syncWorker?.pagesRun ?? 0,
  close: async () => {
    await service.close();
    await upstream.close();
    setImmediate(() => process.exit(0));
  },
};

process.on('message', (m: { id: number; op: string }) => {
  void (async () => {
    try {
      const op = ops[m.op];
      if (op === undefined) throw new Error(`unknown op ${m.op}`);
      process.send!({ id: m.id, result: (await op()) ?? null });
    } catch (e) {
      process.send!({ id: m.id, error: e instanceof Error ? e.message : String(e) });
    }
  })();
});
process.send!({ ready: service.url });
