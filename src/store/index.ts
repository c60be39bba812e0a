/**
 * The store: one database handle (Kysely over SQLite or PostgreSQL) with migrations in groups,
 * encryption at rest, and the hosted service's tables and queries.
 */
export {
  openDatabase,
  migrate,
  isPostgresUrl,
  DEFAULT_SQLITE_FILE,
  type Database,
  type DialectName,
  type MigrationGroup,
  type OpenDatabaseOptions,
} from './database.ts';
export { KeyRing, parseKeyRing, resolveKeyRing, generateKeySpec, keyFingerprint, ENCRYPTION_KEY_ENV, type Sealed, type ResolvedKeyRing } from './encryption.ts';
export { storedKeyIds, verifyKeyRing } from './key-check.ts';
export { SERVICE_MIGRATIONS, type ServiceTables } from './service-migrations.ts';
export {
  ServiceStore,
  type ApplicationRow,
  type ConnectorRow,
  type ConnectorFilter,
  type ConnectorPosition,
  type OAuthSecretRow,
  type OAuthStateRow,
  type OrganizationRow,
  type TokenPrincipal,
} from './service-store.ts';
