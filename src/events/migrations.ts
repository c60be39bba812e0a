/**
 * Tables of events (migration group "events"), the same on SQLite and PostgreSQL; times are ISO
 * 8601 UTC text, which compares correctly in both.
 *
 * webhook_receipts      vendor deliveries seen (type, delivery id): a second one is a replay
 * webhook_attributions  per connector, the vendor workspace/app id its deliveries name
 * webhook_endpoints     an organization's registered endpoints: url, events, sealed secret
 * event_outbox          every event the service emits, once (its id is the event id)
 * webhook_deliveries    the outbox per endpoint: one row per (endpoint, event) — the unique
 *                       pair deduplicates — with its state, attempts, next attempt and claim
 * webhook_attempts      the delivery log: every attempt with its answer
 */
import type { Kysely, Migration } from 'kysely';
import type { MigrationGroup } from '../store/database.ts';

const m001: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('webhook_receipts')
      .addColumn('connector_type', 'text', (c) => c.notNull())
      .addColumn('delivery_id', 'text', (c) => c.notNull())
      .addColumn('received_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_receipts_pk', ['connector_type', 'delivery_id'])
      .execute();
    await db.schema.createIndex('webhook_receipts_age').on('webhook_receipts').columns(['received_at']).execute();
    await db.schema
      .createTable('webhook_attributions')
      .addColumn('connector_id', 'text', (c) => c.primaryKey())
      .addColumn('connector_type', 'text', (c) => c.notNull())
      .addColumn('attribution_key', 'text')
      .addColumn('resolved_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('webhook_attributions_key').on('webhook_attributions').columns(['connector_type', 'attribution_key']).execute();
    await db.schema
      .createTable('webhook_endpoints')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('events', 'text', (c) => c.notNull())
      .addColumn('secret_key_id', 'text', (c) => c.notNull())
      .addColumn('secret_ciphertext', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('webhook_endpoints_org').on('webhook_endpoints').columns(['organization_id']).execute();
    await db.schema
      .createTable('event_outbox')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('endpoint_id', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'text')
      .addColumn('claimed_by', 'text')
      .addColumn('claimed_until', 'text')
      .addColumn('last_status', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('delivered_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('webhook_deliveries_once', ['endpoint_id', 'event_id'])
      .execute();
    await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
    await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'created_at']).execute();
    await db.schema
      .createTable('webhook_attempts')
      .addColumn('delivery_id', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('instance', 'text', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('error', 'text')
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'attempt'])
      .execute();
  },
};

export const eventsMigrations: MigrationGroup = { name: 'events', migrations: { '001_events': m001 } };

export interface EventsTables {
  webhook_receipts: { connector_type: string; delivery_id: string; received_at: string };
  webhook_attributions: { connector_id: string; connector_type: string; attribution_key: string | null; resolved_at: string };
  webhook_endpoints: { id: string; organization_id: string; url: string; events: string; secret_key_id: string; secret_ciphertext: string; created_at: string };
  event_outbox: { id: string; organization_id: string; type: string; payload: string; created_at: string };
  webhook_deliveries: {
    id: string;
    endpoint_id: string;
    event_id: string;
    status: 'pending' | 'delivered' | 'failed';
    attempts: number;
    next_attempt_at: string | null;
    claimed_by: string | null;
    claimed_until: string | null;
    last_status: number | null;
    last_error: string | null;
    delivered_at: string | null;
    created_at: string;
  };
  webhook_attempts: {
    delivery_id: string;
    attempt: number;
    at: string;
    instance: string;
    status_code: number | null;
    error: string | null;
    duration_ms: number;
  };
}
