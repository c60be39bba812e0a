/**
 * Embedding Switchboard in your own service: a small Fastify app that runs connectors for its
 * own users with the interpreter and the store in process — no separate Switchboard service.
 *
 * - Each user connects a connector type once (`PUT /users/:userId/connections/:type` with the
 *   credentials). The credentials are validated against the manifest's credential variants and
 *   stored encrypted (AES-256-GCM, the project's KeyRing) in the app's own table, next to the
 *   record store's and the sync engine's tables, on SQLite or PostgreSQL.
 * - One route per connector action, generated from the manifests:
 *   `POST /users/:userId/<type>/<entity>/<action>` with the action's params as the JSON body,
 *   answering the interpreter's envelope (`{data, meta}` for list, `{data}` otherwise).
 * - `POST /users/:userId/<type>/sync` copies the user's data into the record store, and
 *   `POST /users/:userId/<type>/<entity>/search` queries it (for entities with search fields).
 * - Every failure is a SwitchboardError; it becomes the error's HTTP status and
 *   `{error: {code, message, errors?, upstream_status?}}`. Third-party response bodies are
 *   logged, not passed on to the app's users.
 *
 * Run it against the simulators:
 *
 *   npx switchboard sandbox                      # prints each type's base_url and credentials
 *   SWITCHBOARD_GRANOLA_BASE_URL=<base_url> node --import tsx examples/embedded-host/server.ts
 */
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Kysely, Migration } from 'kysely';
import { ConnectorRuntime, connectorRegistry, SwitchboardError, SYNC_ONLY_ACTIONS, type FetchLike, type LoadedManifest, type RetryPolicy } from '@switchboard-oss/switchboard';
import { RecordStore, searchDefOf, searchMigrations } from '@switchboard-oss/switchboard/search';
import { connectorTypeConfigFromEnv, type ConnectorTypeConfig } from '@switchboard-oss/switchboard/service';
import { migrate, openDatabase, resolveKeyRing, type Database, type KeyRing, type MigrationGroup, type ResolvedKeyRing } from '@switchboard-oss/switchboard/store';
import { SyncEngine, syncMigrations } from '@switchboard-oss/switchboard/sync';

// ---------------------------------------------------------------------------------------------
// The app's own table: one connection per (user, connector type), credentials sealed.

interface ConnectionsTable {
  id: string;
  user_id: string;
  connector_type: string;
  auth_variant: string;
  credentials_key_id: string;
  credentials_ciphertext: string;
  created_at: string;
  updated_at: string;
}
interface HostTables {
  host_connections: ConnectionsTable;
}

const hostMigrations: MigrationGroup = {
  name: 'embedded_host',
  migrations: {
    '001_connections': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('host_connections')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('user_id', 'text', (c) => c.notNull())
          .addColumn('connector_type', 'text', (c) => c.notNull())
          .addColumn('auth_variant', 'text', (c) => c.notNull())
          .addColumn('credentials_key_id', 'text', (c) => c.notNull())
          .addColumn('credentials_ciphertext', 'text', (c) => c.notNull())
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .addUniqueConstraint('host_connections_user_type', ['user_id', 'connector_type'])
          .execute();
      },
    } satisfies Migration,
  },
};

/** Binds a sealed credential to its row: a ciphertext copied to another row does not decrypt. */
const sealContext = (connectionId: string): string => `host-connection:${connectionId}`;

// ---------------------------------------------------------------------------------------------

