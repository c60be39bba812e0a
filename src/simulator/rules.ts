/**
 * Declared behaviour of operations the resource inference does not cover, read from the sidecar:
 *
 * - `search` rules: a body carrying a filter tree (single filters `{field, operator, value}`,
 *   groups `{operator: AND|OR, value: [...]}` nested to any depth), dotted field paths into the
 *   records, operators allowed per value type of the field, a sort, and cursor pages; the
 *   response is the rule's template filled in. A rule may instead read structured filter groups
 *   (`filter_groups`: a list of groups of which any may match, each a list of filters that must
 *   all match: a vendor's filterGroups), look fields up under a record field (`fields_at`), take a
 *   free-text query (`text`) and a list of sort keys (`sort.list`).
 * - `scroll` rules: a server-side cursor over a whole resource ("one scroll open at a time"):
 *   the first request opens it, every later one sends its parameter back, an idle scroll expires,
 *   and the empty page ends it.
 *
 * - `pages` rules: a list operation's page, for envelopes a sample of the schema cannot fill
 *   (page numbers, totals, the next cursor inside a `pages` object), in stored or newest-first
 *   order, with an offset cursor or a keyset cursor of a declared form (the last record's fields).
 *
 * All read the records of a resource from the generic store or from a source the simulator's
 * caller supplies (a RecordSource, rendering only what is asked).
 */
import { randomUUID } from 'node:crypto';
import type { Json } from './description.ts';

/** The meanings an operator symbol can have. */
export const OPERATOR_MEANINGS = [
  'eq',
  'ne',
  'in',
  'nin',
  'lt',
  'gt',
  'lte',
  'gte',
  'between',
  'exists',
  'not_exists',
  'contains',
  'not_contains',
  'starts_with',
  'ends_with',
] as const;
export type OperatorMeaning = (typeof OPERATOR_MEANINGS)[number];
export type ValueType = 'string' | 'number' | 'boolean' | 'date';

export interface SearchRule {
  /** The resource whose records are searched. */
  resource: string;
  /** Body path of the filter tree; default `query`. */
  query?: string;
  /**
   * Structured filter groups instead of a tree: `groups` is the body path of a list of groups (any
   * may match; none given matches every record), `filters` the key of each group's list of filters
   * (all must match).
   */
  filter_groups?: { groups: string; filters: string };
  /** Record field the filtered and sorted fields are looked up under first (`properties`). */
  fields_at?: string;
  /** Body path of a free-text query: records with a field (under fields_at) containing it. */
  text?: string;
  /** Key names inside a filter; default field, operator, value, values (in, nin), high_value (between). */
  keys?: { field?: string; operator?: string; value?: string; values?: string; high_value?: string };
  /** Group operators and whether every (`all`) or any (`any`) member must match. */
  groups?: Record<string, 'all' | 'any'>;
  /** Operator symbols and their meanings. */
  operators: Record<string, OperatorMeaning>;
  /** The symbols allowed per value type of the field (a date is a field matching `date_fields`). */
  allowed?: Partial<Record<ValueType, string[]>>;
  /** A regular expression: fields holding Unix timestamps. */
  date_fields?: string;
  /**
   * Body paths of the sort field and order, and the order values meaning descending. With `list`,
   * the body path of a list of sort keys instead, each a field name (`-` first for descending) or
   * an object whose `field` and `order` keys name the field and order.
   */
  sort?: { field: string; order?: string; descending?: string[]; list?: string };
  /**
   * Body paths of the page size and cursor, or of a page number (`page`: pages from 1 instead of a
   * cursor); default and largest page size; a larger one is refused (400) or, with `over_max: clamp`, lowered.
   */
  pagination?: { per_page?: string; cursor?: string; page?: string; default?: number; max?: number; over_max?: 'reject' | 'clamp' };
  /** The answer: a JSON tree whose strings may be {{records}}, {{total}}, {{page}}, {{per_page}}, {{total_pages}}, {{next_page}}, {{next_cursor}}, {{has_more}}; keys filled with nothing are left out. */
  response: unknown;
  /** The body's filter is the vendor's own language, not simulated: every record matches it (e.g. a vendor's query language over pages). */
  unfiltered?: boolean;
  /** Path parameters a record's dotted field must equal (`{data_source_id: parent.data_source_id}`): a search under a parent. */
  path_fields?: Record<string, string>;
}

