/**
 * WAL checkpoints of a SQLite file in a worker thread (src/store/wal-checkpointer.ts): the
 * main connection no longer runs them in its commits (issue 25's fleet bench: five a second
 * under 100 syncs, each copying 4 MB and fsyncing twice on the main thread).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { MAIN_WAITING } from '../../src/store/database.ts';
import { openDatabase, type Database } from '../../src/store/index.ts';
import { MAIN_AUTOCHECKPOINT_PAGES, WalCheckpointer } from '../../src/store/wal-checkpointer.ts';

const dirs: string[] = [];
const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'switchboard-wal-'));
  dirs.push(d);
  return d;
};

async function fileDatabase(): Promise<Database> {
  const database = openDatabase(join(tempDir(), 'x.db'));
  open.push(database);
  await sql`CREATE TABLE t (v TEXT)`.execute(database.db);
  return database;
}

/** Rows of about a page each: `n` pages (and frames) in the log. */
async function write(database: Database, n: number): Promise<void> {
  await database.db.transaction().execute(async (trx) => {
    for (let i = 0; i < n; i++) await sql`INSERT INTO t (v) VALUES (${'x'.repeat(3000)})`.execute(trx);
  });
}

describe('WalCheckpointer', () => {
  it('a SQLite file gets one; its main connection checkpoints by itself only past MAIN_AUTOCHECKPOINT_PAGES', async () => {
    const database = await fileDatabase();
    expect(database.checkpointer).toBeInstanceOf(WalCheckpointer);
    expect(database.sqlite!.prepare('PRAGMA wal_autocheckpoint').get()).toEqual({ wal_autocheckpoint: MAIN_AUTOCHECKPOINT_PAGES });
    const memory = openDatabase(':memory:');
    open.push(memory);
    expect(memory.checkpointer).toBeUndefined();
  });

  it('copies the whole log into the database file in the worker, then starts a fresh log there', async () => {
    const database = await fileDatabase();
    await write(database, 200);
    const first = await database.checkpointer!.checkpoint();
    expect(first).toEqual({ busy: false, log: first!.log, checkpointed: first!.log, restarted: true });
    expect(first!.log).toBeGreaterThanOrEqual(200);
    // The fresh log holds the worker's one write (so its header was written, and fsynced, there),
    // which the next checkpoints leave alone while nothing else is written.
    expect(await database.checkpointer!.checkpoint()).toEqual({ busy: false, log: 1, checkpointed: 0, restarted: false });
    expect(await database.checkpointer!.checkpoint()).toEqual({ busy: false, log: 1, checkpointed: 0, restarted: false });
    // The main connection's next write goes after it, not after the 200.
    await write(database, 1);
    const second = await database.checkpointer!.checkpoint();
    expect(second!.log).toBeLessThan(10);
    expect(second!.checkpointed).toBe(second!.log);
    // Everything is still there, read by another connection from the database file.
    await database.checkpointer!.checkpoint();
    const other = new SQLite(database.file!, { readonly: true });
    try {
      expect(other.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 201 });
    } finally {
      other.close();
    }
  });

  it('leaves the restart of the log to a main-connection write that waits for the lock (the write gate)', async () => {
    const database = await fileDatabase();
    const gate = database.writeGate!;
    await write(database, 50);
    // A main write waits: the checkpointer copies the log but does not take the lock to restart it.
    Atomics.store(gate, MAIN_WAITING, 1);
    const copied = await database.checkpointer!.checkpoint();
    expect(copied).toEqual({ busy: false, log: copied!.log, checkpointed: copied!.log, restarted: false });
    expect([...gate]).toEqual([1, 0, 0]);
    // None waits: the next checkpoint restarts the log, and hands the lock back.
    Atomics.store(gate, MAIN_WAITING, 0);
    expect(await database.checkpointer!.checkpoint()).toMatchObject({ busy: false, restarted: true });
    expect([...gate]).toEqual([0, 0, 0]);
    expect(database.sqlite!.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 50 });
  });

  it('answers concurrent callers with the one checkpoint running', async () => {
    const database = await fileDatabase();
    await write(database, 5);
    const [a, b] = [database.checkpointer!.checkpoint(), database.checkpointer!.checkpoint()];
    expect(a).toBe(b);
    expect((await a)!.checkpointed).toBeGreaterThanOrEqual(5);
  });

  it('a worker that fails is reported and replaced on the next checkpoint', async () => {
    const file = join(tempDir(), 'later.db');
    const errors: Error[] = [];
    const checkpointer = new WalCheckpointer(file, { idleMs: 0, onError: (e) => errors.push(e) });
    open.push(checkpointer);
    // No database there yet: the worker cannot open it and exits.
    expect(await checkpointer.checkpoint()).toBeUndefined();
    expect(errors.length).toBeGreaterThan(0);
    const db = new SQLite(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (v TEXT); INSERT INTO t VALUES (1)');
    try {
      const r = await checkpointer.checkpoint();
      expect(r).toMatchObject({ busy: false, restarted: true });
      expect(r!.checkpointed).toBe(r!.log);
      expect(checkpointer.workersStarted).toBe(2);
    } finally {
      db.close();
    }
  });

  it('a worker that does not answer is given up on at the deadline, reported and replaced', async () => {
    const database = await fileDatabase();
    await write(database, 3);
    const errors: Error[] = [];
    const hung = new WalCheckpointer(database.file!, { idleMs: 0, deadlineMs: 50, stallWorkers: true, onError: (e) => errors.push(e) });
    open.push(hung);
    // Answered (as failed), not left waiting: the sync writes that asked go on.
    expect(await hung.checkpoint()).toBeUndefined();
    expect(errors.map((e) => e.message)).toEqual([expect.stringContaining('no answer in 50 ms')]);
    expect(await hung.checkpoint()).toBeUndefined();
    expect(hung.workersStarted).toBe(2);
    await hung.close();
  });

  it('after close, checkpoints do nothing and the worker is gone', async () => {
    const database = await fileDatabase();
    await write(database, 3);
    const checkpointer = database.checkpointer!;
    expect(await checkpointer.checkpoint()).toBeDefined();
    await checkpointer.close();
    expect(await checkpointer.checkpoint()).toBeUndefined();
    expect(checkpointer.workersStarted).toBe(1);
  });
});
