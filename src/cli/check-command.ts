/**
 * `switchboard check <type> --credentials ... [--base-url]`: run the connector type's credential
 * check in library mode. Prints the result as JSON on stdout either way ({ok: true, info} or
 * {ok: false, error}) and exits 1 when the check fails.
 */
import type { Command } from 'commander';
import { SwitchboardError } from '../errors/index.ts';
import { CREDENTIALS_ENV, credentialsArg, libraryRuntime, CONNECTORS_OPTION, collect } from './cli-support.ts';

export function registerCheckCommand(program: Command): void {
  program
    .command('check')
    .description(
      `Check that credentials work (the manifest's check: one cheap request); prints the result as JSON, exits 1 on failure (credentials from --credentials or $${CREDENTIALS_ENV})`,
    )
    .option(...CONNECTORS_OPTION, collect)
    .argument('<type>', 'connector type, e.g. granola')
    .option('--credentials <json|@file>', `credentials as JSON or @file (default: $${CREDENTIALS_ENV})`)
    .option(
      '--base-url <url>',
      "upstream base URL with its scheme, e.g. http://127.0.0.1:4010 (default: the manifest's, or a running sandbox's for its sample credentials)",
    )
    .option('--region <name>', 'region from the manifest (e.g. eu)')
    .action(async (type: string, opts: { credentials?: string; baseUrl?: string; region?: string }) => {
      let out: Record<string, unknown>;
      try {
        const credentials = await credentialsArg(opts.credentials, type);
        const runtime = await libraryRuntime(type, credentials, opts);
        out = { ...(await runtime.check()), auth_variant: runtime.authVariant };
      } catch (e) {
        const err = e instanceof SwitchboardError ? e : new SwitchboardError('internal_error', (e as Error).message ?? String(e));
        out = { ok: false, connector_type: type, error: err.toJSON() };
        process.exitCode = 1;
      }
      process.stdout.write(JSON.stringify(out, null, 2) + '\n');
    });
}
