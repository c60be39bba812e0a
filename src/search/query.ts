/**
 * Search params → a validated, typed query tree. Every problem is reported with its path (JSON
 * pointer into the params) and, where there is a closed set of choices, the valid choices.
 * Nothing downstream looks at the caller's JSON again: the compiler and the reference evaluator
 * only see this tree, whose field references all come from the manifest's search fields.
 */
import { SwitchboardError, type ErrorDetail } from '../errors/index.ts';
import { OPERATORS_BY_TYPE, type SearchType } from '../manifest/search-operators.ts';
import { compareKey, likeText, parseLike, stripNul, words, type LikePart } from './text.ts';

/** What the store needs to know about an entity: the manifest's primary key and search section. */
export interface SearchEntityDef {
  primaryKey: string;
  fields: Record<string, SearchType>;
  sources?: Record<string, string>;
}

/** Kind of an indexed value: string, number (integer and number fields alike) or boolean. */
export type ValueKind = 's' | 'n' | 'b';

/** A field reference checked against the manifest: a search field, or a path inside an object/array field. */
export interface FieldRef {
  /** The reference as written (`email`, `custom_attributes.plan`). */
  name: string;
  /** The search field it starts at. */
  root: string;
  type: SearchType;
  /** True for object/array fields and paths inside them: any number of values per record. */
  multi: boolean;
  /** Set on references inside an `any` condition: a path relative to each element, untyped. */
  inner?: true;
}

export type Comparison = 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte';
export type ScalarValue = string | number | boolean;

export type Filter =
  | { op: 'and' | 'or'; items: Filter[] }
  | { op: 'not'; item: Filter }
  /** A comparison; string values are already cut to the compared length. */
  | { op: Comparison; field: FieldRef; kind: ValueKind; value: ScalarValue }
  /** `eq null` (present: false) and `neq null` (present: true). */
  | { op: 'present'; field: FieldRef; present: boolean }
  | { op: 'in'; field: FieldRef; values: { kind: ValueKind; value: ScalarValue }[] }
  | { op: 'like'; field: FieldRef; pattern: string; parts: LikePart[] }
  | { op: 'keyword' | 'fuzzy'; field: FieldRef; words: string[] }
  /** An array (or a path) holds `value` as an element: values exactly at the path, not below it. */
  | { op: 'contains'; field: FieldRef; kind: ValueKind; value: ScalarValue }
  /** Some element (a plain object) of the array at `field` satisfies `item`, whose field references are relative to the element. */
  | { op: 'any'; field: FieldRef; item: Filter };

export interface SortKey {
  field: FieldRef;
  kind: ValueKind;
  dir: 'asc' | 'desc';
}

export interface SearchQuery {
  filter?: Filter;
  sort: SortKey[];
  limit: number;
  cursor?: string;
  /** Projection: each path split into its segments. */
  fields?: string[][];
}

/** Default and maximum page size. */
export const DEFAULT_LIMIT = 1000;
export const MAX_LIMIT = 1000;
/** and/or/not may nest this deep. */
export const MAX_DEPTH = 8;
/** Field conditions per query (each field of an operator object counts once). */
export const MAX_CONDITIONS = 100;
export const MAX_IN_VALUES = 1000;
export const MAX_SORT_KEYS = 4;
export const MAX_FIELD_PATHS = 100;
/** Longest like pattern, keyword or fuzzy text. */
export const MAX_TEXT_CHARS = 1000;
/** Words in one keyword or fuzzy text. */
export const MAX_QUERY_WORDS = 32;
export const MAX_PATH_SEGMENTS = 8;
export const MAX_CURSOR_CHARS = 4096;

export { OPERATORS_BY_TYPE, type SearchType };

export const OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'like', 'fuzzy', 'keyword', 'contains', 'any', 'not', 'and', 'or'] as const;
const FIELD_OPERATORS = new Set(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'like', 'fuzzy', 'keyword', 'contains']);

/** Operators a path inside an object or array field (or inside an `any` element) accepts. */
export const PATH_OPERATORS: readonly string[] = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'like', 'keyword', 'fuzzy', 'contains', 'any'];

