/**
 * From an upstream record to its search document (the entity's search fields with their search
 * types) and from the document to the index entries the store writes. The reference evaluator
 * reads documents with the same helpers, so "what is a value of this field" is decided once.
 */
import { SwitchboardError } from '../errors/index.ts';
import type { SearchEntityDef, SearchType, ValueKind } from './query.ts';
import { compareKey, likeText, words } from './text.ts';

/** Levels of nesting indexed below an object/array field; deeper values are stored but not searchable. */
export const MAX_LEAF_DEPTH = 8;
/** Scalar values indexed per object/array field of one record; later ones are not searchable. */
export const MAX_LEAVES_PER_FIELD = 5000;

export type Doc = Record<string, unknown>;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Read a dotted path (`a.b.0.c`); numeric segments index arrays. */
export function readPath(value: unknown, path: string): unknown {
  let cur: unknown = value;
  for (const s of path.split('.')) {
    if (Array.isArray(cur) && /^\d+$/.test(s)) cur = cur[Number(s)];
    else if (isPlainObject(cur)) cur = cur[s];
    else return undefined;
  }
  return cur;
}

const INTEGER = /^-?\d{1,15}$/;
const NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * Coerce an upstream value to a search type; what does not convert losslessly is null.
 * string ← string, number, boolean; integer ← integer or integer string ("42");
 * number ← number or numeric string; boolean ← boolean, "true", "false";
 * object ← object or array; array ← array.
 */
export function coerce(value: unknown, type: SearchType): unknown {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'string':
      return typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : null;
    case 'integer':
      if (typeof value === 'number') return Number.isSafeInteger(value) ? value : null;
      return typeof value === 'string' && INTEGER.test(value) ? Number(value) : null;
    case 'number':
      if (typeof value === 'number') return Number.isFinite(value) ? value : null;
      return typeof value === 'string' && NUMBER.test(value) && Number.isFinite(Number(value)) ? Number(value) : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : value === 'true' ? true : value === 'false' ? false : null;
    case 'object':
      return typeof value === 'object' ? value : null;
    default:
      return Array.isArray(value) ? value : null;
  }
}

/** The search document of a record: every search field, read from its source path and coerced. */
export function projectDocument(record: Record<string, unknown>, def: SearchEntityDef): Doc {
  const doc: Doc = {};
  const sources = def.sources;
  // for...in, not Object.entries: this runs for every record a search returns.
  for (const field in def.fields) {
    const source = sources?.[field];
    doc[field] = coerce(source === undefined ? record[field] : readPath(record, source), def.fields[field]!);
  }
  return doc;
}

/** The record id under the entity's primary key, as a string; a record without one is rejected. */
export function recordIdOf(record: Record<string, unknown>, def: SearchEntityDef): string {
  const id = record[def.primaryKey] ?? readPath(record, def.primaryKey);
  if (typeof id === 'string' && id !== '') return id;
  if (typeof id === 'number' && Number.isFinite(id)) return String(id);
  throw new SwitchboardError('upstream_protocol_error', `a record has no usable primary key "${def.primaryKey}"`, { details: { primary_key: def.primaryKey } });
}

/**
 * Visit the scalar values inside an object/array field: `path` is the field name followed by the
 * object keys leading to the value (array positions add no segment, so `attendees.email` is every
 * attendee's email). Stops below MAX_LEAF_DEPTH and after MAX_LEAVES_PER_FIELD values.
 */
export function walkLeaves(value: unknown, root: string, visit: (path: string, leaf: string | number | boolean) => void): void {
  let count = 0;
  const walk = (v: unknown, path: string, depth: number): void => {
    if (count >= MAX_LEAVES_PER_FIELD) return;
    if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) {
      count++;
      visit(path, v);
    } else if (Array.isArray(v)) {
      for (const item of v) walk(item, path, depth);
    } else if (isPlainObject(v) && depth < MAX_LEAF_DEPTH) {
      for (const [k, item] of Object.entries(v)) walk(item, `${path}.${k}`, depth + 1);
    }
  };
  walk(value, root, 0);
}

