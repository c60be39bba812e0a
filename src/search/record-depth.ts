/**
 * Deep values in upstream records: a record nested deeper than MAX_RECORD_DEPTH levels (the record
 * itself is level 1) is repaired before it is stored, the way NUL characters and lone surrogates
 * are (record-store.ts): each object or array below the limit is replaced by null. Such a record
 * would otherwise fail the hand-off to the record writer's thread (structured clone overflows the
 * stack at a few thousand levels) or the database (SQLite's JSON refuses more than 1,000), and
 * with it every run of the sync. Both walks are iterative or bounded by the limit, so no depth of
 * input overflows the stack.
 */

/** Deepest nesting of objects and arrays a stored record keeps (the record is level 1), as request bodies (MAX_JSON_DEPTH). */
export const MAX_RECORD_DEPTH = 64;

/** Whether `root` nests objects or arrays deeper than `max` levels. Iterative; stops at the first too-deep value. */
export function deeperThan(root: unknown, max: number = MAX_RECORD_DEPTH): boolean {
  if (root === null || typeof root !== 'object') return false;
  const values: object[] = [root];
  const depths: number[] = [1];
  while (values.length > 0) {
    const v = values.pop() as object;
    const depth = depths.pop() as number;
    if (depth > max) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const x of children) {
      if (x !== null && typeof x === 'object') {
        values.push(x as object);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/** A copy of `v` (at `depth`) with every object or array deeper than `max` replaced by null. Recursion is bounded by `max`. */
function cut(v: unknown, depth: number, max: number): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (depth > max) return null;
  if (Array.isArray(v)) return v.map((x) => cut(x, depth + 1, max));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = cut(x, depth + 1, max);
  return out;
}

/** The record as the store keeps it: itself when within the limit, else a copy cut at the limit. */
export function withinDepth<T extends Record<string, unknown>>(record: T, max: number = MAX_RECORD_DEPTH): T {
  return deeperThan(record, max) ? (cut(record, 1, max) as T) : record;
}

/** The records, each within the limit (the same array when none is too deep). */
export function recordsWithinDepth<T extends Record<string, unknown>>(records: T[], max: number = MAX_RECORD_DEPTH): T[] {
  return records.some((r) => deeperThan(r, max)) ? records.map((r) => withinDepth(r, max)) : records;
}
