/**
 * The sync engine: copies each connector's data into the record store, so hosted `search` can
 * query it.
 *
 * - Per entity with `sync` in its manifest: page through `list` (hydrating each record through
 *   `get` where the manifest says so) and upsert every record, keyed by (connector, entity, id).
 * - Incremental where the manifest declares it (a list param such as Granola's updated_after,
 *   set from the highest `cursor_field` value seen by the last completed run). Every
 *   `fullRefreshEvery`-th run, on request, and on the first run it is a full refresh instead,
 *   and records the full refresh did not see are deleted (deletion detection).
 * - Checkpointed after every page: the next page's request is stored, so a process killed
 *   mid-sync resumes where it stopped, in the same run (records already stored keep the run
 *   marker, so deletion detection stays right).
 * - One instance at a time per connector: a run holds a lease row in sync_state, renewed after
 *   every page. A crashed instance's lease expires and any instance (or the same one restarted)
 *   takes the run over from its checkpoint. This is the queue on the database (the same design
 *   as pg-boss's singleton jobs, with no extra schema) and works on SQLite and PostgreSQL alike.
 * - Within the connector's rate limits: the engine's per-instance throttle spaces requests, and
 *   its retry honours Retry-After when the upstream answers 429 anyway.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ConnectorRuntime } from '../engine/index.ts';
import { SwitchboardError } from '../errors/index.ts';
import type { CompiledEntity, LoadedManifest } from '../manifest/index.ts';
import type { NextPage } from '../pagination/index.ts';
import type { Database } from '../store/database.ts';
import { compileTemplate, truthy } from '../templates/index.ts';
import type { SyncEntityRow, SyncStateRow, SyncTables } from './sync-migrations.ts';

export { syncMigrations } from './sync-migrations.ts';

/** Where synced records go (the search module's RecordStore implements it). */
export interface RecordSink {
  upsert(
    connectorId: string,
    entity: string,
    def: { primaryKey: string; fields: Record<string, 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array'>; sources?: Record<string, string> },
    records: Record<string, unknown>[],
    syncRun?: string,
  ): Promise<void>;
  deleteMissing(connectorId: string, entity: string, syncRun: string): Promise<number>;
  /** Delete these records (by primary key); returns how many were stored. */
  deleteRecords(connectorId: string, entity: string, ids: string[]): Promise<number>;
  deleteConnector(connectorId: string): Promise<unknown>;
  count(connectorId: string, entity: string): Promise<number>;
}

/** A runtime for a connector, built by the service from its stored (decrypted) credentials. */
export type RuntimeFactory = (connectorId: string) => Promise<{ runtime: ConnectorRuntime; manifest: LoadedManifest } | undefined>;

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

export interface SyncResult {
  connector_id: string;
  run_id: string;
  full: boolean;
  resumed: boolean;
  entities: Record<string, { records: number; deleted: number }>;
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
  resume_from?: { run_id: string; entities: Record<string, { done: boolean; records_seen: number; parent: number | null; params: Record<string, unknown> | null }> };
}

export interface SyncEngineOptions {
  database: Database;
  sink: RecordSink;
  runtimeFor: RuntimeFactory;
  /** This process's name in leases; default a random id. */
  instanceId?: string;
  /** Default time between scheduled syncs of a connector; default 1 hour. */
  defaultIntervalMs?: number;
  /** A run's lease; renewed after every page; default 60 s. */
  leaseMs?: number;
  /** How often the scheduler looks for due connectors; default 5 s. */
  pollMs?: number;
  /** Every Nth scheduled run is a full refresh; default 24. */
  fullRefreshEvery?: number;
  /** Parallel page hydrations (the engine's throttle still applies); default 4. */
  hydrateConcurrency?: number;
  /** Called when a background run fails (logging). */
  onError?: (connectorId: string, error: unknown) => void;
  /**
   * Called when a run fails because the upstream refused the credentials (401/403, or the OAuth
   * refresh failed); the connector's schedule is paused before (see pause()).
   */
  onAuthFailed?: (connectorId: string, error: SwitchboardError) => void | Promise<void>;
  /**
   * Asked before the scheduler starts a due connector; false pauses its schedule instead (the
   * service answers false for connectors whose status is auth_failed). Default: always run.
   */
  canRun?: (connectorId: string) => Promise<boolean>;
}

/** Failures that mean the credentials no longer work: syncing again cannot help until they change. */
export function isAuthFailure(e: unknown): e is SwitchboardError {
  return e instanceof SwitchboardError && (e.code === 'upstream_credentials_rejected' || e.code === 'oauth_refresh_failed');
}

const now = (): string => new Date().toISOString();
const later = (ms: number): string => new Date(Date.now() + ms).toISOString();

/** Where an entity's sync resumes: the parent index (for_each) and that parent's next page. */
interface Checkpoint {
  parent?: number;
  next: NextPage;
}

/** Raised inside a run that lost its lease (connector deleted, or taken over). */
class LeaseLost extends Error {}

function formatIncremental(value: unknown, format: 'iso8601' | 'date' | 'unix_seconds' | undefined): unknown {
  if (value === null || value === undefined) return undefined;
  const date = typeof value === 'number' ? new Date(value * 1000) : new Date(String(value));
  if (Number.isNaN(date.getTime())) return undefined;
  if (format === 'unix_seconds') return Math.floor(date.getTime() / 1000);
  if (format === 'date') return date.toISOString().slice(0, 10);
  return date.toISOString();
}

/** Higher of two high-water values (numbers numerically, strings as ISO text). */
function maxMark(a: unknown, b: unknown): unknown {
  if (a === undefined || a === null) return b;
  if (b === undefined || b === null) return a;
  if (typeof a === 'number' && typeof b === 'number') return Math.max(a, b);
  return String(a) >= String(b) ? a : b;
}

function searchDef(e: CompiledEntity): Parameters<RecordSink['upsert']>[2] {
  return {
    primaryKey: e.def.primary_key,
    fields: (e.def.search?.fields ?? {}) as Parameters<RecordSink['upsert']>[2]['fields'],
    ...(e.def.search?.sources ? { sources: e.def.search.sources as Record<string, string> } : {}),
  };
}

/** Map with bounded concurrency, preserving order. */
async function mapLimit<T, R>(items: T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let i = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (i < items.length) {
      const k = i++;
      out[k] = await fn(items[k]!);
    }
  });
  await Promise.all(workers);
  return out;
}

