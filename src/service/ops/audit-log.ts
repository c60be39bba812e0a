/**
 * The audit log (issue 46): an append-only record of control-plane actions, per organization.
 *
 * Recorded by one onSend hook from a table of audited routes (AUDITED below), so routes need no
 * code of their own: who (the token's application and kind, a scoped token's customer), what
 * (action, outcome), which resource, when, from which address, with the request id. Only
 * successful actions are recorded, and the OAuth callback's refusals. What an event says about
 * the resource comes from an allow-list of non-secret fields per route (a connector's type and
 * name, a webhook endpoint's url and events...): request bodies, answers, credentials, tokens
 * and client secrets are never copied.
 *
 * The Connect UI pages note the connectors they create or re-authorize (actor: the Connect
 * session, `connect_session`), and the admin CLI appends its own events (`admin_cli`: applications
 * created, organizations granted) through appendAuditEvent.
 *
 * Retention: SWITCHBOARD_AUDIT_RETENTION_DAYS; older events are deleted at most once an hour per
 * instance, as events are added.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { SwitchboardError } from '../../errors/index.ts';
import type { ServiceContext } from '../context.ts';
import type { AuditEventsTable, OperationsTables } from './operations-migrations.ts';

export type AuditEvent = Omit<AuditEventsTable, 'details'> & { details: Record<string, unknown> };

/** What a route records; `id`/`details` read only the fields they name. */
interface AuditedRoute {
  action: string | ((request: FastifyRequest) => string);
  resourceType: string;
  id?: (request: FastifyRequest, answer: Record<string, unknown>) => unknown;
  details?: (request: FastifyRequest, answer: Record<string, unknown>) => Record<string, unknown>;
}

const param = (name: string) => (request: FastifyRequest) => (request.params as Record<string, unknown>)[name];
const bodyField = (request: FastifyRequest, name: string): unknown =>
  request.body !== null && typeof request.body === 'object' ? (request.body as Record<string, unknown>)[name] : undefined;
const connectorFacts = (_request: FastifyRequest, a: Record<string, unknown>) => ({
  connector_type: a['connector_type'],
  customer_name: a['customer_name'],
  name: a['name'],
  status: a['status'],
});

/** An allow-list (permissions.ts) as flat facts; `cleared` when it was removed. */
const ruleFacts = (rules: unknown): Record<string, unknown> =>
  rules !== null && typeof rules === 'object' ? { ...(rules as Record<string, unknown>) } : { cleared: true };

/** The audited routes, by "METHOD route-url". */
const AUDITED: Record<string, AuditedRoute> = {
  'POST /api/v1/account/applications/token': { action: 'token.issued', resourceType: 'application' },
  'POST /api/v1/account/applications/scoped-token': {
    action: 'scoped_token.issued',
    resourceType: 'customer',
    id: (r) => bodyField(r, 'customer_name'),
    details: (r, a) => ({ expires_in: a['expires_in'], ...(bodyField(r, 'permissions') !== undefined ? ruleFacts(bodyField(r, 'permissions')) : {}) }),
  },
  'POST /api/v1/account/applications/widget-token': {
    action: 'widget_token.issued',
    resourceType: 'customer',
    id: (r) => bodyField(r, 'customer_name'),
    details: (r) => ({ allowed_origin: bodyField(r, 'allowed_origin') }),
  },
  'POST /api/v1/integrations/connect/sessions': { action: 'connect_session.created', resourceType: 'customer', id: (r) => bodyField(r, 'customer_name') },
  'POST /api/v1/integrations/connectors': { action: 'connector.created', resourceType: 'connector', id: (_r, a) => a['id'], details: connectorFacts },
  'PATCH /api/v1/integrations/connectors/:connector_id': {
    // New credentials re-authorize the connector; a rename only updates it.
    action: (r) => (bodyField(r, 'credentials') !== undefined ? 'connector.reauthorized' : 'connector.updated'),
    resourceType: 'connector',
    id: param('connector_id'),
    details: (r, a) => ({ ...connectorFacts(r, a), fields: Object.keys((r.body ?? {}) as object).sort() }),
  },
  'DELETE /api/v1/integrations/connectors/:connector_id': { action: 'connector.deleted', resourceType: 'connector', id: param('connector_id') },
  'POST /api/v1/integrations/connectors/:connector_id/sync': {
    action: 'sync.started',
    resourceType: 'connector',
    id: param('connector_id'),
    details: (r) => ({ full: bodyField(r, 'full') === true }),
  },
  'POST /api/v1/integrations/connectors/oauth/initiate': {
    action: 'oauth.initiated',
    resourceType: 'customer',
    id: (r) => bodyField(r, 'customer_name'),
    details: (r) => ({ connector_type: bodyField(r, 'connector_type') }),
  },
  'POST /api/v1/webhook-endpoints': {
    action: 'webhook_endpoint.created',
    resourceType: 'webhook_endpoint',
    id: (_r, a) => a['id'],
    details: (_r, a) => ({ url: a['url'], events: a['events'] }),
  },
  'DELETE /api/v1/webhook-endpoints/:endpoint_id': { action: 'webhook_endpoint.deleted', resourceType: 'webhook_endpoint', id: param('endpoint_id') },
  'PUT /api/v1/account/permissions': {
    action: 'permissions.updated',
    resourceType: 'application',
    id: (r) => r.principal?.applicationId,
    details: (_r, a) => ruleFacts(a['application']),
  },
  'DELETE /api/v1/account/tokens/:token_id': { action: 'token.revoked', resourceType: 'token', id: param('token_id') },
  'DELETE /api/v1/account/tokens': {
    action: 'tokens.revoked_all',
    resourceType: 'application',
    id: (r) => r.principal?.applicationId,
    details: (_r, a) => ({ ...((a['revoked'] ?? {}) as Record<string, unknown>) }),
  },
  'POST /api/v1/integrations/connectors/:connector_id/webhook-subscriptions': {
    action: 'webhook_subscription.created',
    resourceType: 'connector',
    id: param('connector_id'),
    details: (r) => ({ events: bodyField(r, 'events') }),
  },
};

