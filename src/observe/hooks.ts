/**
 * Observation points of the process (metrics, traces): the engine's upstream calls, sync runs,
 * outgoing webhook deliveries and spans around service operations report here, and whoever
 * observes them (src/service/ops/metrics.ts, src/service/ops/tracing.ts) adds an Observer.
 *
 * Nothing observes by default: every report then costs one check of `observing`, nothing else
 * is built. Observers must never throw into the code they observe, and receive no credentials or
 * bodies: only names the manifests declare, hosts, statuses and counts.
 */

/** One upstream call of the engine (all its attempts and retries). */
export interface UpstreamCallInfo {
  /** The manifest's type. */
  connectorType: string;
  entity: string;
  action: string;
  method: string;
  /** The upstream's host (no credentials, no path). */
  host: string;
  /** The manifest's path template (e.g. /contacts/{{params.id}}), never the rendered URL. */
  route: string;
  /** Made in another thread (the sync worker) and reported here when it ended: counted, not traced. */
  remote?: boolean;
}

/** How an upstream call ended. */
export interface UpstreamCallEnd {
  /** The last HTTP status received; undefined when none was (timeout, refused before sending). */
  status: number | undefined;
  /** The SwitchboardError code it failed with; undefined on success. */
  errorCode: string | undefined;
  attempts: number;
  retries: number;
  /** Milliseconds spent waiting for the connector's throttle and between retries. */
  waitedMs: number;
  /** Response bytes received over every attempt. */
  bytes: number;
  durationMs: number;
}

/** A call in progress, ended once. */
export interface UpstreamProbe {
  end(r: UpstreamCallEnd): void;
}

export type SyncRunOutcome = 'completed' | 'failed';

export interface SyncRunProbe {
  /** Records the run added, updated and deleted (0 when it failed). */
  end(r: { outcome: SyncRunOutcome; added: number; updated: number; deleted: number; durationMs: number }): void;
}

/** queued: a delivery created for a subscribed endpoint; delivered / retried (will try again) / failed (gave up). */
export type WebhookOutOutcome = 'queued' | 'delivered' | 'retried' | 'failed';

export interface Observer {
  upstream?(info: UpstreamCallInfo): UpstreamProbe | undefined;
  syncRun?(connectorType: string): SyncRunProbe | undefined;
  /** `n` deliveries had this outcome; `lagMs`: from the event's creation to this attempt's end. */
  webhookOut?(outcome: WebhookOutOutcome, n: number, lagMs?: number): void;
  /** Run `fn` inside a span named `name` (tracing only). */
  span?<T>(name: string, attributes: Record<string, string | number>, fn: () => Promise<T>): Promise<T>;
}

const observers: Observer[] = [];

/** True while at least one observer is registered (read it before building anything to report). */
export let observing = false;

/** Register an observer; the function returned removes it. */
export function addObserver(o: Observer): () => void {
  observers.push(o);
  observing = true;
  return () => {
    const i = observers.indexOf(o);
    if (i >= 0) observers.splice(i, 1);
    observing = observers.length > 0;
  };
}

function safely(f: () => void): void {
  try {
    f();
  } catch {
    // An observer's failure is never the observed code's.
  }
}

/** Start observing an upstream call; undefined when nothing observes. */
export function upstreamStarted(info: UpstreamCallInfo): UpstreamProbe | undefined {
  if (!observing) return undefined;
  const probes: UpstreamProbe[] = [];
  for (const o of observers) {
    safely(() => {
      const p = o.upstream?.(info);
      if (p !== undefined) probes.push(p);
    });
  }
  return {
    end: (r) => {
      for (const p of probes) safely(() => p.end(r));
    },
  };
}

/** Start observing a sync run; undefined when nothing observes. */
export function syncRunStarted(connectorType: string): SyncRunProbe | undefined {
  if (!observing) return undefined;
  const probes: SyncRunProbe[] = [];
  for (const o of observers) {
    safely(() => {
      const p = o.syncRun?.(connectorType);
      if (p !== undefined) probes.push(p);
    });
  }
  return {
    end: (r) => {
      for (const p of probes) safely(() => p.end(r));
    },
  };
}

export function webhookOut(outcome: WebhookOutOutcome, n: number, lagMs?: number): void {
  if (!observing || n <= 0) return;
  for (const o of observers) safely(() => o.webhookOut?.(outcome, n, lagMs));
}

/** Run `fn` in a span when a tracer observes, else just run it. Attribute values are cut to 200 characters. */
export function withSpan<T>(name: string, attributes: Record<string, string | number>, fn: () => Promise<T>): Promise<T> {
  if (!observing) return fn();
  const tracer = observers.find((o) => o.span !== undefined);
  if (tracer === undefined) return fn();
  const attrs: Record<string, string | number> = {};
  for (const k in attributes) {
    const v = attributes[k]!;
    attrs[k] = typeof v === 'string' && v.length > 200 ? v.slice(0, 200) : v;
  }
  return tracer.span!(name, attrs, fn);
}
