/**
 * The webhook event types (a leaf module: the OpenAPI document names them without loading the
 * outbox and its database drivers).
 */
export const EVENT_TYPES = ['connector.created', 'connector.auth_failed', 'connector.reconnected', 'sync.completed', 'sync.failed', 'records.changed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