/** What a route handler can add for the audit hook (the OAuth callback: its organization and outcome, as it has no token). */
export interface AuditNote {
  organizationId: string;
  action: string;
  outcome: 'success' | 'refused';
  resourceType: string;
  resourceId: string | null;
  applicationId?: string;
  customerName?: string;
  /** Who acted when it is not a token: `connect_session` (the Connect UI pages); default `public`. */
  tokenKind?: string;
  details?: Record<string, unknown>;
}

declare module 'fastify' {
  interface FastifyRequest {
    auditNote?: AuditNote;
  }
}

const HOUR_MS = 3_600_000;

/** Only plain values, short strings, and lists of them, reach the table. */
function cleanDetails(d: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const ok = (v: unknown): boolean => typeof v === 'boolean' || typeof v === 'number' || (typeof v === 'string' && v.length <= 500);
  for (const [k, v] of Object.entries(d)) {
    if (ok(v)) out[k] = v;
    else if (Array.isArray(v) && v.length <= 100 && v.every(ok)) out[k] = v;
  }
  return out;
}

export interface AuditQuery {
  action?: string;
  resource_type?: string;
  resource_id?: string;
  /** An application id (the actor). */
  actor?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

let seq = 0;

/**
 * Append one event (the hook's AuditLog.record, and the admin CLI's, which has no service: its
 * actor is `admin_cli`). Throws on a database error.
 */
export async function appendAuditEvent(db: Kysely<OperationsTables>, at: number, e: Omit<AuditEvent, 'id' | 'created_at'>): Promise<void> {
  const createdAt = new Date(at).toISOString();
  // Ordered like the events within one millisecond of this process (the list sorts by created_at, then id).
  const id = `aud_${at.toString(36).padStart(9, '0')}${(seq++ % 1_679_616).toString(36).padStart(4, '0')}${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  await db
    .insertInto('audit_events')
    .values({ ...e, id, created_at: createdAt, details: JSON.stringify(cleanDetails(e.details)) })
    .execute();
}

export class AuditLog {
  private prunedAt = 0;

  constructor(
    private readonly db: Kysely<OperationsTables>,
    private readonly now: () => number,
    private readonly retentionDays: number,
    private readonly onError: (e: Error) => void,
  ) {}

  /** Append one event (never throws into the request: a failure is reported to onError). */
  async record(e: Omit<AuditEvent, 'id' | 'created_at'>): Promise<void> {
    try {
      await appendAuditEvent(this.db, this.now(), e);
      if (this.now() - this.prunedAt >= HOUR_MS) await this.prune();
    } catch (err) {
      this.onError(err as Error);
    }
  }

  /** Delete events past the retention. */
  async prune(): Promise<number> {
    this.prunedAt = this.now();
    const before = new Date(this.now() - this.retentionDays * 86_400_000).toISOString();
    const r = await this.db.deleteFrom('audit_events').where('created_at', '<', before).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** One page of the organization's events, newest first. */
  async list(organizationId: string, q: AuditQuery): Promise<{ data: AuditEvent[]; meta: { cursor: string | null; has_more: boolean } }> {
    const limit = q.limit ?? 50;
    let query = this.db.selectFrom('audit_events').selectAll().where('organization_id', '=', organizationId);
    if (q.action !== undefined) query = query.where('action', '=', q.action);
    if (q.resource_type !== undefined) query = query.where('resource_type', '=', q.resource_type);
    if (q.resource_id !== undefined) query = query.where('resource_id', '=', q.resource_id);
    if (q.actor !== undefined) query = query.where('actor_application_id', '=', q.actor);
    if (q.since !== undefined) query = query.where('created_at', '>=', isoOf(q.since, 'since'));
    if (q.until !== undefined) query = query.where('created_at', '<', isoOf(q.until, 'until'));
    if (q.cursor !== undefined) {
      const [at, id] = decodeCursor(q.cursor);
      query = query.where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<', id)])]));
    }
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const hasMore = rows.length > limit;
    return {
      data: page.map((r) => ({ ...r, details: JSON.parse(r.details) as Record<string, unknown> })),
      meta: { cursor: hasMore && last !== undefined ? Buffer.from(JSON.stringify([last.created_at, last.id])).toString('base64url') : null, has_more: hasMore },
    };
  }
}

function isoOf(value: string, name: string): string {
  const t = Date.parse(value);
  if (Number.isNaN(t))
    throw new SwitchboardError('invalid_request', `${name} must be an ISO 8601 date-time`, {
      errors: [{ path: `query:${name}`, message: 'is not a date-time' }],
    });
  return new Date(t).toISOString();
}

function decodeCursor(s: string): [string, string] {
  try {
    const v: unknown = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string') return [v[0], v[1]];
  } catch {
    // the error below
  }
  throw new SwitchboardError('invalid_cursor', 'cursor is not a cursor returned by this endpoint', {
    errors: [{ path: 'query:cursor', message: 'is not a cursor returned by this endpoint' }],
  });
}

/** The route-url key of a request's route. */
const routeKey = (request: FastifyRequest): string => `${request.method} ${request.routeOptions.url ?? ''}`;

/**
 * Install the audit hook on the root instance (before the routes are registered) and return the
 * log. The token endpoint is public: its actor is the application whose client id was presented
 * (looked up only once the token was issued).
 */
export function installAuditLog(app: FastifyInstance, ctx: ServiceContext): AuditLog {
  const log = new AuditLog(ctx.database.db as unknown as Kysely<OperationsTables>, ctx.now, ctx.config.auditRetentionDays, (e) =>
    ctx.log.warn({ err_message: e.message }, 'audit event not recorded'),
  );
  // Callback style: the requests nothing is recorded for (execute, search...) pass without a promise.
  app.decorateRequest('auditNote', undefined);
  app.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void) => {
    const route = request.auditNote === undefined ? AUDITED[routeKey(request)] : undefined;
    if (request.auditNote === undefined && (route === undefined || reply.statusCode >= 300)) {
      done(null, payload);
      return;
    }
    audit(request, route, payload).then(
      () => done(null, payload),
      (e: unknown) => done(e as Error),
    );
  });
  const audit = async (request: FastifyRequest, route: AuditedRoute | undefined, payload: unknown): Promise<void> => {
    const note = request.auditNote;
    const base = { ip: request.ip ?? null, request_id: String(request.id) };
    if (note !== undefined) {
      await log.record({
        ...base,
        organization_id: note.organizationId,
        action: note.action,
        outcome: note.outcome,
        resource_type: note.resourceType,
        resource_id: note.resourceId,
        actor_application_id: note.applicationId ?? null,
        actor_token_kind: note.tokenKind ?? 'public',
        actor_customer: note.customerName ?? null,
        details: note.details ?? {},
      });
      return;
    }
    if (route === undefined) return;
    let answer: Record<string, unknown> = {};
    if (typeof payload === 'string' && payload.startsWith('{')) {
      try {
        answer = JSON.parse(payload) as Record<string, unknown>;
      } catch {
        answer = {};
      }
    }
    const id = route.id?.(request, answer);
    for (const actor of await actorsOf(ctx, request)) {
      await log.record({
        ...base,
        ...actor,
        action: typeof route.action === 'string' ? route.action : route.action(request),
        outcome: 'success',
        resource_type: route.resourceType,
        resource_id: typeof id === 'string' ? id : actor.resource_id,
        details: route.details?.(request, answer) ?? {},
      });
    }
  };
  return log;
}

/** Who acted, per organization the event belongs to: the principal's; for the token endpoint (no principal) the application of the client id, in each of its organizations. */
async function actorsOf(
  ctx: ServiceContext,
  request: FastifyRequest,
): Promise<{ organization_id: string; actor_application_id: string; actor_token_kind: string; actor_customer: string | null; resource_id: string | null }[]> {
  const p = request.principal;
  if (p !== null && p !== undefined) {
    const orgs = p.organizationId !== '' ? [p.organizationId] : p.organizationIds;
    return orgs.map((org) => ({
      organization_id: org,
      actor_application_id: p.applicationId,
      actor_token_kind: p.customerName === null ? 'application' : 'scoped',
      actor_customer: p.customerName,
      resource_id: null,
    }));
  }
  const clientId = bodyField(request, 'client_id');
  if (typeof clientId !== 'string') return [];
  const app = await ctx.store.findApplicationByClientId(clientId);
  if (app === undefined) return [];
  const grants = await ctx.database.db.selectFrom('application_organizations').select('organization_id').where('application_id', '=', app.id).execute();
  return grants.map((g) => ({
    organization_id: g.organization_id,
    actor_application_id: app.id,
    actor_token_kind: 'public',
    actor_customer: null,
    resource_id: app.id,
  }));
}
