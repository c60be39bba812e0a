/**
 * Running one sync of a connector, under a lease the caller holds (see scheduler.ts):
 *
 * - Per entity with `sync` in its manifest: page through `list` (hydrating each record through
 *   `get` where the manifest says so) and apply every page to the record store (pages.ts, in this
 *   thread or in the service's sync worker; apply.ts).
 * - Incremental where the manifest declares it (a list param such as Granola's updated_after,
 *   set from the highest `cursor_field` value seen by the last completed run). Every
 *   `fullRefreshEvery`-th run, on request, and on the first run it is a full refresh instead,
 *   and records the full refresh did not see are deleted (deletion detection).
 * - Checkpointed after every page: the next page's request is stored, so a process killed
 *   mid-sync resumes where it stopped, in the same run (records already stored keep the run
 *   marker, so deletion detection stays right). The lease is renewed after every page and by a
 *   timer every third of its length (leases.ts keepLease), so a page slower than the lease keeps it.
 * - Within the connector's rate limits: the engine's per-instance throttle spaces requests, and
 *   its retry honours Retry-After when the upstream answers 429 anyway.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ConnectorRuntime } from '../engine/index.ts';
import { isSwitchboardError } from '../errors/index.ts';
import type { CompiledEntity } from '../manifest/index.ts';
import { compileTemplate, truthy } from '../templates/index.ts';
import type { ChangeApplier } from './apply.ts';
import { forEachParents } from './parents.ts';
import { keepsParentMarks, nextParentMarks, storedParentMarks, type ParentMarks, type PerParentJob } from './parent-marks.ts';
import { keepLease, LeaseLost, later, now, type SyncLeases } from './leases.ts';
import { maxMark, syncPages, type Checkpoint, type PagesJob, type PartStored } from './pages.ts';
import type { SyncEntityRow, SyncStateRow, SyncTables } from './sync-migrations.ts';
import { syncRunStarted } from '../observe/hooks.ts';
import type { EntityRunCounts, RemotePages, RuntimeFactory, SyncOptions, SyncResult } from './types.ts';

function formatIncremental(value: unknown, format: 'iso8601' | 'date' | 'unix_seconds' | 'unix_ms' | 'raw' | undefined): unknown {
  if (value === null || value === undefined) return undefined;
  // raw: the cursor field's own value, for upstreams whose "since" param takes it as is (Slack's ts).
  if (format === 'raw') return value;
  // A numeric mark is Unix seconds, or milliseconds when that large (1e11 seconds is the year 5138: Lever's updatedAt).
  const date = typeof value === 'number' ? new Date(value >= 1e11 ? value : value * 1000) : new Date(String(value));
  if (Number.isNaN(date.getTime())) return undefined;
  if (format === 'unix_seconds') return Math.floor(date.getTime() / 1000);
  if (format === 'unix_ms') return date.getTime();
  if (format === 'date') return date.toISOString().slice(0, 10);
  return date.toISOString();
}

/** Where an entity's pass starts: its action and params, and for an incremental run the last run's mark as a param or a link to follow. */
function passStart(
  runtime: ConnectorRuntime,
  sync: NonNullable<CompiledEntity['def']['sync']>,
  full: boolean,
  lastMark: unknown,
): {
  sortedSince: unknown;
  action: 'list' | 'changes' | 'scroll';
  params: Record<string, unknown>;
  sinceMark: boolean;
  fromLink: Checkpoint | undefined;
  mode: string;
} {
  let params: Record<string, unknown> = runtime.fixedParams(sync.params);
  const inc = sync.incremental;
  // Incremental by a "changed since" param, or by a newest-first order (stop at older records).
  const sortedSince = !full && inc !== undefined && inc.mode === 'sorted' ? lastMark : undefined;
  // The action paged through: the full-sync one (list, or a sync-only scroll), or for an
  // incremental run the sync-only changes action when the manifest declares one.
  let action: 'list' | 'changes' | 'scroll' = sync.action ?? 'list';
  /** The pages ask for changes since the last run's mark (which the upstream may refuse as expired: incremental.resync_on). */
  let sinceMark = false;
  const mode = inc?.mode ?? 'param';
  // Marks kept per parent start each parent's pass in the pages (perParentJob), not the entity's.
  const perParent = keepsParentMarks(sync);
  if (!full && !perParent && inc !== undefined && (mode === 'param' || mode === 'token') && inc.param !== undefined && lastMark !== undefined) {
    const v = formatIncremental(lastMark, mode === 'token' ? 'raw' : inc.format);
    if (v !== undefined) {
      if ((inc.action ?? 'list') === 'changes') {
        action = 'changes';
        params = runtime.fixedParams(inc.params);
      }
      params[inc.param] = v;
      sinceMark = true;
    }
  }
  // Mode link: the last run's link (Graph's @odata.deltaLink) is requested as is, as the next page of the incremental action.
  let fromLink: Checkpoint | undefined;
  if (!full && !perParent && inc !== undefined && mode === 'link' && typeof lastMark === 'string' && lastMark !== '') {
    action = inc.action ?? 'list';
    if (action !== (sync.action ?? 'list')) params = runtime.fixedParams(inc.params);
    fromLink = { parent: 0, next: { params, url: lastMark } };
    sinceMark = true;
  }
  return { sortedSince, action, params, sinceMark, fromLink, mode };
}

