/**
 * The search semantics in plain JavaScript over search documents: the oracle the conformance
 * tests compare both databases with, and the full-scan baseline of the search benchmark. It
 * shares the text and document helpers with the indexer but none of the SQL.
 */
import { elementsAt, fieldValues, type Doc } from './document.ts';
import type { Filter, ScalarValue, SearchEntityDef, SearchQuery, ValueKind } from './query.ts';
import { allowedTypos, compareKey, compareStrings, isFuzzyWord, likeText, likeToRegExp, typoDistance, words } from './text.ts';

/** A stored document and its rid (storage order). */
export interface RefDoc {
  rid: number;
  doc: Doc;
}

type Value = { kind: ValueKind; value: ScalarValue };

function valuesOf(doc: Doc, def: SearchEntityDef, f: { root: string; name: string; inner?: true }, exact = false): Value[] {
  // Paths inside an `any` element are untyped: walked like paths in an object field.
  return fieldValues(doc, f.root, f.inner ? 'object' : def.fields[f.root]!, f.name, exact);
}

function compare(a: ScalarValue, b: ScalarValue): number {
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(compareKey(a), b);
  const x = typeof a === 'boolean' ? Number(a) : (a as number);
  const y = typeof b === 'boolean' ? Number(b) : (b as number);
  return x < y ? -1 : x > y ? 1 : 0;
}

const TESTS = {
  eq: (c: number) => c === 0,
  neq: (c: number) => c !== 0,
  gt: (c: number) => c > 0,
  gte: (c: number) => c >= 0,
  lt: (c: number) => c < 0,
  lte: (c: number) => c <= 0,
};

const regexCache = new Map<string, RegExp>();

/** Whether a document matches a filter, per the documented semantics. */
export function matches(doc: Doc, def: SearchEntityDef, f: Filter): boolean {
  switch (f.op) {
    case 'and':
      return f.items.every((i) => matches(doc, def, i));
    case 'or':
      return f.items.some((i) => matches(doc, def, i));
    case 'not':
      return !matches(doc, def, f.item);
    case 'present':
      return valuesOf(doc, def, f.field).length > 0 === f.present;
    case 'eq':
    case 'neq':
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const all = valuesOf(doc, def, f.field);
      const same = all.filter((v) => v.kind === f.kind);
      if (f.op === 'neq' && f.field.multi) return all.length > 0 && !same.some((v) => compare(v.value, f.value) === 0);
      const test = TESTS[f.op];
      return same.some((v) => test(compare(v.value, f.value)));
    }
    case 'contains':
      return valuesOf(doc, def, f.field, true).some((v) => v.kind === f.kind && compare(v.value, f.value) === 0);
    case 'any': {
      const item = f.item;
      return elementsAt(doc, f.field.name).some((element) => matches(element, def, item));
    }
    case 'in': {
      const all = valuesOf(doc, def, f.field);
      return all.some((v) => f.values.some((q) => q.kind === v.kind && compare(v.value, q.value) === 0));
    }
    case 'like': {
      let re = regexCache.get(f.pattern);
      if (re === undefined) {
        re = likeToRegExp(f.parts);
        if (regexCache.size > 1000) regexCache.clear();
        regexCache.set(f.pattern, re);
      }
      const r = re;
      return valuesOf(doc, def, f.field).some((v) => v.kind === 's' && r.test(likeText(v.value as string)));
    }
    case 'keyword':
    case 'fuzzy': {
      const have = new Set<string>();
      for (const v of valuesOf(doc, def, f.field)) if (v.kind === 's') for (const w of words(v.value as string)) have.add(w);
      if (f.op === 'keyword') return f.words.some((w) => have.has(w));
      return f.words.every((w) => {
        if (have.has(w)) return true;
        const d = allowedTypos(w);
        if (d === 0) return false;
        for (const x of have) if (isFuzzyWord(x) && typoDistance(w, x, d) <= d) return true;
        return false;
      });
    }
  }
}

function sortValue(doc: Doc, field: string): string | number | null {
  const v = doc[field];
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return compareKey(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  return v as number;
}

/**
 * Filter and order documents as the store does: sort keys with nulls last in both directions,
 * ties by rid in the last key's direction (ascending without sort). Returns every match.
 */
export function searchInMemory(docs: readonly RefDoc[], def: SearchEntityDef, query: Pick<SearchQuery, 'filter' | 'sort'>): RefDoc[] {
  const filter = query.filter;
  const hits = filter === undefined ? [...docs] : docs.filter((d) => matches(d.doc, def, filter));
  const tie = query.sort.at(-1)?.dir === 'desc' ? -1 : 1;
  return hits.sort((a, b) => {
    for (const key of query.sort) {
      const x = sortValue(a.doc, key.field.name);
      const y = sortValue(b.doc, key.field.name);
      if (x === null || y === null) {
        if (x === y) continue;
        return x === null ? 1 : -1;
      }
      const c = typeof x === 'string' ? compareStrings(x, y as string) : (x as number) - (y as number);
      if (c !== 0) return key.dir === 'asc' ? c : -c;
    }
    return (a.rid - b.rid) * tie;
  });
}
