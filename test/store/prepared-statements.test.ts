/**
 * PostgreSQL: statements marked PREPARED_SQL run as named prepared statements, at most
 * `preparedPerConnection` per connection (the least recently used deallocated), with the same
 * results as unnamed statements; unmarked statements are never kept.
 */
import { randomBytes } from 'node:crypto';
import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, PREPARED_SQL, type Database } from '../../src/store/database.ts';
import { PG_SKIP_REASON, PG_URL, postgresAdmin as admin } from '../helpers/dialects.ts';

describe.skipIf(PG_URL === undefined)(`prepared statements on PostgreSQL${PG_URL === undefined ? ` (${PG_SKIP_REASON})` : ''}`, () => {
  const schema = `prepared_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  let database: Database;

  beforeAll(async () => {
    await admin(`CREATE SCHEMA "${schema}"`);
    const url = new URL(PG_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    // One connection, so every statement below runs on the connection whose statements are listed.
    database = openDatabase(url.toString(), { poolSize: 1, preparedPerConnection: 2 });
    await sql`CREATE TABLE t (k integer PRIMARY KEY, v text NOT NULL)`.execute(database.db);
    await sql`INSERT INTO t SELECT g, 'v' || g FROM generate_series(1, 50) g`.execute(database.db);
  });

  afterAll(async () => {
    await database?.close();
    await admin(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });

  const kept = async (): Promise<string[]> =>
    (await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements ORDER BY prepare_time`.execute(database.db)).rows.map((r) => r.statement);

  it('keeps the marked statements prepared, at most the limit, and answers each with its own values', async () => {
    const texts = [1, 2, 3].map((i) => `${PREPARED_SQL}SELECT v, ${i} AS which FROM t WHERE k = $1`);
    for (let round = 0; round < 3; round++) {
      for (const [i, text] of texts.entries()) {
        for (const k of [round + 1, 40 - round]) {
          const { rows } = await database.db.executeQuery<{ v: string; which: number }>(CompiledQuery.raw(text, [k]));
          expect(rows).toEqual([{ v: `v${k}`, which: i + 1 }]);
        }
        const now = await kept();
        expect(now.length).toBeLessThanOrEqual(2);
        expect(now).toContain(text);
      }
    }
    // Used in turn 1, 2, 3: the last two stay; unmarked statements are never kept.
    await sql`SELECT v FROM t WHERE k = ${7}`.execute(database.db);
    expect(await kept()).toEqual([texts[1], texts[2]]);
  });

  it('reports a failing marked statement and keeps working', async () => {
    const bad = `${PREPARED_SQL}SELECT nope FROM t WHERE k = $1`;
    await expect(database.db.executeQuery(CompiledQuery.raw(bad, [1]))).rejects.toThrow(/nope/);
    const good = `${PREPARED_SQL}SELECT v FROM t WHERE k = $1`;
    for (const k of [3, 4]) {
      const { rows } = await database.db.executeQuery<{ v: string }>(CompiledQuery.raw(good, [k]));
      expect(rows).toEqual([{ v: `v${k}` }]);
    }
    expect((await kept()).length).toBeLessThanOrEqual(2);
  });
});
