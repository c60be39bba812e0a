/** `switchboard exec <type> <entity> <action>`: run one action in library mode, print the envelope. */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ConnectorRuntime } from '../engine/index.ts';
import { SwitchboardError } from '../errors/index.ts';
import { getConnector } from '../manifest/index.ts';

/** Environment variable holding credentials JSON, so they stay out of shell history. */
export const CREDENTIALS_ENV = 'SWITCHBOARD_CREDENTIALS';

/** Parse `JSON` or `@file` (file containing JSON). */
export function jsonArg(value: string, what: string): unknown {
  let text = value;
  if (value.startsWith('@')) {
    try {
      text = readFileSync(value.slice(1), 'utf8');
    } catch (e) {
      throw new SwitchboardError('invalid_params', `Cannot read ${what} file ${value.slice(1)}: ${(e as Error).message}`);
    }
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new SwitchboardError('invalid_params', `${what} is not valid JSON: ${(e as Error).message}`);
  }
}

/** Print an error as JSON on stderr and set a failing exit code. */
export function failWith(e: unknown): void {
  const err = e instanceof SwitchboardError ? e : new SwitchboardError('internal_error', (e as Error).message ?? String(e));
  process.stderr.write(JSON.stringify({ error: err.toJSON() }, null, 2) + '\n');
  process.exitCode = 1;
}

export function registerExecCommand(program: Command): void {
  program
    .command('exec')
    .description(`Run one action in library mode and print the result envelope as JSON (credentials from --credentials or $${CREDENTIALS_ENV})`)
    .argument('<type>', 'connector type, e.g. granola')
    .argument('<entity>', 'entity, e.g. notes')
    .argument('<action>', 'list, get, create or update')
    .option('--params <json|@file>', 'action params as JSON or @file')
    .option('--credentials <json|@file>', `credentials as JSON or @file (default: $${CREDENTIALS_ENV})`)
    .option('--base-url <url>', 'upstream base URL (e.g. a sandbox simulator)')
    .option('--region <name>', 'region from the manifest (e.g. eu)')
    .option('--all-pages', 'for list: follow pagination and print every record')
    .action(async (type: string, entity: string, action: string, opts: { params?: string; credentials?: string; baseUrl?: string; region?: string; allPages?: boolean }) => {
      try {
        const credSource = opts.credentials ?? (process.env[CREDENTIALS_ENV] || undefined);
        if (credSource === undefined) throw new SwitchboardError('invalid_credentials', `No credentials: pass --credentials or set ${CREDENTIALS_ENV}`);
        const credentials = jsonArg(credSource, 'credentials');
        const params = opts.params !== undefined ? jsonArg(opts.params, 'params') : {};
        const runtime = new ConnectorRuntime(getConnector(type), credentials, {
          ...(opts.baseUrl !== undefined ? { baseUrl: opts.baseUrl } : {}),
          ...(opts.region !== undefined ? { region: opts.region } : {}),
        });
        if (opts.allPages) {
          if (action !== 'list') throw new SwitchboardError('invalid_params', '--all-pages applies to the list action only');
          const data: unknown[] = [];
          let pages = 0;
          for await (const page of runtime.pages(entity, params)) {
            data.push(...page.data);
            pages++;
            if (process.stderr.isTTY) process.stderr.write(`\rpages: ${pages}, records: ${data.length}`);
          }
          if (process.stderr.isTTY) process.stderr.write('\n');
          process.stdout.write(JSON.stringify({ data, meta: { pages, count: data.length } }, null, 2) + '\n');
        } else {
          const result = await runtime.execute(entity, action, params);
          process.stdout.write(JSON.stringify(result, null, 2) + '\n');
        }
      } catch (e) {
        failWith(e);
      }
    });
}
