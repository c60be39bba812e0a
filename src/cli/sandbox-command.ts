/** `switchboard sandbox`: start every upstream simulator and print base URLs + sample credentials. */
import type { Command } from 'commander';
import { failWith } from './exec-command.ts';

export function registerSandboxCommand(program: Command): void {
  program
    .command('sandbox')
    .description('Start local simulators of every connector API and print, as JSON, their base URLs and working sample credentials')
    .option('--port <n>', 'first port to use (default: any free ports)', (v) => Number.parseInt(v, 10))
    .action(async (opts: { port?: number }) => {
      try {
        const { startSandbox, printable } = await import('../sandbox/index.ts');
        const sandbox = await startSandbox(opts.port !== undefined ? { basePort: opts.port } : {});
        process.stdout.write(JSON.stringify(printable(sandbox), null, 2) + '\n');
        process.stderr.write('Sandbox running; press Ctrl+C to stop.\n');
        const stop = (): void => {
          void sandbox.close().then(() => process.exit(0));
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      } catch (e) {
        failWith(e);
      }
    });
}
