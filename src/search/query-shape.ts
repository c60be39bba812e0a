/**
 * A query's shape without its values (queryShape): the key under which the store remembers a
 * query's SQL, its values as slots, and a marked copy whose compile shows where each lands.
 */
import type { FieldIndex } from './predicates.ts';
import { sqlValue, wordToken } from './predicates.ts';
import type { FieldRef, Filter, ScalarValue, ValueKind } from './query.ts';
import { gramToken, likeToGlob, likeToSqlLike, likeTrigrams, type LikePart } from './text.ts';

/**
 * How a shape's derived values are computed: values that reach SQL transformed. On SQLite
 * (`match`, the dialect's FTS5 match syntax) a keyword's words as one match of the field's word
 * tokens, a like pattern as a match of the field's trigram tokens and a GLOB. On PostgreSQL (no
 * `match`) a keyword's words as the text of an array of the field's word tokens (see
 * textArrayLiteral) and a like pattern, when it has a 3-character literal, as its SQL LIKE
 * pattern: the GIN-backed pages whose SQL the store remembers (see RecordStore.search).
 */
export interface ShapeDerive {
  fields: FieldIndex;
  /** The bound parameter of a token query (SearchDialect.tokenMatch); absent on PostgreSQL. */
  match?(groups: string[][]): string;
}

/**
 * A list parameter as the text of a PostgreSQL array literal, each element quoted: what `pg`
 * sends for a JavaScript array, so a remembered shape can carry a list as one text slot (its SQL
 * reads every list as `(SELECT $n::text)::text[]`, see SearchDialect.reusableSql).
 */
export function textArrayLiteral(list: readonly unknown[]): string {
  let out = '{';
  for (let i = 0; i < list.length; i++) out += `${i === 0 ? '' : ','}"${String(list[i]).replace(/["\\]/g, (c) => `\\${c}`)}"`;
  return `${out}}`;
}

/** Where a shape walk puts its values, and with `markers`, the marker of each slot (marker → slot). */
interface ShapeWalk {
  slots: (string | number)[];
  markers: Map<string | number, number> | undefined;
  derive: ShapeDerive | undefined;
}

/** A marker for slot i that no constant parameter equals: a string with NULs, or a negative non-integer. */
function slotMarker(i: number, value: string | number): string | number {
  return typeof value === 'string' ? `\u0000${i}\u0000` : -(i + 1.5);
}

function fieldShape(ref: FieldRef): string {
  return `${JSON.stringify(ref.name)},${ref.type},${ref.multi ? 1 : 0}`;
}

/** Add a value slot; returns the value the marked filter carries in its place. */
function addSlot(w: ShapeWalk, kind: ValueKind, value: ScalarValue): ScalarValue {
  const v = sqlValue(kind, value);
  w.slots.push(v);
  if (w.markers === undefined) return value;
  const m = slotMarker(w.slots.length - 1, v);
  w.markers.set(m, w.slots.length - 1);
  return m;
}

/** Add a derived slot: `real` as it reaches SQL, and `marked` (computed from the marker text) as the marked filter's compile will show it. */
function addDerived(w: ShapeWalk, real: string, marked: (text: string) => string): string {
  w.slots.push(real);
  const i = w.slots.length - 1;
  const text = `\u0000${i}\u0000`;
  w.markers?.set(marked(text), i);
  return text;
}

/**
 * A filter's shape without its values, for caching the SQL of a query shape: the shape as text
 * (operators, fields, kinds and nesting), the values as SQL parameters in walk order (`slots`),
 * and with `markers`, the same filter with each value replaced by a marker for its slot, so a
 * compile of it shows where each value lands among the parameters (`markers`: marker → slot).
 * With `derive` (SQLite), a keyword and a like with trigrams also have a shape: their values
 * reach SQL transformed, as derived slots. Undefined when a condition's values cannot be
 * slotted (fuzzy, whose SQL depends on the vocabulary; like without trigrams). An `any` has a
 * shape; the store asks for it only when the `any` runs on element positions in a known leaf order.
 */
