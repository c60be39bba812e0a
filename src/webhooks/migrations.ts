/**
 * Webhooks in, storage beyond the events group's tables (src/events/migrations.ts):
 *
 * webhook_attributions gains the memory of failed resolutions — `failures` (checks that failed
 * in a row; 0 once resolved) and `retry_at` (when the background resolver may ask again), so a
 * broken connector is asked with backoff instead of on every delivery (attribution.ts).
 *
 * webhook_subscriptions (002): the connectors' webhook subscriptions whose secret is their own,
 * each secret sealed with the key ring (subscriptions.ts).
 */
import type { Kysely, Migration } from 'kysely';
import type { MigrationGroup } from '../store/database.ts';

const m001: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('webhook_attributions')
      .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('webhook_attributions').addColumn('retry_at', 'text').execute();
  },
};

const m002: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('webhook_subscriptions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('connector_id', 'text', (c) => c.notNull())
      .addColumn('connector_type', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('secret_key_id', 'text')
      .addColumn('secret_ciphertext', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text')
      .execute();
    await db.schema.createIndex('webhook_subscriptions_connector').on('webhook_subscriptions').columns(['connector_id', 'state']).execute();
  },
};

/** Runs after the events group (it alters its table). */
export const webhooksInMigrations: MigrationGroup = {
  name: 'webhooks_in',
  migrations: { '001_attribution_retry': m001, '002_subscriptions': m002 },
};

export interface WebhooksInTables {
  webhook_attributions: {
    connector_id: string;
    connector_type: string;
    attribution_key: string | null;
    resolved_at: string;
    failures: number;
    retry_at: string | null;
  };
  connectors: { id: string; connector_type: string; status: string; organization_id: string; created_at: string };
}
