/**
 * The database handle shared by every store module: Kysely over SQLite (better-sqlite3, the
 * embedded default) or PostgreSQL (pg), chosen by URL, with migrations applied at open.
 *
 * Modules contribute migrations in named groups (e.g. "core", "search"); each group's
 * migrations run in order, once, recorded by Kysely's Migrator in its own table per group.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { makeDir } from './data-dir.ts';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  Migrator,
  PostgresDialect,
  sql,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type Migration,
  type SqliteDialectConfig,
} from 'kysely';
import pg from 'pg';
import { MAIN_AUTOCHECKPOINT_PAGES, WalCheckpointer } from './wal-checkpointer.ts';

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
  /** For PostgreSQL opened with `schema`: every table (and migration table) lives in it. */
  schema?: string;
  /** For PostgreSQL: the URL it was opened with (a worker thread opens a pool of its own with it: the record writer's). */
  url?: string;
  /** For PostgreSQL: the pool's clients now (metrics: queries waiting for a connection). */
  pool?: () => { waiting: number; total: number; idle: number };
  /**
   * For SQLite: the connection's prepared statements (the same cache Kysely uses), for reads
   * that run synchronously without Kysely's per-query overhead (the search store's hot path).
   * Only safe while `inTransaction` is false: inside a transaction a read would see its
   * uncommitted writes; then go through Kysely, which waits for the transaction.
   */
  sqlite?: SqliteStatements;
  /**
   * For PostgreSQL: run one statement on a pool client directly, without Kysely's query
   * executor around it (the search store's remembered shapes). Reads only: a statement run
   * here is on a connection of the pool, never inside a caller's transaction.
   */
  postgres?: PostgresStatements;
  /**
   * For a SQLite file: its WAL checkpoints, run in a worker thread (wal-checkpointer.ts). Writers
   * that write much (the syncs) ask for one between their writes; the main connection checkpoints
   * by itself only past MAIN_AUTOCHECKPOINT_PAGES.
   */
  checkpointer?: WalCheckpointer;
  /**
   * For a SQLite file's main connection: a handshake over the write lock with the record
   * writer's worker (record-writer.ts), an Int32Array on a SharedArrayBuffer. MAIN_WAITING counts
   * the main connection's writes waiting for or taking the lock: the worker starts no part while
   * it is above 0. WORKER_HOLDING is 1 while the worker writes a part: a main write waits for
   * its end (a notify) instead of sleeping in SQLite's busy handler. SQLite has no queue for its
   * write lock: without this, a worker taking it part after part kept the main thread's writes
   * sleeping in the busy handler for up to 1.4 s (issue 25's fleet bench). CHECKPOINTER_HOLDING
   * is the same for the checkpointer's one write (the log's restart, wal-checkpointer.ts).
   */
  writeGate?: Int32Array;
  close(): Promise<void>;
}

/**
 * Database.writeGate's slots: the main connection's writes waiting for (or taking) the write
 * lock; 1 while the record writer's worker writes a part; 1 while the WAL checkpointer's worker
 * writes the first frame of a fresh log.
 */
export const MAIN_WAITING = 0;
export const WORKER_HOLDING = 1;
export const CHECKPOINTER_HOLDING = 2;
/** The SQLite connections' busy_timeout (ms), and the longest a main write waits for the worker's part. */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;

/** One statement on a client of the PostgreSQL pool (see Database.postgres). */
export interface PostgresStatements {
  /** Rows of `text` run with `values`; text starting with PREPARED_SQL runs as a named statement. */
  query<R>(text: string, values: unknown[]): Promise<R[]>;
}

/** better-sqlite3 prepared statements of the one SQLite connection (see Database.sqlite). */
export interface SqliteStatements {
  prepare(sql: string): SQLite.Statement;
  /** True while the connection is inside a transaction (Kysely's, between BEGIN and COMMIT). */
  readonly inTransaction: boolean;
}

/** Default SQLite file of the embedded mode. */
export const DEFAULT_SQLITE_FILE = './data/switchboard.db';

