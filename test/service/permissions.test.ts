/**
 * Allow-lists per application and per scoped token (issue 46, item 5): execute, search, the
 * change feed, the proxy and the hosted MCP tools refuse a connector type, entity or action
 * outside them with 403 permission_denied (naming what), and allow what they list; read_only is
 * a preset; a scoped token's list narrows its application's, never widens it; changes are in
 * the audit log. Both databases.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createClient } from '../../src/client/hosted.ts';
import type { CreatedApplication } from '../../src/service/index.ts';
import { describeEachDialect, fakeUpstream, openApiErrors, startHarness, startHosted, type Harness, type Reply } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const PERMISSIONS = '/api/v1/account/permissions';

describeEachDialect('permissions on %s', (dialect) => {
  let h: Harness;
  let up: Awaited<ReturnType<typeof fakeUpstream>>;
  let app: CreatedApplication;
  let token: string;
  let id: string;
  let upstreamCalls = 0;

  beforeAll(async () => {
    up = await fakeUpstream((req, res) => {
      upstreamCalls++;
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"notes":[{"id":"not_1"}],"hasMore":false,"cursor":null}');
      });
    });
    ({ h, app, token } = await startHosted(dialect, { org: `perms-${dialect}`, upstreams: { granola: `${up.url}/base` }, config: { mcpProxy: true } }));
    const r = await h.request('POST', `${CONNECTORS}?check=false`, {
      token,
      body: { name: 'acme', customer_name: 'acme', connector_type: 'granola', credentials: { api_key: 'grn_perm_key' } },
    });
    expect(r.status, r.text).toBe(201);
    id = r.body.id;
  });
  afterAll(async () => {
    await h?.close();
    await up?.close();
  });
  beforeEach(async () => {
    const r = await h.request('PUT', PERMISSIONS, { token, body: { permissions: null } });
    expect(r.status, r.text).toBe(200);
    upstreamCalls = 0;
  });

  const setPermissions = async (permissions: unknown): Promise<Reply> => {
    const r = await h.request('PUT', PERMISSIONS, { token, body: { permissions } });
    expect(r.status, r.text).toBe(200);
    return r;
  };
  const execute = (t: string, entity: string, action: string, params: unknown = {}) =>
    h.request('POST', `${CONNECTORS}/${id}/execute`, { token: t, body: { entity, action, params } });
  const changes = (t: string) => h.request('GET', `${CONNECTORS}/${id}/records?entity=notes`, { token: t });
  const proxy = (t: string, method = 'GET') =>
    h.request(method, `${CONNECTORS}/${id}/proxy/v1/notes`, { token: t, ...(method === 'POST' ? { body: {} } : {}) });
  const mcp = (t: string, name: string, args: Record<string, unknown>) =>
    h.request('POST', '/mcp', {
      token: t,
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { connector: id, ...args } } },
      headers: { accept: 'application/json, text/event-stream' },
    });
  const surfaces = (t: string): Record<string, () => Promise<Reply>> => ({
    execute: () => execute(t, 'notes', 'list'),
    search: () => execute(t, 'notes', 'search', { query: {} }),
    changes: () => changes(t),
    proxy: () => proxy(t),
  });
  const denied = (r: Reply, naming: string) => {
    expect([r.status, r.body.code], r.text).toEqual([403, 'permission_denied']);
    expect(r.body.detail ?? r.body.message ?? r.text).toContain(naming);
  };
  const mcpDenied = (r: Reply, naming: string) => {
    expect(r.status, r.text).toBe(200);
    expect(r.body.result?.isError, r.text).toBe(true);
    expect(JSON.stringify(r.body.result)).toContain('permission_denied');
    expect(JSON.stringify(r.body.result)).toContain(naming);
  };
  const mcpOk = (r: Reply) => {
    expect(r.status, r.text).toBe(200);
    expect(r.body.result.isError, r.text).not.toBe(true);
  };

  it('without an allow-list every surface works; GET lists none', async () => {
    for (const [name, call] of Object.entries(surfaces(token))) expect((await call()).status, name).toBe(200);
    mcpOk(await mcp(token, 'execute', { entity: 'notes', action: 'list', params: null }));
    const got = await h.request('GET', PERMISSIONS, { token });
    expect(got.body).toEqual({ application: null, token: null });
    expect(openApiErrors('GET', PERMISSIONS, got)).toEqual([]);
  });

  it('a connector type outside the list: 403 on execute, search, the change feed, the proxy and MCP, with no upstream call', async () => {
    const put = await setPermissions({ connector_types: ['attio'] });
    expect(put.body.application).toEqual({ connector_types: ['attio'] });
    expect(openApiErrors('PUT', PERMISSIONS, put)).toEqual([]);
    for (const call of Object.values(surfaces(token))) denied(await call(), 'connector type granola');
    mcpDenied(await mcp(token, 'execute', { entity: 'notes', action: 'list', params: null }), 'granola');
    mcpDenied(await mcp(token, 'search', { entity: 'notes', query: {} }), 'granola');
    mcpDenied(await mcp(token, 'changes', { entity: 'notes' }), 'granola');
    mcpDenied(await mcp(token, 'proxy', { method: 'GET', path: '/v1/notes' }), 'granola');
    expect(upstreamCalls).toBe(0);
    // Listed: allowed again.
    await setPermissions({ connector_types: ['attio', 'granola'] });
    for (const [name, call] of Object.entries(surfaces(token))) expect((await call()).status, name).toBe(200);
  });

  it('entities and actions: "type.entity" / "entity" and "entity.action" / "action"; the proxy is refused when they are listed', async () => {
    await setPermissions({ entities: ['granola.other'] });
    denied(await execute(token, 'notes', 'list'), 'entity notes of granola');
    denied(await changes(token), 'entity notes');
    mcpDenied(await mcp(token, 'execute', { entity: 'notes', action: 'list', params: null }), 'entity notes');

    await setPermissions({ entities: ['notes'], actions: ['notes.list', 'search'] });
    expect((await execute(token, 'notes', 'list')).status).toBe(200);
    expect((await execute(token, 'notes', 'search', { query: {} })).status).toBe(200);
    denied(await execute(token, 'notes', 'get', { note_id: 'not_abcdefghijklmn' }), 'action get on notes');
    denied(await changes(token), 'action changes');
    denied(await proxy(token), 'the proxy on granola');
    mcpOk(await mcp(token, 'execute', { entity: 'notes', action: 'list', params: null }));
    mcpDenied(await mcp(token, 'execute', { entity: 'notes', action: 'get', params: { note_id: 'not_abcdefghijklmn' } }), 'action get');

    await setPermissions({ entities: ['granola.notes'], actions: ['changes'] });
    expect((await changes(token)).status).toBe(200);
    mcpOk(await mcp(token, 'changes', { entity: 'notes' }));
    denied(await execute(token, 'notes', 'list'), 'action list');
  });

  it('read_only: list, get, search and changes, GET proxy calls; writes refused before anything else', async () => {
    // Without the preset, an unknown write action is the manifest's unknown_action.
    expect((await execute(token, 'notes', 'create', { title: 'x' })).body.code).toBe('unknown_action');
    await setPermissions({ read_only: true });
    for (const [name, call] of Object.entries(surfaces(token))) expect((await call()).status, name).toBe(200);
    denied(await execute(token, 'notes', 'create', { title: 'x' }), 'action create');
    denied(await proxy(token, 'POST'), 'POST through the proxy');
    mcpDenied(await mcp(token, 'proxy', { method: 'DELETE', path: '/v1/notes/not_1' }), 'DELETE');
    mcpDenied(await mcp(token, 'execute', { entity: 'notes', action: 'create', params: { title: 'x' } }), 'action create');
  });

  it('MCP tools/list, list_connectors and describe show only the connectors, entities and actions the allow-lists allow', async () => {
    const other = await h.request('POST', `${CONNECTORS}?check=false`, {
      token,
      body: { name: 'billing', customer_name: 'acme', connector_type: 'stripe', credentials: { api_key: 'sk_test_perm_list_key' } },
    });
    expect(other.status, other.text).toBe(201);
    const rpc = async (method: string, params: Record<string, unknown> = {}) => {
      const r = await h.request('POST', '/mcp', {
        token,
        body: { jsonrpc: '2.0', id: 1, method, params },
        headers: { accept: 'application/json, text/event-stream' },
      });
      expect(r.status, r.text).toBe(200);
      return r.body.result;
    };
    const listed = async () =>
      (await rpc('tools/call', { name: 'list_connectors', arguments: {} })).structuredContent.data as {
        id: string;
        type: string;
        entities: { name: string; actions: string[] }[];
      }[];
    const toolsText = async () => JSON.stringify((await rpc('tools/list')).tools);
    // Without a list: both connectors everywhere.
    expect((await listed()).map((c) => c.id).sort()).toEqual([id, other.body.id].sort());
    expect(await toolsText()).toContain(id);

    await setPermissions({ connector_types: ['stripe'] });
    expect((await listed()).map((c) => c.id)).toEqual([other.body.id]);
    const text = await toolsText();
    expect(text).toContain(other.body.id);
    expect(text).not.toContain(id);
    mcpDenied(await mcp(token, 'describe', {}), 'connector type granola');

    await setPermissions({ connector_types: ['granola'], actions: ['notes.list'] });
    const granola = await listed();
    expect(granola.map((c) => c.id)).toEqual([id]);
    expect(granola[0]!.entities).toEqual([{ name: 'notes', title: expect.any(String), actions: ['list'] }]);
    const described = (await rpc('tools/call', { name: 'describe', arguments: { connector: id } })).structuredContent as {
      entities: { name: string; actions: { name: string }[] }[];
    };
    expect(described.entities.map((e) => [e.name, e.actions.map((a) => a.name)])).toEqual([['notes', ['list']]]);

    await setPermissions({ entities: ['granola.other'] });
    expect((await listed()).map((c) => [c.type, c.entities.length]).sort()).toEqual(
      [
        ['granola', 0],
        ['stripe', 0],
      ].sort(),
    );
    expect(upstreamCalls).toBe(0);
    expect((await h.request('DELETE', `${CONNECTORS}/${other.body.id}`, { token })).status).toBe(204);
  });

  it("the typed hosted client gets and sets the application's list", async () => {
    const client = createClient({ baseUrl: h.url, customerName: 'acme', clientId: app.client_id, clientSecret: app.client_secret });
    expect(await client.permissions.set({ actions: ['list'], read_only: true })).toEqual({ application: { actions: ['list'], read_only: true }, token: null });
    expect(await client.permissions.get()).toEqual({ application: { actions: ['list'], read_only: true }, token: null });
    denied(await execute(token, 'notes', 'search', { query: {} }), 'action search');
    expect(await client.permissions.set(null)).toEqual({ application: null, token: null });
  });

  it("a scoped token's list narrows its application's and never widens it; GET shows both", async () => {
    const mint = async (permissions?: unknown) => {
      const r = await h.request('POST', '/api/v1/account/applications/scoped-token', {
        token,
        body: { customer_name: 'acme', ...(permissions === undefined ? {} : { permissions }) },
      });
      expect(r.status, r.text).toBe(200);
      return r.body.access_token as string;
    };
    const narrow = await mint({ actions: ['list'] });
    const plain = await mint();
    expect((await execute(narrow, 'notes', 'list')).status).toBe(200);
    denied(await execute(narrow, 'notes', 'search', { query: {} }), 'Not allowed for this scoped token: action search');
    denied(await proxy(narrow), 'the proxy');
    for (const [name, call] of Object.entries(surfaces(plain))) expect((await call()).status, name).toBe(200);
    expect((await h.request('GET', PERMISSIONS, { token: narrow })).body).toEqual({ application: null, token: { actions: ['list'] } });

    // The application narrowed: every token it minted is narrowed too, whatever its own list says.
    await setPermissions({ connector_types: ['attio'] });
    const wide = await mint({ connector_types: ['granola'] });
    for (const t of [narrow, plain, wide]) denied(await execute(t, 'notes', 'list'), 'Not allowed for this application: connector type granola');
    expect((await h.request('GET', PERMISSIONS, { token: wide })).body).toEqual({
      application: { connector_types: ['attio'] },
      token: { connector_types: ['granola'] },
    });
    // A scoped token cannot change permissions.
    const put = await h.request('PUT', PERMISSIONS, { token: narrow, body: { permissions: null } });
    expect([put.status, put.body.code]).toEqual([403, 'permission_denied']);
    expect((await h.request('GET', PERMISSIONS, { token })).body.application).toEqual({ connector_types: ['attio'] });
  });

  it('bad input is refused and changes nothing; parallel requests all see the list; changes are in the audit log', async () => {
    await setPermissions({ read_only: true, connector_types: ['granola'] });
    for (const bad of [
      { read_only: 'yes' },
      { connector_types: 'granola' },
      { actions: [''] },
      { other: 1 },
      { entities: Array.from({ length: 201 }, (_, i) => `e${i}`) },
    ]) {
      const r = await h.request('PUT', PERMISSIONS, { token, body: { permissions: bad } });
      expect([r.status, r.body.code], JSON.stringify(bad)).toEqual([400, 'invalid_request']);
    }
    expect((await h.request('GET', PERMISSIONS, { token })).body.application).toEqual({ connector_types: ['granola'], read_only: true });

    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? proxy(token, 'POST') : execute(token, 'notes', 'create', { title: 'x' }))),
    );
    for (const r of answers) expect(r.body.code).toBe('permission_denied');
    expect(upstreamCalls).toBe(0);

    const events = await h.request('GET', '/api/v1/audit-events?action=permissions.updated&limit=5', { token });
    expect(events.status, events.text).toBe(200);
    const last = events.body.data[0];
    const appRow = await h.store.findApplicationByClientId(app.client_id);
    expect(last).toMatchObject({
      action: 'permissions.updated',
      resource_type: 'application',
      resource_id: appRow?.id,
      actor_application_id: appRow?.id,
      actor_token_kind: 'application',
    });
    expect(last.details).toEqual({ connector_types: ['granola'], read_only: true });
  });

  it('another instance applies a change once its cached read lapses (SWITCHBOARD_LOOKUP_CACHE_MS), the storing one at once', async () => {
    // A second instance on the same database, with a long cache and its own clock: no timing in the test.
    const ttl = 60_000;
    const b = await startHarness(dialect, {
      database: h.db,
      config: { lookupCacheMs: ttl, upstreamThrottle: false, connectorTypes: { granola: { baseUrl: `${up.url}/base` } } },
    });
    try {
      const viaB = () => b.request('POST', `${CONNECTORS}/${id}/execute`, { token, body: { entity: 'notes', action: 'list', params: {} } });
      expect((await viaB()).status).toBe(200);
      await setPermissions({ connector_types: ['hubspot'] });
      expect((await execute(token, 'notes', 'list')).status).toBe(403);
      // B read "no list" less than its cache time ago.
      expect((await viaB()).status).toBe(200);
      b.clock.offsetMs += ttl;
      const refused = await viaB();
      expect(refused.status, refused.text).toBe(403);
      expect(refused.body.code).toBe('permission_denied');
    } finally {
      await b.close();
    }
  });
});
