/** `switchboard sandbox`: start every upstream simulator and print base URLs + sample credentials. */
import { basename, dirname, resolve } from 'node:path';
import type { Command } from 'commander';
import { dataDir, failWith, listenError, portArg, CONNECTORS_OPTION, collect } from './cli-support.ts';

/** Default first port of `switchboard sandbox`: Intercom 4010, Monday 4011, then the rest by type name (README's sandbox table). */
export const SANDBOX_PORT = 4010;

export function registerSandboxCommand(program: Command): void {
  program
    .command('sandbox')
    .description('Start local simulators of every connector API and print, as JSON, their base URLs and working sample credentials (the same on every start)')
    .option(...CONNECTORS_OPTION, collect)
    .option('--port <n>', `first port: one port per simulator from here (default ${String(SANDBOX_PORT)}; 0 picks free ports)`, portArg)
    .action(async (opts: { port?: number }) => {
      const port = opts.port ?? SANDBOX_PORT;
      try {
        const { startSandbox, printable, sandboxStateFile } = await import('../simulator/sandbox.ts');
        const sandbox = await startSandbox({
          ...(port !== 0 ? { basePort: port } : {}),
          ...(port !== 0 ? { stateFile: sandboxStateFile(dataDir(), port), kind: 'sandbox' as const } : {}),
        }).catch((e: unknown) => {
          throw listenError(e, undefined, `pick other ports with --port <n> (the simulators use n, n+1, ..., one port each)`);
        });
        process.stdout.write(JSON.stringify(printable(sandbox), null, 2) + '\n');
        // Connectors of --connectors directories have no built-in simulator: say so, and how to get one.
        // Only manifests from outside the built-in folder (or of a built-in without a simulator) are
        // loaded for it: validating every built-in manifest would double the start-up.
        const { manifestFiles, loadManifestFile, CONNECTORS_DIR } = await import('../manifest/index.ts');
        const served = (file: string): boolean =>
          dirname(dirname(file)) === resolve(CONNECTORS_DIR) && sandbox.connectors[basename(dirname(file))] !== undefined;
        for (const m of manifestFiles()
          .filter((f) => !served(f))
          .map((f) => loadManifestFile(f))) {
          const type = m.type;
          if (sandbox.connectors[type] !== undefined || sandbox.missing.includes(type)) continue;
          const vd = m.vendorDescription;
          process.stderr.write(`No simulator for ${type} (${m.file})${vd !== undefined ? `: run \`switchboard simulate --${vd.format} ${vd.file}\`` : ''}\n`);
        }
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
