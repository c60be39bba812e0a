/** `switchboard admin create-app --org <name>` and `admin grant --client-id <id> --org <name>`. */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { SwitchboardError } from '../errors/index.ts';
import { failWith } from './cli-support.ts';

/** Record an admin action on an application in the audit log (who: admin_cli). */
type AdminAudit = (e: { organizationId: string; action: string; applicationId: string; details: Record<string, unknown> }) => Promise<void>;

/**
 * Open the configured database (SWITCHBOARD_DATABASE_URL, else switchboard.db in the data
 * directory), migrated, for one admin action. A SQLite file that does not exist yet is created
 * only with `create`: run from another directory, admin would otherwise make a second database
 * whose applications the running service does not know. (A PostgreSQL database is created by its
 * operator, never by Switchboard.)
 */
async function withStore<T>(create: boolean, fn: (store: import('../store/index.ts').ServiceStore, audit: AdminAudit) => Promise<T>): Promise<T> {
  const { migrate, openDatabase, isPostgresUrl, DEFAULT_SQLITE_FILE, SERVICE_MIGRATIONS, ServiceStore } = await import('../store/index.ts');
  const { OPERATIONS_MIGRATIONS } = await import('../service/ops/operations-migrations.ts');
  const { appendAuditEvent } = await import('../service/ops/audit-log.ts');
  const { databaseUrlFromEnv } = await import('../service/config.ts');
  const url = databaseUrlFromEnv(process.env);
  const notFound = (where: string): SwitchboardError =>
    new SwitchboardError(
      'database_not_found',
      `No Switchboard database at ${where}. Run admin where the service runs, or point it at the service's database with --data-dir <dir> or SWITCHBOARD_DATABASE_URL; to create a new database there, add --create.`,
      { details: { database: where } },
    );
  if (!isPostgresUrl(url)) {
    const file = resolve((url ?? DEFAULT_SQLITE_FILE).replace(/^sqlite:(\/\/)?/, ''));
    if (!create && !existsSync(file)) throw notFound(file);
  }
  const database = openDatabase<import('../store/index.ts').ServiceTables>(url);
  try {
    // The operations group holds the audit log, which records what admin does.
    await migrate(database as import('../store/index.ts').Database, [SERVICE_MIGRATIONS, OPERATIONS_MIGRATIONS]);
    const audit: AdminAudit = (e) =>
      appendAuditEvent(database.db as unknown as Parameters<typeof appendAuditEvent>[0], Date.now(), {
        organization_id: e.organizationId,
        action: e.action,
        outcome: 'success',
        resource_type: 'application',
        resource_id: e.applicationId,
        actor_application_id: null,
        actor_token_kind: 'admin_cli',
        actor_customer: null,
        ip: null,
        request_id: null,
        details: e.details,
      });
    return await fn(new ServiceStore(database.db), audit);
  } finally {
    await database.close();
  }
}

export function registerAdminCommand(program: Command): void {
  const admin = program
    .command('admin')
    .description(
      'Manage organizations and applications of the hosted service (its database: SWITCHBOARD_DATABASE_URL, or switchboard.db in the data directory; never created without --create)',
    );
  admin
    .command('create-app')
    .description('Create an application (and the organization if needed); prints {organization_id, client_id, client_secret} — the secret is shown only once')
    .requiredOption('--org <name>', 'organization name')
    .option('--name <name>', 'application name')
    .option(
      '--envelope <envelope>',
      "response envelope of its calls: switchboard (default) or airbyte (Airbyte agent SDK's, for every request, not only those sending X-ADP-Agent-SDK)",
    )
    .option('--create', 'create the database if there is none yet (default: refuse, naming the path looked at)')
    .action(async (opts: { org: string; name?: string; envelope?: string; create?: boolean }) => {
      try {
        const { createApplication, RESPONSE_ENVELOPES } = await import('../service/auth/accounts.ts');
        const envelope = opts.envelope;
        if (envelope !== undefined && !(RESPONSE_ENVELOPES as readonly string[]).includes(envelope)) {
          throw new SwitchboardError('invalid_request', `--envelope must be one of: ${RESPONSE_ENVELOPES.join(', ')}`);
        }
        const created = await withStore(opts.create === true, async (store, audit) => {
          const out = await createApplication(store, {
            orgName: opts.org,
            ...(opts.name !== undefined ? { appName: opts.name } : {}),
            ...(envelope !== undefined ? { envelope: envelope as 'switchboard' | 'airbyte' } : {}),
          });
          const app = await store.findApplicationByClientId(out.client_id);
          await audit({
            organizationId: out.organization_id,
            action: 'application.created',
            applicationId: app?.id ?? out.client_id,
            details: { client_id: out.client_id, name: app?.name ?? null, org: opts.org },
          });
          return out;
        });
        process.stdout.write(`${JSON.stringify(created, null, 2)}\n`);
      } catch (e) {
        failWith(e);
      }
    });
  admin
    .command('proxy-access')
    .description("Switch an application's use of the proxy route (docs/proxy.md): on (default), read (GET and HEAD only) or off")
    .requiredOption('--client-id <id>', 'client id of the application')
    .requiredOption('--access <on|read|off>', 'on, read or off')
    .option('--create', 'create the database if there is none yet (default: refuse, naming the path looked at)')
    .action(async (opts: { clientId: string; access: string; create?: boolean }) => {
      try {
        const { setProxyAccess } = await import('../service/auth/proxy-access.ts');
        const out = await withStore(opts.create === true, (store) => setProxyAccess(store, opts.clientId, opts.access));
        process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      } catch (e) {
        failWith(e);
      }
    });
  admin
    .command('grant')
    .description('Give an application access to another organization (created if needed)')
    .requiredOption('--client-id <id>', 'client id of the application')
    .requiredOption('--org <name>', 'organization name')
    .option('--create', 'create the database if there is none yet (default: refuse, naming the path looked at)')
    .action(async (opts: { clientId: string; org: string; create?: boolean }) => {
      try {
        const { grantOrganization } = await import('../service/auth/accounts.ts');
        const out = await withStore(opts.create === true, async (store, audit) => {
          const granted = await grantOrganization(store, { clientId: opts.clientId, orgName: opts.org });
          const app = await store.findApplicationByClientId(opts.clientId);
          if (granted.granted)
            await audit({
              organizationId: granted.organization_id,
              action: 'application.granted',
              applicationId: app?.id ?? opts.clientId,
              details: { client_id: opts.clientId, org: opts.org },
            });
          return granted;
        });
        process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
      } catch (e) {
        failWith(e);
      }
    });
}