/** Modes token and link with for_each: how each parent's pass starts, from the last run's marks by parent (none on a full run). */
function perParentJob(runtime: ConnectorRuntime, sync: NonNullable<CompiledEntity['def']['sync']>, full: boolean, lastMark: unknown): PerParentJob | undefined {
  const inc = sync.incremental;
  if (inc === undefined || !keepsParentMarks(sync)) return undefined;
  const action = inc.action ?? 'list';
  return {
    mode: inc.mode === 'token' ? 'token' : 'link',
    marks: full ? {} : storedParentMarks(lastMark),
    action,
    params: runtime.fixedParams(action === (sync.action ?? 'list') ? sync.params : inc.params),
    param: inc.param,
    resyncOn: inc.resync_on ?? [],
  };
}

/** At most `size` holders at once; the others wait in order of arrival. */
export class Slots {
  private busy = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(readonly size: number) {}
  /** Holders now, and callers waiting. */
  get held(): number {
    return this.busy;
  }
  get queued(): number {
    return this.waiting.length;
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.busy >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.busy++;
    try {
      return await fn();
    } finally {
      // The slot passes to the next caller waiting, if any, without being freed in between.
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.busy--;
    }
  }
}

/** Records per write of a hydrated page (SyncEngineOptions.hydrateWriteRecords). */
export const HYDRATE_WRITE_RECORDS = 8;

/** Runs syncs: one call of run() is one run (or the resumption of an interrupted one). */
export class SyncRunner {
  constructor(
    private readonly db: Kysely<SyncTables>,
    private readonly leases: SyncLeases,
    private readonly apply: ChangeApplier,
    private readonly runtimeFor: RuntimeFactory,
    private readonly settings: { defaultIntervalMs: number; fullEvery: number; hydrateConcurrency: number; hydrateWriteRecords: number },
    /** Page writes at once across this instance's runs (SyncEngineOptions.pageWriteSlots). */
    private readonly writeSlots?: Slots,
  ) {}

  async run(connectorId: string, options: SyncOptions): Promise<SyncResult> {
    const state = await this.leases.state(connectorId);
    if (state === undefined) throw new LeaseLost('connector removed');
    const built = await this.runtimeFor(connectorId);
    if (built === undefined) throw new LeaseLost('connector removed');
    const probe = syncRunStarted(built.manifest.type);
    if (probe === undefined) return this.runBuilt(connectorId, options, state, built);
    const started = performance.now();
    const counts = { added: 0, updated: 0, deleted: 0 };
    try {
      const result = await this.runBuilt(connectorId, options, state, built);
      for (const c of Object.values(result.entities)) {
        counts.added += c.added;
        counts.updated += c.updated;
        counts.deleted += c.deleted;
      }
      probe.end({ outcome: 'completed', ...counts, durationMs: performance.now() - started });
      return result;
    } catch (e) {
      probe.end({ outcome: 'failed', ...counts, durationMs: performance.now() - started });
      throw e;
    }
  }

