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

/** `describe.each` over both dialects; `%s` in the title is the dialect. */
export function describeEachDialect(title: string, fn: (dialect: DialectName) => void): void {
  for (const dialect of ['sqlite', 'postgres'] as const) {
    const skip = dialect === 'postgres' && PG_URL === undefined;
    const name = title.replace('%s', dialect) + (skip ? ` (${PG_SKIP_REASON})` : '');
    describe.skipIf(skip)(name, () => fn(dialect));
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
