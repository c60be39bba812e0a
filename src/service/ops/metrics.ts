/**
 * The process's Prometheus metrics (prom-client), built once the operator turns metrics on
 * (SWITCHBOARD_METRICS_PORT or SWITCHBOARD_METRICS_TOKEN; see metrics-plugin.ts). Every family
 * is listed in METRIC_FAMILIES (docs/operations.md and the Grafana dashboard are held to it).
 *
 * Bounded cardinality: label values come from closed sets only (HTTP methods, route templates,
 * status codes, error codes of the registry, outcome words) or from names the manifests declare
 * (connector types, entity.action). Never a customer, organization, connector id or URL.
 */
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { sql, type Kysely } from 'kysely';
import { ERROR_CODES } from '../../errors/index.ts';
import { addObserver, type Observer } from '../../observe/hooks.ts';
import type { Database } from '../../store/index.ts';
import { SeriesCounter, SeriesHistogram, type CounterSeries, type HistogramSeries } from './metric-series.ts';

/** Every metric family Switchboard itself defines (the default Node.js ones come on top: process_*, nodejs_*). */
export const METRIC_FAMILIES = {
  http: 'switchboard_http_request_duration_seconds',
  upstreamCalls: 'switchboard_upstream_calls_total',
  upstreamDuration: 'switchboard_upstream_call_duration_seconds',
  upstreamRetries: 'switchboard_upstream_retries_total',
  upstreamWait: 'switchboard_upstream_wait_seconds_total',
  upstreamBytes: 'switchboard_upstream_response_bytes_total',
  syncRuns: 'switchboard_sync_runs_total',
  syncRecords: 'switchboard_sync_records_written_total',
  syncDuration: 'switchboard_sync_run_duration_seconds',
  webhooksIn: 'switchboard_webhook_deliveries_in_total',
  webhooksOut: 'switchboard_webhook_deliveries_out_total',
  outboxLag: 'switchboard_outbox_delivery_lag_seconds',
  outboxOldest: 'switchboard_outbox_oldest_pending_seconds',
  eventLoopDelay: 'nodejs_eventloop_lag_p99_seconds',
  poolWaiting: 'switchboard_db_pool_waiting_clients',
  poolConnections: 'switchboard_db_pool_connections',
} as const;

const KNOWN_ERRORS = new Set(Object.keys(ERROR_CODES));

/** An upstream call's outcome label: its status class, or the error code it ended with when no answer came. */
export function upstreamOutcome(status: number | undefined, errorCode: string | undefined): string {
  if (status !== undefined && status >= 100 && status < 600) return `${Math.floor(status / 100)}xx`;
  if (errorCode === undefined) return 'ok';
  return KNOWN_ERRORS.has(errorCode) || errorCode === 'aborted' ? errorCode : 'internal_error';
}

export interface ServiceMetrics {
  registry: Registry;
  http: SeriesHistogram<'method' | 'route' | 'status_code'>;
  webhooksIn: SeriesCounter<'connector_type' | 'outcome'>;
  /** Databases whose pool and outbox are reported (one per app in this process). */
  databases: Set<MeteredDatabase>;
}

/** What the metrics read of a database: its pool, and the outbox table. */
export type MeteredDatabase = Pick<Database, 'pool'> & { db: object };

let metrics: ServiceMetrics | undefined;

/** The process's metrics, made (and observing) on first use. */
export function serviceMetrics(): ServiceMetrics {
  metrics ??= createMetrics();
  return metrics;
}

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The gauges read from the service's databases when scraped: outbox age, pool waits and connections. */
function databaseGauges(registers: Registry[]): Set<MeteredDatabase> {
  const databases = new Set<MeteredDatabase>();
  new Gauge({
    name: METRIC_FAMILIES.outboxOldest,
    help: 'Age of the oldest outgoing webhook delivery still pending (0 when none is)',
    registers,
    async collect() {
      let oldest = 0;
      for (const d of databases) oldest = Math.max(oldest, await oldestPendingSeconds(d).catch(() => 0));
      this.set(oldest);
    },
  });
  new Gauge({
    name: METRIC_FAMILIES.poolWaiting,
    help: 'Queries waiting for a database connection (PostgreSQL pool; always 0 on SQLite)',
    registers,
    collect() {
      let waiting = 0;
      for (const d of databases) waiting += d.pool?.().waiting ?? 0;
      this.set(waiting);
    },
  });
  new Gauge({
    name: METRIC_FAMILIES.poolConnections,
    help: 'Database connections of the PostgreSQL pool, by state (idle, busy)',
    labelNames: ['state'],
    registers,
    collect() {
      let idle = 0;
      let total = 0;
      for (const d of databases) {
        const p = d.pool?.();
        idle += p?.idle ?? 0;
        total += p?.total ?? 0;
      }
      this.set({ state: 'idle' }, idle);
      this.set({ state: 'busy' }, total - idle);
    },
  });
  return databases;
}

