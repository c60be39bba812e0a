/**
 * Test harness for the hosted service: a real server on port 0 over SQLite (a temp file) or
 * PostgreSQL (a fresh schema per harness, dropped afterwards), log lines captured, a movable
 * clock, JSON requests over real HTTP, a snapshot of every stored row, and validation of
 * responses against the service's own OpenAPI document.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { connectorRegistry, loadManifestFile, type LoadedManifest } from '../../src/manifest/index.ts';
import { buildOpenApiDocument, createApplication, createServiceLogger, defaultServiceConfig, startService, type CreatedApplication, type RunningService, type ServiceConfig, type ServiceHooks } from '../../src/service/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { generateKeySpec, ServiceStore } from '../../src/store/index.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

import { PG_URL, postgresAdmin, type DialectName } from '../helpers/dialects.ts';

export { describeEachDialect, PG_URL, PG_SKIP_REASON, type DialectName } from '../helpers/dialects.ts';

/** The key every harness of this process encrypts with (instances sharing a database must share it). */
export const TEST_ENCRYPTION_KEY = generateKeySpec();

const ACME_MANIFEST = fileURLToPath(new URL('./fixtures/acme/connector.yaml', import.meta.url));

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
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
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

// OpenAPI validation of real responses.

let openApiAjv: Ajv2020 | undefined;
const OPENAPI_ID = 'https://switchboard.test/openapi.json';

function pointerEscape(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Validate a response against the OpenAPI document: the operation `method pathTemplate` must
 * declare the status, and the body must match its schema (problem details for errors).
 * Returns the validation errors ([] when valid).
 */
export function openApiErrors(method: string, pathTemplate: string, reply: Reply): string[] {
  const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>> };
  if (openApiAjv === undefined) {
    openApiAjv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(openApiAjv);
    openApiAjv.addSchema({ ...doc, $id: OPENAPI_ID });
  }
  const op = doc.paths[pathTemplate]?.[method.toLowerCase()];
  if (op === undefined) return [`no operation ${method} ${pathTemplate}`];
  const response = op.responses[String(reply.status)];
  if (response === undefined) return [`${method} ${pathTemplate} does not declare status ${reply.status}`];
  if (response.content === undefined) return reply.text === '' ? [] : [`status ${reply.status} declares no body but got ${reply.text.slice(0, 100)}`];
  const contentType = (reply.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
  if (response.content[contentType] === undefined) return [`status ${reply.status} does not declare content type ${contentType}`];
  const pointer = `#/paths/${pointerEscape(pathTemplate)}/${method.toLowerCase()}/responses/${reply.status}/content/${pointerEscape(contentType)}/schema`;
  const validate = openApiAjv.getSchema(`${OPENAPI_ID}${pointer}`);
  if (validate === undefined) return [`cannot resolve ${pointer}`];
  if (validate(reply.body)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
}
