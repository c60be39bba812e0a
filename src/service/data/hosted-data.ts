/**
 * The hosted data components, built the same way by the service (buildApp) and the CLI
 * (`switchboard sync`): the record store with search, the interpreter pool, and the sync engine
 * that reads connectors' stored credentials and writes their records.
 */
import { existsSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { FetchLike, RetryPolicy, Throttle } from '../../http/index.ts';
import type { LoadedManifest } from '../../manifest/index.ts';
import { RecordStore } from '../../search/index.ts';
import { RECORD_WRITER_PART_RECORDS, RecordWriter } from '../../search/record-writer.ts';
import type { Database, KeyRing, ServiceStore, ServiceTables } from '../../store/index.ts';
import { SyncEngine, type RecordSink } from '../../sync/index.ts';
import type { RemotePages } from '../../sync/types.ts';
import type { PagesConnector, PagesFetch } from '../../search/pages-protocol.ts';
import { PAGES_HOST_MODULE } from '../../sync/pages-worker.ts';
import type { ServiceConfig } from '../config.ts';
import { RuntimePool } from '../connectors/runtime-pool.ts';
import { RefreshCoordinator } from '../connectors/refresh-coordinator.ts';
import type { OperationsTables } from '../ops/operations-migrations.ts';
import { markAuthFailed } from '../connectors/connector-health.ts';
import { scrubSecrets } from '../../engine/secret-scrub.ts';
import { SwitchboardError } from '../../errors/index.ts';
import { EventOutbox } from '../../events/outbox.ts';
import { createWebhookSender } from '../../events/webhook-sender.ts';
import { ServiceEvents } from '../../events/service-events.ts';
import type { EventsTables } from '../../events/migrations.ts';
import type { WebhookSubscriptionsTables } from '../../webhooks/subscriptions.ts';
import type { ConnectorRow } from '../../store/index.ts';

export interface HostedData {
  records: RecordStore;
  runtimes: RuntimePool;
  sync: SyncEngine;
  /** Outgoing webhooks: the outbox, and the events the service reports into it. */
  outbox: EventOutbox;
  events: ServiceEvents;
  /** Remove a connector's sync state and records inside the transaction deleting its row. */
  forgetConnector(connectorId: string, trx: Kysely<ServiceTables>): Promise<void>;
  /** Stop the record writer's worker, if any (after the syncs have stopped). */
  close(): Promise<void>;
  /** Closes the webhook transport's connections (after the outbox stopped). */
  closeSender(): Promise<void>;
  /** The sync worker, when the syncs' pages run in one (how many it ran: RecordWriter.pagesRun). */
  syncWorker: RecordWriter | undefined;
}

export interface HostedDataOptions {
  database: Database<ServiceTables>;
  store: ServiceStore;
  keyRing: KeyRing;
  config: ServiceConfig;
  registry: Map<string, LoadedManifest>;
  fetch: FetchLike;
  now: () => number;
  log: Logger;
  retry?: Partial<RetryPolicy> | undefined;
  /** Each connector's upstream throttle (shared-limits.ts); default one in process per connector. */
  throttleFor?: ((budget: string, manifest: LoadedManifest) => Throttle | null) | undefined;
  /**
   * On a SQLite file or PostgreSQL, write the syncs' records in a worker thread
   * (recordWriterSink): the service does, so that requests do not wait behind the writes;
   * `switchboard sync`, which serves no request, does not. Ignored on in-memory SQLite.
   */
  writeInWorker?: boolean;
  /**
   * The sync worker's upstream transport (src/sync/pages-worker.ts): with it, and a record writer
   * in a worker, and config.syncInWorker, the syncs' pages run in that worker. The service passes
   * its own transport's options; an injected fetch (tests) has no counterpart in another thread,
   * so without a module that makes one the syncs stay on the main thread.
   */
  syncFetch?: PagesFetch | undefined;
}

/**
 * Sync pages written at once per instance on PostgreSQL (SyncEngineOptions.pageWriteSlots): the
 * pool's 10 connections less 3 kept for requests, the scheduler and the runs' own bookkeeping.
 * Issue 25's fleet bench: 100 syncs writing their pages took all 10 connections while an
 * execute's token and connector lookups waited behind them (pool waits of seconds).
 */
export const POSTGRES_SYNC_WRITE_SLOTS = 7;

/** The sync engine's pageWriteSlots for a dialect: POSTGRES_SYNC_WRITE_SLOTS on PostgreSQL; none on SQLite (syncWrites takes turns there). */
export function syncPageWriteSlots(dialect: 'sqlite' | 'postgres'): number | undefined {
  return dialect === 'postgres' ? POSTGRES_SYNC_WRITE_SLOTS : undefined;
}

/** Records per write of a sync page on SQLite, on the main thread (syncWrites) as in the record writer's worker. */
export const SQLITE_SYNC_WRITE_RECORDS = RECORD_WRITER_PART_RECORDS;
/** Longest run of sync writes on SQLite before the event loop gets a turn (see syncWrites). */
export const SQLITE_SYNC_WRITE_SLICE_MS = 10;
/** On a SQLite file, the sync writes pause for a WAL checkpoint (in a worker) when none ran for this long (see syncWrites). */
export const SQLITE_SYNC_CHECKPOINT_MS = 100;

/** The part of a WalCheckpointer (src/store/wal-checkpointer.ts) syncWrites uses. */
export interface SyncCheckpoints {
  /** ms since the last checkpoint started. */
  readonly sinceLast: number;
  /** One checkpoint, off the main thread; resolves (never rejects) when it is done or failed. */
  checkpoint(): Promise<unknown>;
}

/**
 * The sink the sync engine writes through. On SQLite every write runs synchronously in this
 * process (better-sqlite3), and Kysely hands the one connection from write to write in
 * microtasks: with 100 syncs each storing pages of 30 records, the event loop ran their writes
 * back to back for up to 2.6 s while an execute waited (issue 25's fleet bench). So on SQLite a
 * sync's page is written in parts of SQLITE_SYNC_WRITE_RECORDS, one part at a time across all
 * syncs in the order they come, and once writes have run for `sliceMs` (default
 * SQLITE_SYNC_WRITE_SLICE_MS) the next waits a turn of the event loop (setImmediate), where
 * requests are read and answered. A page's records are still all stored before its checkpoint;
 * a part is its own transaction, which resuming makes safe (the page is fetched and written
 * again).
 *
 * With `checkpoints` (a SQLite file's WalCheckpointer), the next write waits, when no checkpoint
 * ran for SQLITE_SYNC_CHECKPOINT_MS, for one in the checkpointer's worker: the event loop is free
 * meanwhile, and no sync write adds to the log while it is copied, so the checkpoint gets to its
 * end and the next commit starts the log afresh. Otherwise the committing connection, here the
 * main thread, ran each checkpoint itself: about five a second under 100 syncs, each copying 4 MB
 * and fsyncing twice while requests waited (issue 25).
 *
 * On PostgreSQL the writes are the server's work and go through as they are.
 */
export function syncWrites(records: RecordSink, dialect: 'sqlite' | 'postgres', sliceMs = SQLITE_SYNC_WRITE_SLICE_MS, checkpoints?: SyncCheckpoints): RecordSink {
  if (dialect !== 'sqlite') return records;
  let turn: Promise<unknown> = Promise.resolve();
  let since = performance.now();
  const inTurn = <T>(write: () => Promise<T>): Promise<T> => {
    const mine = turn
      .then(async () => {
        if (checkpoints !== undefined && checkpoints.sinceLast >= SQLITE_SYNC_CHECKPOINT_MS) {
          await checkpoints.checkpoint();
          since = performance.now();
        } else if (performance.now() - since >= sliceMs) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          since = performance.now();
        }
      })
      .then(write);
    turn = mine.catch(() => undefined);
    return mine;
  };
  return {
    upsert: async (connectorId, entity, def, list, syncRun) => {
      // The page's counts are its parts' counts added up (the change feed's added/updated).
      const counts = { added: 0, updated: 0 };
      for (let i = 0; i < list.length; i += SQLITE_SYNC_WRITE_RECORDS) {
        const part = list.slice(i, i + SQLITE_SYNC_WRITE_RECORDS);
        const c = await inTurn(() => records.upsert(connectorId, entity, def, part, syncRun));
        if (c) {
          counts.added += c.added;
          counts.updated += c.updated;
        }
      }
      return counts;
    },
    deleteMissing: (connectorId, entity, syncRun) => inTurn(() => records.deleteMissing(connectorId, entity, syncRun)),
    deleteRecords: (connectorId, entity, ids) => inTurn(() => records.deleteRecords(connectorId, entity, ids)),
    deleteConnector: (connectorId) => records.deleteConnector(connectorId),
    count: (connectorId, entity) => records.count(connectorId, entity),
  };
}

