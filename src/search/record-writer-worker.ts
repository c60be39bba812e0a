/**
 * The worker thread of a RecordWriter (record-writer.ts): a RecordStore on a connection of its
 * own to the SQLite file (a pool of its own on PostgreSQL), running the writes it is sent (one at
 * a time, in order, on SQLite; up to the pool's size at once on PostgreSQL) and answering each
 * with its result or its error. With `pages` it is also the sync worker: the pages of syncs run
 * here (src/sync/pages-worker.ts, loaded from the module `pages.host` names: see pages-protocol.ts),
 * their records written through the same turns.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { sql } from 'kysely';
import { MAIN_WAITING, openDatabase, SQLITE_BUSY_TIMEOUT_MS, WORKER_HOLDING } from '../store/database.ts';
import { RecordStore } from './record-store.ts';
import { toWire, type RecordWriteOp } from './record-writer.ts';
import type { PagesFetch, PagesHostModule } from './pages-protocol.ts';
import type { RetryPolicy } from '../http/index.ts';

const data = workerData as {
  file?: string;
  postgres?: { url: string; schema?: string; connections: number };
  cursorSecret: string | Uint8Array;
  tombstoneRetentionMs?: number;
  partRecords: number;
  writeGate?: Int32Array;
  mainFirstMs: number;
  /** The sync worker's transport and retry policy: present, the worker also runs syncs' pages. */
  pages?: { host: string; fetch: PagesFetch; retry?: Partial<RetryPolicy> };
};
/**
 * Background work: on Linux this thread runs at a lower priority than the main thread, which
 * answers requests (a nice value for this thread only, through its thread id); elsewhere, as it
 * is. Not when it runs syncs' pages on PostgreSQL: there its work is the syncs' fetching and
 * parsing (the writes are the database server's), which sets their pace; niced, it fell behind
 * the database server's processes and the syncs reached 83 % of their upstreams' rate instead of
 * 98 % (issue 25's fleet bench). On SQLite its transactions are its own CPU: it stays niced.
 */
const WRITER_NICE = 10;
if (data.postgres === undefined || data.pages === undefined) {
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), WRITER_NICE);
  } catch {
    // No /proc/thread-self (not Linux): the thread keeps the process's priority.
  }
}
const port = parentPort!;
/** A PASSIVE checkpoint of the log at most this often (ms), between two writes. */
const CHECKPOINT_EVERY_MS = 100;

// PostgreSQL: a pool of its own, one connection per write run at once. SQLite: the main
// connection has its WAL checkpointer; this one checkpoints itself (checkpointNow).
const database =
  data.postgres !== undefined
    ? openDatabase(data.postgres.url, { poolSize: data.postgres.connections, ...(data.postgres.schema !== undefined ? { schema: data.postgres.schema } : {}) })
    : openDatabase(data.file, { walCheckpointer: false, mustExist: true });
const sqlite = database.dialect === 'sqlite';
// With a gate, this connection waits for the lock in inTurn, not in SQLite's busy handler.
if (sqlite && data.writeGate !== undefined) await sql`PRAGMA busy_timeout = 0`.execute(database.db);
// Checkpoints between turns, not in a commit: SQLite runs its automatic one once the commit has
// released the lock, but still within the write, so within the turn (main writes would wait for it).
if (sqlite) await sql`PRAGMA wal_autocheckpoint = 0`.execute(database.db);
let lastCheckpoint = performance.now();
async function checkpointNow(): Promise<void> {
  if (!sqlite || performance.now() - lastCheckpoint < CHECKPOINT_EVERY_MS) return;
  lastCheckpoint = performance.now();
  const r = (await sql<{ log: number; checkpointed: number }>`PRAGMA wal_checkpoint(PASSIVE)`.execute(database.db).catch(() => undefined))?.rows[0];
  if (r === undefined || r.log <= 0 || r.checkpointed !== r.log) return;
  // The whole log is in the database file: the next write starts it afresh, writing its header
  // and fsyncing it (1-16 ms). Make that write this connection's, in a turn (user_version set to
  // itself), not the main thread's next one. Refused for the lock: the next checkpoint tries again.
  beginTurn();
  try {
    await database.db.transaction().execute(async (trx) => {
      const v = Number((await sql<{ user_version: number }>`PRAGMA user_version`.execute(trx)).rows[0]?.user_version ?? 0);
      await sql.raw(`PRAGMA user_version = ${v}`).execute(trx);
    });
  } catch {
    // SQLITE_BUSY: another connection writes; it starts the log afresh then.
  } finally {
    endTurn();
  }
}
let now = Date.now();
const store = new RecordStore(database, {
  cursorSecret: typeof data.cursorSecret === 'string' ? data.cursorSecret : Buffer.from(data.cursorSecret),
  ...(data.tombstoneRetentionMs !== undefined ? { tombstoneRetentionMs: data.tombstoneRetentionMs } : {}),
  now: () => now,
});

