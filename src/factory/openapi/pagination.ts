/** Pagination inferred from a list's params and response: cursor, offset, page, or a Link header. */
import { propertiesOf, type JsonSchema, type OpenApiSchema } from '../json-schema.ts';
import { bodyAt, norm, scalarFields, type Obj } from './document.ts';

const CURSOR_PARAMS = [
  'cursor',
  'startcursor',
  'startingafter',
  'after',
  'pagetoken',
  'nextpagetoken',
  'nexttoken',
  'continuation',
  'continuationtoken',
  'marker',
  'pagecursor',
  'nextcursor',
  'starttoken',
  'offset',
];
const NEXT_FIELDS = [
  'nextcursor',
  'nextpagetoken',
  'nexttoken',
  'next',
  'cursor',
  'nextoffset',
  'continuation',
  'continuationtoken',
  'nextmarker',
  'endcursor',
];
const OFFSET_PARAMS = ['offset', 'skip', 'start', 'startat', 'startindex', 'from'];
const PAGE_PARAMS = ['page', 'pagenumber', 'pageno', 'pagenum'];
export const LIMIT_PARAMS = ['limit', 'perpage', 'pagesize', 'count', 'maxresults', 'size', 'top', 'pagelimit', 'maxitems', 'max'];
const HAS_MORE = ['hasmore', 'more', 'hasnext', 'hasnextpage', 'moreavailable'];
/** Booleans saying the opposite: this is the last page (Jira's isLast). */
const IS_LAST = ['islast', 'last', 'lastpage'];

export interface BuiltParam {
  /** The manifest's name. */
  name: string;
  /** The description's name. */
  original: string;
  in: 'path' | 'query' | 'header' | 'body';
  schema: JsonSchema & { required?: boolean };
  explodeFalse?: boolean;
  /** The query key when it is not the description's name (`created[gt]`, `expand[]`: style deepObject). */
  key?: string;
  openapi?: OpenApiSchema;
}

export const isArrayParam = (p: BuiltParam): boolean =>
  p.schema['type'] === 'array' || (Array.isArray(p.schema['type']) && (p.schema['type'] as string[]).includes('array'));

