/**
 * Before any test: bring dist/ up to date (incremental tsc, about a second when nothing changed),
 * because the CLI tests run the `switchboard` bin, which runs the built JavaScript, exactly as a
 * user's `npx switchboard` does.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/build.mjs', import.meta.url))], { stdio: 'inherit' });
}
