/**
 * Intercom REST API 2.14 simulator (https://api.intercom.io), on the generic OpenAPI simulator
 * (src/simulator): the vendored description connectors/intercom/openapi-2.14.json routes and
 * checks every request (paths, methods, query params, bodies, the Intercom-Version header, the
 * bearer token) and connectors/intercom/simulator.yaml says what the description cannot: the
 * error.list body and its codes, the 404s per id, X-RateLimit headers and the 10-second window,
 * the OAuth flow (GET /oauth, POST /auth/eagle/token).
 *
 * What stays here is the seeded workspace (state.ts, data.ts) and the state machines of the
 * operations, as handlers: contacts, conversations, companies, teams, admins, tags, notes,
 * segments and internal articles. The search query language and the one-scroll-per-app Scroll API
 * are the sidecar's `search` and `scroll` rules, over the workspace's records (`sources`).
 *
 * Faults (5xx, latency, malformed bodies, injected 429s) come from the shared sim-server `inject`.
 */
import { join } from 'node:path';
import { CONNECTORS_DIR } from '../../manifest/connectors-dir.ts';
import { Description, loadDescriptionSync } from '../../simulator/description.ts';
import { SimulatorError, startOpenApiSimulator, type OpenApiSimulator, type RateLimit, type OperationContext, type OperationHandler } from '../../simulator/openapi-simulator.ts';
import { listPage, type ListRule, type RecordSource } from '../../simulator/rules.ts';
import type { SimResponse } from '../../simulator/sim-server.ts';
import { INTERCOM_SIDECAR } from './data.ts';
import { DEFAULT_ANCHOR, IntercomStore, Table, type CompanyRow, type Json } from './state.ts';

export { IntercomStore, IntercomApiError, CONTACT_DATA_ATTRIBUTES, DEFAULT_ANCHOR } from './state.ts';
export type { AdminRecord, CompanyRow, ContactRow, ConversationRow, InternalArticleRecord, NoteRecord, SegmentRecord, TagRecord, TeamRecord } from './state.ts';

/** Intercom's trimmed 2.14 description and the simulator sidecar, vendored under connectors/intercom/. */
export { INTERCOM_SIDECAR };
export const INTERCOM_DESCRIPTION = new Description(loadDescriptionSync(join(CONNECTORS_DIR, 'intercom', 'openapi-2.14.json')));

/** Requests per window; Intercom counts in 10-second periods (the sidecar's rate_limit: its documented 1,666). */
export type IntercomRateLimit = Pick<RateLimit, 'limit' | 'window_seconds'>;

export interface IntercomSimulatorOptions {
  port?: number | undefined;
  host?: string | undefined;
  /** PRNG seed: the same seed always yields the same workspace. Default 1. */
  seed?: number | undefined;
  /** Seeded contacts (companies ≈ size/5, conversations ≈ size/2, notes ≈ 0.3·size); default 300, at most 100 000. */
  size?: number | undefined;
  /**
   * Requests per window (all tokens share the app's budget); `false` disables limiting. The
   * default is far above any test's needs; the sidecar's rate_limit is Intercom's documented one.
   */
  rateLimit?: IntercomRateLimit | false | undefined;
  /** The access token the API accepts; default 'sim_intercom_token'. */
  accessToken?: string | undefined;
  /** The OAuth app the simulated OAuth flow accepts. */
  oauth?: { clientId?: string | undefined; clientSecret?: string | undefined } | undefined;
  /** Unix seconds (or a Date) the seeded data ends at; fixed by default so data never depends on the clock. */
  anchor?: number | Date | undefined;
}

export interface IntercomSimulator extends Omit<OpenApiSimulator, 'setRateLimit'> {
  /** A valid access token (`Authorization: Bearer <accessToken>`); `tokens` holds it and those issued through OAuth. */
  accessToken: string;
  /** The in-memory workspace (records, render functions, mutations). */
  state: IntercomStore;
  /** Change (or disable) the rate limit; starts a fresh window. */
  setRateLimit(limit: IntercomRateLimit | false): void;
}

const DEFAULT_RATE_LIMIT: IntercomRateLimit = { limit: 1_000_000, window_seconds: 10 };

const ok = (json: unknown): SimResponse => ({ status: 200, json });

/** A 404 for an id: the sidecar's not_found names its code and message per path parameter. */
const missing = (param: string): SimulatorError => new SimulatorError(404, 'not_found', '', param);

// ------------------------------------------------------------------ handlers

type Ctx = OperationContext;
type Route = [key: string, handle: OperationHandler];

/** A handler for the description's operation "METHOD /path/{param}". */
const route = (method: string, path: string, handle: OperationHandler): Route => [`${method} ${path.replace(/:([a-z_]+)/g, '{$1}')}`, handle];

