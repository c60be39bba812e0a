/**
 * Intercom REST API 2.14 simulator (https://api.intercom.io): a stateful in-memory fake of the
 * endpoints behind the customer-messaging connector — contacts, conversations, companies, teams,
 * admins, tags, notes, segments and internal articles — plus GET /me and Intercom's OAuth flow
 * (GET /oauth on app.intercom.com, POST /auth/eagle/token on the API host).
 *
 * Fidelity follows Intercom's OpenAPI description 2.14 (extracted into openapi-2.14.json):
 * paths, methods, query params, response shapes and error.list bodies with its statuses and
 * codes; request bodies and query params are validated against its schemas (validate.ts).
 * Every response carries X-RateLimit-Limit/Remaining/Reset (Unix seconds); a fixed window is
 * counted like Intercom's ("distributed over 10 second periods") and 429 answers when it is
 * spent. Requests naming another valid Intercom-Version are answered with 2.14 shapes.
 *
 * Faults (5xx, latency, malformed bodies, injected 429s) come from the shared sim-server `inject`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { parseJson, startSimulator, type SimRequest, type SimResponse, type Simulator } from '../sim-server.ts';
import { DEFAULT_ANCHOR, IntercomApiError, IntercomStore, type ContactRow, type ConversationRow, type Json, type Table } from './state.ts';
import { hasBody, OPENAPI, validateBody, validateQuery, validPath, type ParamError } from './validate.ts';
import { CompanyScroll } from './scroll.ts';
import { SearchQueryError, searchPage } from './search.ts';

export { IntercomStore, IntercomApiError, CONTACT_DATA_ATTRIBUTES, DEFAULT_ANCHOR } from './state.ts';
export type { AdminRecord, CompanyRow, ContactRow, ConversationRow, InternalArticleRecord, NoteRecord, SegmentRecord, TagRecord, TeamRecord } from './state.ts';
export { OPENAPI } from './validate.ts';
export { CompanyScroll, SCROLL_PAGE_SIZE } from './scroll.ts';

export interface IntercomRateLimit {
  /** Requests allowed per window. */
  limit: number;
  /** Window length; Intercom counts in 10-second periods. */
  windowSeconds: number;
}

/** Intercom's documented default for private apps: 10,000 calls a minute, counted per 10 s. */
export const INTERCOM_DOCUMENTED_RATE_LIMIT: IntercomRateLimit = { limit: 1666, windowSeconds: 10 };

export interface IntercomSimulatorOptions {
  port?: number | undefined;
  host?: string | undefined;
  /** PRNG seed: the same seed always yields the same workspace. Default 1. */
  seed?: number | undefined;
  /** Seeded contacts (companies ≈ size/5, conversations ≈ size/2, notes ≈ 0.3·size); default 300, at most 100 000. */
  size?: number | undefined;
  /**
   * Requests per window (all tokens share the app's budget); `false` disables limiting. The
   * default is far above any test's needs; INTERCOM_DOCUMENTED_RATE_LIMIT mimics production.
   */
  rateLimit?: IntercomRateLimit | false | undefined;
  /** The access token the API accepts; default 'sim_intercom_token'. */
  accessToken?: string | undefined;
  /** The OAuth app the simulated OAuth flow accepts. */
  oauth?: { clientId?: string | undefined; clientSecret?: string | undefined } | undefined;
  /** Unix seconds (or a Date) the seeded data ends at; fixed by default so data never depends on the clock. */
  anchor?: number | Date | undefined;
}

export interface IntercomSimulator extends Simulator {
  /** A valid access token (`Authorization: Bearer <accessToken>`). */
  accessToken: string;
  /** The OAuth client the flow accepts; set `deny` to make GET /oauth answer error=access_denied. */
  oauth: { clientId: string; clientSecret: string; deny: boolean };
  /** Every token the API accepts: accessToken plus those issued through OAuth (delete one to revoke it). */
  tokens: Set<string>;
  seed: number;
  /** The in-memory workspace (records, render functions, mutations). */
  state: IntercomStore;
  /** Change (or disable) the rate limit; starts a fresh window. */
  setRateLimit(limit: IntercomRateLimit | false): void;
  /** Start a fresh rate-limit window (also done by reset()). */
  resetRateLimit(): void;
  /** The app's company scroll (GET /companies/scroll): one open at a time. */
  scroll: CompanyScroll;
}

