/**
 * Scheduling syncs: which connector is due, starting its run under a lease (leases.ts), and the
 * bookkeeping around a run (failure, pause on refused credentials, status for the API). The run
 * itself is run.ts; what a run writes goes through apply.ts.
 */
import type { Kysely } from 'kysely';
import { SwitchboardError } from '../errors/index.ts';
import type { LoadedManifest } from '../manifest/index.ts';
import { ChangeApplier } from './apply.ts';
import { leaseOwner, type LeaseOwner } from './lease-owner.ts';
import { LeaseLost, later, now, SyncLeases } from './leases.ts';
import type { Checkpoint } from './pages.ts';
import { HYDRATE_WRITE_RECORDS, Slots, SyncRunner } from './run.ts';
import { anySchedulerSeen, forgetScheduler, noteScheduler } from './scheduler-heartbeat.ts';
import type { SyncTables } from './sync-migrations.ts';
import { isAuthFailure, type RecordSink, type SyncEngineOptions, type SyncOptions, type SyncResult, type SyncStatus } from './types.ts';

/**
 * The connectors due at `t` whose lease is free, oldest due first, at most `limit`: one read of
 * the `next_run_at` index (sync_state_due), whatever the fleet's size. Each tick runs it; the
 * fleet bench times it alone.
 */
export function dueConnectors(db: Kysely<SyncTables>, t: string, limit: number): Promise<{ connector_id: string }[]> {
  return db
    .selectFrom('sync_state')
    .select('connector_id')
    .where('next_run_at', '<=', t)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', t)]))
    .orderBy('next_run_at')
    .limit(limit)
    .execute();
}

/** The abort reason of runs stopped by stop(): they hand their lease back for another instance. */
const STOPPING = new LeaseLost('sync engine stopping');

/** The sync engine and its scheduler. One per service process. */
export class SyncEngine {
  private readonly db: Kysely<SyncTables>;
  readonly instanceId: string;
  private readonly defaultIntervalMs: number;
  private readonly pollMs: number;
  private readonly leases: SyncLeases;
  private readonly runner: SyncRunner;
  /** Writes to the record store (sync pages, vendor webhook deliveries), reporting records.changed. */
  readonly applier: ChangeApplier;
  private readonly running = new Map<string, { controller: AbortController; done: Promise<unknown> }>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  /** The tick in progress, if any. */
  private tickDone: Promise<void> | undefined;
  /** Set by stop(): no run starts any more. */
  private stopping = false;
  /** The reclaim of a previous life's leases, which the first tick waits for. */
  private reclaimed: Promise<void> = Promise.resolve();
  private readonly owner: LeaseOwner;

  constructor(private readonly options: SyncEngineOptions) {
    this.db = options.database.db as Kysely<SyncTables>;
    this.owner = options.instanceId !== undefined ? { id: options.instanceId, isDead: () => false } : leaseOwner(options.instanceName);
    this.instanceId = this.owner.id;
    this.defaultIntervalMs = options.defaultIntervalMs ?? 3_600_000;
    this.pollMs = options.pollMs ?? 5_000;
    this.leases = new SyncLeases(this.db, this.instanceId, options.leaseMs ?? 60_000);
    this.applier = new ChangeApplier(options.sink, options.onRecordsChanged);
    this.runner = new SyncRunner(
      this.db,
      this.leases,
      this.applier,
      options.runtimeFor,
      {
        defaultIntervalMs: this.defaultIntervalMs,
        fullEvery: options.fullRefreshEvery ?? 24,
        hydrateConcurrency: options.hydrateConcurrency ?? 4,
        hydrateWriteRecords: options.hydrateWriteRecords ?? HYDRATE_WRITE_RECORDS,
      },
      options.pageWriteSlots !== undefined && options.pageWriteSlots > 0 ? new Slots(options.pageWriteSlots) : undefined,
    );
  }