function buildHandlers(store: IntercomStore): Record<string, OperationHandler> {
  const found = <R>(table: Table<R & { id: string }>, id: string | undefined, param: string): R => {
    const row = id === undefined ? undefined : table.get(id);
    if (row === undefined) throw missing(param);
    return row;
  };

  /** Page-numbered company lists (the sidecar's pages rule for POST /companies/list) over given companies. */
  const companyPage = (ctx: Ctx, rows: CompanyRow[]): SimResponse =>
    ok(listPage(INTERCOM_SIDECAR.pages?.['POST /companies/list'] as ListRule, source(tableOf(rows), (r) => store.renderCompany(r)), ctx.query, undefined, { origin: ctx.origin, path: ctx.req.path }));

  const routes: Route[] = [
    route('GET', '/me', () => ok(store.renderMe())),

    route('POST', '/contacts', ({ body }) => ok(store.renderContact(store.createContact(body), { detail: true }))),
    route('GET', '/contacts/:contact_id', ({ params }) => ok(store.renderContact(found(store.contacts, params.contact_id, 'contact_id'), { detail: true }))),
    route('PUT', '/contacts/:contact_id', ({ params, body }) => ok(store.renderContact(store.updateContact(params.contact_id as string, body), { detail: true }))),
    route(
      'GET',
      '/contacts/:contact_id/notes',
      ({ params }) => {
        const contact = found(store.contacts, params.contact_id, 'contact_id');
        const notes = [...contact.noteIds].reverse().map((id) => store.renderNote(found(store.notes, id, 'note_id')));
        return ok({ type: 'list', data: notes, total_count: notes.length, pages: { type: 'pages', next: null, page: 1, per_page: Math.max(50, notes.length), total_pages: 1 } });
      },
    ),
    route('POST', '/contacts/:contact_id/notes', ({ params, body }) => ok(store.renderNote(store.createNote(params.contact_id as string, body as { body: string; admin_id?: string | number })))),
    route('GET', '/notes/:note_id', ({ params }) => ok(store.renderNote(found(store.notes, params.note_id, 'note_id')))),

    route(
      'GET',
      '/conversations/:conversation_id',
      ({ params, query }) => ok(store.renderConversation(found(store.conversations, params.conversation_id, 'conversation_id'), { parts: true, plaintext: query.display_as === 'plaintext' })),
    ),

    route('GET', '/companies', (ctx) => {
      const q = ctx.query;
      // "You can fetch a single company by passing in company_id or name", or filter by tag/segment.
      if (typeof q.company_id === 'string') {
        const row = store.findCompanyByCompanyId(q.company_id);
        if (row === undefined) throw missing('company_id');
        return companyPage(ctx, [row]);
      }
      if (typeof q.name === 'string') {
        const rows = store.companies.rows.filter((r) => store.renderCompany(r).name === q.name);
        if (rows.length === 0) throw missing('company_id');
        return companyPage(ctx, rows);
      }
      if (typeof q.tag_id === 'string') return companyPage(ctx, store.companies.rows.filter((r) => r.tagIds.includes(q.tag_id as string)));
      if (typeof q.segment_id === 'string') return companyPage(ctx, []); // seeded companies belong to no company segment
      return companyPage(ctx, store.listedCompanyRows('desc'));
    }),
    route('POST', '/companies', ({ body }) => ok(store.renderCompany(store.upsertCompany(body)))),
    route('GET', '/companies/:company_id', ({ params }) => ok(store.renderCompany(found(store.companies, params.company_id, 'company_id')))),
    route('PUT', '/companies/:company_id', ({ params, body }) => ok(store.renderCompany(store.updateCompany(params.company_id as string, body)))),

    route('GET', '/teams', () => ok({ type: 'team.list', teams: store.teams.rows.map((t) => store.renderTeam(t)) })),
    route('GET', '/teams/:team_id', ({ params }) => ok(store.renderTeam(found(store.teams, params.team_id, 'team_id')))),

    route('GET', '/admins', ({ query }) => ok({ type: 'admin.list', admins: store.admins.rows.map((a) => store.renderAdmin(a, { avatar: query.display_avatar === true })) })),
    route('GET', '/admins/:admin_id', ({ params }) => ok(store.renderAdmin(found(store.admins, params.admin_id, 'admin_id')))),

    route('GET', '/tags', () => ok({ type: 'list', data: store.tags.rows.map((t) => store.renderTag(t)) })),
    route('POST', '/tags', ({ body }) => {
      const b = body as { name: string; id?: string; companies?: { id?: string; company_id?: string; untag?: boolean }[]; users?: { id?: string }[] };
      // Check the targets before creating the tag, so a 404 leaves no half-done change.
      if (b.companies !== undefined) for (const c of b.companies) if ((c.id !== undefined ? store.companies.get(c.id) : c.company_id !== undefined ? store.findCompanyByCompanyId(c.company_id) : undefined) === undefined) throw missing('company_id');
      if (b.users !== undefined) for (const u of b.users) if (u.id === undefined || store.contacts.get(u.id) === undefined) throw missing('contact_id');
      const tag = store.upsertTag({ name: b.name, ...(b.companies === undefined && b.users === undefined && b.id !== undefined ? { id: b.id } : {}) });
      if (b.companies !== undefined) store.tagCompanies(tag, b.companies);
      if (b.users !== undefined) store.tagContacts(tag, b.users);
      return ok(store.renderTag(tag));
    }),
    route('GET', '/tags/:tag_id', ({ params }) => ok(store.renderTag(found(store.tags, params.tag_id, 'tag_id')))),

    route('GET', '/segments', ({ query }) => ok({ type: 'segment.list', segments: store.segments.rows.map((s) => store.renderSegment(s, query.include_count === true)) })),
    route('GET', '/segments/:segment_id', ({ params }) => ok(store.renderSegment(found(store.segments, params.segment_id, 'segment_id'), false))),

    route('GET', '/internal_articles', () => {
      const data = store.internalArticles.rows.map((a) => store.renderInternalArticle(a));
      return ok({ type: 'list', pages: { type: 'pages', page: 1, per_page: Math.max(50, data.length), total_pages: 1 }, total_count: data.length, data });
    }),
    route('POST', '/internal_articles', ({ body }) => ok(store.renderInternalArticle(store.createInternalArticle(body as { title: string; body?: string; owner_id: number; author_id: number })))),
    route('GET', '/internal_articles/:internal_article_id', ({ params }) => ok(store.renderInternalArticle(found(store.internalArticles, params.internal_article_id, 'internal_article_id')))),
  ];
  return Object.fromEntries(routes);
}