/** The sync engine and its scheduler. One per service process. */
export class SyncEngine {
  private readonly db: Kysely<SyncTables>;
  readonly instanceId: string;
  private readonly leaseMs: number;
  private readonly defaultIntervalMs: number;
  private readonly pollMs: number;
  private readonly fullEvery: number;
  private readonly hydrateConcurrency: number;
  private readonly running = new Map<string, { controller: AbortController; done: Promise<unknown> }>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;

  constructor(private readonly options: SyncEngineOptions) {
    this.db = options.database.db as Kysely<SyncTables>;
    this.instanceId = options.instanceId ?? `sync-${randomUUID()}`;
    this.leaseMs = options.leaseMs ?? 60_000;
    this.defaultIntervalMs = options.defaultIntervalMs ?? 3_600_000;
    this.pollMs = options.pollMs ?? 5_000;
    this.fullEvery = options.fullRefreshEvery ?? 24;
    this.hydrateConcurrency = options.hydrateConcurrency ?? 4;
  }

  /** Start syncing a new connector: its first run is due now. */
  async register(connectorId: string, intervalMs?: number): Promise<void> {
    await this.db
      .insertInto('sync_state')
      .values({ connector_id: connectorId, status: 'idle', run_complete: 1, run_full: 1, next_run_at: now(), interval_ms: intervalMs ?? null, requested_full: 1, runs_since_full: 0 })
      .onConflict((oc) => oc.column('connector_id').doNothing())
      .execute();
    this.kick();
  }

