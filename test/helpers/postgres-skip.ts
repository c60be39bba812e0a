/**
 * Why the PostgreSQL suites are skipped, in one place: in their titles (dialects.ts) and in one
 * line that the global set-up prints at the end of the run, because vitest's default reporter
 * shows a passing file's skipped suites only as a count, without their titles.
 */
export const PG_ENV = 'SWITCHBOARD_TEST_POSTGRES_URL';
export const PG_SKIP_REASON = `skipped: ${PG_ENV} is not set (e.g. postgres://postgres@127.0.0.1:5432/test)`;

/** The line for the end of the run when PostgreSQL suites were skipped, or undefined when they ran. */
export function postgresSkipNotice(env: Record<string, string | undefined>): string | undefined {
  if (env[PG_ENV]?.trim()) return undefined;
  return `Note: the PostgreSQL tests were ${PG_SKIP_REASON}; they count among the skipped tests above. Set it to run them.`;
}
