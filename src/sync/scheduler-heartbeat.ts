/**
 * Whether any instance runs the sync scheduler. A POST .../sync only marks a connector due; the
 * run starts when a scheduler finds it. With SWITCHBOARD_SYNC_SCHEDULER=false on every instance
 * nothing ever would, so each running scheduler notes itself in `sync_schedulers` (its instance
 * id and when it was last seen: at start and at every poll) and removes itself when it stops;
 * the route answers 503 sync_scheduler_not_running when no scheduler was seen within
 * SCHEDULER_SEEN_WITHIN_MS (an instance that died without stopping counts for that long).
 */
import type { Kysely } from 'kysely';
import type { SyncTables } from './sync-migrations.ts';

/** A scheduler not seen for this long is taken as gone. */
export const SCHEDULER_SEEN_WITHIN_MS = 60_000;

/** Note that this instance's scheduler runs, now. */
export async function noteScheduler(db: Kysely<SyncTables>, instanceId: string, nowMs: number): Promise<void> {
  const seen_at = new Date(nowMs).toISOString();
  await db
    .insertInto('sync_schedulers')
    .values({ instance_id: instanceId, seen_at })
    .onConflict((oc) => oc.column('instance_id').doUpdateSet({ seen_at }))
    .execute();
}

/** This instance's scheduler stopped. */
export async function forgetScheduler(db: Kysely<SyncTables>, instanceId: string): Promise<void> {
  await db.deleteFrom('sync_schedulers').where('instance_id', '=', instanceId).execute();
}

/** Whether some instance's scheduler was seen within SCHEDULER_SEEN_WITHIN_MS of `nowMs`. */
export async function anySchedulerSeen(db: Kysely<SyncTables>, nowMs: number): Promise<boolean> {
  const since = new Date(nowMs - SCHEDULER_SEEN_WITHIN_MS).toISOString();
  const row = await db.selectFrom('sync_schedulers').select('instance_id').where('seen_at', '>=', since).limit(1).executeTakeFirst();
  return row !== undefined;
}
