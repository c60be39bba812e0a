/**
 * The record writer (src/search/record-writer.ts): a sync's writes to a SQLite file run by a
 * RecordStore in a worker thread, on a connection of its own. What it writes is what the store
 * writes (the main connection reads it, counts and change feed included); errors come back with
 * their code; writes in parallel with the main connection's transactions all land; a worker that
 * dies fails its calls and is replaced. Also: SQLite transactions begin IMMEDIATE (database.ts),
 * which two writing connections need.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SwitchboardError } from '../../src/errors/index.ts';
import { RecordStore, searchMigrations } from '../../src/search/index.ts';
import { fromWire, RecordWriter, toWire } from '../../src/search/record-writer.ts';
import { CHECKPOINTER_HOLDING, MAIN_WAITING, migrate, openDatabase, WORKER_HOLDING, type Database } from '../../src/store/database.ts';
import { DEF } from './fixtures.ts';
import { dialectCases } from './helpers.ts';

const C = 'conn-1';
const E = 'people';
const people = (from: number, n: number, name = 'Person'): Record<string, unknown>[] =>
  Array.from({ length: n }, (_, i) => ({ id: `p${from + i}`, name: `${name} ${from + i}`, age: 20 + ((from + i) % 50) }));

describe('RecordWriter (SQLite file, worker thread)', () => {
  let dir: string;
  let file: string;
  let database: Database;
  let writer: RecordWriter | undefined;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-writer-'));
    file = join(dir, 'w.db');
    database = openDatabase(file);
    await migrate(database, [searchMigrations]);
  });
  afterEach(async () => {
    await writer?.close();
    writer = undefined;
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes what the store writes, in parts, and the main connection reads it', async () => {
    const clock = Date.parse('2026-03-01T00:00:00Z');
    writer = new RecordWriter({ file, cursorSecret: 's', now: () => clock, partRecords: 4 });
    const store = new RecordStore(database, { cursorSecret: 's', now: () => clock });
    // 11 records: three parts (4, 4, 3), counts added up.
    expect(await writer.upsert(C, E, DEF, people(0, 11), 'run-1')).toEqual({ added: 11, updated: 0 });
    expect(await store.count(C, E)).toBe(11);
    expect(await writer.upsert(C, E, DEF, [...people(0, 2, 'Renamed'), ...people(2, 9)], 'run-2')).toEqual({ added: 0, updated: 2 });
    const found = await store.search(C, E, DEF, { query: { filter: { like: { name: 'Renamed%' } } } });
    expect(found.data.map((d) => d['id']).sort()).toEqual(['p0', 'p1']);
    // The change feed has the writer's clock.
    const changes = await store.changes(C, E);
    expect(changes.data[0]!._metadata.first_seen_at).toBe('2026-03-01T00:00:00.000Z');
    // Deletions: by id, and the records a full refresh did not see.
    expect(await writer.deleteRecords(C, E, ['p10', 'nope'])).toBe(1);
    await writer.upsert(C, E, DEF, people(0, 3), 'run-3');
    expect(await writer.deleteMissing(C, E, 'run-3')).toBe(7);
    expect(await store.count(C, E)).toBe(3);
    expect(writer.workersStarted).toBe(1);
  });

  it('answers an error with its code, and goes on', async () => {
    writer = new RecordWriter({ file, cursorSecret: 's' });
    const direct = await new RecordStore(database, { cursorSecret: 's' }).upsert(C, E, DEF, [{ name: 'no id' }]).catch((e: unknown) => e);
    expect(direct).toBeInstanceOf(SwitchboardError);
    const viaWorker = await writer.upsert(C, E, DEF, [{ name: 'no id' }]).catch((e: unknown) => e);
    expect(viaWorker).toBeInstanceOf(SwitchboardError);
    expect((viaWorker as SwitchboardError).code).toBe((direct as SwitchboardError).code);
    expect((viaWorker as SwitchboardError).message).toBe((direct as SwitchboardError).message);
    expect(await writer.upsert(C, E, DEF, people(0, 2))).toEqual({ added: 2, updated: 0 });
  });

  it('lands every write while the main connection writes in parallel', async () => {
    // With the main connection's write gate, as the service runs it.
    writer = new RecordWriter({ file, cursorSecret: 's', partRecords: 3, writeGate: database.writeGate! });
    const store = new RecordStore(database, { cursorSecret: 's' });
    await sql`CREATE TABLE tally (k TEXT PRIMARY KEY, n INTEGER NOT NULL)`.execute(database.db);
    await sql`INSERT INTO tally (k, n) VALUES ('a', 0)`.execute(database.db);
    // 20 pages through the worker and, at the same time, 20 main-connection transactions that
    // read before they write (as the sync's bookkeeping does) and 20 upserts of another scope.
    const results = await Promise.allSettled([
      ...Array.from({ length: 20 }, (_, i) => writer!.upsert(C, E, DEF, people(i * 10, 10))),
      ...Array.from({ length: 20 }, () =>
        database.db.transaction().execute(async (trx) => {
          const { rows } = await sql<{ n: number }>`SELECT n FROM tally WHERE k = 'a'`.execute(trx);
          await sql`UPDATE tally SET n = ${rows[0]!.n + 1} WHERE k = 'a'`.execute(trx);
        }),
      ),
      ...Array.from({ length: 20 }, (_, i) => store.upsert('conn-2', E, DEF, people(i * 10, 10))),
    ]);
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect(await store.count(C, E)).toBe(200);
    expect(await store.count('conn-2', E)).toBe(200);
    expect((await sql<{ n: number }>`SELECT n FROM tally`.execute(database.db)).rows[0]!.n).toBe(20);
    expect([...database.writeGate!]).toEqual([0, 0, 0]);
  });

  it('fails the calls of a worker that dies, and starts another for the next call', async () => {
    const errors: Error[] = [];
    writer = new RecordWriter({ file, cursorSecret: 's', onError: (e) => errors.push(e) });
    expect(await writer.upsert(C, E, DEF, people(0, 1))).toEqual({ added: 1, updated: 0 });
    // A deadline of 0 ms: the call fails before the worker can answer, and the worker is terminated.
    const hasty = new RecordWriter({ file, cursorSecret: 's', deadlineMs: 0, writeGate: database.writeGate!, onError: (e) => errors.push(e) });
    // As if its worker had died in the middle of a part: the failure hands the turn back.
    Atomics.store(database.writeGate!, WORKER_HOLDING, 1);
    await expect(hasty.upsert(C, E, DEF, people(1, 1))).rejects.toThrow(/did not answer within 0 ms/);
    expect(Atomics.load(database.writeGate!, WORKER_HOLDING)).toBe(0);
    expect(errors.map((e) => e.message)).toEqual(['the record writer did not answer within 0 ms']);
    errors.length = 0;
    // The next call starts another worker (which this deadline fails as well).
    await expect(hasty.upsert(C, E, DEF, people(1, 1))).rejects.toThrow(/did not answer within 0 ms/);
    expect(hasty.workersStarted).toBe(2);
    await hasty.close();
    await expect(hasty.upsert(C, E, DEF, people(1, 1))).rejects.toThrow(/closed/);
    // The first writer is unaffected; after its close, calls fail at once.
    expect(await writer.upsert(C, E, DEF, people(2, 1))).toEqual({ added: 1, updated: 0 });
    await writer.close();
    await expect(writer.upsert(C, E, DEF, people(3, 1))).rejects.toThrow(/closed/);
    writer = undefined;
  });

  it.each([
    ['the record writer\u2019s part', WORKER_HOLDING],
    ['the WAL checkpointer\u2019s restart of the log', CHECKPOINTER_HOLDING],
  ])('a main-connection write waits for %s without blocking the event loop', async (_, holding) => {
    const gate = database.writeGate!;
    await sql`CREATE TABLE t (k TEXT PRIMARY KEY)`.execute(database.db);
    // As if the worker were writing.
    Atomics.store(gate, holding, 1);
    let written = false;
    const write = sql`INSERT INTO t VALUES ('a')`.execute(database.db).then(() => (written = true));
    // Turns of the event loop go by (requests would be served) while the write waits, counted.
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(written).toBe(false);
    expect(Atomics.load(gate, MAIN_WAITING)).toBe(1);
    // Direct reads (the search store's) go on meanwhile; Kysely's queue behind the write (one connection).
    expect(database.sqlite!.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 });
    // Its write ends: the main write goes ahead.
    Atomics.store(gate, holding, 0);
    Atomics.notify(gate, holding);
    await write;
    expect(written).toBe(true);
    expect([...gate]).toEqual([0, 0, 0]);
  });

  it.runIf(existsSync('/proc/thread-self'))('runs its worker at a lower priority than the main thread (Linux)', async () => {
    // A thread's nice value: the 19th field of its stat, the 17th after the command's closing parenthesis.
    const niceOf = (tid: string): number => {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    };
    const nices = (): number[] => readdirSync('/proc/self/task').map(niceOf);
    expect(nices()).not.toContain(10);
    writer = new RecordWriter({ file, cursorSecret: 's' });
    await writer.upsert(C, E, DEF, people(0, 1));
    expect(nices()).toContain(10);
    expect(niceOf(String(process.pid))).toBe(0);
  });

  it('refuses an in-memory database (a second connection would open another one)', () => {
    expect(() => new RecordWriter({ file: ':memory:', cursorSecret: 's' })).toThrow(/SQLite file/);
  });

  it('carries errors across the thread boundary', () => {
    const e = fromWire(toWire(new SwitchboardError('invalid_params', 'bad', { details: { field: 'x' } })));
    expect(e).toBeInstanceOf(SwitchboardError);
    expect((e as SwitchboardError).details).toEqual({ field: 'x' });
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    expect(fromWire(toWire(busy))).toMatchObject({ message: 'database is locked', code: 'SQLITE_BUSY' });
  });
});

describe('SQLite transactions begin IMMEDIATE', () => {
  it('a transaction that reads before it writes keeps its write when another connection writes meanwhile', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sb-immediate-'));
    const file = join(dir, 'i.db');
    const a = openDatabase(file);
    const b = openDatabase(file);
    try {
      await sql`CREATE TABLE t (k TEXT PRIMARY KEY, n INTEGER NOT NULL)`.execute(a.db);
      await sql`INSERT INTO t VALUES ('x', 1)`.execute(a.db);
      // b waits at most 50 ms for the write lock.
      await sql`PRAGMA busy_timeout = 50`.execute(b.db);
      let other: unknown;
      await a.db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ n: number }>`SELECT n FROM t WHERE k = 'x'`.execute(trx);
        // Deferred, b's write would commit here and a's write below fail (SQLITE_BUSY); immediate,
        // a holds the lock from BEGIN, so b is refused and a's read-then-write stands.
        other = await sql`UPDATE t SET n = 100 WHERE k = 'x'`.execute(b.db).catch((e: unknown) => e);
        await sql`UPDATE t SET n = ${rows[0]!.n + 1} WHERE k = 'x'`.execute(trx);
      });
      expect((other as { code?: string }).code).toBe('SQLITE_BUSY');
      expect((await sql<{ n: number }>`SELECT n FROM t`.execute(b.db)).rows[0]!.n).toBe(2);
    } finally {
      await b.close();
      await a.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const [, openPostgres, pgSkip] = dialectCases()[1]!;
describe.skipIf(pgSkip !== undefined)(`RecordWriter (PostgreSQL, worker thread)${pgSkip !== undefined ? ` (${pgSkip})` : ''}`, () => {
  it('writes what the store writes, several writes at once on a pool of its own, and answers errors with their code', async () => {
    const t = await openPostgres();
    const writer = new RecordWriter({ postgres: { url: t.database.url!, connections: 3 }, cursorSecret: 's' });
    try {
      // Six pages of three connectors at once; each connector's second page updates half its first.
      const first = await Promise.all([0, 1, 2].map((k) => writer.upsert(`conn-${k}`, E, DEF, people(0, 10))));
      expect(first).toEqual([0, 1, 2].map(() => ({ added: 10, updated: 0 })));
      const second = await Promise.all([0, 1, 2].map((k) => writer.upsert(`conn-${k}`, E, DEF, people(5, 10, 'Renamed'))));
      expect(second).toEqual([0, 1, 2].map(() => ({ added: 5, updated: 5 })));
      const store = new RecordStore(t.database, { cursorSecret: 's' });
      for (const k of [0, 1, 2]) expect(await store.count(`conn-${k}`, E)).toBe(15);
      const found = await store.search('conn-1', E, DEF, { query: { filter: { like: { name: 'Renamed%' } } } });
      expect(found.data.map((r) => r['id']).sort()).toEqual(
        people(5, 10)
          .map((r) => String(r['id']))
          .sort(),
      );
      const direct = await store.upsert(C, E, DEF, [{ name: 'no id' }]).catch((e: unknown) => e);
      const viaWorker = await writer.upsert(C, E, DEF, [{ name: 'no id' }]).catch((e: unknown) => e);
      expect(viaWorker).toBeInstanceOf(SwitchboardError);
      expect((viaWorker as SwitchboardError).code).toBe((direct as SwitchboardError).code);
      expect(await writer.deleteRecords('conn-2', E, ['p0', 'p1'])).toBe(2);
      expect(await store.count('conn-2', E)).toBe(13);
    } finally {
      await writer.close();
      await t.close();
    }
  });
});
