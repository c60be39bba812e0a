/**
 * The sync engine: copies each connector's data into the record store, so hosted `search` can
 * query it. Split by concern:
 *
 * - scheduler.ts — SyncEngine: which connector is due, one run at a time per connector, status;
 * - leases.ts    — the lease rows that make one instance at a time run a connector's sync;
 * - run.ts       — running one sync: incremental marks, checkpoints, removals, the bookkeeping;
 * - pages.ts     — one entity's pages: listing, hydrating, storing (in the sync worker or here);
 * - apply.ts     — applying changes to the record store, from a sync page or a vendor webhook;
 * - types.ts     — the module's public types.
 */
export { syncMigrations } from './sync-migrations.ts';
export { ChangeApplier, searchDef } from './apply.ts';
export { SyncEngine } from './scheduler.ts';
export { isAuthFailure } from './types.ts';
export type {
  RecordSink,
  RecordsChanged,
  UpsertCounts,
  RuntimeFactory,
  SinkEntityDef,
  SyncEngineOptions,
  SyncOptions,
  SyncProgress,
  SyncResult,
  SyncStatus,
  EntityRunCounts,
} from './types.ts';
