/**
 * What every route group of the service works with: the store, the key ring, the
 * configuration, the connector registry and the clock. Built once per app by buildApp().
 */
import type { WebhookAttributions } from '../webhooks/attribution.ts';
import type { WebhookSubscriptions } from '../webhooks/subscriptions.ts';
import type { RecordWriter } from '../search/record-writer.ts';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { SwitchboardError } from '../errors/index.ts';
import type { FetchLike, RetryPolicy } from '../http/index.ts';
import { kindIndex, type LoadedManifest } from '../manifest/index.ts';
import type { ConnectorRow, Database, KeyRing, ServiceStore, ServiceTables } from '../store/index.ts';
import type { ServiceConfig } from './config.ts';
import type { RuntimePool } from './connectors/runtime-pool.ts';
import type { LimitBackend } from './limits/shared-limits.ts';
import type { RecordStore } from '../search/index.ts';
import type { SyncEngine } from '../sync/index.ts';
import type { EventOutbox } from '../events/outbox.ts';
import type { ServiceEvents } from '../events/service-events.ts';

/** Extension points for modules built after the service (sync, search). */
export interface ServiceHooks {
  /** After a connector row is inserted (e.g. start its first sync). Errors are logged, not returned. */
  onConnectorCreated?: (connector: ConnectorRow) => void | Promise<void>;
  /**
   * Inside the transaction that deletes a connector row, to remove what other modules keep
   * about it (synced records, sync state) with `db` (the transaction); throwing rolls the
   * deletion back (500). Tables that reference connectors(id) ON DELETE CASCADE need nothing.
   */
  onConnectorDeleted?: (connector: ConnectorRow, db: Kysely<ServiceTables>) => void | Promise<void>;
}

export interface ServiceContext {
  database: Database<ServiceTables>;
  store: ServiceStore;
  keyRing: KeyRing;
  config: ServiceConfig;
  registry: Map<string, LoadedManifest>;
  fetch: FetchLike;
  /** Epoch milliseconds; injectable so tests can expire tokens without sleeping. */
  now: () => number;
  runtimes: RuntimePool;
  /** Synced records and search over them. */
  records: RecordStore;
  /** Syncs each connector's data into `records`. */
  sync: SyncEngine;
  /** The thread where the syncs' pages run (SWITCHBOARD_SYNC_IN_WORKER), when they run in one. */
  syncWorker: RecordWriter | undefined;
  /** Events: the outbox of outgoing webhooks and what the service reports into it (src/events). */
  outbox: EventOutbox;
  events: ServiceEvents;
  /** Vendor webhooks in: each connector's vendor account, as its credential checks report it (src/webhooks/attribution.ts). */
  webhookAttributions: WebhookAttributions;
  /** Vendor webhooks in: the connectors' subscriptions whose secret is their own (src/webhooks/subscriptions.ts). */
  webhookSubscriptions: WebhookSubscriptions;
  hooks: ServiceHooks;
  /** Limits (per organization, token endpoint, upstream throttles), in process or shared by instances. */
  limits: LimitBackend;
  log: Logger;
  /** Retry policy overrides for upstream calls (tests shorten delays). */
  retry?: Partial<RetryPolicy>;
  /** Base URL the service is reached at (SWITCHBOARD_PUBLIC_URL, or the listening address). */
  publicUrl: () => string;
}

/** ISO timestamp of the context clock. */
export function nowIso(ctx: Pick<ServiceContext, 'now'>, offsetSeconds = 0): string {
  return new Date(ctx.now() + offsetSeconds * 1000).toISOString();
}

/** A registered connector type by its name or a manifest alias (any case), or unknown_connector_type listing the known ones. */
export function connectorType(ctx: Pick<ServiceContext, 'registry'>, type: string, status?: number): LoadedManifest {
  const m = ctx.registry.get(type) ?? ctx.registry.get(kindIndex(ctx.registry).byName(type) ?? '');
  if (m === undefined) {
    const valid = [...ctx.registry.keys()].sort();
    throw new SwitchboardError('unknown_connector_type', `Unknown connector type "${type}". Known types: ${valid.join(', ')}`, {
      errors: [{ path: '/connector_type', message: `must be one of: ${valid.join(', ')}` }],
      details: { connector_type: type, valid },
      ...(status !== undefined ? { status } : {}),
    });
  }
  return m;
}