  /** Start syncing a new connector: its first run is due now. */
  async register(connectorId: string, intervalMs?: number): Promise<void> {
    await this.db
      .insertInto('sync_state')
      .values({
        connector_id: connectorId,
        status: 'idle',
        run_complete: 1,
        run_full: 1,
        next_run_at: now(),
        interval_ms: intervalMs ?? null,
        requested_full: 1,
        runs_since_full: 0,
      })
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
    const state = await this.leases.state(connectorId);
    if (state === undefined) throw new SwitchboardError('connector_not_found', 'No such connector');
    if (state.status === 'running' && state.lease_until !== null && state.lease_until > now() && !this.owner.isDead(state.lease_owner)) {
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
    const r = await this.db
      .updateTable('sync_state')
      .set({ next_run_at: null })
      .where('connector_id', '=', connectorId)
      .where('next_run_at', 'is not', null)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) > 0) await this.options.onPaused?.(connectorId);
  }

  /** Schedule a paused connector again, due now (credentials replaced, or a check passed). No-op when not paused. */
  async resume(connectorId: string): Promise<void> {
    const r = await this.db
      .updateTable('sync_state')
      .set({ next_run_at: now() })
      .where('connector_id', '=', connectorId)
      .where('next_run_at', 'is', null)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) > 0) {
      this.kick();
      await this.options.onResumed?.(connectorId);
    }
  }

  /** Status for the API: running/idle/failed, times, records per entity, last error. */
  async status(connectorId: string, manifest?: LoadedManifest): Promise<SyncStatus | undefined> {
    const state = await this.leases.state(connectorId);
    if (state === undefined) return undefined;
    const rows = await this.db.selectFrom('sync_entities').selectAll().where('connector_id', '=', connectorId).execute();
    const entities: SyncStatus['entities'] = {};
    const names = manifest ? [...manifest.entities.values()].filter((e) => e.def.sync).map((e) => e.name) : rows.map((r) => r.entity);
    for (const name of names) {
      const row = rows.find((r) => r.entity === name);
      entities[name] = { records: await this.options.sink.count(connectorId, name), last_synced_at: row?.last_synced_at ?? null };
    }
    // A lease whose holder is known dead (this instance's previous life) is not a live run.
    const live = state.status === 'running' && state.lease_until !== null && state.lease_until > now() && !this.owner.isDead(state.lease_owner);
    // A run still marked running whose lease has lapsed: its instance is gone mid-run.
    const interrupted = !live && state.status === 'running' && state.run_complete === 0 && state.run_id !== null;
    const resume: SyncStatus['resume_from'] = interrupted ? { run_id: state.run_id as string, entities: {} } : undefined;
    if (resume !== undefined) {
      for (const r of rows) {
        const cp = r.checkpoint !== null ? (JSON.parse(r.checkpoint) as Checkpoint) : undefined;
        resume.entities[r.entity] = {
          done: r.done === 1,
          records_seen: r.records_seen,
          parent: cp?.parent ?? null,
          params: (cp?.next?.params as Record<string, unknown> | undefined) ?? null,
        };
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

  /**
   * Start the scheduler loop; first, runs this instance held in a previous life are reclaimed
   * (reclaim()). Resolves once the scheduler has noted itself (scheduler-heartbeat.ts).
   */
  start(): Promise<void> {
    if (this.timer || this.stopping) return Promise.resolve();
    this.timer = setInterval(() => {
      void this.beat();
      this.kick();
    }, this.pollMs);
    this.timer.unref();
    const noted = this.beat();
    this.reclaimed = this.reclaim().then(
      () => undefined,
      (e: unknown) => this.options.onError?.('*', e),
    );
    this.kick();
    return noted;
  }

  /**
   * Release the leases of runs whose holder is known dead (this instance before a crash): they
   * show as interrupted and resume from their checkpoint at once, not when the lease expires.
   */
  async reclaim(): Promise<number> {
    const held = await this.db.selectFrom('sync_state').select(['connector_id', 'lease_owner']).where('lease_owner', 'is not', null).execute();
    let n = 0;
    for (const row of held) {
      if (!this.owner.isDead(row.lease_owner)) continue;
      const r = await this.db
        .updateTable('sync_state')
        .set({ lease_owner: null, lease_until: null, next_run_at: now() })
        .where('connector_id', '=', row.connector_id)
        .where('lease_owner', '=', row.lease_owner)
        .executeTakeFirst();
      n += Number(r.numUpdatedRows);
    }
    return n;
  }

  /** Whether stop() was called: no run starts any more. */
  get stopped(): boolean {
    return this.stopping;
  }

  /**
   * Stop the scheduler at once (no run starts from here on), abort local runs (in-flight
   * upstream calls included) and hand their leases back, so another instance resumes them from
   * their checkpoints without waiting for expiry; resolves when they have ended.
   */
  async stop(): Promise<void> {
    const wasRunning = this.timer !== undefined;
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const r of this.running.values()) r.controller.abort(STOPPING);
    if (wasRunning) await forgetScheduler(this.db, this.instanceId).catch((e: unknown) => this.options.onError?.('*', e));
    await this.tickDone;
    await Promise.all([...this.running.values()].map((r) => r.done.catch(() => undefined)));
  }

  /** Note this scheduler as running (scheduler-heartbeat.ts). */
  private beat(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return noteScheduler(this.db, this.instanceId, Date.now()).catch((e: unknown) => this.options.onError?.('*', e));
  }

  /** Whether a requested run will start: this instance's scheduler runs, or another's was seen lately. */
  async schedulerRunning(): Promise<boolean> {
    if (this.timer !== undefined && !this.stopping) return true;
    return anySchedulerSeen(this.db, Date.now());
  }

  private kick(): void {
    if (!this.timer || this.ticking || this.stopping) return;
    this.ticking = true;
    this.tickDone = this.tick()
      .catch((e: unknown) => this.options.onError?.('*', e))
      .finally(() => {
        this.ticking = false;
        this.tickDone = undefined;
      });
  }

  /**
   * Claim and start every due connector whose lease is free. The due connectors are read in
   * batches of 16 (each batch's checks at once): a full batch may leave more due behind it, so
   * look again at once rather than a poll later, until a batch finds nothing new (100 connectors
   * due at once took seven polls, 30 s, to start). Every due connector is found and checked
   * before any is started: started first, the runs' own queries (claim, state, credentials) took
   * the pool's connections from the next batch's, and a tick over 85 due connectors on
   * PostgreSQL took 130-300 ms (issue 25's fleet bench at 10,000 connectors).
   */
  private async tick(): Promise<void> {
    await this.reclaimed;
    const start: string[] = [];
    const found = new Set<string>();
    for (;;) {
      if (this.stopping) return;
      // Past the runs of this instance that have not claimed their lease yet (a claim can wait its
      // turn behind running syncs' writes) and the connectors found so far: else they would fill
      // the batch and end the tick.
      const limit = 16 + this.running.size + found.size;
      const due = await dueConnectors(this.db, now(), limit);
      const candidates = due.map((r) => r.connector_id).filter((id) => !this.running.has(id) && !found.has(id));
      const fresh = candidates.slice(0, 16);
      for (const id of fresh) found.add(id);
      // The batch's checks in one call, not one round trip after another.
      const allowed = this.options.canRun === undefined || fresh.length === 0 ? fresh.map(() => true) : await this.options.canRun(fresh);
      for (const [i, connector_id] of fresh.entries()) {
        if (allowed[i]) start.push(connector_id);
        else await this.pause(connector_id);
      }
      // Done when the query found all there was and this batch took every candidate.
      if ((due.length < limit && candidates.length === fresh.length) || fresh.length === 0 || !this.timer) break;
    }
    for (const connector_id of start) {
      if (this.stopping) return;
      if (this.running.has(connector_id)) continue;
      const controller = new AbortController();
      const done = this.runOnce(connector_id, { signal: controller.signal }).catch((e: unknown) => {
        if (!(e instanceof LeaseLost)) this.options.onError?.(connector_id, e);
      });
      this.running.set(connector_id, { controller, done });
      void done.finally(() => this.running.delete(connector_id));
    }
  }

  /**
   * Run (or resume) one sync of a connector in this process and wait for it. Throws sync_running
   * when another run holds the lease.
   */
  async runOnce(connectorId: string, options: SyncOptions = {}): Promise<SyncResult> {
    if (!(await this.leases.claim(connectorId))) {
      const exists = await this.leases.state(connectorId);
      if (exists === undefined) throw new SwitchboardError('connector_not_found', 'No such connector');
      throw new SwitchboardError('sync_running', 'A sync of this connector is already running');
    }
    let result: SyncResult;
    try {
      result = await this.runner.run(connectorId, options);
    } catch (caught) {
      // Aborted: the run ends as if its process had (lease kept); stopped (shutdown): it also hands the
      // lease back. Either way it resumes from its checkpoint.
      const e = options.signal?.aborted === true ? (options.signal.reason === STOPPING ? STOPPING : new LeaseLost('aborted')) : caught;
      if (e === STOPPING)
        await this.db
          .updateTable('sync_state')
          .set({ lease_owner: null, lease_until: null })
          .where('connector_id', '=', connectorId)
          .where('lease_owner', '=', this.instanceId)
          .execute();
      if (e instanceof LeaseLost && (await this.leases.state(connectorId)) === undefined) {
        // The connector was deleted while this run was writing: drop what it wrote since.
        await this.options.sink.deleteConnector(connectorId);
      }
      if (!(e instanceof LeaseLost)) {
        const state = await this.leases.state(connectorId);
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
        await this.options.onFailed?.(connectorId, e);
      }
      throw e;
    }
    await this.options.onCompleted?.(result);
    return result;
  }
}
