/**
 * One page of a list as the operation answers it: the page in the body's array (or a bare array
 * with a Link header), the next cursor, URL, has-more and total where the schema or the sidecar's
 * pagination has room for them.
 */
import { decodeCursor as decodeToken, encodeCursor as encodeToken } from '../core/cursors.ts';
import { getPath, idAt, isPlainObject, setPath } from '../core/values.ts';
import type { Json, Operation } from '../description.ts';
import { included, listItemFields, pick } from '../record-views.ts';
import { fill } from '../rules.ts';
import type { Pagination } from '../sidecar.ts';
import type { SimRequest, SimResponse } from '../sim-server.ts';
import type { ErrorAnswers } from './errors.ts';
import { listKeyOf, nextCursorPath, propertiesOf } from './schema.ts';
import type { OpenApiContext } from './types.ts';

export interface PageRequest {
  cursorParam: string | undefined;
  cursor: unknown;
  offset: number;
  numericCursor: boolean;
  limit: number;
  /** The request gave its page size: else a cursor's own (the one it was issued with) applies. */
  limitGiven?: boolean;
  limitParam: string | undefined;
  pageParam: string | undefined;
  page: number;
  nextPath: string | undefined;
  pag: Pagination;
}

export type PageOf = (op: Operation, resource: string, all: Json[], p: PageRequest, origin: string, req: SimRequest) => SimResponse;

