/**
 * The hosted service end to end over real HTTP, on SQLite and (when configured) PostgreSQL:
 * accounts and tokens, organizations, connectors CRUD, every bad input of the issue with its
 * status and code (and nothing stored changing), and execute of every entity × action of the
 * three connectors against the sandbox simulators. Every response is checked against the
 * service's own OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/simulator/sandbox.ts';
import { grantOrganization, defaultServiceConfig, type CreatedApplication } from '../../src/service/index.ts';
import { withSandbox } from '../../src/service/data/sandbox-wiring.ts';
import { describeEachDialect, openApiErrors, startHarness, testRegistry, type Harness, type Reply } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const ONE = '/api/v1/integrations/connectors/{connector_id}';
const EXEC = '/api/v1/integrations/connectors/{connector_id}/execute';
const TOKEN = '/api/v1/account/applications/token';

/** The response matches the OpenAPI document for that operation and status. */
function conforms(method: string, template: string, r: Reply): void {
  expect(openApiErrors(method, template, r), `${method} ${template} ${r.status} ${r.text.slice(0, 300)}`).toEqual([]);
}

/** A problem response with this status and code, served as application/problem+json. */
function isProblem(r: Reply, status: number, code: string): void {
  expect({ status: r.status, code: r.body?.code }, r.text.slice(0, 500)).toEqual({ status, code });
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.body).toMatchObject({ type: `urn:switchboard:problem:${code}`, status, title: expect.any(String), detail: expect.any(String) });
}