function createMetrics(): ServiceMetrics {
  const registry = new Registry();
  // process_* and nodejs_*: CPU, memory, handles, GC, and the event loop's delay (nodejs_eventloop_lag_*).
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
  const registers = [registry];
  const http = new SeriesHistogram({
    name: METRIC_FAMILIES.http,
    help: 'Requests answered, by method, route template and status code, with their latency',
    labelNames: ['method', 'route', 'status_code'],
    buckets: SECONDS,
    registers,
  });
  const calls = new SeriesCounter({
    name: METRIC_FAMILIES.upstreamCalls,
    help: 'Upstream API calls (all attempts of one call), by connector type, entity.action and outcome (status class, or the error code when no answer came)',
    labelNames: ['connector_type', 'action', 'outcome'],
    registers,
  });
  const duration = new SeriesHistogram({
    name: METRIC_FAMILIES.upstreamDuration,
    help: 'Duration of upstream calls, throttle waits and retries included, by connector type',
    labelNames: ['connector_type'],
    buckets: SECONDS,
    registers,
  });
  const retries = new SeriesCounter({
    name: METRIC_FAMILIES.upstreamRetries,
    help: 'Upstream attempts retried (after a 429, a 5xx or a timeout), by connector type and entity.action',
    labelNames: ['connector_type', 'action'],
    registers,
  });
  const waited = new SeriesCounter({
    name: METRIC_FAMILIES.upstreamWait,
    help: "Seconds upstream calls waited for their connector's throttle and between retries, by connector type",
    labelNames: ['connector_type'],
    registers,
  });
  const bytes = new SeriesCounter({
    name: METRIC_FAMILIES.upstreamBytes,
    help: 'Upstream response body bytes received, by connector type',
    labelNames: ['connector_type'],
    registers,
  });
  const runs = new SeriesCounter({
    name: METRIC_FAMILIES.syncRuns,
    help: 'Sync runs ended, by connector type and outcome (completed, failed)',
    labelNames: ['connector_type', 'outcome'],
    registers,
  });
  const written = new SeriesCounter({
    name: METRIC_FAMILIES.syncRecords,
    help: 'Records written by sync runs, by connector type and change (added, updated, deleted)',
    labelNames: ['connector_type', 'change'],
    registers,
  });
  const runDuration = new SeriesHistogram({
    name: METRIC_FAMILIES.syncDuration,
    help: 'Duration of sync runs, by connector type and outcome',
    labelNames: ['connector_type', 'outcome'],
    buckets: [1, 5, 15, 60, 300, 900, 1800, 3600, 7200],
    registers,
  });
  const webhooksIn = new SeriesCounter({
    name: METRIC_FAMILIES.webhooksIn,
    help: 'Vendor webhook deliveries received, by connector type and outcome (accepted, refused, busy: 503 for the vendor to retry, failed)',
    labelNames: ['connector_type', 'outcome'],
    registers,
  });
  const webhooksOut = new SeriesCounter({
    name: METRIC_FAMILIES.webhooksOut,
    help: 'Outgoing webhook deliveries, by outcome (queued, delivered, retried: failed and will retry, failed: given up)',
    labelNames: ['outcome'],
    registers,
  });
  const lag = new SeriesHistogram({
    name: METRIC_FAMILIES.outboxLag,
    help: 'Time from an event to each delivery attempt of it',
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 21600, 86400],
    registers,
  });
  const databases = databaseGauges(registers);
  // Series bound once per label set (bounded: manifest names and closed sets): a map lookup per call, no label hashing.
  interface Bound {
    calls: CounterSeries<string>;
    duration: HistogramSeries<string>;
    retries: CounterSeries<string>;
    waited: CounterSeries<string>;
    bytes: CounterSeries<string>;
  }
  const bound = new Map<string, Bound>();
  const observer: Observer = {
    upstream: (info) => ({
      end: (r) => {
        const outcome = upstreamOutcome(r.status, r.errorCode);
        const key = `${info.connectorType} ${info.entity}.${info.action} ${outcome}`;
        let b = bound.get(key);
        if (b === undefined) {
          const connector_type = info.connectorType;
          const action = `${info.entity}.${info.action}`;
          b = {
            calls: calls.labels({ connector_type, action, outcome }),
            duration: duration.labels({ connector_type }),
            retries: retries.labels({ connector_type, action }),
            waited: waited.labels({ connector_type }),
            bytes: bytes.labels({ connector_type }),
          };
          bound.set(key, b);
        }
        b.calls.inc();
        b.duration.observe(r.durationMs / 1000);
        if (r.retries > 0) b.retries.inc(r.retries);
        if (r.waitedMs > 0) b.waited.inc(r.waitedMs / 1000);
        if (r.bytes > 0) b.bytes.inc(r.bytes);
      },
    }),
    syncRun: (type) => ({
      end: (r) => {
        runs.inc({ connector_type: type, outcome: r.outcome });
        runDuration.observe({ connector_type: type, outcome: r.outcome }, r.durationMs / 1000);
        for (const change of ['added', 'updated', 'deleted'] as const) if (r[change] > 0) written.inc({ connector_type: type, change }, r[change]);
      },
    }),
    webhookOut: (outcome, n, lagMs) => {
      webhooksOut.inc({ outcome }, n);
      if (lagMs !== undefined && outcome !== 'queued') lag.observe(Math.max(0, lagMs) / 1000);
    },
  };
  addObserver(observer);
  return { registry, http, webhooksIn, databases };
}

/** Seconds since the oldest pending delivery was created (0 when none is pending). */
async function oldestPendingSeconds(d: MeteredDatabase): Promise<number> {
  const db = d.db as Kysely<{ webhook_deliveries: { status: string; created_at: string } }>;
  const row = await db
    .selectFrom('webhook_deliveries')
    .select(sql<string | null>`min(created_at)`.as('oldest'))
    .where('status', '=', 'pending')
    .executeTakeFirst();
  const oldest = row?.oldest;
  if (oldest === null || oldest === undefined) return 0;
  const t = Date.parse(String(oldest));
  return Number.isNaN(t) ? 0 : Math.max(0, (Date.now() - t) / 1000);
}