const ORDERING: ReadonlySet<string> = new Set(['gt', 'gte', 'lt', 'lte']);
const SORTABLE: ReadonlySet<SearchType> = new Set(['string', 'integer', 'number', 'boolean']);
const PARAMS = ['query', 'limit', 'cursor', 'fields'];

export function kindOfType(type: SearchType): ValueKind {
  return type === 'string' ? 's' : type === 'boolean' ? 'b' : 'n';
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'an integer' : 'a number';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** JSON-pointer segment escaping (RFC 6901). */
function seg(s: string | number): string {
  const t = String(s);
  return t.includes('~') || t.includes('/') ? t.replaceAll('~', '~0').replaceAll('/', '~1') : t;
}

class Checker {
  readonly errors: ErrorDetail[] = [];
  /** Problems found, including those beyond the reported list's cap. */
  problems = 0;
  conditions = 0;
  /** Above 0 while parsing the condition of an `any`: field names are paths relative to an element. */
  inAny = 0;
  constructor(readonly def: SearchEntityDef) {}

  add(path: string, message: string): void {
    this.problems++;
    // Cap the list: a hostile query could otherwise produce an enormous error body.
    if (this.errors.length < 100) this.errors.push({ path, message });
  }

  /** Whether `op` fits the field's type; if not, reports the field, the operator and the type. */
  allows(field: FieldRef, op: string, path: string): boolean {
    const isPath = field.inner === true || field.name !== field.root;
    const allowed = isPath ? PATH_OPERATORS : OPERATORS_BY_TYPE[field.type];
    if (allowed.includes(op)) return true;
    this.add(
      path,
      `${op} does not apply to ${field.type} field ${JSON.stringify(field.name)}; valid operators for ${field.type} fields: ${allowed.join(', ')}` +
        (ORDERING.has(op) && (field.type === 'object' || field.type === 'array')
          ? ` (ordering compares one value; use a path to a value inside, like "${field.name}.<key>", or any)`
          : ''),
    );
    return false;
  }

  validFields(): string {
    return Object.keys(this.def.fields).join(', ');
  }

  /** Resolve a field reference (filter or sort) against the manifest's search fields. */
  field(name: string, path: string): FieldRef | undefined {
    if (this.inAny > 0) {
      const segments = name.split('.');
      if (name === '' || segments.length > MAX_PATH_SEGMENTS || segments.some((s) => s === '')) {
        this.add(path, `invalid element path ${JSON.stringify(name)}: segments must be non-empty, at most ${MAX_PATH_SEGMENTS}`);
        return undefined;
      }
      return { name, root: segments[0]!, type: 'object', multi: true, inner: true };
    }
    const direct = this.def.fields[name];
    if (direct !== undefined) return { name, root: name, type: direct, multi: direct === 'object' || direct === 'array' };
    const dot = name.indexOf('.');
    const root = dot < 0 ? name : name.slice(0, dot);
    const type = this.def.fields[root];
    if (dot < 0 || type === undefined) {
      this.add(path, `unknown field ${JSON.stringify(name)}; valid fields: ${this.validFields()}`);
      return undefined;
    }
    if (type !== 'object' && type !== 'array') {
      this.add(path, `${JSON.stringify(root)} is a ${type} field; only object and array fields take a path (${JSON.stringify(name)})`);
      return undefined;
    }
    const segments = name.split('.');
    if (segments.length > MAX_PATH_SEGMENTS + 1 || segments.some((s) => s === '')) {
      this.add(path, `invalid path ${JSON.stringify(name)}: segments must be non-empty, at most ${MAX_PATH_SEGMENTS} below the field`);
      return undefined;
    }
    return { name, root, type, multi: true };
  }
}

/**
 * Validate search params against an entity's search fields. Throws SwitchboardError
 * `invalid_search_query` (400) listing every problem. Defaults: limit 1000, no filter, no sort.
 */
export function parseSearchParams(def: SearchEntityDef, params: unknown): SearchQuery {
  const c = new Checker(def);
  const out: SearchQuery = { sort: [], limit: DEFAULT_LIMIT };
  if (!isPlainObject(params)) {
    throw invalid([{ path: '', message: `search params must be an object, got ${describe(params)}` }]);
  }
  for (const key of Object.keys(params)) {
    if (!PARAMS.includes(key)) c.add(`/${seg(key)}`, `unknown param ${JSON.stringify(key)}; valid params: ${PARAMS.join(', ')}`);
  }
  const query = params['query'];
  if (query === undefined) c.add('/query', 'query is required (an object with optional filter and sort)');
  else if (!isPlainObject(query)) c.add('/query', `query must be an object, got ${describe(query)}`);
  else {
    for (const key of Object.keys(query)) {
      if (key !== 'filter' && key !== 'sort') c.add(`/query/${seg(key)}`, `unknown key ${JSON.stringify(key)}; valid keys: filter, sort`);
    }
    if (query['filter'] !== undefined) {
      const filter = parseCondition(c, query['filter'], '/query/filter', 0);
      if (filter !== undefined) out.filter = filter;
    }
    if (query['sort'] !== undefined) out.sort = parseSort(c, query['sort']);
    if (c.conditions > MAX_CONDITIONS) c.add('/query/filter', `too many conditions: ${c.conditions}; the maximum is ${MAX_CONDITIONS}`);
  }
  const limit = params['limit'];
  if (limit !== undefined) {
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
      c.add('/limit', `limit must be an integer from 1 to ${MAX_LIMIT}, got ${JSON.stringify(limit)}`);
    } else out.limit = limit;
  }
  const cursor = params['cursor'];
  if (cursor !== undefined && cursor !== null) {
    if (typeof cursor !== 'string' || cursor === '' || cursor.length > MAX_CURSOR_CHARS)
      c.add('/cursor', "cursor must be the non-empty string from a previous response's meta.cursor");
    else out.cursor = cursor;
  }
  const fields = params['fields'];
  if (fields !== undefined) {
    const parsed = parseFields(c, fields);
    if (parsed !== undefined) out.fields = parsed;
  }
  if (c.errors.length > 0) throw invalid(c.errors);
  return out;
}