  /** Stop a connector's sync and remove its sync state and synced records. */
  async remove(connectorId: string): Promise<void> {
    await this.removeWithin(connectorId, this.db as unknown as Kysely<unknown>, this.options.sink);
    await this.running.get(connectorId)?.done.catch(() => undefined);
  }

  /**
   * The same, inside a caller's transaction (`db`, and a sink writing through it): the service
   * deletes a connector row and everything synced for it atomically. A run in progress (here or
   * on another instance) stops at its next page: its lease is gone, and it deletes whatever it
   * wrote in between (see runOnce).
   */
  async removeWithin(connectorId: string, db: Kysely<unknown>, sink: Pick<RecordSink, 'deleteConnector'>): Promise<void> {
    this.running.get(connectorId)?.controller.abort();
    const tx = db as Kysely<SyncTables>;
    await tx.deleteFrom('sync_entities').where('connector_id', '=', connectorId).execute();
    await tx.deleteFrom('sync_state').where('connector_id', '=', connectorId).execute();
    await sink.deleteConnector(connectorId);
  }

  /** Ask for a run now. Throws sync_running when a run holds a live lease. */
  async request(connectorId: string, options: { full?: boolean } = {}): Promise<void> {
    const state = await this.state(connectorId);
    if (state === undefined) throw new SwitchboardError('connector_not_found', 'No such connector');
    if (state.status === 'running' && state.lease_until !== null && state.lease_until > now()) {
      throw new SwitchboardError('sync_running', 'A sync of this connector is already running');
    }
    await this.db
      .updateTable('sync_state')
      .set({ next_run_at: now(), ...(options.full ? { requested_full: 1 } : {}) })
      .where('connector_id', '=', connectorId)
      .execute();
    this.kick();
  }

  /**
   * Stop scheduling a connector (its credentials were refused): its next_run_at is cleared, so
   * the scheduler never finds it due, until resume() or an explicit request().
   */
  async pause(connectorId: string): Promise<void> {
    await this.db.updateTable('sync_state').set({ next_run_at: null }).where('connector_id', '=', connectorId).execute();
  }

  /** Schedule a paused connector again, due now (credentials replaced, or a check passed). No-op when not paused. */
  async resume(connectorId: string): Promise<void> {
    const r = await this.db.updateTable('sync_state').set({ next_run_at: now() }).where('connector_id', '=', connectorId).where('next_run_at', 'is', null).executeTakeFirst();
    if (Number(r.numUpdatedRows) > 0) this.kick();
  }

  private async state(connectorId: string): Promise<SyncStateRow | undefined> {
    return this.db.selectFrom('sync_state').selectAll().where('connector_id', '=', connectorId).executeTakeFirst();
  }

  /** Status for the API: running/idle/failed, times, records per entity, last error. */
  async status(connectorId: string, manifest?: LoadedManifest): Promise<SyncStatus | undefined> {
    const state = await this.state(connectorId);
    if (state === undefined) return undefined;
    const rows = await this.db.selectFrom('sync_entities').selectAll().where('connector_id', '=', connectorId).execute();
    const entities: SyncStatus['entities'] = {};
    const names = manifest ? [...manifest.entities.values()].filter((e) => e.def.sync).map((e) => e.name) : rows.map((r) => r.entity);
    for (const name of names) {
      const row = rows.find((r) => r.entity === name);
      entities[name] = { records: await this.options.sink.count(connectorId, name), last_synced_at: row?.last_synced_at ?? null };
    }
    const live = state.status === 'running' && state.lease_until !== null && state.lease_until > now();
    // A run still marked running whose lease has lapsed: its instance is gone mid-run.
    const interrupted = !live && state.status === 'running' && state.run_complete === 0 && state.run_id !== null;
    const resume: SyncStatus['resume_from'] = interrupted ? { run_id: state.run_id as string, entities: {} } : undefined;
    if (resume !== undefined) {
      for (const r of rows) {
        const cp = r.checkpoint !== null ? (JSON.parse(r.checkpoint) as Checkpoint) : undefined;
        resume.entities[r.entity] = { done: r.done === 1, records_seen: r.records_seen, parent: cp?.parent ?? null, params: (cp?.next?.params as Record<string, unknown> | undefined) ?? null };
      }
    }
    return {
      connector_id: connectorId,
      status: live ? 'running' : interrupted ? 'interrupted' : state.status === 'failed' ? 'failed' : 'idle',
      last_started_at: state.started_at,
      last_finished_at: state.finished_at,
      last_error: state.last_error,
      next_run_at: state.next_run_at,
      entities,
      ...(resume !== undefined ? { resume_from: resume } : {}),
    };
  }

