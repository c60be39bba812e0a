/**
 * Start the service: open the database named by the configuration, apply migrations, load the
 * key ring, build the app and listen. Used by `switchboard serve`, tests and the benchmark.
 */
import type { FastifyInstance } from 'fastify';
import {
  migrate,
  openDatabase,
  resolveKeyRing,
  SERVICE_MIGRATIONS,
  storedKeyIds,
  verifyKeyRing,
  type Database,
  type MigrationGroup,
  type ServiceTables,
} from '../../store/index.ts';
import { connectorCredentialsContext } from '../connectors/runtime-pool.ts';
import { searchMigrations } from '../../search/index.ts';
import { syncMigrations } from '../../sync/index.ts';
import { connectMigrations } from '../connect/index.ts';
import { eventsMigrations } from '../../events/migrations.ts';
import { webhooksInMigrations } from '../../webhooks/migrations.ts';
import { OPERATIONS_MIGRATIONS } from '../ops/operations-migrations.ts';
import { buildApp, listeningUrl, type BuildAppOptions } from './app.ts';
import type { ServiceContext } from '../context.ts';
import { createServiceLogger } from '../ops/logger.ts';
import { watchDataFile } from '../../store/data-dir.ts';

/** What buildApp takes, less what startService makes itself (the database and the key ring). */
export interface StartServiceOptions extends Omit<BuildAppOptions, 'database' | 'keyRing'> {
  /** PostgreSQL schema for every table (tests); default the connection's search_path. */
  schema?: string;
  /** Migration groups of other modules, run after the hosted ones. */
  extraMigrations?: MigrationGroup[];
  /** Do not listen (for app.inject); default false. */
  noListen?: boolean;
  /**
   * A fatal condition under the running service (its SQLite file or data directory removed, its
   * disk full: data-dir.ts), already logged at fatal level. `switchboard serve` shuts down, with status 1.
   */
  onFatal?: (why: string) => void;
}

export interface RunningService {
  app: FastifyInstance;
  ctx: ServiceContext;
  database: Database<ServiceTables>;
  /** http://host:port it listens on ('' when noListen). */
  url: string;
  close(): Promise<void>;
}

/** Every table the hosted service uses: accounts and connectors, synced records and search, sync state, connect sessions. */
export const HOSTED_MIGRATIONS: readonly MigrationGroup[] = [
  SERVICE_MIGRATIONS,
  searchMigrations,
  syncMigrations,
  connectMigrations,
  eventsMigrations,
  webhooksInMigrations,
  OPERATIONS_MIGRATIONS,
];

/** Open, migrate, build and listen. */
export async function startService(o: StartServiceOptions): Promise<RunningService> {
  const log = o.logger ?? createServiceLogger(o.config.logLevel, o.logDestination);
  const database = openDatabase<ServiceTables>(o.config.databaseUrl, o.schema !== undefined ? { schema: o.schema } : {});
  try {
    await migrate(database as Database, [...HOSTED_MIGRATIONS, ...(o.extraMigrations ?? [])]);
    const keys = resolveKeyRing(o.config.encryptionKey, database, await storedKeyIds(database.db));
    await verifyKeyRing(database.db, keys.ring, connectorCredentialsContext);
    if (keys.source === 'generated-file') {
      log.warn(
        { key_file: keys.file },
        'SWITCHBOARD_ENCRYPTION_KEY is not set: generated an encryption key beside the database. Back it up (credentials cannot be decrypted without it), or set SWITCHBOARD_ENCRYPTION_KEY.',
      );
    } else if (keys.source === 'file') {
      log.warn({ key_file: keys.file }, 'SWITCHBOARD_ENCRYPTION_KEY is not set: using the key file beside the database');
    } else if (keys.source === 'ephemeral') {
      log.warn('SWITCHBOARD_ENCRYPTION_KEY is not set and the database is in memory: using a throwaway key');
    }
    const { schema: _schema, extraMigrations: _extra, noListen: _noListen, ...appOptions } = o;
    const { app, ctx } = await buildApp({ ...appOptions, database, keyRing: keys.ring, logger: log });
    let url = '';
    let closing: Promise<void> | undefined;
    if (o.noListen !== true) {
      // A failed listen (EADDRINUSE...) also stops what buildApp started (the sync scheduler).
      await app.listen({ port: o.config.port, host: o.config.host }).catch(async (e: unknown) => {
        await app.close();
        throw e;
      });
      url = listeningUrl(app);
    } else {
      await app.ready();
    }
    const file = database.dialect === 'sqlite' ? database.file : undefined;
    const watch =
      file !== undefined && file !== ':memory:' && file !== '' && o.config.dataDirCheckMs > 0
        ? watchDataFile(file, o.config.dataDirCheckMs, (why) => {
            log.fatal({ database: file, reason: why }, `${why}: the service cannot keep its data and stops`);
            o.onFatal?.(why);
          })
        : undefined;
    return {
      app,
      ctx,
      database,
      url,
      close: () => {
        // Idempotent: signal handlers and test teardown may both close.
        closing ??= (async () => {
          watch?.stop();
          // Bounded: requests still in flight after the grace period have their connections closed.
          const cut = setTimeout(() => app.server.closeAllConnections(), o.config.shutdownGraceMs);
          cut.unref();
          try {
            await app.close();
          } finally {
            clearTimeout(cut);
          }
          await database.close();
        })();
        return closing;
      },
    };
  } catch (e) {
    await database.close();
    throw e;
  }
}
