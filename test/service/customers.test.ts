/**
 * Customers under Airbyte's names, and scoped tokens: workspace_name / external_user_id as
 * aliases of customer_name, connector_type by alias and definition_id, GET /api/v1/workspaces,
 * a token limited to one customer refused every other customer's connector on every endpoint,
 * and the opt-in Airbyte envelope next to today's unchanged one. SQLite always, PostgreSQL when
 * configured.
 */
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectTables } from '../../src/service/connect/connect-migrations.ts';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { createApplication } from '../../src/service/index.ts';
import { customerScopeHook } from '../../src/service/connectors/customers.ts';
import { describeEachDialect, openApiErrors, startHarness, startHosted, type Harness, type Reply } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const SCOPED = '/api/v1/account/applications/scoped-token';
const GRANOLA_ID = '9023923c-002f-4131-9554-3ebdf56540a4';
const SDK = { 'X-ADP-Agent-SDK': 'airbyte-agent-sdk' };

function conforms(method: string, path: string, r: Reply): void {
  expect(openApiErrors(method, path, r), r.text).toEqual([]);
}

describeEachDialect('customers, workspaces and scoped tokens on %s', (dialect) => {
  let sim: GranolaSimulator;
  let h: Harness;
  let token: string;
  const ids: Record<string, string> = {};
  const create = (body: Record<string, unknown>, t = token, headers: Record<string, string> = {}): Promise<Reply> =>
    h.request('POST', `${CONNECTORS}?check=false`, { token: t, headers, body: { name: 'g', credentials: { api_key: sim.apiKey }, ...body } });

  beforeAll(async () => {
    sim = await startGranolaSimulator({ size: 6, rateLimit: false });
    ({ h, token } = await startHosted(dialect, { org: 'org-customers', upstreams: { granola: sim.url } }));
    for (const customer of ['acme', 'globex', '50%_off', 'ACME labs']) {
      const r = await create({ customer_name: customer, connector_type: 'granola' });
      expect(r.status, r.text).toBe(201);
      ids[customer] = r.body.id;
    }
  });
  afterAll(async () => {
    await h?.close();
    await sim?.close();
  });

  describe('names', () => {
    it.each([
      ['workspace_name', { workspace_name: 'initech', connector_type: 'Granola' }],
      ['external_user_id', { external_user_id: 'initech', connector_type: 'GRANOLA' }],
      ['customer_name and an equal workspace_name', { customer_name: 'initech', workspace_name: 'initech', definition_id: GRANOLA_ID }],
      ['definition_id agreeing with connector_type', { customer_name: 'initech', connector_type: 'granola', definition_id: GRANOLA_ID.toUpperCase() }],
    ])('create accepts %s; the connector stores customer_name and the type', async (_n, body) => {
      const r = await create(body);
      expect(r.status, r.text).toBe(201);
      expect(r.body).toMatchObject({ customer_name: 'initech', connector_type: 'granola' });
      conforms('POST', CONNECTORS, r);
      expect((await h.request('DELETE', `${CONNECTORS}/${r.body.id}`, { token })).status).toBe(204);
    });

    it.each([
      [
        'customer_name and workspace_name disagree',
        { customer_name: 'a', workspace_name: 'b', connector_type: 'granola' },
        'invalid_request',
        ['/customer_name', '/workspace_name'],
      ],
      [
        'workspace_name and external_user_id disagree',
        { workspace_name: 'a', external_user_id: 'b', connector_type: 'granola' },
        'invalid_request',
        ['/workspace_name', '/external_user_id'],
      ],
      [
        'connector_type and definition_id disagree',
        { customer_name: 'a', connector_type: 'monday', definition_id: GRANOLA_ID },
        'invalid_request',
        ['/connector_type', '/definition_id'],
      ],
      ['an unknown definition_id', { customer_name: 'a', definition_id: '00000000-0000-0000-0000-000000000000' }, 'unknown_connector_type', ['/definition_id']],
      ['a workspace_name that is not a string', { workspace_name: 7, connector_type: 'granola' }, 'invalid_request', ['/workspace_name', '/customer_name']],
    ])('create refuses %s with a 400 naming the fields, and stores nothing', async (_n, body, code, paths) => {
      const before = await h.snapshot();
      const r = await create(body);
      expect(r.status, r.text).toBe(400);
      expect(r.body.code).toBe(code);
      expect(r.body.errors.map((e: { path: string }) => e.path).sort()).toEqual([...paths].sort());
      conforms('POST', CONNECTORS, r);
      expect(await h.snapshot()).toBe(before);
    });

    it('the list filters by workspace_name, external_user_id, definition_id and connector_type aliases', async () => {
      const list = async (q: string): Promise<string[]> => {
        const r = await h.request('GET', `${CONNECTORS}?${q}`, { token });
        expect(r.status, r.text).toBe(200);
        conforms('GET', CONNECTORS, r);
        return r.body.data.map((c: { id: string }) => c.id);
      };
      expect(await list('workspace_name=acme')).toEqual([ids['acme']]);
      expect(await list('external_user_id=globex')).toEqual([ids['globex']]);
      expect(await list(`workspace_name=acme&definition_id=${GRANOLA_ID}`)).toEqual([ids['acme']]);
      expect(await list('workspace_name=acme&connector_type=Granola')).toEqual([ids['acme']]);
      expect(await list('workspace_name=acme&definition_id=d8313939-3782-41b0-be29-b3ca20d8dd3a')).toEqual([]);
      expect(await list('workspace_name=acme&definition_id=not-a-known-id')).toEqual([]);
      const bad = await h.request('GET', `${CONNECTORS}?customer_name=acme&workspace_name=globex`, { token });
      expect(bad.status).toBe(400);
      expect(bad.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['query:customer_name', 'query:workspace_name']);
    });

    it('OAuth initiate and connect sessions take the aliases too', async () => {
      const oauth = await h.request('POST', `${CONNECTORS}/oauth/initiate`, {
        token,
        body: { workspace_name: 'a', customer_name: 'b', connector_type: 'acme', redirect_url: 'https://app.example.com/cb' },
      });
      expect(oauth.status, oauth.text).toBe(400);
      expect(oauth.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['/customer_name', '/workspace_name']);
      const session = await h.request('POST', '/api/v1/integrations/connect/sessions', { token, body: { workspace_name: 'acme' } });
      expect(session.status, session.text).toBe(201);
      const clash = await h.request('POST', '/api/v1/integrations/connect/sessions', { token, body: { workspace_name: 'acme', external_user_id: 'globex' } });
      expect(clash.status).toBe(400);
    });

    it('connector-types answers under an alias', async () => {
      const r = await h.request('GET', '/api/v1/integrations/connector-types/Monday', { token });
      expect(r.status, r.text).toBe(200);
      expect(r.body.type).toBe('monday');
    });
  });

  describe('GET /api/v1/workspaces', () => {
    it('lists the customers as {id, name}, filtered by name_contains (case-insensitive, % and _ literal), paginated', async () => {
      const all = await h.request('GET', '/api/v1/workspaces', { token });
      expect(all.status, all.text).toBe(200);
      conforms('GET', '/api/v1/workspaces', all);
      expect(all.body.data.map((w: { name: string }) => w.name).sort()).toEqual(['50%_off', 'ACME labs', 'acme', 'globex']);
      const acme = await h.request('GET', '/api/v1/workspaces?name_contains=acme', { token });
      expect(acme.body.data.map((w: { name: string }) => w.name).sort()).toEqual(['ACME labs', 'acme']);
      for (const [q, names] of [
        ['%25', ['50%_off']],
        ['_', ['50%_off']],
        ['%25_', ['50%_off']],
        ['o_f', []],
      ] as const) {
        const r = await h.request('GET', `/api/v1/workspaces?name_contains=${q}`, { token });
        expect(
          r.body.data.map((w: { name: string }) => w.name),
          q,
        ).toEqual(names);
      }
      // Ids are stable and distinct.
      const again = await h.request('GET', '/api/v1/workspaces', { token });
      expect(again.body.data).toEqual(all.body.data);
      expect(new Set(all.body.data.map((w: { id: string }) => w.id)).size).toBe(4);
      // Pages of one, through the cursor, cover the same names.
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const r: Reply = await h.request('GET', `/api/v1/workspaces?limit=1${cursor !== null ? `&cursor=${cursor}` : ''}`, { token });
        expect(r.status, r.text).toBe(200);
        seen.push(...r.body.data.map((w: { name: string }) => w.name));
        cursor = r.body.meta.cursor;
      } while (cursor !== null);
      expect(seen).toEqual(all.body.data.map((w: { name: string }) => w.name));
      const bad = await h.request('GET', '/api/v1/workspaces?cursor=%21%21', { token });
      expect(bad.status).toBe(400);
      expect(bad.body.errors).toEqual([{ path: 'query:cursor', message: 'is not a cursor returned by this endpoint' }]);
    });
  });

  describe('scoped tokens', () => {
    let scoped: string;
    beforeAll(async () => {
      const r = await h.request('POST', SCOPED, { token, body: { workspace_name: 'acme' } });
      expect(r.status, r.text).toBe(200);
      conforms('POST', SCOPED, r);
      expect(r.body).toMatchObject({ token_type: 'Bearer', customer_name: 'acme' });
      expect(r.body.token).toBe(r.body.access_token);
      expect(r.body.expires_in).toBeLessThanOrEqual(900);
      expect(r.headers.get('cache-control')).toBe('no-store');
      scoped = r.body.access_token;
    });

    it("refuses every other customer's connector with 404 on every connector endpoint, and changes nothing", async () => {
      const other = ids['globex'];
      const before = await h.snapshot();
      const calls: [string, string, unknown?][] = [
        ['GET', `${CONNECTORS}/${other}`],
        ['PATCH', `${CONNECTORS}/${other}?check=false`, { name: 'mine now' }],
        ['DELETE', `${CONNECTORS}/${other}`],
        ['POST', `${CONNECTORS}/${other}/check`],
        ['POST', `${CONNECTORS}/${other}/execute`, { entity: 'notes', action: 'list', params: null }],
        ['POST', `${CONNECTORS}/${other}/execute`, { entity: 'notes', action: 'context_store_search', params: { query: {} } }],
        ['GET', `${CONNECTORS}/${other}/sync`],
        ['POST', `${CONNECTORS}/${other}/sync`, {}],
      ];
      for (const [method, path, body] of calls) {
        const r = await h.request(method, path, { token: scoped, ...(body !== undefined ? { body } : {}) });
        expect(r.status, `${method} ${path}: ${r.text}`).toBe(404);
        expect(r.body.code).toBe('connector_not_found');
      }
      expect(await h.snapshot()).toBe(before);
      // Its own customer's connector works.
      expect((await h.request('GET', `${CONNECTORS}/${ids['acme']}`, { token: scoped })).status).toBe(200);
      const run = await h.request('POST', `${CONNECTORS}/${ids['acme']}/execute`, { token: scoped, body: { entity: 'notes', action: 'list', params: null } });
      expect(run.status, run.text).toBe(200);
    });

    it('parallel requests for both customers: only its own answers', async () => {
      const rs = await Promise.all(
        Array.from({ length: 16 }, (_, i) => h.request('GET', `${CONNECTORS}/${i % 2 === 0 ? ids['acme'] : ids['globex']}`, { token: scoped })),
      );
      expect(rs.map((r) => r.status)).toEqual(Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? 200 : 404)));
    });

    it('lists, workspaces and creates are kept to its customer; naming another is 403 customer_forbidden', async () => {
      const list = await h.request('GET', CONNECTORS, { token: scoped });
      expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([ids['acme']]);
      for (const q of ['customer_name=globex', 'workspace_name=globex']) {
        const r = await h.request('GET', `${CONNECTORS}?${q}`, { token: scoped });
        expect(r.status, r.text).toBe(403);
        expect(r.body.code).toBe('customer_forbidden');
        conforms('GET', CONNECTORS, r);
      }
      const ws = await h.request('GET', '/api/v1/workspaces', { token: scoped });
      expect(ws.body.data.map((w: { name: string }) => w.name)).toEqual(['acme']);

      const before = await h.snapshot();
      for (const [path, body] of [
        [`${CONNECTORS}?check=false`, { workspace_name: 'globex', connector_type: 'granola', name: 'x', credentials: { api_key: sim.apiKey } }],
        [SCOPED, { workspace_name: 'globex' }],
        ['/api/v1/integrations/connect/sessions', { customer_name: 'globex' }],
        ['/api/v1/account/applications/widget-token', { workspace_name: 'globex', allowed_origin: 'https://app.example.com' }],
        [`${CONNECTORS}/oauth/initiate`, { workspace_name: 'globex', connector_type: 'acme', redirect_url: 'https://app.example.com/cb' }],
      ] as const) {
        const r = await h.request('POST', path, { token: scoped, body });
        expect(r.status, `${path}: ${r.text}`).toBe(403);
        expect(r.body.code).toBe('customer_forbidden');
      }
      expect(await h.snapshot()).toBe(before);

      // Without a customer, the token's own is used.
      const mine = await create({ connector_type: 'granola' }, scoped);
      expect(mine.status, mine.text).toBe(201);
      expect(mine.body.customer_name).toBe('acme');
      expect((await h.request('DELETE', `${CONNECTORS}/${mine.body.id}`, { token: scoped })).status).toBe(204);
    });

    it('cannot mint tokens: S1 → S2 is 403 token_mint_forbidden, for its own customer too, also in parallel, and nothing is stored (issue 37 item 9)', async () => {
      const before = await h.snapshot();
      const asks = [
        [SCOPED, {}],
        [SCOPED, { customer_name: 'acme' }],
        ['/api/v1/account/applications/widget-token', { allowed_origin: 'https://app.example.com' }],
        ['/api/v1/account/applications/widget-token', { workspace_name: 'acme', allowed_origin: 'https://app.example.com' }],
      ] as const;
      const answers = await Promise.all([...asks, ...asks].map(([path, body]) => h.request('POST', path, { token: scoped, body })));
      for (const r of answers) {
        expect(r.status, r.text).toBe(403);
        expect(r.body.code).toBe('token_mint_forbidden');
        expect(r.body).not.toHaveProperty('token');
      }
      expect(await h.snapshot()).toBe(before);
      // A widget token is a Connect session, not a bearer token: it mints nothing either.
      const widget = await h.request('POST', '/api/v1/account/applications/widget-token', {
        token,
        body: { workspace_name: 'acme', allowed_origin: 'https://app.example.com' },
      });
      expect(widget.status, widget.text).toBe(200);
      const byWidget = await h.request('POST', SCOPED, { token: widget.body.token, body: { customer_name: 'acme' } });
      expect(byWidget.status).toBe(401);
      // The application's own token still mints a scoped token.
      const fresh = await h.request('POST', SCOPED, { token, body: { customer_name: 'acme' } });
      expect(fresh.status, fresh.text).toBe(200);
      expect(fresh.body.customer_name).toBe('acme');
    });

    it("MCP with a scoped token sees and runs its customer's connectors only", async () => {
      const rpc = (body: unknown, query = ''): Promise<Reply> =>
        h.request('POST', `/mcp${query}`, { token: scoped, body, headers: { accept: 'application/json, text/event-stream' } });
      const listed = await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_connectors', arguments: {} } });
      expect(listed.status, listed.text).toBe(200);
      expect(listed.body.result.structuredContent.data.map((c: { id: string }) => c.id)).toEqual([ids['acme']]);
      const other = await rpc({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'execute', arguments: { connector: ids['globex'], entity: 'notes', action: 'list', params: null } },
      });
      expect(other.body.result.isError).toBe(true);
      expect(JSON.stringify(other.body.result)).toContain('connector_not_found');
      const own = await rpc({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'execute', arguments: { connector: ids['acme'], entity: 'notes', action: 'list', params: null } },
      });
      expect(own.body.result.isError, JSON.stringify(own.body)).not.toBe(true);
      const forbidden = await rpc({ jsonrpc: '2.0', id: 4, method: 'tools/list' }, '?customer_name=globex');
      expect(forbidden.status).toBe(403);
      expect(forbidden.body.code).toBe('customer_forbidden');
    });

    it('expires like any token', async () => {
      h.clock.offsetMs += 901_000;
      try {
        const r = await h.request('GET', CONNECTORS, { token: scoped });
        expect(r.status).toBe(401);
      } finally {
        h.clock.offsetMs -= 901_000;
      }
    });
  });

  describe('widget tokens', () => {
    const WIDGET = '/api/v1/account/applications/widget-token';
    const ORIGIN = 'https://app.example.com';
    const csp = (r: Reply): string => r.headers.get('content-security-policy') ?? '';

    it('are Connect sessions whose pages only the allowed origin may frame', async () => {
      const r = await h.request('POST', WIDGET, { token, body: { workspace_name: 'acme', allowed_origin: ORIGIN, allowed_connector_types: ['granola'] } });
      expect(r.status, r.text).toBe(200);
      conforms('POST', WIDGET, r);
      expect(r.body.allowed_origin).toBe(ORIGIN);
      expect(r.body.url).toBe(`${h.url}/connect?origin=${encodeURIComponent(ORIGIN)}#session=${r.body.token}`);
      expect(r.headers.get('cache-control')).toBe('no-store');

      // The first page, before any session: framed by the origin the link names, if it is one.
      const first = await h.request('GET', `/connect?origin=${encodeURIComponent(ORIGIN)}`);
      expect(csp(first)).toContain(`frame-ancestors ${ORIGIN};`);
      expect(first.headers.get('x-frame-options')).toBeNull();
      for (const bad of ['javascript:alert(1)', 'https://a.com; script-src *', 'https://a.com/path', '*', 'https://*.example.com']) {
        const page = await h.request('GET', `/connect?origin=${encodeURIComponent(bad)}`);
        expect(csp(page), bad).toContain("frame-ancestors 'none'");
        expect(page.headers.get('x-frame-options')).toBe('DENY');
      }

      const x = await h.request('POST', '/connect/session', { body: { token: r.body.token } });
      expect(x.status, x.text).toBe(204);
      expect(x.headers.get('set-cookie')).toMatch(/; SameSite=None; Secure; Partitioned$/);
      const cookie = /sb_connect=([^;]+)/.exec(x.headers.get('set-cookie') ?? '')?.[1];
      // The session's pages: its origin only, whatever ?origin= says.
      for (const path of ['/connect', '/connect?origin=https%3A%2F%2Fevil.example', '/connect/types/granola']) {
        const page = await h.request('GET', path, { headers: { cookie: `sb_connect=${cookie}` } });
        expect(page.status, path).toBe(200);
        expect(csp(page), path).toContain(`frame-ancestors ${ORIGIN};`);
        expect(page.headers.get('x-frame-options')).toBeNull();
      }
      // Connecting through the framed page: the result is posted to the allowed origin only, and the page keeps to it.
      const form = await h.request('GET', '/connect/types/granola', { headers: { cookie: `sb_connect=${cookie}` } });
      const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)?.[1] ?? '';
      const posted = await h.request('POST', '/connect/types/granola/credentials', {
        headers: { cookie: `sb_connect=${cookie}` },
        raw: new URLSearchParams({ csrf, variant: 'api_key', 'field.api_key': sim.apiKey }).toString(),
        contentType: 'application/x-www-form-urlencoded',
      });
      // Post/redirect/get: the success page is its own GET, framed by the allowed origin too.
      expect(posted.status, posted.text).toBe(303);
      const done = await h.request('GET', posted.headers.get('location') ?? '', { headers: { cookie: `sb_connect=${cookie}` } });
      expect(done.status, done.text).toBe(200);
      expect(done.text).toContain(`data-message-origin="${ORIGIN}"`);
      expect(csp(done)).toContain(`frame-ancestors ${ORIGIN};`);
      // A plain Connect session is unchanged.
      const plain = await h.request('POST', '/api/v1/integrations/connect/sessions', { token, body: { customer_name: 'acme' } });
      expect(plain.body.url).toBe(`${h.url}/connect#session=${plain.body.token}`);
      const px = await h.request('POST', '/connect/session', { body: { token: plain.body.token } });
      expect(px.headers.get('set-cookie')).toContain('SameSite=Lax');
      const pc = /sb_connect=([^;]+)/.exec(px.headers.get('set-cookie') ?? '')?.[1];
      const home = await h.request('GET', '/connect', { headers: { cookie: `sb_connect=${pc}` } });
      expect(csp(home)).toContain("frame-ancestors 'none'");
    });

    it.each([
      ['an origin with a path', { allowed_origin: `${ORIGIN}/embed` }, '/allowed_origin'],
      ['a non-http origin', { allowed_origin: 'ftp://files.example.com' }, '/allowed_origin'],
      ['a wildcard', { allowed_origin: '*' }, '/allowed_origin'],
      ['a wildcard subdomain (issue 37 item 10)', { allowed_origin: 'https://*.example.com' }, '/allowed_origin'],
      ['a wildcard subdomain with a port', { allowed_origin: 'https://*.example.com:8443' }, '/allowed_origin'],
      ['a host with other signs', { allowed_origin: "https://a$b'.example.com" }, '/allowed_origin'],
      ['a redirect_url on another origin', { allowed_origin: ORIGIN, redirect_url: 'https://other.example.com/done' }, '/redirect_url'],
    ])('refuse %s with a 400, storing nothing', async (_n, body, path) => {
      const sessions = async (): Promise<number> =>
        (await (h.service.database.db as unknown as Kysely<ConnectTables>).selectFrom('connect_sessions').selectAll().execute()).length;
      const [before, count] = [await h.snapshot(), await sessions()];
      const r = await h.request('POST', WIDGET, { token, body: { workspace_name: 'acme', ...body } });
      expect(r.status, r.text).toBe(400);
      expect(r.body.errors).toEqual([{ path, message: expect.any(String) }]);
      expect(await h.snapshot()).toBe(before);
      expect(await sessions()).toBe(count);
    });
  });

  describe('the Airbyte envelope is opt-in', () => {
    it('without the header, execute and errors are exactly as before', async () => {
      const id = ids['acme']!;
      const plain = await h.request('POST', `${CONNECTORS}/${id}/execute`, { token, body: { entity: 'notes', action: 'list', params: { page_size: 2 } } });
      const sdk = await h.request('POST', `${CONNECTORS}/${id}/execute`, {
        token,
        headers: SDK,
        body: { entity: 'notes', action: 'list', params: { page_size: 2 } },
      });
      expect(plain.status).toBe(200);
      expect(sdk.status).toBe(200);
      // Today's envelope, byte for byte: {data, meta} and nothing else, in that order.
      expect(plain.text).toBe(JSON.stringify({ data: sdk.body.result, meta: sdk.body.connector_metadata }));
      expect(plain.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(Object.keys(sdk.body)).toEqual(['status', 'result', 'connector_metadata', 'execution_metadata']);

      const get = await h.request('POST', `${CONNECTORS}/${id}/execute`, {
        token,
        body: { entity: 'notes', action: 'get', params: { note_id: sim.ids()[0] } },
      });
      const getSdk = await h.request('POST', `${CONNECTORS}/${id}/execute`, {
        token,
        headers: SDK,
        body: { entity: 'notes', action: 'get', params: { note_id: sim.ids()[0] } },
      });
      expect(get.text).toBe(JSON.stringify({ data: getSdk.body.result }));
      expect(getSdk.body.connector_metadata).toBeNull();

      const unknown = await h.request('POST', `${CONNECTORS}/${id}/execute`, { token, body: { entity: 'meetings', action: 'list' } });
      expect(unknown.text).toBe(
        JSON.stringify({
          type: 'urn:switchboard:problem:unknown_entity',
          title: 'Unknown entity',
          status: 400,
          detail: 'Unknown entity "meetings" for granola. Valid entities: notes',
          code: 'unknown_entity',
          details: { entity: 'meetings', valid: ['notes'] },
          instance: `${CONNECTORS}/${id}/execute`,
        }),
      );
      const invalid = await h.request('POST', `${CONNECTORS}/${id}/execute`, { token, body: { entity: 'notes' } });
      expect(invalid.text).toBe(
        JSON.stringify({
          type: 'urn:switchboard:problem:invalid_request',
          title: 'The request does not match the endpoint schema',
          status: 400,
          detail: 'The request is invalid: /action is required',
          code: 'invalid_request',
          errors: [{ path: '/action', message: 'is required' }],
          instance: `${CONNECTORS}/${id}/execute`,
        }),
      );
      const anonymous = await h.request('GET', CONNECTORS);
      expect(anonymous.text).toBe(
        JSON.stringify({
          type: 'urn:switchboard:problem:unauthorized',
          title: 'A valid bearer access token is required',
          status: 401,
          detail: 'Send Authorization: Bearer <access token> (from POST /api/v1/account/applications/token)',
          code: 'unauthorized',
          instance: CONNECTORS,
        }),
      );
    });

    it('with the header, errors keep the problem fields and add message and errors[].message', async () => {
      const id = ids['acme']!;
      const unknown = await h.request('POST', `${CONNECTORS}/${id}/execute`, { token, headers: SDK, body: { entity: 'meetings', action: 'list' } });
      expect(unknown.status).toBe(400);
      expect(unknown.body).toMatchObject({ code: 'unknown_entity', status: 400, message: unknown.body.detail, errors: [{ message: unknown.body.detail }] });
      conforms('POST', '/api/v1/integrations/connectors/{connector_id}/execute', unknown);
      const invalid = await h.request('POST', `${CONNECTORS}/${id}/execute`, { token, headers: SDK, body: { entity: 'notes', action: 'get', params: {} } });
      expect(invalid.body.errors).toEqual([{ path: '/params/note_id', message: 'is required', userPresentableMessage: '/params/note_id is required' }]);
      const anonymous = await h.request('GET', CONNECTORS, { headers: SDK });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.message).toBe(anonymous.body.detail);
      const search = await h.request('POST', `${CONNECTORS}/${id}/execute`, {
        token,
        headers: SDK,
        body: { entity: 'notes', action: 'context_store_search', params: { query: {} } },
      });
      expect(search.status, search.text).toBe(200);
      expect(search.body.result).toMatchObject({ data: [], meta: { has_more: false, cursor: null } });
      conforms('POST', '/api/v1/integrations/connectors/{connector_id}/execute', search);
    });

    it('an application created with the airbyte envelope gets it without the header', async () => {
      const app = await createApplication(h.store, { orgName: 'org-customers', envelope: 'airbyte' });
      const t = await h.token(app);
      const r = await h.request('POST', `${CONNECTORS}/${ids['acme']}/execute`, { token: t, body: { entity: 'notes', action: 'list', params: null } });
      expect(r.status, r.text).toBe(200);
      expect(r.body.status).toBe('success');
      expect(Array.isArray(r.body.result)).toBe(true);
    });
  });
});

