/**
 * Before any test: bring dist/ up to date (incremental tsc, about a second when nothing changed),
 * because the CLI tests run the `switchboard` bin, which runs the built JavaScript, exactly as a
 * user's `npx switchboard` does. After the run: why the PostgreSQL tests were skipped, if they were.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { postgresSkipNotice } from './helpers/postgres-skip.ts';

export default function setup(): () => void {
  execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/build.mjs', import.meta.url))], { stdio: 'inherit' });
  // After the run, beside the summary: why the PostgreSQL tests were skipped (postgres-skip.ts).
  return () => {
    const notice = postgresSkipNotice(process.env);
    if (notice !== undefined) process.stdout.write(`\n${notice}\n`);
  };
}