const DEFAULT_RATE_LIMIT: IntercomRateLimit = { limit: 1_000_000, windowSeconds: 10 };
const CURSOR_PER_PAGE = { contacts: 50, conversations: 20 } as const;
/** Page-numbered lists (companies) default to 15 per page (per_page above 60 is refused by the schema). */
const COMPANIES_PER_PAGE = 15;
/**
 * "When using the Companies endpoint and the pages object to iterate through the returned
 * companies, there is a limit of 10,000 Companies that can be returned" (listAllCompanies);
 * its later reference adds "Going past that limit returns a 400 error with code bad_request".
 */
const COMPANIES_PAGE_LIMIT = 10_000;

/** Intercom's error body: `{type: "error.list", request_id, errors: [{code, message}]}`. */
function errorList(status: number, code: string, message: string, extra: { field?: string; headers?: Record<string, string> } = {}): SimResponse {
  return {
    status,
    ...(extra.headers ? { headers: extra.headers } : {}),
    json: { type: 'error.list', request_id: randomUUID(), errors: [{ code, message, ...(extra.field !== undefined ? { field: extra.field } : {}) }] },
  };
}

const paramError = (e: ParamError): SimResponse => errorList(400, e.code, e.message, e.field !== undefined ? { field: e.field } : {});

const ok = (json: unknown): SimResponse => ({ status: 200, json });

// ------------------------------------------------------------------ cursors

/**
 * Cursor lists (contacts, conversations) page with `starting_after`, an opaque cursor. Intercom's
 * are base64 of `[created_at in ms, last id, next page number]` (its pagination guide shows
 * `WzE3MDc5MzQ2NTUwMDAsIjY1YzNhYTBjNTFkY2RmOTQyZmEyYjljNyIsMl0=`); ours have the same form.
 */
function encodeCursor(createdAt: number, id: string, page: number): string {
  return Buffer.from(JSON.stringify([createdAt * 1000, id, page])).toString('base64');
}

function decodeCursor(s: string): { id: string; page: number } | undefined {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 3 && typeof v[0] === 'number' && typeof v[1] === 'string' && Number.isInteger(v[2]) && (v[2] as number) >= 1) return { id: v[1], page: v[2] as number };
  } catch {
    // not one of ours
  }
  return undefined;
}

/** One page of a cursor list, newest first. */
function cursorPage<R extends { id: string; created_at: number }>(
  table: Table<R>,
  perPage: number,
  startingAfter: string | undefined,
): { rows: R[]; pages: Json } | ParamError {
  let end = table.size; // exclusive, in insertion (oldest-first) order; pages walk it backwards
  let page = 1;
  if (startingAfter !== undefined) {
    const c = decodeCursor(startingAfter);
    const pos = c === undefined ? -1 : table.position(c.id);
    if (c === undefined || pos < 0) return { code: 'parameter_invalid', message: 'starting_after is invalid', field: 'starting_after' };
    end = pos;
    page = c.page;
  }
  const rows = table.rows.slice(Math.max(0, end - perPage), end).reverse();
  const pages: Json = { type: 'pages', page, per_page: perPage, total_pages: Math.ceil(table.size / perPage) };
  const last = rows[rows.length - 1];
  // The last page has no `next` (OpenAPI 2.14 list examples).
  if (last !== undefined && end - rows.length > 0) pages.next = { page: page + 1, starting_after: encodeCursor(last.created_at, last.id, page + 1), per_page: perPage };
  return { rows, pages };
}

// ------------------------------------------------------------------ routing

interface Ctx {
  req: SimRequest;
  params: Record<string, string>;
  query: Json;
  body: Json;
  /** scheme://host of this request, for `pages.next` links. */
  origin: string;
}

