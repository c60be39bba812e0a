/**
 * `switchboard mcp --connectors <file.yaml> [--connectors <dir>]`: the MCP server over stdio, running the file's
 * connector instances in library mode (src/mcp). stdout carries the protocol only; the start
 * line, sandbox notices and one line per tool call go to stderr (never params, results or
 * credentials).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { SwitchboardError } from '../errors/index.ts';
import { collect, DATA_DIR_ENV, dataDir, failWith, isInstancesFile } from './cli-support.ts';

/** bin/switchboard.js of this installation, by absolute path (from src/cli or dist/src/cli alike). */
export function switchboardBin(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const bin = join(dir, 'bin', 'switchboard.js');
    if (existsSync(bin) && existsSync(join(dir, 'package.json'))) return bin;
  }
  throw new Error('bin/switchboard.js not found above this module');
}

/**
 * An MCP client configuration that works from any directory: node and bin/switchboard.js by
 * absolute path (never `npx switchboard`, which outside this checkout asks the npm registry for
 * a package of that name), the connectors file by absolute path, the data directory (where the
 * sandbox records its endpoints) in SWITCHBOARD_DATA_DIR, and a placeholder per variable the
 * file uses (values are never printed).
 */
async function printConfig(file: string, connectorDirs: string[], flags: string[]): Promise<void> {
  const { parseConnectorsFile } = await import('../mcp/local.ts');
  const variables = new Set<string>();
  const recording = new Proxy({} as NodeJS.ProcessEnv, {
    get: (_t, name) => {
      if (typeof name === 'string') variables.add(name);
      return `<${String(name)}>`;
    },
  });
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new SwitchboardError('invalid_connectors_file', `Cannot read the connectors file ${file}: ${(e as Error).message}`, { details: { file } });
  }
  parseConnectorsFile(text, file, recording);
  const env: Record<string, string> = { [DATA_DIR_ENV]: dataDir() };
  for (const v of [...variables].sort()) env[v] = `<value of ${v}>`;
  const config = {
    mcpServers: {
      switchboard: {
        command: process.execPath,
        args: [switchboardBin(), 'mcp', '--connectors', resolve(file), ...connectorDirs.flatMap((d) => ['--connectors', resolve(d)]), ...flags],
        env,
      },
    },
  };
  process.stdout.write(`${JSON.stringify(config, null, 2)}\n`);
  if (variables.size > 0) process.stderr.write(`Fill in ${[...variables].sort().join(', ')} (values are not printed).\n`);
}

/** With at most this many instances, every connector action is also a tool of its own. */
export const ACTION_TOOLS_MAX_INSTANCES = 5;

export function registerMcpCommand(program: Command, version: string): void {
  program
    .command('mcp')
    .description(
      'Serve the connectors of a YAML file to AI agents over MCP (stdio): tools list_connectors, describe, execute, search, and one tool per action when there are few instances',
    )
    .requiredOption(
      '--connectors <file|dir>',
      'YAML file naming connector instances (id, type, description?, base_url?, credentials with ${ENV_VAR} values); repeat it with a directory of <type>/connector.yaml folders to serve connectors besides the built-in ones',
      collect,
    )
    .option('--read-only', 'expose list, get and search only; create and update are refused')
    .option('--max-output-bytes <n>', 'byte budget of one execute or search result (default 20000, or $SWITCHBOARD_MCP_MAX_OUTPUT_BYTES)')
    .option('--proxy', "offer the proxy tool: any endpoint under a connector's base URL (GET and HEAD only with --read-only); docs/proxy.md")
    .option('--no-action-tools', `no per-action tools, even with ${ACTION_TOOLS_MAX_INSTANCES} instances or fewer`)
    .option('--print-config', 'print an MCP client configuration (mcpServers JSON) that starts this command from any directory, then exit')
    .action(
      async (opts: { connectors: string[]; readOnly?: boolean; maxOutputBytes?: string; actionTools: boolean; printConfig?: boolean; proxy?: boolean }) => {
        try {
          // The instances file among --connectors (directories are the manifest search path, see main.ts).
          const files = opts.connectors.filter(isInstancesFile);
          if (files.length !== 1) {
            throw new SwitchboardError(
              'invalid_connectors_file',
              `Give exactly one connector instances file (YAML) with --connectors; got ${files.length === 0 ? 'none' : files.join(', ')}`,
            );
          }
          const instancesFile = files[0]!;
          if (opts.printConfig) {
            const flags = [
              ...(opts.readOnly ? ['--read-only'] : []),
              ...(opts.proxy ? ['--proxy'] : []),
              ...(opts.maxOutputBytes !== undefined ? ['--max-output-bytes', opts.maxOutputBytes] : []),
              ...(opts.actionTools ? [] : ['--no-action-tools']),
            ];
            await printConfig(
              instancesFile,
              opts.connectors.filter((c) => !isInstancesFile(c)),
              flags,
            );
            return;
          }
          const { MAX_OUTPUT_BYTES_ENV, maxOutputBytesArg } = await import('../mcp/output.ts');
          const maxOutputBytes =
            opts.maxOutputBytes !== undefined
              ? maxOutputBytesArg(opts.maxOutputBytes, '--max-output-bytes')
              : maxOutputBytesArg(process.env[MAX_OUTPUT_BYTES_ENV], `$${MAX_OUTPUT_BYTES_ENV}`);
          const { localBackend } = await import('../mcp/local.ts');
          const backend = await localBackend(instancesFile);
          const { createMcpServer } = await import('../mcp/server.ts');
          const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
          const actionTools = opts.actionTools && backend.list.length <= ACTION_TOOLS_MAX_INSTANCES ? backend.list : [];
          const server = createMcpServer(backend, {
            readOnly: opts.readOnly === true,
            proxy: opts.proxy === true,
            maxOutputBytes,
            actionTools,
            version,
            log: (entry) => void process.stderr.write(`${JSON.stringify({ msg: 'mcp tool call', ...entry })}\n`),
          });
          const transport = new StdioServerTransport();
          await server.connect(transport);
          process.stderr.write(
            `switchboard mcp: ${backend.list.length} connectors (${backend.list.map((i) => `${i.id}: ${i.type}`).join(', ')}), ` +
              `${opts.readOnly ? 'read-only' : 'read-write'}, output budget ${maxOutputBytes} bytes, ${actionTools.length > 0 ? 'per-action tools' : 'generic tools only'}; serving MCP on stdio\n`,
          );
          // The client closing stdin ends the session.
          process.stdin.once('end', () => void server.close());
        } catch (e) {
          failWith(e);
        }
      },
    );
}
