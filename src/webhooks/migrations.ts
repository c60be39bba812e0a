/**
 * Webhooks in, storage beyond the events group's tables (src/events/migrations.ts):
 *
 * webhook_attributions gains the memory of failed resolutions — `failures` (checks that failed
 * in a row; 0 once resolved) and `retry_at` (when the background resolver may ask again), so a
 * broken connector is asked with backoff instead of on every delivery (attribution.ts).
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

/** Runs after the events group (it alters its table). */
export const webhooksInMigrations: MigrationGroup = { name: 'webhooks_in', migrations: { '001_attribution_retry': m001 } };

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
