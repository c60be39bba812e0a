/**
 * The `switchboard` command (commander): validate, codegen, connectors, describe, exec, sandbox,
 * serve, sync, admin. Each group of subcommands lives in its own module; this file only wires
 * them. Command modules import their heavy dependencies inside their actions, so `--help` and
 * `--version` load little more than commander.
 */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerManifestCommands } from './manifest-commands.ts';
import { registerDescribeCommand } from './describe-command.ts';
import { registerExecCommand } from './exec-command.ts';
import { registerSandboxCommand } from './sandbox-command.ts';
import { registerServeCommand } from './serve-command.ts';
import { registerAdminCommand } from './admin-command.ts';
import { registerSyncCommand } from './sync-command.ts';
import { registerCheckCommand } from './check-command.ts';

/** The package version, from package.json (two levels up from src/cli, three from dist/src/cli). */
function packageVersion(): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'switchboard' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not at this level: try the next one
    }
  }
  return 'unknown';
}

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
// Hosted mode commands.
registerServeCommand(program);
registerAdminCommand(program);
registerSyncCommand(program);
registerCheckCommand(program);

await program.parseAsync(process.argv);
