/**
 * Intercom REST API 2.14 simulator (https://api.intercom.io), on the generic OpenAPI simulator
 * (src/simulator): the vendored description connectors/intercom/openapi-2.14.json routes and
 * checks every request (paths, methods, query params, bodies, the Intercom-Version header, the
 * bearer token) and connectors/intercom/simulator.yaml says what the description cannot: the
 * error.list body and its codes, the 404s per id, X-RateLimit headers and the 10-second window,
 * the OAuth flow, the blank records creates start from, unique emails and external ids (409),
 * company upserts by company_id, notes under their contact, the lists' pages, the search query
 * language and the one-scroll-per-app Scroll API.
 *
 * The generic store holds the seeded workspace (workspace.ts). What stays here is what reads
 * across records or reshapes a write the description types otherwise: GET /me, company lookups
 * and tag writes, segment counts, avatars on request, and the checks and shapes of contact,
 * company and note writes (handlers that then let the store write).
 *
 * Faults (5xx, latency, malformed bodies, injected 429s) come from the shared sim-server `inject`.
 */
import { join } from 'node:path';
import { CONNECTORS_DIR } from '../../../src/manifest/connectors-dir.ts';
import { Description, loadDescriptionSync } from '../../../src/simulator/description.ts';
import {
  SimulatorError,
  startOpenApiSimulator,
  type OpenApiSimulator,
  type OperationContext,
  type OperationHandler,
  type RateLimit,
} from '../../../src/simulator/openapi-simulator.ts';
import { listPage, type ListRule, type RecordSource } from '../../../src/simulator/rules.ts';
import { mixSeed } from '../../../src/simulator/sim-server.ts';
import type { SimResponse } from '../../../src/simulator/sim-server.ts';
import { htmlBody, INTERCOM_SIDECAR, pool, type Json } from './data.ts';
import { DEFAULT_ANCHOR, seedWorkspace, type Workspace } from './workspace.ts';

export { INTERCOM_SIDECAR, DEFAULT_ANCHOR };
/** Intercom's trimmed 2.14 description, vendored under connectors/intercom/. */
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
  /** Requests per window (all tokens share the app's budget); `false` disables limiting. The default is far above any test's needs. */
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
  /** The workspace's app id (GET /me's app.id_code). */
  workspaceId: string;
  /** The records of a resource, in stored order (`resources.get(name).records`, the generic store). */
  records(resource: string): Json[];
  /** GET /me: the token's admin with the workspace ("app"). */
  me(): Json;
  /** Companies POST /companies/list pages: those with users, by last_request_at descending. */
  listedCompanies(): Json[];
  /** Change (or disable) the rate limit; starts a fresh window. */
  setRateLimit(limit: IntercomRateLimit | false): void;
}

const DEFAULT_RATE_LIMIT: IntercomRateLimit = { limit: 1_000_000, window_seconds: 10 };
const ok = (json: unknown): SimResponse => ({ status: 200, json });
/** A 404 for an id: the sidecar's not_found names its code and message per path parameter. */
const missing = (param: string): SimulatorError => new SimulatorError(404, 'not_found', '', param);
const invalid = (message: string): SimulatorError => new SimulatorError(400, 'parameter_invalid', message);

