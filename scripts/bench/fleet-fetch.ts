/**
 * The fleet bench's upstream transport (scripts/bench/fleet.ts): the service's own transport,
 * with each request routed to the simulator of its API key (other keys to the idle fleet's
 * simulator, with its key), the sync keys' exchanges recorded and the probe keys' round trips
 * timed. An instance (fleet-instance.ts) uses it on its main thread, and hands it to the sync
 * worker as the module that makes the worker's transport (`syncFetchModule`): there the
 * exchanges are posted back over a BroadcastChannel, so the instance reports every sync request
 * wherever it was sent from.
 */
import { BroadcastChannel, isMainThread } from 'node:worker_threads';
import type { FetchLike } from '../../src/http/index.ts';
import { createUpstreamTransport, type UpstreamRequest, type UpstreamSend } from '../../src/http/upstream-transport.ts';

export interface FleetRoutes {
  /** API key → simulator URL; other keys go to `idle`, with its key. */
  routes: Record<string, string>;
  idle: { url: string; apiKey: string };
  /** Keys whose exchanges are recorded. */
  syncKeys: string[];
  /** Keys whose upstream round trips are timed (the probe's). */
  probeKeys: string[];
}

export interface Exchange {
  key: string;
  /** ms since the epoch (performance.timeOrigin-based: comparable across processes and threads). */
  at: number;
  status: number;
  get: boolean;
}

const CHANNEL = 'switchboard-fleet-exchanges';
const epochNow = (): number => performance.timeOrigin + performance.now();

/** The transport, and (on the main thread) what it and the sync worker's recorded. */
export function fleetTransport(spec: FleetRoutes): { fetch: FetchLike; takeExchanges(): Exchange[]; takeProbeTimes(): number[]; close(): Promise<void> } {
  const route = new Map(Object.entries(spec.routes));
  const syncKeys = new Set(spec.syncKeys);
  const probeKeys = new Set(spec.probeKeys);
  const transport = createUpstreamTransport();
  let exchanges: Exchange[] = [];
  let probeTimes: number[] = [];
  const channel = new BroadcastChannel(CHANNEL);
  channel.unref();
  if (isMainThread) channel.onmessage = (m) => void exchanges.push((m as { data: Exchange }).data);
  const record = (e: Exchange): void => {
    if (isMainThread) exchanges.push(e);
    else channel.postMessage(e);
  };

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
    if (syncKeys.has(r.key)) record({ key: r.key, at: epochNow(), status: res.status, get: /\/v1\/notes\/[^/?]+/.test(r.url) });
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
  return {
    fetch: fetchImpl,
    takeExchanges: () => {
      const out = exchanges;
      exchanges = [];
      return out;
    },
    takeProbeTimes: () => {
      const out = probeTimes;
      probeTimes = [];
      return out;
    },
    close: async () => {
      channel.close();
      await transport.close();
    },
  };
}

/** The sync worker's transport (AppOptions.syncFetchModule): `data` is the FleetRoutes. */
export function createFetch(data: unknown): FetchLike {
  return fleetTransport(data as FleetRoutes).fetch;
}
