/**
 * Lists of the OpenAPI front end: a resource's records under the path's parent, soft-deleted ones
 * left out (exports show them), filtered by query params named like record fields or the sidecar's
 * filters, ordered, and paged the way the operation's parameters say (pages.ts).
 */
import { getPath, idAt, isPlainObject } from '../core/values.ts';
import type { Json, Operation } from '../description.ts';
import type { SimRequest, SimResponse } from '../sim-server.ts';
import type { PageOf } from './pages.ts';
import type { RecordRules } from './records.ts';
import { propertiesOf } from './schema.ts';
import type { OpenApiContext, Resource, StoredRecord } from './types.ts';

export const CURSOR_PARAMS = [
  'cursor',
  'starting_after',
  'after',
  'page_token',
  'pageToken',
  'nextPageToken',
  'next_cursor',
  'offset',
  'start_cursor',
  'startAt',
  'start_at',
];
export const LIMIT_PARAMS = ['limit', 'per_page', 'page_size', 'pageSize', 'count', 'max_results', 'maxResults'];
export const PAGE_PARAMS = ['page', 'page_number'];

export type ListAnswer = (
  op: Operation,
  r: Resource,
  pathParams: Record<string, string>,
  query: Json,
  origin: string,
  req: SimRequest,
  handledParams?: string[],
) => SimResponse;