function invalid(errors: ErrorDetail[]): SwitchboardError {
  const first = errors[0];
  const message = `Invalid search query${first ? `: ${first.path || '(params)'}: ${first.message}` : ''}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`;
  return new SwitchboardError('invalid_search_query', message, { errors });
}

function parseCondition(c: Checker, cond: unknown, path: string, depth: number): Filter | undefined {
  if (!isPlainObject(cond)) {
    c.add(path, `a condition must be an object like {"eq": {"field": value}}, got ${describe(cond)}`);
    return undefined;
  }
  const ops = Object.keys(cond);
  if (ops.length === 0) {
    c.add(path, `empty condition; valid operators: ${OPERATORS.join(', ')}`);
    return undefined;
  }
  const items: Filter[] = [];
  const problemsBefore = c.problems;
  for (const op of ops) {
    const p = `${path}/${seg(op)}`;
    const arg = cond[op];
    if (op === 'and' || op === 'or') {
      if (depth >= MAX_DEPTH) {
        c.add(p, `and/or/not nest deeper than the maximum of ${MAX_DEPTH}`);
        continue;
      }
      if (!Array.isArray(arg) || arg.length === 0) {
        c.add(p, `${op} takes a non-empty list of conditions, got ${describe(arg)}`);
        continue;
      }
      const children = arg.map((x, i) => parseCondition(c, x, `${p}/${i}`, depth + 1));
      if (children.every((x): x is Filter => x !== undefined)) items.push(children.length === 1 ? children[0]! : { op, items: children });
    } else if (op === 'not') {
      if (depth >= MAX_DEPTH) {
        c.add(p, `and/or/not nest deeper than the maximum of ${MAX_DEPTH}`);
        continue;
      }
      const child = parseCondition(c, arg, p, depth + 1);
      if (child !== undefined) items.push({ op: 'not', item: child });
    } else if (op === 'any') {
      if (depth >= MAX_DEPTH) {
        c.add(p, `and/or/not/any nest deeper than the maximum of ${MAX_DEPTH}`);
        continue;
      }
      if (!isPlainObject(arg) || Object.keys(arg).length === 0) {
        c.add(p, `any takes an object mapping an array field to a condition on its elements, e.g. {"any": {"attendees": {"eq": {"email": "a@example.com"}}}}`);
        continue;
      }
      for (const [name, inner] of Object.entries(arg)) {
        const leafPath = `${p}/${seg(name)}`;
        const field = c.field(name, leafPath);
        if (field === undefined || !c.allows(field, 'any', leafPath)) continue;
        c.inAny++;
        const item = parseCondition(c, inner, leafPath, depth + 1);
        c.inAny--;
        if (item !== undefined) items.push({ op: 'any', field, item });
      }
    } else if (FIELD_OPERATORS.has(op)) {
      if (!isPlainObject(arg) || Object.keys(arg).length === 0) {
        c.add(p, `${op} takes an object mapping a search field to a value, e.g. {"${op}": {"${Object.keys(c.def.fields)[0] ?? 'field'}": ...}}`);
        continue;
      }
      for (const [name, value] of Object.entries(arg)) {
        c.conditions++;
        const leaf = parseLeaf(c, op, name, value, `${p}/${seg(name)}`);
        if (leaf !== undefined) items.push(leaf);
      }
    } else {
      c.add(p, `unknown operator ${JSON.stringify(op)}; valid operators: ${OPERATORS.join(', ')}`);
    }
  }
  if (c.problems > problemsBefore) return undefined;
  // Several operators in one object, or several fields in one operator, all have to hold.
  return items.length === 1 ? items[0] : { op: 'and', items };
}

