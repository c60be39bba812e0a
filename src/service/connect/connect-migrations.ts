/**
 * The Connect UI's table (migration group "connect"): one row per connect session.
 *
 * The session token handed to the API caller and the browser secret set as a cookie when the
 * page exchanges that token are stored only as sha256 hex. Timestamps are ISO 8601 UTC text,
 * like the service's other tables, so they compare as text on SQLite and PostgreSQL alike.
 */
import type { Kysely, Migration } from 'kysely';
import type { MigrationGroup } from '../../store/index.ts';

export interface ConnectSessionsTable {
  id: string;
  /** sha256 hex of the session token (the URL fragment). */
  token_hash: string;
  /** sha256 hex of the cookie set when the page exchanged the token (once); null before. */
  browser_hash: string | null;
  organization_id: string;
  application_id: string;
  customer_name: string;
  /** JSON array of connector types the page may create, re-authorize and check. */
  allowed_types: string;
  redirect_url: string | null;
  expires_at: string;
  exchanged_at: string | null;
  /**
   * When a submit claimed the session to make its connection (one atomic UPDATE; the claim is
   * released when that attempt fails, and lapses after CLAIM_TTL_MS if its process died); null
   * when no connection is being made.
   */
  claimed_at: string | null;
  /** When a connection finished; the session is used from then on. */
  completed_at: string | null;
  /** The connector the session created or re-authorized. */
  connector_id: string | null;
  created_at: string;
  /** A widget token's session: the one origin that may frame its pages and receive its result (null: the deployment's settings). */
  allowed_origin: string | null;
}

export interface ConnectTables {
  connect_sessions: ConnectSessionsTable;
}

const m0001: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('connect_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('browser_hash', 'text', (c) => c.unique())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('application_id', 'text', (c) => c.notNull())
      .addColumn('customer_name', 'text', (c) => c.notNull())
      .addColumn('allowed_types', 'text', (c) => c.notNull())
      .addColumn('redirect_url', 'text')
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('exchanged_at', 'text')
      .addColumn('completed_at', 'text')
      .addColumn('connector_id', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('connect_sessions_expires_idx').on('connect_sessions').column('expires_at').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropTable('connect_sessions').ifExists().execute();
  },
};

const m0002: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('connect_sessions').addColumn('claimed_at', 'text').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('connect_sessions').dropColumn('claimed_at').execute();
  },
};

/** Run after the service group (connect_sessions references organizations). */
/** Widget tokens (Airbyte's name): a session restricted to one embedding origin. */
const m0003: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('connect_sessions').addColumn('allowed_origin', 'text').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('connect_sessions').dropColumn('allowed_origin').execute();
  },
};

export const connectMigrations: MigrationGroup = {
  name: 'connect',
  migrations: { '0001_connect_sessions': m0001, '0002_connect_session_claim': m0002, '0003_widget_origin': m0003 },
};
