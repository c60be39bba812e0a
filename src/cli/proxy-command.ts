/**
 * `switchboard proxy <type> <METHOD> <path>`: one pass-through proxy call in library mode
 * (docs/proxy.md), with the connector's auth, throttle and retries; sandbox-aware like `exec`
 * (the sandbox's sample credentials reach the running sandbox). Prints
 * `{status, headers, body}` as JSON (body parsed when the vendor answered JSON, else text) and
 * exits 1 when the vendor's status is 400 or more.
 */
import type { Command } from 'commander';
import { SwitchboardError } from '../errors/index.ts';
import { CREDENTIALS_ENV, credentialsArg, failWith, jsonArg, libraryRuntime, CONNECTORS_OPTION, collect } from './cli-support.ts';

/** "Name: value" → [name, value], or invalid_params. */
function headerArg(raw: string): [string, string] {
  const at = raw.indexOf(':');
  if (at <= 0)
    throw new SwitchboardError('invalid_params', `--header ${raw}: write it as "Name: value"`, {
      errors: [{ path: '/headers', message: 'must be "Name: value"' }],
    });
  return [raw.slice(0, at).trim(), raw.slice(at + 1).trim()];
}

export function registerProxyCommand(program: Command): void {
  program
    .command('proxy')
    .description(
      `Send any request under a connector's base URL with its auth, throttle and retries, in library mode (credentials from --credentials or $${CREDENTIALS_ENV}); prints {status, headers, body}`,
    )
    .option(...CONNECTORS_OPTION, collect)
    .argument('<type>', 'connector type, e.g. github')
    .argument('<method>', 'GET, HEAD, POST, PUT, PATCH or DELETE')
    .argument('<path>', 'path under the base URL, e.g. /repos/octo/hello/branches (may carry ?query)')
    .option('--query <string>', 'query string added to the path, e.g. per_page=5&page=2')
    .option('--data <json|@file>', 'request body as JSON or @file (sent as application/json)')
    .option('--header <name: value>', 'request header from the proxy allow-list (repeatable)', collect)
    .option('--host <url>', 'another host the manifest declares in proxy.hosts')
    .option('--credentials <json|@file>', `credentials as JSON or @file (default: $${CREDENTIALS_ENV})`)
    .option(
      '--base-url <url>',
      "upstream base URL with its scheme (default: the manifest's, or a running sandbox's when the credentials are its sample credentials)",
    )
    .option('--region <name>', 'region from the manifest (e.g. eu)')
    .action(
      async (
        type: string,
        method: string,
        path: string,
        opts: { query?: string; data?: string; header?: string[]; host?: string; credentials?: string; baseUrl?: string; region?: string },
      ) => {
        try {
          const credentials = await credentialsArg(opts.credentials, type);
          const body = opts.data !== undefined ? jsonArg(opts.data, '--data') : undefined;
          const headers = Object.fromEntries((opts.header ?? []).map(headerArg));
          const runtime = await libraryRuntime(type, credentials, opts);
          const answer = await runtime.proxy({
            method,
            path,
            ...(opts.query !== undefined ? { query: opts.query } : {}),
            ...(body !== undefined ? { body: body as Record<string, unknown> } : {}),
            headers,
            ...(opts.host !== undefined ? { host: opts.host } : {}),
          });
          const text = answer.body.toString('utf8');
          let parsed: unknown = text;
          if (/json/i.test(answer.headers['content-type'] ?? '')) {
            try {
              parsed = JSON.parse(text) as unknown;
            } catch {
              parsed = text;
            }
          }
          process.stdout.write(JSON.stringify({ status: answer.status, headers: answer.headers, body: parsed }, null, 2) + '\n');
          if (answer.status >= 400) process.exitCode = 1;
        } catch (e) {
          failWith(e);
        }
      },
    );
}