export function lister(ctx: OpenApiContext, rules: RecordRules, pageOf: PageOf): ListAnswer {
  const { d, sidecar } = ctx;
  const { softDeleted, softDeleteParam } = rules;
  const list = (
    op: Operation,
    r: Resource,
    pathParams: Record<string, string>,
    query: Json,
    origin: string,
    req: SimRequest,
    handledParams: string[] = [],
  ): SimResponse => {
    // A list asked for with a JSON body (a POST query: {filter, limit, offset}) pages by the body's fields too.
    const bodyProps = op.method === 'POST' && op.bodyEncoding !== 'form' ? propertiesOf(d, d.schemaAt(op.bodyRef)) : {};
    const paramNames = new Set([...op.params.filter((p) => p.in === 'query').map((p) => p.name), ...Object.keys(bodyProps)]);
    const paramSchema = (name: string): Json | undefined => d.schemaAt(op.params.find((p) => p.name === name)?.schemaRef) ?? bodyProps[name];
    // An operation with its own pagination (an export) pages its way; the rest as the sidecar's pagination says.
    const opConf = sidecar.operations?.[op.key];
    const pag = opConf?.pagination ?? sidecar.pagination ?? {};
    // Exports (operations with their own pagination or a since param) show soft-deleted records; lists do not.
    const exporting = opConf?.pagination !== undefined || opConf?.since !== undefined;
    // A param the sidecar's filters name is a filter, not the cursor.
    const cursorParam = pag.cursor_param ?? CURSOR_PARAMS.find((n) => paramNames.has(n) && sidecar.filters?.[n] === undefined);
    const pageParam = PAGE_PARAMS.find((n) => paramNames.has(n));
    const limitParam = pag.limit_param ?? LIMIT_PARAMS.find((n) => paramNames.has(n));
    const limitDef = limitParam === undefined ? undefined : paramSchema(limitParam);
    let limit =
      typeof query[limitParam ?? ''] === 'number'
        ? (query[limitParam as string] as number)
        : typeof limitDef?.default === 'number'
          ? limitDef.default
          : (pag.default_limit ?? 20);
    if (pag.max_limit !== undefined) limit = Math.min(limit, pag.max_limit);
    limit = Math.max(1, limit);
    const since = opConf?.since;
    const handled = new Set([cursorParam, pageParam, limitParam, since?.param, ...handledParams, ...(sidecar.auth?.params ?? [])]);
    // Soft-deleted records: exports show them, lists do not, unless the list asks for only them
    // (the soft_delete param: a vendor's archived=true).
    const deletedParam = softDeleteParam(r);
    if (deletedParam !== undefined) handled.add(deletedParam);
    const onlyDeleted = deletedParam !== undefined && (query[deletedParam] === true || query[deletedParam] === 'true');
    // Under the path's parents; a path id the records keep no parent for is one of the record's
    // key fields (Bitbucket's GET /repositories/{workspace} by workspace.slug).
    const key = sidecar.resources?.[r.name]?.key ?? {};
    const under = (s: StoredRecord, k: string, v: string): boolean =>
      s.parents[k] === v || (s.parents[k] === undefined && key[k] !== undefined && String(getPath(s.record, key[k])) === v);
    let rows = [...r.records.values()].filter(
      (s) => Object.entries(pathParams).every(([k, v]) => under(s, k, v)) && (onlyDeleted ? softDeleted(r, s.record) : exporting || !softDeleted(r, s.record)),
    );
    if (pag.order === 'newest_first') rows.reverse();
    else if (pag.order === 'id_ascending' || pag.order === 'id_descending') {
      const sign = pag.order === 'id_ascending' ? 1 : -1;
      rows.sort((a, b) => sign * (compareValues(a.record[r.idField], b.record[r.idField]) ?? 0));
    }
    if (since !== undefined) {
      // Changed at or after the param (Unix seconds), oldest change first.
      const secondsOf = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' ? Math.floor(Date.parse(v) / 1000) : NaN);
      const from = query[since.param];
      if (typeof from === 'number') rows = rows.filter((s) => secondsOf(s.record[since.field]) >= from);
      rows = rows
        .map((s, i) => ({ s, i }))
        .sort((a, b) => secondsOf(a.s.record[since.field]) - secondsOf(b.s.record[since.field]) || a.i - b.i)
        .map((x) => x.s);
    }
    const recordProps = propertiesOf(d, d.schemaAt(r.recordRef));
    // Filters: query params named like a record field keep the records whose field (or its id) equals
    // them; the sidecar's filters name another field, compare (numbers or times), or give values matching all.
    for (const [name, value, field] of filterEntries(query, handled)) {
      // A range on a numeric field (deepObject created[gte]=...&created[lt]=..., a vendor's range_query_specs).
      const range = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
      if (range !== undefined && Object.keys(range).length > 0 && Object.keys(range).every((k) => ['gt', 'gte', 'lt', 'lte'].includes(k))) {
        const ok = (f: number): boolean =>
          Object.entries(range).every(([op, b]) =>
            op === 'gt' ? f > Number(b) : op === 'gte' ? f >= Number(b) : op === 'lt' ? f < Number(b) : f <= Number(b),
          );
        rows = rows.filter((s) => typeof s.record[name] !== 'number' || ok(s.record[name] as number));
        continue;
      }
      if (typeof value === 'object') continue;
      const rule = sidecar.filters?.[name];
      if (rule?.any?.includes(String(value)) === true) continue;
      // Without a rule, a value the record field's enum does not hold names a group, not a value (e.g. status=all): no filter.
      const fieldEnum = rule !== undefined || recordProps[field] === undefined ? undefined : d.resolve<Json>(recordProps[field]).enum;
      if (Array.isArray(fieldEnum) && !fieldEnum.includes(value)) continue;
      const match = rule?.match ?? 'equals';
      if (match !== 'equals') {
        // since >=, before <=, after >, until <; a record whose field does not compare is kept.
        if (value === '') continue;
        rows = rows.filter((s) => {
          const c = compareValues(getPath(s.record, rule?.field ?? field), value);
          return c === undefined || (match === 'since' ? c >= 0 : match === 'before' ? c <= 0 : match === 'after' ? c > 0 : c < 0);
        });
        continue;
      }
      rows = rows.filter((s) => {
        const f = rule?.field !== undefined ? getPath(s.record, rule.field) : s.record[field];
        if (f === undefined) return true;
        const equals = (v: unknown): boolean =>
          v !== null && typeof v === 'object'
            ? ['gid', 'id', 'uuid'].some((k) => (v as Json)[k] !== undefined && String((v as Json)[k]) === String(value))
            : String(v) === String(value);
        // An array field (a task in several projects) matches when one of its items does.
        return Array.isArray(f) ? f.some(equals) : equals(f);
      });
    }
    const cursorDef = cursorParam === undefined ? undefined : paramSchema(cursorParam);
    const numericCursor = cursorDef?.type === 'integer' || cursorDef?.type === 'number';
    // A vendor that answers an empty list without a body: 204, or 304 when it was asked what changed since (If-Modified-Since).
    if (opConf?.empty !== undefined && rows.length === 0) {
      const filtered = Object.entries(opConf.empty.when_filtered ?? {}).find(([k]) => query[k] !== undefined && query[k] !== '');
      return { status: filtered?.[1] ?? opConf.empty.status };
    }
    let offset: number | undefined = 0;
    // A cursor naming a record of the list starts after it (e.g. starting_after=<id>).
    const after =
      cursorParam === undefined || numericCursor || query[cursorParam] === undefined
        ? -1
        : rows.findIndex((s) => String(idAt(s.record, r.idField)) === String(query[cursorParam]));
    if (after >= 0) offset = after + 1;
    else if (cursorParam !== undefined && query[cursorParam] !== undefined && query[cursorParam] !== '') offset = undefined;
    else if (pageParam !== undefined && typeof query[pageParam] === 'number') offset = (Math.max(1, query[pageParam] as number) - 1) * limit;
    const page = offset !== undefined && pageParam !== undefined && typeof query[pageParam] === 'number' ? Math.max(1, query[pageParam] as number) : 1;
    return pageOf(
      op,
      r.name,
      rows.map((s) => s.record),
      {
        cursorParam,
        cursor: offset === undefined ? query[cursorParam as string] : undefined,
        offset: offset ?? 0,
        numericCursor,
        limit,
        limitGiven: typeof query[limitParam ?? ''] === 'number',
        limitParam,
        pageParam,
        page,
        nextPath: pag.next_cursor,
        pag,
      },
      origin,
      req,
    );
  };
  return list;
}

