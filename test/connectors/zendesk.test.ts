/**
 * The Zendesk connector end to end: connectors/zendesk/connector.yaml run by the interpreter over
 * real HTTP against the generic simulator serving our extract (connectors/zendesk/openapi.yaml)
 * with its sidecar (simulator.yaml), no Zendesk code. Every entity × action; records checked
 * against the manifest's record schemas; writes read back; cursor pages followed to the end;
 * errors, rate limits, both credential variants and the credential check; sync through the
 * incremental exports, with deleted tickets and users leaving search.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorizeUrl, exchangeAuthorizationCode } from '../../src/auth/index.ts';
import { ConnectorRuntime, connect, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { type OAuth2Auth } from '../../src/manifest/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import type { MigrationGroup } from '../../src/store/database.ts';
import { recordChecker } from '../helpers/records.ts';

type Rec = Record<string, unknown>;
const DESCRIPTION = 'connectors/zendesk/openapi.yaml';
const SIDECAR = 'connectors/zendesk/simulator.yaml';
const manifest = getConnector('zendesk');
const expectValid = recordChecker(manifest);

const API_TOKEN = { subdomain: 'acme', email: 'agent@acme.test', api_token: 'zd_token_1' };
const basicOf = (email: string, token: string): string => Buffer.from(`${email}/token:${token}`).toString('base64');
const OAUTH_TOKEN = 'zd_oauth_1';

let sim: OpenApiSimulator;
beforeAll(async () => {
  // Only these credentials are accepted: the API token (basic's password) and one OAuth token.
  sim = await startOpenApiSimulator({ description: DESCRIPTION, sidecar: SIDECAR, seed: 23, tokens: [API_TOKEN.api_token, OAUTH_TOKEN], rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.reset();
  sim.setRateLimit(false);
});

const zendesk = (credentials: Rec = API_TOKEN) =>
  connect('zendesk' as never, { credentials, baseUrl: sim.url, retry: { baseDelayMs: 5 } } as never) as ReturnType<typeof connect>;
const run = (entity: string, action: string, params?: Rec, credentials?: Rec) =>
  zendesk(credentials).execute(entity as never, action as never, params as never) as Promise<ListEnvelope & RecordEnvelope>;
async function all(entity: string, params?: Rec): Promise<Rec[]> {
  const out: Rec[] = [];
  for await (const r of zendesk().records(entity as never, params as never)) out.push(r as Rec);
  return out;
}
const sent = (path: string) => sim.requests.filter((r) => r.path === path);
const seededIds = (resource: string): number[] => [...sim.resources.get(resource)!.records.values()].map((s) => s.record['id'] as number);

describe('zendesk: the manifest', () => {
  it('offers the issue’s entities and actions, with bodies wrapped and params unwrapped', () => {
    const actions = Object.fromEntries([...manifest.entities].map(([name, e]) => [name, Object.keys(e.def.actions).sort()]));
    expect(actions).toEqual({
      tickets: ['changes', 'create', 'get', 'list', 'scroll', 'update'],
      ticket_comments: ['create', 'list'],
      users: ['changes', 'create', 'get', 'list', 'scroll', 'update'],
      organizations: ['create', 'get', 'list', 'update'],
      groups: ['create', 'get', 'list', 'update'],
    });
    const create = manifest.entities.get('tickets')!.def.actions['create']!;
    expect(Object.keys(create.request.body as Rec)).toEqual(['ticket']);
    expect(create.params?.['subject']).toMatchObject({ type: 'string' });
    expect(create.params?.['comment']).toMatchObject({ type: 'object', required: true });
    expect(manifest.manifest.vendor_description).toMatchObject({ path: 'openapi.yaml', format: 'openapi' });
    expect(manifest.manifest.vendor_description?.source).toMatch(/own derivation.*node-zendesk@6\.0\.1/);
  });
});

describe('zendesk: tickets', () => {
  it('list: a page of tickets with the next cursor, every record valid', async () => {
    const page = await run('tickets', 'list', { page_size: 2 });
    expect(page.data).toHaveLength(2);
    expectValid('tickets', page.data as Rec[]);
    expect(typeof page.meta.next_page).toBe('string');
    expect(sent('/api/v2/tickets')[0]!.query.get('page[size]')).toBe('2');
    const next = await run('tickets', 'list', { page_size: 2, page_after: page.meta.next_page as string });
    expect((next.data as Rec[]).map((t) => t.id)).not.toContain((page.data as Rec[])[0]!.id);
    expect(sent('/api/v2/tickets')[1]!.query.get('page[after]')).toBe(page.meta.next_page);
  });

  it('list across pages: page[after] = meta.after_cursor until meta.has_more is false; the last page has no next', async () => {
    const created = (await run('tickets', 'create', { subject: 'Paged', comment: { body: 'one more' } })).data as Rec;
    const got = await all('tickets', { page_size: 2 });
    const ids = got.map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain(created.id);
    expect(ids.length).toBe(sim.resources.get('tickets')!.records.size);
    const pages = sent('/api/v2/tickets').filter((r) => r.method === 'GET');
    expect(pages).toHaveLength(Math.ceil(ids.length / 2));
    expect(pages.slice(1).every((r) => r.query.has('page[after]'))).toBe(true);
    const last = await run('tickets', 'list', { page_size: 100 });
    expect(last.meta.next_page).toBeNull();
  });

  it('create then get: the ticket as sent, its comment stored as the first comment', async () => {
    const made = (
      await run('tickets', 'create', {
        subject: 'My printer is on fire!',
        comment: { body: 'The smoke is very colorful.', public: true },
        priority: 'urgent',
        type: 'incident',
        tags: ['printer'],
      })
    ).data as Rec;
    expect(made).toMatchObject({ subject: 'My printer is on fire!', priority: 'urgent', type: 'incident', tags: ['printer'] });
    expectValid('tickets', [made]);
    expect(JSON.parse(sent('/api/v2/tickets')[0]!.rawBody)).toEqual({
      ticket: {
        subject: 'My printer is on fire!',
        comment: { body: 'The smoke is very colorful.', public: true },
        priority: 'urgent',
        type: 'incident',
        tags: ['printer'],
      },
    });
    const got = (await run('tickets', 'get', { ticket_id: made.id })).data as Rec;
    expect(got).toMatchObject({ id: made.id, subject: 'My printer is on fire!' });
    const comments = (await run('ticket_comments', 'list', { ticket_id: made.id })).data as Rec[];
    expect(comments.map((c) => c.body)).toEqual(['The smoke is very colorful.']);
  });

  it('create refuses a ticket without its first comment before sending anything', async () => {
    const e = await failure(run('tickets', 'create', { subject: 'No comment' }));
    expect(e.code).toBe('invalid_params');
    expect(sent('/api/v2/tickets')).toHaveLength(0);
  });

  it('update: status and priority change, read back; PUT with {"ticket": {...}}', async () => {
    const id = seededIds('tickets')[0]!;
    const updated = (await run('tickets', 'update', { ticket_id: id, status: 'pending', priority: 'low' })).data as Rec;
    expect(updated).toMatchObject({ id, status: 'pending', priority: 'low' });
    const put = sim.requests.find((r) => r.method === 'PUT')!;
    expect(put.path).toBe(`/api/v2/tickets/${id}`);
    expect(JSON.parse(put.rawBody)).toEqual({ ticket: { status: 'pending', priority: 'low' } });
    expect(((await run('tickets', 'get', { ticket_id: id })).data as Rec).status).toBe('pending');
  });

  it('get of a ticket that does not exist: upstream_not_found with Zendesk’s error body', async () => {
    const e = await failure(run('tickets', 'get', { ticket_id: 999 }));
    expect(e.code).toBe('upstream_not_found');
    expect(e.message).toContain('Not found');
    expect(e.details?.['upstream_body']).toEqual({ error: 'RecordNotFound', description: 'Not found' });
  });
});

describe('zendesk: ticket comments', () => {
  it('create: a comment added through a ticket update, listed per ticket in order', async () => {
    const id = seededIds('tickets')[1]!;
    const first = (await run('ticket_comments', 'create', { ticket_id: id, body: 'We are on it.', public: true })).data as Rec;
    const note = (await run('ticket_comments', 'create', { ticket_id: id, html_body: '<p>Internal: replace the fuser</p>', public: false })).data as Rec;
    expect(first).toMatchObject({ body: 'We are on it.', public: true, type: 'Comment' });
    expect(note).toMatchObject({ html_body: '<p>Internal: replace the fuser</p>', public: false });
    expectValid('ticket_comments', [first, note]);
    const puts = sim.requests.filter((r) => r.method === 'PUT');
    expect(puts.map((r) => r.path)).toEqual([`/api/v2/tickets/${id}`, `/api/v2/tickets/${id}`]);
    expect(JSON.parse(puts[0]!.rawBody)).toEqual({ ticket: { comment: { body: 'We are on it.', public: true } } });
    const listed = (await run('ticket_comments', 'list', { ticket_id: id })).data as Rec[];
    expect(listed.map((c) => c.id)).toEqual([first.id, note.id]);
    expectValid('ticket_comments', listed);
    // Another ticket's comments are its own.
    expect((await run('ticket_comments', 'list', { ticket_id: seededIds('tickets')[2]! })).data as Rec[]).toEqual([]);
  });

  it('create needs a body or an html_body; list pages with page[after]', async () => {
    const id = seededIds('tickets')[3]!;
    expect((await failure(run('ticket_comments', 'create', { ticket_id: id, public: true }))).code).toBe('invalid_params');
    for (let i = 0; i < 5; i++) await run('ticket_comments', 'create', { ticket_id: id, body: `reply ${i}` });
    const bodies = (await all('ticket_comments', { ticket_id: id, page_size: 2 })).map((c) => c.body);
    expect(bodies).toEqual(['reply 0', 'reply 1', 'reply 2', 'reply 3', 'reply 4']);
    expect(sent(`/api/v2/tickets/${id}/comments`)).toHaveLength(3);
  });

  it('list of a ticket that does not exist answers no comments (the simulator) and a bad id is refused before sending', async () => {
    expect((await failure(run('ticket_comments', 'list', { ticket_id: 'abc' }))).code).toBe('invalid_params');
  });
});

describe('zendesk: users, organizations, groups', () => {
  const cases: [string, string, Rec, Rec][] = [
    ['users', 'user_id', { name: 'Roger Wilco', email: 'roger@example.com', role: 'end-user' }, { name: 'Roger W.', notes: 'VIP' }],
    ['organizations', 'organization_id', { name: 'Acme', domain_names: ['acme.test'], tags: ['gold'] }, { name: 'Acme Inc', notes: 'renewal in May' }],
    ['groups', 'group_id', { name: 'Second Level Support', description: 'Escalations', is_public: true }, { name: 'Tier 2' }],
  ];
  for (const [entity, key, create, update] of cases) {
    it(`${entity}: list (every page), create, get, update`, async () => {
      const page = await run(entity, 'list', { page_size: 2 });
      expect(page.data).toHaveLength(2);
      expectValid(entity, page.data as Rec[]);
      const made = (await run(entity, 'create', create)).data as Rec;
      expect(made).toMatchObject(create);
      expectValid(entity, [made]);
      const singular = entity.replace(/s$/, '');
      expect(JSON.parse(sim.requests.find((r) => r.method === 'POST')!.rawBody)).toEqual({ [singular]: create });
      expect((await run(entity, 'get', { [key]: made.id })).data).toMatchObject({ id: made.id, ...create });
      const changed = (await run(entity, 'update', { [key]: made.id, ...update })).data as Rec;
      expect(changed).toMatchObject({ id: made.id, ...update });
      expect(JSON.parse(sim.requests.find((r) => r.method === 'PUT')!.rawBody)).toEqual({ [singular]: update });
      expect((await run(entity, 'get', { [key]: made.id })).data).toMatchObject(update);
      const everything = await all(entity, { page_size: 2 });
      expect(everything.map((r) => r.id)).toContain(made.id);
      expect(everything).toHaveLength(sim.resources.get(entity)!.records.size);
    });
  }

  it('users.create needs a name; users.list filters by role', async () => {
    expect((await failure(run('users', 'create', { email: 'x@example.com' }))).code).toBe('invalid_params');
    await run('users', 'create', { name: 'Agent Smith', role: 'agent' });
    await run('users', 'list', { role: 'agent' });
    expect(sent('/api/v2/users').at(-1)!.query.get('role')).toBe('agent');
    expect((await failure(run('users', 'list', { role: 'owner' }))).code).toBe('invalid_params');
  });
});

describe('zendesk: errors and rate limits', () => {
  it('a 422 RecordInvalid is upstream_rejected with Zendesk’s description and details', async () => {
    const body = {
      error: 'RecordInvalid',
      description: 'Record validation errors',
      details: { email: [{ description: 'Email: roger@example.com is already being used by another user', error: 'DuplicateValue' }] },
    };
    sim.inject({ path: '/api/v2/users', status: 422, json: body });
    const e = await failure(run('users', 'create', { name: 'Roger', email: 'roger@example.com' }));
    expect(e.code).toBe('upstream_rejected');
    expect(e.message).toContain('Record validation errors');
    expect(e.details?.['upstream_body']).toEqual(body);
  });

  it('a 429 with Retry-After is waited out and retried', async () => {
    sim.inject({
      path: '/api/v2/groups',
      status: 429,
      headers: { 'Retry-After': '0' },
      text: 'Rate limit for ticket updates exceeded, please wait before updating this ticket again',
      contentType: 'text/plain',
    });
    const page = await run('groups', 'list', {});
    expect(page.data.length).toBeGreaterThan(0);
    expect(sent('/api/v2/groups')).toHaveLength(2);
  });

  it('the account’s per-minute limit: X-Rate-Limit headers, then a 429 whose Retry-After is too long to wait', async () => {
    sim.setRateLimit({
      limit: 2,
      window_seconds: 3600,
      headers: { limit: 'X-Rate-Limit', remaining: 'X-Rate-Limit-Remaining', reset: 'ratelimit-reset' },
      reset: 'seconds',
    });
    const rt = new ConnectorRuntime(manifest, API_TOKEN, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5 } });
    const seen: Record<string, string | null>[] = [];
    const spy = new ConnectorRuntime(manifest, API_TOKEN, {
      baseUrl: sim.url,
      limiter: null,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        seen.push({ limit: res.headers.get('x-rate-limit'), remaining: res.headers.get('x-rate-limit-remaining'), retry: res.headers.get('retry-after') });
        return res;
      },
    });
    await spy.execute('groups', 'list', {});
    expect(seen[0]).toMatchObject({ limit: '2', remaining: '1' });
    await rt.execute('groups', 'list', {});
    const e = await failure(rt.execute('groups', 'list', {}));
    expect(e.code).toBe('upstream_rate_limited');
    expect(Number(e.details?.['retry_after_ms'])).toBeGreaterThan(60_000);
  });
});

describe('zendesk: credentials', () => {
  it('API token: HTTP basic "{email}/token:{api_token}" on https://{subdomain}.zendesk.com', async () => {
    const urls: string[] = [];
    const auths: string[] = [];
    const rt = new ConnectorRuntime(manifest, API_TOKEN, {
      limiter: null,
      fetch: async (input, init) => {
        urls.push(String(input));
        auths.push(String(new Headers(init?.headers).get('authorization')));
        return new Response(JSON.stringify({ group: { id: 7, name: 'Support' } }), { status: 200, headers: { 'content-type': 'application/json' } });
      },
    });
    await rt.execute('groups', 'get', { group_id: 7 });
    expect(urls).toEqual(['https://acme.zendesk.com/api/v2/groups/7']);
    expect(auths).toEqual([`Basic ${basicOf('agent@acme.test', 'zd_token_1')}`]);
    expect(Buffer.from(auths[0]!.slice(6), 'base64').toString()).toBe('agent@acme.test/token:zd_token_1');
  });

  it('a subdomain that is not one host label is refused before anything is sent', async () => {
    for (const subdomain of ['evil.com', 'a/b', 'ACME!']) {
      const e = await failure(
        (async () =>
          connect('zendesk' as never, { credentials: { ...API_TOKEN, subdomain } } as never).execute('groups' as never, 'list' as never, {} as never))(),
      );
      expect(e.code).toBe('invalid_credentials');
    }
  });

  it('a wrong token: upstream_credentials_rejected with Zendesk’s 401', async () => {
    const e = await failure(run('groups', 'list', {}, { ...API_TOKEN, api_token: 'wrong' }));
    expect(e.code).toBe('upstream_credentials_rejected');
    expect(e.details?.['upstream_body']).toMatchObject({ error: "Couldn't authenticate you" });
  });

  it('OAuth: consent on the account’s host, the code exchanged at /oauth/tokens, the token sent as a bearer', async () => {
    const variant = manifest.manifest.auth.find((a) => a.type === 'oauth2') as OAuth2Auth;
    expect(variant).toMatchObject({ name: 'oauth', scopes: ['read', 'write'] });
    const redirectUri = 'https://app.example/callback';
    // The URLs are on the account's host, from its subdomain; unknown without one.
    expect(authorizeUrl(variant, { clientId: 'c', redirectUri, state: 's0', credentials: { subdomain: 'acme' } })).toMatch(
      /^https:\/\/acme\.zendesk\.com\/oauth\/authorizations\/new\?response_type=code&client_id=c&/,
    );
    expect(() => authorizeUrl(variant, { clientId: 'c', redirectUri, state: 's0' })).toThrow(/credentials\.subdomain is required/);
    expect(() => authorizeUrl(variant, { clientId: 'c', redirectUri, state: 's0', credentials: { subdomain: 'evil.com/x' } })).toThrow(/one host label/);
    const seenToken: string[] = [];
    await failure(
      exchangeAuthorizationCode(
        variant,
        { clientId: 'c', clientSecret: 's' },
        'code',
        redirectUri,
        async (input) => {
          seenToken.push(String(input));
          return new Response('{"error":"invalid_grant"}', { status: 400, headers: { 'content-type': 'application/json' } });
        },
        1000,
        { subdomain: 'acme' },
      ),
    );
    expect(seenToken).toEqual(['https://acme.zendesk.com/oauth/tokens']);
    // Against the simulator: its URLs instead.
    const consent = authorizeUrl(variant, { clientId: 'sim_client', redirectUri, state: 's1', authorizeUrl: `${sim.url}/oauth/authorizations/new` });
    const res = await fetch(consent, { redirect: 'manual' });
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.get('state')).toBe('s1');
    const tokens = await exchangeAuthorizationCode(
      variant,
      { clientId: 'sim_client', clientSecret: 'sim_secret', tokenUrl: `${sim.url}/oauth/tokens` },
      location.searchParams.get('code')!,
      redirectUri,
    );
    const page = await run('tickets', 'list', { page_size: 1 }, { subdomain: 'acme', access_token: tokens.access_token });
    expect(page.data).toHaveLength(1);
    expect(sent('/api/v2/tickets')[0]!.headers.authorization).toBe(`Bearer ${tokens.access_token}`);
    // The fixed token the simulator accepts works too, and a revoked one does not.
    expect((await run('groups', 'list', {}, { subdomain: 'acme', access_token: OAUTH_TOKEN })).data.length).toBeGreaterThan(0);
    expect((await failure(run('groups', 'list', {}, { subdomain: 'acme', access_token: 'revoked' }))).code).toBe('upstream_credentials_rejected');
  });

  it('check: Show Self proves the credentials and reports the user', async () => {
    const ok = await zendesk().check();
    expect(ok).toMatchObject({ ok: true, connector_type: 'zendesk', checked: true });
    expect(ok.info).toEqual({ user_id: expect.any(Number), email: expect.any(String), role: expect.any(String) });
    expect(sent('/api/v2/users/me')).toHaveLength(1);
    expect((await zendesk({ subdomain: 'acme', access_token: OAUTH_TOKEN }).check()).ok).toBe(true);
    expect((await failure(zendesk({ ...API_TOKEN, api_token: 'nope' }).check())).code).toBe('upstream_credentials_rejected');
  });

  it('check: the anonymous user Zendesk can answer (id null) does not pass', async () => {
    sim.inject({ path: '/api/v2/users/me', status: 200, json: { user: { id: null, name: 'Anonymous user', email: 'invalid@example.com', role: 'end-user' } } });
    expect((await failure(zendesk().check())).code).toBe('upstream_credentials_rejected');
  });
});

describe('zendesk: incremental exports (sync-only actions)', () => {
  const pages = async (entity: string, action: 'scroll' | 'changes', params: Rec): Promise<Rec[]> => {
    const out: Rec[] = [];
    const rt = new ConnectorRuntime(manifest, API_TOKEN, { baseUrl: sim.url, limiter: null });
    for await (const { page } of rt.pageSteps(entity, params, undefined, action)) out.push(...(page.data as Rec[]));
    return out;
  };

  it('tickets: every ticket changed since start_time, page by page through after_url until end_of_stream', async () => {
    const got = await pages('tickets', 'scroll', { start_time: 0, per_page: 2 });
    expect(got.map((t) => t.id).sort()).toEqual(seededIds('tickets').sort());
    expectValid('tickets', got);
    const reqs = sent('/api/v2/incremental/tickets/cursor');
    expect(reqs).toHaveLength(Math.ceil(got.length / 2));
    expect(reqs[0]!.query.get('start_time')).toBe('0');
    expect(reqs.slice(1).every((r) => r.query.has('cursor'))).toBe(true);
  });

  it('changes: only what changed since the point, deleted tickets included with status "deleted"', async () => {
    const [keep, gone] = seededIds('tickets');
    const since = Math.floor(Date.now() / 1000);
    await run('tickets', 'update', { ticket_id: keep!, subject: 'changed' });
    const del = await fetch(`${sim.url}/api/v2/tickets/${gone!}`, {
      method: 'DELETE',
      headers: { authorization: `Basic ${basicOf(API_TOKEN.email, API_TOKEN.api_token)}` },
    });
    expect(del.status).toBe(204);
    expect((await failure(run('tickets', 'get', { ticket_id: gone! }))).code).toBe('upstream_not_found');
    const got = await pages('tickets', 'changes', { start_time: since, per_page: 1000 });
    // Other tests here changed tickets in the same second too: only records changed since the point come back.
    expect(Object.fromEntries(got.map((t) => [t.id, t.status === 'deleted' ? 'deleted' : t.subject]))).toMatchObject({
      [keep!]: 'changed',
      [gone!]: 'deleted',
    });
    for (const t of got) expect(Date.parse(t.updated_at as string) / 1000).toBeGreaterThanOrEqual(since);
    expect(got.length).toBeLessThan(sim.resources.get('tickets')!.records.size);
    expect(got.filter((t) => t.status === 'deleted').map((t) => t.id)).toEqual([gone]);
  });

  it('users: the export shows a deleted user with active false', async () => {
    const [u] = seededIds('users');
    const since = Math.floor(Date.now() / 1000);
    const del = await fetch(`${sim.url}/api/v2/users/${u!}`, { method: 'DELETE', headers: { authorization: `Bearer ${OAUTH_TOKEN}` } });
    expect(((await del.json()) as { user: Rec }).user).toMatchObject({ id: u, active: false });
    const got = await pages('users', 'changes', { start_time: since });
    expect(got.map((x) => [x.id, x.active])).toContainEqual([u, false]);
    // Only users changed since the point (other tests here changed some too).
    for (const x of got) expect(Date.parse(x.updated_at as string) / 1000).toBeGreaterThanOrEqual(since);
    expect(got.filter((x) => x.active === false).map((x) => x.id)).toEqual([u]);
  });
});

// PostgreSQL shows as skipped, with the reason, when SWITCHBOARD_TEST_POSTGRES_URL is not set.
describeEachDialect('zendesk sync on %s', (name) => {
  const open = (groups?: MigrationGroup[]): Promise<TestDatabase> => openTestDatabase(name, groups);
  let tdb: TestDatabase;
  let store: RecordStore;
  let upstream: OpenApiSimulator;
  let engine: SyncEngine;
  let requests: string[] = [];

  beforeAll(async () => {
    upstream = await startOpenApiSimulator({ description: DESCRIPTION, sidecar: SIDECAR, seed: 99, rateLimit: false });
    tdb = await open();
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test' });
    engine = new SyncEngine({
      database: tdb.database,
      sink: store,
      fullRefreshEvery: 3,
      runtimeFor: async () => ({
        manifest,
        runtime: new ConnectorRuntime(manifest, API_TOKEN, {
          baseUrl: upstream.url,
          limiter: null,
          fetch: async (input, init) => {
            const u = new URL(String(input));
            requests.push(
              `${init?.method ?? 'GET'} ${u.pathname}${u.searchParams.has('start_time') ? `?start_time=${u.searchParams.get('start_time')!}` : ''}`,
            );
            return fetch(input, init);
          },
        }),
      }),
    });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
    await upstream.close();
  });

  const ids = (resource: string): number[] => [...upstream.resources.get(resource)!.records.values()].map((s) => s.record['id'] as number);
  const auth = { authorization: `Basic ${basicOf(API_TOKEN.email, API_TOKEN.api_token)}`, 'content-type': 'application/json' };

  it('full run through the exports, then an incremental one from the newest updated_at: changes stored, deletions removed', async () => {
    // A comment, so the per-ticket comments sync has something to find.
    const ticket = ids('tickets')[0]!;
    await fetch(`${upstream.url}/api/v2/tickets/${ticket}`, {
      method: 'PUT',
      headers: auth,
      body: JSON.stringify({ ticket: { comment: { body: 'first reply' } } }),
    });
    await engine.register('zd');
    requests = [];
    const full = await engine.runOnce('zd');
    expect(full.full).toBe(true);
    expect(full.entities['tickets']).toMatchObject({ records: 5, deleted: 0 });
    expect(full.entities['users']).toMatchObject({ records: 5 });
    expect(full.entities['organizations']).toMatchObject({ records: 5 });
    expect(full.entities['groups']).toMatchObject({ records: 5 });
    expect(full.entities['ticket_comments']).toMatchObject({ records: 1 });
    expect(requests).toContain('GET /api/v2/incremental/tickets/cursor?start_time=0');
    expect(requests).toContain('GET /api/v2/incremental/users/cursor?start_time=0');
    // The ticket list is read only to walk the tickets for their comments (ticket_comments' for_each).
    expect(requests.filter((r) => r.startsWith('GET /api/v2/tickets/') && r.endsWith('/comments'))).toHaveLength(5);
    expect(await store.count('zd', 'tickets')).toBe(5);

    // Upstream: one ticket renamed, one deleted (status "deleted" in the export), one user deleted (active false).
    const [renamed, deleted] = [ids('tickets')[1]!, ids('tickets')[2]!];
    const user = ids('users')[0]!;
    await fetch(`${upstream.url}/api/v2/tickets/${renamed}`, {
      method: 'PUT',
      headers: auth,
      body: JSON.stringify({ ticket: { subject: 'renamed upstream' } }),
    });
    expect((await fetch(`${upstream.url}/api/v2/tickets/${deleted}`, { method: 'DELETE', headers: auth })).status).toBe(204);
    expect((await fetch(`${upstream.url}/api/v2/users/${user}`, { method: 'DELETE', headers: auth })).status).toBe(200);
    requests = [];
    const inc = await engine.runOnce('zd');
    expect(inc.full).toBe(false);
    const incTickets = requests.find((r) => r.startsWith('GET /api/v2/incremental/tickets/cursor'))!;
    expect(Number(/start_time=(\d+)/.exec(incTickets)![1])).toBeGreaterThan(0);
    expect(inc.entities['tickets']?.deleted).toBe(1);
    expect(inc.entities['users']?.deleted).toBe(1);
    expect(await store.count('zd', 'tickets')).toBe(4);
    expect(await store.count('zd', 'users')).toBe(4);
    const def = { primaryKey: 'id', fields: manifest.entities.get('tickets')!.def.search!.fields as Record<string, 'string'> };
    const hit = await store.search('zd', 'tickets', def, { query: { filter: { eq: { id: renamed } } }, fields: ['id', 'subject'] });
    expect(hit.data).toEqual([{ id: renamed, subject: 'renamed upstream' }]);
    const none = await store.search('zd', 'tickets', def, { query: { filter: { eq: { id: deleted } } }, fields: ['id'] });
    expect(none.data).toEqual([]);
  }, 60_000);
});
