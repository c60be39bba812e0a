/**
 * Connect sessions: what lets an end user's browser create, re-authorize and check connectors
 * for one customer of one organization, and nothing else.
 *
 *   POST /api/v1/integrations/connect/sessions (org token) ─► {token, url: <page>#session=<token>, expires_at}
 *   page JS reads the fragment ─► POST /connect/session {token} ─► HttpOnly cookie (token exchanged, once)
 *   page forms (CSRF token bound to the session) ─► create / re-authorize ─► session completed
 *
 * The token travels in the URL fragment, which browsers never send to a server, so it appears
 * in no access log or Referer; it is exchanged once for a cookie, so a copy of the link found
 * later (history, screenshots) no longer works. Both are 256-bit random values stored as sha256.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { SwitchboardError } from '../../errors/index.ts';
import { nowIso, type ServiceContext } from '../context.ts';
import { newId, randomSecret, sha256Hex } from '../auth/secrets.ts';
import type { ConnectSessionsTable, ConnectTables } from './connect-migrations.ts';

export type ConnectSessionRow = Selectable<ConnectSessionsTable>;

/** The API endpoint creating sessions (organization bearer token). */
export const CONNECT_SESSIONS_PATH = '/api/v1/integrations/connect/sessions';
/** The page; the session token follows in the fragment as #session=<token>. */
export const CONNECT_PAGE_PATH = '/connect';
/** The cookie holding the browser secret (Path=/connect). */
export const CONNECT_COOKIE = 'sb_connect';
/** Prefix of session tokens, recognisable to secret scanners. */
export const CONNECT_TOKEN_PREFIX = 'sbx_';

export interface CreateSessionBody {
  customer_name: string;
  allowed_connector_types?: string[];
  redirect_url?: string;
  /** Widget token: the one origin that may frame the pages and receive the result (routes/account-routes.ts). */
  allowed_origin?: string;
}

/** A host that names one host: DNS labels (punycode) or an IP literal; no `*`. */
const EXACT_HOST = /^(?:\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*)$/;

