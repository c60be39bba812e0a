/**
 * `switchboard mcp --connectors <file.yaml> [--connectors <dir>]`: the MCP server over stdio, running the file's
 * connector instances in library mode (src/mcp). stdout carries the protocol only; the start
 * line, sandbox notices and one line per tool call go to stderr (never params, results or
 * credentials).
 */
import type { Command } from 'commander';
import { SwitchboardError } from '../errors/index.ts';
import { collect, failWith, isInstancesFile } from './cli-support.ts';

/** With at most this many instances, every connector action is also a tool of its own. */
export const ACTION_TOOLS_MAX_INSTANCES = 5;

export function registerMcpCommand(program: Command, version: string): void {
  program
    .command('mcp')
    .description('Serve the connectors of a YAML file to AI agents over MCP (stdio): tools list_connectors, describe, execute, search, and one tool per action when there are few instances')
    .requiredOption('--connectors <file|dir>', 'YAML file naming connector instances (id, type, description?, base_url?, credentials with ${ENV_VAR} values); repeat it with a directory of <type>/connector.yaml folders to serve connectors besides the built-in ones', collect)
    .option('--read-only', 'expose list, get and search only; create and update are refused')
    .option('--max-output-bytes <n>', 'byte budget of one execute or search result (default 20000, or $SWITCHBOARD_MCP_MAX_OUTPUT_BYTES)')
    .option('--no-action-tools', `no per-action tools, even with ${ACTION_TOOLS_MAX_INSTANCES} instances or fewer`)
    .action(async (opts: { connectors: string[]; readOnly?: boolean; maxOutputBytes?: string; actionTools: boolean }) => {
      try {
        // The YAML files among --connectors (directories are the manifest search path, see main.ts).
        const files = opts.connectors.filter(isInstancesFile);
        if (files.length !== 1) {
          throw new SwitchboardError('invalid_connectors_file', `Give exactly one connector instances file (YAML) with --connectors; got ${files.length === 0 ? 'none' : files.join(', ')}`);
        }
        const instancesFile = files[0]!;
        const { MAX_OUTPUT_BYTES_ENV, maxOutputBytesArg } = await import('../mcp/output.ts');
        const maxOutputBytes =
          opts.maxOutputBytes !== undefined ? maxOutputBytesArg(opts.maxOutputBytes, '--max-output-bytes') : maxOutputBytesArg(process.env[MAX_OUTPUT_BYTES_ENV], `$${MAX_OUTPUT_BYTES_ENV}`);
        const { localBackend } = await import('../mcp/local.ts');
        const backend = await localBackend(instancesFile);
        const { createMcpServer } = await import('../mcp/server.ts');
        const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
        const actionTools = opts.actionTools && backend.list.length <= ACTION_TOOLS_MAX_INSTANCES ? backend.list : [];
        const server = createMcpServer(backend, {
          readOnly: opts.readOnly === true,
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
    });
}