function buildHandlers(
  ws: Workspace,
  all: (resource: string) => Json[],
  one: (resource: string, id: string) => Json | undefined,
  listed: () => Json[],
  me: () => Json,
): Record<string, OperationHandler> {
  const rows = (list: Json[]): RecordSource => ({
    size: () => list.length,
    slice: (a, b) => list.slice(a, b),
    indexOf: (id) => list.findIndex((r) => r.id === id),
  });
  /** Page-numbered company lists (the sidecar's pages rule for POST /companies/list) over given companies. */
  const companyPage = (ctx: OperationContext, list: Json[]): SimResponse =>
    ok(listPage(INTERCOM_SIDECAR.pages?.['POST /companies/list'] as ListRule, rows(list), ctx.query, undefined, { origin: ctx.origin, path: ctx.req.path }));
  const generatedMasks = new Map<string, number>();
  const byCompanyId = (companyId: unknown): Json | undefined => all('companies').find((c) => c.company_id === companyId);

  /** Contact writes: roles, known custom attributes ("must exist as data attributes"), avatars as image URLs, a user's signup time. */
  const contactWrite: OperationHandler = ({ body, op }) => {
    if (body.role !== undefined && body.role !== 'user' && body.role !== 'lead') throw invalid('role must be one of: user, lead');
    const unknown = Object.keys((body.custom_attributes ?? {}) as Json).find((k) => !pool<string>('contact_data_attributes').includes(k));
    if (unknown !== undefined) throw invalid(`Custom attribute '${unknown}' does not exist`);
    if (typeof body.email === 'string') body.email = body.email.trim();
    if (typeof body.avatar === 'string') body.avatar = { type: 'avatar', image_url: body.avatar };
    if (op.method === 'POST' && body.role === 'user' && body.signed_up_at === undefined) body.signed_up_at = Math.floor(Date.now() / 1000);
    return undefined;
  };
  /** Company writes: a plan by name ("Pro") becomes Intercom's plan object; "this will truncate floats" of monthly_spend. */
  const companyWrite: OperationHandler = ({ body, op }) => {
    if (op.method === 'POST' && (typeof body.company_id !== 'string' || body.company_id === ''))
      throw new SimulatorError(400, 'parameter_not_found', 'company_id not specified');
    if (typeof body.monthly_spend === 'number') body.monthly_spend = Math.trunc(body.monthly_spend);
    if (typeof body.plan === 'string') {
      const plan = body.plan;
      const known = pool<[string, string]>('plans').find(([, n]) => n.toLowerCase() === plan.toLowerCase());
      body.plan = { type: 'plan', id: known?.[0] ?? String(269400 + (mixSeed(...[...plan].map((c) => c.charCodeAt(0))) % 10000)), name: known?.[1] ?? plan };
    }
    return undefined;
  };

  return {
    'GET /me': () => ok(me()),
    'POST /contacts': contactWrite,
    'PUT /contacts/{contact_id}': contactWrite,
    // A note's author is an admin (the token's by default), its body HTML.
    'POST /contacts/{contact_id}/notes': ({ body, params }) => {
      if (!ws.contacts.has(params.contact_id as string)) throw missing('contact_id');
      const a = body.admin_id === undefined ? all('admins')[0] : one('admins', String(body.admin_id));
      if (a === undefined) throw new SimulatorError(404, 'not_found', 'Resource Not Found');
      Object.assign(body, {
        body: htmlBody(String(body.body)),
        author: { type: 'admin', id: a.id, name: a.name, email: a.email, away_mode_enabled: a.away_mode_enabled, away_mode_reassign: a.away_mode_reassign },
      });
      return undefined;
    },
    'GET /conversations/{conversation_id}': ({ params, query }) => {
      if (query.display_as !== 'plaintext') return undefined;
      const c = ws.conversation(params.conversation_id as string, true);
      if (c === undefined) throw missing('conversation_id');
      return ok(c);
    },
    // "You can fetch a single company by passing in company_id or name", or filter by tag or segment.
    'GET /companies': (ctx) => {
      const q = ctx.query;
      if (typeof q.company_id === 'string' || typeof q.name === 'string') {
        const found = all('companies').filter((c) => (typeof q.company_id === 'string' ? c.company_id === q.company_id : c.name === q.name));
        if (found.length === 0) throw missing('company_id');
        return companyPage(ctx, found);
      }
      const within = (path: string, id: unknown): Json[] =>
        all('companies').filter((c) => (((c[path] as Json)[path] as Json[] | undefined) ?? []).some((x) => x.id === id));
      if (typeof q.tag_id === 'string') return companyPage(ctx, within('tags', q.tag_id));
      if (typeof q.segment_id === 'string') return companyPage(ctx, within('segments', q.segment_id));
      return companyPage(ctx, listed());
    },
    'POST /companies': companyWrite,
    'PUT /companies/{company_id}': companyWrite,
    'GET /admins': ({ query }) =>
      ok({
        type: 'admin.list',
        admins: all('admins').map((a) => (query.display_avatar === true ? { ...a, avatar: ws.avatars.get(a.id as string) ?? null } : a)),
      }),
    // POST /tags with a name: "created if not found" (names are case insensitive), renamed when the id is given, or applied to companies and contacts.
    'POST /tags': ({ body }) => {
      const b = body as { name: string; id?: string; companies?: { id?: string; company_id?: string; untag?: boolean }[]; users?: { id?: string }[] };
      // Check the targets before writing, so a 404 leaves no half-done change.
      const companies = (b.companies ?? []).map((c) => ({
        record: c.id !== undefined ? one('companies', c.id) : byCompanyId(c.company_id),
        untag: c.untag === true,
      }));
      if (companies.some((c) => c.record === undefined)) throw missing('company_id');
      const contacts = (b.users ?? []).map((u) => (u.id === undefined ? undefined : one('contacts', u.id)));
      if (contacts.some((c) => c === undefined)) throw missing('contact_id');
      const tags = all('tags');
      let tag =
        b.companies === undefined && b.users === undefined && b.id !== undefined
          ? one('tags', b.id)
          : tags.find((t) => String(t.name).toLowerCase() === b.name.toLowerCase());
      if (b.id !== undefined && b.companies === undefined && b.users === undefined) {
        if (tag === undefined) throw new SimulatorError(404, 'tag_not_found', 'Tag not found');
        tag.name = b.name;
        for (const c of all('companies')) for (const t of (c.tags as { tags: Json[] }).tags) if (t.id === tag.id) t.name = b.name;
      }
      if (tag === undefined) {
        tag = { type: 'tag', id: String(Math.max(100, ...tags.map((t) => Number(t.id))) + 1), name: b.name };
        ws.records.tags?.set(tag.id as string, { record: tag, parents: {} });
      }
      const ref = { type: 'tag', id: tag.id, name: tag.name };
      for (const { record, untag } of companies) {
        const list = record?.tags as { tags: Json[] };
        list.tags = [...list.tags.filter((t) => t.id !== tag.id), ...(untag ? [] : [ref])];
      }
      for (const c of contacts) {
        const list = c?.tags as { data: Json[]; total_count: number; has_more: boolean };
        if (list.data.some((t) => t.id === tag.id)) continue;
        if (list.data.length < 10) list.data.push({ type: 'tag', id: tag.id, url: `/tags/${String(tag.id)}` });
        list.total_count++;
        list.has_more = list.total_count > list.data.length;
      }
      return ok(tag);
    },
    'GET /segments': ({ query }) => {
      const segments = all('segments');
      if (query.include_count !== true) return ok({ type: 'segment.list', segments });
      // A generated contact never changes, so its memberships are worked out once; a kept one as it is now.
      const maskOf = (c: Json): number => segments.reduce((m, s, i) => (ws.segmentRules.get(s.id as string)?.(c) === true ? m | (1 << i) : m), 0);
      const counts = segments.map(() => 0);
      for (const id of ws.contacts.keys()) {
        let mask = ws.contacts.isKept(id) ? undefined : generatedMasks.get(id);
        if (mask === undefined) mask = maskOf(ws.contacts.peek(id) as Json);
        if (!ws.contacts.isKept(id)) generatedMasks.set(id, mask);
        segments.forEach((_, i) => (mask & (1 << i) ? counts[i]!++ : 0));
      }
      return ok({ type: 'segment.list', segments: segments.map((s, i) => ({ ...s, count: counts[i] })) });
    },
  };
}