/** A record field against a query value: as numbers when both are numeric (e.g. ts "1700000000.000100"), else as times; undefined when neither. */
export function compareValues(field: unknown, value: unknown): number | undefined {
  // Whole numbers too long for a double (18-19 digit snowflake ids, as text): exactly, by length then digits.
  if (typeof field === 'string' && typeof value === 'string' && /^\d{16,}$/.test(field) && /^\d{16,}$/.test(value))
    return field.length !== value.length ? field.length - value.length : field < value ? -1 : field > value ? 1 : 0;
  const num = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN);
  const [a, b] = [num(field), num(value)];
  if (!Number.isNaN(a) && !Number.isNaN(b)) return a - b;
  const [x, y] = [timeOf(String(field)), timeOf(String(value))];
  return Number.isNaN(x) || Number.isNaN(y) ? undefined : x - y;
}

/** Date.parse, remembered: a list filtered by time compares every record's field on every request. */
const times = new Map<string, number>();
function timeOf(s: string): number {
  let t = times.get(s);
  if (t === undefined) {
    if (times.size >= 500_000) times.clear();
    t = Date.parse(s);
    times.set(s, t);
  }
  return t;
}

/**
 * A list's query as filters: `[name, value, field]`, the params the list handles itself left out. A
 * deepObject of filters (`search[email]=...&search[updated_min]=...`) is one filter per
 * key, named `search[email]` (the sidecar's `filters` key) and reading the record field of its key;
 * a range (`created[gte]`) stays one value.
 */
function filterEntries(query: Record<string, unknown>, handled: Set<string | undefined>): [string, unknown, string][] {
  const isRange = (v: Record<string, unknown>): boolean => Object.keys(v).every((k) => ['gt', 'gte', 'lt', 'lte'].includes(k));
  return Object.entries(query)
    .filter(([name]) => !handled.has(name))
    .flatMap(([name, value]): [string, unknown, string][] =>
      isPlainObject(value) && Object.keys(value).length > 0 && !isRange(value)
        ? Object.entries(value).map(([k, v]): [string, unknown, string] => [`${name}[${k}]`, v, k])
        : [[name, value, name]],
    );
}
