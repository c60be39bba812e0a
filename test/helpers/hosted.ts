/**
 * The hosted service in tests, one way: a real server on a free port over SQLite (a temp file) or
 * PostgreSQL (a fresh schema, dropped afterwards), log lines captured, a movable clock, JSON
 * requests over real HTTP, a snapshot of every stored row (startHarness); and the fixture most
 * tests want on top of it (startHosted): the service pointed at the given upstreams, with an
 * application and its access token.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectorRegistry, loadManifestFile, type LoadedManifest } from '../../src/manifest/index.ts';
import {
  createApplication,
  createServiceLogger,
  defaultServiceConfig,
  startService,
  type CreatedApplication,
  type RunningService,
  type ServiceConfig,
  type ServiceHooks,
} from '../../src/service/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { generateKeySpec, ServiceStore } from '../../src/store/index.ts';

import { PG_URL, postgresAdmin, type DialectName } from './dialects.ts';

export { describeEachDialect, PG_URL, PG_SKIP_REASON, type DialectName } from './dialects.ts';

/** The key every harness of this process encrypts with (instances sharing a database must share it). */
export const TEST_ENCRYPTION_KEY = generateKeySpec();

const ACME_MANIFEST = fileURLToPath(new URL('../service/fixtures/acme/connector.yaml', import.meta.url));

/** Every packaged connector plus the `acme` OAuth fixture. */
export function testRegistry(): Map<string, LoadedManifest> {
  const acme = loadManifestFile(ACME_MANIFEST);
  return new Map([...connectorRegistry(), [acme.type, acme]]);
}

