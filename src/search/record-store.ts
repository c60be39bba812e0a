/**
 * RecordStore: the synced records of every connector and entity, and search over them.
 *
 * The sync engine writes through upsert / deleteMissing / deleteRecords / deleteConnector; the
 * service answers the `search` action through search(). Each write batch is one transaction,
 * and writing the same batch twice leaves the store exactly as writing it once.
 */
import { sql } from 'kysely';
import type { DialectName, PostgresStatements, SqliteStatements } from '../store/database.ts';
import { SwitchboardError } from '../errors/index.ts';
import { MAX_CHANGES_LIMIT } from './change-limits.ts';
import { lastChangeSeq, parseChangeCursor, readChanges, type ChangeCounts, type ChangePage } from './changes.ts';
import type { Executor } from './dialect.ts';
import { postgresSearchDialect } from './postgres-dialect.ts';
import type { SearchEntityDef } from './query.ts';
import { deleteConnector, deleteMissing, deleteRecords, upsertRecords } from './record-writes.ts';
import { searchRecords, type SearchResult } from './search-run.ts';
import { sqliteSearchDialect } from './sqlite-dialect.ts';
import type { StoreContext } from './store-context.ts';

/** Query shapes kept across all scopes of one store (default of RecordStoreOptions.maxRememberedShapes). */
const SHAPE_CACHE_TOTAL = 8_192;

export interface RecordStoreOptions {
  /** Secret for signing search cursors (HMAC-SHA256); use a random value of 32+ bytes, stable across restarts and instances. */
  cursorSecret: string | Buffer;
  /** Most query shapes whose SQL is remembered across all scopes (memory bound; default 8192). */
  maxRememberedShapes?: number;
  /** How long deleted records stay in the change feed as tombstones; default 30 days. */
  tombstoneRetentionMs?: number;
  /** Clock (epoch ms) of change-log times and tombstone expiry; default Date.now. */
  now?: () => number;
}

/** Default of RecordStoreOptions.tombstoneRetentionMs. */
export const DEFAULT_TOMBSTONE_RETENTION_MS = 30 * 86_400_000;
/** Most entries per change feed page (declared in change-limits.ts, which the OpenAPI document reads). */
export { MAX_CHANGES_LIMIT } from './change-limits.ts';
export type { SearchResult } from './search-run.ts';

/**
 * The store's methods are functions over its StoreContext, by concern: writes (record-writes.ts),
 * searches (search-run.ts: remembered shapes, planning, sort pairs) and the vocabulary.
 */
export class RecordStore {
  readonly #store: StoreContext;