function typeWord(type: SearchType): string {
  return type === 'integer' || type === 'object' || type === 'array' ? `an ${type}` : `a ${type}`;
}

/** The scalar a comparison accepts for a field, or an error message. */
function scalarFor(field: FieldRef, value: unknown, op: string): { kind: ValueKind; value: ScalarValue } | string {
  const ordered = op === 'gt' || op === 'gte' || op === 'lt' || op === 'lte';
  if (field.multi) {
    if (typeof value === 'string') return { kind: 's', value: compareKey(stripNul(value)) };
    if (typeof value === 'number') return { kind: 'n', value };
    if (typeof value === 'boolean' && !ordered) return { kind: 'b', value };
    return `${scalarLabel(field)}: ${op} compares its values with ${ordered ? 'a string or a number' : 'a string, a number or a boolean'}, got ${describe(value)}`;
  }
  switch (field.type) {
    case 'string':
      return typeof value === 'string' ? { kind: 's', value: compareKey(stripNul(value)) } : `${scalarLabel(field)}: expected a string, got ${describe(value)}`;
    case 'integer':
      return typeof value === 'number' && Number.isSafeInteger(value)
        ? { kind: 'n', value }
        : `${scalarLabel(field)}: expected an integer, got ${describe(value)}`;
    case 'number':
      return typeof value === 'number' ? { kind: 'n', value } : `${scalarLabel(field)}: expected a number, got ${describe(value)}`;
    default:
      return typeof value === 'boolean' ? { kind: 'b', value } : `${scalarLabel(field)}: expected a boolean, got ${describe(value)}`;
  }
}

/** How an error message names a compared field (built only when there is an error to report). */
function scalarLabel(field: FieldRef): string {
  return `${JSON.stringify(field.name)} is ${field.inner ? 'a path in an element' : field.multi && field.name !== field.root ? `a path in ${typeWord(field.type)} field` : `${typeWord(field.type)} field`}`;
}