  /** Start the scheduler loop. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.kick(), this.pollMs);
    this.timer.unref();
    this.kick();
  }

  /** Stop the scheduler and abort local runs (their leases expire; another instance resumes them). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const r of this.running.values()) r.controller.abort();
    await Promise.all([...this.running.values()].map((r) => r.done.catch(() => undefined)));
  }

  private kick(): void {
    if (!this.timer || this.ticking) return;
    this.ticking = true;
    void this.tick()
      .catch((e: unknown) => this.options.onError?.('*', e))
      .finally(() => {
        this.ticking = false;
      });
  }

  /**
   * Claim and start every due connector whose lease is free, in batches of 16: a full batch may
   * leave more due behind it, so look again at once rather than a poll later, until a batch
   * starts nothing new (100 connectors due at once took seven polls, 30 s, to start).
   */
  private async tick(): Promise<void> {
    for (;;) {
      const t = now();
      const due = await this.db
        .selectFrom('sync_state')
        .select('connector_id')
        .where('next_run_at', '<=', t)
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', t)]))
        .orderBy('next_run_at')
        .limit(16)
        .execute();
      const fresh = due.map((r) => r.connector_id).filter((id) => !this.running.has(id));
      // The batch's checks at once, not one round trip after another.
      const allowed = this.options.canRun === undefined ? fresh.map(() => true) : await Promise.all(fresh.map((id) => this.options.canRun!(id)));
      for (const [i, connector_id] of fresh.entries()) {
        if (this.running.has(connector_id)) continue;
        if (!allowed[i]) {
          await this.pause(connector_id);
          continue;
        }
        const controller = new AbortController();
        const done = this.runOnce(connector_id, { signal: controller.signal }).catch((e: unknown) => {
          if (!(e instanceof LeaseLost)) this.options.onError?.(connector_id, e);
        });
        this.running.set(connector_id, { controller, done });
        void done.finally(() => this.running.delete(connector_id));
      }
      if (due.length < 16 || fresh.length === 0 || !this.timer) return;
    }
  }

  /** Take the connector's lease atomically; false when another run holds it. */
  private async claim(connectorId: string): Promise<boolean> {
    const t = now();
    const r = await this.db
      .updateTable('sync_state')
      .set({ lease_owner: this.instanceId, lease_until: later(this.leaseMs) })
      .where('connector_id', '=', connectorId)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', t), eb('lease_owner', '=', this.instanceId)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Extend our lease; throws LeaseLost when the row is gone or someone else holds it. */
  private async heartbeat(connectorId: string, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw new LeaseLost('aborted');
    const r = await this.db
      .updateTable('sync_state')
      .set({ lease_until: later(this.leaseMs) })
      .where('connector_id', '=', connectorId)
      .where('lease_owner', '=', this.instanceId)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) throw new LeaseLost('lease lost');
  }

