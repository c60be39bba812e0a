/**
 * Running one sync of a connector, under a lease the caller holds (see scheduler.ts):
 *
 * - Per entity with `sync` in its manifest: page through `list` (hydrating each record through
 *   `get` where the manifest says so) and apply every page to the record store (apply.ts).
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
import type { CompiledEntity } from '../manifest/index.ts';
import type { NextPage } from '../pagination/index.ts';
import { compileTemplate, truthy } from '../templates/index.ts';
import type { ChangeApplier } from './apply.ts';
import { keepLease, LeaseLost, later, now, type SyncLeases } from './leases.ts';
import type { SyncEntityRow, SyncTables } from './sync-migrations.ts';
import type { EntityRunCounts, RuntimeFactory, SyncOptions, SyncResult } from './types.ts';

/** Where an entity's sync resumes: the parent index (for_each) and that parent's next page. */
export interface Checkpoint {
  parent?: number;
  next: NextPage;
}

function formatIncremental(value: unknown, format: 'iso8601' | 'date' | 'unix_seconds' | 'unix_ms' | 'raw' | undefined): unknown {
  if (value === null || value === undefined) return undefined;
  // raw: the cursor field's own value, for upstreams whose "since" param takes it as is (Slack's ts).
  if (format === 'raw') return value;
  const date = typeof value === 'number' ? new Date(value * 1000) : new Date(String(value));
  if (Number.isNaN(date.getTime())) return undefined;
  if (format === 'unix_seconds') return Math.floor(date.getTime() / 1000);
  if (format === 'unix_ms') return date.getTime();
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

/** The items in consecutive parts of at most `size` (one part, possibly empty, when size < 1 or the list is short). */
function chunks<T>(items: T[], size: number): T[][] {
  if (size < 1 || items.length <= size) return [items];
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
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
    const { runtime, manifest } = built;
    const resumed = state.run_complete === 0 && state.run_id !== null;
    const runId = resumed ? state.run_id! : randomUUID();
    const full = resumed ? state.run_full === 1 : options.full === true || state.requested_full === 1 || state.runs_since_full + 1 >= this.settings.fullEvery;
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
        result.entities[entity.name] = await this.syncEntity(connectorId, runtime, entity, runId, full, { ...options, signal: keeper.signal });
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
    entity: CompiledEntity,
    runId: string,
    full: boolean,
    options: SyncOptions,
  ): Promise<EntityRunCounts> {
    const sync = entity.def.sync!;
    const row = await this.entityRow(connectorId, entity.name);
    if (row.done === 1) return { records: row.records_seen, deleted: row.records_deleted, added: row.records_added, updated: row.records_updated };
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
    // Each parent is the params it sets: for_each.param, and for_each.also's.
    let parents: Record<string, unknown>[] = [{}];
    if (fe !== undefined) {
      const value = compileTemplate(fe.value);
      const also = Object.entries(fe.also ?? {}).map(([k, t]) => [k, compileTemplate(String(t))] as const);
      parents = [];
      for await (const parent of runtime.records(fe.entity, (fe.params as Record<string, unknown> | undefined) ?? {}, { signal: options.signal })) {
        const v = value.render({ record: parent });
        if (v === undefined || v === null || v === '') continue;
        const set: Record<string, unknown> = { [fe.param]: v };
        for (const [k, t] of also) {
          const a = t.render({ record: parent });
          if (a !== undefined && a !== null && a !== '') set[k] = a;
        }
        parents.push(set);
      }
    }
    // Incremental: records removed upstream since the last run (e.g. from an activity log).
    let removed = 0;
    if (!full && sync.removals !== undefined && lastMark !== undefined) removed = await this.syncRemovals(connectorId, runtime, entity, parents, lastMark, options);
    const deletedWhen = sync.deleted_when !== undefined ? compileTemplate(sync.deleted_when) : undefined;
    const hydrate = sync.hydrate;
    const hydrateParams = hydrate ? Object.entries(hydrate.params).map(([k, src]) => [k, compileTemplate(String(src))] as const) : [];
    let seen = row.records_seen;
    let added = row.records_added;
    let updated = row.records_updated;
    let mark: unknown = row.run_high_water !== null ? (JSON.parse(row.run_high_water) as unknown) : undefined;
    let pages = 0;
    /**
     * Write one page (its deletions, its records, then the checkpoint past it and the lease's
     * renewal). Pages are written in order, one at a time, while the next page is fetched and
     * hydrated: the write's round trips no longer hold the upstream's requests back (100 syncs on
     * PostgreSQL spent about a fifth of their time writing instead of fetching, issue 25's fleet
     * bench). A page's checkpoint is still stored only once its records are. With
     * pageWriteSlots, a page waits for a slot shared by the instance's runs.
     */
    const persist = async (pi: number, records: Record<string, unknown>[], gone: Record<string, unknown>[], next: NextPage, pageMark: unknown, reached: boolean, last = true): Promise<void> => {
      if (gone.length > 0) removed += await this.apply.delete(connectorId, entity, gone.map((r) => String(r[entity.def.primary_key])).filter((id) => id !== 'undefined'));
      const counts = await this.apply.upsert(connectorId, entity, records, runId);
      added += counts.added;
      updated += counts.updated;
      seen += records.length;
      // A part of a hydrated page: its records are stored, the checkpoint waits for the page's last part.
      if (!last) return;
      pages++;
      // Where to resume: the next page of this parent, or the start of the next parent.
      const cp: Checkpoint = next !== null ? { parent: pi, next } : { parent: pi + 1, next: null };
      await this.db
        .updateTable('sync_entities')
        .set({
          checkpoint: JSON.stringify(cp),
          records_seen: seen,
          records_added: added,
          records_updated: updated,
          run_high_water: pageMark === undefined ? null : JSON.stringify(pageMark),
        })
        .where('connector_id', '=', connectorId)
        .where('entity', '=', entity.name)
        .execute();
      await this.leases.heartbeat(connectorId, options.signal);
      options.onProgress?.({ entity: entity.name, records: seen, pages, done: false });
      if (reached) {
        await this.db
          .updateTable('sync_entities')
          .set({ checkpoint: JSON.stringify({ parent: pi + 1, next: null } satisfies Checkpoint) })
          .where('connector_id', '=', connectorId)
          .where('entity', '=', entity.name)
          .execute();
      }
    };
    /** The previous page's write, in flight while the next page is fetched. */
    let writing: Promise<void> | undefined;
    const written = async (): Promise<void> => {
      const w = writing;
      writing = undefined;
      if (w !== undefined) await w;
    };
    try {
      for (let pi = checkpoint?.parent ?? 0; pi < parents.length; pi++) {
        let pageParams = { ...params, ...parents[pi] };
        let from: { url?: string } | undefined;
        if (checkpoint !== undefined && pi === (checkpoint.parent ?? 0) && checkpoint.next !== null) {
          pageParams = checkpoint.next.params;
          if (checkpoint.next.url !== undefined) from = { url: checkpoint.next.url };
        }
        for await (const { page, next } of runtime.pageSteps(entity.name, pageParams, from, action, { signal: options.signal })) {
          if (options.signal?.aborted) throw new LeaseLost('aborted');
          // A hydrated page is fetched record by record (at the upstream's rate: 30 records take 6 s
          // on Granola) and written in parts of hydrateWriteRecords as they are hydrated, each part
          // while the next is fetched; its checkpoint goes with its last part. Written whole, the
          // pages of syncs started together came due together: 100 syncs wrote 3,000 records at
          // once every 6 s and saturated the machine for 2-3 s (issue 25's fleet bench).
          const parts = hydrate ? chunks(page.data, this.settings.hydrateWriteRecords) : [page.data];
          let reached = false;
          for (const [k, part] of parts.entries()) {
            let records = part;
            if (hydrate) {
              records = await mapLimit(records, this.settings.hydrateConcurrency, async (record) => {
                const p = Object.fromEntries(hydrateParams.map(([key, t]) => [key, t.render({ record })]).filter(([, v]) => v !== undefined));
                const got = await runtime.execute(entity.name, 'get', p, { signal: options.signal });
                return { ...record, ...(got.data as Record<string, unknown>) };
              });
            }
            if (inc !== undefined) for (const r of records) mark = maxMark(mark, r[inc.cursor_field]);
            // sync.deleted_when: records the page itself reports as deleted leave search instead of being stored.
            let gone: Record<string, unknown>[] = [];
            if (deletedWhen !== undefined) {
              gone = records.filter((record) => truthy(deletedWhen.render({ record })));
              if (gone.length > 0) records = records.filter((r) => !gone.includes(r));
            }
            // Newest-first incremental: this page reached records the last run already had.
            reached ||= sortedSince !== undefined && inc !== undefined && records.some((r) => maxMark(r[inc.cursor_field], sortedSince) === sortedSince && r[inc.cursor_field] !== sortedSince);
            await written();
            if (options.signal?.aborted) throw new LeaseLost('aborted');
            const write = persist.bind(null, pi, records, gone, next, mark, reached, k === parts.length - 1);
            writing = this.writeSlots !== undefined ? this.writeSlots.run(write) : write();
            // Observed here; its error is thrown where it is awaited (the next part or page, or after the last).
            writing.catch(() => undefined);
          }
          if (reached) break;
        }
      }
      await written();
    } catch (e) {
      // A failed fetch leaves no write running behind the run's end.
      await written().catch(() => undefined);
      throw e;
    }
    let deleted = removed;
    if (full && (sync.deletes ?? 'full_refresh') === 'full_refresh') deleted += await this.apply.deleteMissing(connectorId, entity, runId);
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
    await this.apply.reportRun({ connector_id: connectorId, entity: entity.name, added, updated, deleted, source: { sync_run: runId } });
    return { records: seen, deleted, added, updated };
  }

  /**
   * sync.removals: page through the list that reports removals (once per for_each parent), from
   * the last run's high-water mark, and delete the removed records from search. Runs before the
   * entity's own pages, so a record restored since is stored again by them.
   */
  private async syncRemovals(connectorId: string, runtime: ConnectorRuntime, entity: CompiledEntity, parents: Record<string, unknown>[], since: unknown, options: SyncOptions): Promise<number> {
    const sync = entity.def.sync!;
    const rm = sync.removals!;
    // Without since_param the removals list is read whole (it takes no time filter).
    const sinceValue = rm.since_param === undefined ? undefined : formatIncremental(since, rm.format);
    if (rm.since_param !== undefined && sinceValue === undefined) return 0;
    const idOf = compileTemplate(rm.id);
    const when = rm.when !== undefined ? compileTemplate(rm.when) : undefined;
    const fe = sync.for_each;
    let removed = 0;
    for (const parent of parents) {
      const params: Record<string, unknown> = { ...((rm.params as Record<string, unknown> | undefined) ?? {}), ...(rm.since_param !== undefined ? { [rm.since_param]: sinceValue } : {}), ...parent };
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