/** `s` as an http(s) origin (scheme://host[:port], nothing else), or undefined. */
export function httpOrigin(s: string): string | undefined {
  try {
    const u = new URL(s);
    if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.origin === 'null') return undefined;
    // One exact host: DNS labels or an IP literal. The URL parser keeps `*` (and other signs) in a
    // host, and `https://*.example.com` in frame-ancestors would be a wildcard.
    if (!EXACT_HOST.test(u.hostname)) return undefined;
    return s.replace(/\/$/, '') === u.origin ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

export interface CreatedSession {
  token: string;
  url: string;
  expires_at: string;
}

function db(ctx: ServiceContext): Kysely<ConnectTables> {
  return ctx.database.db as unknown as Kysely<ConnectTables>;
}

/** True for an absolute http(s) URL. */
export function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

/** Create a session for one customer of the caller's organization (default: every registered type, 30 minutes). */
export async function createConnectSession(
  ctx: ServiceContext,
  principal: { applicationId: string; organizationId: string },
  body: CreateSessionBody,
): Promise<CreatedSession> {
  const known = [...ctx.registry.keys()].sort();
  const asked = body.allowed_connector_types ?? known;
  const errors = asked.flatMap((t, i) =>
    ctx.registry.has(t) ? [] : [{ path: `/allowed_connector_types/${i}`, message: `must be one of: ${known.join(', ')}` }],
  );
  if (errors.length > 0) {
    const bad = asked.filter((t) => !ctx.registry.has(t));
    throw new SwitchboardError('unknown_connector_type', `Unknown connector type ${bad.map((t) => `"${t}"`).join(', ')}. Known types: ${known.join(', ')}`, {
      errors,
      details: { valid: known },
    });
  }
  if (body.redirect_url !== undefined && !isHttpUrl(body.redirect_url)) {
    throw new SwitchboardError('invalid_request', 'redirect_url must be an absolute http(s) URL', {
      errors: [{ path: '/redirect_url', message: 'must be an absolute http(s) URL' }],
    });
  }
  const origin = body.allowed_origin === undefined ? undefined : httpOrigin(body.allowed_origin);
  if (body.allowed_origin !== undefined && origin === undefined) {
    throw new SwitchboardError('invalid_request', 'allowed_origin must be an http(s) origin: scheme://host[:port], no path', {
      errors: [{ path: '/allowed_origin', message: 'must be an http(s) origin (scheme://host[:port])' }],
    });
  }
  if (origin !== undefined && body.redirect_url !== undefined && new URL(body.redirect_url).origin !== origin) {
    throw new SwitchboardError('invalid_request', `redirect_url must be on allowed_origin ${origin}`, {
      errors: [{ path: '/redirect_url', message: `must be on ${origin}` }],
    });
  }
  const token = randomSecret(CONNECT_TOKEN_PREFIX);
  const now = nowIso(ctx);
  const expiresAt = nowIso(ctx, ctx.config.connectSessionTtlSeconds);
  // Housekeeping: sessions that ended more than a day ago.
  await db(ctx).deleteFrom('connect_sessions').where('expires_at', '<', nowIso(ctx, -86_400)).execute();
  await db(ctx)
    .insertInto('connect_sessions')
    .values({
      id: newId(),
      token_hash: sha256Hex(token),
      browser_hash: null,
      organization_id: principal.organizationId,
      application_id: principal.applicationId,
      customer_name: body.customer_name,
      allowed_types: JSON.stringify([...new Set(asked)]),
      redirect_url: body.redirect_url ?? null,
      expires_at: expiresAt,
      exchanged_at: null,
      claimed_at: null,
      completed_at: null,
      connector_id: null,
      created_at: now,
      allowed_origin: origin ?? null,
    })
    .execute();
  // A widget link names its origin, so the first page (which cannot know the session yet) may be framed by it.
  const query = origin !== undefined ? `?${new URLSearchParams({ origin }).toString()}` : '';
  return { token, url: `${ctx.publicUrl()}${CONNECT_PAGE_PATH}${query}#session=${token}`, expires_at: expiresAt };
}

/** Why a session cannot be used, in words an end user understands. */
export type SessionEnd = 'invalid' | 'expired' | 'used' | 'opened';

export const SESSION_END_TEXT: Record<SessionEnd, { heading: string; detail: string }> = {
  invalid: {
    heading: 'This link is not valid',
    detail: 'The connection link is incomplete or unknown. Go back to the app that sent you here and start again.',
  },
  expired: { heading: 'This link has expired', detail: 'Connection links work for a limited time. Go back to the app that sent you here and start again.' },
  used: {
    heading: 'This link has already been used',
    detail: 'The connection was completed with this link. Go back to the app that sent you here to connect again.',
  },
  opened: {
    heading: 'This link was already opened',
    detail: 'A connection link works in one browser window only. Go back to the app that sent you here and start again.',
  },
};

function endOf(row: ConnectSessionRow | undefined, now: string): SessionEnd | undefined {
  if (row === undefined) return 'invalid';
  if (row.completed_at !== null) return 'used';
  if (row.expires_at <= now) return 'expired';
  return undefined;
}

/** A usable session, or why not. */
export type SessionLookup = { session: ConnectSessionRow; end?: undefined } | { session?: undefined; end: SessionEnd };

/**
 * Exchange the fragment token for a browser secret (the cookie value). Once per token; the same
 * browser presenting its cookie with the token again (the link opened twice) is let through.
 */
export async function exchangeToken(
  ctx: ServiceContext,
  token: string,
  cookie: string | undefined,
): Promise<{ browserSecret: string; session: ConnectSessionRow } | { end: SessionEnd }> {
  const now = nowIso(ctx);
  const tokenHash = sha256Hex(token);
  const browserSecret = randomSecret();
  const row = await db(ctx)
    .updateTable('connect_sessions')
    .set({ exchanged_at: now, browser_hash: sha256Hex(browserSecret) })
    .where('token_hash', '=', tokenHash)
    .where('exchanged_at', 'is', null)
    .where('completed_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
  if (row !== undefined) return { browserSecret, session: row };
  const existing = await db(ctx).selectFrom('connect_sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  const end = endOf(existing, now);
  if (end !== undefined) return { end };
  if (cookie !== undefined && existing?.browser_hash === sha256Hex(cookie)) return { browserSecret: cookie, session: existing };
  return { end: 'opened' };
}

/** The session behind a cookie value. */
export async function sessionFromCookie(ctx: ServiceContext, cookie: string | undefined): Promise<SessionLookup> {
  if (cookie === undefined || cookie === '') return { end: 'invalid' };
  const row = await db(ctx).selectFrom('connect_sessions').selectAll().where('browser_hash', '=', sha256Hex(cookie)).executeTakeFirst();
  const end = endOf(row, nowIso(ctx));
  return end === undefined ? { session: row as ConnectSessionRow } : { end };
}

/** Connector types the session may touch, in the order the API caller gave. */
export function allowedTypes(s: ConnectSessionRow): string[] {
  const v: unknown = JSON.parse(s.allowed_types);
  return Array.isArray(v) ? v.filter((t): t is string => typeof t === 'string') : [];
}

/**
 * How long a claim holds when its attempt neither finishes nor fails (the process died): past
 * it the session can be claimed again. Longer than any upstream check (its deadline is 60 s).
 */
export const CLAIM_TTL_MS = 5 * 60_000;

/** A claim on a session: the value of claimed_at its UPDATE wrote, which only its holder knows. */
export interface SessionClaim {
  sessionId: string;
  claimedAt: string;
}

/**
 * Claim the session for one connection attempt, before any upstream check: one atomic UPDATE
 * (WHERE not completed, not expired and not claimed by a live attempt), so of any number of
 * concurrent submits with one cookie exactly one gets the claim, on SQLite and PostgreSQL alike.
 * The others learn why not: 'busy' (another attempt is under way) or how the session ended.
 */
export async function claimSession(ctx: ServiceContext, sessionId: string): Promise<{ claim: SessionClaim } | { claim?: undefined; why: SessionEnd | 'busy' }> {
  const now = nowIso(ctx);
  const stale = new Date(ctx.now() - CLAIM_TTL_MS).toISOString();
  const r = await db(ctx)
    .updateTable('connect_sessions')
    .set({ claimed_at: now })
    .where('id', '=', sessionId)
    .where('completed_at', 'is', null)
    .where('expires_at', '>', now)
    .where((eb) => eb.or([eb('claimed_at', 'is', null), eb('claimed_at', '<', stale)]))
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) > 0) return { claim: { sessionId, claimedAt: now } };
  const row = await db(ctx).selectFrom('connect_sessions').selectAll().where('id', '=', sessionId).executeTakeFirst();
  return { why: endOf(row, now) ?? 'busy' };
}

/** Give a claim back after a failed attempt (wrong key, upstream down): the session can be used again. */
export async function releaseSession(ctx: ServiceContext, claim: SessionClaim): Promise<void> {
  await db(ctx)
    .updateTable('connect_sessions')
    .set({ claimed_at: null })
    .where('id', '=', claim.sessionId)
    .where('claimed_at', '=', claim.claimedAt)
    .where('completed_at', 'is', null)
    .execute();
}

/** Mark the session used by the connection its claim made; false when the claim lapsed and the session ended meanwhile. */
export async function completeSession(ctx: ServiceContext, claim: SessionClaim, connectorId: string): Promise<boolean> {
  const r = await db(ctx)
    .updateTable('connect_sessions')
    .set({ completed_at: nowIso(ctx), connector_id: connectorId })
    .where('id', '=', claim.sessionId)
    .where('completed_at', 'is', null)
    .where('claimed_at', '=', claim.claimedAt)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** The CSRF token of a session's forms: an HMAC of its id with a key derived from the key ring. */
export function csrfToken(ctx: ServiceContext, session: ConnectSessionRow): string {
  return createHmac('sha256', ctx.keyRing.derive('connect-csrf')).update(session.id).digest('base64url');
}

/** Constant-time check of a submitted CSRF token. */
export function csrfValid(ctx: ServiceContext, session: ConnectSessionRow, submitted: unknown): boolean {
  if (typeof submitted !== 'string') return false;
  const want = Buffer.from(csrfToken(ctx, session));
  const got = Buffer.from(submitted);
  return want.length === got.length && timingSafeEqual(want, got);
}
