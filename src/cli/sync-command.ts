/** `switchboard sync <connector_id> [--full]`: run one sync of a hosted connector, with a progress bar per entity. */
import type { Command } from 'commander';
import { dataDir, failWith, plural, CONNECTORS_OPTION, collect } from './cli-support.ts';

export function registerSyncCommand(program: Command): void {
  program
    .command('sync')
    .description('Run one sync of a hosted connector now (same database and configuration as `serve`); prints the result as JSON')
    .option(...CONNECTORS_OPTION, collect)
    .argument('<connector_id>', 'connector id')
    .option('--full', 'full refresh with deletion detection instead of an incremental run')
    .action(async (connectorId: string, opts: { full?: boolean }) => {
      const { MultiBar, Presets } = await import('cli-progress');
      const { connectorRegistry } = await import('../manifest/index.ts');
      const { migrate, openDatabase, resolveKeyRing, ServiceStore, storedKeyIds } = await import('../store/index.ts');
      const { HOSTED_MIGRATIONS, loadServiceConfig, createServiceLogger } = await import('../service/index.ts');
      const { createHostedData } = await import('../service/data/hosted-data.ts');
      const { createUpstreamTransport } = await import('../http/upstream-transport.ts');
      const registry = connectorRegistry();
      const config = loadServiceConfig(process.env, registry.keys());
      // Beside `npm start -- --sandbox`: use its simulators as upstreams, as the service does
      // (a type whose SWITCHBOARD_<TYPE>_BASE_URL is set keeps it).
      const { findRunningSandbox } = await import('../simulator/sandbox-state.ts');
      const sandbox = findRunningSandbox(dataDir(), (s) => s.kind === 'service');
      for (const [type, c] of Object.entries(sandbox?.state.connectors ?? {})) {
        if (process.env[`SWITCHBOARD_${type.toUpperCase()}_BASE_URL`]) continue;
        config.connectorTypes[type] = { ...(config.connectorTypes[type] ?? {}), baseUrl: c.base_url };
      }
      if (sandbox !== undefined) process.stderr.write(`Using the simulators of the running sandbox (${sandbox.file}).\n`);
      const database = openDatabase<import('../store/index.ts').ServiceTables>(config.databaseUrl);
      const transport = createUpstreamTransport();
      const bars = process.stderr.isTTY
        ? new MultiBar({ format: ' {entity} | {value} records | {pages} pages | {state}', hideCursor: true, clearOnComplete: false }, Presets.shades_classic)
        : undefined;
      try {
        await migrate(database as import('../store/index.ts').Database, [...HOSTED_MIGRATIONS]);
        const store = new ServiceStore(database.db);
        if ((await store.getConnectorById(connectorId)) === undefined) {
          const { SwitchboardError } = await import('../errors/index.ts');
          throw new SwitchboardError('connector_not_found', `No connector ${connectorId} in ${config.databaseUrl ?? './data/switchboard.db'}`);
        }
        const data = createHostedData({
          database,
          store,
          keyRing: resolveKeyRing(config.encryptionKey, database, await storedKeyIds(database.db)).ring,
          config,
          registry,
          fetch: transport.fetch,
          now: Date.now,
          log: createServiceLogger('warn', process.stderr),
        });
        await data.sync.register(connectorId);
        const progress = new Map<string, import('cli-progress').SingleBar>();
        const result = await data.sync.runOnce(connectorId, {
          ...(opts.full ? { full: true } : {}),
          onProgress: (p) => {
            if (bars === undefined) {
              if (p.done) process.stderr.write(`${p.entity}: ${plural(p.records, 'record')} in ${plural(p.pages, 'page')}\n`);
              return;
            }
            let bar = progress.get(p.entity);
            if (bar === undefined) {
              bar = bars.create(0, 0, { entity: p.entity.padEnd(18), pages: 0, state: 'syncing' });
              progress.set(p.entity, bar);
            }
            bar.setTotal(p.records);
            bar.update(p.records, { pages: p.pages, state: p.done ? 'done' : 'syncing' });
          },
        });
        bars?.stop();
        process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      } catch (e) {
        bars?.stop();
        failWith(e);
      } finally {
        await transport.close();
        await database.close();
      }
    });
}