  private async runBuilt(
    connectorId: string,
    options: SyncOptions,
    state: SyncStateRow,
    built: NonNullable<Awaited<ReturnType<RuntimeFactory>>>,
  ): Promise<SyncResult> {
    const { runtime, manifest, pages: pagesIn } = built;
    const resumed = state.run_complete === 0 && state.run_id !== null;
    const runId = resumed ? state.run_id! : randomUUID();
    // A manifest no synced entity of which reads incrementally reads everything every run: each run is then a full refresh (deletions detected).
    const onlyFull = ![...manifest.entities.values()].some((e) => e.def.sync?.incremental !== undefined);
    const full = resumed
      ? state.run_full === 1
      : onlyFull || options.full === true || state.requested_full === 1 || state.runs_since_full + 1 >= this.settings.fullEvery;
    if (!resumed) {
      await this.db
        .updateTable('sync_state')
        .set({ run_id: runId, run_complete: 0, run_full: full ? 1 : 0, status: 'running', started_at: now(), last_error: null, requested_full: 0 })
        .where('connector_id', '=', connectorId)
        .execute();
      await this.db
        .updateTable('sync_entities')
        .set({ checkpoint: null, done: 0, records_seen: 0, records_deleted: 0, records_added: 0, records_updated: 0, run_high_water: null })
        .where('connector_id', '=', connectorId)
        .execute();
    } else {
      await this.db.updateTable('sync_state').set({ status: 'running' }).where('connector_id', '=', connectorId).execute();
    }

    const result: SyncResult = { connector_id: connectorId, run_id: runId, full, resumed, entities: {} };
    const entities = [...manifest.entities.values()].filter((e) => e.def.sync !== undefined).sort((a, b) => a.name.localeCompare(b.name));
    const keeper = keepLease(this.leases, connectorId, options.signal);
    try {
      for (const entity of entities) {
        result.entities[entity.name] = await this.syncEntity(connectorId, runtime, pagesIn, entity, runId, full, { ...options, signal: keeper.signal });
      }
    } catch (e) {
      // Stopped by a renewal that found the lease gone: the run ends as LeaseLost, not as the abort.
      throw keeper.lost ?? e;
    } finally {
      keeper.stop();
    }
    const t = now();
    await this.db
      .updateTable('sync_state')
      .set({
        status: 'idle',
        run_complete: 1,
        finished_at: t,
        runs_since_full: full ? 0 : state.runs_since_full + 1,
        next_run_at: later(state.interval_ms ?? this.settings.defaultIntervalMs),
        lease_owner: null,
        lease_until: null,
      })
      .where('connector_id', '=', connectorId)
      .where('lease_owner', '=', this.leases.instanceId)
      .execute();
    return result;
  }

  private async entityRow(connectorId: string, entity: string): Promise<SyncEntityRow> {
    await this.db
      .insertInto('sync_entities')
      .values({ connector_id: connectorId, entity, done: 0, records_seen: 0, records_deleted: 0, records_added: 0, records_updated: 0 })
      .onConflict((oc) => oc.columns(['connector_id', 'entity']).doNothing())
      .execute();
    return this.db.selectFrom('sync_entities').selectAll().where('connector_id', '=', connectorId).where('entity', '=', entity).executeTakeFirstOrThrow();
  }