/**
 * Begin a turn at the write lock (Database.writeGate): mark this worker as holding it, then give
 * way (and wait) while the main connection's writes want it, for up to mainFirstMs in all.
 */
function beginTurn(): void {
  const gate = data.writeGate;
  if (gate === undefined) return;
  const until = Date.now() + data.mainFirstMs;
  for (;;) {
    Atomics.store(gate, WORKER_HOLDING, 1);
    const waiting = Atomics.load(gate, MAIN_WAITING);
    if (waiting === 0 || Date.now() >= until) return;
    endTurn();
    Atomics.wait(gate, MAIN_WAITING, waiting, Math.max(0, until - Date.now()));
  }
}

function endTurn(): void {
  const gate = data.writeGate;
  if (gate === undefined) return;
  Atomics.store(gate, WORKER_HOLDING, 0);
  Atomics.notify(gate, WORKER_HOLDING);
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * One write (one transaction) in a turn of its own. This connection does not wait in SQLite's
 * busy handler (busy_timeout 0, above): asleep there it would keep its turn, and the main
 * connection's writes would wait for it. A write refused for the lock (SQLITE_BUSY, at BEGIN:
 * nothing written) ends the turn, waits a millisecond and tries again, for up to
 * SQLITE_BUSY_TIMEOUT_MS.
 */
async function inTurn<T>(write: () => Promise<T>): Promise<T> {
  const until = Date.now() + SQLITE_BUSY_TIMEOUT_MS;
  for (;;) {
    beginTurn();
    try {
      return await write();
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (typeof code !== 'string' || !code.startsWith('SQLITE_BUSY') || Date.now() >= until) throw e;
    } finally {
      endTurn();
    }
    Atomics.wait(pause, 0, 0, 1);
  }
}

async function run(m: RecordWriteOp): Promise<unknown> {
  switch (m.op) {
    case 'upsert': {
      // In parts, each its own transaction: the write lock is held for one part at a time.
      const counts = { added: 0, updated: 0 };
      // PostgreSQL: the page in one go, as on the main thread (no lock held between statements).
      const partRecords = sqlite ? data.partRecords : Math.max(1, m.records.length);
      for (let i = 0; i < m.records.length; i += partRecords) {
        const part = m.records.slice(i, i + partRecords);
        const c = await inTurn(() => store.upsert(m.connectorId, m.entity, m.def, part, m.syncRun));
        await checkpointNow();
        counts.added += c.added;
        counts.updated += c.updated;
      }
      return counts;
    }
    case 'deleteMissing':
      return inTurn(() => store.deleteMissing(m.connectorId, m.entity, m.syncRun)).finally(checkpointNow);
    case 'deleteRecords':
      return inTurn(() => store.deleteRecords(m.connectorId, m.entity, m.ids)).finally(checkpointNow);
  }
}

/**
 * Writes run at once: one on SQLite (in the order they came), `connections` on PostgreSQL. A
 * finished write hands its slot to the next one waiting, in the order they came.
 */
const slots = data.postgres?.connections ?? 1;
let running = 0;
const waiting: (() => void)[] = [];
const inFlight = new Set<Promise<void>>();
async function inSlot<T>(write: () => Promise<T>): Promise<T> {
  if (running < slots) running++;
  else await new Promise<void>((resolve) => waiting.push(resolve));
  try {
    return await write();
  } finally {
    const next = waiting.shift();
    if (next !== undefined) next();
    else running--;
  }
}
// The sync worker: a job's writes take their turns (and slots) as the main thread's calls do.
const pages =
  data.pages === undefined
    ? undefined
    : ((await import(data.pages.host)) as PagesHostModule).pagesHost({
        port,
        fetch: data.pages.fetch,
        retry: data.pages.retry,
        upsert: (connectorId, entity, def, records, syncRun) =>
          inSlot(() => run({ op: 'upsert', connectorId, entity, def, records, syncRun }) as Promise<{ added: number; updated: number }>),
        deleteRecords: (connectorId, entity, ids) => inSlot(() => run({ op: 'deleteRecords', connectorId, entity, ids }) as Promise<number>),
        setNow: (t) => (now = t),
        toWire,
      });

port.on('message', (m: (RecordWriteOp & { id: number; now: number }) | { op: 'close' } | { op: string }) => {
  if (pages?.handle(m) === true) return;
  if (m.op === 'close') {
    // After every write asked for before it; the syncs' pages are stopped.
    void Promise.allSettled([...inFlight, pages?.close()]).then(async () => {
      await database.close();
      port.close();
    });
    return;
  }
  const call = m as RecordWriteOp & { id: number; now: number };
  const done = inSlot(async () => {
    // The store's clock: the time of the latest call (concurrent writes on PostgreSQL share it).
    now = call.now;
    try {
      port.postMessage({ id: call.id, result: await run(call) });
    } catch (e) {
      port.postMessage({ id: call.id, error: toWire(e) });
    }
  });
  inFlight.add(done);
  void done.finally(() => inFlight.delete(done));
});
