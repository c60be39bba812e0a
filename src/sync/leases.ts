/**
 * The lease rows that make one instance at a time run a connector's sync: a run holds
 * sync_state.lease_owner/lease_until, renewed after every page. A crashed instance's lease
 * expires and any instance (or the same one restarted) takes the run over from its checkpoint.
 * This is the queue on the database (the same design as pg-boss's singleton jobs, with no extra
 * schema) and works on SQLite and PostgreSQL alike.
 */
import type { Kysely } from 'kysely';
import type { SyncStateRow, SyncTables } from './sync-migrations.ts';

export const now = (): string => new Date().toISOString();
export const later = (ms: number): string => new Date(Date.now() + ms).toISOString();

/** Raised inside a run that lost its lease (connector deleted, or taken over). */
export class LeaseLost extends Error {}

export class SyncLeases {
  constructor(
    private readonly db: Kysely<SyncTables>,
    readonly instanceId: string,
    private readonly leaseMs: number,
  ) {}

  async state(connectorId: string): Promise<SyncStateRow | undefined> {
    return this.db.selectFrom('sync_state').selectAll().where('connector_id', '=', connectorId).executeTakeFirst();
  }

  /** Take the connector's lease atomically; false when another run holds it. */
  async claim(connectorId: string): Promise<boolean> {
    const t = now();
    const r = await this.db
      .updateTable('sync_state')
      .set({ lease_owner: this.instanceId, lease_until: later(this.leaseMs) })
      .where('connector_id', '=', connectorId)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', t), eb('lease_owner', '=', this.instanceId)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Extend our lease; throws LeaseLost when the row is gone or someone else holds it. */
  async heartbeat(connectorId: string, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw new LeaseLost('aborted');
    const r = await this.db
      .updateTable('sync_state')
      .set({ lease_until: later(this.leaseMs) })
      .where('connector_id', '=', connectorId)
      .where('lease_owner', '=', this.instanceId)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) throw new LeaseLost('lease lost');
  }
}
