/**
 * Persistence of the hosted service over Kysely, identical on SQLite and PostgreSQL.
 *
 * Nothing here is cached in process: every read goes to the database, so several service
 * instances on one PostgreSQL database see one truth. Single-use records (OAuth states and
 * pending secrets) are consumed with one conditional `UPDATE ... WHERE used_at IS NULL ...
 * RETURNING`, which the database serializes: of two instances racing for the same row, exactly
 * one gets it back.
 */
import { CompiledQuery, type Compilable, type Insertable, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { ApplicationsTable, ConnectorsTable, OAuthSecretsTable, OAuthStatesTable, OrganizationsTable, ServiceTables } from './service-migrations.ts';

export type OrganizationRow = Selectable<OrganizationsTable>;
export type ApplicationRow = Selectable<ApplicationsTable>;
export type ConnectorRow = Selectable<ConnectorsTable>;
export type OAuthStateRow = Selectable<OAuthStatesTable>;
export type OAuthSecretRow = Selectable<OAuthSecretsTable>;

/** What a bearer token resolves to. */
export interface TokenPrincipal {
  applicationId: string;
  expiresAt: string;
  /** Organizations the application may act for (possibly empty); a scoped token's one organization, if still granted. */
  organizationIds: string[];
  /** A scoped token's customer (null: the application's full access). */
  customerName: string | null;
  /** The application's response envelope: 'switchboard' or 'airbyte'. */
  envelope: string;
  /** The application's proxy access: 'on', 'read' or 'off'. */
  proxyAccess: string;
}

/** Keyset position of a connector in list order. */
export interface ConnectorPosition {
  createdAt: string;
  id: string;
}

export interface ConnectorFilter {
  customerName?: string | undefined;
  connectorType?: string | undefined;
  status?: string | undefined;
  after?: ConnectorPosition | undefined;
  /** Rows to return; callers ask for one more than a page to learn whether more exist. */
  limit: number;
}

const PLACEHOLDERS = ['\u0000sb:p0', '\u0000sb:p1', '\u0000sb:p2'] as const;

/**
 * A query built and compiled once (with placeholder values), then run with real values put in
 * by position: the two lookups every authenticated request makes skip Kysely's per-call query
 * building and compilation. Compiled lazily for the database it first runs on.
 */
class PreparedQuery<R> {
  private sql: string | undefined;
  private template: readonly unknown[] = [];

  constructor(private readonly build: (db: Kysely<ServiceTables>, ...params: string[]) => Compilable<R>) {}

  async rows(db: Kysely<ServiceTables>, ...args: string[]): Promise<R[]> {
    if (this.sql === undefined) {
      const compiled = this.build(db, ...PLACEHOLDERS).compile();
      this.template = compiled.parameters;
      this.sql = compiled.sql;
    }
    const parameters = this.template.map((p) => {
      const i = PLACEHOLDERS.indexOf(p as (typeof PLACEHOLDERS)[number]);
      return i >= 0 ? args[i] : p;
    });
    return (await db.executeQuery<R>(CompiledQuery.raw(this.sql, parameters))).rows;
  }
}

interface HotQueries {
  tokenPrincipal: PreparedQuery<{
    application_id: string;
    expires_at: string;
    organization_id: string | null;
    scope_organization_id: string | null;
    customer_name: string | null;
    response_envelope: string;
    proxy_access: string;
  }>;
  connector: PreparedQuery<ConnectorRow>;
}

function hotQueries(): HotQueries {
  return {
    tokenPrincipal: new PreparedQuery((db, tokenHash) =>
      db
        .selectFrom('access_tokens as t')
        .innerJoin('applications as a', 'a.id', 't.application_id')
        .leftJoin('application_organizations as ao', 'ao.application_id', 't.application_id')
        .select([
          't.application_id',
          't.expires_at',
          'ao.organization_id',
          't.organization_id as scope_organization_id',
          't.customer_name',
          'a.response_envelope',
          'a.proxy_access',
        ])
        .where('t.token_hash', '=', tokenHash as string),
    ),
    connector: new PreparedQuery((db, id, organizationId) =>
      db
        .selectFrom('connectors')
        .selectAll()
        .where('id', '=', id as string)
        .where('organization_id', '=', organizationId as string),
    ),
  };
}

/** The service's data access; bound to the database or to one transaction. */
export class ServiceStore {
  private readonly hot: HotQueries;

  constructor(
    readonly db: Kysely<ServiceTables>,
    hot?: HotQueries,
  ) {
    this.hot = hot ?? hotQueries();
  }

  /** Run `fn` in one transaction with a store bound to it. */
  transaction<T>(fn: (store: ServiceStore) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx: Transaction<ServiceTables>) => fn(new ServiceStore(trx, this.hot)));
  }

  // Organizations and applications

  async findOrganizationByName(name: string): Promise<OrganizationRow | undefined> {
    return this.db.selectFrom('organizations').selectAll().where('name', '=', name).executeTakeFirst();
  }

  async findOrganization(id: string): Promise<OrganizationRow | undefined> {
    return this.db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The organization called `name`, created when missing (race-safe: a concurrent creator wins and is returned). */
  async ensureOrganization(name: string, newId: string, now: string): Promise<{ organization: OrganizationRow; created: boolean }> {
    const inserted = await this.db
      .insertInto('organizations')
      .values({ id: newId, name, created_at: now })
      .onConflict((oc) => oc.column('name').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted !== undefined) return { organization: inserted, created: true };
    const existing = await this.findOrganizationByName(name);
    if (existing === undefined) throw new Error(`organization "${name}" vanished while being created`);
    return { organization: existing, created: false };
  }

  async insertApplication(row: Insertable<ApplicationsTable>): Promise<void> {
    await this.db.insertInto('applications').values(row).execute();
  }

  /** Set an application's proxy access ('on', 'read', 'off'); false when no application has that client id. */
  async setApplicationProxyAccess(clientId: string, access: string): Promise<boolean> {
    const r = await this.db.updateTable('applications').set({ proxy_access: access }).where('client_id', '=', clientId).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async findApplicationByClientId(clientId: string): Promise<ApplicationRow | undefined> {
    return this.db.selectFrom('applications').selectAll().where('client_id', '=', clientId).executeTakeFirst();
  }

  /** Give an application access to an organization; false when it already had it. */
  async grant(applicationId: string, organizationId: string, now: string): Promise<boolean> {
    const r = await this.db
      .insertInto('application_organizations')
      .values({ application_id: applicationId, organization_id: organizationId, created_at: now })
      .onConflict((oc) => oc.columns(['application_id', 'organization_id']).doNothing())
      .executeTakeFirst();
    return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  // Access tokens

  /** `scope`: a token limited to one customer of one organization. */
  async insertAccessToken(
    tokenHash: string,
    applicationId: string,
    expiresAt: string,
    now: string,
    scope?: { organizationId: string; customerName: string },
  ): Promise<void> {
    await this.db
      .insertInto('access_tokens')
      .values({
        token_hash: tokenHash,
        application_id: applicationId,
        expires_at: expiresAt,
        created_at: now,
        organization_id: scope?.organizationId ?? null,
        customer_name: scope?.customerName ?? null,
      })
      .execute();
  }

  /** Drop an application's expired tokens (housekeeping when it gets a new one). */
  async deleteExpiredTokens(applicationId: string, now: string): Promise<void> {
    await this.db.deleteFrom('access_tokens').where('application_id', '=', applicationId).where('expires_at', '<=', now).execute();
  }

  /** The application behind a token hash and the organizations it may use, in one query; undefined if unknown. */
  async findTokenPrincipal(tokenHash: string): Promise<TokenPrincipal | undefined> {
    const rows = await this.hot.tokenPrincipal.rows(this.db, tokenHash);
    const first = rows[0];
    if (first === undefined) return undefined;
    const granted = rows.map((r) => r.organization_id).filter((id): id is string => id !== null);
    const scope = first.scope_organization_id;
    return {
      applicationId: first.application_id,
      expiresAt: first.expires_at,
      // A scoped token acts for its one organization, and only while the application may still use it.
      organizationIds: scope === null ? granted : granted.filter((id) => id === scope),
      customerName: first.customer_name,
      envelope: first.response_envelope,
      proxyAccess: first.proxy_access,
    };
  }

  // Connectors

  async insertConnector(row: Insertable<ConnectorsTable>): Promise<void> {
    await this.db.insertInto('connectors').values(row).execute();
  }

  async getConnector(organizationId: string, id: string): Promise<ConnectorRow | undefined> {
    return (await this.hot.connector.rows(this.db, id, organizationId))[0];
  }

  /** A connector by id alone (the sync engine's, which works across organizations). */
  async getConnectorById(id: string): Promise<ConnectorRow | undefined> {
    return this.db.selectFrom('connectors').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The status of each of these connectors that exists, in one query. */
  async connectorStatuses(ids: string[]): Promise<Map<string, ConnectorRow['status']>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db.selectFrom('connectors').select(['id', 'status']).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [r.id, r.status]));
  }

  /** Connectors of an organization in (created_at, id) order, after `after`, at most `limit`. */
  async listConnectors(organizationId: string, f: ConnectorFilter): Promise<ConnectorRow[]> {
    let q = this.db.selectFrom('connectors').selectAll().where('organization_id', '=', organizationId);
    if (f.customerName !== undefined) q = q.where('customer_name', '=', f.customerName);
    if (f.connectorType !== undefined) q = q.where('connector_type', '=', f.connectorType);
    if (f.status !== undefined) q = q.where('status', '=', f.status);
    const after = f.after;
    if (after !== undefined) {
      q = q.where((eb) => eb.or([eb('created_at', '>', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)])]));
    }
    return q.orderBy('created_at').orderBy('id').limit(f.limit).execute();
  }

  /** Update name and/or credentials of one connector of the organization; the new row, or undefined. */
  async updateConnector(
    organizationId: string,
    id: string,
    patch: Partial<
      Pick<ConnectorRow, 'name' | 'auth_variant' | 'credentials_key_id' | 'credentials_ciphertext' | 'status' | 'last_checked_at' | 'last_error'>
    > & { updated_at: string },
  ): Promise<ConnectorRow | undefined> {
    return this.db.updateTable('connectors').set(patch).where('id', '=', id).where('organization_id', '=', organizationId).returningAll().executeTakeFirst();
  }

  /**
   * Store refreshed credentials. Only when the row still holds `previousCiphertext`: if another
   * request or instance stored newer credentials meanwhile, theirs are kept (returns false).
   */
  async replaceCredentials(id: string, previousCiphertext: string, next: { keyId: string; ciphertext: string }, now: string): Promise<boolean> {
    const r = await this.db
      .updateTable('connectors')
      .set({ credentials_key_id: next.keyId, credentials_ciphertext: next.ciphertext, updated_at: now })
      .where('id', '=', id)
      .where('credentials_ciphertext', '=', previousCiphertext)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /**
   * Record a connector's health (status, last check, last error). With `onlyIfCiphertext`, only
   * while the row still holds those credentials: a failure seen with credentials that were
   * replaced meanwhile says nothing about the new ones.
   */
  async setConnectorHealth(
    id: string,
    health: Partial<Pick<ConnectorRow, 'status' | 'last_checked_at' | 'last_error'>>,
    onlyIfCiphertext?: string,
  ): Promise<ConnectorRow | undefined> {
    let q = this.db.updateTable('connectors').set(health).where('id', '=', id);
    if (onlyIfCiphertext !== undefined) q = q.where('credentials_ciphertext', '=', onlyIfCiphertext);
    return q.returningAll().executeTakeFirst();
  }

  async deleteConnector(organizationId: string, id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('connectors').where('id', '=', id).where('organization_id', '=', organizationId).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  // Service-side OAuth

  async insertOAuthState(row: OAuthStateRow): Promise<void> {
    await this.db.insertInto('oauth_states').values(row).execute();
  }

  /** Mark a state used and return it, only if it exists, is unused and unexpired. Atomic. */
  async consumeOAuthState(stateHash: string, now: string): Promise<OAuthStateRow | undefined> {
    return this.db
      .updateTable('oauth_states')
      .set({ used_at: now })
      .where('state_hash', '=', stateHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
  }

  /** A pending secret that consumeOAuthSecret would accept now, without consuming it (to check its credentials first). */
  async findUsableOAuthSecret(
    q: { idHash: string; organizationId: string; connectorType: string; customerName: string },
    now: string,
  ): Promise<OAuthSecretRow | undefined> {
    return this.db
      .selectFrom('oauth_secrets')
      .selectAll()
      .where('id_hash', '=', q.idHash)
      .where('organization_id', '=', q.organizationId)
      .where('connector_type', '=', q.connectorType)
      .where('customer_name', '=', q.customerName)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  }

  async insertOAuthSecret(row: OAuthSecretRow): Promise<void> {
    await this.db.insertInto('oauth_secrets').values(row).execute();
  }

  /**
   * Mark a pending secret used and return it, only if it is unused, unexpired and was started by
   * this organization for this connector type and customer. Atomic; a mismatch consumes nothing.
   */
  async consumeOAuthSecret(
    q: { idHash: string; organizationId: string; connectorType: string; customerName: string },
    now: string,
  ): Promise<OAuthSecretRow | undefined> {
    return this.db
      .updateTable('oauth_secrets')
      .set({ used_at: now })
      .where('id_hash', '=', q.idHash)
      .where('organization_id', '=', q.organizationId)
      .where('connector_type', '=', q.connectorType)
      .where('customer_name', '=', q.customerName)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
  }

  /** Forget a used secret's tokens (they now live, re-encrypted, in the connector). */
  async wipeOAuthSecret(idHash: string): Promise<void> {
    await this.db.updateTable('oauth_secrets').set({ ciphertext: '' }).where('id_hash', '=', idHash).execute();
  }

  /** Housekeeping: delete OAuth states and secrets that expired before `before`. */
  async deleteExpiredOAuth(before: string): Promise<void> {
    await this.db.deleteFrom('oauth_states').where('expires_at', '<', before).execute();
    await this.db.deleteFrom('oauth_secrets').where('expires_at', '<', before).execute();
  }
}