/** Cursor, offset or page pagination from the list's params and its response; or a Link header. */
export function inferPagination(
  params: BuiltParam[],
  res: { schema?: OpenApiSchema; headers: string[] },
  recordsPath: string[],
  item?: OpenApiSchema,
): { pagination: Obj; meta: string; why: string } | undefined {
  // A search read by POST takes its page and page size in the body (Apollo's /contacts/search).
  const query = params.filter((p) => p.in === 'query' || p.in === 'body');
  const fields = scalarFields(res.schema).filter((f) => f.path.join('.') !== recordsPath.join('.'));
  const boolish = (f: { schema: OpenApiSchema }): boolean => f.schema['type'] === 'boolean' || f.schema['type'] === undefined;
  const more = fields.find((f) => HAS_MORE.includes(norm(f.path.at(-1)!)) && boolish(f));
  const last = more === undefined ? fields.find((f) => IS_LAST.includes(norm(f.path.at(-1)!)) && f.schema['type'] === 'boolean') : undefined;
  // A page number beside the number of pages ({pagination: {page, total_pages}}, or {page, pages}): more while page < total_pages.
  const totalPages = fields.find((f) => ['totalpages', 'pages'].includes(norm(f.path.at(-1)!)) && f.schema['type'] === 'integer');
  const pageNo =
    totalPages === undefined
      ? undefined
      : fields.find((f) => norm(f.path.at(-1)!) === 'page' && f.path.slice(0, -1).join('.') === totalPages.path.slice(0, -1).join('.'));
  // has_more as a template: the field itself, or the negation of an "is last page" flag.
  const hasMore =
    more !== undefined
      ? { path: more.path, tpl: bodyAt(more.path) }
      : last !== undefined
        ? { path: last.path, tpl: `{{not ${['body', ...last.path].join('.')}}}` }
        : pageNo !== undefined && totalPages !== undefined
          ? { path: pageNo.path, tpl: `{{lt ${['body', ...pageNo.path].join('.')} ${['body', ...totalPages.path].join('.')}}}` }
          : undefined;
  const limit = query.find((p) => LIMIT_PARAMS.includes(norm(p.original)));
  for (const p of query) {
    const n = norm(p.original);
    if (!CURSOR_PARAMS.includes(n) && !CURSOR_PARAMS.includes(norm(/\[(\w+)\]$/.exec(p.original)?.[1] ?? ''))) continue;
    const stringy = p.schema['type'] === 'string' || (Array.isArray(p.schema['type']) && (p.schema['type'] as string[]).includes('string'));
    if (n === 'offset' && !stringy) continue;
    // The response field that carries the next value: one named like the param, under a "next" parent preferably, else a next-cursor name.
    // A bracketed param (Zendesk's page[after]) also matches its inner name with "cursor" (meta.after_cursor).
    const inner = /\[(\w+)\]$/.exec(p.original)?.[1];
    const names = inner === undefined ? [n] : [n, `${norm(inner)}cursor`, norm(inner)];
    const same = names.map((name) => fields.filter((f) => norm(f.path.at(-1)!) === name)).find((list) => list.length > 0) ?? [];
    // A next-page URL (links.next, next_page_uri) is not a cursor value: followed as a URL below.
    const next =
      same.find((f) => f.path.some((s) => /next/i.test(s))) ??
      same[0] ??
      fields.find((f) => NEXT_FIELDS.includes(norm(f.path.at(-1)!)) && f.schema['type'] !== 'boolean' && !isNextUrl(f));
    if (next === undefined) {
      // Stripe: starting_after=<the last record's id> while has_more is true; no next field.
      const idField = item === undefined ? undefined : ['id', 'gid', 'uuid'].find((k) => propertiesOf(item).some(([f]) => f === k));
      if ((n === 'startingafter' || n === 'after') && hasMore && idField !== undefined) {
        const records = recordsPath.length > 0 ? `body.${recordsPath.join('.')}` : 'body';
        const lastId = `{{get (last ${records}) '${idField}'}}`;
        const cond = hasMore.tpl.slice(2, -2);
        return {
          pagination: { type: 'cursor', param: p.name, next: lastId, has_more: hasMore.tpl },
          meta: `{{when ${cond.includes(' ') ? `(${cond})` : cond} (${lastId.slice(2, -2)})}}`,
          why: `cursor: ${p.original} takes the last record's ${idField} while ${hasMore.path.join('.')} is true`,
        };
      }
      continue;
    }
    const tpl = bodyAt(next.path);
    return {
      pagination: { type: 'cursor', param: p.name, next: tpl, ...(hasMore ? { has_more: hasMore.tpl } : {}) },
      // With a has_more flag the cursor may stay set on the last page (Zendesk's meta.after_cursor): null there.
      meta: hasMore
        ? `{{when ${/\s/.test(hasMore.tpl.slice(2, -2)) ? `(${hasMore.tpl.slice(2, -2)})` : hasMore.tpl.slice(2, -2)} ${['body', ...next.path].join('.')}}}`
        : tpl,
      why: `cursor: the ${p.original} param takes the response's ${next.path.join('.')}`,
    };
  }
  // The next page's URL in the body (next_page_uri, links.next, HAL's _links.next.href):
  // followed as given, rather than counting page numbers or offsets beside it.
  const nextUrl = fields.find(isNextUrl);
  if (nextUrl !== undefined) {
    const counted = [PAGE_PARAMS, CURSOR_PARAMS, OFFSET_PARAMS]
      .map((names) => query.find((p) => names.includes(norm(p.original))))
      .find((p) => p !== undefined);
    return {
      pagination: { type: 'next_url', next: bodyAt(nextUrl.path), ...(hasMore ? { has_more: hasMore.tpl } : {}) },
      meta: '{{null}}',
      why: `next_url: the response's ${nextUrl.path.join('.')} is the next page's URL${counted ? `, followed rather than setting ${counted.original}` : ''}`,
    };
  }
  // A declared Link header is the API's own next-page URL (GitHub: page/per_page behind Link): followed as given.
  if (res.headers.some((h) => h.toLowerCase() === 'link')) {
    const page = query.find((p) => PAGE_PARAMS.includes(norm(p.original)) || OFFSET_PARAMS.includes(norm(p.original)));
    return {
      pagination: { type: 'link_header' },
      meta: '{{null}}',
      why: `the response declares a Link header (rel="next")${page ? `, followed rather than counting ${page.original}` : ''}`,
    };
  }
  const offset = query.find((p) => OFFSET_PARAMS.includes(norm(p.original)) && p.schema['type'] !== 'string');
  if (offset && limit) {
    return {
      pagination: {
        type: 'offset',
        param: offset.name,
        limit_param: limit.name,
        default_limit: defaultLimit(limit),
        ...(hasMore ? { has_more: hasMore.tpl } : {}),
      },
      meta: '{{null}}',
      why: `offset: ${offset.original} advances by the records received; ${limit.original} is the page size${hasMore ? `, while ${hasMore.path.join('.')}` : ''}`,
    };
  }
  const page = query.find((p) => PAGE_PARAMS.includes(norm(p.original)));
  if (page) {
    const start = typeof page.schema['minimum'] === 'number' && page.schema['minimum'] === 0 ? 0 : 1;
    return {
      pagination: {
        type: 'page',
        param: page.name,
        start,
        ...(limit ? { limit_param: limit.name, default_limit: defaultLimit(limit) } : {}),
        ...(hasMore ? { has_more: hasMore.tpl } : {}),
      },
      meta: '{{null}}',
      why: `page numbers from ${start} in ${page.original}${limit ? `, page size ${limit.original}` : ''}`,
    };
  }
  return undefined;
}

const URL_FORMATS = new Set(['uri', 'url', 'uri-reference', 'iri', 'iri-reference']);

/** A response field holding the next page's URL: named next (or under a next parent), and a URL by its format, its name or a links parent. */
function isNextUrl(f: { path: string[]; schema: OpenApiSchema }): boolean {
  const names = f.path.map(norm);
  const leaf = names.at(-1)!;
  if (f.schema['type'] !== undefined && f.schema['type'] !== 'string' && !(Array.isArray(f.schema['type']) && f.schema['type'].includes('string')))
    return false;
  const nexty = leaf.startsWith('next') || names.slice(0, -1).some((n) => n.startsWith('next'));
  const urlish =
    /(uri|url|link|href)$/.test(leaf) ||
    (typeof f.schema['format'] === 'string' && URL_FORMATS.has(f.schema['format'])) ||
    names.slice(0, -1).some((n) => /links?$/.test(n));
  return nexty && urlish;
}

/** The page size a request without the limit param gets: the param's default, else a guess within its bounds. */
function defaultLimit(limit: BuiltParam): number {
  const d = limit.schema['default'];
  if (typeof d === 'number' && d >= 1) return Math.floor(d);
  const max = typeof limit.schema['maximum'] === 'number' ? limit.schema['maximum'] : undefined;
  return max !== undefined ? Math.min(max, 20) : 20;
}
