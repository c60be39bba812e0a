/**
 * `switchboard simulate --openapi <file>` or `--graphql <sdl>`: a stateful simulator of any
 * OpenAPI 3 description or GraphQL schema (src/simulator), with an optional sidecar of what the
 * description cannot say. Prints, as JSON, where it listens and which resources it serves; runs
 * until Ctrl+C.
 */
import type { Command } from 'commander';
import { SwitchboardError } from '../errors/index.ts';
import { failWith, listenError, portArg } from './cli-support.ts';

/**
 * Default port of `switchboard simulate`: just below the sandbox's simulators (SANDBOX_PORT up,
 * one per connector, so the range grows with every connector added) and far from the service's
 * (SERVICE_SANDBOX_PORT up), so a simulate beside a running sandbox does not collide with it.
 */
export const SIMULATE_PORT = 4009;

function seedArg(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff)
    throw new SwitchboardError('invalid_params', `--seed must be an integer from 0 to 4294967295, got "${value}"`);
  return n;
}

export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .description(
      'Serve a stateful simulator of an OpenAPI 3 description or a GraphQL schema: validated requests, seeded records, create/get/update/list with state, the vendor error shape',
    )
    .option('--openapi <file>', 'the OpenAPI 3.x description (YAML or JSON)')
    .option('--graphql <sdl>', 'the GraphQL schema (SDL file)')
    .option('--port <n>', `port to listen on (default ${String(SIMULATE_PORT)}, below the sandbox's ports; 0 picks a free port)`, portArg)
    .option('--seed <n>', 'seed of the sample records (default 1)', seedArg)
    .option('--sidecar <file>', 'YAML sidecar: error body, accepted tokens, rate limits, pagination fields (see docs)')
    .option('--host <host>', 'interface to listen on (default 127.0.0.1)')
    .action(async (opts: { openapi?: string; graphql?: string; port?: number; seed?: number; sidecar?: string; host?: string }) => {
      try {
        if ((opts.openapi === undefined) === (opts.graphql === undefined))
          throw new SwitchboardError('invalid_params', 'Give one of --openapi <file> or --graphql <sdl>');
        const { startOpenApiSimulator, startGraphqlSimulator, Description, loadDescription, loadSidecar } = await import('../simulator/index.ts');
        const port = opts.port ?? SIMULATE_PORT;
        if (opts.graphql !== undefined) {
          const file = opts.graphql;
          let sdl: string;
          let sidecar: ReturnType<typeof loadSidecar> | undefined;
          try {
            sdl = (await import('node:fs')).readFileSync(file, 'utf8');
            sidecar = opts.sidecar === undefined ? undefined : loadSidecar(opts.sidecar);
          } catch (e) {
            const err = e as NodeJS.ErrnoException;
            throw new SwitchboardError('invalid_params', err?.code === 'ENOENT' ? `No such file: ${err.path ?? file}` : (err?.message ?? String(e)));
          }
          const { buildTolerantSchema } = await import('../simulator/graphql/sdl.ts');
          let schema: ReturnType<typeof buildTolerantSchema>['schema'];
          try {
            const built = buildTolerantSchema(sdl);
            schema = built.schema;
            for (const w of built.warnings) process.stderr.write(`Schema repaired: ${w}\n`);
          } catch (e) {
            throw new SwitchboardError('invalid_params', `Cannot read the GraphQL schema ${file}: ${(e as Error).message}`);
          }
          const sim = await startGraphqlSimulator({ schema, sidecar, port, host: opts.host, seed: opts.seed }).catch((e: unknown) => {
            throw listenError(e, port, 'pick another port with --port <n>');
          });
          const resources = Object.fromEntries([...sim.resources.values()].map((r) => [r.type.name, { records: r.records.size }]));
          process.stdout.write(JSON.stringify({ base_url: sim.url, endpoint: `${sim.url}${sidecar?.graphql?.path ?? '/graphql'}`, resources }, null, 2) + '\n');
          process.stderr.write(`Simulating ${file} at ${sim.url}; press Ctrl+C to stop.\n`);
          const stopGraphql = (): void => {
            void sim.close().then(() => process.exit(0));
          };
          process.on('SIGINT', stopGraphql);
          process.on('SIGTERM', stopGraphql);
          return;
        }
        const openapi = opts.openapi as string;
        // The files are the user's input: a missing or malformed one is invalid_params, named.
        let description: InstanceType<typeof Description>;
        let sidecar: ReturnType<typeof loadSidecar> | undefined;
        try {
          description = new Description(await loadDescription(openapi));
          sidecar = opts.sidecar === undefined ? undefined : loadSidecar(opts.sidecar);
        } catch (e) {
          const err = e as NodeJS.ErrnoException;
          throw new SwitchboardError('invalid_params', err?.code === 'ENOENT' ? `No such file: ${err.path ?? openapi}` : (err?.message ?? String(e)));
        }
        const sim = await startOpenApiSimulator({ description, sidecar, port, host: opts.host, seed: opts.seed }).catch((e: unknown) => {
          throw listenError(e, port, 'pick another port with --port <n>');
        });
        const resources = Object.fromEntries([...sim.resources.values()].map((r) => [r.name, { id_field: r.idField, records: r.records.size }]));
        process.stdout.write(JSON.stringify({ base_url: sim.url, operations: sim.description.operations.length, resources }, null, 2) + '\n');
        process.stderr.write(`Simulating ${openapi} at ${sim.url}; press Ctrl+C to stop.\n`);
        const stop = (): void => {
          void sim.close().then(() => process.exit(0));
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      } catch (e) {
        failWith(e);
      }
    });
}
