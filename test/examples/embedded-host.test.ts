/**
 * examples/embedded-host: the Fastify app that embeds the interpreter and the store, tested
 * over real HTTP against the Granola and Intercom simulators, on SQLite and (when configured)
 * PostgreSQL: one route per connector action, credentials per user stored encrypted, errors
 * mapped to HTTP statuses, and sync + search over the user's records.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildHost } from '../../examples/embedded-host/server.ts';
import { connectorRegistry, SYNC_ONLY_ACTIONS } from '../../src/index.ts';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { startIntercomSimulator, type IntercomSimulator } from '../../connectors/intercom/simulator/index.ts';
import { startAcmeProvider, type AcmeProvider } from '../service/fixtures/acme-provider.ts';
import { describeEachDialect, freshDatabase, TEST_ENCRYPTION_KEY, testRegistry, type TestDatabase } from '../service/helpers.ts';

type Rec = Record<string, unknown>;
// Parsed JSON bodies; tests read them freely.
type Body = any;

const NOTES = 12;

describeEachDialect('the embedded host example on %s', (dialect) => {
  let granola: GranolaSimulator;
  let intercom: IntercomSimulator;
  let acme: AcmeProvider;
  let database: TestDatabase;
  let app: FastifyInstance;
  let url: string;

  const call = async (method: string, path: string, body?: unknown, raw?: string): Promise<{ status: number; headers: Headers; body: Body; text: string }> => {
    const payload = raw ?? (body !== undefined ? JSON.stringify(body) : undefined);
    const res = await fetch(url + path, { method, ...(payload !== undefined ? { body: payload, headers: { 'content-type': 'application/json' } } : {}) });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
  const problem = (r: { status: number; body: Body; text: string }, status: number, code: string) =>
    expect({ status: r.status, code: r.body?.error?.code }, r.text.slice(0, 300)).toEqual({ status, code });

  beforeAll(async () => {
    granola = await startGranolaSimulator({ size: NOTES, rateLimit: false });
    intercom = await startIntercomSimulator({ size: 20, rateLimit: false, seed: 9 });
    acme = await startAcmeProvider();
    database = await freshDatabase(dialect);
    app = await host();
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app?.close();
    await database?.drop();
    await granola?.close();
    await intercom?.close();
    await acme?.close();
  });

  /** A host on the test database (a second one stands for the app restarted). */
  const host = (): Promise<FastifyInstance> =>
    buildHost({
      databaseUrl: database.url,
      ...(database.schema !== undefined ? { schema: database.schema } : {}),
      encryptionKey: TEST_ENCRYPTION_KEY,
      // The packaged connectors plus `acme`, a test provider whose OAuth tokens expire and refresh.
      registry: testRegistry(),
      connectorTypes: {
        granola: { baseUrl: granola.url },
        intercom: { baseUrl: intercom.url },
        acme: { baseUrl: acme.url, oauth: { clientId: acme.clientId, clientSecret: acme.clientSecret, tokenUrl: `${acme.url}/oauth/token` } },
      },
      upstreamThrottle: false,
      retry: { baseDelayMs: 1, maxDelayMs: 20, maxAttempts: 2 },
    });

  it('has one route per connector action of every packaged connector, and lists them', async () => {
    let actions = 0;
    for (const m of testRegistry().values()) {
      for (const [entity, e] of m.entities) {
        for (const action of [...e.actions.keys()].filter((a) => !SYNC_ONLY_ACTIONS.has(a))) {
          actions++;
          expect(app.hasRoute({ method: 'POST', url: `/users/:userId/${m.type}/${entity}/${action}` }), `${m.type}.${entity}.${action}`).toBe(true);
        }
        for (const action of SYNC_ONLY_ACTIONS) expect(app.hasRoute({ method: 'POST', url: `/users/:userId/${m.type}/${entity}/${action}` })).toBe(false);
        expect(app.hasRoute({ method: 'POST', url: `/users/:userId/${m.type}/${entity}/search` })).toBe(e.def.search !== undefined);
      }
    }
    expect(actions).toBeGreaterThan(30);
    const catalog = await call('GET', '/connectors');
    expect(catalog.status).toBe(200);
    expect(catalog.body.data.map((c: Rec) => c.type).sort()).toEqual([...connectorRegistry().keys(), 'acme'].sort());
    expect(catalog.body.data.find((c: Rec) => c.type === 'granola').entities).toEqual({ notes: ['list', 'get', 'search'] });
  });

  it('connects a user with credentials, stored encrypted; refuses credentials of no variant', async () => {
    const bad = await call('PUT', '/users/alice/connections/granola', { credentials: { apikey: 'x' } });
    problem(bad, 400, 'invalid_credentials');
    expect(bad.body.error.errors.length).toBeGreaterThan(0);
    problem(await call('PUT', '/users/alice/connections/nope', { credentials: {} }), 400, 'unknown_connector_type');

    const ok = await call('PUT', '/users/alice/connections/granola', { credentials: { api_key: granola.apiKey } });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body).toMatchObject({ user_id: 'alice', connector_type: 'granola', auth_variant: 'api_key' });
    const bob = await call('PUT', '/users/bob/connections/intercom', { credentials: { access_token: intercom.accessToken } });
    expect(bob.status, bob.text).toBe(201);
    expect((await call('GET', '/users/alice/connections')).body.data).toEqual([
      expect.objectContaining({ connector_type: 'granola', auth_variant: 'api_key' }),
    ]);

    // At rest: sealed, never the key itself.
    const { openDatabase } = await import('../../src/store/index.ts');
    const peek = openDatabase<{ host_connections: { credentials_ciphertext: string; user_id: string } }>(
      database.url,
      database.schema !== undefined ? { schema: database.schema } : {},
    );
    try {
      const rows = await peek.db.selectFrom('host_connections').selectAll().execute();
      expect(rows.map((r) => r.user_id).sort()).toEqual(['alice', 'bob']);
      expect(JSON.stringify(rows)).not.toContain(granola.apiKey);
      expect(JSON.stringify(rows)).not.toContain(intercom.accessToken);
    } finally {
      await peek.close();
    }
  });

  it("runs each user's actions with that user's credentials", async () => {
    const page = await call('POST', '/users/alice/granola/notes/list', { page_size: 5 });
    expect(page.status, page.text).toBe(200);
    expect(page.body.data.map((n: Rec) => n.id)).toEqual(granola.ids().slice(0, 5));
    expect(page.body.meta).toMatchObject({ has_more: true, cursor: expect.any(String) });
    const next = await call('POST', '/users/alice/granola/notes/list', { page_size: 5, cursor: page.body.meta.cursor });
    expect(next.body.data.map((n: Rec) => n.id)).toEqual(granola.ids().slice(5, 10));
    const id = granola.ids()[2] as string;
    const note = await call('POST', '/users/alice/granola/notes/get', { note_id: id, include: 'transcript' });
    expect(note.status, note.text).toBe(200);
    expect(note.body.data).toMatchObject({ id, title: granola.note(id)?.title });
    expect(granola.requests.at(-1)?.headers.authorization).toBe(`Bearer ${granola.apiKey}`);

    // A body-less call runs the action with no params.
    const teams = await call('POST', '/users/bob/intercom/teams/list');
    expect(teams.status, teams.text).toBe(200);
    expect(teams.body.data.map((t: Rec) => t.id)).toEqual(intercom.records('teams').map((t) => t.id));
    const created = await call('POST', '/users/bob/intercom/contacts/create', { role: 'lead', email: 'lin@example.com', name: 'Lin' });
    expect(created.status, created.text).toBe(200);
    expect(created.body.data).toMatchObject({ role: 'lead', email: 'lin@example.com' });
    const updated = await call('POST', '/users/bob/intercom/contacts/update', { id: created.body.data.id, name: 'Lin Yu' });
    expect(updated.body.data).toMatchObject({ id: created.body.data.id, name: 'Lin Yu' });
    expect((await call('POST', '/users/bob/intercom/contacts/get', { id: created.body.data.id })).body.data).toEqual(updated.body.data);
    expect(intercom.requests.at(-1)?.headers.authorization).toBe(`Bearer ${intercom.accessToken}`);

    // Users only reach their own connections.
    const notConnected = await call('POST', '/users/alice/intercom/teams/list');
    problem(notConnected, 404, 'connector_not_found');
    expect(notConnected.body.error.message).toContain('PUT /users/alice/connections/intercom');
    problem(await call('POST', '/users/carol/granola/notes/list', {}), 404, 'connector_not_found');
  });

  it('maps SwitchboardError to HTTP statuses without passing on upstream bodies', async () => {
    const invalid = await call('POST', '/users/alice/granola/notes/list', { page_size: 'ten' });
    problem(invalid, 400, 'invalid_params');
    expect(invalid.body.error.errors).toEqual([expect.objectContaining({ path: expect.stringContaining('page_size') })]);

    const missing = await call('POST', '/users/bob/intercom/contacts/get', { id: '5f0000000000000000000000' });
    problem(missing, 404, 'upstream_not_found');
    expect(missing.body.error.upstream_status).toBe(404);
    expect(missing.text).not.toContain('error.list');

    await call('PUT', '/users/dave/connections/granola', { credentials: { api_key: 'grn_revoked' } });
    const rejected = await call('POST', '/users/dave/granola/notes/list', {});
    problem(rejected, 424, 'upstream_credentials_rejected');
    expect(rejected.body.error.upstream_status).toBe(401);

    granola.inject({ path: '/v1/notes', status: 429, json: { message: 'Too many requests' }, headers: { 'Retry-After': '0' }, times: 2 });
    const limited = await call('POST', '/users/alice/granola/notes/list', {});
    problem(limited, 429, 'upstream_rate_limited');
    expect(limited.headers.get('retry-after')).toBe('1');

    granola.inject({ path: '/v1/notes', status: 503, text: 'down', times: 2 });
    problem(await call('POST', '/users/alice/granola/notes/list', {}), 503, 'upstream_unavailable');

    problem(await call('POST', '/users/alice/granola/notes/create', {}), 404, 'route_not_found');
    problem(await call('POST', '/users/alice/granola/notes/list', undefined, '{"page_size":'), 400, 'invalid_request');
  });

  it("syncs a user's records into the store and searches them", async () => {
    const before = await call('POST', '/users/alice/granola/notes/search', { query: {} });
    expect(before.status, before.text).toBe(200);
    expect(before.body).toMatchObject({ data: [], meta: { has_more: false, synced_at: null } });

    const synced = await call('POST', '/users/alice/granola/sync', {});
    expect(synced.status, synced.text).toBe(200);
    expect(synced.body).toEqual({ full: true, entities: { notes: { records: NOTES, added: NOTES, updated: 0, deleted: 0 } } });

    const target = granola.note(granola.ids()[4] as string)!;
    const one = await call('POST', '/users/alice/granola/notes/search', { query: { filter: { eq: { id: target.id } } }, fields: ['id', 'title'] });
    expect(one.body.data).toEqual([{ id: target.id, title: target.title }]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: Body } = await call('POST', '/users/alice/granola/notes/search', {
        query: { sort: [{ created_at: 'desc' }] },
        fields: ['id'],
        limit: 5,
        ...(cursor !== null ? { cursor } : {}),
      });
      seen.push(...page.body.data.map((n: Rec) => n.id as string));
      cursor = page.body.meta.cursor;
    } while (cursor !== null);
    expect(seen).toEqual(granola.ids());
    problem(await call('POST', '/users/alice/granola/notes/search', { query: { filter: { eq: { colour: 'red' } } } }), 400, 'invalid_search_query');
    problem(await call('POST', '/users/alice/granola/notes/search', { query: {}, cursor: 'forged.cursor' }), 400, 'invalid_cursor');

    // The next run is incremental and picks up an edit.
    granola.touch(target.id, { title: 'Roadmap review (moved)' });
    const again = await call('POST', '/users/alice/granola/sync', {});
    expect(again.body.full).toBe(false);
    const moved = await call('POST', '/users/alice/granola/notes/search', { query: { filter: { keyword: { title: 'moved' } } }, fields: ['id'] });
    expect(moved.body.data).toEqual([{ id: target.id }]);

    // Another user's connector type, another user's records.
    const bobSync = await call('POST', '/users/bob/intercom/sync', {});
    expect(bobSync.status, bobSync.text).toBe(200);
    expect(bobSync.body.entities.contacts.records).toBe(intercom.resources.get('contacts')!.records.size);
    const leads = await call('POST', '/users/bob/intercom/contacts/search', {
      query: { filter: { eq: { email: 'lin@example.com' } } },
      fields: ['id', 'name'],
    });
    expect(leads.body.data).toEqual([{ id: expect.any(String), name: 'Lin Yu' }]);
    problem(await call('POST', '/users/alice/intercom/contacts/search', { query: {} }), 404, 'connector_not_found');
  });

  it('replaces credentials, and disconnecting removes the connection and its synced records', async () => {
    const replaced = await call('PUT', '/users/dave/connections/granola', { credentials: { api_key: granola.apiKey } });
    expect(replaced.status, replaced.text).toBe(200);
    expect((await call('POST', '/users/dave/granola/notes/list', { page_size: 1 })).status).toBe(200);

    const gone = await call('DELETE', '/users/alice/connections/granola');
    expect(gone.status, gone.text).toBe(204);
    problem(await call('POST', '/users/alice/granola/notes/list', {}), 404, 'connector_not_found');
    problem(await call('POST', '/users/alice/granola/notes/search', { query: {} }), 404, 'connector_not_found');
    problem(await call('DELETE', '/users/alice/connections/granola'), 404, 'connector_not_found');
    expect((await call('PUT', '/users/alice/connections/granola', { credentials: { api_key: granola.apiKey } })).status).toBe(201);
    expect((await call('POST', '/users/alice/granola/notes/search', { query: {} })).body.data).toEqual([]);
  });

  it('stores refreshed OAuth tokens, so the next process uses them', async () => {
    // Tokens from the provider's authorization-code flow (as the app's own OAuth callback would get them).
    const consent = await fetch(`${acme.url}/oauth/authorize?client_id=${acme.clientId}&redirect_uri=${encodeURIComponent('https://app.example/cb')}&state=s`, {
      redirect: 'manual',
    });
    const code = new URL(consent.headers.get('location') as string).searchParams.get('code') as string;
    const tokenRes = await fetch(`${acme.url}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${acme.clientId}:${acme.clientSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: 'https://app.example/cb' }).toString(),
    });
    const tokens = (await tokenRes.json()) as { access_token: string; refresh_token: string; expires_in: number };
    const connected = await call('PUT', '/users/erin/connections/acme', {
      credentials: {
        access_token: tokens.access_token,
        refresh_token: tokens.refresh_token,
        expires_at: Math.floor(Date.now() / 1000) + tokens.expires_in,
        client_id: acme.clientId,
        client_secret: acme.clientSecret,
      },
    });
    expect(connected.body.auth_variant).toBe('oauth');
    expect((await call('POST', '/users/erin/acme/widgets/get', { id: 'w1' })).body).toEqual({ data: { id: 'w1', name: 'Widget w1' } });

    // The provider expires the token: 401, refresh (the old refresh token is spent), retry.
    acme.expireAccessTokens();
    const after = await call('POST', '/users/erin/acme/widgets/get', { id: 'w2' });
    expect(after.status, after.text).toBe(200);
    expect(acme.grants.filter((g) => g === 'refresh_token')).toHaveLength(1);

    // The app restarted: a new host on the same database reads the refreshed tokens, no new refresh.
    const restarted = await host();
    try {
      const r = await restarted.inject({ method: 'POST', url: '/users/erin/acme/widgets/list', payload: {} });
      expect(r.statusCode, r.body).toBe(200);
      expect(r.json()).toEqual({
        data: [
          { id: 'w1', name: 'Sprocket' },
          { id: 'w2', name: 'Gear' },
        ],
        meta: {},
      });
      expect(acme.grants.filter((g) => g === 'refresh_token')).toHaveLength(1);
    } finally {
      await restarted.close();
    }
  });
});