  /**
   * Run (or resume) one sync of a connector in this process and wait for it. Throws sync_running
   * when another run holds the lease.
   */
  async runOnce(connectorId: string, options: SyncOptions = {}): Promise<SyncResult> {
    if (!(await this.claim(connectorId))) {
      const exists = await this.state(connectorId);
      if (exists === undefined) throw new SwitchboardError('connector_not_found', 'No such connector');
      throw new SwitchboardError('sync_running', 'A sync of this connector is already running');
    }
    try {
      return await this.run(connectorId, options);
    } catch (e) {
      if (e instanceof LeaseLost && (await this.state(connectorId)) === undefined) {
        // The connector was deleted while this run was writing: drop what it wrote since.
        await this.options.sink.deleteConnector(connectorId);
      }
      if (!(e instanceof LeaseLost)) {
        const state = await this.state(connectorId);
        const authFailed = isAuthFailure(e);
        await this.db
          .updateTable('sync_state')
          .set({
            status: 'failed',
            last_error: e instanceof Error ? e.message : String(e),
            finished_at: now(),
            lease_owner: null,
            lease_until: null,
            // Refused credentials: no retry until they change or a check passes (resume()).
            next_run_at: authFailed ? null : later(Math.min(state?.interval_ms ?? this.defaultIntervalMs, 300_000)),
          })
          .where('connector_id', '=', connectorId)
          .where('lease_owner', '=', this.instanceId)
          .execute();
        if (authFailed) await this.options.onAuthFailed?.(connectorId, e);
      }
      throw e;
    }
  }

  private async run(connectorId: string, options: SyncOptions): Promise<SyncResult> {
    const state = await this.state(connectorId);
    if (state === undefined) throw new LeaseLost('connector removed');
    const built = await this.options.runtimeFor(connectorId);
    if (built === undefined) throw new LeaseLost('connector removed');
    const { runtime, manifest } = built;
    const resumed = state.run_complete === 0 && state.run_id !== null;
    const runId = resumed ? state.run_id! : randomUUID();
    const full = resumed ? state.run_full === 1 : options.full === true || state.requested_full === 1 || state.runs_since_full + 1 >= this.fullEvery;
    if (!resumed) {
      await this.db
        .updateTable('sync_state')
        .set({ run_id: runId, run_complete: 0, run_full: full ? 1 : 0, status: 'running', started_at: now(), last_error: null, requested_full: 0 })
        .where('connector_id', '=', connectorId)
        .execute();
      await this.db
        .updateTable('sync_entities')
        .set({ checkpoint: null, done: 0, records_seen: 0, records_deleted: 0, run_high_water: null })
        .where('connector_id', '=', connectorId)
        .execute();
    } else {
      await this.db.updateTable('sync_state').set({ status: 'running' }).where('connector_id', '=', connectorId).execute();
    }

    const result: SyncResult = { connector_id: connectorId, run_id: runId, full, resumed, entities: {} };
    const entities = [...manifest.entities.values()].filter((e) => e.def.sync !== undefined).sort((a, b) => a.name.localeCompare(b.name));
    for (const entity of entities) {
      result.entities[entity.name] = await this.syncEntity(connectorId, runtime, entity, runId, full, options);
    }
    const t = now();
    await this.db
      .updateTable('sync_state')
      .set({
        status: 'idle',
        run_complete: 1,
        finished_at: t,
        runs_since_full: full ? 0 : state.runs_since_full + 1,
        next_run_at: later(state.interval_ms ?? this.defaultIntervalMs),
        lease_owner: null,
        lease_until: null,
      })
      .where('connector_id', '=', connectorId)
      .where('lease_owner', '=', this.instanceId)
      .execute();
    return result;
  }

  private async entityRow(connectorId: string, entity: string): Promise<SyncEntityRow> {
    await this.db
      .insertInto('sync_entities')
      .values({ connector_id: connectorId, entity, done: 0, records_seen: 0, records_deleted: 0 })
      .onConflict((oc) => oc.columns(['connector_id', 'entity']).doNothing())
      .execute();
    return this.db.selectFrom('sync_entities').selectAll().where('connector_id', '=', connectorId).where('entity', '=', entity).executeTakeFirstOrThrow();
  }