export interface HostOptions {
  /** `postgres://...`, a SQLite path or `:memory:`; default $EMBEDDED_HOST_DATABASE_URL or ./data/embedded-host.db. */
  databaseUrl?: string;
  /** PostgreSQL: put the tables in this (existing) schema. */
  schema?: string;
  /** Key ring (`base64` or `id:base64,...`); default $SWITCHBOARD_ENCRYPTION_KEY, else a key file beside the SQLite file. */
  encryptionKey?: string;
  /** Base URL and OAuth app (for refreshing tokens) per connector type; default from SWITCHBOARD_<TYPE>_* env vars. */
  connectorTypes?: Record<string, ConnectorTypeConfig>;
  /** Connector manifests; default every packaged one. */
  registry?: Map<string, LoadedManifest>;
  /** Throttle each user's calls to the manifest's rate_limit; default true. */
  upstreamThrottle?: boolean;
  /** Run scheduled syncs in the background; default false (sync on demand only). */
  scheduleSyncs?: boolean;
  fetch?: FetchLike;
  retry?: Partial<RetryPolicy>;
  /** Fastify's logger; default false. */
  logger?: boolean;
}

/** The embedding host: a Fastify app, not yet listening. Closing it closes the database. */
export async function buildHost(options: HostOptions = {}): Promise<FastifyInstance> {
  const env = process.env;
  const registry = options.registry ?? connectorRegistry();
  const typeConfig = options.connectorTypes ?? Object.fromEntries([...registry.keys()].map((t) => [t, connectorTypeConfigFromEnv(t, env)]));
  const database = openDatabase<HostTables>(options.databaseUrl ?? env['EMBEDDED_HOST_DATABASE_URL'] ?? './data/embedded-host.db', options.schema !== undefined ? { schema: options.schema } : {});
  const db = database.db;
  let keys: ResolvedKeyRing;
  try {
    await migrate(database as Database, [searchMigrations, syncMigrations, hostMigrations]);
    keys = resolveKeyRing(options.encryptionKey ?? env['SWITCHBOARD_ENCRYPTION_KEY'], database);
  } catch (e) {
    await database.close();
    throw e;
  }
  const keyRing: KeyRing = keys.ring;

  // The record store (search) and the sync engine, over the same database.
  const records = new RecordStore(database, { cursorSecret: keyRing.derive('search-cursor') });
  // One interpreter per connection (its throttle and OAuth refresh are per user), kept while its credentials are unchanged.
  const runtimes = new Map<string, { state: { ciphertext: string }; runtime: ConnectorRuntime }>();
  const sync = new SyncEngine({
    database: database as Database,
    sink: records,
    runtimeFor: async (connectionId) => {
      const row = await db.selectFrom('host_connections').selectAll().where('id', '=', connectionId).executeTakeFirst();
      return row === undefined ? undefined : { runtime: runtimeOf(row), manifest: manifestOf(row.connector_type) };
    },
  });

  function manifestOf(type: string): LoadedManifest {
    const m = registry.get(type);
    if (m === undefined) throw new SwitchboardError('unknown_connector_type', `Unknown connector type "${type}"`, { details: { valid: [...registry.keys()] } });
    return m;
  }

  /** The user's runtime for a connection, built from its decrypted credentials. */
  function runtimeOf(row: ConnectionsTable): ConnectorRuntime {
    const cached = runtimes.get(row.id);
    if (cached !== undefined && cached.state.ciphertext === row.credentials_ciphertext) return cached.runtime;
    const credentials = keyRing.openJson<Record<string, unknown>>({ keyId: row.credentials_key_id, ciphertext: row.credentials_ciphertext }, sealContext(row.id));
    const cfg = typeConfig[row.connector_type] ?? {};
    const state = { ciphertext: row.credentials_ciphertext };
    const runtime = new ConnectorRuntime(manifestOf(row.connector_type), credentials, {
      authVariant: row.auth_variant,
      ...(cfg.baseUrl !== undefined ? { baseUrl: cfg.baseUrl } : {}),
      ...(cfg.oauth !== undefined ? { oauthClient: { clientId: cfg.oauth.clientId, clientSecret: cfg.oauth.clientSecret, ...(cfg.oauth.tokenUrl !== undefined ? { tokenUrl: cfg.oauth.tokenUrl } : {}) } } : {}),
      ...(options.upstreamThrottle === false ? { limiter: null } : {}),
      ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
      ...(options.retry !== undefined ? { retry: options.retry } : {}),
      // Refreshed OAuth tokens are sealed and stored for the next request and the next process.
      onTokenRefresh: async (next) => {
        const sealed = keyRing.sealJson(next, sealContext(row.id));
        await db.updateTable('host_connections').set({ credentials_key_id: sealed.keyId, credentials_ciphertext: sealed.ciphertext, updated_at: new Date().toISOString() }).where('id', '=', row.id).execute();
        state.ciphertext = sealed.ciphertext;
      },
    });
    runtimes.set(row.id, { state, runtime });
    return runtime;
  }

  async function connection(userId: string, type: string): Promise<ConnectionsTable> {
    manifestOf(type);
    const row = await db.selectFrom('host_connections').selectAll().where('user_id', '=', userId).where('connector_type', '=', type).executeTakeFirst();
    if (row === undefined) throw new SwitchboardError('connector_not_found', `User ${userId} has not connected ${type}: PUT /users/${userId}/connections/${type} with credentials first`);
    return row;
  }

  const app = Fastify({ logger: options.logger ?? false });
  if (keys.source === 'generated-file') app.log.warn({ key_file: keys.file }, 'No SWITCHBOARD_ENCRYPTION_KEY: generated a key beside the database; back it up, credentials cannot be decrypted without it');
  app.addHook('onReady', async () => {
    if (options.scheduleSyncs === true) sync.start();
  });
  app.addHook('onClose', async () => {
    await sync.stop();
    await database.close();
  });

  // SwitchboardError → its HTTP status; the body never carries the third party's response.
  app.setErrorHandler((err: FastifyError | SwitchboardError, request, reply: FastifyReply) => {
    if (err instanceof SwitchboardError) {
      if (err.details['upstream_body'] !== undefined) request.log.warn({ code: err.code, upstream_status: err.details['upstream_status'], upstream_body: err.details['upstream_body'] }, 'upstream refused');
      const retryMs = err.details['retry_after_ms'];
      if (err.status === 429 && typeof retryMs === 'number') void reply.header('retry-after', String(Math.max(1, Math.ceil(retryMs / 1000))));
      return reply.code(err.status).send({
        error: {
          code: err.code,
          message: err.message,
          ...(err.errors.length > 0 ? { errors: err.errors } : {}),
          ...(typeof err.details['upstream_status'] === 'number' ? { upstream_status: err.details['upstream_status'] } : {}),
          ...(Array.isArray(err.details['valid']) ? { valid: err.details['valid'] } : {}),
        },
      });
    }
    const status = typeof err.statusCode === 'number' && err.statusCode >= 400 ? err.statusCode : 500;
    if (status >= 500) request.log.error(err);
    return reply.code(status).send({ error: { code: status >= 500 ? 'internal_error' : 'invalid_request', message: status >= 500 ? 'Internal error' : err.message } });
  });
  app.setNotFoundHandler((request, reply) => reply.code(404).send({ error: { code: 'route_not_found', message: `No route ${request.method} ${request.url.split('?')[0] ?? ''}` } }));

  type UserParams = { userId: string };

  /** What the app offers: every connector type with its entities and actions (and the routes). */
  app.get('/connectors', async () => ({
    data: [...registry.values()].map((m) => ({
      type: m.type,
      title: m.manifest.title,
      credential_variants: m.manifest.auth.map((v) => ({ name: v.name, fields: Object.keys(v.fields) })),
      entities: Object.fromEntries([...m.entities].map(([name, e]) => [name, [...[...e.actions.keys()].filter((a) => !SYNC_ONLY_ACTIONS.has(a)), ...(e.def.search !== undefined ? ['search'] : [])]])),
    })),
  }));

  // Connections: connect (or replace credentials), list, disconnect.
  app.put<{ Params: UserParams & { type: string }; Body: { credentials?: unknown } }>('/users/:userId/connections/:type', async (request, reply) => {
    const { userId, type } = request.params;
    const manifest = manifestOf(type);
    const credentials = request.body?.credentials;
    // Building a runtime validates the credentials against the type's variants (invalid_credentials, 400).
    const authVariant = new ConnectorRuntime(manifest, credentials).authVariant;
    const existing = await db.selectFrom('host_connections').select('id').where('user_id', '=', userId).where('connector_type', '=', type).executeTakeFirst();
    const id = existing?.id ?? randomUUID();
    const sealed = keyRing.sealJson(credentials, sealContext(id));
    const now = new Date().toISOString();
    if (existing === undefined) {
      await db.insertInto('host_connections').values({ id, user_id: userId, connector_type: type, auth_variant: authVariant, credentials_key_id: sealed.keyId, credentials_ciphertext: sealed.ciphertext, created_at: now, updated_at: now }).execute();
      await sync.register(id);
    } else {
      await db.updateTable('host_connections').set({ auth_variant: authVariant, credentials_key_id: sealed.keyId, credentials_ciphertext: sealed.ciphertext, updated_at: now }).where('id', '=', id).execute();
    }
    return reply.code(existing === undefined ? 201 : 200).send({ user_id: userId, connector_type: type, auth_variant: authVariant, updated_at: now });
  });

  app.get<{ Params: UserParams }>('/users/:userId/connections', async (request) => {
    const rows = await db.selectFrom('host_connections').select(['connector_type', 'auth_variant', 'created_at', 'updated_at']).where('user_id', '=', request.params.userId).orderBy('connector_type').execute();
    return { data: rows };
  });

  app.delete<{ Params: UserParams & { type: string } }>('/users/:userId/connections/:type', async (request, reply) => {
    const row = await connection(request.params.userId, request.params.type);
    await sync.remove(row.id);
    await db.deleteFrom('host_connections').where('id', '=', row.id).execute();
    runtimes.delete(row.id);
    return reply.code(204).send();
  });

  // One route per connector action, from the manifests.
  for (const manifest of registry.values()) {
    const type = manifest.type;
    for (const [entityName, entity] of manifest.entities) {
      // Sync-only actions (changes, scroll) are for the sync engine, not for callers.
      for (const action of [...entity.actions.keys()].filter((a) => !SYNC_ONLY_ACTIONS.has(a))) {
        app.post<{ Params: UserParams; Body: Record<string, unknown> | undefined }>(`/users/:userId/${type}/${entityName}/${action}`, async (request) => {
          const row = await connection(request.params.userId, type);
          return runtimeOf(row).execute(entityName, action, request.body ?? {});
        });
      }
      const def = searchDefOf(entity.def);
      if (def !== undefined) {
        app.post<{ Params: UserParams; Body: unknown }>(`/users/:userId/${type}/${entityName}/search`, async (request) => {
          const row = await connection(request.params.userId, type);
          return records.search(row.id, entityName, def, request.body ?? {});
        });
      }
    }
    if ([...manifest.entities.values()].some((e) => e.def.sync !== undefined)) {
      app.post<{ Params: UserParams; Body: { full?: boolean } | undefined }>(`/users/:userId/${type}/sync`, async (request) => {
        const row = await connection(request.params.userId, type);
        const result = await sync.runOnce(row.id, { full: request.body?.full === true });
        return { entities: result.entities, full: result.full };
      });
    }
  }

  return app;
}

// `node --import tsx examples/embedded-host/server.ts`
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const app = await buildHost({ logger: true, scheduleSyncs: process.env['EMBEDDED_HOST_SCHEDULE_SYNCS'] === 'true' });
  await app.listen({ port: Number(process.env['PORT'] ?? 4000), host: process.env['HOST'] ?? '127.0.0.1' });
  const stop = (): void => void app.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