interface Route {
  method: string;
  /** Path segments; `:name` captures one. */
  segments: string[];
  /** Key into the OpenAPI extract ("GET /contacts/{contact_id}"). */
  op: string;
  /** The 404 a get answers for a missing (or malformed) id, as the description's examples show. */
  notFound?: [code: string, message: string];
  handle: (ctx: Ctx) => SimResponse;
}

function route(method: string, path: string, handle: Route['handle'], notFound?: Route['notFound']): Route {
  const openapiPath = path.replace(/:([a-z_]+)/g, '{$1}');
  return { method, segments: path.split('/').filter((s) => s !== ''), op: `${method} ${openapiPath}`, handle, ...(notFound ? { notFound } : {}) };
}

function match(r: Route, req: SimRequest): Record<string, string> | undefined {
  if (r.segments.length !== req.segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < r.segments.length; i++) {
    const want = r.segments[i] as string;
    const got = req.segments[i] as string;
    if (want.startsWith(':')) params[want.slice(1)] = got;
    else if (want !== got) return undefined;
  }
  return params;
}

const NOT_FOUND: [string, string] = ['not_found', 'Resource Not Found'];
const USER_NOT_FOUND: [string, string] = ['not_found', 'User Not Found'];
const COMPANY_NOT_FOUND: [string, string] = ['company_not_found', 'Company Not Found'];