export function queryShape(
  f: Filter,
  slots: (string | number)[],
  markers?: Map<string | number, number>,
  derive?: ShapeDerive,
): { shape: string; marked: Filter } | undefined {
  return shapeOf(f, { slots, markers, derive });
}

function shapeOf(f: Filter, w: ShapeWalk): { shape: string; marked: Filter } | undefined {
  const marking = w.markers !== undefined;
  switch (f.op) {
    case 'and':
    case 'or': {
      let shape = `${f.op}(`;
      const items: Filter[] = [];
      for (const i of f.items) {
        const part = shapeOf(i, w);
        if (part === undefined) return undefined;
        shape += `${part.shape},`;
        items.push(part.marked);
      }
      return { shape: `${shape})`, marked: marking ? { op: f.op, items } : f };
    }
    case 'not': {
      const inner = shapeOf(f.item, w);
      return inner === undefined ? undefined : { shape: `not(${inner.shape})`, marked: marking ? { op: 'not', item: inner.marked } : f };
    }
    case 'present':
      return { shape: `present(${fieldShape(f.field)},${f.present})`, marked: f };
    case 'any': {
      // The caller remembers only an `any` on element positions (shapeQueryOf in shape-cache.ts).
      const inner = shapeOf(f.item, w);
      return inner === undefined ? undefined : { shape: `any(${fieldShape(f.field)},${inner.shape})`, marked: marking ? { ...f, item: inner.marked } : f };
    }
    case 'eq':
    case 'neq':
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
    case 'contains': {
      const value = addSlot(w, f.kind, f.value);
      return { shape: `${f.op}(${fieldShape(f.field)},${f.kind})`, marked: marking ? { ...f, value } : f };
    }
    case 'in': {
      let kinds = '';
      const values: { kind: ValueKind; value: ScalarValue }[] = [];
      for (const v of f.values) {
        kinds += v.kind;
        values.push({ kind: v.kind, value: addSlot(w, v.kind, v.value) });
      }
      return { shape: `in(${fieldShape(f.field)},${kinds})`, marked: marking ? { ...f, values } : f };
    }
    case 'keyword': {
      const d = w.derive;
      const ids = d?.fields.ids(f.field, 's');
      if (d === undefined || ids === undefined || ids.length === 0) return undefined;
      const match = d.match;
      const words = (list: string[]): string => {
        const tokens = ids.flatMap((id) => list.map((word) => wordToken(id, word)));
        return match === undefined ? textArrayLiteral(tokens) : match([tokens]);
      };
      const text = addDerived(w, words(f.words), (t) => words([t]));
      return { shape: `keyword(${fieldShape(f.field)})`, marked: marking ? { ...f, words: [text] } : f };
    }
    case 'like': {
      const d = w.derive;
      const ids = d?.fields.ids(f.field, 's');
      const trigrams = likeTrigrams(f.parts);
      if (d === undefined || ids === undefined || ids.length === 0 || trigrams.length === 0) return undefined;
      const textParts = (t: string): LikePart[] => [{ kind: 'any' }, { kind: 'text', text: t }, { kind: 'any' }];
      const match = d.match;
      if (match === undefined) {
        // PostgreSQL: the pattern is the one value (likeCondition); with a 3-character literal the
        // statement is the same whatever the pattern (a trigram index scan).
        const text = addDerived(w, likeToSqlLike(f.parts), (t) => likeToSqlLike(textParts(t)));
        return { shape: `like(${fieldShape(f.field)})`, marked: marking ? { ...f, pattern: text, parts: textParts(text) } : f };
      }
      const grams = (list: string[]): string => match(list.map((t) => ids.map((id) => gramToken(id, t))));
      const text = addDerived(w, grams(trigrams), (t) => grams(likeTrigrams(textParts(t))));
      addDerived(w, likeToGlob(f.parts), () => likeToGlob(textParts(text)));
      return { shape: `like(${fieldShape(f.field)})`, marked: marking ? { ...f, pattern: text, parts: textParts(text) } : f };
    }
    default:
      return undefined;
  }
}