/** The values of a field (or of a path inside an object/array field) of a document, by kind. */
export function fieldValues(doc: Doc, root: string, type: SearchType, path: string, exact = false): { kind: ValueKind; value: string | number | boolean }[] {
  const v = doc[root];
  if (v === null || v === undefined) return [];
  if (type !== 'object' && type !== 'array') {
    return [{ kind: typeof v === 'string' ? 's' : typeof v === 'boolean' ? 'b' : 'n', value: v as string | number | boolean }];
  }
  const out: { kind: ValueKind; value: string | number | boolean }[] = [];
  walkLeaves(v, root, (p, leaf) => {
    if (p === path || (!exact && p.length > path.length && p.startsWith(path) && p[path.length] === '.')) {
      out.push({ kind: typeof leaf === 'string' ? 's' : typeof leaf === 'boolean' ? 'b' : 'n', value: leaf });
    }
  });
  return out;
}

/** One indexed value: `key` is the value kind and the path (`s:email`, `n:custom_attributes.seats`). */
export interface ValueEntry {
  key: string;
  /** Strings cut to the compared length, numbers, booleans as 0/1. */
  v: string | number;
  /** Lower-cased text for like, when it differs from `v` (strings only; null means "same as v"). */
  low: string | null;
  /**
   * Tells apart values of one path that agree on `v`: on `low` (strings longer than the compared
   * length) or on `e` (the same value in two elements).
   */
  n: number;
  /**
   * The element the value belongs to (see elementOrdinals): for a value below a plain object that
   * is an item of the first array on its path (arrays in that array flattened), that object's
   * number within the field, counted from 1 in walk order; null for every other value.
   */
  e: number | null;
}

export interface IndexEntries {
  values: ValueEntry[];
  /** Words per string path: `key` is `s:<path>`. */
  words: { key: string; word: string }[];
  /** The lower-cased text of every string value, by `s:<path>` key (deduplicated): what each field's trigram index sees. */
  likes: { key: string; text: string }[];
  /**
   * `a:<path>` for each path at which a first array on some value's path held a plain object
   * (the paths whose elements `e` numbers); the store keeps them as fields of kind `a`, so that a
   * search knows where a scope's numbered elements are (see FieldIndex.elementsExact).
   */
  arrays: string[];
}

/** Accumulates one document's index entries (a class, not closures: this runs per value on bulk loads). */
class EntryCollector {
  readonly values: ValueEntry[] = [];
  readonly words: { key: string; word: string }[] = [];
  readonly likes: { key: string; text: string }[] = [];
  readonly arrays = new Set<string>();
  /** Only object/array fields can repeat a value; scalar fields skip the bookkeeping. */
  multi = false;
  leaves = 0;
  /** Elements numbered so far in the current field. */
  ordinal = 0;
  /** Per key and compared value: the (low, element) pairs stored, whose positions are the rows' `n`. */
  seen: Map<string, string[]> | undefined;
  seenLikes: Set<string> | undefined;
  seenWords: Set<string> | undefined;

  add(path: string, v: string | number | boolean, e: number | null): void {
    if (typeof v === 'string') this.addString(`s:${path}`, v, e);
    else this.addNumber(`${typeof v === 'boolean' ? 'b' : 'n'}:${path}`, typeof v === 'boolean' ? (v ? 1 : 0) : v, e);
  }

  addString(key: string, v: string, e: number | null): void {
    const cmp = compareKey(v);
    const lower = likeText(v);
    const low = lower === cmp ? null : lower;
    let n = 0;
    if (this.multi) {
      this.seen ??= new Map();
      const id = `${key}\u0000${cmp}`;
      const pair = `${e ?? ''}\u0000${low ?? ''}\u0000${low === null ? 0 : 1}`;
      const pairs = this.seen.get(id);
      if (pairs === undefined) this.seen.set(id, [pair]);
      else if (pairs.includes(pair)) return;
      else n = pairs.push(pair) - 1;
    }
    this.values.push({ key, v: cmp, low, n, e });
    if (!this.multi || !this.seenLike(key, lower)) this.likes.push({ key, text: lower });
    for (const word of words(v)) {
      if (this.multi) {
        this.seenWords ??= new Set();
        const wid = `${key}\u0000${word}`;
        if (this.seenWords.has(wid)) continue;
        this.seenWords.add(wid);
      }
      this.words.push({ key, word });
    }
  }

  addNumber(key: string, num: number, e: number | null): void {
    let n = 0;
    if (this.multi) {
      this.seen ??= new Map();
      const id = `${key}\u0000${num}`;
      const pair = `${e ?? ''}`;
      const pairs = this.seen.get(id);
      if (pairs === undefined) this.seen.set(id, [pair]);
      else if (pairs.includes(pair)) return;
      else n = pairs.push(pair) - 1;
    }
    this.values.push({ key, v: num, low: null, n, e });
  }

