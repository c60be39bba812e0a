/**
 * The `switchboard` command (commander): validate, codegen, connectors, describe, exec, sandbox, simulate,
 * serve, sync, admin, mcp. Each group of subcommands lives in its own module; this file only wires
 * them. Command modules import their heavy dependencies inside their actions, so `--help` and
 * `--version` load little more than commander.
 */
import { resolve } from 'node:path';
import { Command } from 'commander';
import { DATA_DIR_ENV } from './cli-support.ts';
import { packageVersion } from '../version.ts';
import { registerManifestCommands } from './manifest-commands.ts';
import { registerDescribeCommand } from './describe-command.ts';
import { registerExecCommand } from './exec-command.ts';
import { registerProxyCommand } from './proxy-command.ts';
import { registerSandboxCommand } from './sandbox-command.ts';
import { registerSimulateCommand } from './simulate-command.ts';
import { registerServeCommand } from './serve-command.ts';
import { registerAdminCommand } from './admin-command.ts';
import { registerSyncCommand } from './sync-command.ts';
import { registerCheckCommand } from './check-command.ts';
import { registerMcpCommand } from './mcp-command.ts';
import { registerInitCommand } from './init-command.ts';
import { applyConnectorsOption, failWith } from './cli-support.ts';

const program = new Command();
program
  .name('switchboard')
  .description('Connector execution service: connectors as YAML, library and hosted modes.')
  .version(packageVersion(), '-V, --version', 'print the version')
  .option(
    '--data-dir <dir>',
    `data directory of every command: the SQLite database (unless SWITCHBOARD_DATABASE_URL is set) and the sandbox's state files (default: $${DATA_DIR_ENV}, or ./data)`,
  )
  .hook('preAction', () => {
    // Before or after the command's name; every command reads it from the environment.
    const dir = program.opts<{ dataDir?: string }>().dataDir;
    if (dir !== undefined) process.env[DATA_DIR_ENV] = resolve(dir);
  })
  .showHelpAfterError()
  .configureHelp({ sortSubcommands: true, showGlobalOptions: true });

// Every command takes --connectors <dir>: applied before its action runs.
program.hook('preAction', async (_program, command) => {
  try {
    await applyConnectorsOption(command.opts()['connectors'], command.name());
  } catch (e) {
    failWith(e);
    process.exit(1);
  }
});

registerManifestCommands(program);
registerInitCommand(program);
registerDescribeCommand(program);
registerExecCommand(program);
registerProxyCommand(program);
registerSandboxCommand(program);
registerSimulateCommand(program);
// Hosted mode commands.
registerServeCommand(program);
registerAdminCommand(program);
registerSyncCommand(program);
registerCheckCommand(program);
registerMcpCommand(program, packageVersion());

await program.parseAsync(process.argv);
