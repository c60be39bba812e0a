/**
 * PostgreSQL: Database.postgres runs statements on one client kept out of the pool between
 * them, on other pool clients while that one is busy, and gives it back to the pool when a
 * client is wanted (or shortly after its last statement), and on close.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/store/database.ts';
import { PG_SKIP_REASON, PG_URL, postgresAdmin as admin } from '../helpers/dialects.ts';

describe.skipIf(PG_URL === undefined)(`direct statements on PostgreSQL${PG_URL === undefined ? ` (${PG_SKIP_REASON})` : ''}`, () => {
  const schema = `pool_statements_${process.pid}_${randomBytes(4).toString('hex')}`;
  let database: Database;

  beforeAll(async () => {
    await admin(`CREATE SCHEMA "${schema}"`);
    const url = new URL(PG_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    // Kept far longer than the test runs: only a waiting client, or close, brings it back.
    database = openDatabase(url.toString(), { poolSize: 2, keepClientMs: 600_000 });
  });

  afterAll(async () => {
    await database?.close();
    await admin(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  const directPid = async (): Promise<number> => (await database.postgres!.query<{ pid: number }>('SELECT pg_backend_pid() AS pid', []))[0]!.pid;
  const kyselyPid = async (): Promise<number> => (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(database.db)).rows[0]!.pid;

  it('keeps one client for its statements, runs concurrent ones on others, and gives it back when the pool is short', async () => {
    const kept = await directPid();
    expect(await directPid()).toBe(kept);
    // The kept client stays out of the pool between statements: Kysely gets another one.
    const other = await kyselyPid();
    expect(other).not.toBe(kept);
    expect(await directPid()).toBe(kept);
    // A statement while the kept client is busy runs on a pool client.
    const [a, b] = await Promise.all([directPid(), directPid()]);
    expect(a).toBe(kept);
    expect(b).toBe(other);
    // A transaction holds the other client and a Kysely query asks for one: the kept client,
    // idle, goes back to the pool at once and the query runs on it; the next direct statement
    // takes it back once the query is done (kept for its full keepClientMs instead, the test
    // would time out).
    await database.db.transaction().execute(async (trx) => {
      expect((await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx)).rows[0]!.pid).toBe(other);
      const waiting = kyselyPid();
      expect(await directPid()).toBe(kept);
      expect(await waiting).toBe(kept);
    });
    // The same with no direct statement after the query: it must not wait for one (or the timer).
    const again = await directPid();
    await database.db.transaction().execute(async (trx) => {
      expect((await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx)).rows[0]!.pid).not.toBe(again);
      expect(await kyselyPid()).toBe(again);
    });
    // A failed statement (the server's error) leaves the kept client in use.
    await expect(database.postgres!.query('SELECT 1/0', [])).rejects.toMatchObject({ code: '22012' });
    const after = await directPid();
    expect([kept, other]).toContain(after);
    expect(await directPid()).toBe(after);
  });
});
