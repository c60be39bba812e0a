/** The sync module's public types: what it writes to, what it is built from, what it reports. */
import { SwitchboardError } from '../errors/index.ts';
import type { ConnectorRuntime } from '../engine/index.ts';
import type { LoadedManifest } from '../manifest/index.ts';
import type { Database } from '../store/database.ts';
import type { PagesJob, PartStored, UpsertCounts } from './pages.ts';

export type { UpsertCounts } from './pages.ts';

/** The search definition of an entity, as the record store indexes it. */
export interface SinkEntityDef {
  primaryKey: string;
  fields: Record<string, 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array'>;
  sources?: Record<string, string>;
}

/** Where synced records go (the search module's RecordStore implements it). */
export interface RecordSink {
  upsert(connectorId: string, entity: string, def: SinkEntityDef, records: Record<string, unknown>[], syncRun?: string): Promise<UpsertCounts | void>;
  deleteMissing(connectorId: string, entity: string, syncRun: string): Promise<number>;
  /** Delete these records (by primary key); returns how many were stored. */
  deleteRecords(connectorId: string, entity: string, ids: string[]): Promise<number>;
  deleteConnector(connectorId: string): Promise<unknown>;
  count(connectorId: string, entity: string): Promise<number>;
}

/**
 * One entity's pages run elsewhere (the service's sync worker): the records are fetched and
 * stored there, and `stored` is called here after each part, in order (see pages.ts).
 */
export type RemotePages = (job: PagesJob, stored: (part: PartStored) => Promise<void>, signal: AbortSignal | undefined) => Promise<void>;

/**
 * A runtime for a connector, built by the service from its stored (decrypted) credentials; with
 * `pages`, the entities' pages run there instead of through `runtime` (which still lists
 * for_each parents and removals).
 */
export type RuntimeFactory = (
  connectorId: string,
) => Promise<{ runtime: ConnectorRuntime; manifest: LoadedManifest; pages?: RemotePages | undefined } | undefined>;

export interface SyncProgress {
  entity: string;
  /** Records stored so far in this run for this entity. */
  records: number;
  pages: number;
  done: boolean;
}

export interface SyncOptions {
  /** Force a full refresh (with deletion detection). */
  full?: boolean;
  onProgress?: (p: SyncProgress) => void;
  signal?: AbortSignal;
}

/** Per entity: records seen by the run, records deleted, and of the records seen how many were new (added) or changed (updated). */
export interface EntityRunCounts {
  records: number;
  deleted: number;
  added: number;
  updated: number;
}

export interface SyncResult {
  connector_id: string;
  run_id: string;
  full: boolean;
  resumed: boolean;
  entities: Record<string, EntityRunCounts>;
}

export interface SyncStatus {
  connector_id: string;
  /** interrupted: a run's lease expired before it finished (its instance crashed or stopped); the next run resumes it from `resume_from`. */
  status: 'idle' | 'running' | 'failed' | 'interrupted';
  last_started_at: string | null;
  last_finished_at: string | null;
  last_error: string | null;
  next_run_at: string | null;
  entities: Record<string, { records: number; last_synced_at: string | null }>;
  /** For an interrupted run: its id and, per entity, whether it finished and the page it resumes at (the list params; the parent index for per-parent lists). */
  resume_from?: {
    run_id: string;
    entities: Record<string, { done: boolean; records_seen: number; parent: number | null; params: Record<string, unknown> | null }>;
  };
}

export interface SyncEngineOptions {
  database: Database;
  sink: RecordSink;
  runtimeFor: RuntimeFactory;
  /** This process's name in leases, as is (tests); default `<instanceName>#<pid>#<boot id>` (lease-owner.ts). */
  instanceId?: string;
  /**
   * This instance's name, stable across its restarts (SWITCHBOARD_INSTANCE_ID): a lease of the
   * same name from another boot is a previous life, whose runs are reclaimed on start() at once
   * instead of after the lease expires. Default the host name and PID namespace, where a previous
   * boot is known dead when its process no longer exists.
   */
  instanceName?: string;
  /** Default time between scheduled syncs of a connector; default 1 hour. */
  defaultIntervalMs?: number;
  /** A run's lease; renewed after every page and every third of this from a timer; default 60 s. */
  leaseMs?: number;
  /** How often the scheduler looks for due connectors; default 5 s. */
  pollMs?: number;
  /** Every Nth scheduled run is a full refresh; default 24. */
  fullRefreshEvery?: number;
  /** Parallel page hydrations (the engine's throttle still applies); default 4. */
  hydrateConcurrency?: number;
  /**
   * A hydrated page is written in parts of this many records as they are hydrated (its
   * checkpoint with the last part), instead of whole once every record is; default
   * HYDRATE_WRITE_RECORDS (8); 0 writes whole pages.
   */
  hydrateWriteRecords?: number;
  /**
   * Pages written at once by all of this instance's runs (a page's records, its checkpoint and
   * the lease's renewal); the others wait their turn, in order, while their runs go on fetching.
   * The service sets it on PostgreSQL below its pool's size, so the syncs' writes leave
   * connections to requests. Default no limit.
   */
  pageWriteSlots?: number | undefined;
  /** Called when a background run fails (logging). */
  onError?: (connectorId: string, error: unknown) => void;
  /**
   * Called when a run fails because the upstream refused the credentials (401/403, or the OAuth
   * refresh failed); the connector's schedule is paused before (see pause()).
   */
  onAuthFailed?: (connectorId: string, error: SwitchboardError) => void | Promise<void>;
  /**
   * Asked before the scheduler starts due connectors, for a batch of them at once (one answer per
   * id, in order); false pauses a connector's schedule instead (the service answers false for
   * connectors whose status is auth_failed, in one query per batch). Default: always run.
   */
  canRun?: (connectorIds: string[]) => Promise<boolean[]>;
  /** Called after a run completes (the service's outgoing webhooks: sync.completed). */
  onCompleted?: (result: SyncResult) => void | Promise<void>;
  /** Called after a run fails, other than by losing its lease (sync.failed). */
  onFailed?: (connectorId: string, error: unknown) => void | Promise<void>;
  /** Called when pause() stopped a scheduled connector (connector.auth_failed), and when resume() scheduled a paused one again (connector.reconnected). */
  onPaused?: (connectorId: string) => void | Promise<void>;
  onResumed?: (connectorId: string) => void | Promise<void>;
  /** Called after records of a connector changed, from a sync page or a webhook (records.changed). */
  onRecordsChanged?: (change: RecordsChanged) => void | Promise<void>;
}

/** What one write changed for one entity of a connector. */
export interface RecordsChanged {
  connector_id: string;
  entity: string;
  added: number;
  updated: number;
  deleted: number;
  /** Where it came from: a sync run (its id) or a vendor webhook delivery. */
  source: { sync_run: string } | { webhook: string };
}

/** Failures that mean the credentials no longer work: syncing again cannot help until they change. */
export function isAuthFailure(e: unknown): e is SwitchboardError {
  return e instanceof SwitchboardError && (e.code === 'upstream_credentials_rejected' || e.code === 'oauth_refresh_failed');
}
