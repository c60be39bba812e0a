/** `switchboard serve [--port] [--host] [--sandbox]`: run the hosted service (also `npm start`). */
import type { Command } from 'commander';
import { dataDir, failWith, listenError, portArg, CONNECTORS_OPTION, collect } from './cli-support.ts';
import { serviceStopper } from './serve-shutdown.ts';

/** Default first port of the simulators of `serve --sandbox`: one per connector on 4110, 4111, ... in the sandbox's order. */
export const SERVICE_SANDBOX_PORT = 4110;

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('Run the hosted HTTP service (SQLite under ./data by default; PostgreSQL with SWITCHBOARD_DATABASE_URL)')
    .option(...CONNECTORS_OPTION, collect)
    .option('--port <n>', 'port (default: $PORT or 3000)', portArg)
    .option('--host <addr>', 'interface (default: $HOST or 127.0.0.1)')
    .option('--sandbox', 'also start the upstream simulators and point every connector type (and its OAuth app) at them')
    .option(
      '--sandbox-port <n>',
      `first port of the --sandbox simulators (default ${String(SERVICE_SANDBOX_PORT)}: one simulator per connector on consecutive ports, in the order \`switchboard sandbox\` prints)`,
      portArg,
    )
    .action(async (opts: { port?: number; host?: string; sandbox?: boolean; sandboxPort?: number }) => {
      try {
        const { connectorRegistry } = await import('../manifest/index.ts');
        const { loadServiceConfig, startService, createServiceLogger } = await import('../service/index.ts');
        const registry = connectorRegistry();
        let config = loadServiceConfig(process.env, registry.keys());
        if (opts.port !== undefined) config.port = opts.port;
        if (opts.host !== undefined) config.host = opts.host;
        const log = createServiceLogger(config.logLevel);
        let closeSandbox: (() => Promise<void>) | undefined;
        if (opts.sandbox === true) {
          const { startSandbox } = await import('../simulator/sandbox.ts');
          const { withSandbox } = await import('../service/data/sandbox-wiring.ts');
          const sandboxPort = opts.sandboxPort ?? SERVICE_SANDBOX_PORT;
          const { sandboxStateFile } = await import('../simulator/sandbox.ts');
          const sandbox = await startSandbox({
            ...(sandboxPort !== 0 ? { basePort: sandboxPort } : {}),
            ...(sandboxPort !== 0 ? { stateFile: sandboxStateFile(dataDir(), sandboxPort), kind: 'service' as const } : {}),
          }).catch((e: unknown) => {
            throw listenError(e, undefined, 'pick other simulator ports with --sandbox-port <n> (the simulators use n, n+1, ..., one port each)');
          });
          closeSandbox = () => sandbox.close();
          config = withSandbox(config, sandbox, registry);
          // Sample credentials of the simulators (fake values) for the quick start.
          process.stdout.write(`${JSON.stringify({ sandbox: sandbox.connectors }, null, 2)}\n`);
          for (const [type, c] of Object.entries(config.connectorTypes)) {
            if (sandbox.connectors[type] !== undefined)
              log.info({ connector_type: type, base_url: c.baseUrl, oauth: c.oauth !== undefined }, 'sandbox upstream');
          }
          if (sandbox.missing.length > 0) log.warn({ missing: sandbox.missing }, 'no simulator in this checkout for these connector types');
        }
        // A fatal condition under the running service (its data gone) stops it, with status 1.
        let stop: (code: number) => void = () => undefined;
        const service = await startService({ config, logger: log, onFatal: () => stop(1) }).catch(async (e: unknown) => {
          await closeSandbox?.();
          throw listenError(e, config.port, `choose another port with --port <n> or PORT=<n> (e.g. npm start -- --port ${String(config.port + 1)})`);
        });
        log.info({ url: service.url, public_url: service.ctx.publicUrl(), database: service.database.dialect }, 'Switchboard listening');
        if (closeSandbox !== undefined) {
          // A Connect UI link for a demo customer: open it in a browser to connect a simulated account.
          const { sandboxConnectLink } = await import('../service/connect/sandbox-demo.ts');
          const link = await sandboxConnectLink(service.ctx);
          process.stdout.write(
            `${JSON.stringify({ connect: link }, null, 2)}\nConnect UI for ${link.customer_name}: ${link.connect_url}\n` +
              `(to call the API on what it connects: npx switchboard admin create-app --org ${link.organization})\n`,
          );
        }
        stop = serviceStopper({
          graceMs: config.shutdownGraceMs,
          log,
          close: async () => {
            await service.close();
            await closeSandbox?.();
          },
        });
        process.on('SIGINT', () => stop(0));
        process.on('SIGTERM', () => stop(0));
      } catch (e) {
        failWith(e);
      }
    });
}