export interface ScrollRule {
  resource: string;
  /** The query parameter carrying the scroll's id. */
  param: string;
  page_size: number;
  /** An unused scroll expires after this long. */
  idle_seconds: number;
  /** The 400 for a new scroll while one is open, and for an unknown or expired parameter. */
  busy: { code: string; message: string };
  expired: { code: string; message: string };
  /** The answer, with {{records}} and {{param}}. */
  response: unknown;
}

export interface ListRule {
  resource: string;
  /** `stored` (the default) or `newest_first`: the last stored record first. */
  order?: 'stored' | 'newest_first';
  /** Query parameters of the page size and the cursor. */
  per_page?: string;
  cursor?: string;
  /** Page size when the request names none and the description gives no default. */
  default?: number;
  /** Query parameter of a page number (pages instead of a cursor). */
  page?: string;
  /** The first page's number: 1 (the default), or 0 for APIs that count pages from 0. */
  first_page?: 0 | 1;
  /** Offset paging stops here: a page starting at or beyond `limit` records is this 400. */
  max_offset?: { limit: number; code: string; message: string };
  /** A query parameter value that reverses the order (`{param: order, value: asc}`). */
  reverse?: { param: string; value: string };
  /**
   * The cursor: base64 of this JSON array filled in, with {{last.<field>}} (optionally `*n`), {{next_page}}, {{offset}}; default
   * [{{offset}}, {{next_page}}]. Or `{{last.<id field>}}` alone, not in an array: the page's last record's id, as is (the next page starts after it).
   */
  cursor_form?: unknown[] | string;
  /** The record field a `{{last.<field>}}` cursor element names the record by; default id. */
  id_field?: string;
  /**
   * The answer, with the same variables as a search's, and {{end_cursor}}: on the last page (stored
   * order), the cursor past its last record, which lists later only records stored since (a delta link).
   */
  response: unknown;
  /**
   * Path parameters a record's dotted field must equal (`{block_id: parent.page_id}`): a list under a
   * parent named in the record; or `{field, match: contains}`: whose text must contain the parameter,
   * ignoring case (a search named in the path, `search(q='{q}')`).
   */
  path_fields?: Record<string, string | { field: string; match?: 'equals' | 'contains' }>;
  /** Query parameters that filter the list, as the top-level `filters` (an `equals` value may list several, comma-separated). */
  filters?: Record<string, { field?: string; match?: 'equals' | 'since' | 'before' | 'after' | 'until' }>;
}

/** Records of a resource in stored order, rendered on demand. */
/**
 * The records a resource's soft_delete marked deleted (an API's deleted-records list): those whose
 * dotted `field` (the time of the mark) lies between the query parameters `since` and `until`, each
 * answered as `item` (a template over the record), in `response` ({{records}}, {{since}}, {{until}}, {{count}}).
 */
export interface DeletionsRule {
  resource: string;
  field: string;
  since?: string;
  until?: string;
  item: unknown;
  response: unknown;
}

/**
 * A change feed over several resources (a change-data-capture operation): the names a query
 * parameter lists (comma-separated), each answered as `group` ({{name}}, {{records}}, {{count}}) with
 * its resource's records, soft-deleted ones included as stored, whose dotted `field` is after the
 * `since` parameter's time; `response` holds {{groups}} and {{now}}.
 */
export interface ChangedRule {
  names: string;
  since: string;
  resources: Record<string, string>;
  field: string;
  group: unknown;
  response: unknown;
}