function parseLeaf(c: Checker, op: string, name: string, value: unknown, path: string): Filter | undefined {
  const field = c.field(name, path);
  if (field === undefined || !c.allows(field, op, path)) return undefined;
  switch (op) {
    case 'contains': {
      const scalar = scalarFor(field, value, op);
      if (typeof scalar === 'string') {
        c.add(path, scalar);
        return undefined;
      }
      return { op, field, kind: scalar.kind, value: scalar.value };
    }
    case 'eq':
    case 'neq':
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      if (value === null && (op === 'eq' || op === 'neq')) return { op: 'present', field, present: op === 'neq' };
      const scalar = scalarFor(field, value, op);
      if (typeof scalar === 'string') {
        c.add(path, scalar + (op === 'eq' || op === 'neq' ? ' (or null)' : ''));
        return undefined;
      }
      return { op, field, kind: scalar.kind, value: scalar.value };
    }
    case 'in': {
      if (!Array.isArray(value) || value.length === 0 || value.length > MAX_IN_VALUES) {
        c.add(path, `in takes a non-empty list of at most ${MAX_IN_VALUES} values, got ${Array.isArray(value) ? `${value.length} values` : describe(value)}`);
        return undefined;
      }
      const values: { kind: ValueKind; value: ScalarValue }[] = [];
      value.forEach((v, i) => {
        const scalar = scalarFor(field, v, 'in');
        if (typeof scalar === 'string') c.add(`${path}/${i}`, scalar);
        else values.push(scalar);
      });
      return values.length === value.length ? { op: 'in', field, values } : undefined;
    }
    case 'like': {
      if (typeof value !== 'string' || value === '' || value.length > MAX_TEXT_CHARS) {
        c.add(
          path,
          `like takes a non-empty pattern string of at most ${MAX_TEXT_CHARS} characters (% any run, _ one character, \\ escapes), got ${describe(value)}`,
        );
        return undefined;
      }
      return { op: 'like', field, pattern: value, parts: parseLike(likeText(stripNul(value))) };
    }
    default: {
      // keyword, fuzzy
      const list = typeof value === 'string' && value.length <= MAX_TEXT_CHARS ? [...new Set(words(stripNul(value)))] : [];
      if (list.length === 0 || list.length > MAX_QUERY_WORDS) {
        c.add(
          path,
          `${op} takes a string of 1 to ${MAX_QUERY_WORDS} words (letters or digits), at most ${MAX_TEXT_CHARS} characters, got ${typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : describe(value)}`,
        );
        return undefined;
      }
      return { op: op === 'fuzzy' ? 'fuzzy' : 'keyword', field, words: list };
    }
  }
}

function parseSort(c: Checker, sort: unknown): SortKey[] {
  if (!Array.isArray(sort)) {
    c.add('/query/sort', `sort must be a list like [{"field": "asc"}], got ${describe(sort)}`);
    return [];
  }
  if (sort.length > MAX_SORT_KEYS) c.add('/query/sort', `at most ${MAX_SORT_KEYS} sort keys, got ${sort.length}`);
  const keys: SortKey[] = [];
  const seen = new Set<string>();
  const sortable = Object.entries(c.def.fields)
    .filter(([, t]) => SORTABLE.has(t))
    .map(([f]) => f);
  sort.forEach((item, i) => {
    const path = `/query/sort/${i}`;
    if (!isPlainObject(item) || Object.keys(item).length !== 1) {
      c.add(path, `a sort key is an object with one field, like {"${sortable[0] ?? 'field'}": "asc"}`);
      return;
    }
    const [name, dir] = Object.entries(item)[0]!;
    const p = `${path}/${seg(name)}`;
    const type = c.def.fields[name];
    if (type === undefined || !SORTABLE.has(type)) {
      c.add(p, `${type === undefined ? 'unknown field' : `${type} fields cannot be sorted:`} ${JSON.stringify(name)}; sortable fields: ${sortable.join(', ')}`);
      return;
    }
    if (dir !== 'asc' && dir !== 'desc') {
      c.add(p, `sort direction must be "asc" or "desc", got ${JSON.stringify(dir)}`);
      return;
    }
    if (seen.has(name)) {
      c.add(p, `${JSON.stringify(name)} appears twice in sort`);
      return;
    }
    seen.add(name);
    keys.push({ field: { name, root: name, type, multi: false }, kind: kindOfType(type), dir });
  });
  return keys;
}

function parseFields(c: Checker, fields: unknown): string[][] | undefined {
  if (!Array.isArray(fields) || fields.length === 0 || fields.length > MAX_FIELD_PATHS) {
    c.add('/fields', `fields must be a non-empty list of at most ${MAX_FIELD_PATHS} field paths, got ${describe(fields)}`);
    return undefined;
  }
  const out: string[][] = [];
  fields.forEach((f, i) => {
    if (typeof f !== 'string' || f === '') {
      c.add(`/fields/${i}`, `a field path is a non-empty string like "name" or "custom_attributes.plan", got ${describe(f)}`);
      return;
    }
    const ref = c.field(f, `/fields/${i}`);
    if (ref !== undefined) out.push(ref.name === ref.root ? [ref.root] : [ref.root, ...ref.name.slice(ref.root.length + 1).split('.')]);
  });
  return out;
}
