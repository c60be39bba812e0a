/**
 * The upstream throttles' counters on PostgreSQL (PostgresThrottleStore in
 * src/service/limits/shared-limits.ts): RateLimiterPostgres's fixed windows, with the requests of all
 * of an instance's throttles waiting at the same time sent as one statement (issue 25's fleet
 * bench: 100 syncs' throttle checks kept the limits pool busy and a request's check waited).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { PostgresThrottleStore, RATE_LIMIT_TABLE } from '../../src/service/limits/shared-limits.ts';

const PG_URL = process.env['SWITCHBOARD_TEST_POSTGRES_URL'];
const noBlock = { block: async () => new RateLimiterRes() };

describe.skipIf(PG_URL === undefined || PG_URL === '')('PostgresThrottleStore (skipped: SWITCHBOARD_TEST_POSTGRES_URL is not set)', () => {
  const schema = `throttle_store_${process.pid}`;
  let pool: pg.Pool;
  const table = `"${schema}"."${RATE_LIMIT_TABLE}"`;
  let statements: string[];
  const counting = { query: ((text: string, values: unknown[]) => (statements.push(text), pool.query(text, values))) as unknown as pg.Pool['query'] };

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: PG_URL, max: 4 });
    await pool.query(`CREATE SCHEMA ${schema}`);
    await pool.query(`CREATE TABLE ${table} (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint)`);
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA ${schema} CASCADE`);
    await pool.end();
  });

  it('sends the requests of many keys waiting at once in a few statements, each key counted in its own window', async () => {
    statements = [];
    const store = new PostgresThrottleStore(counting, table, 2);
    const counter = store.counter('sb:upstream', 5, 1, noBlock);
    const got = await Promise.all(Array.from({ length: 20 }, (_, i) => counter.consume(`conn-${i}`, 2)));
    // Two sent at once (the first requests, alone), every other request in the one after.
    expect(statements.length).toBe(3);
    expect(store.statements).toBe(3);
    for (const r of got) expect(r).toMatchObject({ remainingPoints: 3, consumedPoints: 2 });
    const rows = await pool.query(`SELECT key, points FROM ${table} WHERE key LIKE 'sb:upstream:conn-%'`);
    expect(rows.rows).toHaveLength(20);
    expect(rows.rows.every((r) => r.points === 2)).toBe(true);
  });

  it("keeps RateLimiterPostgres's semantics: points over the window's are refused (and counted), a new window starts after expiry", async () => {
    statements = [];
    const store = new PostgresThrottleStore(counting, table);
    const counter = store.counter('sb:upstream', 3, 1, noBlock);
    await expect(counter.consume('k1', 2)).resolves.toMatchObject({ remainingPoints: 1 });
    const refused = await counter.consume('k1', 2).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(RateLimiterRes);
    expect((refused as RateLimiterRes).remainingPoints).toBe(0);
    expect((refused as RateLimiterRes).msBeforeNext).toBeGreaterThan(0);
    expect((refused as RateLimiterRes).msBeforeNext).toBeLessThanOrEqual(1000);
    await expect(counter.consume('k1', 1)).rejects.toBeInstanceOf(RateLimiterRes);
    // The window ends (moved into the past here): the next request opens a new one.
    await pool.query(`UPDATE ${table} SET expire = $1 WHERE key = 'sb:upstream:k1'`, [Date.now() - 1]);
    await expect(counter.consume('k1', 3)).resolves.toMatchObject({ remainingPoints: 0, consumedPoints: 3 });
  });

  it('two requests of one key at once go in successive statements', async () => {
    statements = [];
    const store = new PostgresThrottleStore(counting, table, 1);
    const counter = store.counter('sb:upstream', 10, 1, noBlock);
    const [a, b] = await Promise.all([counter.consume('k2', 1), counter.consume('k2', 1)]);
    expect([a.consumedPoints, b.consumedPoints].sort()).toEqual([1, 2]);
    expect(statements.length).toBe(2);
  });

  it('a window that ended less than a window ago is followed by the next on the same grid; a key idle longer starts afresh', async () => {
    const store = new PostgresThrottleStore(pool, table);
    const counter = store.counter('sb:upstream', 5, 1, noBlock);
    const expireOf = async (k: string): Promise<number> =>
      Number((await pool.query(`SELECT expire FROM ${table} WHERE key = $1`, [`sb:upstream:${k}`])).rows[0].expire);
    await counter.consume('grid', 1);
    const ended = Date.now() - 300;
    await pool.query(`UPDATE ${table} SET expire = $1, points = 5 WHERE key = 'sb:upstream:grid'`, [ended]);
    await expect(counter.consume('grid', 1)).resolves.toMatchObject({ consumedPoints: 1 });
    expect(await expireOf('grid')).toBe(ended + 1000);
    await counter.consume('idle', 1);
    await pool.query(`UPDATE ${table} SET expire = $1 WHERE key = 'sb:upstream:idle'`, [Date.now() - 5000]);
    const before = Date.now();
    await counter.consume('idle', 1);
    expect(await expireOf('idle')).toBeGreaterThanOrEqual(before + 1000);
  });
});
