/**
 * Pagination strategies: pure functions from one page (its params, records and response) to the
 * request for the next page, or null when the iteration is over.
 */
import type { Pagination } from '../../generated/manifest.ts';
import { SwitchboardError } from '../errors/index.ts';
import { truthy, type Template, type TemplateContext } from '../templates/index.ts';

export interface PageResult {
  params: Record<string, unknown>;
  records: unknown[];
  /** Template context of the response: body, headers, params, status. */
  ctx: TemplateContext;
  headers: Pick<Headers, 'get'>;
}

/** The next request: new params, or (link headers) an absolute URL to fetch as is. */
export type NextPage = { params: Record<string, unknown>; url?: string } | null;

export interface CompiledPagination {
  def: Pagination;
  next?: Template;
  hasMore?: Template;
}

/** State kept across pages to detect an upstream that loops. */
export class PageTracker {
  private readonly seen = new Set<string>();
  /** Record a cursor/URL; throws pagination_loop when it was seen before. */
  visit(key: string): void {
    if (this.seen.has(key)) {
      throw new SwitchboardError('pagination_loop', `The upstream returned the same page cursor twice (${key.slice(0, 80)}); stopping instead of looping`, {
        details: { cursor: key },
      });
    }
    this.seen.add(key);
  }
}

function parseLinkNext(link: string | null): string | undefined {
  if (link === null) return undefined;
  // RFC 8288: <url>; rel="next", possibly among several comma-separated links.
  for (const part of link.split(/,\s*(?=<)/)) {
    const m = /^<([^>]*)>\s*;(.*)$/.exec(part.trim());
    if (m && /rel="?([^";]*\s)?next(\s[^";]*)?"?/i.test(m[2] ?? '')) return m[1];
  }
  return undefined;
}

/** Compute the next page request from a page just received. */
export function nextPage(p: CompiledPagination, page: PageResult, tracker: PageTracker): NextPage {
  const def = p.def;
  const hasMore = p.hasMore?.render(page.ctx);
  if (p.hasMore !== undefined && hasMore !== undefined && hasMore !== null && !truthy(hasMore)) return null;
  switch (def.type) {
    case 'cursor':
    case 'graphql_cursor': {
      const next = p.next?.render(page.ctx);
      if (next === undefined || next === null || next === '') return null;
      const key = typeof next === 'string' ? next : JSON.stringify(next);
      tracker.visit(key);
      return { params: { ...page.params, [def.param]: next } };
    }
    case 'page': {
      if (page.records.length === 0) return null;
      // With the page size known, a short page is the last one: no extra call for an empty page
      // (monday's daily call limits are 200-1,000 on low plans).
      if (def.limit_param !== undefined) {
        const limit = Number(page.params[def.limit_param] ?? def.default_limit ?? 0);
        if (limit > 0 && page.records.length < limit) return null;
      }
      const current = Number(page.params[def.param] ?? def.start ?? 1);
      return { params: { ...page.params, [def.param]: current + 1 } };
    }
    case 'offset': {
      const limit = Number(page.params[def.limit_param] ?? def.default_limit ?? 0);
      if (page.records.length === 0 || (limit > 0 && page.records.length < limit)) return null;
      const offset = Number(page.params[def.param] ?? 0);
      return { params: { ...page.params, [def.param]: offset + page.records.length } };
    }
    case 'scroll': {
      // A scroll token repeats by design (no loop check); the empty page ends the scroll.
      if (page.records.length === 0) return null;
      const next = p.next?.render(page.ctx);
      if (next === undefined || next === null || next === '') return null;
      return { params: { ...page.params, [def.param]: next } };
    }
    case 'next_url': {
      const next = p.next?.render(page.ctx);
      if (next === undefined || next === null || next === '') return null;
      const url = String(next);
      tracker.visit(url);
      return { params: page.params, url };
    }
    case 'link_header': {
      const url = parseLinkNext(page.headers.get('link'));
      if (url === undefined) return null;
      tracker.visit(url);
      return { params: page.params, url };
    }
  }
}
