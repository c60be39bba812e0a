/**
 * `any` (a condition on each element of an array of objects) where element positions cannot
 * answer it (see elementsPlaced in search-plan.ts and elementCompilable in compile-elements.ts: keyword or
 * fuzzy or a nested any inside, a condition an element without values meets, a first array above
 * its path, values stored before migration 0005). The store then runs a relaxed filter in SQL —
 * one every match of the real filter also matches, with each condition inside an `any` moved onto
 * the record's values at the element's path — and confirms each candidate with the reference
 * semantics (reference.ts) before it goes on a page. */
import { elementPath } from './compile-elements.ts';
import type { FieldRef, Filter } from './query.ts';

/** True when a filter contains an `any` (its candidates must be confirmed record by record). */
export function hasAny(f: Filter | undefined): boolean {
  if (f === undefined) return false;
  switch (f.op) {
    case 'and':
    case 'or':
      return f.items.some(hasAny);
    case 'not':
      return hasAny(f.item);
    case 'any':
      return true;
    default:
      return false;
  }
}

function combine(op: 'and' | 'or', items: (Filter | undefined)[]): Filter | undefined {
  if (op === 'or' && items.includes(undefined)) return undefined;
  const kept = items.filter((i): i is Filter => i !== undefined);
  if (kept.length === 0) return undefined;
  return kept.length === 1 ? kept[0] : { op, items: kept };
}

/** A filter without `any` that every record matching `f` matches; undefined: no restriction. */
export function relaxFilter(f: Filter | undefined): Filter | undefined {
  if (f === undefined) return undefined;
  switch (f.op) {
    case 'and':
    case 'or':
      return combine(f.op, f.items.map(relaxFilter));
    case 'not':
      // The complement of a relaxed condition is not implied: no restriction.
      return hasAny(f.item) ? undefined : f;
    case 'any':
      return relaxElement(f.item, f.field);
    default:
      return f;
  }
}

/** An element path as a path of the record: the array's path, then the element's. */
const onRecord = elementPath;

/**
 * A condition on one element of the array at `array`, as a condition on the record: a value of
 * some element satisfying a leaf is a value of the record at the joined path. Conditions that
 * are not monotone in the set of values (not, neq, eq null) only keep what they imply.
 */
function relaxElement(f: Filter, array: FieldRef): Filter | undefined {
  switch (f.op) {
    case 'and':
    case 'or':
      return combine(
        f.op,
        f.items.map((i) => relaxElement(i, array)),
      );
    case 'not':
      return undefined;
    case 'any':
      return relaxElement(f.item, onRecord(array, f.field));
    case 'present':
      return f.present ? { ...f, field: onRecord(array, f.field) } : undefined;
    case 'neq':
      // Some value and none equal, within one element: the record has some value there.
      return { op: 'present', field: onRecord(array, f.field), present: true };
    default:
      return { ...f, field: onRecord(array, f.field) };
  }
}