  /** True when the like text of a key was already added (the same value in another element); notes it otherwise. */
  seenLike(key: string, lower: string): boolean {
    this.seenLikes ??= new Set();
    const id = `${key}\u0000${lower}`;
    if (this.seenLikes.has(id)) return true;
    this.seenLikes.add(id);
    return false;
  }

  /**
   * walkLeaves without a closure per call, numbering elements: `e` is the element the walk is
   * in (null: not yet below an item of an array).
   */
  walk(v: unknown, path: string, depth: number, e: number | null): void {
    if (this.leaves >= MAX_LEAVES_PER_FIELD) return;
    if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) {
      this.leaves++;
      this.add(path, v, e);
    } else if (Array.isArray(v)) {
      if (e === null) this.items(v, path, depth);
      else for (const item of v) this.walk(item, path, depth, e);
    } else if (isPlainObject(v) && depth < MAX_LEAF_DEPTH) {
      for (const k in v) this.walk(v[k], `${path}.${k}`, depth + 1, e);
    }
  }

  /** The items of the first array on a path (arrays in it flattened): each plain object is an element, numbered. */
  items(list: unknown[], path: string, depth: number): void {
    for (const item of list) {
      if (Array.isArray(item)) this.items(item, path, depth);
      else if (isPlainObject(item)) {
        if (this.leaves >= MAX_LEAVES_PER_FIELD) return;
        this.arrays.add(`a:${path}`);
        this.walk(item, path, depth, ++this.ordinal);
      } else this.walk(item, path, depth, null);
    }
  }
}

/** Everything a document contributes to the search indexes, deduplicated. */
export function indexEntries(doc: Doc, def: SearchEntityDef): IndexEntries {
  const c = new EntryCollector();
  for (const field in def.fields) {
    const v = doc[field];
    if (v === null || v === undefined) continue;
    const type = def.fields[field];
    c.multi = type === 'object' || type === 'array';
    if (c.multi) {
      c.leaves = 0;
      c.ordinal = 0;
      c.walk(v, field, 0, null);
    } else c.add(field, v as string | number | boolean, null);
  }
  return { values: c.values, words: c.words, likes: c.likes, arrays: [...c.arrays] };
}

/**
 * The elements an `any` condition looks at: the plain objects at `path` (a field name or a
 * dotted path), arrays along the way and at the end flattened.
 */
export function elementsAt(doc: Doc, path: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const segments = path.split('.');
  const visit = (v: unknown, i: number): void => {
    if (Array.isArray(v)) {
      for (const item of v) visit(item, i);
      return;
    }
    if (!isPlainObject(v)) return;
    if (i === segments.length) out.push(v);
    else visit(v[segments[i]!], i + 1);
  };
  visit(doc[segments[0]!], 1);
  return out;
}

type ProjectionTree = true | Map<string, ProjectionTree>;

/**
 * Keep only the requested paths of a document. A top-level field that is null stays null; a path
 * into an object keeps the objects along the way; a path through an array applies to every item.
 */
export function projectFields(doc: Doc, paths: string[][]): Doc {
  const tree = new Map<string, ProjectionTree>();
  for (const segments of paths) {
    let node: Map<string, ProjectionTree> = tree;
    segments.forEach((s, i) => {
      const existing = node.get(s);
      if (existing === true) return;
      if (i === segments.length - 1) {
        node.set(s, true);
        return;
      }
      const child = existing ?? new Map<string, ProjectionTree>();
      node.set(s, child);
      node = child;
    });
  }
  const apply = (v: unknown, t: ProjectionTree): unknown => {
    if (t === true) return v;
    // Items without the path are left out (a scalar item has no `k` for `tags.k`).
    if (Array.isArray(v)) return v.map((item) => apply(item, t)).filter((item) => item !== undefined);
    if (!isPlainObject(v)) return undefined;
    const out: Record<string, unknown> = {};
    for (const [k, child] of t) {
      if (!(k in v)) continue;
      const picked = apply(v[k], child);
      if (picked !== undefined) out[k] = picked;
    }
    return out;
  };
  const out: Doc = {};
  for (const [root, t] of tree) {
    const v = doc[root];
    out[root] = v === null || v === undefined ? null : (apply(v, t) ?? null);
  }
  return out;
}