/** Rows of the workspace as the generic simulator reads them, rendering only what it asks for. */
const source = <R extends { id: string }>(table: { rows: R[] } | (() => R[]), render: (row: R) => Json): RecordSource => {
  const rows = (): R[] => (typeof table === 'function' ? table() : table.rows);
  return {
    size: () => rows().length,
    slice: (start, end) => rows().slice(start, end).map(render),
    indexOf: (id) => (table instanceof Table ? table.position(id) : rows().findIndex((r) => r.id === id)),
  };
};
const tableOf = <R>(rows: R[] | (() => R[])): (() => R[]) => (typeof rows === 'function' ? rows : () => rows);

/** Start an Intercom simulator on a loopback port. */
export async function startIntercomSimulator(options: IntercomSimulatorOptions = {}): Promise<IntercomSimulator> {
  const seed = options.seed ?? 1;
  const anchor = options.anchor === undefined ? DEFAULT_ANCHOR : options.anchor instanceof Date ? Math.floor(options.anchor.getTime() / 1000) : options.anchor;
  const store = new IntercomStore({ seed, size: options.size ?? 300, anchor });
  const accessToken = options.accessToken ?? 'sim_intercom_token';
  // The sidecar's headers and reset form, at the rate asked for.
  const toSidecar = (l: IntercomRateLimit | false) => (l === false ? (false as const) : { ...INTERCOM_SIDECAR.rate_limit, ...l });
  const sim = await startOpenApiSimulator({
    description: INTERCOM_DESCRIPTION,
    // The workspace is the store's; the generic simulator seeds nothing of its own.
    sidecar: { ...INTERCOM_SIDECAR, records: 0 },
    port: options.port,
    host: options.host,
    seed,
    tokens: [accessToken],
    rateLimit: toSidecar(options.rateLimit ?? DEFAULT_RATE_LIMIT),
    oauthClient: { clientId: options.oauth?.clientId ?? 'sim_intercom_client', clientSecret: options.oauth?.clientSecret ?? 'sim_intercom_secret' },
    handlers: buildHandlers(store),
    // The sidecar's lists, search and scroll rules read the workspace's records.
    sources: {
      contacts: source(store.contacts, (r) => store.renderContact(r)),
      conversations: source(store.conversations, (r) => store.renderConversation(r)),
      companies: source(store.companies, (r) => store.renderCompany(r)),
      // Companies with users, by last_request_at descending.
      'POST /companies/list': source(tableOf(() => store.listedCompanyRows('desc')), (r) => store.renderCompany(r)),
    },
  });
  return {
    ...sim,
    accessToken,
    state: store,
    setRateLimit: (l) => sim.setRateLimit(toSidecar(l)),
  };
}