export interface RecordSource {
  size(): number;
  slice(start: number, end: number): unknown[];
  /** Stored position of the record with this id, or -1. */
  indexOf(id: string): number;
}

/** A refused request: status 400, the generic code (renamed by error.codes) or the rule's own. */
export class RuleError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export function readPath(value: unknown, path: string): unknown {
  let v = value;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Json)[part];
  }
  return v;
}

/**
 * Fill a response template: a string that is one {{var}} takes the value itself ({{a.b}} a dotted
 * path, {{a*1000}} a number scaled), a string with more around its placeholders is null when one
 * of them fills with nothing (a next-page link on the last page); keys and objects filled with
 * nothing are left out, and a key written `name?` is kept as `name` only when every placeholder
 * under it is filled.
 */
export function fill(template: unknown, vars: Record<string, unknown>): unknown {
  if (typeof template === 'string') {
    // {{name}}, {{a.b}} (a dotted path), {{a.b*1000}} (a number scaled); names may hold dashes (a path parameter's: {{team-id}}).
    const value = (path: string, scale: string | undefined): unknown => {
      const v = readPath(vars, path);
      return scale !== undefined && typeof v === 'number' ? v * Number(scale) : v;
    };
    const whole = /^\{\{([\w.-]+)(?:\*(\d+))?\}\}$/.exec(template);
    if (whole !== null) return value(whole[1] as string, whole[2]);
    if (unfilled(template, vars)) return null;
    return template.replace(/\{\{([\w.-]+)(?:\*(\d+))?\}\}/g, (_, k: string, n: string | undefined) => String(value(k, n)));
  }
  if (Array.isArray(template)) return template.map((t) => fill(t, vars));
  if (template === null || typeof template !== 'object') return template;
  // A key ending in `?` is kept (without the `?`) only when every placeholder under it is filled.
  // A key that is one {{var}} of text is that text (a list answer keyed by the resource's name).
  const key = (k: string): string => {
    const v = /^\{\{([\w.]+)\}\}$/.exec(k) === null ? undefined : readPath(vars, k.slice(2, -2));
    return typeof v === 'string' ? v : k;
  };
  const entries = Object.entries(template as Json)
    .map(([raw, v]) => [key(raw), v] as const)
    .map(([k, v]) => (k.endsWith('?') ? ([k.slice(0, -1), unfilled(v, vars) ? undefined : fill(v, vars)] as const) : ([k, fill(v, vars)] as const)))
    .filter(([, v]) => v !== undefined);
  return entries.length === 0 && Object.keys(template as Json).length > 0 ? undefined : Object.fromEntries(entries);
}

/** Whether a template holds a placeholder that fills with nothing. */
function unfilled(template: unknown, vars: Record<string, unknown>): boolean {
  if (typeof template === 'string') return [...template.matchAll(/\{\{([\w.-]+)(?:\*\d+)?\}\}/g)].some((m) => readPath(vars, m[1] as string) === undefined);
  if (template !== null && typeof template === 'object') return Object.values(template as Json).some((v) => unfilled(v, vars));
  return false;
}

const numeric = (a: unknown): number | undefined => (typeof a === 'number' ? a : typeof a === 'string' && /^-?\d+(\.\d+)?$/.test(a) ? Number(a) : undefined);
/** Equal, numbers compared as numbers (a number field against "42", a string of digits against 42). */
const same = (a: unknown, b: unknown): boolean => a === b || (numeric(a) !== undefined && numeric(a) === numeric(b));
const text = (a: unknown): string | undefined => (typeof a === 'string' ? a.toLowerCase() : typeof a === 'number' ? String(a) : undefined);

