/**
 * Tables of the hosted service (migration group "service"): organizations, applications and
 * their grants, access tokens, connectors with encrypted credentials, and the two single-use
 * records of the service-side OAuth flow.
 *
 * Portable across SQLite and PostgreSQL by construction: ids are text (UUIDs), timestamps are
 * ISO 8601 UTC text from Date#toISOString (fixed width, so text order is time order and `<`/`>`
 * compare them correctly in both), secrets are stored only as sha256 hex or as AES-GCM sealed
 * base64 with their key id.
 */
import type { Generated, Kysely, Migration } from 'kysely';
import type { MigrationGroup } from './database.ts';

export interface OrganizationsTable {
  id: string;
  name: string;
  created_at: string;
}

export interface ApplicationsTable {
  id: string;
  client_id: string;
  /** sha256 hex of the client secret (see src/service/auth/secrets.ts for why not scrypt). */
  client_secret_hash: string;
  name: string;
  created_at: string;
  /** The execute/error envelope the application's calls get: 'switchboard' (default) or 'airbyte' (src/service/http/airbyte-envelope.ts). */
  response_envelope: Generated<string>;
  /** What the pass-through proxy lets the application do: 'on' (default), 'read' (GET and HEAD only) or 'off' (src/service/auth/proxy-access.ts). */
  proxy_access: Generated<string>;
}

export interface ApplicationOrganizationsTable {
  application_id: string;
  organization_id: string;
  created_at: string;
}

export interface AccessTokensTable {
  /** sha256 hex of the opaque bearer token. */
  token_hash: string;
  application_id: string;
  expires_at: string;
  created_at: string;
  /** Set on a scoped token: the one organization and customer it may act for (null: the application's full access). */
  organization_id: string | null;
  customer_name: string | null;
}

export interface ConnectorsTable {
  id: string;
  organization_id: string;
  customer_name: string;
  connector_type: string;
  name: string;
  auth_variant: string;
  credentials_key_id: string;
  credentials_ciphertext: string;
  created_at: string;
  updated_at: string;
  /** active, auth_failed (the upstream refused the credentials) or error (the last check failed otherwise). */
  status: Generated<string>;
  /** When the credential check last ran. */
  last_checked_at: string | null;
  /** JSON {code, message, at} of the last failure that set the status; null while active. */
  last_error: string | null;
}

