/** `switchboard admin create-app --org <name>` and `admin grant --client-id <id> --org <name>`. */
import type { Command } from 'commander';
import { SwitchboardError } from '../errors/index.ts';
import { failWith } from './cli-support.ts';

/** Open the configured database (SWITCHBOARD_DATABASE_URL or ./data), migrated, for one admin action. */
async function withStore<T>(fn: (store: import('../store/index.ts').ServiceStore) => Promise<T>): Promise<T> {
  const { migrate, openDatabase, SERVICE_MIGRATIONS, ServiceStore } = await import('../store/index.ts');
  const database = openDatabase<import('../store/index.ts').ServiceTables>(process.env['SWITCHBOARD_DATABASE_URL']?.trim() || undefined);
  try {
    await migrate(database as import('../store/index.ts').Database, [SERVICE_MIGRATIONS]);
    return await fn(new ServiceStore(database.db));
  } finally {
    await database.close();
  }
}

export function registerAdminCommand(program: Command): void {
  const admin = program.command('admin').description('Manage organizations and applications of the hosted service (uses SWITCHBOARD_DATABASE_URL)');
  admin
    .command('create-app')
    .description('Create an application (and the organization if needed); prints {organization_id, client_id, client_secret} — the secret is shown only once')
    .requiredOption('--org <name>', 'organization name')
    .option('--name <name>', 'application name')
    .option('--envelope <envelope>', "response envelope of its calls: switchboard (default) or airbyte (Airbyte agent SDK's, for every request, not only those sending X-ADP-Agent-SDK)")
    .action(async (opts: { org: string; name?: string; envelope?: string }) => {
      try {
        const { createApplication, RESPONSE_ENVELOPES } = await import('../service/accounts.ts');
        const envelope = opts.envelope;
        if (envelope !== undefined && !(RESPONSE_ENVELOPES as readonly string[]).includes(envelope)) {
          throw new SwitchboardError('invalid_request', `--envelope must be one of: ${RESPONSE_ENVELOPES.join(', ')}`);
        }
        const created = await withStore((store) =>
          createApplication(store, { orgName: opts.org, ...(opts.name !== undefined ? { appName: opts.name } : {}), ...(envelope !== undefined ? { envelope: envelope as 'switchboard' | 'airbyte' } : {}) }),
        );
        process.stdout.write(`${JSON.stringify(created, null, 2)}\n`);
      } catch (e) {
        failWith(e);
      }
    });
  admin
    .command('grant')
    .description('Give an application access to another organization (created if needed)')
    .requiredOption('--client-id <id>', 'client id of the application')
    .requiredOption('--org <name>', 'organization name')
    .action(async (opts: { clientId: string; org: string }) => {
      try {
        const { grantOrganization } = await import('../service/accounts.ts');
        const out = await withStore((store) => grantOrganization(store, { clientId: opts.clientId, orgName: opts.org }));
        process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      } catch (e) {
        failWith(e);
      }
    });
}
