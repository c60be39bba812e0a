/**
 * The events endpoints in the OpenAPI document: the change feed (and, with it, the schemas the
 * routes validate and serialize with).
 */
import type { Schema } from '../service/schemas.ts';
import { MAX_CHANGES_LIMIT } from '../search/record-store.ts';

export const ChangesQuerySchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['entity'],
  properties: {
    entity: { type: 'string', minLength: 1, maxLength: 200, description: 'A synced entity of the connector (its manifest has `sync`)' },
    modified_after: { type: 'string', maxLength: 100, description: 'A `_metadata.cursor` (or `next_cursor`) this feed returned: only changes after it. Omitted: from the first change kept.' },
    limit: { type: 'integer', minimum: 1, maximum: MAX_CHANGES_LIMIT, description: `Entries per page; default 100, at most ${MAX_CHANGES_LIMIT}` },
  },
};

export const ChangeMetadataSchema: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['action', 'first_seen_at', 'last_modified_at', 'deleted_at', 'cursor'],
  properties: {
    action: { type: 'string', enum: ['added', 'updated', 'deleted'], description: 'added: new to the store (or back after a deletion); updated: its payload changed (an unchanged payload is no change); deleted: a tombstone with the last payload' },
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
    next_cursor: { type: ['string', 'null'], description: 'The cursor of the last entry (or the one asked from when the page is empty; null for an empty feed): ask again with modified_after=next_cursor' },
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

export const eventsOpenApiSchemas: Record<string, Schema> = { ChangePage: ChangePageSchema };

export function eventsOpenApiPaths(h: OpenApiHelpers): Record<string, Schema> {
  const query = Object.entries((ChangesQuerySchema['properties'] ?? {}) as Record<string, Schema>).map(([name, s]) => ({ name, in: 'query', required: name === 'entity', description: s['description'], schema: s }));
  return {
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