describeEachDialect('hosted service on %s', (dialect) => {
  let sandbox: Sandbox;
  let h: Harness;
  let app: CreatedApplication;
  let token: string;
  let other: CreatedApplication;
  let otherToken: string;
  let granolaId: string;

  const call = (method: string, path: string, body?: unknown, t: string = token, headers?: Record<string, string>): Promise<Reply> =>
    h.request(method, path, { token: t, ...(body !== undefined ? { body } : {}), ...(headers !== undefined ? { headers } : {}) });
  const create = (body: Record<string, unknown>, t: string = token): Promise<Reply> => call('POST', CONNECTORS, body, t);
  const execute = (id: string, entity: string, action: string, params?: Record<string, unknown>): Promise<Reply> =>
    call('POST', `${CONNECTORS}/${id}/execute`, { entity, action, ...(params !== undefined ? { params } : {}) });

  beforeAll(async () => {
    sandbox = await startSandbox();
    const registry = testRegistry();
    h = await startHarness(dialect, { config: { connectorTypes: withSandbox(defaultServiceConfig(), sandbox, registry).connectorTypes }, registry });
    app = await h.createApp('org-a');
    token = await h.token(app);
    other = await h.createApp('org-b');
    otherToken = await h.token(other);
    const r = await create({
      customer_name: 'cust-1',
      connector_type: 'granola',
      name: 'Granola of cust-1',
      credentials: sandbox.connectors['granola']?.credentials,
    });
    expect(r.status, r.text).toBe(201);
    granolaId = r.body.id;
  });
  afterAll(async () => {
    await h?.close();
    await sandbox?.close();
  });

  describe('accounts and tokens', () => {
    it('exchanges client credentials for an expiring bearer token', async () => {
      const r = await h.request('POST', TOKEN, { body: { client_id: app.client_id, client_secret: app.client_secret } });
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ access_token: expect.stringMatching(/^sbt_/), token_type: 'Bearer', expires_in: 3600 });
      expect(r.headers.get('cache-control')).toBe('no-store');
      conforms('POST', TOKEN, r);
    });

    it.each([
      ['a wrong secret', () => ({ client_id: app.client_id, client_secret: `${app.client_secret}x` })],
      ['an unknown client id', () => ({ client_id: 'sbc_nobody', client_secret: app.client_secret })],
    ])('refuses %s with 401 invalid_client and stores nothing', async (_name, body) => {
      const before = await h.snapshot();
      const r = await h.request('POST', TOKEN, { body: body() });
      isProblem(r, 401, 'invalid_client');
      conforms('POST', TOKEN, r);
      expect(await h.snapshot()).toBe(before);
    });

    it.each([
      ['no token', undefined, 'Bearer realm="switchboard"'],
      ['a malformed Authorization header', 'Basic abc', 'error="invalid_token"'],
      ['an unknown token', 'Bearer sbt_forged', 'error="invalid_token"'],
    ])('answers %s with 401 unauthorized and a WWW-Authenticate challenge', async (_name, authorization, challenge) => {
      const before = await h.snapshot();
      const r = await h.request('GET', CONNECTORS, authorization !== undefined ? { headers: { authorization } } : {});
      isProblem(r, 401, 'unauthorized');
      expect(r.headers.get('www-authenticate')).toContain(challenge);
      conforms('GET', CONNECTORS, r);
      expect(await h.snapshot()).toBe(before);
    });

    it('refuses an expired token', async () => {
      const t = await h.token(app);
      expect((await call('GET', CONNECTORS, undefined, t)).status).toBe(200);
      h.clock.offsetMs = 3601_000;
      try {
        const r = await call('GET', CONNECTORS, undefined, t);
        isProblem(r, 401, 'unauthorized');
        expect(r.headers.get('www-authenticate')).toContain('error_description="expired"');
      } finally {
        h.clock.offsetMs = 0;
      }
    });

    it('checks the body before the token only for authenticated callers (no token → 401 even for malformed JSON)', async () => {
      const r = await h.request('POST', CONNECTORS, { raw: '{nope' });
      isProblem(r, 401, 'unauthorized');
    });
  });

  describe('organizations', () => {
    let multi: CreatedApplication;
    let multiToken: string;
    beforeAll(async () => {
      multi = await h.createApp('org-c');
      await grantOrganization(h.store, { clientId: multi.client_id, orgName: 'org-a' });
      multiToken = await h.token(multi);
    });

    it('requires X-Organization-Id when the application has several organizations', async () => {
      const r = await call('GET', CONNECTORS, undefined, multiToken);
      isProblem(r, 400, 'organization_required');
      expect(r.body.errors).toEqual([{ path: 'header:x-organization-id', message: 'is required' }]);
      expect(r.body.details.organization_ids).toHaveLength(2);
      conforms('GET', CONNECTORS, r);
    });

    it('acts for the organization named in X-Organization-Id', async () => {
      const r = await call('GET', `${CONNECTORS}/${granolaId}`, undefined, multiToken, { 'x-organization-id': app.organization_id });
      expect(r.status).toBe(200);
      expect(r.body.id).toBe(granolaId);
      const inC = await call('GET', `${CONNECTORS}/${granolaId}`, undefined, multiToken, { 'x-organization-id': multi.organization_id });
      isProblem(inC, 404, 'connector_not_found');
    });

    it('answers 403 for an organization the application cannot access', async () => {
      const r = await call('GET', CONNECTORS, undefined, token, { 'x-organization-id': other.organization_id });
      isProblem(r, 403, 'organization_forbidden');
      conforms('GET', CONNECTORS, r);
      const bogus = await call('GET', CONNECTORS, undefined, token, { 'x-organization-id': 'not-an-org' });
      isProblem(bogus, 403, 'organization_forbidden');
    });

    it("hides another organization's connector behind 404 on every verb", async () => {
      const before = await h.snapshot();
      isProblem(await call('GET', `${CONNECTORS}/${granolaId}`, undefined, otherToken), 404, 'connector_not_found');
      isProblem(await call('PATCH', `${CONNECTORS}/${granolaId}`, { name: 'stolen' }, otherToken), 404, 'connector_not_found');
      isProblem(await call('DELETE', `${CONNECTORS}/${granolaId}`, undefined, otherToken), 404, 'connector_not_found');
      const ex = await h.request('POST', `${CONNECTORS}/${granolaId}/execute`, { token: otherToken, body: { entity: 'notes', action: 'list' } });
      isProblem(ex, 404, 'connector_not_found');
      conforms('POST', EXEC, ex);
      expect(await h.snapshot()).toBe(before);
    });
  });

  describe('connectors', () => {
    it('creates with credentials (variant A) and never returns them', async () => {
      const r = await create({ customer_name: 'cust-2', connector_type: 'granola', name: 'G2', credentials: sandbox.connectors['granola']?.credentials });
      expect(r.status).toBe(201);
      expect(r.headers.get('location')).toBe(`${CONNECTORS}/${r.body.id}`);
      expect(r.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        organization_id: app.organization_id,
        customer_name: 'cust-2',
        connector_type: 'granola',
        name: 'G2',
        auth_variant: 'api_key',
        status: 'active',
        last_checked_at: expect.any(String),
        last_error: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      expect(r.text).not.toContain(sandbox.connectors['granola']?.credentials['api_key']);
      conforms('POST', CONNECTORS, r);
    });

    it('lists with filters and keyset pagination', async () => {
      // ?check=false: stored without asking the upstream (a key it would refuse).
      for (const n of ['L1', 'L2', 'L3'])
        expect(
          (await call('POST', `${CONNECTORS}?check=false`, { customer_name: 'cust-list', connector_type: 'granola', name: n, credentials: { api_key: 'k' } }))
            .status,
        ).toBe(201);
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const q: string = `?customer_name=cust-list&limit=2${cursor !== null ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const r = await call('GET', CONNECTORS + q);
        expect(r.status).toBe(200);
        conforms('GET', CONNECTORS, r);
        seen.push(...(r.body.data as { name: string }[]).map((c) => c.name));
        cursor = r.body.meta.cursor;
        expect(r.body.meta.has_more).toBe(cursor !== null);
        pages++;
      } while (cursor !== null);
      expect(seen).toEqual(['L1', 'L2', 'L3']);
      expect(pages).toBe(2);
      const byType = await call('GET', `${CONNECTORS}?connector_type=intercom&customer_name=cust-list`);
      expect(byType.body).toEqual({ data: [], meta: { cursor: null, has_more: false } });
      const other = await call('GET', CONNECTORS, undefined, otherToken);
      expect(other.body.data).toEqual([]);
    });

    it.each([
      ['limit out of range', '?limit=0', 'query:limit'],
      ['an unknown query parameter', '?colour=red', 'query:colour'],
      ['a forged cursor', '?cursor=bm9wZQ', 'query:cursor'],
    ])('refuses %s with 400 invalid_request', async (_n, q, path) => {
      const r = await call('GET', CONNECTORS + q);
      isProblem(r, 400, 'invalid_request');
      expect(r.body.errors.map((e: { path: string }) => e.path)).toContain(path);
      conforms('GET', CONNECTORS, r);
    });

    it('gets, renames, replaces credentials and deletes', async () => {
      const c = (
        await call('POST', `${CONNECTORS}?check=false`, {
          customer_name: 'cust-3',
          connector_type: 'granola',
          name: 'before',
          credentials: { api_key: 'wrong-key' },
        })
      ).body;
      expect(c).toMatchObject({ status: 'active', last_checked_at: null, last_error: null });
      const got = await call('GET', `${CONNECTORS}/${c.id}`);
      expect(got.body).toEqual(c);
      conforms('GET', ONE, got);
      // Wrong key: the upstream refuses (424), and the problem passes the upstream's status on.
      const refused = await execute(c.id, 'notes', 'list');
      isProblem(refused, 424, 'upstream_credentials_rejected');
      expect(refused.body.details.upstream_status).toBe(401);
      conforms('POST', EXEC, refused);
      const failed = await call('GET', `${CONNECTORS}/${c.id}`);
      expect(failed.body).toMatchObject({
        status: 'auth_failed',
        last_error: { code: 'upstream_credentials_rejected', message: expect.stringContaining('Invalid API key') },
      });
      const renamed = await call('PATCH', `${CONNECTORS}/${c.id}`, { name: 'after' });
      expect(renamed.status).toBe(200);
      expect(renamed.body.name).toBe('after');
      conforms('PATCH', ONE, renamed);
      const fixed = await call('PATCH', `${CONNECTORS}/${c.id}`, { credentials: sandbox.connectors['granola']?.credentials });
      expect(fixed.status).toBe(200);
      expect(fixed.body).toMatchObject({ status: 'active', last_error: null, last_checked_at: expect.any(String) });
      expect((await execute(c.id, 'notes', 'list', { page_size: 1 })).status).toBe(200);
      const del = await call('DELETE', `${CONNECTORS}/${c.id}`);
      expect(del.status).toBe(204);
      conforms('DELETE', ONE, del);
      isProblem(await call('GET', `${CONNECTORS}/${c.id}`), 404, 'connector_not_found');
      isProblem(await execute(c.id, 'notes', 'list'), 404, 'connector_not_found');
      expect(await h.store.getConnector(app.organization_id, c.id)).toBeUndefined();
    });

    it.each([
      ['empty patch', {}, 400, 'invalid_request'],
      ['credentials of no variant', { credentials: { token: 'x' } }, 400, 'invalid_credentials'],
      ['a non-string name', { name: 5 }, 400, 'invalid_request'],
    ])('refuses a patch with %s and changes nothing', async (_n, body, status, code) => {
      const before = await h.snapshot();
      const r = await call('PATCH', `${CONNECTORS}/${granolaId}`, body);
      isProblem(r, status, code);
      conforms('PATCH', ONE, r);
      expect(await h.snapshot()).toBe(before);
    });

    const bad: [string, () => RequestInitLike, number, string, string?][] = [
      [
        'an unknown connector type',
        () => ({ body: { customer_name: 'c', connector_type: 'no_such_connector', name: 'n', credentials: { api_key: 'k' } } }),
        400,
        'unknown_connector_type',
        '/connector_type',
      ],
      [
        'credentials of no variant',
        () => ({ body: { customer_name: 'c', connector_type: 'granola', name: 'n', credentials: { apikey: 'k' } } }),
        400,
        'invalid_credentials',
        '/credentials/apikey',
      ],
      [
        'credentials of the wrong type',
        () => ({ body: { customer_name: 'c', connector_type: 'granola', name: 'n', credentials: { api_key: 42 } } }),
        400,
        'invalid_credentials',
      ],
      [
        'both credentials and a secret id',
        () => ({ body: { customer_name: 'c', connector_type: 'granola', name: 'n', credentials: { api_key: 'k' }, server_side_oauth_secret_id: 'sbo_x' } }),
        400,
        'invalid_request',
        '/credentials',
      ],
      [
        'neither credentials nor a secret id',
        () => ({ body: { customer_name: 'c', connector_type: 'granola', name: 'n' } }),
        400,
        'invalid_request',
        '/server_side_oauth_secret_id',
      ],
      [
        'a missing customer_name',
        () => ({ body: { connector_type: 'granola', name: 'n', credentials: { api_key: 'k' } } }),
        400,
        'invalid_request',
        '/customer_name',
      ],
      [
        'an unknown field',
        () => ({ body: { customer_name: 'c', connector_type: 'granola', name: 'n', credentials: { api_key: 'k' }, region: 'eu' } }),
        400,
        'invalid_request',
        '/region',
      ],
      ['a body that is not an object', () => ({ body: ['x'] }), 400, 'invalid_request'],
      ['malformed JSON', () => ({ raw: '{"customer_name": "c",' }), 400, 'malformed_json'],
      ['an empty JSON body', () => ({ raw: '', contentType: 'application/json' }), 400, 'malformed_json'],
      ['a wrong content type', () => ({ raw: 'customer_name=c', contentType: 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type'],
      ['text/plain', () => ({ raw: '{}', contentType: 'text/plain' }), 415, 'unsupported_media_type'],
      [
        'a body over the limit',
        () => ({ body: { customer_name: 'c', connector_type: 'granola', name: 'x'.repeat(1024 * 1024 + 10), credentials: { api_key: 'k' } } }),
        413,
        'payload_too_large',
      ],
      [
        'an unknown or reused OAuth secret id',
        () => ({ body: { customer_name: 'c', connector_type: 'intercom', name: 'n', server_side_oauth_secret_id: 'sbo_never_issued' } }),
        400,
        'invalid_oauth_secret',
      ],
    ];
    type RequestInitLike = { body?: unknown; raw?: string; contentType?: string };

    it.each(bad)('refuses create with %s (%i %s) and stores nothing', async (_n, req, status, code, path) => {
      const before = await h.snapshot();
      const r = await h.request('POST', CONNECTORS, { token, ...req() });
      isProblem(r, status, code);
      if (path !== undefined) expect(r.body.errors?.map((e: { path: string }) => e.path)).toContain(path);
      conforms('POST', CONNECTORS, r);
      expect(await h.snapshot()).toBe(before);
    });

    it('calls the created and deleted hooks, and rolls a deletion back when its hook fails', async () => {
      const created: string[] = [];
      const deleted: string[] = [];
      let failDelete = true;
      const hooked = await startHarness(dialect, {
        hooks: {
          onConnectorCreated: (c) => void created.push(c.id),
          onConnectorDeleted: async (c, db) => {
            // The hook runs inside the deleting transaction: the row is already gone there.
            expect(await db.selectFrom('connectors').select('id').where('id', '=', c.id).executeTakeFirst()).toBeUndefined();
            if (failDelete) throw new Error('sync store unavailable');
            deleted.push(c.id);
          },
        },
      });
      try {
        const t = await hooked.token(await hooked.createApp('hooks'));
        const c = await hooked.request('POST', `${CONNECTORS}?check=false`, {
          token: t,
          body: { customer_name: 'c', connector_type: 'granola', name: 'n', credentials: { api_key: 'k' } },
        });
        expect(created).toEqual([c.body.id]);
        isProblem(await hooked.request('DELETE', `${CONNECTORS}/${c.body.id}`, { token: t }), 500, 'internal_error');
        expect((await hooked.request('GET', `${CONNECTORS}/${c.body.id}`, { token: t })).status).toBe(200);
        failDelete = false;
        expect((await hooked.request('DELETE', `${CONNECTORS}/${c.body.id}`, { token: t })).status).toBe(204);
        expect(deleted).toEqual([c.body.id]);
      } finally {
        await hooked.close();
      }
    });

    it('answers unknown routes with 404 route_not_found', async () => {
      const r = await call('GET', '/api/v1/integrations/nothing');
      isProblem(r, 404, 'route_not_found');
    });
  });

  describe('execute', () => {
    it.each([
      ['a non-UUID connector id', () => 'not-a-uuid', { entity: 'notes', action: 'list' }, 404, 'connector_not_found'],
      ['an unknown connector id', () => '00000000-0000-4000-8000-000000000000', { entity: 'notes', action: 'list' }, 404, 'connector_not_found'],
      ['an unknown entity', () => granolaId, { entity: 'meetings', action: 'list' }, 400, 'unknown_entity'],
      ['an unknown action', () => granolaId, { entity: 'notes', action: 'delete' }, 400, 'unknown_action'],
      ['an action the entity lacks', () => granolaId, { entity: 'notes', action: 'create', params: { title: 'x' } }, 400, 'unknown_action'],
      ['invalid params', () => granolaId, { entity: 'notes', action: 'list', params: { page_size: 500, colour: 'red' } }, 400, 'invalid_params'],
      ['a missing entity', () => granolaId, { action: 'list' }, 400, 'invalid_request'],
      ['params that are not an object', () => granolaId, { entity: 'notes', action: 'list', params: 'page_size=1' }, 400, 'invalid_request'],
    ])('refuses %s', async (_n, id, body, status, code) => {
      const before = await h.snapshot();
      const r = await h.request('POST', `${CONNECTORS}/${id()}/execute`, { token, body });
      isProblem(r, status, code);
      conforms('POST', EXEC, r);
      expect(await h.snapshot()).toBe(before);
    });

    it('locates invalid params under /params and lists the valid choices', async () => {
      const r = await execute(granolaId, 'notes', 'list', { page_size: 500, colour: 'red' });
      expect(r.body.errors).toEqual(
        expect.arrayContaining([
          { path: '/params/page_size', message: expect.stringContaining('30') },
          { path: '/params/colour', message: expect.stringContaining('valid params') },
        ]),
      );
      const e = await execute(granolaId, 'meetings', 'list');
      expect(e.body.details.valid).toEqual(['notes']);
    });

    it('passes an upstream not-found through with the upstream status', async () => {
      const r = await execute(granolaId, 'notes', 'get', { note_id: 'not_AAAAAAAAAAAAAA' });
      isProblem(r, 404, 'upstream_not_found');
      expect(r.body.details.upstream_status).toBe(404);
      conforms('POST', EXEC, r);
    });

    it('answers search over synced data (nothing synced yet here: sync-search.test.ts syncs)', async () => {
      const r = await execute(granolaId, 'notes', 'search', { query: { filter: { eq: { title: 'x' } } } });
      expect(r.status, r.text).toBe(200);
      expect(r.body).toEqual({ data: [], meta: { has_more: false, cursor: null, took_ms: expect.any(Number), synced_at: null } });
      conforms('POST', EXEC, r);
      const noFields = await execute(granolaId, 'meetings', 'search', { query: {} });
      isProblem(noFields, 400, 'unknown_entity');
    });

    it('runs every Granola entity × action', async () => {
      const list = await execute(granolaId, 'notes', 'list', { page_size: 3 });
      expect(list.status, list.text).toBe(200);
      expect(list.body.data).toHaveLength(3);
      expect(list.body.meta).toEqual({ cursor: expect.any(String), has_more: true });
      conforms('POST', EXEC, list);
      const next = await execute(granolaId, 'notes', 'list', { page_size: 3, cursor: list.body.meta.cursor });
      expect(next.body.data[0].id).not.toBe(list.body.data[0].id);
      const get = await execute(granolaId, 'notes', 'get', { note_id: list.body.data[0].id, include: 'transcript' });
      expect(get.status).toBe(200);
      expect(get.body.data).toMatchObject({ id: list.body.data[0].id, transcript: expect.any(Array) });
      conforms('POST', EXEC, get);
    });

    it('runs every Intercom entity × action', async (t) => {
      const creds = sandbox.connectors['intercom']?.credentials;
      if (creds === undefined) return t.skip();
      const id = (await create({ customer_name: 'cust-1', connector_type: 'intercom', name: 'Intercom', credentials: creds })).body.id as string;
      const ok = async (entity: string, action: string, params?: Record<string, unknown>): Promise<Reply> => {
        const r = await execute(id, entity, action, params);
        expect(r.status, `${entity}.${action}: ${r.text.slice(0, 400)}`).toBe(200);
        conforms('POST', EXEC, r);
        return r;
      };
      const firstId = async (entity: string, params?: Record<string, unknown>): Promise<string> => {
        const r = await ok(entity, 'list', params);
        expect(Array.isArray(r.body.data)).toBe(true);
        expect(r.body.data.length, `${entity} list is empty`).toBeGreaterThan(0);
        return String(r.body.data[0].id);
      };
      for (const entity of ['contacts', 'conversations', 'companies', 'teams', 'admins', 'tags', 'segments']) {
        const first = await firstId(entity);
        expect((await ok(entity, 'get', { id: first })).body.data.id).toBe(first);
      }
      const contact = await ok('contacts', 'create', { role: 'user', email: 'ada@example.com', name: 'Ada' });
      expect((await ok('contacts', 'update', { id: contact.body.data.id, name: 'Ada L.' })).body.data.name).toBe('Ada L.');
      const company = await ok('companies', 'create', { company_id: 'acme-1', name: 'Acme' });
      expect((await ok('companies', 'update', { id: company.body.data.id, name: 'Acme Inc' })).body.data.name).toBe('Acme Inc');
      await ok('tags', 'create', { name: 'vip' });
      const admin = await firstId('admins');
      await ok('notes', 'create', { body: '<p>Called</p>', contact_id: contact.body.data.id, admin_id: admin });
      await ok('internal_articles', 'create', { title: 'How to', owner_id: Number(admin), author_id: Number(admin), body: '<p>Steps</p>' });
    });

    it('runs every Monday entity × action', async (t) => {
      const creds = sandbox.connectors['monday']?.credentials;
      if (creds === undefined) return t.skip();
      const id = (await create({ customer_name: 'cust-1', connector_type: 'monday', name: 'Monday', credentials: creds })).body.id as string;
      const ok = async (entity: string, action: string, params?: Record<string, unknown>): Promise<Reply> => {
        const r = await execute(id, entity, action, params);
        expect(r.status, `${entity}.${action}: ${r.text.slice(0, 400)}`).toBe(200);
        conforms('POST', EXEC, r);
        return r;
      };
      for (const entity of ['users', 'teams', 'workspaces', 'tags', 'boards']) {
        const list = await ok(entity, 'list');
        const first = String(list.body.data[0].id);
        expect((await ok(entity, 'get', { id: first })).body.data.id).toBe(first);
      }
      const board = String((await ok('boards', 'list')).body.data[0].id);
      const items = await ok('items', 'list', { board_id: board });
      const item = String(items.body.data[0].id);
      expect((await ok('items', 'get', { id: item })).body.data.id).toBe(item);
      const created = await ok('items', 'create', { board_id: board, item_name: 'From the service' });
      await ok('items', 'update', { id: created.body.data.id, board_id: board, column_values: { text: 'Updated' } });
      const update = await ok('updates', 'create', { item_id: item, body: '<p>Note</p>' });
      await ok('updates', 'list', { item_id: item });
      expect((await ok('updates', 'get', { id: update.body.data.id })).body.data.id).toBe(update.body.data.id);
      await ok('updates', 'update', { id: update.body.data.id, body: '<p>Edited</p>' });
      await ok('updates', 'update', { id: update.body.data.id, state: 'deleted' });
      await ok('groups', 'list', { board_id: board });
      await ok('groups', 'create', { board_id: board, group_name: 'From the service' });
      await ok('columns', 'list', { board_id: board });
      await ok('columns', 'create', { board_id: board, title: 'Budget', column_type: 'numbers' });
      await ok('subitems', 'create', { parent_item_id: item, item_name: 'Sub' });
      expect((await ok('subitems', 'list', { item_id: item })).body.data).toHaveLength(1);
      await ok('activity_logs', 'list', { board_id: board });
      await ok('me', 'get');
      expect((await ok('items', 'update', { id: created.body.data.id, board_id: board, state: 'archived' })).body.data.state).toBe('archived');
      expect((await ok('items', 'update', { id: created.body.data.id, board_id: board, state: 'deleted' })).body.data.state).toBe('deleted');
    });
  });

  describe('catalog and health', () => {
    it('lists connector types with entities, actions, params schemas and credential variants — no values', async () => {
      const r = await call('GET', '/api/v1/integrations/connector-types');
      expect(r.status).toBe(200);
      conforms('GET', '/api/v1/integrations/connector-types', r);
      const granola = r.body.data.find((t: { type: string }) => t.type === 'granola');
      expect(granola.credential_variants).toEqual([
        expect.objectContaining({
          name: 'api_key',
          type: 'bearer',
          fields: [expect.objectContaining({ name: 'api_key', type: 'string', required: true, secret: true })],
        }),
      ]);
      const notes = granola.entities.find((e: { name: string }) => e.name === 'notes');
      expect(notes.actions.map((a: { name: string }) => a.name)).toEqual(['list', 'get', 'search']);
      expect(notes.actions[1].params_schema.required).toEqual(['note_id']);
      expect(r.text).not.toContain(sandbox.connectors['granola']?.credentials['api_key']);
      const one = await call('GET', '/api/v1/integrations/connector-types/granola');
      expect(one.body).toEqual(granola);
      isProblem(await call('GET', '/api/v1/integrations/connector-types/nope'), 404, 'unknown_connector_type');
    });

    it('serves /healthz, /readyz and /openapi.json without a token', async () => {
      const health = await h.request('GET', '/healthz');
      expect(health.body).toEqual({ status: 'ok' });
      conforms('GET', '/healthz', health);
      const ready = await h.request('GET', '/readyz');
      expect(ready.body).toEqual({ status: 'ready' });
      const doc = await h.request('GET', '/openapi.json');
      expect(doc.body.openapi).toBe('3.1.0');
      expect(Object.keys(doc.body.paths)).toEqual(
        expect.arrayContaining([
          '/api/v1/account/applications/token',
          '/api/v1/integrations/connectors',
          '/api/v1/integrations/connectors/oauth/initiate',
          '/api/v1/integrations/connectors/oauth/callback',
          '/api/v1/integrations/connectors/{connector_id}/execute',
        ]),
      );
      expect(doc.body.info.description).toContain('| `connector_not_found` | 404 |');
    });
  });

  describe('rate limit', () => {
    it('answers 429 rate_limited with Retry-After past the per-organization limit', async () => {
      const limited = await startHarness(dialect, { config: { rateLimitPerMinute: 3 } });
      try {
        const a = await limited.createApp('org-r');
        const t = await limited.token(a);
        for (let i = 0; i < 3; i++) expect((await limited.request('GET', CONNECTORS, { token: t })).status).toBe(200);
        const r = await limited.request('GET', CONNECTORS, { token: t });
        isProblem(r, 429, 'rate_limited');
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        conforms('GET', CONNECTORS, r);
        // Another organization has its own budget.
        const b = await limited.createApp('org-s');
        expect((await limited.request('GET', CONNECTORS, { token: await limited.token(b) })).status).toBe(200);
      } finally {
        await limited.close();
      }
    });
  });
});