  private async syncEntity(
    connectorId: string,
    runtime: ConnectorRuntime,
    pagesIn: RemotePages | undefined,
    entity: CompiledEntity,
    runId: string,
    full: boolean,
    options: SyncOptions,
  ): Promise<EntityRunCounts> {
    const sync = entity.def.sync!;
    const row = await this.entityRow(connectorId, entity.name);
    if (row.done === 1) return { records: row.records_seen, deleted: row.records_deleted, added: row.records_added, updated: row.records_updated };
    const inc = sync.incremental;
    const lastMark: unknown = row.high_water !== null ? (JSON.parse(row.high_water) as unknown) : undefined;
    const { sortedSince, action, params, sinceMark, fromLink, mode } = passStart(runtime, sync, full, lastMark);
    const checkpoint = row.checkpoint !== null ? (JSON.parse(row.checkpoint) as Checkpoint) : fromLink;
    // for_each: one pass per parent record (e.g. Monday items per board), parents listed upstream.
    const parents = await this.parentsOf(runtime, sync, options);
    // Incremental: records removed upstream since the last run (e.g. from an activity log).
    let removed = 0;
    if (!full && sync.removals !== undefined && lastMark !== undefined)
      removed = await this.syncRemovals(connectorId, runtime, entity, parents, lastMark, options);
    let seen = row.records_seen;
    let added = row.records_added;
    let updated = row.records_updated;
    let mark: unknown = row.run_high_water !== null ? (JSON.parse(row.run_high_water) as unknown) : undefined;
    // Mode token with a start: a full pass begins by asking for the token of "now" (Drive's changes.getStartPageToken).
    const startToken = (): Promise<unknown> => this.startToken(runtime, entity, options);
    if (!sinceMark && mark === undefined && checkpoint === undefined) mark = await startToken();
    let pages = 0;
    const perParent = perParentJob(runtime, sync, full, lastMark);
    const job: PagesJob = {
      perParent,
      entity: entity.name,
      runId,
      params,
      parents,
      checkpoint,
      action,
      sortedSince,
      mark,
      hydrateConcurrency: this.settings.hydrateConcurrency,
      hydrateWriteRecords: this.settings.hydrateWriteRecords,
    };
    /** A part's records are stored: count them and, after a page's last part, checkpoint past the page and renew the lease. */
    const stored = async (p: PartStored): Promise<void> => {
      removed += p.removed;
      added += p.added;
      updated += p.updated;
      seen += p.records;
      mark = p.mark;
      // A part of a hydrated page: its records are stored, the checkpoint waits for the page's last part.
      if (!p.last) return;
      pages++;
      // Where to resume: the next page of this parent, or the start of the next parent.
      const cp: Checkpoint =
        p.next !== null ? { parent: p.pi, next: p.next, ...(p.action !== undefined ? { action: p.action } : {}) } : { parent: p.pi + 1, next: null };
      await this.db
        .updateTable('sync_entities')
        .set({
          checkpoint: JSON.stringify(cp),
          records_seen: seen,
          records_added: added,
          records_updated: updated,
          run_high_water: p.mark === undefined ? null : JSON.stringify(p.mark),
        })
        .where('connector_id', '=', connectorId)
        .where('entity', '=', entity.name)
        .execute();
      await this.leases.heartbeat(connectorId, options.signal);
      options.onProgress?.({ entity: entity.name, records: seen, pages, done: false });
      if (p.reached) {
        await this.db
          .updateTable('sync_entities')
          .set({ checkpoint: JSON.stringify({ parent: p.pi + 1, next: null } satisfies Checkpoint) })
          .where('connector_id', '=', connectorId)
          .where('entity', '=', entity.name)
          .execute();
      }
    };
    const slots = this.writeSlots;
    const runPages = async (j: PagesJob): Promise<void> => {
      if (pagesIn !== undefined) {
        // In the sync worker: it stores the records; the bookkeeping stays here (with pageWriteSlots, a page's waits for a slot).
        await pagesIn(j, (p) => (slots !== undefined ? slots.run(() => stored(p)) : stored(p)), options.signal);
      } else {
        await syncPages(runtime, entity, j, {
          upsert: (records) => this.apply.upsert(connectorId, entity, records, runId),
          delete: (ids) => this.apply.delete(connectorId, entity, ids),
          stored,
          ...(slots !== undefined ? { turn: (write: () => Promise<void>) => slots.run(write) } : {}),
          signal: options.signal,
        });
      }
    };
    /** This entity's pass is a full one: the run's, or one started over after the upstream refused an expired mark. */
    let entityFull = full;
    try {
      await runPages(job);
    } catch (e) {
      const status = isSwitchboardError(e) ? e.details['upstream_status'] : undefined;
      if (!sinceMark || typeof status !== 'number' || !(inc?.resync_on ?? ([] as number[])).includes(status)) throw e;
      // The mark expired upstream (incremental.resync_on): drop it (a resumed run then lists in full, as this pass does) and list everything.
      await this.db
        .updateTable('sync_entities')
        .set({ high_water: null, checkpoint: null, run_high_water: null })
        .where('connector_id', '=', connectorId)
        .where('entity', '=', entity.name)
        .execute();
      entityFull = true;
      mark = await startToken();
      await runPages({ ...job, action: sync.action ?? 'list', params: runtime.fixedParams(sync.params), checkpoint: undefined, mark });
    }
    let deleted = removed;
    if (entityFull && (sync.deletes ?? 'full_refresh') === 'full_refresh') deleted += await this.apply.deleteMissing(connectorId, entity, runId);
    const previous = row.high_water !== null && !(entityFull && !full) ? (JSON.parse(row.high_water) as unknown) : undefined;
    // A token (or link) is the next run's starting point as given (modes token and link); change times keep the newest.
    const highWater =
      perParent !== undefined
        ? nextParentMarks(storedParentMarks(lastMark), mark as ParentMarks | undefined, parents)
        : mode === 'token' || mode === 'link'
          ? (mark ?? previous)
          : maxMark(previous, mark);
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
    await this.apply.reportRun({ connector_id: connectorId, entity: entity.name, added, updated, deleted, source: { sync_run: runId } });
    return { records: seen, deleted, added, updated };
  }