  /** A store over an open database whose "search" migrations have been applied. */
  constructor(database: { db: Executor; dialect: DialectName; sqlite?: SqliteStatements; postgres?: PostgresStatements }, options: RecordStoreOptions) {
    const secret = Buffer.isBuffer(options.cursorSecret) ? options.cursorSecret : Buffer.from(options.cursorSecret, 'utf8');
    if (secret.length === 0) throw new Error('RecordStore needs a non-empty cursorSecret');
    this.#store = {
      db: database.db,
      sqlite: database.dialect === 'sqlite' && !database.db.isTransaction ? database.sqlite : undefined,
      pg: database.dialect === 'postgres' && !database.db.isTransaction ? database.postgres : undefined,
      dialect: database.dialect === 'postgres' ? postgresSearchDialect : sqliteSearchDialect,
      secret,
      fieldCache: new Map(),
      vocabCache: new Map(),
      scopeCache: new Map(),
      maxShapes: options.maxRememberedShapes ?? SHAPE_CACHE_TOTAL,
      tombstoneMs: options.tombstoneRetentionMs ?? DEFAULT_TOMBSTONE_RETENTION_MS,
      now: options.now ?? Date.now,
      reusableTexts: new Map(),
      shapesRemembered: 0,
      building: new Map(),
    };
  }

  /**
   * Resolves once the sort pairs this store is building in the background (learned from searches,
   * see pairWalk) are built or given up: for tests, and before closing the database.
   */
  async settled(): Promise<void> {
    const building = this.#store.building;
    while (building.size > 0) await Promise.all(building.values());
  }

  /** How many query shapes this store remembers now, across its cached scopes. */
  get rememberedShapes(): number {
    let n = 0;
    for (const scope of this.#store.scopeCache.values()) n += scope.shapes.size;
    return n;
  }

  /**
   * Insert or replace records (keyed by the entity's primary key) in one transaction. Records
   * whose search document did not change keep their index entries. `syncRun` marks the records
   * as seen by that sync run, for deleteMissing; without it a record keeps its previous mark.
   * Returns how many records were new (added) and how many had a changed payload (updated).
   */
  upsert(connectorId: string, entity: string, def: SearchEntityDef, records: Record<string, unknown>[], syncRun?: string): Promise<ChangeCounts> {
    return upsertRecords(this.#store, connectorId, entity, def, records, syncRun);
  }

  /**
   * Full-refresh deletion: remove the entity's records not marked by `syncRun` (records deleted
   * upstream). Returns how many were removed.
   */
  deleteMissing(connectorId: string, entity: string, syncRun: string): Promise<number> {
    return deleteMissing(this.#store, connectorId, entity, syncRun);
  }

  /** Remove records by id (records deleted upstream, when the API reports deletions). Returns how many existed. */
  deleteRecords(connectorId: string, entity: string, ids: string[]): Promise<number> {
    return deleteRecords(this.#store, connectorId, entity, ids);
  }

  /** Remove everything stored for a connector (all entities, indexes and vocabulary). Returns the records removed. */
  deleteConnector(connectorId: string): Promise<number> {
    return deleteConnector(this.#store, connectorId);
  }

  /**
   * The change feed of an entity: records added, updated or deleted after `cursor` (a previous
   * entry's `_metadata.cursor`; none: from the start), oldest change first, at most `limit`.
   * 400 invalid_cursor for a cursor this feed never gave.
   */
  async changes(connectorId: string, entity: string, options: { cursor?: string; limit?: number } = {}): Promise<ChangePage> {
    const after = parseChangeCursor(options.cursor);
    if (after === undefined)
      throw new SwitchboardError('invalid_cursor', 'modified_after is not a cursor of this change feed (use a _metadata.cursor it returned)');
    // Past every cursor the feed gave: a client holding it would silently skip every change to come.
    if (after > 0 && after > (await lastChangeSeq(this.#store.db, connectorId, entity))) {
      throw new SwitchboardError(
        'invalid_cursor',
        'modified_after is beyond every cursor this change feed has given (use a _metadata.cursor or next_cursor it returned)',
      );
    }
    const limit = Math.max(1, Math.min(options.limit ?? 100, MAX_CHANGES_LIMIT));
    return readChanges(
      this.#store.db,
      this.#store.dialect,
      connectorId,
      entity,
      after,
      limit,
      new Date(this.#store.now() - this.#store.tombstoneMs).toISOString(),
    );
  }

  /** Number of records stored for an entity. */
  async count(connectorId: string, entity: string): Promise<number> {
    const { rows } = await sql<{ n: number | string }>`
      SELECT count(*) AS n FROM search_records r JOIN search_scopes s ON s.scope_id = r.scope_id
      WHERE s.connector_id = ${connectorId} AND s.entity = ${entity}`.execute(this.#store.db);
    return Number(rows[0]?.n ?? 0);
  }

  /** The full upstream record as last synced, or undefined. */
  async getRecord(connectorId: string, entity: string, id: string): Promise<Record<string, unknown> | undefined> {
    const { rows } = await sql<{ record: unknown }>`
      SELECT r.record FROM search_records r JOIN search_scopes s ON s.scope_id = r.scope_id
      WHERE s.connector_id = ${connectorId} AND s.entity = ${entity} AND r.record_id = ${id}`.execute(this.#store.db);
    return rows[0] === undefined ? undefined : this.#store.dialect.parseRecord(rows[0].record);
  }

  /**
   * Run the `search` action: validate params (400 `invalid_search_query` / `invalid_cursor`),
   * query the synced records, and return one page of search documents.
   */
  search(connectorId: string, entity: string, def: SearchEntityDef, params: unknown): Promise<SearchResult> {
    return searchRecords(this.#store, connectorId, entity, def, params);
  }
}