  private async syncEntity(
    connectorId: string,
    runtime: ConnectorRuntime,
    entity: CompiledEntity,
    runId: string,
    full: boolean,
    options: SyncOptions,
  ): Promise<{ records: number; deleted: number }> {
    const sync = entity.def.sync!;
    const row = await this.entityRow(connectorId, entity.name);
    if (row.done === 1) return { records: row.records_seen, deleted: row.records_deleted };
    const def = searchDef(entity);
    let params: Record<string, unknown> = { ...((sync.params as Record<string, unknown> | undefined) ?? {}) };
    const inc = sync.incremental;
    const lastMark: unknown = row.high_water !== null ? (JSON.parse(row.high_water) as unknown) : undefined;
    // Incremental by a "changed since" param, or by a newest-first order (stop at older records).
    const sortedSince = !full && inc !== undefined && inc.mode === 'sorted' ? lastMark : undefined;
    // The action paged through: the full-sync one (list, or a sync-only scroll), or for an
    // incremental run the sync-only changes action when the manifest declares one.
    let action: 'list' | 'changes' | 'scroll' = sync.action ?? 'list';
    if (!full && inc !== undefined && (inc.mode ?? 'param') === 'param' && inc.param !== undefined && lastMark !== undefined) {
      const v = formatIncremental(lastMark, inc.format);
      if (v !== undefined) {
        if ((inc.action ?? 'list') === 'changes') {
          action = 'changes';
          params = { ...((inc.params as Record<string, unknown> | undefined) ?? {}) };
        }
        params[inc.param] = v;
      }
    }
    const checkpoint = row.checkpoint !== null ? (JSON.parse(row.checkpoint) as Checkpoint) : undefined;
    // for_each: one pass per parent record (e.g. Monday items per board), parents listed upstream.
    const fe = sync.for_each;
    let parents: unknown[] = [undefined];
    if (fe !== undefined) {
      const value = compileTemplate(fe.value);
      parents = [];
      for await (const parent of runtime.records(fe.entity, (fe.params as Record<string, unknown> | undefined) ?? {})) {
        const v = value.render({ record: parent });
        if (v !== undefined && v !== null && v !== '') parents.push(v);
      }
    }
    // Incremental: records removed upstream since the last run (e.g. from an activity log).
    let removed = 0;
    if (!full && sync.removals !== undefined && lastMark !== undefined) removed = await this.syncRemovals(connectorId, runtime, entity, parents, lastMark, options);
    const hydrate = sync.hydrate;
    const hydrateParams = hydrate ? Object.entries(hydrate.params).map(([k, src]) => [k, compileTemplate(String(src))] as const) : [];
    let seen = row.records_seen;
    let mark: unknown = row.run_high_water !== null ? (JSON.parse(row.run_high_water) as unknown) : undefined;
    let pages = 0;
    for (let pi = checkpoint?.parent ?? 0; pi < parents.length; pi++) {
      let pageParams = fe !== undefined ? { ...params, [fe.param]: parents[pi] } : params;
      let from: { url?: string } | undefined;
      if (checkpoint !== undefined && pi === (checkpoint.parent ?? 0) && checkpoint.next !== null) {
        pageParams = checkpoint.next.params;
        if (checkpoint.next.url !== undefined) from = { url: checkpoint.next.url };
      }
      for await (const { page, next } of runtime.pageSteps(entity.name, pageParams, from, action)) {
        if (options.signal?.aborted) throw new LeaseLost('aborted');
        let records = page.data;
        if (hydrate) {
          records = await mapLimit(records, this.hydrateConcurrency, async (record) => {
            const p = Object.fromEntries(hydrateParams.map(([k, t]) => [k, t.render({ record })]).filter(([, v]) => v !== undefined));
            const got = await runtime.execute(entity.name, 'get', p);
            return { ...record, ...(got.data as Record<string, unknown>) };
          });
        }
        if (records.length > 0) await this.options.sink.upsert(connectorId, entity.name, def, records, runId);
        if (inc !== undefined) for (const r of records) mark = maxMark(mark, r[inc.cursor_field]);
        seen += records.length;
        pages++;
        // Where to resume: the next page of this parent, or the start of the next parent.
        const cp: Checkpoint = next !== null ? { parent: pi, next } : { parent: pi + 1, next: null };
        await this.db
          .updateTable('sync_entities')
          .set({
            checkpoint: JSON.stringify(cp),
            records_seen: seen,
            run_high_water: mark === undefined ? null : JSON.stringify(mark),
          })
          .where('connector_id', '=', connectorId)
          .where('entity', '=', entity.name)
          .execute();
        await this.heartbeat(connectorId, options.signal);
        options.onProgress?.({ entity: entity.name, records: seen, pages, done: false });
        // Newest-first incremental: this page reached records the last run already had.
        if (sortedSince !== undefined && inc !== undefined && records.some((r) => maxMark(r[inc.cursor_field], sortedSince) === sortedSince && r[inc.cursor_field] !== sortedSince)) {
          await this.db
            .updateTable('sync_entities')
            .set({ checkpoint: JSON.stringify({ parent: pi + 1, next: null } satisfies Checkpoint) })
            .where('connector_id', '=', connectorId)
            .where('entity', '=', entity.name)
            .execute();
          break;
        }
      }
    }
    let deleted = removed;
    if (full && (sync.deletes ?? 'full_refresh') === 'full_refresh') deleted = await this.options.sink.deleteMissing(connectorId, entity.name, runId);
    const highWater = maxMark(row.high_water !== null ? (JSON.parse(row.high_water) as unknown) : undefined, mark);
    await this.db
      .updateTable('sync_entities')
      .set({
        done: 1,
        checkpoint: null,
        records_deleted: deleted,
        high_water: highWater === undefined ? null : JSON.stringify(highWater),
        last_synced_at: now(),
      })
      .where('connector_id', '=', connectorId)
      .where('entity', '=', entity.name)
      .execute();
    options.onProgress?.({ entity: entity.name, records: seen, pages, done: true });
    return { records: seen, deleted };
  }