/** Order two values: as numbers when both are numeric, as instants when both are dates (an ISO time against epoch milliseconds), else undefined. */
function order(a: unknown, b: unknown): number | undefined {
  const na = numeric(a);
  const nb = numeric(b);
  const iso = (x: unknown): number => (typeof x === 'string' && /^\d{4}-\d{2}-\d{2}/.test(x) ? Date.parse(x) : NaN);
  const ta = na ?? iso(a);
  const tb = nb ?? iso(b);
  return Number.isNaN(ta) || Number.isNaN(tb) ? undefined : ta - tb;
}
const cmp = (a: unknown, b: unknown, test: (c: number) => boolean): boolean => {
  const c = order(a, b);
  return c !== undefined && test(c);
};
const present = (a: unknown): boolean => a !== undefined && a !== null && a !== '';

export function holds(meaning: OperatorMeaning, actual: unknown, value: unknown, high?: unknown): boolean {
  const list = Array.isArray(value) ? value : [value];
  const s = text(actual);
  const v = String(value).toLowerCase();
  switch (meaning) {
    case 'eq':
      return same(actual, value);
    case 'ne':
      return !same(actual, value);
    case 'in':
      return list.some((x) => same(actual, x));
    case 'nin':
      return !list.some((x) => same(actual, x));
    case 'lt':
      return cmp(actual, value, (c) => c < 0);
    case 'gt':
      return cmp(actual, value, (c) => c > 0);
    case 'lte':
      return cmp(actual, value, (c) => c <= 0);
    case 'gte':
      return cmp(actual, value, (c) => c >= 0);
    case 'between':
      return cmp(actual, value, (c) => c >= 0) && cmp(actual, high, (c) => c <= 0);
    case 'exists':
      return present(actual);
    case 'not_exists':
      return !present(actual);
    case 'contains':
      return s !== undefined && s.includes(v);
    case 'not_contains':
      return !(s !== undefined && s.includes(v));
    case 'starts_with':
      return s !== undefined && s.startsWith(v);
    case 'ends_with':
      return s !== undefined && s.endsWith(v);
  }
}

/** A record's field: under `fields_at` first, else at the record's top. */
export function fieldOf(rule: SearchRule, record: unknown, field: string): unknown {
  const under = rule.fields_at === undefined ? undefined : readPath(readPath(record, rule.fields_at), field);
  return under ?? readPath(record, field);
}

/** A predicate for structured filter groups (`filter_groups`): any group, all of its filters. Throws RuleError. */
function compileGroups(rule: SearchRule, body: Json, sample: unknown): (record: unknown) => boolean {
  const fg = rule.filter_groups as { groups: string; filters: string };
  const raw = readPath(body, fg.groups);
  const groups = Array.isArray(raw) ? raw : [];
  if (groups.length === 0) return () => true;
  // As a filter tree: an any-group of all-groups, under group operators no filter can name.
  const k = { operator: 'operator', value: 'value', ...rule.keys };
  const and = (filters: unknown): unknown => ({ [k.operator]: ' all', [k.value]: Array.isArray(filters) ? filters : [] });
  return compileFilter(
    { ...rule, groups: { ' all': 'all', ' any': 'any' } },
    { [k.operator]: ' any', [k.value]: groups.map((g) => and(readPath(g, fg.filters))) },
    sample,
  );
}

