/**
 * Marks kept per parent: an entity synced once per for_each parent whose incremental mode is token
 * or link (a change feed per folder or per list, e.g. a delta query under each mail folder) keeps
 * one token or link per parent, keyed by the params the parent sets. Each parent's pass follows its
 * own mark; a parent without one (new, or refused as expired) lists in full; parents that are no
 * longer listed leave the state. The state is bounded: at most MAX_PARENT_MARKS parents and marks
 * of at most MAX_MARK_CHARS characters are kept (a parent past either lists in full every run).
 */
import type { CompiledEntity } from '../manifest/index.ts';

/** Parents whose marks are kept, in the parents' order. */
export const MAX_PARENT_MARKS = 1000;
/** Longest mark kept (delta links run to a few hundred characters). */
export const MAX_MARK_CHARS = 4096;

/** A run's marks by parent key: a token or link, or null for a mark dropped (the upstream refused it). */
export type ParentMarks = Record<string, string | null>;

/** How a per-parent entity's pages start each parent (plain data: it crosses to the sync worker). */
export interface PerParentJob {
  mode: 'token' | 'link';
  /** The last completed run's marks by parent key (empty for a full run). */
  marks: Record<string, string>;
  /** The incremental action and its params, for parents with a mark. */
  action: 'list' | 'changes' | 'scroll';
  params: Record<string, unknown>;
  /** Mode token: the param the token is sent in. */
  param?: string | undefined;
  /** Statuses that mean a parent's mark expired (incremental.resync_on): that parent lists in full. */
  resyncOn: number[];
}

/** The key of a parent in the state: its params, sorted, as JSON. */
export function parentKey(parent: Record<string, unknown>): string {
  return JSON.stringify(
    Object.keys(parent)
      .sort()
      .map((k) => [k, parent[k]]),
  );
}

/** Whether this entity keeps its marks per parent (modes token and link with for_each). */
export function keepsParentMarks(sync: NonNullable<CompiledEntity['def']['sync']>): boolean {
  const mode = sync.incremental?.mode;
  return sync.for_each !== undefined && (mode === 'token' || mode === 'link');
}

/** The marks of a stored high-water value ({parents: {...}}); anything else (a single mark from before) is none. */
export function storedParentMarks(value: unknown): Record<string, string> {
  const parents = value !== null && typeof value === 'object' ? (value as { parents?: unknown }).parents : undefined;
  if (parents === null || typeof parents !== 'object') return {};
  return Object.fromEntries(Object.entries(parents as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/**
 * The next run's marks: for each parent listed now, its mark from this run, else the previous one
 * (unless this run dropped it); parents no longer listed are left out; bounded as the header says.
 */
export function nextParentMarks(
  previous: Record<string, string>,
  run: ParentMarks | undefined,
  parents: Record<string, unknown>[],
): { parents: Record<string, string> } {
  const out: Record<string, string> = {};
  let kept = 0;
  for (const parent of parents) {
    if (kept >= MAX_PARENT_MARKS) break;
    const key = parentKey(parent);
    const mark = run !== undefined && Object.hasOwn(run, key) ? run[key] : previous[key];
    if (typeof mark !== 'string' || mark === '' || mark.length > MAX_MARK_CHARS || Object.hasOwn(out, key)) continue;
    out[key] = mark;
    kept++;
  }
  return { parents: out };
}

/** Where a parent's pass starts: from its own mark (the incremental action), or in full (the job's action). */
export function parentStart(
  job: { action: 'list' | 'changes' | 'scroll'; params: Record<string, unknown>; perParent?: PerParentJob | undefined },
  parent: Record<string, unknown>,
): { action: 'list' | 'changes' | 'scroll'; params: Record<string, unknown>; from?: { url: string }; fromMark: boolean } {
  const pp = job.perParent;
  const mark = pp?.marks[parentKey(parent)];
  if (pp === undefined || mark === undefined || mark === '') return { action: job.action, params: { ...job.params, ...parent }, fromMark: false };
  if (pp.mode === 'link') return { action: pp.action, params: { ...pp.params, ...parent }, from: { url: mark }, fromMark: true };
  return { action: pp.action, params: { ...pp.params, ...parent, [pp.param ?? '']: mark }, fromMark: true };
}