export interface OAuthStatesTable {
  /** sha256 hex of the `state` sent to the provider. */
  state_hash: string;
  organization_id: string;
  application_id: string;
  customer_name: string;
  connector_type: string;
  redirect_url: string;
  /** JSON of the variant's pre-consent credential fields given to initiate ({"subdomain":"acme"}), or null. Non-secret by definition. */
  credentials: string | null;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

export interface OAuthSecretsTable {
  /** sha256 hex of the secret_id handed to the caller's redirect_url. */
  id_hash: string;
  organization_id: string;
  customer_name: string;
  connector_type: string;
  auth_variant: string;
  key_id: string;
  /** Sealed tokens; emptied once the secret is used. */
  ciphertext: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

/** The service's tables, for Kysely<ServiceTables>. */
export interface ServiceTables {
  organizations: OrganizationsTable;
  applications: ApplicationsTable;
  application_organizations: ApplicationOrganizationsTable;
  access_tokens: AccessTokensTable;
  connectors: ConnectorsTable;
  oauth_states: OAuthStatesTable;
  oauth_secrets: OAuthSecretsTable;
}

const m0001: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('organizations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('applications')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'text', (c) => c.notNull().unique())
      .addColumn('client_secret_hash', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('application_organizations')
      .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id').onDelete('cascade'))
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('application_organizations_pk', ['application_id', 'organization_id'])
      .execute();
    await db.schema
      .createTable('access_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('application_id', 'text', (c) => c.notNull().references('applications.id').onDelete('cascade'))
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('access_tokens_application_idx').on('access_tokens').columns(['application_id', 'expires_at']).execute();
    await db.schema
      .createTable('connectors')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('customer_name', 'text', (c) => c.notNull())
      .addColumn('connector_type', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('auth_variant', 'text', (c) => c.notNull())
      .addColumn('credentials_key_id', 'text', (c) => c.notNull())
      .addColumn('credentials_ciphertext', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    // Listing is keyset-paginated by (created_at, id) within an organization.
    await db.schema.createIndex('connectors_org_created_idx').on('connectors').columns(['organization_id', 'created_at', 'id']).execute();
    await db.schema.createIndex('connectors_org_customer_idx').on('connectors').columns(['organization_id', 'customer_name']).execute();
    await db.schema
      .createTable('oauth_states')
      .addColumn('state_hash', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('application_id', 'text', (c) => c.notNull())
      .addColumn('customer_name', 'text', (c) => c.notNull())
      .addColumn('connector_type', 'text', (c) => c.notNull())
      .addColumn('redirect_url', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('oauth_secrets')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('customer_name', 'text', (c) => c.notNull())
      .addColumn('connector_type', 'text', (c) => c.notNull())
      .addColumn('auth_variant', 'text', (c) => c.notNull())
      .addColumn('key_id', 'text', (c) => c.notNull())
      .addColumn('ciphertext', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('oauth_states_expires_idx').on('oauth_states').column('expires_at').execute();
    await db.schema.createIndex('oauth_secrets_expires_idx').on('oauth_secrets').column('expires_at').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    for (const t of ['oauth_secrets', 'oauth_states', 'connectors', 'access_tokens', 'application_organizations', 'applications', 'organizations']) {
      await db.schema.dropTable(t).ifExists().execute();
    }
  },
};

/** Connector health: the status set by credential checks and by upstream 401/403 answers. */
const m0002: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('connectors')
      .addColumn('status', 'text', (c) => c.notNull().defaultTo('active'))
      .execute();
    await db.schema.alterTable('connectors').addColumn('last_checked_at', 'text').execute();
    await db.schema.alterTable('connectors').addColumn('last_error', 'text').execute();
    await db.schema.createIndex('connectors_org_status_idx').on('connectors').columns(['organization_id', 'status']).execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.dropIndex('connectors_org_status_idx').ifExists().execute();
    for (const c of ['last_error', 'last_checked_at', 'status']) await db.schema.alterTable('connectors').dropColumn(c).execute();
  },
};

/** Scoped access tokens (one customer) and the per-application response envelope. */
const m0003: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('access_tokens').addColumn('organization_id', 'text').execute();
    await db.schema.alterTable('access_tokens').addColumn('customer_name', 'text').execute();
    await db.schema
      .alterTable('applications')
      .addColumn('response_envelope', 'text', (c) => c.notNull().defaultTo('switchboard'))
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('applications').dropColumn('response_envelope').execute();
    for (const c of ['customer_name', 'organization_id']) await db.schema.alterTable('access_tokens').dropColumn(c).execute();
  },
};

/** The pre-consent credential fields of an OAuth flow (a Zendesk subdomain), kept with its state. */
const m0004: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('oauth_states').addColumn('credentials', 'text').execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('oauth_states').dropColumn('credentials').execute();
  },
};

/** The per-application switch of the pass-through proxy (on, read, off). */
const m0005: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .alterTable('applications')
      .addColumn('proxy_access', 'text', (c) => c.notNull().defaultTo('on'))
      .execute();
  },
  async down(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('applications').dropColumn('proxy_access').execute();
  },
};

/** The service's migration group; run it before any other group whose tables reference connectors. */
export const SERVICE_MIGRATIONS: MigrationGroup = {
  name: 'service',
  migrations: {
    '0001_service_core': m0001,
    '0002_connector_status': m0002,
    '0003_scoped_tokens': m0003,
    '0004_oauth_state_credentials': m0004,
    '0005_proxy_access': m0005,
  },
};