/** A predicate for a filter tree; `sample` (a record) gives each field's value type. Throws RuleError. */
export function compileFilter(rule: SearchRule, tree: unknown, sample: unknown): (record: unknown) => boolean {
  const k = { field: 'field', operator: 'operator', value: 'value', values: 'values', high_value: 'high_value', ...rule.keys };
  const groups = rule.groups ?? { AND: 'all', OR: 'any' };
  const node = (tree ?? {}) as Json;
  const op = node[k.operator];
  if (typeof op === 'string' && groups[op] !== undefined) {
    const members = Array.isArray(node[k.value]) ? (node[k.value] as unknown[]) : [];
    if (members.length === 0) throw new RuleError('invalid', `${k.value} must hold at least one filter`, k.value);
    const parts = members.map((m) => compileFilter(rule, m, sample));
    return groups[op] === 'all' ? (r) => parts.every((p) => p(r)) : (r) => parts.some((p) => p(r));
  }
  const field = node[k.field];
  if (typeof field !== 'string' || field === '') throw new RuleError('missing', `${k.field} is a required parameter.`, k.field);
  const meaning = typeof op === 'string' ? rule.operators[op] : undefined;
  const example = fieldOf(rule, sample, field);
  const type: ValueType =
    rule.date_fields !== undefined && new RegExp(rule.date_fields).test(field)
      ? 'date'
      : typeof example === 'boolean'
        ? 'boolean'
        : typeof example === 'number'
          ? 'number'
          : 'string';
  const allowed = rule.allowed?.[type];
  if (meaning === undefined || (allowed !== undefined && !allowed.includes(op as string))) {
    throw new RuleError(
      'unsupported_operator',
      `Operator ${String(op)} is not supported for ${type === 'date' ? 'date ' : ''}field ${field}${allowed !== undefined ? `; use ${allowed.join(', ')}` : ''}`,
      k.operator,
    );
  }
  const value = (meaning === 'in' || meaning === 'nin') && node[k.value] === undefined ? node[k.values] : node[k.value];
  const high = node[k.high_value];
  return (r) => holds(meaning, fieldOf(rule, r, field), value, high);
}

const encodeCursor = (offset: number, page: number): string => Buffer.from(JSON.stringify([offset, page])).toString('base64');
function decodeCursor(s: string): { offset: number; page: number } | undefined {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64').toString('utf8')) as unknown;
    if (Array.isArray(v) && Number.isInteger(v[0]) && Number.isInteger(v[1]) && (v[0] as number) >= 0 && (v[1] as number) >= 1)
      return { offset: v[0] as number, page: v[1] as number };
  } catch {
    // not one of ours
  }
  return undefined;
}

/** Answer a search request over `records` (in list order). Throws RuleError. */
export function search(rule: SearchRule, records: unknown[], body: Json, pathParams: Record<string, string> = {}): unknown {
  const under = Object.entries(rule.path_fields ?? {});
  const filter =
    rule.unfiltered === true
      ? () => true
      : rule.filter_groups !== undefined
        ? compileGroups(rule, body, records[0])
        : compileFilter(rule, readPath(body, rule.query ?? 'query'), records[0]);
  let matches = records.filter((r) => under.every(([param, field]) => String(readPath(r, field)) === pathParams[param]) && filter(r));
  const words = rule.text === undefined ? undefined : readPath(body, rule.text);
  if (typeof words === 'string' && words !== '')
    matches = matches.filter((r) =>
      JSON.stringify(rule.fields_at === undefined ? r : readPath(r, rule.fields_at))
        .toLowerCase()
        .includes(words.toLowerCase()),
    );
  const descending = rule.sort?.descending ?? ['descending', 'desc'];
  const keys: { field: string; desc: boolean }[] = [];
  if (rule.sort?.list !== undefined) {
    const list = readPath(body, rule.sort.list);
    for (const k of Array.isArray(list) ? list : []) {
      if (typeof k === 'string') keys.push({ field: k.replace(/^-/, ''), desc: k.startsWith('-') });
      else if (typeof readPath(k, rule.sort.field) === 'string')
        keys.push({
          field: readPath(k, rule.sort.field) as string,
          desc: rule.sort.order !== undefined && descending.includes(String(readPath(k, rule.sort.order))),
        });
    }
  } else if (rule.sort !== undefined && typeof readPath(body, rule.sort.field) === 'string') {
    keys.push({
      field: readPath(body, rule.sort.field) as string,
      desc: rule.sort.order !== undefined && descending.includes(String(readPath(body, rule.sort.order))),
    });
  }
  if (keys.length > 0) {
    matches.sort((a, b) => {
      for (const key of keys) {
        const x = fieldOf(rule, a, key.field);
        const y = fieldOf(rule, b, key.field);
        // Records without the field come last either way.
        if (x !== y && (x === undefined || x === null || y === undefined || y === null)) return x === undefined || x === null ? 1 : -1;
        const c = x === y ? 0 : (order(x, y) ?? (String(x) < String(y) ? -1 : 1));
        if (c !== 0) return key.desc ? -c : c;
      }
      return 0;
    });
  }
  const pag = rule.pagination ?? {};
  const sizeRaw = pag.per_page === undefined ? undefined : readPath(body, pag.per_page);
  let perPage = typeof sizeRaw === 'number' ? sizeRaw : (pag.default ?? 50);
  if (pag.over_max === 'clamp' && pag.max !== undefined) perPage = Math.max(1, Math.min(perPage, pag.max));
  if (perPage < 1 || (pag.max !== undefined && perPage > pag.max))
    throw new RuleError('invalid', `per_page must be between 1 and ${pag.max ?? 'any'}`, 'per_page');
  const cursorRaw = pag.cursor === undefined ? undefined : readPath(body, pag.cursor);
  const pageRaw = pag.page === undefined ? undefined : readPath(body, pag.page);
  if (pageRaw !== undefined && (typeof pageRaw !== 'number' || !Number.isInteger(pageRaw) || pageRaw < 1))
    throw new RuleError('invalid', `${String(pag.page?.split('.').pop())} must be a whole number from 1`, pag.page?.split('.').pop());
  const at =
    typeof pageRaw === 'number'
      ? { offset: (pageRaw - 1) * perPage, page: pageRaw }
      : typeof cursorRaw === 'string'
        ? decodeCursor(cursorRaw)
        : { offset: 0, page: 1 };
  if (at === undefined) throw new RuleError('invalid', `${String(pag.cursor?.split('.').pop())} is invalid`, pag.cursor?.split('.').pop());
  const rows = matches.slice(at.offset, at.offset + perPage);
  const next = at.offset + rows.length;
  const more = next < matches.length;
  return fill(rule.response, {
    records: rows,
    total: matches.length,
    page: at.page,
    per_page: perPage,
    total_pages: Math.ceil(matches.length / perPage),
    next_page: more ? at.page + 1 : undefined,
    next_cursor: more ? encodeCursor(next, at.page + 1) : undefined,
    has_more: more,
  });
}

