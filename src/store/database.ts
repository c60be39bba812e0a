/**
 * The database handle shared by every store module: Kysely over SQLite (better-sqlite3, the
 * embedded default) or PostgreSQL (pg), chosen by URL, with migrations applied at open.
 *
 * Modules contribute migrations in named groups (e.g. "core", "search"); each group's
 * migrations run in order, once, recorded by Kysely's Migrator in its own table per group.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, type Migration } from 'kysely';
import pg from 'pg';

export type DialectName = 'sqlite' | 'postgres';

/** A migration group: a name and its migrations in order (names sort lexically). */
export interface MigrationGroup {
  name: string;
  migrations: Record<string, Migration>;
}

export interface Database<DB = unknown> {
  db: Kysely<DB>;
  dialect: DialectName;
  /** For SQLite: the file path (':memory:' for in-memory); for PostgreSQL: undefined. */
  file?: string;
  close(): Promise<void>;
}

/** Default SQLite file of the embedded mode. */
export const DEFAULT_SQLITE_FILE = './data/switchboard.db';

/**
 * Open a database by URL: `postgres://...`/`postgresql://...` → PostgreSQL; `sqlite:<path>`,
 * a plain path, or undefined (→ ./data/switchboard.db) → SQLite. Creates the SQLite folder.
 */
export function openDatabase<DB = unknown>(url: string | undefined, options: { poolSize?: number } = {}): Database<DB> {
  if (url !== undefined && /^postgres(ql)?:\/\//.test(url)) {
    const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10 });
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: 'postgres', close: () => db.destroy() };
  }
  const file = url === undefined ? DEFAULT_SQLITE_FILE : url.replace(/^sqlite:(\/\/)?/, '');
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  // WAL lets readers run while a sync writes; NORMAL sync is durable across process crashes.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }) });
  return { db, dialect: 'sqlite', file, close: () => db.destroy() };
}

/** Apply every pending migration of the given groups, in order. Throws on failure. */
export async function migrate(database: Database, groups: MigrationGroup[]): Promise<void> {
  for (const group of groups) {
    const migrator = new Migrator({
      db: database.db,
      provider: { getMigrations: async () => group.migrations },
      migrationTableName: `kysely_migration_${group.name}`,
      migrationLockTableName: `kysely_migration_lock_${group.name}`,
    });
    const { error, results } = await migrator.migrateToLatest();
    if (error !== undefined) {
      const failed = results?.find((r) => r.status === 'Error')?.migrationName;
      throw new Error(`migration ${group.name}/${failed ?? '?'} failed: ${(error as Error).message ?? String(error)}`, { cause: error });
    }
  }
}
