/**
 * Intercom's search endpoints (POST /contacts/search, POST /conversations/search) over the
 * simulator's records: the query language of the 2.14 description's search_request — single
 * filters `{field, operator, value}` and `{operator: AND|OR, value: [...]}` groups, nested — and
 * `pagination: {per_page, starting_after}` cursor pages.
 *
 * Operators by the field's value type, as the description's single_filter_search_request says
 * for contacts: strings `= != IN NIN ~ !~ ^ $`, booleans `= != IN NIN`, integers
 * `= != IN NIN < > <= >=`, and date fields (timestamps, `*_at`) only `= < >`; any other
 * combination is a 400 error. A field is read from the rendered record, dotted paths included
 * (e.g. `source.author.email`, `custom_attributes.plan_tier`).
 */
import { SimulatorError } from '../../simulator/openapi-simulator.ts';
import type { Json } from './state.ts';

/** A 400 the search endpoints answer (the server wraps it as an error.list). */
export class SearchQueryError extends SimulatorError {
  constructor(code: 'parameter_invalid' | 'bad_request', message: string) {
    super(400, code, message);
  }
}

interface SingleFilter {
  field: string;
  operator: string;
  value: unknown;
}
interface GroupFilter {
  operator: 'AND' | 'OR';
  value: unknown[];
}

const DATE_OPERATORS = new Set(['=', '<', '>']);
const STRING_OPERATORS = new Set(['=', '!=', 'IN', 'NIN', '~', '!~', '^', '$']);
const BOOLEAN_OPERATORS = new Set(['=', '!=', 'IN', 'NIN']);
const INTEGER_OPERATORS = new Set(['=', '!=', 'IN', 'NIN', '<', '>', '<=', '>=']);

function read(record: Json, path: string): unknown {
  let v: unknown = record;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Json)[part];
  }
  return v;
}

function isDateField(field: string): boolean {
  return /(^|\.)[a-z_]*_at$/.test(field) || field === 'snoozed_until' || field === 'waiting_since';
}

/** Check one filter against the operator rules; throws SearchQueryError. */
function checkFilter(f: SingleFilter, sample: unknown): void {
  if (typeof f.field !== 'string' || f.field === '') throw new SearchQueryError('parameter_invalid', 'field is a required parameter.');
  if (isDateField(f.field)) {
    if (!DATE_OPERATORS.has(f.operator)) throw new SearchQueryError('bad_request', `Operator ${f.operator} is not supported for date field ${f.field}; use =, < or >`);
    return;
  }
  const allowed = typeof sample === 'boolean' ? BOOLEAN_OPERATORS : typeof sample === 'number' ? INTEGER_OPERATORS : STRING_OPERATORS;
  if (!allowed.has(f.operator)) throw new SearchQueryError('bad_request', `Operator ${f.operator} is not supported for field ${f.field}`);
}

function compare(actual: unknown, op: string, value: unknown): boolean {
  const list = Array.isArray(value) ? value : [value];
  switch (op) {
    case '=':
      return actual === value || (typeof actual === 'number' && Number(value) === actual);
    case '!=':
      return !(actual === value || (typeof actual === 'number' && Number(value) === actual));
    case 'IN':
      return list.some((v) => v === actual || (typeof actual === 'number' && Number(v) === actual));
    case 'NIN':
      return !list.some((v) => v === actual || (typeof actual === 'number' && Number(v) === actual));
    case '<':
      return typeof actual === 'number' && actual < Number(value);
    case '>':
      return typeof actual === 'number' && actual > Number(value);
    case '<=':
      return typeof actual === 'number' && actual <= Number(value);
    case '>=':
      return typeof actual === 'number' && actual >= Number(value);
    case '~':
      return typeof actual === 'string' && actual.toLowerCase().includes(String(value).toLowerCase());
    case '!~':
      return !(typeof actual === 'string' && actual.toLowerCase().includes(String(value).toLowerCase()));
    case '^':
      return typeof actual === 'string' && actual.toLowerCase().startsWith(String(value).toLowerCase());
    case '$':
      return typeof actual === 'string' && actual.toLowerCase().endsWith(String(value).toLowerCase());
    default:
      return false;
  }
}

/** A predicate for a search_request query (validated by the OpenAPI schema before it gets here). */
export function compileQuery(query: unknown, sample: Json | undefined): (record: Json) => boolean {
  const q = query as SingleFilter | GroupFilter;
  if (q.operator === 'AND' || q.operator === 'OR') {
    const parts = (Array.isArray(q.value) ? q.value : []).map((v) => compileQuery(v, sample));
    if (parts.length === 0) throw new SearchQueryError('parameter_invalid', 'value must hold at least one filter');
    return q.operator === 'AND' ? (r) => parts.every((p) => p(r)) : (r) => parts.some((p) => p(r));
  }
  const f = q as SingleFilter;
  checkFilter(f, sample === undefined ? undefined : read(sample, f.field));
  return (r) => compare(read(r, f.field), f.operator, f.value);
}

/** Search cursors: base64 of [offset into the matches, page number]. */
function encode(offset: number, page: number): string {
  return Buffer.from(JSON.stringify([offset, page])).toString('base64');
}
function decode(s: string): { offset: number; page: number } {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64').toString('utf8')) as unknown;
    if (Array.isArray(v) && Number.isInteger(v[0]) && Number.isInteger(v[1]) && (v[0] as number) >= 0) return { offset: v[0] as number, page: v[1] as number };
  } catch {
    // not one of ours
  }
  throw new SearchQueryError('parameter_invalid', 'starting_after is invalid');
}

/** Default and largest page of the search endpoints (the pagination guide: "Default is 50. Max is 150"). */
export const SEARCH_PER_PAGE = 50;
export const SEARCH_MAX_PER_PAGE = 150;

/** One page of search results over `records` (already rendered), in their given order. */
export function searchPage(records: Json[], body: Json): { rows: Json[]; total: number; pages: Json } {
  const predicate = compileQuery(body['query'], records[0]);
  const pagination = (body['pagination'] ?? {}) as { per_page?: number; starting_after?: string | null };
  const perPage = pagination.per_page ?? SEARCH_PER_PAGE;
  if (perPage < 1 || perPage > SEARCH_MAX_PER_PAGE) throw new SearchQueryError('parameter_invalid', `per_page must be between 1 and ${SEARCH_MAX_PER_PAGE}`);
  const at = typeof pagination.starting_after === 'string' ? decode(pagination.starting_after) : { offset: 0, page: 1 };
  const matches = records.filter(predicate);
  const rows = matches.slice(at.offset, at.offset + perPage);
  const totalPages = Math.ceil(matches.length / perPage);
  const pages: Json = { type: 'pages', page: at.page, per_page: perPage, total_pages: totalPages };
  const nextOffset = at.offset + rows.length;
  if (nextOffset < matches.length) pages['next'] = { page: at.page + 1, starting_after: encode(nextOffset, at.page + 1) };
  return { rows, total: matches.length, pages };
}