  /**
   * sync.removals: page through the list that reports removals (once per for_each parent), from
   * the last run's high-water mark, and delete the removed records from search. Runs before the
   * entity's own pages, so a record restored since is stored again by them.
   */
  private async syncRemovals(connectorId: string, runtime: ConnectorRuntime, entity: CompiledEntity, parents: unknown[], since: unknown, options: SyncOptions): Promise<number> {
    const sync = entity.def.sync!;
    const rm = sync.removals!;
    const sinceValue = formatIncremental(since, rm.format);
    if (sinceValue === undefined) return 0;
    const idOf = compileTemplate(rm.id);
    const when = rm.when !== undefined ? compileTemplate(rm.when) : undefined;
    const fe = sync.for_each;
    let removed = 0;
    for (const parent of parents) {
      const params: Record<string, unknown> = { ...((rm.params as Record<string, unknown> | undefined) ?? {}), [rm.since_param]: sinceValue };
      if (fe !== undefined) params[fe.param] = parent;
      const ids = new Set<string>();
      for await (const record of runtime.records(rm.entity, params)) {
        if (options.signal?.aborted) throw new LeaseLost('aborted');
        if (when !== undefined && !truthy(when.render({ record }))) continue;
        const id = idOf.render({ record });
        if (id !== undefined && id !== null && id !== '') ids.add(String(id));
      }
      if (ids.size > 0) removed += await this.options.sink.deleteRecords(connectorId, entity.name, [...ids]);
      await this.heartbeat(connectorId, options.signal);
    }
    return removed;
  }
}
