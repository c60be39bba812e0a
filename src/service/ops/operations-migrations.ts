/**
 * Tables of the service's operations features (migration group "operations", applied after
 * "service"), the same on SQLite and PostgreSQL; times are ISO 8601 UTC text like everywhere.
 *
 * connector_refresh  one row per OAuth connector that has needed a token refresh: the lease that
 *                    lets one instance at a time refresh it, the attempts of the current hour,
 *                    the backoff after transient failures, and the credentials version (sha256
 *                    of the sealed credentials) a token endpoint refused (src/service/connectors/refresh-coordinator.ts).
 * audit_events       the audit log of control-plane actions (src/service/ops/audit-log.ts).
 * access_permissions the allow-lists of applications and scoped tokens (src/service/auth/permissions.ts).
 */
import type { Kysely, Migration } from 'kysely';
import type { MigrationGroup } from '../../store/index.ts';

export interface ConnectorRefreshTable {
  connector_id: string;
  /** Who holds the refresh lease (a random id per attempt), and until when; null: nobody. */
  lease_holder: string | null;
  lease_until: string | null;
  /** Start of the current hour-long window of attempts, and how many attempts it has seen. */
  window_start: string;
  window_attempts: number;
  /** The credentials version the failure counters below are about. */
  credentials_version: string;
  /** Consecutive transient failures of that version, and when the next attempt may start. */
  failures: number;
  next_attempt_at: string | null;
  /** Set when the token endpoint refused that version: no refresh until the credentials change. */
  refused: number;
  /** JSON {code, oauth_error?, upstream_status?, at} of the last failure (never a token or an upstream body). */
  last_error: string | null;
}

/** One control-plane action (audit-log.ts); append-only, deleted only past the retention. */
export interface AuditEventsTable {
  id: string;
  organization_id: string;
  created_at: string;
  action: string;
  /** success, or refused (an OAuth flow the provider or the service refused). */
  outcome: string;
  resource_type: string;
  resource_id: string | null;
  actor_application_id: string | null;
  /** application, scoped (one customer), public (no token: the OAuth callback, the token endpoint), connect_session (the Connect UI pages), admin_cli. */
  actor_token_kind: string;
  actor_customer: string | null;
  ip: string | null;
  request_id: string | null;
  /** JSON object of non-secret facts (connector type, name, events...). */
  details: string;
}

/** One allow-list (permissions.ts): of an application (`app:<id>`) or of a scoped token (`tok_…`). */
export interface AccessPermissionsTable {
  subject_id: string;
  application_id: string;
  /** JSON AccessRules {connector_types?, entities?, actions?, read_only?}. */
  rules: string;
  updated_at: string;
}

export interface OperationsTables {
  connector_refresh: ConnectorRefreshTable;
  audit_events: AuditEventsTable;
  access_permissions: AccessPermissionsTable;
}

const m0001: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('connector_refresh')
      .addColumn('connector_id', 'text', (c) => c.primaryKey().references('connectors.id').onDelete('cascade'))
      .addColumn('lease_holder', 'text')
      .addColumn('lease_until', 'text')
      .addColumn('window_start', 'text', (c) => c.notNull())
      .addColumn('window_attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('credentials_version', 'text', (c) => c.notNull())
      .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'text')
      .addColumn('refused', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_error', 'text')
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('connector_refresh').ifExists().execute();
  },
};

const m0002: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('audit_events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('resource_type', 'text', (c) => c.notNull())
      .addColumn('resource_id', 'text')
      .addColumn('actor_application_id', 'text')
      .addColumn('actor_token_kind', 'text', (c) => c.notNull())
      .addColumn('actor_customer', 'text')
      .addColumn('ip', 'text')
      .addColumn('request_id', 'text')
      .addColumn('details', 'text', (c) => c.notNull())
      .execute();
    // Listing is keyset-paginated by (created_at, id) within an organization; retention deletes by created_at.
    await db.schema.createIndex('audit_events_org_created_idx').on('audit_events').columns(['organization_id', 'created_at', 'id']).execute();
    await db.schema.createIndex('audit_events_created_idx').on('audit_events').column('created_at').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('audit_events').ifExists().execute();
  },
};

const m0003: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('access_permissions')
      .addColumn('subject_id', 'text', (c) => c.primaryKey())
      .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id').onDelete('cascade'))
      .addColumn('rules', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('access_permissions').ifExists().execute();
  },
};

/** The group; run it after SERVICE_MIGRATIONS (its tables reference connectors). */
export const OPERATIONS_MIGRATIONS: MigrationGroup = {
  name: 'operations',
  migrations: { '0001_connector_refresh': m0001, '0002_audit_events': m0002, '0003_access_permissions': m0003 },
};
