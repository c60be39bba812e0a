/**
 * The `switchboard` command (commander): validate, codegen, connectors, exec, sandbox, serve,
 * sync, admin. Each group of subcommands lives in its own module; this file only wires them.
 */
import { Command } from 'commander';
import { registerManifestCommands } from './manifest-commands.ts';
import { registerExecCommand } from './exec-command.ts';
import { registerSandboxCommand } from './sandbox-command.ts';
import { registerServeCommand } from './serve-command.ts';
import { registerAdminCommand } from './admin-command.ts';
import { registerSyncCommand } from './sync-command.ts';
import { registerCheckCommand } from './check-command.ts';

const program = new Command();
program
  .name('switchboard')
  .description('Connector execution service: connectors as YAML, library and hosted modes.')
  .showHelpAfterError()
  .configureHelp({ sortSubcommands: true });

registerManifestCommands(program);
registerExecCommand(program);
registerSandboxCommand(program);
// Hosted mode commands.
registerServeCommand(program);
registerAdminCommand(program);
registerSyncCommand(program);
registerCheckCommand(program);

await program.parseAsync(process.argv);
