/**
 * The events endpoints in the OpenAPI document: the change feed (and, with it, the schemas the
 * routes validate and serialize with).
 */
// Leaf modules: the OpenAPI document (built by codegen) loads no store or database driver.
import { MAX_CHANGES_LIMIT } from '../search/change-limits.ts';
import { EVENT_TYPES } from './event-types.ts';

/** A JSON Schema object, as in the service's schemas (events sit below the service and import nothing of it). */
type Schema = Record<string, unknown>;

export const CreateWebhookEndpointSchema: Schema = {
  title: 'CreateWebhookEndpoint',
  type: 'object',
  additionalProperties: false,
  required: ['url', 'events'],
  properties: {
    url: {
      type: 'string',
      minLength: 1,
      maxLength: 2048,
      description: 'Where events are POSTed (http or https). Link-local and metadata addresses are refused (webhook_url_refused), as for connectors.',
    },
    events: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: [...EVENT_TYPES] }, description: 'Event types sent to it' },
  },
};

export const WebhookSubscriptionsSchema: Schema = {
  title: 'WebhookSubscriptionsRequest',
  type: 'object',
  additionalProperties: false,
  required: ['params', 'events'],
  properties: {
    params: {
      type: 'object',
      additionalProperties: true,
      description: "Params of the type's webhooks create action besides event and url (monday: {board_id})",
    },
    events: {
      type: 'array',
      minItems: 1,
      maxItems: 20,
      uniqueItems: true,
      items: { type: 'string', minLength: 1 },
      description: 'The vendor events to subscribe to (monday: create_item, change_column_value, change_name, item_deleted, item_archived, create_update)',
    },
  },
};

export const EndpointIdParamsSchema: Schema = { type: 'object', required: ['endpoint_id'], properties: { endpoint_id: { type: 'string', maxLength: 100 } } };

export const DeliveriesQuerySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'integer', minimum: 1, maximum: 200, description: 'Deliveries, newest first; default 50' } },
};

const WebhookEndpointSchema: Schema = {
  title: 'WebhookEndpoint',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'url', 'events', 'created_at'],
  properties: {
    id: { type: 'string' },
    url: { type: 'string' },
    events: { type: 'array', items: { type: 'string', enum: [...EVENT_TYPES] } },
    created_at: { type: 'string', format: 'date-time' },
    secret: { type: 'string', description: 'Only in the answer to POST: the key of the Switchboard-Signature HMAC. Store it; it is never shown again.' },
  },
};

const WebhookDeliverySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'event_id', 'event_type', 'status', 'attempts', 'next_attempt_at', 'last_status', 'last_error', 'delivered_at', 'created_at', 'attempt_log'],
  properties: {
    id: { type: 'string' },
    event_id: { type: 'string' },
    event_type: { type: 'string' },
    status: { type: 'string', enum: ['pending', 'delivered', 'failed'], description: 'failed: every attempt for a day failed' },
    attempts: { type: 'integer' },
    next_attempt_at: { type: ['string', 'null'], format: 'date-time' },
    last_status: { type: ['integer', 'null'], description: "The endpoint's last HTTP status (null: no answer)" },
    last_error: { type: ['string', 'null'] },
    delivered_at: { type: ['string', 'null'], format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    attempt_log: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['attempt', 'at', 'status_code', 'error', 'duration_ms'],
        properties: {
          attempt: { type: 'integer' },
          at: { type: 'string', format: 'date-time' },
          status_code: { type: ['integer', 'null'] },
          error: { type: ['string', 'null'] },
          duration_ms: { type: 'integer' },
        },
      },
    },
  },
};

export const ChangesQuerySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['entity'],
  properties: {
    entity: { type: 'string', minLength: 1, maxLength: 200, description: 'A synced entity of the connector (its manifest has `sync`)' },
    modified_after: {
      type: 'string',
      maxLength: 100,
      description: 'A `_metadata.cursor` (or `next_cursor`) this feed returned: only changes after it. Omitted: from the first change kept.',
    },
    limit: { type: 'integer', minimum: 1, maximum: MAX_CHANGES_LIMIT, description: `Entries per page; default 100, at most ${MAX_CHANGES_LIMIT}` },
  },
};

