/**
 * The HTTP layer in process (app.inject): body limits, content types, JSON parsing, problem
 * shape, the OpenAPI document against the registered routes, configuration from the
 * environment, and the request rate limiter.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, buildOpenApiDocument, createApplication, createServiceLogger, defaultServiceConfig, loadServiceConfig } from '../../src/service/index.ts';
import { RequestRateLimiter } from '../../src/service/limits/request-rate-limiter.ts';
import { HOSTED_MIGRATIONS } from '../../src/service/index.ts';
import { migrate, openDatabase, parseKeyRing, generateKeySpec, ServiceStore, type Database, type ServiceTables } from '../../src/store/index.ts';
import { ERROR_CODES } from '../../src/errors/index.ts';

describe('HTTP layer', () => {
  let database: Database<ServiceTables>;
  let app: FastifyInstance;
  let routes: string[];
  let token: string;

  beforeAll(async () => {
    database = openDatabase<ServiceTables>(':memory:');
    await migrate(database as Database, [...HOSTED_MIGRATIONS]);
    const built = await buildApp({
      database,
      keyRing: parseKeyRing(generateKeySpec()),
      config: defaultServiceConfig({ bodyLimitBytes: 1024 }),
      logger: createServiceLogger('silent'),
    });
    app = built.app;
    routes = built.routes;
    await app.ready();
    const created = await createApplication(new ServiceStore(database.db), { orgName: 'http' });
    const r = await app.inject({
      method: 'POST',
      url: '/api/v1/account/applications/token',
      payload: { client_id: created.client_id, client_secret: created.client_secret },
    });
    token = r.json().access_token;
  });
  afterAll(async () => {
    await app.close();
    await database.close();
  });

  const post = (payload: string, contentType: string | undefined) =>
    // check=false: no upstream here; the credential check is tested in connector-health.test.ts.
    app.inject({
      method: 'POST',
      url: '/api/v1/integrations/connectors?check=false',
      headers: { authorization: `Bearer ${token}`, ...(contentType !== undefined ? { 'content-type': contentType } : {}) },
      payload,
    });

  it.each([
    ['a body over the configured limit', 'x'.repeat(2000), 'application/json', 413, 'payload_too_large'],
    [
      'JSON with a charset',
      JSON.stringify({ customer_name: 'c', connector_type: 'granola', name: 'n', credentials: { api_key: 'k' } }),
      'application/json; charset=utf-8',
      201,
      undefined,
    ],
    ['prototype poisoning', '{"__proto__": {"admin": true}}', 'application/json', 400, 'malformed_json'],
    ['truncated JSON', '{"a": ', 'application/json', 400, 'malformed_json'],
    ['no content type', '{}', undefined, 415, 'unsupported_media_type'],
    ['XML', '<a/>', 'application/xml', 415, 'unsupported_media_type'],
  ])('answers %s', async (_n, payload, ct, status, code) => {
    const r = await post(payload, ct);
    expect(r.statusCode, r.body).toBe(status);
    if (code !== undefined) {
      expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(r.json()).toMatchObject({ code, status, type: `urn:switchboard:problem:${code}`, instance: '/api/v1/integrations/connectors' });
    }
  });

  it('documents every registered route in the OpenAPI document, and nothing else', () => {
    const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    expect([...routes].sort()).toEqual(documented.sort());
  });

  it('lists every registry error code in the OpenAPI problem schema and table', () => {
    const doc = buildOpenApiDocument() as { components: { schemas: { Problem: { properties: { code: { enum: string[] } } } } }; info: { description: string } };
    expect(doc.components.schemas.Problem.properties.code.enum).toEqual(Object.keys(ERROR_CODES));
    for (const [code, d] of Object.entries(ERROR_CODES)) expect(doc.info.description).toContain(`| \`${code}\` | ${d.status} |`);
  });
});

describe('configuration from the environment', () => {
  it('reads every variable, per connector type too', () => {
    const c = loadServiceConfig(
      {
        SWITCHBOARD_DATABASE_URL: 'postgres://db/x',
        SWITCHBOARD_PUBLIC_URL: 'https://sb.example.com/',
        PORT: '8080',
        HOST: '0.0.0.0',
        SWITCHBOARD_BODY_LIMIT_BYTES: '2048',
        SWITCHBOARD_TOKEN_TTL_SECONDS: '60',
        SWITCHBOARD_RATE_LIMIT_PER_MINUTE: '0',
        SWITCHBOARD_UPSTREAM_THROTTLE: 'false',
        SWITCHBOARD_INTERCOM_BASE_URL: 'https://api.eu.intercom.io',
        SWITCHBOARD_MONDAY_OAUTH_CLIENT_ID: 'cid',
        SWITCHBOARD_MONDAY_OAUTH_CLIENT_SECRET: 'csec',
        SWITCHBOARD_MONDAY_OAUTH_TOKEN_URL: 'http://127.0.0.1:9/oauth2/token',
      },
      ['intercom', 'monday', 'granola'],
    );
    expect(c).toMatchObject({
      databaseUrl: 'postgres://db/x',
      publicUrl: 'https://sb.example.com',
      port: 8080,
      host: '0.0.0.0',
      bodyLimitBytes: 2048,
      tokenTtlSeconds: 60,
      rateLimitPerMinute: 0,
      upstreamThrottle: false,
      connectorTypes: {
        intercom: { baseUrl: 'https://api.eu.intercom.io' },
        monday: { oauth: { clientId: 'cid', clientSecret: 'csec', tokenUrl: 'http://127.0.0.1:9/oauth2/token' } },
        granola: {},
      },
    });
  });

  it.each([
    [{ PORT: 'eighty' }, /PORT must be an integer/],
    [{ SWITCHBOARD_PUBLIC_URL: 'ftp://x' }, /SWITCHBOARD_PUBLIC_URL must be an http\(s\) URL/],
    [{ SWITCHBOARD_UPSTREAM_THROTTLE: 'maybe' }, /must be true or false/],
    [{ SWITCHBOARD_MONDAY_OAUTH_CLIENT_ID: 'only-id' }, /must be set together/],
  ])('refuses %o', (env, message) => {
    expect(() => loadServiceConfig(env, ['monday'])).toThrow(message);
  });
});

describe('request rate limiter', () => {
  it('allows a burst of perMinute, refills continuously, and survives a clock stepping back', () => {
    let now = 1_000_000;
    const l = new RequestRateLimiter(60, () => now);
    for (let i = 0; i < 60; i++) expect(l.take('a').allowed).toBe(true);
    const refused = l.take('a');
    expect(refused).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    expect(l.take('b').allowed).toBe(true);
    now += 1000;
    expect(l.take('a').allowed).toBe(true);
    now -= 600_000;
    expect(l.take('a').allowed).toBe(false); // no refill, but not drained into a long wait either
    expect(l.take('a').retryAfterSeconds).toBe(1);
  });
});

describe('request logs', () => {
  it('carry the request id on every line of a request, nothing on lines of no request', async () => {
    const lines: string[] = [];
    const database = openDatabase<ServiceTables>(':memory:');
    await migrate(database as Database, [...HOSTED_MIGRATIONS]);
    const { app } = await buildApp({
      database,
      keyRing: parseKeyRing(generateKeySpec()),
      config: defaultServiceConfig(),
      logger: createServiceLogger('info', { write: (l: string) => void lines.push(l) }),
    });
    try {
      await app.ready();
      app.log.info('not a request');
      for (const url of ['/api/v1/integrations/connectors', '/nowhere'])
        expect((await app.inject({ method: 'GET', url })).statusCode).toBeGreaterThanOrEqual(400);
      const parsed = lines.map((l) => JSON.parse(l) as { reqId?: string; msg: string });
      expect(parsed.find((l) => l.msg === 'not a request')?.reqId).toBeUndefined();
      const ids = parsed.filter((l) => l.msg === 'incoming request').map((l) => l.reqId);
      expect(ids).toHaveLength(2);
      expect(new Set(ids).size).toBe(2);
      for (const id of ids) {
        expect(id).toEqual(expect.any(String));
        expect(parsed.filter((l) => l.reqId === id).map((l) => l.msg)).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
      }
    } finally {
      await app.close();
      await database.close();
    }
  });
});