describeEachDialect('the Airbyte envelope under the rate limit on %s', (dialect) => {
  let h: Harness;
  afterAll(async () => h?.close());
  it("answers 429 with an integer Retry-After the SDK reads, and the SDK's fields", async () => {
    h = await startHarness(dialect, { config: { rateLimitPerMinute: 2 } });
    const t = await h.token(await h.createApp('org-limited'));
    const rs = await Promise.all(Array.from({ length: 4 }, () => h.request('GET', CONNECTORS, { token: t, headers: SDK })));
    const limited = rs.filter((r) => r.status === 429);
    expect(limited.length).toBe(2);
    for (const r of limited) {
      expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(r.body).toMatchObject({ code: 'rate_limited', message: r.body.detail });
    }
  });
});

describe('the scope hook', () => {
  it('refuses a scoped token on a route that does not declare it keeps the scope', async () => {
    const hook = customerScopeHook({ store: {} as never });
    const request = {
      principal: { customerName: 'acme', organizationId: 'o' },
      is404: false,
      params: {},
      method: 'GET',
      routeOptions: { url: '/api/v1/new-thing', config: {} },
    };
    await expect(hook(request as never)).rejects.toMatchObject({ code: 'customer_forbidden' });
    await expect(hook({ ...request, routeOptions: { url: '/x', config: { customerScoped: true } } } as never)).resolves.toBeUndefined();
    await expect(hook({ ...request, principal: { customerName: null, organizationId: 'o' } } as never)).resolves.toBeUndefined();
  });
});