/**
 * The sink of a service on a SQLite file or PostgreSQL: the syncs' upserts and deletions run in
 * the record writer's worker thread (record-writer.ts), on a connection (a pool) of its own, on
 * SQLite in parts of RECORD_WRITER_PART_RECORDS records; counts and the connector's removal stay
 * on the main connection. With the writes on the main thread, syncWrites could only take turns with the
 * requests: 100 syncs kept that thread busy a third of the time, an execute's p50 rose from 3.4
 * to 30 ms, and to 2.8 ms with the writes left out (issue 25's fleet bench).
 */
export function recordWriterSink(records: RecordSink, writer: RecordWriter): RecordSink {
  return {
    upsert: (connectorId, entity, def, list, syncRun) => writer.upsert(connectorId, entity, def, list, syncRun),
    deleteMissing: (connectorId, entity, syncRun) => writer.deleteMissing(connectorId, entity, syncRun),
    deleteRecords: (connectorId, entity, ids) => writer.deleteRecords(connectorId, entity, ids),
    deleteConnector: (connectorId) => records.deleteConnector(connectorId),
    count: (connectorId, entity) => records.count(connectorId, entity),
  };
}

export function createHostedData(o: HostedDataOptions): HostedData {
  // Search cursors are signed with a key derived from the credentials key ring, so every
  // instance sharing SWITCHBOARD_ENCRYPTION_KEY accepts the others' cursors.
  const cursorSecret = o.keyRing.derive('search-cursor');
  const tombstoneRetentionMs = o.config.tombstoneRetentionDays * 86_400_000;
  const records = new RecordStore(o.database, { cursorSecret, tombstoneRetentionMs, now: o.now });
  // Outgoing webhooks go through a transport of their own: tenant URLs reach public addresses only (webhook-sender.ts).
  const addresses = { allowPrivate: o.config.webhookAllowPrivateAddresses, allowLinkLocal: o.config.egressAllowLinkLocal };
  const sender = createWebhookSender(addresses);
  const outbox = new EventOutbox({
    db: o.database.db as unknown as Kysely<EventsTables>,
    dialect: o.database.dialect,
    keyRing: o.keyRing,
    send: sender.send,
    addresses,
    endpointsPerOrganization: o.config.webhookEndpointsPerOrganization,
    now: o.now,
    log: o.log,
  });
  const events = new ServiceEvents(outbox, o.store, o.log);
  // writeGate: the main connection of a SQLite file, which a second connection can share.
  // PostgreSQL: the worker's own pool, as many connections as the pages written at once.
  const gate = o.database.writeGate;
  const where =
    o.writeInWorker !== true
      ? undefined
      : gate !== undefined
        ? { file: o.database.file!, writeGate: gate }
        : o.database.dialect === 'postgres' && o.database.url !== undefined
          ? { postgres: { url: o.database.url, ...(o.database.schema !== undefined ? { schema: o.database.schema } : {}), connections: POSTGRES_SYNC_WRITE_SLOTS } }
          : undefined;
  const writer =
    where !== undefined
      ? new RecordWriter({
          ...where,
          cursorSecret,
          tombstoneRetentionMs,
          now: o.now,
          onError: (e) => o.log.warn({ detail: e.message }, 'record writer worker failed'),
          ...(o.config.syncInWorker && o.syncFetch !== undefined ? { pages: { host: PAGES_HOST_MODULE, fetch: o.syncFetch, retry: o.retry } } : {}),
        })
      : undefined;
  /** Connectors whose refused refresh is pausing their sync: whether the pause told subscribers already. */
  const refusing = new Map<string, boolean>();
  const refresh = new RefreshCoordinator({
    db: o.database.db as unknown as Kysely<OperationsTables>,
    store: o.store,
    keyRing: o.keyRing,
    now: o.now,
    // The token endpoint refused the grant: auth_failed at once, the sync paused, connector.auth_failed sent once.
    onRefused: async (connectorId, error, ciphertext) => {
      if (!(await markAuthFailed(o.store, connectorId, error, new Date(o.now()).toISOString(), ciphertext))) return;
      runtimes.forget(connectorId);
      refusing.set(connectorId, false);
      try {
        await sync.pause(connectorId);
        if (refusing.get(connectorId) !== true) await events.authFailed(connectorId, o.now());
      } finally {
        refusing.delete(connectorId);
      }
    },
  });
  const runtimes = new RuntimePool({ keyRing: o.keyRing, store: o.store, config: o.config, fetch: o.fetch, now: o.now, log: o.log, retry: o.retry, throttleFor: o.throttleFor, refresh });
  const pagesWriter = writer?.runsPages === true ? writer : undefined;
  /** A manifest the sync worker can load: from a file (loaded again there). */
  const onDisk = new Map<string, boolean>();
  /**
   * A connector's pages in the sync worker, when it can run them: its manifest is a file, and its
   * tokens do not refresh (an OAuth 2 refresh is stored and shared with this thread's runtime,
   * one refresh in flight per connector: those syncs stay here).
   */
  const pagesIn = (row: ConnectorRow, manifest: LoadedManifest): RemotePages | undefined => {
    if (pagesWriter === undefined) return undefined;
    if (manifest.auth.find((a) => a.def.name === row.auth_variant)?.def.type === 'oauth2') return undefined;
    let file = onDisk.get(manifest.file);
    if (file === undefined) onDisk.set(manifest.file, (file = manifest.file !== '' && existsSync(manifest.file)));
    if (!file) return undefined;
    const { credentials, throttle } = runtimes.forWorker(row, manifest);
    const baseUrl = o.config.connectorTypes[row.connector_type]?.baseUrl;
    const connector: PagesConnector = {
      id: row.id,
      file: manifest.file,
      authVariant: row.auth_variant,
      credentials,
      version: row.credentials_ciphertext,
      ...(baseUrl !== undefined ? { baseUrl } : {}),
      deadlineMs: o.config.upstreamDeadlineMs,
      throttled: throttle !== null,
    };
    return (job, stored, signal) => pagesWriter.pages(connector, job, stored, throttle, signal);
  };
  const sync = new SyncEngine({
    database: o.database as Database,
    sink: writer !== undefined ? recordWriterSink(records, writer) : syncWrites(records, o.database.dialect, SQLITE_SYNC_WRITE_SLICE_MS, o.database.checkpointer),
    pageWriteSlots: syncPageWriteSlots(o.database.dialect),
    defaultIntervalMs: o.config.syncIntervalSeconds * 1000,
    ...(o.config.instanceId !== undefined ? { instanceName: o.config.instanceId } : {}),
    runtimeFor: async (connectorId) => {
      const row = await o.store.getConnectorById(connectorId);
      const manifest = row === undefined ? undefined : o.registry.get(row.connector_type);
      return row === undefined || manifest === undefined ? undefined : { runtime: runtimes.get(row, manifest).runtime, manifest, pages: pagesIn(row, manifest) };
    },
    onError: (connectorId, e) => o.log.warn({ connector_id: connectorId, code: (e as { code?: string }).code, detail: (e as Error).message }, 'sync failed'),
    // Refused credentials: the connector becomes auth_failed (the engine has paused its schedule).
    onAuthFailed: async (connectorId, e) => {
      const row = await o.store.getConnectorById(connectorId);
      const manifest = row === undefined ? undefined : o.registry.get(row.connector_type);
      if (row === undefined || manifest === undefined) return;
      const { secrets } = runtimes.get(row, manifest);
      const clean = new SwitchboardError(e.code, scrubSecrets(e.message, secrets));
      if (await markAuthFailed(o.store, connectorId, clean, new Date(o.now()).toISOString(), row.credentials_ciphertext)) await events.authFailed(connectorId, o.now());
    },
    onPaused: (connectorId) => {
      if (refusing.has(connectorId)) refusing.set(connectorId, true);
      return events.authFailed(connectorId, o.now());
    },
    onResumed: (connectorId) => events.reconnected(connectorId, o.now()),
    onCompleted: (result) => events.syncCompleted(result),
    onRecordsChanged: (change) => events.recordsChanged(change),
    onFailed: async (connectorId, e) => {
      const row = await o.store.getConnectorById(connectorId);
      const manifest = row === undefined ? undefined : o.registry.get(row.connector_type);
      const secrets = row === undefined || manifest === undefined ? [] : runtimes.get(row, manifest).secrets;
      await events.syncFailed(connectorId, { code: (e as { code?: string }).code ?? 'internal_error', message: scrubSecrets((e as Error).message ?? String(e), secrets) }, o.now());
    },
    // The scheduler leaves auth_failed connectors alone until their credentials change or a check passes.
    canRun: async (connectorIds) => {
      const statuses = await o.store.connectorStatuses(connectorIds);
      return connectorIds.map((id) => statuses.get(id) !== 'auth_failed');
    },
  });
  return {
    records,
    runtimes,
    sync,
    outbox,
    events,
    forgetConnector: async (connectorId, trx) => {
      await sync.removeWithin(connectorId, trx as unknown as Kysely<unknown>, new RecordStore({ db: trx, dialect: o.database.dialect }, { cursorSecret }));
      await (trx as unknown as Kysely<EventsTables>).deleteFrom('webhook_attributions').where('connector_id', '=', connectorId).execute();
      await (trx as unknown as Kysely<WebhookSubscriptionsTables>).deleteFrom('webhook_subscriptions').where('connector_id', '=', connectorId).execute();
    },
    close: async () => {
      await writer?.close();
    },
    closeSender: () => sender.close(),
    syncWorker: pagesWriter,
  };
}