/** Answer a list request from its query parameters; `link` gives {{origin}} and {{path}}. Throws RuleError. */
export function listPage(
  rule: ListRule,
  source: RecordSource,
  query: Json,
  descriptionDefault: number | undefined,
  link: { origin: string; path: string },
): unknown {
  const size = source.size();
  const newest = (rule.order === 'newest_first') !== (rule.reverse !== undefined && query[rule.reverse.param] === rule.reverse.value);
  const perPage = Math.max(
    1,
    typeof query[rule.per_page ?? ''] === 'number' ? (query[rule.per_page as string] as number) : (descriptionDefault ?? rule.default ?? 50),
  );
  // A bare id cursor (`{{last.id}}`): the page after the record it names, in list order.
  const bare = typeof rule.cursor_form === 'string' ? /^\{\{last\.([A-Za-z0-9_]+)\}\}$/.exec(rule.cursor_form)?.[1] : undefined;
  const form = typeof rule.cursor_form === 'string' ? [rule.cursor_form] : (rule.cursor_form ?? ['{{offset}}', '{{next_page}}']);
  const idField = bare ?? rule.id_field ?? 'id';
  const raw = rule.cursor === undefined ? undefined : query[rule.cursor];
  let offset = 0;
  let page = 1;
  if (bare !== undefined && typeof raw === 'string' && raw !== '') {
    const stored = source.indexOf(raw);
    if (stored < 0) throw new RuleError('invalid', `${String(rule.cursor)} is invalid`, rule.cursor);
    offset = newest ? size - stored : stored + 1;
  } else if (typeof raw === 'string' && raw !== '') {
    const bad = new RuleError('invalid', `${String(rule.cursor)} is invalid`, rule.cursor);
    let parts: unknown;
    try {
      parts = JSON.parse(Buffer.from(raw, 'base64').toString('utf8'));
    } catch {
      throw bad;
    }
    if (!Array.isArray(parts) || parts.length !== form.length) throw bad;
    const at = (t: string): unknown => parts[form.indexOf(t)];
    page = Number(at('{{next_page}}'));
    const keyed = form.find((t) => t === `{{last.${idField}}}`);
    if (keyed !== undefined) {
      const stored = source.indexOf(String(at(keyed as string)));
      if (stored < 0) throw bad;
      offset = newest ? size - stored : stored + 1;
    } else offset = Number(at('{{offset}}'));
    if (!Number.isInteger(page) || page < 1 || !Number.isInteger(offset) || offset < 0) throw bad;
  } else if (rule.page !== undefined && typeof query[rule.page] === 'number' && (query[rule.page] as number) >= (rule.first_page ?? 1)) {
    // Pages counted from first_page (0 or 1); `page` stays 1-based within.
    page = (query[rule.page] as number) + 1 - (rule.first_page ?? 1);
    offset = (page - 1) * perPage;
  }
  if (rule.max_offset !== undefined && offset >= rule.max_offset.limit)
    throw new RuleError(rule.max_offset.code, rule.max_offset.message, rule.page ?? rule.cursor);
  const rows = newest ? source.slice(Math.max(0, size - offset - perPage), Math.max(0, size - offset)).reverse() : source.slice(offset, offset + perPage);
  const next = offset + rows.length;
  const more = next < size;
  const last = rows[rows.length - 1] as Json | undefined;
  const cursor = !more
    ? undefined
    : bare !== undefined
      ? String(last?.[idField] ?? '')
      : Buffer.from(JSON.stringify(fill(form, { last, next_page: page + 1, offset: next }))).toString('base64');
  // On the last page, in stored order: the cursor past its last record, which later lists only what is stored after it (a delta link).
  const end = more || newest ? undefined : (last ?? (next > 0 ? (source.slice(next - 1, next)[0] as Json | undefined) : undefined));
  const endCursor =
    end === undefined
      ? undefined
      : bare !== undefined
        ? String(end[idField] ?? '')
        : Buffer.from(JSON.stringify(fill(form, { last: end, next_page: page + 1, offset: next }))).toString('base64');
  return fill(rule.response, {
    ...link,
    records: rows,
    end_cursor: endCursor,
    total: size,
    page: page - 1 + (rule.first_page ?? 1),
    per_page: perPage,
    total_pages: Math.ceil(size / perPage),
    next_page: more ? page + (rule.first_page ?? 1) : undefined,
    next_cursor: cursor,
    has_more: more,
    last_page: !more,
  });
}

