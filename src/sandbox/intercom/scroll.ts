/**
 * Intercom's company Scroll API (GET /companies/scroll, scrollOverAllCompanies), as its 2.14
 * description states it:
 * - "Each app can only have 1 scroll open at a time. You'll get an error message if you try to
 *   have more than one open per app."
 * - "If the scroll isn't used for 1 minute, it expires and calls with that scroll param will fail"
 * - "If the end of the scroll is reached, "companies" will be empty and the scroll parameter will
 *   expire"
 * - The first page is a GET without scroll_param; every later one sends the scroll_param of the
 *   response (the same value for the whole scroll). Pages carry `pages: null, total_count: null`
 *   like the description's example. Unlike the page-numbered list, the scroll reaches every
 *   company, past 10,000 and including companies without users.
 */
import { randomUUID } from 'node:crypto';
import { SearchQueryError } from './search.ts';

/** Companies per scroll page (the description does not say; the list's largest page is 60). */
export const SCROLL_PAGE_SIZE = 50;
/** An unused scroll expires after a minute. */
export const SCROLL_IDLE_MS = 60_000;

interface OpenScroll {
  param: string;
  position: number;
  lastUsed: number;
}

/** The app's one scroll; `now` is injectable so tests can expire it without waiting. */
export class CompanyScroll {
  private open: OpenScroll | undefined;
  /** Scrolls started so far (tests count them). */
  started = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** The next slice [start, end) of `total` companies for a request, and the scroll_param to return. */
  next(scrollParam: string | undefined, total: number): { start: number; end: number; param: string } {
    const t = this.now();
    if (this.open !== undefined && t - this.open.lastUsed > SCROLL_IDLE_MS) this.open = undefined;
    let s: OpenScroll;
    if (scrollParam === undefined || scrollParam === '') {
      if (this.open !== undefined) throw new SearchQueryError('bad_request', 'scroll already exists for this workspace. Please complete the scroll or wait for it to expire after 1 minute');
      s = { param: randomUUID(), position: 0, lastUsed: t };
      this.open = s;
      this.started++;
    } else {
      if (this.open === undefined || this.open.param !== scrollParam) throw new SearchQueryError('parameter_invalid', 'scroll_param is invalid or has expired; start a new scroll');
      s = this.open;
    }
    const start = s.position;
    const end = Math.min(total, start + SCROLL_PAGE_SIZE);
    s.position = end;
    s.lastUsed = t;
    // The empty page ends the scroll and expires its parameter.
    if (start >= total) this.open = undefined;
    return { start, end, param: s.param };
  }

  /** Drop the open scroll (simulator reset). */
  reset(): void {
    this.open = undefined;
  }
}
