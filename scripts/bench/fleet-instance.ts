/**
 * One Switchboard instance of the fleet bench (scripts/bench/fleet.ts), in a process of its own
 * as in a deployment: its heap, event loop and CPU are its own, not the bench's or the other
 * instance's. Started with fork(); its one argument is the JSON of InstanceSpec. It routes each
 * upstream request to the simulator of the request's API key, records the sync keys' exchanges,
 * and answers the bench's requests over IPC ({id, op}) with {id, result} or {id, error}:
 *
 * - memory: heap + external and RSS after two full GCs (run with --expose-gc);
 * - sync-start / sync-stop: the sync scheduler (started by hand: the config turns it off);
 * - probe-upstream: the probe key's upstream round trips (ms) since the last call;
 * - exchanges: the sync keys' upstream exchanges since the last call ({key, at, status, get},
 *   `at` in ms since the epoch, performance.timeOrigin-based, comparable across processes);
 * - loop-start / loop-stop: this process's event-loop delay over the span (p50, p99, max in ms);
 * - time-ticks / ticks: time every scheduler tick from now on / the times so far;
 * - close: close the service, then exit.
 *
 * It prints nothing; the first message it sends is {ready: url}.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { FetchLike } from '../../src/http/index.ts';
import { createUpstreamTransport, type UpstreamRequest, type UpstreamSend } from '../../src/http/upstream-transport.ts';
import { defaultServiceConfig, startService } from '../../src/service/index.ts';

export interface InstanceSpec {
  databaseUrl: string;
  encryptionKey: string;
  schema?: string;
  /** API key → simulator URL; other keys go to `idle`, with its key. */
  routes: Record<string, string>;
  idle: { url: string; apiKey: string };
  /** Keys whose exchanges are recorded. */
  syncKeys: string[];
  /** Keys whose upstream round trips are timed (the probe's). */
  probeKeys: string[];
}

const FLEET_BASE = 'http://granola.fleet.invalid';

const spec = JSON.parse(process.argv[2]!) as InstanceSpec;
const gc = (globalThis as { gc?: () => void }).gc;
const route = new Map(Object.entries(spec.routes));
const syncKeys = new Set(spec.syncKeys);
const probeKeys = new Set(spec.probeKeys);
let probeTimes: number[] = [];
const transport = createUpstreamTransport();
let exchanges: { key: string; at: number; status: number; get: boolean }[] = [];
const epochNow = (): number => performance.timeOrigin + performance.now();

function routed(input: string | URL, headers: Record<string, string>): { url: string; headers: Record<string, string>; key: string } {
  const authName = Object.keys(headers).find((h) => h.toLowerCase() === 'authorization');
  const key = authName === undefined ? '' : String(headers[authName]).replace(/^Bearer\s+/i, '');
  const target = route.get(key);
  const u = new URL(String(input));
  const out = { ...headers };
  if (target === undefined && authName !== undefined) out[authName] = `Bearer ${spec.idle.apiKey}`;
  return { url: (target ?? spec.idle.url) + u.pathname + u.search, headers: out, key };
}
const send: UpstreamSend = async (input, req: UpstreamRequest = {}) => {
  const r = routed(input, req.headers ?? {});
  const t = performance.now();
  const res = await transport.send(r.url, { ...req, headers: r.headers });
  if (probeKeys.has(r.key)) probeTimes.push(performance.now() - t);
  if (syncKeys.has(r.key)) exchanges.push({ key: r.key, at: epochNow(), status: res.status, get: /\/v1\/notes\/[^/?]+/.test(r.url) });
  return res;
};
const fetchImpl = Object.assign(
  async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const h: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => (h[k] = v));
    const r = routed(input instanceof Request ? input.url : input, h);
    return transport.fetch(r.url, { ...init, headers: r.headers });
  },
  { send },
) as unknown as FetchLike;

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
  // FLEET_REDIS_URL: the shared limits in Redis instead of PostgreSQL (SWITCHBOARD_REDIS_URL).
  ...(process.env['FLEET_REDIS_URL'] ? { redisUrl: process.env['FLEET_REDIS_URL'] } : {}),
});
const service = await startService({ config, fetch: fetchImpl, logDestination: process.stderr, ...(spec.schema !== undefined ? { schema: spec.schema } : {}) });
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
  exchanges: () => {
    const out = exchanges;
    exchanges = [];
    return out;
  },
  /** The probe's upstream round trips (ms, headers received) since the last call. */
  'probe-upstream': () => {
    const out = probeTimes;
    probeTimes = [];
    return out;
  },
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
  close: async () => {
    await service.close();
    await transport.close();
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
