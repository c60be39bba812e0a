/** `switchboard exec <type> <entity> <action>`: run one action in library mode, print the envelope. */
import type { Command } from 'commander';
import { SwitchboardError } from '../errors/index.ts';
import { CREDENTIALS_ENV, credentialsArg, failWith, jsonArg, libraryRuntime, plural, CONNECTORS_OPTION, collect } from './cli-support.ts';

export { CREDENTIALS_ENV, failWith, jsonArg } from './cli-support.ts';

export function registerExecCommand(program: Command): void {
  program
    .command('exec')
    .description(
      `Run one action in library mode and print the result envelope as JSON (credentials from --credentials or $${CREDENTIALS_ENV}); \`switchboard describe\` shows each action's params`,
    )
    .option(...CONNECTORS_OPTION, collect)
    .argument('<type>', 'connector type, e.g. granola')
    .argument('<entity>', 'entity, e.g. notes')
    .argument('<action>', 'list, get, create or update')
    .option('--params <json|@file>', 'action params as JSON or @file')
    .option('--credentials <json|@file>', `credentials as JSON or @file (default: $${CREDENTIALS_ENV})`)
    .option(
      '--base-url <url>',
      "upstream base URL with its scheme, e.g. http://127.0.0.1:4010 (default: the manifest's, or a running sandbox's when the credentials are its sample credentials)",
    )
    .option('--region <name>', 'region from the manifest (e.g. eu)')
    .option('--all-pages', 'for list: follow pagination and print every record')
    .action(
      async (
        type: string,
        entity: string,
        action: string,
        opts: { params?: string; credentials?: string; baseUrl?: string; region?: string; allPages?: boolean },
      ) => {
        try {
          const credentials = await credentialsArg(opts.credentials, type);
          const params = opts.params !== undefined ? jsonArg(opts.params, '--params') : {};
          if (opts.allPages && action !== 'list') throw new SwitchboardError('invalid_params', '--all-pages applies to the list action only');
          // Entity, action and params are checked before the sandbox lookup and its notice.
          const runtime = await libraryRuntime(type, credentials, { ...opts, validate: (r) => void r.validate(r.action(entity, action), params) });
          if (opts.allPages) {
            const data: unknown[] = [];
            let pages = 0;
            for await (const page of runtime.pages(entity, params)) {
              data.push(...page.data);
              pages++;
              if (process.stderr.isTTY) process.stderr.write(`\r${plural(pages, 'page')}, ${plural(data.length, 'record')}`);
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
      },
    );
}
