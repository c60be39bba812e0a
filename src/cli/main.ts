/**
 * The `switchboard` command (commander): validate, codegen, connectors, describe, exec, sandbox, simulate,
 * serve, sync, admin, mcp. Each group of subcommands lives in its own module; this file only wires
 * them. Command modules import their heavy dependencies inside their actions, so `--help` and
 * `--version` load little more than commander.
 */
import { Command } from 'commander';
import { packageVersion } from '../version.ts';
import { registerManifestCommands } from './manifest-commands.ts';
import { registerDescribeCommand } from './describe-command.ts';
import { registerExecCommand } from './exec-command.ts';
import { registerSandboxCommand } from './sandbox-command.ts';
import { registerSimulateCommand } from './simulate-command.ts';
import { registerServeCommand } from './serve-command.ts';
import { registerAdminCommand } from './admin-command.ts';
import { registerSyncCommand } from './sync-command.ts';
import { registerCheckCommand } from './check-command.ts';
import { registerMcpCommand } from './mcp-command.ts';

const program = new Command();
program
  .name('switchboard')
  .description('Connector execution service: connectors as YAML, library and hosted modes.')
  .version(packageVersion(), '-V, --version', 'print the version')
  .showHelpAfterError()
  .configureHelp({ sortSubcommands: true });

registerManifestCommands(program);
registerDescribeCommand(program);
registerExecCommand(program);
registerSandboxCommand(program);
registerSimulateCommand(program);
// Hosted mode commands.
registerServeCommand(program);
registerAdminCommand(program);
registerSyncCommand(program);
registerCheckCommand(program);
registerMcpCommand(program, packageVersion());

await program.parseAsync(process.argv);