export const ChangeMetadataSchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['action', 'first_seen_at', 'last_modified_at', 'deleted_at', 'cursor'],
  properties: {
    action: {
      type: 'string',
      enum: ['added', 'updated', 'deleted'],
      description:
        'added: new to the store (or back after a deletion); updated: its payload changed (an unchanged payload is no change); deleted: a tombstone with the last payload',
    },
    first_seen_at: { type: 'string', format: 'date-time' },
    last_modified_at: { type: 'string', format: 'date-time', description: 'When the store last saw this record change' },
    deleted_at: { type: ['string', 'null'], format: 'date-time' },
    cursor: { type: 'string', description: 'Pass as modified_after to get the changes after this one' },
  },
};

export const ChangePageSchema: Schema = {
  title: 'ChangePage',
  type: 'object',
  additionalProperties: false,
  required: ['data', 'next_cursor', 'has_more'],
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: true,
        required: ['_metadata'],
        description: 'The record as stored (the upstream record; for a deletion its last payload), with `_metadata`',
        properties: { _metadata: ChangeMetadataSchema },
      },
    },
    next_cursor: {
      type: ['string', 'null'],
      description:
        'The cursor of the last entry (or the one asked from when the page is empty; null for an empty feed): ask again with modified_after=next_cursor',
    },
    has_more: { type: 'boolean', description: 'More changes are waiting: ask again now' },
  },
};

interface OpenApiHelpers {
  json: (s: Schema) => Schema;
  ref: (name: string) => Schema;
  problems: (...s: number[]) => Record<string, Schema>;
  orgHeader: Schema;
  connectorIdParam: Schema;
  authed: number[];
}

export const eventsOpenApiSchemas: Record<string, Schema> = {
  ChangePage: ChangePageSchema,
  CreateWebhookEndpoint: CreateWebhookEndpointSchema,
  WebhookEndpoint: WebhookEndpointSchema,
  WebhookEndpointList: {
    type: 'object',
    additionalProperties: false,
    required: ['data'],
    properties: { data: { type: 'array', items: WebhookEndpointSchema } },
  },
  WebhookDeliveryList: {
    type: 'object',
    additionalProperties: false,
    required: ['data'],
    properties: { data: { type: 'array', items: WebhookDeliverySchema } },
  },
};

const VENDOR_DESCRIPTION =
  "A vendor POSTs its webhook deliveries here (register this URL with the vendor). The connector type's manifest (webhooks section, docs/manifest.md) says how they are signed and attributed. Answers: 200 once applied (or acknowledged and ignored: a topic with no rule, no matching connector); 200 with the challenge echoed for a subscription handshake; at a connector's URL, for a type whose secret is each subscription's own (webhooks.subscription_secret from: handshake), 204 with the handshake's secret header echoed while the service makes that connector's subscription, 409 webhook_handshake_unexpected otherwise; 401 webhook_signature_invalid (unsigned, mis-signed) or webhook_replayed (a delivery id seen before, a timestamp outside the window) with nothing stored; 503 webhook_queue_full with Retry-After when too many are in progress.";

