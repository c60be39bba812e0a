/**
 * Suites that run on both databases: SQLite always; PostgreSQL when SWITCHBOARD_TEST_POSTGRES_URL
 * is set (CI sets it). Without it the PostgreSQL suite is still collected and shows as skipped,
 * with the reason in its title, rather than silently missing from the report.
 */
import pg from 'pg';
import { describe } from 'vitest';
import { PG_SKIP_REASON } from './postgres-skip.ts';

export type DialectName = 'sqlite' | 'postgres';
export const PG_URL = process.env['SWITCHBOARD_TEST_POSTGRES_URL']?.trim() || undefined;
export { PG_SKIP_REASON } from './postgres-skip.ts';

/** Every dialect a suite runs on, in order. */
export const DIALECTS: readonly DialectName[] = ['sqlite', 'postgres'];

/** Why a dialect's suite is skipped here (PostgreSQL without SWITCHBOARD_TEST_POSTGRES_URL), or undefined when it runs. */
export function dialectSkipReason(dialect: DialectName): string | undefined {
  return dialect === 'postgres' && PG_URL === undefined ? PG_SKIP_REASON : undefined;
}

/**
 * The one loop over the dialects: a `describe` per dialect, `%s` in the title being the dialect;
 * a skipped one says why in its title.
 */
export function describeEachDialect(title: string, fn: (dialect: DialectName) => void): void {
  for (const dialect of DIALECTS) {
    const skip = dialectSkipReason(dialect);
    const name = title.replace('%s', dialect) + (skip !== undefined ? ` (${skip})` : '');
    describe.skipIf(skip !== undefined)(name, () => fn(dialect));
  }
}

/** Run one statement on the test PostgreSQL database on a connection of its own (schema set-up and clean-up). */
export async function postgresAdmin(text: string): Promise<void> {
  if (PG_URL === undefined) throw new Error('SWITCHBOARD_TEST_POSTGRES_URL is not set');
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}