/** The open scroll of one rule: one at a time, as the vendors that have them allow. */
export class Scroll {
  private open: { param: string; position: number; lastUsed: number } | undefined;

  constructor(
    private readonly rule: ScrollRule,
    private readonly now: () => number = Date.now,
  ) {}

  /** Answer a scroll request; `slice(start, end)` gives records of the resource in list order. Throws RuleError. */
  next(param: unknown, slice: (start: number, end: number) => unknown[]): unknown {
    const t = this.now();
    if (this.open !== undefined && t - this.open.lastUsed > this.rule.idle_seconds * 1000) this.open = undefined;
    if (param === undefined || param === '') {
      if (this.open !== undefined) throw new RuleError(this.rule.busy.code, this.rule.busy.message, this.rule.param);
      this.open = { param: randomUUID(), position: 0, lastUsed: t };
    } else if (this.open === undefined || this.open.param !== param) throw new RuleError(this.rule.expired.code, this.rule.expired.message, this.rule.param);
    const s = this.open;
    const records = slice(s.position, s.position + this.rule.page_size);
    s.position += records.length;
    s.lastUsed = t;
    // The empty page ends the scroll and expires its parameter.
    if (records.length === 0) this.open = undefined;
    return fill(this.rule.response, { records, param: s.param });
  }

  close(): void {
    this.open = undefined;
  }
}