function buildRoutes(store: IntercomStore, scroll: CompanyScroll): Route[] {
  const found = <R>(table: Table<R & { id: string }>, id: string | undefined, nf: [string, string]): R => {
    const row = id === undefined ? undefined : table.get(id);
    if (row === undefined) throw new IntercomApiError(404, nf[0], nf[1]);
    return row;
  };
  const perPage = (q: Json, dflt: number): number => (typeof q.per_page === 'number' ? q.per_page : dflt);

  const listContacts = ({ query }: Ctx): SimResponse => {
    const page = cursorPage(store.contacts, perPage(query, CURSOR_PER_PAGE.contacts), query.starting_after as string | undefined);
    if ('code' in page) return paramError(page);
    return ok({ type: 'list', data: page.rows.map((r: ContactRow) => store.renderContact(r)), total_count: store.contacts.size, pages: page.pages });
  };

  const listConversations = ({ query }: Ctx): SimResponse => {
    const page = cursorPage(store.conversations, perPage(query, CURSOR_PER_PAGE.conversations), query.starting_after as string | undefined);
    if ('code' in page) return paramError(page);
    return ok({ type: 'conversation.list', pages: page.pages, total_count: store.conversations.size, conversations: page.rows.map((r: ConversationRow) => store.renderConversation(r)) });
  };

  /** Page-numbered company lists; `next` links the following page, null on the last one. */
  const companyPage = (ctx: Ctx, rows: ReturnType<IntercomStore['listedCompanyRows']>, path: string): SimResponse => {
    const size = Math.max(1, perPage(ctx.query, COMPANIES_PER_PAGE));
    const page = typeof ctx.query.page === 'number' && ctx.query.page >= 1 ? ctx.query.page : 1;
    if ((page - 1) * size >= COMPANIES_PAGE_LIMIT) {
      return errorList(400, 'bad_request', `Paging is limited to the first ${COMPANIES_PAGE_LIMIT} companies; use the Scroll API (GET /companies/scroll) to iterate over more`);
    }
    const totalPages = Math.ceil(rows.length / size);
    const slice = rows.slice((page - 1) * size, page * size);
    const next = page < totalPages ? `${ctx.origin}${path}?page=${page + 1}&per_page=${size}` : null;
    return ok({
      type: 'list',
      data: slice.map((r) => store.renderCompany(r)),
      pages: { type: 'pages', next, page, per_page: size, total_pages: totalPages },
      total_count: rows.length,
    });
  };

  const order = (q: Json): 'asc' | 'desc' => (q.order === 'asc' ? 'asc' : 'desc');

  /** POST /contacts/search, POST /conversations/search (SearchContacts, searchConversations). */
  const searchContacts = ({ body }: Ctx): SimResponse => {
    const page = searchPage(store.contacts.rows.map((r) => store.renderContact(r)), body);
    return ok({ type: 'list', data: page.rows, total_count: page.total, pages: page.pages });
  };
  const searchConversations = ({ body }: Ctx): SimResponse => {
    const page = searchPage(store.conversations.rows.map((r) => store.renderConversation(r)), body);
    return ok({ type: 'conversation.list', pages: page.pages, total_count: page.total, conversations: page.rows });
  };
  /** GET /companies/scroll (scrollOverAllCompanies): every company, one scroll per app at a time. */
  const scrollCompanies = ({ query }: Ctx): SimResponse => {
    const rows = store.companies.rows;
    const slice = scroll.next(typeof query.scroll_param === 'string' ? query.scroll_param : undefined, rows.length);
    return ok({ type: 'list', data: rows.slice(slice.start, slice.end).map((r) => store.renderCompany(r)), pages: null, total_count: null, scroll_param: slice.param });
  };

  return [
    route('GET', '/me', () => ok(store.renderMe())),

    route('GET', '/contacts', listContacts),
    route('POST', '/contacts/search', searchContacts),
    route('POST', '/contacts', ({ body }) => ok(store.renderContact(store.createContact(body), { detail: true }))),
    route('GET', '/contacts/:contact_id', ({ params }) => ok(store.renderContact(found(store.contacts, params.contact_id, USER_NOT_FOUND), { detail: true })), USER_NOT_FOUND),
    route('PUT', '/contacts/:contact_id', ({ params, body }) => ok(store.renderContact(store.updateContact(params.contact_id as string, body), { detail: true })), USER_NOT_FOUND),
    route(
      'GET',
      '/contacts/:contact_id/notes',
      ({ params }) => {
        const contact = found(store.contacts, params.contact_id, USER_NOT_FOUND);
        const notes = [...contact.noteIds].reverse().map((id) => store.renderNote(found(store.notes, id, NOT_FOUND)));
        return ok({ type: 'list', data: notes, total_count: notes.length, pages: { type: 'pages', next: null, page: 1, per_page: Math.max(50, notes.length), total_pages: 1 } });
      },
      USER_NOT_FOUND,
    ),
    route('POST', '/contacts/:contact_id/notes', ({ params, body }) => ok(store.renderNote(store.createNote(params.contact_id as string, body as { body: string; admin_id?: string | number }))), USER_NOT_FOUND),
    route('GET', '/notes/:note_id', ({ params }) => ok(store.renderNote(found(store.notes, params.note_id, NOT_FOUND))), NOT_FOUND),

    route('GET', '/conversations', listConversations),
    route('POST', '/conversations/search', searchConversations),
    route(
      'GET',
      '/conversations/:conversation_id',
      ({ params, query }) => ok(store.renderConversation(found(store.conversations, params.conversation_id, NOT_FOUND), { parts: true, plaintext: query.display_as === 'plaintext' })),
      NOT_FOUND,
    ),

    route('GET', '/companies', (ctx) => {
      const q = ctx.query;
      // "You can fetch a single company by passing in company_id or name", or filter by tag/segment.
      if (typeof q.company_id === 'string') {
        const row = store.findCompanyByCompanyId(q.company_id);
        if (row === undefined) return errorList(404, ...COMPANY_NOT_FOUND);
        return companyPage(ctx, [row], '/companies');
      }
      if (typeof q.name === 'string') {
        const rows = store.companies.rows.filter((r) => store.renderCompany(r).name === q.name);
        if (rows.length === 0) return errorList(404, ...COMPANY_NOT_FOUND);
        return companyPage(ctx, rows, '/companies');
      }
      if (typeof q.tag_id === 'string') return companyPage(ctx, store.companies.rows.filter((r) => r.tagIds.includes(q.tag_id as string)), '/companies');
      if (typeof q.segment_id === 'string') return companyPage(ctx, [], '/companies'); // seeded companies belong to no company segment
      return companyPage(ctx, store.listedCompanyRows('desc'), '/companies');
    }),
    route('POST', '/companies', ({ body }) => ok(store.renderCompany(store.upsertCompany(body)))),
    route('GET', '/companies/scroll', scrollCompanies),
    route('POST', '/companies/list', (ctx) => companyPage(ctx, store.listedCompanyRows(order(ctx.query)), '/companies/list')),
    route('GET', '/companies/:company_id', ({ params }) => ok(store.renderCompany(found(store.companies, params.company_id, COMPANY_NOT_FOUND))), COMPANY_NOT_FOUND),
    route('PUT', '/companies/:company_id', ({ params, body }) => ok(store.renderCompany(store.updateCompany(params.company_id as string, body))), COMPANY_NOT_FOUND),

    route('GET', '/teams', () => ok({ type: 'team.list', teams: store.teams.rows.map((t) => store.renderTeam(t)) })),
    route('GET', '/teams/:team_id', ({ params }) => ok(store.renderTeam(found(store.teams, params.team_id, ['team_not_found', 'Team not found']))), ['team_not_found', 'Team not found']),

    route('GET', '/admins', ({ query }) => ok({ type: 'admin.list', admins: store.admins.rows.map((a) => store.renderAdmin(a, { avatar: query.display_avatar === true })) })),
    route('GET', '/admins/:admin_id', ({ params }) => ok(store.renderAdmin(found(store.admins, params.admin_id, ['admin_not_found', 'Admin not found']))), ['admin_not_found', 'Admin not found']),

    route('GET', '/tags', () => ok({ type: 'list', data: store.tags.rows.map((t) => store.renderTag(t)) })),
    route('POST', '/tags', ({ body }) => {
      const b = body as { name: string; id?: string; companies?: { id?: string; company_id?: string; untag?: boolean }[]; users?: { id?: string }[] };
      // Check the targets before creating the tag, so a 404 leaves no half-done change.
      if (b.companies !== undefined) for (const c of b.companies) if ((c.id !== undefined ? store.companies.get(c.id) : c.company_id !== undefined ? store.findCompanyByCompanyId(c.company_id) : undefined) === undefined) return errorList(404, ...COMPANY_NOT_FOUND);
      if (b.users !== undefined) for (const u of b.users) if (u.id === undefined || store.contacts.get(u.id) === undefined) return errorList(404, ...USER_NOT_FOUND);
      const tag = store.upsertTag({ name: b.name, ...(b.companies === undefined && b.users === undefined && b.id !== undefined ? { id: b.id } : {}) });
      if (b.companies !== undefined) store.tagCompanies(tag, b.companies);
      if (b.users !== undefined) store.tagContacts(tag, b.users);
      return ok(store.renderTag(tag));
    }),
    route('GET', '/tags/:tag_id', ({ params }) => ok(store.renderTag(found(store.tags, params.tag_id, NOT_FOUND))), NOT_FOUND),

    route('GET', '/segments', ({ query }) => ok({ type: 'segment.list', segments: store.segments.rows.map((s) => store.renderSegment(s, query.include_count === true)) })),
    route('GET', '/segments/:segment_id', ({ params }) => ok(store.renderSegment(found(store.segments, params.segment_id, NOT_FOUND), false)), NOT_FOUND),

    route('GET', '/internal_articles', () => {
      const data = store.internalArticles.rows.map((a) => store.renderInternalArticle(a));
      return ok({ type: 'list', pages: { type: 'pages', page: 1, per_page: Math.max(50, data.length), total_pages: 1 }, total_count: data.length, data });
    }),
    route('POST', '/internal_articles', ({ body }) => ok(store.renderInternalArticle(store.createInternalArticle(body as { title: string; body?: string; owner_id: number; author_id: number })))),
    route('GET', '/internal_articles/:internal_article_id', ({ params }) => ok(store.renderInternalArticle(found(store.internalArticles, params.internal_article_id, NOT_FOUND))), NOT_FOUND),
  ];
}