  /** incremental.start: the token a full pass of a mode-token entity starts from, read from another entity's get. */
  private async startToken(runtime: ConnectorRuntime, entity: CompiledEntity, options: SyncOptions): Promise<unknown> {
    const inc = entity.def.sync?.incremental;
    const start = inc?.mode === 'token' ? inc.start : undefined;
    if (start === undefined) return undefined;
    const got = await runtime.execute(start.entity, 'get', runtime.fixedParams(start.params), { signal: options.signal });
    return compileTemplate(start.token).render({ record: got.data });
  }

  /** The params of each for_each parent ([{}] without for_each): the parent entity is listed upstream. */
  private async parentsOf(
    runtime: ConnectorRuntime,
    sync: NonNullable<CompiledEntity['def']['sync']>,
    options: SyncOptions,
  ): Promise<Record<string, unknown>[]> {
    // Each parent is the params it sets; a parent listed under its own parents where its list needs them (parents.ts).
    return sync.for_each === undefined ? [{}] : forEachParents(runtime, sync.for_each, options.signal);
  }

  /**
   * sync.removals: page through the list that reports removals (once per for_each parent), from
   * the last run's high-water mark, and delete the removed records from search. Runs before the
   * entity's own pages, so a record restored since is stored again by them.
   */
  private async syncRemovals(
    connectorId: string,
    runtime: ConnectorRuntime,
    entity: CompiledEntity,
    parents: Record<string, unknown>[],
    since: unknown,
    options: SyncOptions,
  ): Promise<number> {
    const sync = entity.def.sync!;
    const rm = sync.removals!;
    // Without since_param the removals list is read whole (it takes no time filter).
    const sinceValue = rm.since_param === undefined ? undefined : formatIncremental(since, rm.format);
    if (rm.since_param !== undefined && sinceValue === undefined) return 0;
    const idOf = compileTemplate(rm.id);
    const when = rm.when !== undefined ? compileTemplate(rm.when) : undefined;
    let removed = 0;
    for (const parent of parents) {
      const params: Record<string, unknown> = {
        ...runtime.fixedParams(rm.params),
        ...(rm.since_param !== undefined ? { [rm.since_param]: sinceValue } : {}),
        ...parent,
      };
      const ids = new Set<string>();
      for await (const record of runtime.records(rm.entity, params, { signal: options.signal })) {
        if (options.signal?.aborted) throw new LeaseLost('aborted');
        if (when !== undefined && !truthy(when.render({ record }))) continue;
        const id = idOf.render({ record });
        if (id !== undefined && id !== null && id !== '') ids.add(String(id));
      }
      if (ids.size > 0) removed += await this.apply.delete(connectorId, entity, [...ids]);
      await this.leases.heartbeat(connectorId, options.signal);
    }
    return removed;
  }
}
