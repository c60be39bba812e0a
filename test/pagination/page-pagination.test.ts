/** Page-number and offset pagination: when the page size is known, a short page is the last one; has_more false ends too. */
import { describe, expect, it } from 'vitest';
import { nextPage, PageTracker, type CompiledPagination } from '../../src/pagination/index.ts';

const pg = (def: Record<string, unknown>): CompiledPagination => ({ def: { type: 'page', param: 'page', ...def } as never });
const page = (params: Record<string, unknown>, n: number) => ({
  params,
  records: Array.from({ length: n }, (_, i) => ({ id: i })),
  ctx: {},
  headers: new Headers(),
});

describe('page pagination', () => {
  it.each([
    ['without limit_param, a full or short page asks for the next one', {}, { page: 1, limit: 10 }, 4, { page: 2, limit: 10 }],
    ['without limit_param, an empty page ends', {}, { page: 3, limit: 10 }, 0, null],
    ['with limit_param, a short page ends (no call for an empty page)', { limit_param: 'limit' }, { page: 2, limit: 10 }, 9, null],
    ['with limit_param, a full page asks for the next one', { limit_param: 'limit' }, { page: 2, limit: 10 }, 10, { page: 3, limit: 10 }],
    ['with limit_param absent from params, default_limit is the page size', { limit_param: 'limit', default_limit: 25 }, { page: 1 }, 24, null],
    ['with limit_param absent and no default_limit, only an empty page ends', { limit_param: 'limit' }, { page: 1 }, 24, { page: 2 }],
  ])('%s', (_name, def, params, n, want) => {
    const next = nextPage(pg(def), page(params, n), new PageTracker());
    expect(next === null ? null : next.params).toEqual(want);
  });
});

describe('offset pagination', () => {
  const off = (def: Record<string, unknown>, hasMore?: boolean): CompiledPagination => ({
    def: { type: 'offset', param: 'skip', limit_param: 'limit', ...def } as never,
    ...(hasMore === undefined ? {} : { hasMore: { render: () => hasMore } as never }),
  });
  it.each([
    ['a full page asks for the records after it', {}, undefined, { skip: 0, limit: 10 }, 10, { skip: 10, limit: 10 }],
    ['a short page ends', {}, undefined, { skip: 10, limit: 10 }, 4, null],
    ['has_more false ends a full page (no call for an empty page)', { has_more: '{{body.has_more}}' }, false, { skip: 0, limit: 10 }, 10, null],
    ['has_more true goes on', { has_more: '{{body.has_more}}' }, true, { skip: 0, limit: 10 }, 10, { skip: 10, limit: 10 }],
  ])('%s', (_name, def, hasMore, params, n, want) => {
    const next = nextPage(off(def, hasMore), page(params, n), new PageTracker());
    expect(next === null ? null : next.params).toEqual(want);
  });
});