export function pager(ctx: OpenApiContext, errors: ErrorAnswers): PageOf {
  const { d, sidecar, resources, sample } = ctx;
  const { errorResponse } = errors;
  /** One page of `rows` as the operation answers it: the page in the body's array, the next cursor where the schema has room. */
  const pageOf = (op: Operation, resource: string, all: Json[], p: PageRequest, origin: string, req: SimRequest): SimResponse => {
    const { cursorParam, numericCursor, limitParam, pageParam, page, pag } = p;
    let limit = p.limit;
    const rows = all.map((record) => ({ record }));
    const schema = d.schemaAt(op.responseRef);
    const r = resources.get(resource);
    const key = listKeyOf(d, schema, resource, Object.keys(propertiesOf(d, d.schemaAt(r?.recordRef))));
    let offset = p.offset;
    if (p.cursor !== undefined && p.cursor !== '') {
      const t = numericCursor ? { offset: Number(p.cursor), after: undefined } : decodeToken(String(p.cursor));
      if (t === undefined || !Number.isInteger(t.offset) || t.offset < 0)
        return errorResponse(
          { status: 400, code: 'invalid', message: `${cursorParam ?? 'cursor'} is not a cursor this API issued`, field: cursorParam ?? 'cursor' },
          op,
        );
      // A cursor continues with the page size it was issued with unless the request gives one (a listing's cursor keeps its arguments).
      if (!numericCursor && 'limit' in t && t.limit !== undefined && p.limitGiven !== true) limit = t.limit;
      // Start after the record the token names while it is listed, so records added or removed meanwhile shift nothing.
      const at = t.after === undefined || r === undefined ? -1 : all.findIndex((x) => idAt(x, r.idField) === t.after);
      offset = at >= 0 ? at + 1 : t.offset;
    }
    // Items cut to the list's own item schema, and without the fields only an include parameter asks for.
    const shown = listItemFields(d, op.responseRef, key, r?.recordRef);
    const include = sidecar.resources?.[resource]?.include;
    // operations.<op>.item: each record as another API's view of it (a file store's listing of documents).
    const view = sidecar.operations?.[op.key]?.item;
    const slice = rows
      .slice(offset, offset + limit)
      .map((s) =>
        view !== undefined ? (fill(view, s.record) as Json) : pick(included(s.record, include, Object.fromEntries(new URLSearchParams(req.query))), shown),
      );
    const more = offset + slice.length < rows.length;
    const lastKey = r === undefined ? undefined : idAt(rows[offset + slice.length - 1]?.record, r.idField);
    if (key === '') {
      // A bare array: the next page is a Link header, the request's own query with the cursor or page advanced.
      const nextParam = cursorParam ?? pageParam;
      if (!more || nextParam === undefined) return { status: op.successStatus, json: slice };
      const q = new URLSearchParams(req.query);
      q.set(nextParam, cursorParam !== undefined ? String(numericCursor ? offset + limit : encodeToken(offset + limit, lastKey, limit)) : String(page + 1));
      return { status: op.successStatus, json: slice, headers: { link: `<${origin}${req.path}?${q.toString()}>; rel="next"` } };
    }
    const body = (sample(op.responseRef) ?? {}) as Json;
    if (key !== undefined) setPath(body, key, slice);
    // Another list of records of the same kind beside it (an envelope's carbonCopies beside its signers) is no sample placeholder: empty.
    const fields = new Set(Object.keys(propertiesOf(d, d.schemaAt(r?.recordRef))));
    for (const [k, v] of Object.entries(body)) {
      const item = Array.isArray(v) ? (v[0] as Json | undefined) : undefined;
      if (k !== key && item !== null && typeof item === 'object' && Object.keys(item).filter((f) => fields.has(f)).length >= 3) body[k] = [];
    }
    // A numeric cursor (startAt) is echoed by the field of its name, not a next cursor: the page's
    // own position, size, total and whether it is the last (e.g. {startAt, maxResults, total, isLast}).
    if (numericCursor && cursorParam !== undefined && typeof body[cursorParam] === 'number') body[cursorParam] = offset;
    if (limitParam !== undefined && typeof body[limitParam] === 'number') body[limitParam] = limit;
    if (typeof body.total === 'number') body.total = rows.length;
    if (typeof body.isLast === 'boolean') body.isLast = !more;
    if (typeof body.is_last === 'boolean') body.is_last = !more;
    if (typeof body.nextPage === 'string') {
      if (more && cursorParam !== undefined) {
        const q = new URLSearchParams(req.query);
        q.set(cursorParam, String(numericCursor ? offset + limit : encodeToken(offset + limit, lastKey, limit)));
        body.nextPage = `${origin}${req.path}?${q.toString()}`;
      } else delete body.nextPage;
    }
    const nextPath = p.nextPath ?? (cursorParam === undefined ? undefined : nextCursorPath(d, schema, numericCursor ? '' : cursorParam));
    if (nextPath !== undefined) {
      const top = nextPath.split('.')[0] as string;
      if (more) {
        const token = numericCursor ? offset + limit : encodeToken(offset + limit, lastKey, limit);
        setPath(body, nextPath, token);
        // Fill sibling link fields of the cursor (Asana's next_page: {offset, path, uri}, a vendor's paging.next: {after, link}).
        const holderPath = nextPath.split('.').slice(0, -1);
        let holder: Json = body;
        for (const p of holderPath) holder = holder[p] as Json;
        const q = new URLSearchParams(req.query);
        q.set(cursorParam ?? 'cursor', String(token));
        if ('path' in holder) holder.path = `${req.path}?${q.toString()}`;
        if ('uri' in holder) holder.uri = `${origin}${req.path}?${q.toString()}`;
        if ('link' in holder) holder.link = `${origin}${req.path}?${q.toString()}`;
      } else if (pag.cursor_at_end === true && !numericCursor) setPath(body, nextPath, encodeToken(offset + slice.length, lastKey, limit));
      else if (pag.last_cursor !== undefined) setPath(body, nextPath, pag.last_cursor);
      else {
        // Null the cursor's "next" holder (Asana's next_page, a vendor's pages.next), else the cursor
        // itself: siblings such as a vendor's meta.has_more stay.
        const parts = nextPath.split('.');
        const holder = parts.slice(0, -1).findIndex((p) => /next/i.test(p));
        setPath(body, holder === -1 ? nextPath : parts.slice(0, holder + 1).join('.'), null);
        // A holder left with nothing but nulls that the schema does not let be null goes (a vendor's
        // paging is absent on the last page).
        const topValue = body[top];
        if (
          parts.length > 1 &&
          isPlainObject(topValue) &&
          Object.values(topValue).every((v) => v === null) &&
          d.resolve(propertiesOf(d, schema)[top] ?? {}).nullable !== true
        )
          delete body[top];
      }
    }
    if (pag.next_url !== undefined) {
      // The next page's URL: the same query with the next cursor (an export's start time stays: the cursor is an offset into what it selects).
      const q = new URLSearchParams(req.query);
      q.set(cursorParam ?? 'cursor', String(numericCursor ? offset + limit : encodeToken(offset + limit, lastKey, limit)));
      setPath(body, pag.next_url, more ? `${origin}${req.path}?${q.toString()}` : null);
    }
    if (pag.has_more !== undefined) setPath(body, pag.has_more, more);
    if (pag.done !== undefined) setPath(body, pag.done, !more);
    if ('has_more' in body) body.has_more = more;
    for (const total of ['total_count', 'total', 'total_results']) if (total in body && typeof body[total] === 'number') body[total] = rows.length;
    pageCounts(key !== undefined && key.includes('.') ? getPath(body, key.split('.').slice(0, -1).join('.')) : body, body, p, rows.length);
    return { status: op.successStatus, json: body };
  };
  return pageOf;
}

/**
 * The page's own numbers where the list's records sit: the page number, how many pages there are
 * (`pages`, `total_pages`), and beside a list nested in envelopes (`{response: {result:
 * {clients, page, pages, per_page, total}}}`) its page size and total too.
 */
function pageCounts(holder: unknown, body: Json, p: PageRequest, count: number): void {
  if (!isPlainObject(holder)) return;
  if (p.pageParam !== undefined && typeof holder[p.pageParam] === 'number') holder[p.pageParam] = p.page;
  if (p.pageParam !== undefined) for (const k of ['pages', 'total_pages']) if (typeof holder[k] === 'number') holder[k] = Math.ceil(count / p.limit);
  if (holder === body) return;
  if (p.limitParam !== undefined && typeof holder[p.limitParam] === 'number') holder[p.limitParam] = p.limit;
  for (const total of ['total_count', 'total', 'total_results']) if (typeof holder[total] === 'number') holder[total] = count;
}
