/**
 * The change log behind the change feed (GET .../connectors/{id}/records): per stored record of a
 * scope (connector, entity), when it was first seen, when its payload last changed, when it was
 * deleted, a hash of its payload, and `seq`, the scope's change counter when it last changed.
 *
 * - Written by the record store inside its own write transactions, after the scope row was
 *   touched (ensureScope / touchScope): on PostgreSQL that row lock serializes the writers of a
 *   scope, on SQLite there is one writer, so a scope's changes commit in seq order — a reader
 *   paging by `seq > cursor` never skips one committed later.
 * - Seqs come from the scope's own counter (search_scopes.change_seq, migration 0008), never
 *   from the log's max(seq): pruning the newest tombstone would otherwise hand its seq out again,
 *   and a consumer holding it as its cursor would skip that next change. The counter is also the
 *   highest cursor the feed can have given: a cursor past it is refused (invalid_cursor).
 * - A record whose payload hash did not change is not a change (its seq stays).
 * - Deleted records stay as tombstones (with the last payload) for the retention period; older
 *   tombstones are pruned when the scope next deletes, and never returned.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Executor, SearchDialect } from './dialect.ts';

export type ChangeAction = 'added' | 'updated' | 'deleted';

/** One entry of the change feed: the record (the last payload, for a deletion) and what happened to it. */
export interface ChangeEntry {
  record: Record<string, unknown>;
  _metadata: {
    action: ChangeAction;
    first_seen_at: string;
    last_modified_at: string;
    deleted_at: string | null;
    cursor: string;
  };
}

export interface ChangePage {
  data: ChangeEntry[];
  /** The cursor to ask from next: the last entry's, or the one asked from when the page is empty. */
  next_cursor: string | null;
  has_more: boolean;
}

/** What an upsert changed. */
export interface ChangeCounts {
  added: number;
  updated: number;
}

/** Rows written per statement (7 parameters a row keeps under both databases' parameter limits). */
const WRITE_CHUNK = 500;

export function payloadHash(recordJson: string): string {
  return createHash('sha1').update(recordJson).digest('base64');
}

/** A cursor of the feed: the decimal seq; anything else is refused by the caller (invalid_cursor). */
export function parseChangeCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined || cursor === '') return 0;
  return /^\d{1,15}$/.test(cursor) ? Number(cursor) : undefined;
}

interface LogRow {
  record_id: string;
  payload_hash: string;
  first_seen_at: string;
  deleted_at: string | null;
}

/** Take `n` seqs from the scope's counter; answers the first. */
async function takeSeqs(db: Executor, scopeId: number, n: number): Promise<number> {
  const { rows } = await sql<{
    m: number | string;
  }>`UPDATE search_scopes SET change_seq = change_seq + ${n} WHERE scope_id = ${scopeId} RETURNING change_seq AS m`.execute(db);
  return Number(rows[0]?.m ?? n) - n + 1;
}

/** The highest seq a scope has handed out (0: none, or no such scope). */
export async function lastChangeSeq(db: Executor, connectorId: string, entity: string): Promise<number> {
  const { rows } = await sql<{
    m: number | string;
  }>`SELECT change_seq AS m FROM search_scopes WHERE connector_id = ${connectorId} AND entity = ${entity}`.execute(db);
  return Number(rows[0]?.m ?? 0);
}

async function existing(db: Executor, dialect: SearchDialect, scopeId: number, ids: string[]): Promise<Map<string, LogRow>> {
  const out = new Map<string, LogRow>();
  for (let i = 0; i < ids.length; i += WRITE_CHUNK * 10) {
    const chunk = ids.slice(i, i + WRITE_CHUNK * 10);
    const { rows } = await sql<LogRow>`SELECT record_id, payload_hash, first_seen_at, deleted_at FROM record_changes
      WHERE scope_id = ${scopeId} AND ${dialect.inList(sql.ref('record_id'), chunk, 'text')}`.execute(db);
    for (const r of rows) out.set(r.record_id, r);
  }
  return out;
}

interface WriteRow {
  scope_id: number;
  record_id: string;
  seq: number;
  action: ChangeAction;
  payload_hash: string;
  first_seen_at: string;
  last_modified_at: string;
  deleted_at: string | null;
  tombstone: string | null;
}

async function write(db: Executor, rows: WriteRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += WRITE_CHUNK) {
    await db
      .insertInto('record_changes')
      .values(rows.slice(i, i + WRITE_CHUNK))
      .onConflict((oc) =>
        oc.columns(['scope_id', 'record_id']).doUpdateSet((eb) => ({
          seq: eb.ref('excluded.seq'),
          action: eb.ref('excluded.action'),
          payload_hash: eb.ref('excluded.payload_hash'),
          first_seen_at: eb.ref('excluded.first_seen_at'),
          last_modified_at: eb.ref('excluded.last_modified_at'),
          deleted_at: eb.ref('excluded.deleted_at'),
          tombstone: eb.ref('excluded.tombstone'),
        })),
      )
      .execute();
  }
}

