/**
 * GET /api/v1/audit-events: the caller's organization's audit log (audit-log.ts), newest first,
 * with filters and cursor paging; its request/response schemas and OpenAPI paths.
 */
import type { FastifyInstance } from 'fastify';
import type { AuditLog, AuditQuery } from '../ops/audit-log.ts';
import { principalOf } from '../auth/authentication.ts';
import type { Schema } from '../http/schemas.ts';

export const AUDIT_EVENTS_PATH = '/api/v1/audit-events';

export const AuditQuerySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    action: { type: 'string', maxLength: 100, description: 'Only this action (e.g. connector.created)' },
    resource_type: { type: 'string', maxLength: 100, description: 'Only this resource type: application, customer, connector, webhook_endpoint' },
    resource_id: { type: 'string', maxLength: 200, description: 'Only events about this resource' },
    actor: { type: 'string', maxLength: 200, description: 'Only events of this application (its id)' },
    since: { type: 'string', format: 'date-time', description: 'Events at or after this time' },
    until: { type: 'string', format: 'date-time', description: 'Events before this time' },
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    cursor: { type: 'string', maxLength: 500, description: 'meta.cursor of the previous page' },
  },
};

export const AuditEventSchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'organization_id',
    'created_at',
    'action',
    'outcome',
    'resource_type',
    'resource_id',
    'actor_application_id',
    'actor_token_kind',
    'actor_customer',
    'ip',
    'request_id',
    'details',
  ],
  properties: {
    id: { type: 'string' },
    organization_id: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    action: {
      type: 'string',
      description:
        'token.issued, scoped_token.issued, widget_token.issued, connect_session.created, connector.created, connector.updated, connector.reauthorized, connector.deleted, sync.started, oauth.initiated, oauth.completed, webhook_endpoint.created, webhook_endpoint.deleted, webhook_subscription.created',
    },
    outcome: { enum: ['success', 'refused'] },
    resource_type: { type: 'string' },
    resource_id: { type: ['string', 'null'] },
    actor_application_id: { type: ['string', 'null'] },
    actor_token_kind: {
      enum: ['application', 'scoped', 'public'],
      description: 'application: its own token; scoped: a one-customer token; public: no token (token endpoint, OAuth callback)',
    },
    actor_customer: { type: ['string', 'null'], description: "A scoped token's customer" },
    ip: { type: ['string', 'null'] },
    request_id: { type: ['string', 'null'] },
    details: { type: 'object', additionalProperties: true, description: 'Non-secret facts about the resource (never credentials, tokens or secrets)' },
  },
};

export const AuditEventListSchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['data', 'meta'],
  properties: {
    data: { type: 'array', items: AuditEventSchema },
    meta: {
      type: 'object',
      additionalProperties: false,
      required: ['cursor', 'has_more'],
      properties: { cursor: { type: ['string', 'null'] }, has_more: { type: 'boolean' } },
    },
  },
};

export function auditRoutes(log: AuditLog) {
  return async function register(app: FastifyInstance): Promise<void> {
    app.get<{ Querystring: AuditQuery }>(
      AUDIT_EVENTS_PATH,
      { schema: { querystring: AuditQuerySchema, response: { 200: AuditEventListSchema } } },
      async (request) => log.list(principalOf(request).organizationId, request.query),
    );
  };
}

export function auditOpenApiPaths(h: {
  json: (s: Schema) => Schema;
  ref: (name: string) => Schema;
  problems: (...s: number[]) => Record<string, Schema>;
  orgHeader: Schema;
  authed: number[];
}): Record<string, Schema> {
  const query = Object.entries((AuditQuerySchema['properties'] ?? {}) as Record<string, Schema>).map(([name, s]) => ({
    name,
    in: 'query',
    required: false,
    description: s['description'],
    schema: s,
  }));
  return {
    [AUDIT_EVENTS_PATH]: {
      get: {
        operationId: 'listAuditEvents',
        summary: "The organization's audit log, newest first: control-plane actions with who, what, which resource, when, from where (no secrets)",
        parameters: [...query, h.orgHeader],
        responses: { 200: { description: 'One page of events', content: h.json(h.ref('AuditEventList')) }, ...h.problems(...h.authed) },
      },
    },
  };
}
