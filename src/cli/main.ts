/**
 * The `switchboard` command (commander): validate, codegen, connectors, exec, sandbox, serve,
 * sync, admin. Each subcommand lives in its own module; this file only wires them.
 */
import { Command } from 'commander';
import { registerManifestCommands } from './manifest-commands.ts';
import { registerExecCommand } from './exec-command.ts';

const program = new Command();
program
  .name('switchboard')
  .description('Connector execution service: connectors as YAML, library and hosted modes.')
  .showHelpAfterError()
  .configureHelp({ sortSubcommands: true });

registerManifestCommands(program);
registerExecCommand(program);

await program.parseAsync(process.argv);