/** A fake third-party API on a loopback port (point SWITCHBOARD_<TYPE>_BASE_URL at `url`). */
export async function fakeUpstream(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** A database location of its own: a temp SQLite file, or a fresh PostgreSQL schema. */
export interface TestDatabase {
  dialect: DialectName;
  url: string;
  schema?: string;
  /** SQLite file path. */
  file?: string;
  drop(): Promise<void>;
}

export async function freshDatabase(dialect: DialectName): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-service-'));
    const file = join(dir, 'switchboard.db');
    return { dialect, url: file, file, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  if (PG_URL === undefined) throw new Error('SWITCHBOARD_TEST_POSTGRES_URL is not set');
  const schema = `sbtest_${randomBytes(6).toString('hex')}`;
  await postgresAdmin(`create schema ${schema}`);
  return {
    dialect,
    url: PG_URL,
    schema,
    drop: () => postgresAdmin(`drop schema if exists ${schema} cascade`),
  };
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  // Parsed JSON body (undefined when the body is not JSON); tests read it freely.
  body: any;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as is instead of JSON.stringify(body). */
  raw?: string | Buffer;
  contentType?: string | null;
  headers?: Record<string, string>;
}

export interface Harness {
  db: TestDatabase;
  service: RunningService;
  url: string;
  store: ServiceStore;
  /** Every log line, raw. */
  logs: string[];
  /** Added to Date.now() by the service clock. */
  clock: { offsetMs: number };
  request(method: string, path: string, o?: RequestOptions): Promise<Reply>;
  /** An application of organization `org` (created if needed). */
  createApp(org: string): Promise<CreatedApplication>;
  /** An access token for the application. */
  token(app: CreatedApplication): Promise<string>;
  /** Every row of every service table, as one comparable string. */
  snapshot(): Promise<string>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  config?: Partial<ServiceConfig>;
  /** Reuse an existing database (a second instance); it is not dropped on close. */
  database?: TestDatabase;
  registry?: Map<string, LoadedManifest>;
  hooks?: ServiceHooks;
  /** The service's upstream fetch (default: its own transport), e.g. to route an account's host to a simulator. */
  fetch?: FetchLike;
}

const TABLES = ['organizations', 'applications', 'application_organizations', 'access_tokens', 'connectors', 'oauth_states', 'oauth_secrets'] as const;

/** Start the service on port 0 against a fresh (or the given) database. */
export async function startHarness(dialect: DialectName, o: HarnessOptions = {}): Promise<Harness> {
  const db = o.database ?? (await freshDatabase(dialect));
  const logs: string[] = [];
  const clock = { offsetMs: 0 };
  const config: ServiceConfig = defaultServiceConfig({
    databaseUrl: db.url,
    encryptionKey: TEST_ENCRYPTION_KEY,
    port: 0,
    host: '127.0.0.1',
    logLevel: 'info',
    // Background syncs would share the simulators' rate limits with the requests under test;
    // test/service/sync-search.test.ts turns the scheduler on.
    syncScheduler: false,
    ...o.config,
  });
  const logger = createServiceLogger('info', { write: (line: string) => void logs.push(line) });
  const service = await startService({
    config,
    registry: o.registry ?? testRegistry(),
    logger,
    now: () => Date.now() + clock.offsetMs,
    retry: { baseDelayMs: 1, maxDelayMs: 50, maxAttempts: 2 },
    ...(o.hooks !== undefined ? { hooks: o.hooks } : {}),
    ...(o.fetch !== undefined ? { fetch: o.fetch } : {}),
    ...(db.schema !== undefined ? { schema: db.schema } : {}),
  });
  const store = new ServiceStore(service.database.db);
  const url = service.url;

  const request = async (method: string, path: string, r: RequestOptions = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...(r.headers ?? {}) };
    if (r.token !== undefined) headers['authorization'] = `Bearer ${r.token}`;
    let body: string | Buffer | undefined;
    if (r.raw !== undefined) body = r.raw;
    else if (r.body !== undefined) body = JSON.stringify(r.body);
    if (body !== undefined && r.contentType !== null) headers['content-type'] = r.contentType ?? 'application/json';
    const res = await fetch(path.startsWith('http') ? path : url + path, { method, headers, redirect: 'manual', ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, text, body: parsed };
  };

  return {
    db,
    service,
    url,
    store,
    logs,
    clock,
    request,
    createApp: (org) => createApplication(store, { orgName: org }),
    token: async (app) => {
      const r = await request('POST', '/api/v1/account/applications/token', { body: { client_id: app.client_id, client_secret: app.client_secret } });
      if (r.status !== 200) throw new Error(`token: ${r.status} ${r.text}`);
      return r.body.access_token as string;
    },
    snapshot: async () => {
      const out: Record<string, unknown[]> = {};
      for (const t of TABLES) out[t] = await service.database.db.selectFrom(t).selectAll().execute();
      // Row order is not part of what we compare.
      return JSON.stringify(Object.fromEntries(Object.entries(out).map(([k, rows]) => [k, rows.map((r) => JSON.stringify(r)).sort()])));
    },
    close: async () => {
      await service.close();
      if (o.database === undefined) await db.drop();
    },
  };
}

/** What startHosted sets up besides the harness's own options. */
export interface HostedOptions extends HarnessOptions {
  /** The organization of the application (default `org-test`). */
  org?: string;
  /** Connector type → the base URL its upstream (a simulator, a fake) listens on. */
  upstreams?: Record<string, string>;
  /** Keep the service's upstream throttle (default off: the simulators' limits are the tests' own business). */
  upstreamThrottle?: boolean;
}

/** A running service (the harness) with an application and its access token. */
export interface Hosted {
  h: Harness;
  app: CreatedApplication;
  token: string;
  /** POST /api/v1/connectors with the application's token; the new connector's id (fails on anything but 201). */
  addConnector(body: Record<string, unknown>, query?: string): Promise<string>;
}

/** The service on a free port, each upstream routed to its URL, with an application and its token. */
export async function startHosted(dialect: DialectName, o: HostedOptions = {}): Promise<Hosted> {
  const { org, upstreams, upstreamThrottle, ...harness } = o;
  const connectorTypes: ServiceConfig['connectorTypes'] = { ...(harness.config?.connectorTypes ?? {}) };
  for (const [type, baseUrl] of Object.entries(upstreams ?? {})) connectorTypes[type] = { ...(connectorTypes[type] ?? {}), baseUrl };
  const h = await startHarness(dialect, { ...harness, config: { upstreamThrottle: upstreamThrottle ?? false, ...harness.config, connectorTypes } });
  try {
    const app = await h.createApp(org ?? 'org-test');
    const token = await h.token(app);
    const addConnector = async (body: Record<string, unknown>, query = ''): Promise<string> => {
      const r = await h.request('POST', `/api/v1/connectors${query}`, { token, body });
      if (r.status !== 201) throw new Error(`creating a connector: ${r.status} ${r.text}`);
      return r.body.id as string;
    };
    return { h, app, token, addConnector };
  } catch (e) {
    await h.close();
    throw e;
  }
}