/**
 * Note upserted records ([record id, payload hash], in input order): new ones (or ones back from
 * a deletion) are added, ones whose hash differs updated, the rest unchanged. Call inside the
 * transaction that wrote them, after the scope row was touched.
 */
export async function noteUpserts(
  db: Executor,
  dialect: SearchDialect,
  scopeId: number,
  batch: [id: string, hash: string][],
  now: string,
): Promise<ChangeCounts> {
  const known = await existing(
    db,
    dialect,
    scopeId,
    batch.map(([id]) => id),
  );
  const rows: WriteRow[] = [];
  const counts: ChangeCounts = { added: 0, updated: 0 };
  for (const [id, hash] of batch) {
    const prev = known.get(id);
    const action: ChangeAction | undefined = prev === undefined || prev.deleted_at !== null ? 'added' : prev.payload_hash !== hash ? 'updated' : undefined;
    if (action === undefined) continue;
    counts[action]++;
    rows.push({
      scope_id: scopeId,
      record_id: id,
      seq: 0,
      action,
      payload_hash: hash,
      first_seen_at: action === 'added' ? now : prev!.first_seen_at,
      last_modified_at: now,
      deleted_at: null,
      tombstone: null,
    });
  }
  if (rows.length === 0) return counts;
  let seq = await takeSeqs(db, scopeId, rows.length);
  for (const r of rows) r.seq = seq++;
  await write(db, rows);
  return counts;
}

/**
 * Note deleted records ([record id, last payload JSON]) as tombstones, and prune the scope's
 * tombstones older than `pruneBefore`. Call inside the deleting transaction.
 */
export async function noteDeletes(
  db: Executor,
  dialect: SearchDialect,
  scopeId: number,
  deleted: [id: string, json: string][],
  now: string,
  pruneBefore: string,
): Promise<void> {
  await sql`DELETE FROM record_changes WHERE scope_id = ${scopeId} AND deleted_at IS NOT NULL AND deleted_at < ${pruneBefore}`.execute(db);
  if (deleted.length === 0) return;
  const known = await existing(
    db,
    dialect,
    scopeId,
    deleted.map(([id]) => id),
  );
  let seq = await takeSeqs(db, scopeId, deleted.length);
  await write(
    db,
    deleted.map(([id, json]) => ({
      scope_id: scopeId,
      record_id: id,
      seq: seq++,
      action: 'deleted' as const,
      payload_hash: payloadHash(json),
      first_seen_at: known.get(id)?.first_seen_at ?? now,
      last_modified_at: now,
      deleted_at: now,
      tombstone: json,
    })),
  );
}

/** Forget a scope's change log (its connector is deleted). */
export async function dropChanges(db: Executor, scopeId: number): Promise<void> {
  await sql`DELETE FROM record_changes WHERE scope_id = ${scopeId}`.execute(db);
}

/** A page of a scope's changes after `after` (a seq), oldest first; tombstones deleted before `tombstonesSince` are left out. */
export async function readChanges(
  db: Executor,
  dialect: SearchDialect,
  connectorId: string,
  entity: string,
  after: number,
  limit: number,
  tombstonesSince: string,
): Promise<ChangePage> {
  const { rows } = await sql<{
    seq: number | string;
    action: ChangeAction;
    first_seen_at: string;
    last_modified_at: string;
    deleted_at: string | null;
    tombstone: string | null;
    record: unknown;
  }>`
    SELECT c.seq, c.action, c.first_seen_at, c.last_modified_at, c.deleted_at, c.tombstone, r.record
    FROM search_scopes s
    JOIN record_changes c ON c.scope_id = s.scope_id
    LEFT JOIN search_records r ON r.scope_id = c.scope_id AND r.record_id = c.record_id AND c.deleted_at IS NULL
    WHERE s.connector_id = ${connectorId} AND s.entity = ${entity} AND c.seq > ${after}
      AND (c.deleted_at IS NULL OR c.deleted_at >= ${tombstonesSince})
    ORDER BY c.seq
    LIMIT ${limit + 1}`.execute(db);
  const page = rows.slice(0, limit);
  const data = page.map((r) => ({
    record:
      r.deleted_at !== null
        ? (JSON.parse(r.tombstone ?? '{}') as Record<string, unknown>)
        : r.record === null || r.record === undefined
          ? {}
          : dialect.parseRecord(r.record),
    _metadata: { action: r.action, first_seen_at: r.first_seen_at, last_modified_at: r.last_modified_at, deleted_at: r.deleted_at, cursor: String(r.seq) },
  }));
  return { data, next_cursor: data.at(-1)?._metadata.cursor ?? (after > 0 ? String(after) : null), has_more: rows.length > limit };
}