/** Start an Intercom simulator on a loopback port. */
export async function startIntercomSimulator(options: IntercomSimulatorOptions = {}): Promise<IntercomSimulator> {
  const seed = options.seed ?? 1;
  const anchor = options.anchor === undefined ? DEFAULT_ANCHOR : options.anchor instanceof Date ? Math.floor(options.anchor.getTime() / 1000) : options.anchor;
  const ws = seedWorkspace(seed, options.size ?? 300, anchor);
  const accessToken = options.accessToken ?? 'sim_intercom_token';
  // The sidecar's headers and reset form, at the rate asked for.
  const toSidecar = (l: IntercomRateLimit | false) => (l === false ? (false as const) : { ...INTERCOM_SIDECAR.rate_limit, ...l });
  const all = (resource: string): Json[] => [...(ws.records[resource]?.values() ?? [])].map((s) => s.record);
  const one = (resource: string, id: string): Json | undefined => ws.records[resource]?.get(id)?.record;
  // Companies with users by last_request_at, descending ("the API does not include companies who have
  // no associated users in list responses"); sorted again when a company is added or its keys change.
  let listedCache: { key: string; rows: Json[] } | undefined;
  const listed = (): Json[] => {
    const companies = all('companies');
    const last = (c: Json): number => (c.last_request_at as number | undefined) ?? 0;
    const key = `${companies.length}:${companies.reduce((n, c) => n + last(c) + ((c.user_count as number) > 0 ? 1 : 0), 0)}`;
    if (listedCache?.key !== key)
      listedCache = {
        key,
        rows: companies.filter((c) => (c.user_count as number) > 0).sort((a, b) => last(b) - last(a) || (String(a.id) < String(b.id) ? 1 : -1)),
      };
    return listedCache.rows;
  };
  const me = (): Json => {
    const a = all('admins')[0] as Json;
    const app = {
      type: 'app',
      id_code: ws.workspaceId,
      name: 'Switchboard Sandbox',
      created_at: anchor - 4 * 365 * 86_400,
      secure: false,
      identity_verification: false,
      timezone: 'Europe/Dublin',
      region: 'US',
    };
    return {
      type: 'admin',
      id: a.id,
      email: a.email,
      name: a.name,
      email_verified: true,
      app,
      avatar: { type: 'avatar', image_url: ws.avatars.get(a.id as string) ?? null },
      has_inbox_seat: a.has_inbox_seat,
    };
  };
  const sim = await startOpenApiSimulator({
    description: INTERCOM_DESCRIPTION,
    // The workspace is seeded here; the generic simulator seeds nothing of its own.
    sidecar: { ...INTERCOM_SIDECAR, records: 0 },
    port: options.port,
    host: options.host,
    seed,
    tokens: [accessToken],
    rateLimit: toSidecar(options.rateLimit ?? DEFAULT_RATE_LIMIT),
    oauthClient: { clientId: options.oauth?.clientId ?? 'sim_intercom_client', clientSecret: options.oauth?.clientSecret ?? 'sim_intercom_secret' },
    records: ws.records,
    // Room for creates beside the largest workspace (100 000 contacts).
    maxRecords: 200_000,
    vars: { workspace_id: ws.workspaceId },
    handlers: buildHandlers(ws, all, one, listed, me),
    // Contacts and conversations are generated on demand: the rules read them without keeping them; list items have no conversation_parts.
    sources: {
      contacts: ws.contacts.source(),
      conversations: ws.conversations.source(({ conversation_parts: _p, ...item }) => item),
      'POST /companies/list': { size: () => listed().length, slice: (a, b) => listed().slice(a, b), indexOf: (id) => listed().findIndex((c) => c.id === id) },
    },
  });
  return { ...sim, accessToken, workspaceId: ws.workspaceId, records: all, me, listedCompanies: listed, setRateLimit: (l) => sim.setRateLimit(toSidecar(l)) };
}
