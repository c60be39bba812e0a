/**
 * Revocable tokens (issue 46, item 5): an application lists its live tokens and revokes one by
 * id, or all at once. Access tokens (application and scoped) are rows of access_tokens keyed by
 * the sha256 of the token: a token's id is `tok_` + the first 32 hex digits of that hash (the
 * token itself is never stored, so the id is derived, not a new column). Connect sessions and
 * widget tokens are rows of connect_sessions: their id is `cs_` + the session id, and revoking
 * one expires it (its pages then answer as for an expired session).
 *
 * Revocation deletes the row: every instance refuses the token (401 on REST, MCP and the token's
 * other uses) once its cached lookup lapses, within SWITCHBOARD_LOOKUP_CACHE_MS (lookup-cache.ts).
 */
import type { Kysely } from 'kysely';
import { SwitchboardError } from '../../errors/index.ts';
import type { ServiceTables } from '../../store/index.ts';
import type { ConnectTables } from '../connect/connect-migrations.ts';
import { nowIso, type ServiceContext } from '../context.ts';

export interface TokenView {
  id: string;
  kind: 'application' | 'scoped' | 'connect_session';
  organization_id: string | null;
  customer_name: string | null;
  created_at: string;
  expires_at: string;
}

const ACCESS_ID = /^tok_([0-9a-f]{32})$/;
const SESSION_ID = /^cs_([0-9A-Za-z-]{1,64})$/;

type Db = Kysely<ServiceTables & ConnectTables>;
const dbOf = (ctx: ServiceContext): Db => ctx.database.db as unknown as Db;

/** The id of an access token row. */
export const accessTokenId = (tokenHash: string): string => `tok_${tokenHash.slice(0, 32)}`;

/** The application's live tokens (none of their values), newest first. */
export async function listTokens(ctx: ServiceContext, applicationId: string): Promise<TokenView[]> {
  const now = nowIso(ctx);
  const db = dbOf(ctx);
  const access = await db.selectFrom('access_tokens').selectAll().where('application_id', '=', applicationId).where('expires_at', '>', now).execute();
  const sessions = await db
    .selectFrom('connect_sessions')
    .select(['id', 'organization_id', 'customer_name', 'created_at', 'expires_at'])
    .where('application_id', '=', applicationId)
    .where('expires_at', '>', now)
    .where('completed_at', 'is', null)
    .execute();
  const out: TokenView[] = [
    ...access.map((t) => ({
      id: accessTokenId(t.token_hash),
      kind: (t.customer_name === null ? 'application' : 'scoped') as TokenView['kind'],
      organization_id: t.organization_id,
      customer_name: t.customer_name,
      created_at: t.created_at,
      expires_at: t.expires_at,
    })),
    ...sessions.map((s) => ({
      id: `cs_${s.id}`,
      kind: 'connect_session' as const,
      organization_id: s.organization_id,
      customer_name: s.customer_name,
      created_at: s.created_at,
      expires_at: s.expires_at,
    })),
  ];
  return out.sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : -1));
}

function notFound(id: string): SwitchboardError {
  return new SwitchboardError('token_not_found', `No live token ${id} of this application`, { details: { token_id: id } });
}

/** Revoke one of the application's tokens by id; token_not_found when it has none with that id. */
export async function revokeToken(ctx: ServiceContext, applicationId: string, id: string): Promise<void> {
  const db = dbOf(ctx);
  const access = ACCESS_ID.exec(id);
  if (access !== null) {
    const r = await db
      .deleteFrom('access_tokens')
      .where('application_id', '=', applicationId)
      .where('token_hash', 'like', `${access[1] as string}%`)
      .executeTakeFirst();
    if (Number(r.numDeletedRows) === 0) throw notFound(id);
    return;
  }
  const session = SESSION_ID.exec(id);
  if (session !== null) {
    const now = nowIso(ctx);
    const r = await db
      .updateTable('connect_sessions')
      .set({ expires_at: now })
      .where('application_id', '=', applicationId)
      .where('id', '=', session[1] as string)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) throw notFound(id);
    return;
  }
  throw notFound(id);
}

/** Revoke every token of the application (the caller's own included) and expire its Connect sessions; how many. */
export async function revokeAllTokens(ctx: ServiceContext, applicationId: string): Promise<{ access_tokens: number; connect_sessions: number }> {
  const db = dbOf(ctx);
  const now = nowIso(ctx);
  return db.transaction().execute(async (trx) => {
    const a = await trx.deleteFrom('access_tokens').where('application_id', '=', applicationId).executeTakeFirst();
    const s = await trx
      .updateTable('connect_sessions')
      .set({ expires_at: now })
      .where('application_id', '=', applicationId)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return { access_tokens: Number(a.numDeletedRows), connect_sessions: Number(s.numUpdatedRows) };
  });
}
