/**
 * The pages of one entity's sync: listing them upstream, hydrating their records, following the
 * incremental mark, and storing each part. Run by run.ts in the thread that runs the sync, or
 * in the sync worker (src/search/record-writer-worker.ts), where the records never reach the
 * thread that serves requests; either way the run's bookkeeping (checkpoints, the lease, counts)
 * is the caller's, through `stored`.
 */
import type { ConnectorRuntime } from '../engine/index.ts';
import type { CompiledEntity } from '../manifest/index.ts';
import type { NextPage } from '../pagination/index.ts';
import { isSwitchboardError } from '../errors/index.ts';
import { compileTemplate, truthy } from '../templates/index.ts';
import { LeaseLost } from './leases.ts';
import { parentKey, parentStart, type ParentMarks, type PerParentJob } from './parent-marks.ts';

/** Marks a hydrated record whose get answered 404 (hydrate.missing: delete). */
const MISSING = Symbol('missing');

/** Where an entity's sync resumes: the parent index (for_each) and that parent's next page. */
export interface Checkpoint {
  parent?: number;
  next: NextPage;
  /** The action the parent's pages run (a parent's pass from its own mark runs the incremental one: parent-marks.ts). */
  action?: 'list' | 'changes' | 'scroll' | undefined;
}

/** What an upsert changed: records new to the store, and records whose payload changed (unchanged ones count in neither). */
export interface UpsertCounts {
  added: number;
  updated: number;
}

/** What the pages of one entity's run start from (all of it plain data: it crosses to the sync worker). */
export interface PagesJob {
  entity: string;
  runId: string;
  /** The list params, before each parent's. */
  params: Record<string, unknown>;
  /** The params of each for_each parent ([{}] without for_each). */
  parents: Record<string, unknown>[];
  checkpoint?: Checkpoint | undefined;
  action: 'list' | 'changes' | 'scroll';
  /** Newest-first incremental: the last run's mark, where paging stops. */
  sortedSince?: unknown;
  /** The run's high-water mark so far (a resumed run's). */
  mark?: unknown;
  hydrateConcurrency: number;
  hydrateWriteRecords: number;
  /** Modes token and link with for_each: each parent starts from its own mark (parent-marks.ts); `mark` is then the run's marks by parent. */
  perParent?: PerParentJob | undefined;
}

/** One part stored: its records (all a page's, or a hydrated page's part), and where the run is. */
export interface PartStored {
  /** The parent index and the next page after this part's page. */
  pi: number;
  next: NextPage;
  /** The run's high-water mark with this part's records. */
  mark: unknown;
  /** Newest-first incremental: the page reached records the last run had (paging stops). */
  reached: boolean;
  /** The page's last part: its checkpoint is due. */
  last: boolean;
  records: number;
  added: number;
  updated: number;
  /** Records the page reported deleted (sync.deleted_when), removed from the store. */
  removed: number;
  /** The action of this part's page, when not the job's (a parent's pass from its own mark). */
  action?: 'list' | 'changes' | 'scroll' | undefined;
}

export interface PagesIO {
  /** Store records of the entity, marked seen by the run. */
  upsert(records: Record<string, unknown>[]): Promise<UpsertCounts>;
  /** Delete records of the entity by id; how many were stored. */
  delete(ids: string[]): Promise<number>;
  /** After each part's records are stored, one part at a time, in order: the run's bookkeeping. */
  stored(part: PartStored): Promise<void>;
  /** Each part's write (records and bookkeeping) runs through it (SyncEngineOptions.pageWriteSlots). */
  turn?: (write: () => Promise<void>) => Promise<void>;
  signal?: AbortSignal | undefined;
}

/**
 * Higher of two high-water values: numbers numerically, whole numbers written as text
 * (snowflake ids, 18 or 19 digits: too long for a number) by length first, other strings as ISO text.
 */