export function eventsOpenApiPaths(h: OpenApiHelpers): Record<string, Schema> {
  const query = Object.entries((ChangesQuerySchema['properties'] ?? {}) as Record<string, Schema>).map(([name, s]) => ({
    name,
    in: 'query',
    required: name === 'entity',
    description: s['description'],
    schema: s,
  }));
  const endpointId = { name: 'endpoint_id', in: 'path', required: true, schema: { type: 'string' } };
  const typeParam = { name: 'connector_type', in: 'path', required: true, schema: { type: 'string' } };
  const vendor = (operationId: string, extra: Schema[]): Schema => ({
    post: {
      operationId,
      summary: 'Vendor webhook deliveries in (public; verified by the vendor signature)',
      description: VENDOR_DESCRIPTION,
      security: [],
      parameters: [typeParam, ...extra],
      requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
      responses: {
        200: { description: 'Applied, acknowledged, or the challenge echoed', content: h.json({ type: 'object', additionalProperties: true }) },
        202: {
          description: "A delivery of several events (the manifest's webhooks.events), each applied or skipped: the outcome of each",
          content: h.json({ type: 'object', additionalProperties: true }),
        },
        204: { description: 'A subscription handshake (per-subscription secrets): the secret kept, its header echoed (X-Hook-Secret)' },
        ...h.problems(400, 401, 404, 409, 413, 501, 503),
      },
    },
    get: {
      operationId: `${operationId}Handshake`,
      summary: "A vendor's check of this URL with a challenge in the query (public)",
      description:
        "Some vendors verify a webhook URL with a GET carrying a challenge in the query (Dropbox's `?challenge=`): answered as the manifest's `webhooks.challenge` says, as text/plain with `X-Content-Type-Options: nosniff`. Anything else is a delivery without a body, refused by its signature check (401).",
      security: [],
      parameters: [typeParam, ...extra],
      responses: {
        200: { description: 'The challenge echoed', content: { 'text/plain': { schema: { type: 'string' } } } },
        ...h.problems(400, 401, 404, 501, 503),
      },
    },
  });
  return {
    '/api/v1/webhooks/{connector_type}': vendor('receiveVendorWebhook', []),
    '/api/v1/webhooks/{connector_type}/{connector_id}': vendor('receiveVendorWebhookForConnector', [{ ...h.connectorIdParam }]),
    '/api/v1/integrations/connectors/{connector_id}/webhook-subscriptions': {
      post: {
        operationId: 'createWebhookSubscriptions',
        summary:
          "Opt a connector in to its vendor's webhooks: one subscription per event (monday: create_webhook on a board), pointed at /api/v1/webhooks/{type}/{connector_id}",
        parameters: [h.connectorIdParam, h.orgHeader],
        requestBody: { required: true, content: h.json(WebhookSubscriptionsSchema) },
        responses: {
          201: {
            description: 'The subscriptions the vendor created, and the URL they post to',
            content: h.json({
              type: 'object',
              additionalProperties: false,
              required: ['data', 'url'],
              properties: { data: { type: 'array', items: { type: 'object', additionalProperties: true } }, url: { type: 'string' } },
            }),
          },
          ...h.problems(...h.authed, 404, 422, 424, 502, 503),
        },
      },
    },
    '/api/v1/webhook-endpoints': {
      post: {
        operationId: 'createWebhookEndpoint',
        summary: 'Register an endpoint for events; the answer carries its signing secret, once',
        parameters: [h.orgHeader],
        requestBody: { required: true, content: h.json(h.ref('CreateWebhookEndpoint')) },
        responses: { 201: { description: 'Registered', content: h.json(h.ref('WebhookEndpoint')) }, ...h.problems(...h.authed, 409) },
      },
      get: {
        operationId: 'listWebhookEndpoints',
        summary: "The organization's webhook endpoints",
        parameters: [h.orgHeader],
        responses: { 200: { description: 'Endpoints, oldest first', content: h.json(h.ref('WebhookEndpointList')) }, ...h.problems(...h.authed) },
      },
    },
    '/api/v1/webhook-endpoints/{endpoint_id}': {
      get: {
        operationId: 'getWebhookEndpoint',
        summary: 'One webhook endpoint',
        parameters: [endpointId, h.orgHeader],
        responses: { 200: { description: 'The endpoint', content: h.json(h.ref('WebhookEndpoint')) }, ...h.problems(...h.authed, 404) },
      },
      delete: {
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint and its delivery log',
        parameters: [endpointId, h.orgHeader],
        responses: { 204: { description: 'Deleted' }, ...h.problems(...h.authed, 404) },
      },
    },
    '/api/v1/webhook-endpoints/{endpoint_id}/deliveries': {
      get: {
        operationId: 'listWebhookDeliveries',
        summary: "The endpoint's delivery log, newest first: each event's delivery, its state and every attempt",
        parameters: [
          endpointId,
          {
            name: 'limit',
            in: 'query',
            required: false,
            schema: DeliveriesQuerySchema['properties'] !== undefined ? (DeliveriesQuerySchema['properties'] as Record<string, Schema>)['limit'] : {},
          },
          h.orgHeader,
        ],
        responses: { 200: { description: 'Deliveries', content: h.json(h.ref('WebhookDeliveryList')) }, ...h.problems(...h.authed, 404) },
      },
    },
    '/api/v1/integrations/connectors/{connector_id}/records': {
      get: {
        operationId: 'listRecordChanges',
        summary: 'Change feed: records of a synced entity added, updated or deleted after a cursor, oldest first',
        description:
          'Every write to the store (a sync page, a vendor webhook delivery) that changes a record moves it to the end of the feed. Deleted records stay as tombstones (action deleted, with their last payload) for SWITCHBOARD_TOMBSTONE_RETENTION_DAYS (default 30); a consumer that polls less often than that may miss deletions and should resync from no cursor.',
        parameters: [h.connectorIdParam, ...query, h.orgHeader],
        responses: { 200: { description: 'A page of changes', content: h.json(h.ref('ChangePage')) }, ...h.problems(...h.authed, 404) },
      },
    },
  };
}