export interface OpenDatabaseOptions {
  /** PostgreSQL pool size; default 10. */
  poolSize?: number;
  /** PostgreSQL: statements marked with PREPARED_SQL kept prepared per connection at most (default 64); 0 turns it off. */
  preparedPerConnection?: number;
  /**
   * PostgreSQL: how long the client kept for Database.postgres statements stays out of the pool
   * after its last statement, unless a client is wanted sooner (default 20 ms; 0: none kept,
   * every statement checks a client out of the pool and back).
   */
  keepClientMs?: number;
  /**
   * PostgreSQL only: put every table in this schema (set as the connections' search_path; the
   * schema must exist). Tests use a fresh schema per file to run side by side on one database.
   */
  schema?: string;
  /**
   * SQLite file: run its WAL checkpoints in a worker (wal-checkpointer.ts; default true), and
   * give it a writeGate. False for a connection that is itself off the main thread (the record
   * writer's, record-writer-worker.ts, which checkpoints by itself).
   */
  walCheckpointer?: boolean;
  /**
   * SQLite file: open it only if it exists (no directory or file created). A second connection to
   * the main one's file (the record writer's): a file gone since is an error, not a new database.
   */
  mustExist?: boolean;
}

/**
 * SQLite transactions that begin IMMEDIATE, taking the write lock at BEGIN (waiting up to
 * busy_timeout for it) rather than at their first write. With a second connection writing the
 * same file (the record writer's worker), a deferred transaction that read before it wrote would
 * fail at its first write (SQLITE_BUSY, no wait) whenever the other connection committed in
 * between. With one connection this changes nothing.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #statements: SqliteStatements;
  readonly #gate: Int32Array | undefined;
  constructor(config: SqliteDialectConfig, statements: SqliteStatements, gate: Int32Array | undefined) {
    super(config);
    this.#config = config;
    this.#statements = statements;
    this.#gate = gate;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config, this.#statements, this.#gate);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  readonly #statements: SqliteStatements;
  readonly #gate: Int32Array | undefined;
  #gated: DatabaseConnection | undefined;
  constructor(config: SqliteDialectConfig, statements: SqliteStatements, gate: Int32Array | undefined) {
    super(config);
    this.#statements = statements;
    this.#gate = gate;
  }
  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    if (this.#gate === undefined) return connection;
    this.#gated ??= gatedConnection(connection, this.#statements, this.#gate);
    return this.#gated;
  }
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/**
 * The main connection's side of Database.writeGate. A statement that takes the write lock (an
 * autocommit write, RETURNING or not, or the BEGIN IMMEDIATE of a transaction) counts itself in
 * MAIN_WAITING, then, while a worker writes (WORKER_HOLDING, CHECKPOINTER_HOLDING), waits for its end without
 * blocking the event loop (Atomics.waitAsync: requests go on being answered), then runs. The
 * worker sets WORKER_HOLDING before it reads MAIN_WAITING and this counts itself before it
 * reads WORKER_HOLDING (both sequentially consistent), so they never both go ahead. Statements
 * inside a transaction already hold the lock. Kysely's other queries on this one connection
 * queue behind a waiting write, as behind any statement; direct reads (Database.sqlite) do not.
 */
function gatedConnection(connection: DatabaseConnection, statements: SqliteStatements, gate: Int32Array): DatabaseConnection {
  return {
    async executeQuery<R>(query: CompiledQuery) {
      if (statements.inTransaction || statements.prepare(query.sql).readonly) return connection.executeQuery<R>(query);
      Atomics.add(gate, MAIN_WAITING, 1);
      try {
        const until = Date.now() + SQLITE_BUSY_TIMEOUT_MS;
        for (;;) {
          const holder =
            Atomics.load(gate, WORKER_HOLDING) === 1 ? WORKER_HOLDING : Atomics.load(gate, CHECKPOINTER_HOLDING) === 1 ? CHECKPOINTER_HOLDING : undefined;
          if (holder === undefined || Date.now() >= until) break;
          const w = (
            Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number, t: number): { async: boolean; value: Promise<string> | string } }
          ).waitAsync(gate, holder, 1, until - Date.now());
          if (w.async) await w.value;
        }
        return await connection.executeQuery<R>(query);
      } finally {
        Atomics.sub(gate, MAIN_WAITING, 1);
        Atomics.notify(gate, MAIN_WAITING);
      }
    },
    streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
  };
}

