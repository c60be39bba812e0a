/**
 * The service's events: what the sync engine and the connector lifecycle report, turned into
 * outbox events (outbox.ts) of the connector's organization. Event ids are derived from what
 * happened (a run id, a webhook delivery id), so reporting the same thing twice — a resumed run,
 * a hook run again — is one event.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { ConnectorRow, ServiceStore } from '../store/index.ts';
import type { RecordsChanged, SyncResult } from '../sync/index.ts';
import type { EventOutbox, EventType } from './outbox.ts';

const short = (s: string): string => createHash('sha256').update(s).digest('base64url').slice(0, 22);

export function connectorSummary(row: ConnectorRow): Record<string, unknown> {
  return { id: row.id, customer_name: row.customer_name, connector_type: row.connector_type, name: row.name, status: row.status };
}

export class ServiceEvents {
  constructor(
    private readonly outbox: EventOutbox,
    private readonly store: ServiceStore,
    private readonly log?: Logger,
  ) {}

  /** Emit for a connector's organization; failures are logged, never thrown into the sync or the request that caused them. */
  private async emitFor(connectorId: string, type: EventType, data: (row: ConnectorRow) => Record<string, unknown>, id: string): Promise<void> {
    try {
      const row = await this.store.getConnectorById(connectorId);
      if (row === undefined) return;
      await this.outbox.emit(row.organization_id, type, data(row), id);
    } catch (e) {
      this.log?.warn({ connector_id: connectorId, event_type: type, err_message: (e as Error).message }, 'event not recorded');
    }
  }

  connectorCreated(row: ConnectorRow): Promise<void> {
    return this.emitFor(row.id, 'connector.created', (r) => ({ connector: connectorSummary(r) }), `evt_${short(`connector.created:${row.id}`)}`);
  }

  authFailed(connectorId: string, at: number): Promise<void> {
    return this.emitFor(
      connectorId,
      'connector.auth_failed',
      (r) => ({ connector: connectorSummary(r), last_error: r.last_error === null ? null : (JSON.parse(r.last_error) as unknown) }),
      `evt_${short(`connector.auth_failed:${connectorId}:${at}`)}`,
    );
  }

  reconnected(connectorId: string, at: number): Promise<void> {
    return this.emitFor(
      connectorId,
      'connector.reconnected',
      (r) => ({ connector: connectorSummary(r) }),
      `evt_${short(`connector.reconnected:${connectorId}:${at}`)}`,
    );
  }

  syncCompleted(result: SyncResult): Promise<void> {
    return this.emitFor(
      result.connector_id,
      'sync.completed',
      () => ({ connector_id: result.connector_id, run_id: result.run_id, full: result.full, resumed: result.resumed, entities: result.entities }),
      `evt_${short(`sync.completed:${result.run_id}`)}`,
    );
  }

  syncFailed(connectorId: string, error: { code: string; message: string }, at: number): Promise<void> {
    return this.emitFor(connectorId, 'sync.failed', () => ({ connector_id: connectorId, error }), `evt_${short(`sync.failed:${connectorId}:${at}`)}`);
  }

  recordsChanged(change: RecordsChanged): Promise<void> {
    const source = 'sync_run' in change.source ? `run:${change.source.sync_run}` : `webhook:${change.source.webhook}`;
    return this.emitFor(
      change.connector_id,
      'records.changed',
      () => ({ ...change }),
      `evt_${short(`records.changed:${change.connector_id}:${change.entity}:${source}`)}`,
    );
  }
}