// ------------------------------------------------------------------ request plumbing

function bearer(req: SimRequest): string | undefined {
  const h = req.headers.authorization;
  const m = typeof h === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(h) : null;
  return m?.[1];
}

/** A form or JSON body as a flat object (the token endpoint takes either). */
function formOrJson(req: SimRequest): Record<string, unknown> | undefined {
  const type = String(req.headers['content-type'] ?? '');
  if (type.includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(req.rawBody));
  const json = parseJson(req.rawBody);
  return json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
}

/** Start an Intercom simulator on a loopback port. */
export async function startIntercomSimulator(options: IntercomSimulatorOptions = {}): Promise<IntercomSimulator> {
  const seed = options.seed ?? 1;
  const anchor = options.anchor === undefined ? DEFAULT_ANCHOR : options.anchor instanceof Date ? Math.floor(options.anchor.getTime() / 1000) : options.anchor;
  const store = new IntercomStore({ seed, size: options.size ?? 300, anchor });
  const accessToken = options.accessToken ?? 'sim_intercom_token';
  const tokens = new Set([accessToken]);
  const oauth = { clientId: options.oauth?.clientId ?? 'sim_intercom_client', clientSecret: options.oauth?.clientSecret ?? 'sim_intercom_secret', deny: false };
  const codes = new Map<string, { clientId: string }>();
  const scroll = new CompanyScroll();
  const routes = buildRoutes(store, scroll);
  const versions = new Set(OPENAPI.intercom_versions);

  let limit: IntercomRateLimit | false = options.rateLimit ?? DEFAULT_RATE_LIMIT;
  let windowStart = 0;
  let used = 0;
  /** Count one request; returns the rate-limit headers and whether it is over the limit. */
  const countRequest = (): { headers: Record<string, string>; exceeded: boolean } => {
    if (limit === false) return { headers: {}, exceeded: false };
    const windowMs = limit.windowSeconds * 1000;
    const now = Date.now();
    const start = Math.floor(now / windowMs) * windowMs;
    if (start !== windowStart) {
      windowStart = start;
      used = 0;
    }
    used++;
    return {
      exceeded: used > limit.limit,
      headers: {
        'X-RateLimit-Limit': String(limit.limit),
        'X-RateLimit-Remaining': String(Math.max(0, limit.limit - used)),
        'X-RateLimit-Reset': String((start + windowMs) / 1000),
      },
    };
  };

  /** GET /oauth (app.intercom.com/oauth): consent is immediate; redirects with a code, or error=access_denied. */
  const authorize = (req: SimRequest): SimResponse => {
    const clientId = req.query.get('client_id');
    const redirect = req.query.get('redirect_uri');
    const state = req.query.get('state');
    if (clientId !== oauth.clientId) return { status: 400, text: 'Unknown client_id', headers: { 'content-type': 'text/plain; charset=utf-8' } };
    let target: URL;
    try {
      target = new URL(redirect ?? '');
      if (target.protocol !== 'https:' && target.protocol !== 'http:') throw new Error('scheme');
    } catch {
      return { status: 400, text: 'redirect_uri must be an absolute http(s) URL', headers: { 'content-type': 'text/plain; charset=utf-8' } };
    }
    // The user clicking "Cancel" on the consent screen: a simulator setting or ?sim_deny=1.
    if (oauth.deny || req.query.get('sim_deny') === '1') {
      target.searchParams.set('error', 'access_denied');
    } else {
      const code = randomBytes(16).toString('hex');
      codes.set(code, { clientId });
      target.searchParams.set('code', code);
    }
    if (state !== null) target.searchParams.set('state', state);
    return { status: 302, headers: { location: target.toString() }, text: '' };
  };

  /** POST /auth/eagle/token: code → `{token_type: "Bearer", token, access_token}`; Intercom tokens never expire. */
  const exchange = (req: SimRequest): SimResponse => {
    const body = formOrJson(req) ?? {};
    let clientId = body.client_id;
    let clientSecret = body.client_secret;
    const basic = /^Basic\s+(\S+)$/i.exec(String(req.headers.authorization ?? ''));
    if (basic?.[1] !== undefined) [clientId, clientSecret] = Buffer.from(basic[1], 'base64').toString('utf8').split(':');
    if (clientId !== oauth.clientId || clientSecret !== oauth.clientSecret) return errorList(401, 'unauthorized', 'Invalid client_id or client_secret');
    const code = typeof body.code === 'string' ? codes.get(body.code) : undefined;
    if (code === undefined || code.clientId !== clientId) return errorList(400, 'parameter_invalid', 'Invalid or expired code');
    codes.delete(body.code as string);
    const token = Buffer.from(`tok:${randomUUID()}:1:0`).toString('base64');
    tokens.add(token);
    return ok({ token_type: 'Bearer', token, access_token: token });
  };

  const handle = (req: SimRequest): SimResponse => {
    if (req.path === '/oauth' && req.method === 'GET') return authorize(req);
    if (req.path === '/auth/eagle/token' && req.method === 'POST') return exchange(req);

    const rl = countRequest();
    const withHeaders = (r: SimResponse): SimResponse => ({ ...r, headers: { ...rl.headers, ...(r.headers ?? {}) } });
    const version = req.headers['intercom-version'];
    if (version !== undefined && !versions.has(String(version))) return withHeaders(errorList(400, 'intercom_version_invalid', 'The requested version could not be found'));
    const token = bearer(req);
    if (token === undefined || !tokens.has(token)) return withHeaders(errorList(401, 'unauthorized', 'Access Token Invalid'));
    if (rl.exceeded && limit !== false) return withHeaders(errorList(429, 'rate_limit_exceeded', `Exceeded rate limit of ${limit.limit} in ${limit.windowSeconds}_seconds`));

    let r: Route | undefined;
    let params: Record<string, string> | undefined;
    for (const candidate of routes) {
      params = candidate.method === req.method ? match(candidate, req) : undefined;
      if (params !== undefined) {
        r = candidate;
        break;
      }
    }
    if (r === undefined || params === undefined) return withHeaders(errorList(404, ...NOT_FOUND));
    // A malformed id (e.g. letters where the description types conversation_id as an integer) names nothing.
    if (!validPath(r.op, params)) return withHeaders(errorList(404, ...(r.notFound ?? NOT_FOUND)));
    const query = validateQuery(r.op, req.query);
    if (!query.ok) return withHeaders(paramError(query.error));
    let body: Json = {};
    if (hasBody(r.op)) {
      const parsed = req.rawBody.trim() === '' ? {} : parseJson(req.rawBody);
      if (parsed === undefined) return withHeaders(errorList(400, 'parameter_invalid', 'Request body is not valid JSON'));
      const invalid = validateBody(r.op, parsed);
      if (invalid !== null) {
        // The description's own example for POST /tags: "invalid tag parameters".
        return withHeaders(r.op === 'POST /tags' ? errorList(400, 'parameter_invalid', 'invalid tag parameters') : paramError(invalid));
      }
      body = parsed as Json;
    }
    const host = req.headers.host ?? '127.0.0.1';
    try {
      return withHeaders(r.handle({ req, params, query: query.value, body, origin: `http://${host}` }));
    } catch (e) {
      if (e instanceof IntercomApiError) return withHeaders(errorList(e.status, e.code, e.message));
      if (e instanceof SearchQueryError) return withHeaders(errorList(400, e.code, e.message));
      throw e;
    }
  };

  const sim = await startSimulator(handle, { ...(options.port !== undefined ? { port: options.port } : {}), ...(options.host !== undefined ? { host: options.host } : {}) });
  const resetRateLimit = (): void => {
    windowStart = 0;
    used = 0;
  };
  return {
    ...sim,
    accessToken,
    oauth,
    tokens,
    seed,
    state: store,
    setRateLimit: (l) => {
      limit = l;
      resetRateLimit();
    },
    resetRateLimit,
    scroll,
    reset: () => {
      sim.reset();
      resetRateLimit();
      scroll.reset();
    },
  };
}
