/**
 * Tables of the sync engine (migration group "sync"), the same on SQLite and PostgreSQL.
 * Times are ISO 8601 UTC strings (`Date#toISOString`), which compare correctly as text in both.
 *
 * sync_state     one row per connector: status, the current run, the lease that makes one
 *                instance at a time run a connector's sync, and the schedule.
 * sync_entities  one row per (connector, entity): the checkpoint of the current run (the next
 *                page's params), the incremental high-water mark, and counts.
 * sync_schedulers the instances running the scheduler, and when each was last seen.
 */
import { type Kysely, type Migration } from 'kysely';
import type { MigrationGroup } from '../store/database.ts';

const m001: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('sync_state')
      .addColumn('connector_id', 'text', (c) => c.primaryKey())
      .addColumn('status', 'text', (c) => c.notNull().defaultTo('idle'))
      .addColumn('run_id', 'text')
      .addColumn('run_complete', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('run_full', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('started_at', 'text')
      .addColumn('finished_at', 'text')
      .addColumn('last_error', 'text')
      .addColumn('interval_ms', 'integer')
      .addColumn('next_run_at', 'text')
      .addColumn('requested_full', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('runs_since_full', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('lease_owner', 'text')
      .addColumn('lease_until', 'text')
      .execute();
    await db.schema.createIndex('sync_state_due').on('sync_state').columns(['next_run_at']).execute();
    await db.schema
      .createTable('sync_entities')
      .addColumn('connector_id', 'text', (c) => c.notNull())
      .addColumn('entity', 'text', (c) => c.notNull())
      .addColumn('checkpoint', 'text')
      .addColumn('done', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('high_water', 'text')
      .addColumn('run_high_water', 'text')
      .addColumn('records_seen', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('records_deleted', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_synced_at', 'text')
      .addPrimaryKeyConstraint('sync_entities_pk', ['connector_id', 'entity'])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('sync_entities').execute();
    await db.schema.dropTable('sync_state').execute();
  },
};

/** 002: per entity, how many of the records a run saw were new or changed (sync.completed counts, kept across a resumption). */
const m002: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('sync_entities')
      .addColumn('records_added', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('sync_entities')
      .addColumn('records_updated', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};

/** 003: the instances running the scheduler, each with when it was last seen (scheduler-heartbeat.ts). */
const m003: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('sync_schedulers')
      .addColumn('instance_id', 'text', (c) => c.primaryKey())
      .addColumn('seen_at', 'text', (c) => c.notNull())
      .execute();
  },
};

export const syncMigrations: MigrationGroup = { name: 'sync', migrations: { '001_sync_state': m001, '002_change_counts': m002, '003_schedulers': m003 } };

export interface SyncStateRow {
  connector_id: string;
  status: string;
  run_id: string | null;
  run_complete: number;
  run_full: number;
  started_at: string | null;
  finished_at: string | null;
  last_error: string | null;
  interval_ms: number | null;
  next_run_at: string | null;
  requested_full: number;
  runs_since_full: number;
  lease_owner: string | null;
  lease_until: string | null;
}

export interface SyncEntityRow {
  connector_id: string;
  entity: string;
  checkpoint: string | null;
  done: number;
  high_water: string | null;
  run_high_water: string | null;
  records_seen: number;
  records_deleted: number;
  records_added: number;
  records_updated: number;
  last_synced_at: string | null;
}

export interface SyncTables {
  sync_state: SyncStateRow;
  sync_entities: SyncEntityRow;
  sync_schedulers: { instance_id: string; seen_at: string };
}