/** True for URLs that name a PostgreSQL database. */
export function isPostgresUrl(url: string | undefined): boolean {
  return url !== undefined && /^postgres(ql)?:\/\//.test(url);
}

/**
 * Open a database by URL: `postgres://...`/`postgresql://...` → PostgreSQL; `sqlite:<path>`,
 * a plain path, or undefined (→ ./data/switchboard.db) → SQLite. Creates the SQLite folder.
 */
export function openDatabase<DB = unknown>(url: string | undefined, options: OpenDatabaseOptions = {}): Database<DB> {
  if (url !== undefined && isPostgresUrl(url)) {
    const schema = options.schema;
    if (schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid schema name "${schema}"`);
    const pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      ...(schema !== undefined ? { options: `-c search_path=${schema}` } : {}),
    });
    const prepared = options.preparedPerConnection ?? PREPARED_PER_CONNECTION;
    if (prepared > 0) pool.on('connect', (client) => keepPrepared(client, prepared));
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    const statements = poolStatements(pool, options.keepClientMs ?? KEEP_CLIENT_MS);
    return {
      db,
      dialect: 'postgres',
      url,
      ...(schema !== undefined ? { schema } : {}),
      postgres: statements,
      pool: () => ({ waiting: pool.waitingCount, total: pool.totalCount, idle: pool.idleCount }),
      close: () => {
        // The kept client goes back first: ending the pool waits for every client out of it.
        statements.close();
        return db.destroy();
      },
    };
  }
  const file = url === undefined ? DEFAULT_SQLITE_FILE : url.replace(/^sqlite:(\/\/)?/, '');
  if (file !== ':memory:' && options.mustExist !== true) {
    // Owner-only: the database holds (encrypted) credentials and token hashes. SQLite gives its
    // -wal and -shm files the database file's mode. makeDir, not mkdirSync's recursive mode
    // (which never returns when the working directory is gone: data-dir.ts).
    makeDir(dirname(file), 0o700);
    if (!existsSync(file)) writeFileSync(file, '', { mode: 0o600, flag: 'wx' });
  }
  const sqlite = new SQLite(file, options.mustExist === true ? { fileMustExist: true } : {});
  // WAL lets readers run while a sync writes; NORMAL sync is durable across process crashes.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  // Reads from memory-mapped pages instead of a read() call per page not in SQLite's own 2 MB
  // cache: searches seek into indexes and records at random (a like page of 100 contacts at
  // 200,000 records: 850 -> 550 us). Clamped by SQLite to its compile-time maximum.
  sqlite.pragma('mmap_size = 2147483648');
  // A file's main connection: its checkpointer, and the gate a record writer's worker shares.
  const main = file !== ':memory:' && file !== '' && options.walCheckpointer !== false;
  const writeGate = main ? new Int32Array(new SharedArrayBuffer(12)) : undefined;
  const statements = cachingStatements(sqlite);
  const db = new Kysely<DB>({ dialect: new ImmediateSqliteDialect({ database: statements }, statements, writeGate) });
  if (!main) return { db, dialect: 'sqlite', file, sqlite: statements, close: () => db.destroy() };
  // Checkpoints off the main thread: this connection's own (run inside a commit, synchronously)
  // only as a safety net, should the checkpointer fall behind.
  const checkpointer = new WalCheckpointer(file, { writeGate: { gate: writeGate!, mainWaiting: MAIN_WAITING, holding: CHECKPOINTER_HOLDING } });
  sqlite.pragma(`wal_autocheckpoint = ${MAIN_AUTOCHECKPOINT_PAGES}`);
  return {
    db,
    dialect: 'sqlite',
    file,
    sqlite: statements,
    checkpointer,
    writeGate: writeGate!,
    close: async () => {
      await checkpointer.close();
      await db.destroy();
    },
  };
}

/**
 * The start of PostgreSQL SQL text (a comment) that asks for a named prepared statement: the
 * server parses and analyzes it once per connection instead of on every run. For statements run
 * often with other values (the search store's remembered query shapes). Plans are still made
 * as PostgreSQL decides for prepared statements (custom plans with the values, a generic plan
 * once that costs no more), so a value never gets a worse plan than unnamed statements give it.
 */
export const PREPARED_SQL = '/* prepared */ ';

/** Default of OpenDatabaseOptions.preparedPerConnection. */
const PREPARED_PER_CONNECTION = 64;

/**
 * Run the statements marked PREPARED_SQL of one pg client as named statements (pg parses a
 * name once per connection and only binds it afterwards), keeping at most `limit` per
 * connection: the least recently used is deallocated before the statement that displaces it
 * runs, so the server never holds more. Kysely calls `client.query(text, values)` and awaits the
 * promise; other calls (a callback, a config object, no values) pass through unchanged.
 */
function keepPrepared(client: pg.PoolClient, limit: number): void {
  // pg records a connection's parsed names here; without it (another pg version) do nothing.
  const parsed = (client as unknown as { connection?: { parsedStatements?: Record<string, string> } }).connection?.parsedStatements;
  if (typeof parsed !== 'object' || parsed === null) return;
  const names = new Map<string, string>(); // text → name, least recently used first
  let next = 0;
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (config: unknown, values?: unknown, callback?: unknown) => {
    if (typeof config !== 'string' || !Array.isArray(values) || callback !== undefined || !config.startsWith(PREPARED_SQL))
      return query(config, values, callback);
    let name = names.get(config);
    let evicted: string | undefined;
    if (name !== undefined) names.delete(config);
    else {
      if (names.size >= limit) {
        const [oldText, oldName] = names.entries().next().value as [string, string];
        names.delete(oldText);
        delete parsed[oldName];
        evicted = oldName;
      }
      name = `sb_prepared_${++next}`;
    }
    names.set(config, name);
    const run = { name, text: config, values };
    if (evicted === undefined) return query(run);
    // A failed DEALLOCATE (the statement never got prepared) changes nothing for the query.
    return (query(`DEALLOCATE ${evicted}`) as Promise<unknown>).catch(() => undefined).then(() => query(run));
  };
}

/** Default of OpenDatabaseOptions.keepClientMs. */
const KEEP_CLIENT_MS = 20;

/**
 * Statements run on a client of the pool, as Kysely's driver runs them (`query(text, values)`
 * awaited) but without the executor, plugins and connection provider around each: about 10 µs
 * less per statement, most of what a remembered search shape costs beside the server.
 * `client.query(text, values)` with no callback, so keepPrepared names the statements marked
 * PREPARED_SQL (pool.query passes a callback, which it leaves unnamed).
 *
 * One client is kept checked out between statements rather than acquired from the pool and
 * released for each (pg-pool's checkout — a nextTick, listeners, an idle timer per release —
 * cost about 35 µs of CPU per statement, and more wall time on a loaded machine, against
 * 50 µs for a one-row primary-key read on a client held). A statement arriving while the kept
 * client is busy runs on a pool client as before, so searches still run concurrently. The kept
 * client goes back to the pool when anyone asks the pool for a client it cannot give otherwise
 * (or after a statement while someone waits), and at the latest `keepMs` (OpenDatabaseOptions.keepClientMs) after its last statement, so the pool is never
 * short of it for long (nor forever: a timer returns it). A client that fails outside a
 * statement, or with an error that is not the server's answer to the statement, is released
 * with the error, which removes it from the pool.
 */
function poolStatements(pool: pg.Pool, keepMs: number): PostgresStatements & { close(): void } {
  let kept: pg.PoolClient | undefined;
  let busy = false;
  let closed = false;
  let lastUsed = 0;
  let timer: NodeJS.Timeout | undefined;
  const drop = (err?: Error): void => {
    const client = kept;
    if (client === undefined) return;
    kept = undefined;
    client.removeListener('error', onError);
    client.release(err);
  };
  const onError = (err: Error): void => drop(err);
  const check = (): void => {
    timer = undefined;
    if (kept === undefined || busy) return;
    const idle = performance.now() - lastUsed;
    if (idle >= keepMs) drop();
    else arm(keepMs - idle);
  };
  const arm = (ms: number): void => {
    timer = setTimeout(check, ms);
    timer.unref();
  };
  // Whoever else asks the pool for a client while it has none idle and can open no more (Kysely,
  // a transaction, a statement while the kept client is busy) gets the kept client at once when
  // it is idle, instead of waiting for the next statement or the timer.
  const connect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { connect: (...args: unknown[]) => unknown }).connect = (...args: unknown[]) => {
    if (kept !== undefined && !busy && pool.idleCount === 0 && pool.totalCount >= (pool.options.max ?? 10)) drop();
    return connect(...args);
  };
  const onPool = async <R>(text: string, values: unknown[]): Promise<R[]> => {
    const client = await pool.connect();
    try {
      return (await client.query(text, values)).rows as R[];
    } finally {
      client.release();
    }
  };
  return {
    async query<R>(text: string, values: unknown[]): Promise<R[]> {
      // A pool of one connection is never kept short of it.
      if (busy || closed || keepMs <= 0 || pool.options.max <= 1) return onPool<R>(text, values);
      busy = true;
      try {
        if (kept === undefined) {
          const client = await pool.connect();
          if (closed) {
            client.release();
            return await onPool<R>(text, values);
          }
          client.on('error', onError);
          kept = client;
        }
        return (await kept.query(text, values)).rows as R[];
      } catch (e) {
        if (!(e instanceof pg.DatabaseError)) drop(e as Error);
        throw e;
      } finally {
        busy = false;
        lastUsed = performance.now();
        if (pool.waitingCount > 0 || closed) drop();
        else if (kept !== undefined && timer === undefined) arm(keepMs);
      }
    },
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      if (!busy) drop();
    },
  };
}

/** Prepared statements kept per SQL text; beyond this many the oldest is dropped. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * better-sqlite3 behind Kysely, reusing prepared statements. Kysely's SQLite driver prepares
 * every query anew, and preparing costs more than running the small indexed lookups the
 * service makes on every request (token, connector). Reuse is safe: Kysely runs one query at a
 * time on its single SQLite connection, and SQLite re-prepares a statement itself when the
 * schema changes under it.
 */
function cachingStatements(sqlite: SQLite.Database): SqliteStatements & { close(): void } {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    get inTransaction() {
      return sqlite.inTransaction;
    },
    prepare: (sql: string) => {
      let stmt = cache.get(sql);
      if (stmt === undefined) {
        stmt = sqlite.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
        cache.set(sql, stmt);
      }
      return stmt;
    },
  };
}

/** Apply every pending migration of the given groups, in order. Throws on failure. */
export async function migrate(database: Database, groups: MigrationGroup[]): Promise<void> {
  // Kysely looks for its migration tables in every schema unless told which one; with several
  // schemas on one database (tests, or tenants sharing a server) it would find another
  // schema's table, skip creating its own and fail. So always name the schema we migrate:
  // the one given at open, else the connection's current_schema() (the search_path's first).
  let schema = database.schema;
  if (schema === undefined && database.dialect === 'postgres') {
    const r = await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db);
    schema = r.rows[0]?.schema;
  }
  for (const group of groups) {
    const migrator = new Migrator({
      db: database.db,
      provider: { getMigrations: async () => group.migrations },
      migrationTableName: `kysely_migration_${group.name}`,
      migrationLockTableName: `kysely_migration_lock_${group.name}`,
      ...(schema !== undefined ? { migrationTableSchema: schema } : {}),
    });
    const { error, results } = await migrator.migrateToLatest();
    if (error !== undefined) {
      const failed = results?.find((r) => r.status === 'Error')?.migrationName;
      throw new Error(`migration ${group.name}/${failed ?? '?'} failed: ${(error as Error).message ?? String(error)}`, { cause: error });
    }
  }
}