export function maxMark(a: unknown, b: unknown): unknown {
  if (a === undefined || a === null) return b;
  if (b === undefined || b === null) return a;
  if (typeof a === 'number' && typeof b === 'number') return Math.max(a, b);
  const [x, y] = [String(a), String(b)];
  if (/^\d+$/.test(x) && /^\d+$/.test(y) && x.length !== y.length) return x.length > y.length ? a : b;
  return x >= y ? a : b;
}

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

/**
 * Page through the entity from the job's checkpoint (or its first parent's first page) to the
 * end, storing every part. Each part is written (its records, then `stored`) while the next is
 * fetched and hydrated, one write at a time: the write's round trips do not hold the upstream's
 * requests back (100 syncs on PostgreSQL spent about a fifth of their time writing instead of
 * fetching, issue 25's fleet bench), and a page's checkpoint still follows its records.
 */
export async function syncPages(runtime: ConnectorRuntime, entity: CompiledEntity, job: PagesJob, io: PagesIO): Promise<void> {
  const sync = entity.def.sync!;
  const inc = sync.incremental;
  const deletedWhen = sync.deleted_when !== undefined ? compileTemplate(sync.deleted_when) : undefined;
  const hydrate = sync.hydrate;
  const hydrateParams = hydrate ? Object.entries(hydrate.params).map(([k, src]) => [k, compileTemplate(String(src))] as const) : [];
  const { checkpoint, parents, signal } = { ...job, signal: io.signal };
  let mark = job.mark;
  const persist = async (
    pi: number,
    records: Record<string, unknown>[],
    gone: Record<string, unknown>[],
    next: NextPage,
    pageMark: unknown,
    reached: boolean,
    last: boolean,
    action: PartStored['action'],
  ): Promise<void> => {
    const removed = gone.length === 0 ? 0 : await io.delete(gone.map((r) => String(r[entity.def.primary_key])).filter((id) => id !== 'undefined'));
    const counts = records.length === 0 ? { added: 0, updated: 0 } : await io.upsert(records);
    const part: PartStored = { pi, next, mark: pageMark, reached, last, records: records.length, added: counts.added, updated: counts.updated, removed };
    await io.stored(action === undefined ? part : { ...part, action });
  };
  /** The previous part's write, in flight while the next part is fetched. */
  let writing: Promise<void> | undefined;
  const written = async (): Promise<void> => {
    const w = writing;
    writing = undefined;
    if (w !== undefined) await w;
  };
  try {
    for (let pi = checkpoint?.parent ?? 0; pi < parents.length; pi++) {
      const parent = parents[pi]!;
      // A parent's pass: from its own mark where the entity keeps marks per parent (parent-marks.ts), else in full.
      let start = parentStart(job, parent);
      if (checkpoint !== undefined && pi === (checkpoint.parent ?? 0) && checkpoint.next !== null) {
        const url = checkpoint.next.url;
        start = { ...start, action: checkpoint.action ?? job.action, params: checkpoint.next.params, ...(url !== undefined ? { from: { url } } : {}) };
      }
      const pkey = job.perParent !== undefined ? parentKey(parent) : undefined;
      try {
        await parentPass(pi, start, pkey);
      } catch (e) {
        const status = isSwitchboardError(e) ? e.details['upstream_status'] : undefined;
        if (pkey === undefined || !start.fromMark || typeof status !== 'number' || !job.perParent!.resyncOn.includes(status)) throw e;
        // This parent's mark expired upstream (incremental.resync_on): drop it and list this parent, only, in full.
        mark = { ...(mark as ParentMarks | undefined), [pkey]: null };
        await parentPass(pi, { action: job.action, params: { ...job.params, ...parent }, fromMark: false }, pkey);
      }
    }
    await written();
  } catch (e) {
    // A failed fetch leaves no write running behind the run's end.
    await written().catch(() => undefined);
    throw e;
  }

  /** One parent's pages, from where `start` says, each part written while the next is fetched. */
  async function parentPass(pi: number, start: ReturnType<typeof parentStart>, pkey: string | undefined): Promise<void> {
    const partAction = pkey !== undefined ? start.action : undefined;
    for await (const { page, next } of runtime.pageSteps(entity.name, start.params, start.from, start.action, { signal })) {
      if (signal?.aborted) throw new LeaseLost('aborted');
      // A hydrated page is fetched record by record (at the upstream's rate: 30 records take 6 s
      // on Granola) and written in parts of hydrateWriteRecords as they are hydrated, each part
      // while the next is fetched; its checkpoint goes with its last part. Written whole, the
      // pages of syncs started together came due together: 100 syncs wrote 3,000 records at
      // once every 6 s and saturated the machine for 2-3 s (issue 25's fleet bench).
      const parts = hydrate ? chunks(page.data, job.hydrateWriteRecords) : [page.data];
      let reached = false;
      for (const [k, part] of parts.entries()) {
        let records = part;
        // hydrate.missing: delete — records whose get answers 404 are gone upstream.
        let missing: Record<string, unknown>[] = [];
        if (hydrate) {
          const got = await mapLimit(records, job.hydrateConcurrency, async (record) => {
            const p = Object.fromEntries(hydrateParams.map(([key, t]) => [key, t.render({ record })]).filter(([, v]) => v !== undefined));
            try {
              const one = await runtime.execute(entity.name, 'get', p, { signal });
              return { ...record, ...(one.data as Record<string, unknown>) };
            } catch (e) {
              if (hydrate.missing === 'delete' && isSwitchboardError(e, 'upstream_not_found')) return { [MISSING]: record };
              throw e;
            }
          });
          missing = got.flatMap((r) => (MISSING in r ? [r[MISSING] as Record<string, unknown>] : []));
          records = got.filter((r) => !(MISSING in r));
        }
        // The mark: a token (or link) the page answers (modes token and link: the last page's replaces it), else the newest change time seen.
        if (inc?.mode === 'token' || inc?.mode === 'link') {
          const t = page.meta[inc.token ?? ''];
          if (t !== undefined && t !== null && t !== '') mark = pkey !== undefined ? { ...(mark as ParentMarks | undefined), [pkey]: String(t) } : t;
        } else if (inc?.cursor_field !== undefined) for (const r of records) mark = maxMark(mark, cursorValue(r, inc.cursor_field));
        // sync.deleted_when: records the page itself reports as deleted leave search instead of being stored.
        let gone: Record<string, unknown>[] = missing;
        if (deletedWhen !== undefined) {
          const reported = records.filter((record) => truthy(deletedWhen.render({ record })));
          if (reported.length > 0) records = records.filter((r) => !reported.includes(r));
          gone = [...gone, ...reported];
        }
        // Newest-first incremental: this page reached records the last run already had.
        const since = job.sortedSince;
        reached ||=
          since !== undefined &&
          inc?.cursor_field !== undefined &&
          records.some((r) => maxMark(cursorValue(r, inc.cursor_field!), since) === since && cursorValue(r, inc.cursor_field!) !== since);
        await written();
        if (signal?.aborted) throw new LeaseLost('aborted');
        const write = persist.bind(null, pi, records, gone, next, mark, reached, k === parts.length - 1, partAction);
        writing = io.turn !== undefined ? io.turn(write) : write();
        // Observed here; its error is thrown where it is awaited (the next part or page, or after the last).
        writing.catch(() => undefined);
      }
      if (reached) break;
    }
  }
}

/** A record's change time: its field of that name, else the dotted path (`MetaData.LastUpdatedTime`). */
export function cursorValue(record: Record<string, unknown>, field: string): unknown {
  if (Object.hasOwn(record, field) || !field.includes('.')) return record[field];
  let v: unknown = record;
  for (const part of field.split('.')) v = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[part] : undefined;
  return v;
}
