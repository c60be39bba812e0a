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
    readonly leaseMs: number,
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

/** A run's lease kept alive by a timer (LeaseKeeper.start), whatever the run is waiting for. */
export interface LeaseKeeper {
  /** The run's signal: aborted when the caller's is, or when a renewal finds the lease lost. */
  readonly signal: AbortSignal;
  /** The LeaseLost a renewal met, if any: the run's end is that, not the abort it caused. */
  readonly lost: LeaseLost | undefined;
  stop(): void;
}

/**
 * Renew a run's lease every third of its length from a timer, not only after each page: a page
 * can take longer than the lease (a slow or throttled upstream and its retries, a parent list of
 * many pages, hydration, a wait for a page-write slot), and a lease that lapsed mid-page let
 * another instance start the same run beside it. A renewal that finds the lease gone (the
 * connector deleted, the run taken over) aborts the run's signal at once, its upstream request
 * included. A renewal that fails otherwise (the database unreachable for a moment) is tried again
 * at the next tick; the page-end renewals still throw when the lease is really lost.
 */
export function keepLease(leases: SyncLeases, connectorId: string, callerSignal?: AbortSignal): LeaseKeeper {
  // The run's signal follows the caller's (AbortSignal.any needs Node 20.3; engines say >= 20).
  const controller = new AbortController();
  const follow = (): void => controller.abort(callerSignal?.reason);
  if (callerSignal?.aborted === true) follow();
  else callerSignal?.addEventListener('abort', follow, { once: true });
  let lost: LeaseLost | undefined;
  let renewing = false;
  const timer = setInterval(
    () => {
      if (renewing || controller.signal.aborted) return;
      renewing = true;
      leases
        .heartbeat(connectorId, callerSignal)
        .catch((e: unknown) => {
          if (e instanceof LeaseLost && callerSignal?.aborted !== true) {
            lost = e;
            controller.abort(e);
          }
        })
        .finally(() => (renewing = false));
    },
    Math.max(1, Math.floor(leases.leaseMs / 3)),
  );
  timer.unref();
  return {
    signal: controller.signal,
    get lost() {
      return lost;
    },
    stop: () => {
      clearInterval(timer);
      callerSignal?.removeEventListener('abort', follow);
    },
  };
}
