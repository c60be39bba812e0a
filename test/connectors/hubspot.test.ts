/**
 * The HubSpot connector end to end: connectors/hubspot/connector.yaml run by the interpreter over
 * real HTTP against the generic simulator serving the vendored description
 * (connectors/hubspot/openapi.yaml, derived from @hubspot/api-client) with its sidecar
 * (connectors/hubspot/simulator.yaml) — no HubSpot-specific simulator code. Every entity × action,
 * pagination across pages, the search-based `changes` actions, incremental sync with archived
 * records removed, error categories, rate limits, both auth variants, OAuth token refresh through
 * the interpreter, and the credential check.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorizeUrl, exchangeAuthorizationCode } from '../../src/auth/index.ts';
import { connect, ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { SYNC_ONLY_ACTIONS, type OAuth2Auth } from '../../src/manifest/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { loadSidecar } from '../../src/simulator/sidecar.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import type { MigrationGroup } from '../../src/store/database.ts';
import { recordChecker } from '../helpers/records.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/hubspot';
const manifest = getConnector('hubspot');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const PAT = sidecar.sandbox?.credentials?.['private_app_token'] as string;
const recordsValid = recordChecker(manifest);

/** entity → [id param, last-modified property, a property to write]. */
const ENTITIES: Record<string, [string, string, string]> = {
  contacts: ['contact_id', 'lastmodifieddate', 'firstname'],
  companies: ['company_id', 'hs_lastmodifieddate', 'name'],
  deals: ['deal_id', 'hs_lastmodifieddate', 'dealname'],
  tickets: ['ticket_id', 'hs_lastmodifieddate', 'subject'],
};

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar, seed: 3 });
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.reset();
  sim.setRateLimit(false);
});

const hubspot = (credentials: Rec = { private_app_token: PAT }) =>
  connect('hubspot', { credentials: credentials as never, baseUrl: sim.url, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params?: Rec) =>
  hubspot().execute(entity as never, action as never, params as never) as Promise<ListEnvelope & RecordEnvelope>;
const runtime = (credentials: Rec = { private_app_token: PAT }) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
/** The simulator's records of a resource that are not archived. */
const live = (entity: string) => [...(sim.resources.get(entity)?.records.values() ?? [])].map((s) => s.record).filter((r) => r['archived'] !== true);
const sent = (path: string) => sim.requests.filter((r) => r.path === path);

function expectValid(entity: string, records: Rec[]): void {
  recordsValid(entity, records);
  for (const r of records) {
    expect(r).toMatchObject({
      id: expect.stringMatching(/^\d+$/),
      properties: expect.any(Object),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      archived: false,
    });
  }
}

describe('the manifest', () => {
  it('declares list/get/create/update for contacts, companies, deals and tickets, plus the search-based changes for sync', () => {
    const actions = Object.fromEntries([...manifest.entities].map(([name, e]) => [name, Object.keys(e.def.actions).sort()]));
    expect(actions).toEqual(Object.fromEntries(Object.keys(ENTITIES).map((e) => [e, ['changes', 'create', 'get', 'list', 'update']])));
    expect(SYNC_ONLY_ACTIONS.has('changes')).toBe(true);
    for (const [name, [, lastmod]] of Object.entries(ENTITIES)) {
      const e = manifest.entities.get(name)!.def;
      expect(e.sync).toMatchObject({
        incremental: { action: 'changes', param: 'since', cursor_field: 'updatedAt', format: 'unix_ms' },
        removals: { entity: name, params: { archived: true } },
      });
      expect(JSON.stringify(e.actions['changes']?.request.body)).toContain(`"propertyName":"${lastmod}","operator":"GTE"`);
    }
  });

  it("has a private app bearer variant and an OAuth variant with HubSpot's URLs, refresh and expiry", () => {
    expect(manifest.manifest.auth.map((v) => [v.name, v.type])).toEqual([
      ['private_app', 'bearer'],
      ['oauth', 'oauth2'],
    ]);
    const oauth = manifest.manifest.auth[1] as OAuth2Auth;
    expect(oauth).toMatchObject({
      authorize_url: 'https://app.hubspot.com/oauth/authorize',
      token_url: 'https://api.hubapi.com/oauth/v1/token',
      refreshes: true,
      expires: true,
      token_request_auth: 'client_secret_post',
    });
    expect(manifest.manifest.vendor_description).toMatchObject({ path: 'openapi.yaml', format: 'openapi', trimmed_by: 'derive.mjs' });
  });
});

describe('property values of every type HubSpot takes (recorded traffic: amount 10000, a number)', () => {
  it('create and update a deal with numbers and booleans: sent as given, kept and answered as strings', async () => {
    const made = (await run('deals', 'create', { properties: { dealname: 'Numbers', amount: 10000, hs_is_closed: false } })).data;
    expect(JSON.parse(sent('/crm/v3/objects/deals').at(-1)!.rawBody)).toEqual({ properties: { dealname: 'Numbers', amount: 10000, hs_is_closed: false } });
    expect(made['properties']).toMatchObject({ dealname: 'Numbers', amount: '10000', hs_is_closed: 'false' });
    expectValid('deals', [made]);
    const id = made['id'] as string;
    const edited = (await run('deals', 'update', { deal_id: id, properties: { amount: 12500.5, hs_priority: 'high' } })).data;
    expect(JSON.parse(sent(`/crm/v3/objects/deals/${id}`).at(-1)!.rawBody)).toEqual({ properties: { amount: 12500.5, hs_priority: 'high' } });
    expect(edited['properties']).toMatchObject({ dealname: 'Numbers', amount: '12500.5', hs_priority: 'high' });
  });

  it("every entity's create and update take numbers and booleans; objects and arrays are still refused before sending", async () => {
    for (const [entity, [idParam]] of Object.entries(ENTITIES)) {
      const made = (await run(entity, 'create', { properties: { hs_custom_count: 3, hs_custom_flag: true } })).data;
      expect(made['properties']).toMatchObject({ hs_custom_count: '3', hs_custom_flag: 'true' });
      const edited = (await run(entity, 'update', { [idParam]: made['id'], properties: { hs_custom_count: 4 } })).data;
      expect(edited['properties']).toMatchObject({ hs_custom_count: '4' });
      const before = sim.requests.length;
      expect((await failure(run(entity, 'update', { [idParam]: made['id'], properties: { nested: { a: 1 } } }))).code).toBe('invalid_params');
      expect(sim.requests.length).toBe(before);
    }
  });
});

for (const [entity, [idParam, lastmod, field]] of Object.entries(ENTITIES)) {
  describe(`hubspot ${entity}`, () => {
    it("list: a page of records with the requested properties sent one per repetition, and the next page's after", async () => {
      const page = await run(entity, 'list', { limit: 2, properties: [field, lastmod] });
      expect(page.data).toHaveLength(2);
      expectValid(entity, page.data as Rec[]);
      expect(page.meta.next_page).toEqual(expect.any(String));
      const q = sent(`/crm/v3/objects/${entity}`).at(-1)!.query;
      expect(q.getAll('properties')).toEqual([field, lastmod]);
      expect(q.get('limit')).toBe('2');
      expect(sent(`/crm/v3/objects/${entity}`).at(-1)!.headers.authorization).toBe(`Bearer ${PAT}`);
    });

    it('list: records() follows paging.next.after through every page; the last page has no paging', async () => {
      const want = live(entity).map((r) => r['id']);
      const got: Rec[] = [];
      for await (const r of hubspot().records(entity as never, { limit: 2 } as never)) got.push(r as Rec);
      expect(got.map((r) => r['id'])).toEqual(want);
      const pages = sent(`/crm/v3/objects/${entity}`);
      expect(pages).toHaveLength(Math.ceil(want.length / 2));
      expect(pages.slice(1).every((p) => p.query.get('after') !== null)).toBe(true);
      const last = await run(entity, 'list', { limit: 2, after: pages.at(-1)!.query.get('after') });
      expect(last.meta.next_page).toBeNull();
    });

    it("get: one record by id; an unknown id is upstream_not_found with HubSpot's message and correlationId", async () => {
      const id = live(entity)[0]!['id'] as string;
      const got = await run(entity, 'get', { [idParam]: id, properties: [field] });
      expect(got.data).toEqual(sim.resources.get(entity)!.records.get(id)!.record);
      expectValid(entity, [got.data as Rec]);
      const e = await failure(run(entity, 'get', { [idParam]: '999' }));
      expect(e.code).toBe('upstream_not_found');
      expect(e.message).toMatch(/^hubspot: resource not found \(correlationId [0-9a-f-]{36}\)$/);
    });

    it('create then get: a {properties} body; the record keeps id, properties, createdAt, updatedAt, archived', async () => {
      const created = (await run(entity, 'create', { properties: { [field]: `new ${entity}` } })).data as Rec;
      expectValid(entity, [created]);
      expect(created['properties']).toMatchObject({
        [field]: `new ${entity}`,
        hs_object_id: created['id'],
        createdate: created['createdAt'],
        [lastmod]: created['updatedAt'],
      });
      expect(JSON.parse(sent(`/crm/v3/objects/${entity}`).at(-1)!.rawBody)).toEqual({ properties: { [field]: `new ${entity}` } });
      const got = (await run(entity, 'get', { [idParam]: created['id'] })).data as Rec;
      expect(got).toEqual(created);
    });

    it('create with associations sends them as HubSpot takes them', async () => {
      const associations = [{ to: { id: '101' }, types: [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 1 }] }];
      await run(entity, 'create', { properties: { [field]: 'associated' }, associations });
      expect(JSON.parse(sent(`/crm/v3/objects/${entity}`).at(-1)!.rawBody)).toEqual({ properties: { [field]: 'associated' }, associations });
      const bad = await failure(run(entity, 'create', { properties: { [field]: { value: 1 } } }));
      expect(bad.code).toBe('invalid_params');
    });

    it('update then get: the given properties change, the others stay, updatedAt and the last-modified property move', async () => {
      const created = (await run(entity, 'create', { properties: { [field]: 'before', description: 'kept' } })).data as Rec;
      const updated = (await run(entity, 'update', { [idParam]: created['id'], properties: { [field]: 'after' } })).data as Rec;
      expect(updated['properties']).toMatchObject({ [field]: 'after', description: 'kept' });
      expect(Date.parse(updated['updatedAt'] as string)).toBeGreaterThanOrEqual(Date.parse(created['updatedAt'] as string));
      expect((updated['properties'] as Rec)[lastmod]).toBe(updated['updatedAt']);
      expect(sent(`/crm/v3/objects/${entity}/${String(created['id'])}`).at(-1)!.method).toBe('PATCH');
      expect(((await run(entity, 'get', { [idParam]: created['id'] })).data as Rec)['properties']).toMatchObject({ [field]: 'after', description: 'kept' });
      expect((await failure(run(entity, 'update', { [idParam]: '999', properties: { [field]: 'x' } }))).code).toBe('upstream_not_found');
    });

    it(`changes: a search on ${lastmod} GTE since, oldest first, paged through the body's after`, async () => {
      const since = Date.now();
      const a = (await run(entity, 'create', { properties: { [field]: 'changed a' } })).data as Rec;
      const b = (await run(entity, 'create', { properties: { [field]: 'changed b' } })).data as Rec;
      await run(entity, 'update', { [idParam]: a['id'], properties: { [field]: 'changed a again' } });
      const got: Rec[] = [];
      for await (const { page } of runtime().pageSteps(entity, { since, limit: 1, properties: [field, lastmod] }, undefined, 'changes')) got.push(...page.data);
      // Exactly the two records written since, oldest change first.
      expect(got.map((r) => r['id']).sort()).toEqual([a['id'], b['id']].sort());
      const stamps = got.map((r) => Date.parse((r['properties'] as Rec)[lastmod] as string));
      expect(stamps).toEqual([...stamps].sort((x, y) => x - y));
      expect((got.find((r) => r['id'] === a['id'])!['properties'] as Rec)[field]).toBe('changed a again');
      const searches = sent(`/crm/v3/objects/${entity}/search`);
      expect(searches).toHaveLength(2);
      expect(JSON.parse(searches[0]!.rawBody)).toEqual({
        filterGroups: [{ filters: [{ propertyName: lastmod, operator: 'GTE', value: String(since) }] }],
        sorts: [lastmod],
        properties: [field, lastmod],
        limit: 1,
      });
      expect(JSON.parse(searches[1]!.rawBody).after).toEqual(expect.any(String));
      expect((await failure(run(entity, 'changes', { since }))).code).toBe('unknown_action');
    });
  });
}

describe('hubspot errors and rate limits', () => {
  it('a rejected token is upstream_credentials_rejected with the category and message', async () => {
    const e = await failure(hubspot({ private_app_token: 'pat-na1-wrong' }).execute('contacts', 'list', {}));
    expect(e.code).toBe('upstream_credentials_rejected');
    expect(e.message).toMatch(/^hubspot: INVALID_AUTHENTICATION: Authentication credentials not found/);
  });

  it('VALIDATION_ERROR and CONFLICT are upstream_rejected with the category, message and correlationId', async () => {
    sim.inject({
      path: '/crm/v3/objects/contacts',
      status: 409,
      json: {
        status: 'error',
        message: 'Contact already exists. Existing ID: 151',
        correlationId: 'c0ffee00-0000-4000-8000-000000000001',
        category: 'CONFLICT',
      },
    });
    const e = await failure(run('contacts', 'create', { properties: { email: 'dup@example.com' } }));
    expect(e.code).toBe('upstream_rejected');
    expect(e.message).toBe('hubspot: CONFLICT: Contact already exists. Existing ID: 151 (correlationId c0ffee00-0000-4000-8000-000000000001)');
    // The simulator's own 400 (the description refuses a limit that is not an integer) in HubSpot's shape.
    const raw = await fetch(`${sim.url}/crm/v3/objects/deals?limit=many`, { headers: { authorization: `Bearer ${PAT}` } });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({
      status: 'error',
      category: 'VALIDATION_ERROR',
      correlationId: expect.any(String),
      message: expect.stringContaining('limit'),
    });
  });

  it('every response carries X-HubSpot-RateLimit-*; over the limit is a 429 RATE_LIMITS, upstream_rate_limited without holding the caller for a long wait', async () => {
    sim.setRateLimit({
      limit: 2,
      window_seconds: 600,
      headers: { limit: 'X-HubSpot-RateLimit-Max', remaining: 'X-HubSpot-RateLimit-Remaining', window_ms: 'X-HubSpot-RateLimit-Interval-Milliseconds' },
    });
    const first = await fetch(`${sim.url}/crm/v3/objects/contacts?limit=1`, { headers: { authorization: `Bearer ${PAT}` } });
    expect([
      first.headers.get('x-hubspot-ratelimit-max'),
      first.headers.get('x-hubspot-ratelimit-remaining'),
      first.headers.get('x-hubspot-ratelimit-interval-milliseconds'),
    ]).toEqual(['2', '1', '600000']);
    await run('contacts', 'list', { limit: 1 });
    const e = await failure(run('contacts', 'list', { limit: 1 }));
    expect(e.code).toBe('upstream_rate_limited');
    expect(e.message).toMatch(/Rate limit of 2 requests/);
    expect(e.details).toMatchObject({ upstream_body: { category: 'RATE_LIMITS', correlationId: expect.any(String) }, not_executed: true });
    // The simulator's 429 asks for the rest of the 10-minute window (Retry-After), longer than the
    // connector waits (retry.max_retry_after_ms): the call fails at once, saying how long to wait.
    expect(e.details['retry_after_ms']).toBeGreaterThan(60_000);
    expect(sent('/crm/v3/objects/contacts').length).toBe(2 + 1);
  });

  it('a 429 on a create is retried (HubSpot did not run it) and creates one record', async () => {
    const before = sim.resources.get('tickets')!.records.size;
    sim.inject({
      path: '/crm/v3/objects/tickets',
      status: 429,
      json: {
        status: 'error',
        message: 'You have reached your secondly limit.',
        errorType: 'RATE_LIMIT',
        correlationId: 'c0ffee00-0000-4000-8000-000000000002',
        policyName: 'SECONDLY',
        category: 'RATE_LIMITS',
      },
    });
    const created = (await run('tickets', 'create', { properties: { subject: 'after a 429' } })).data as Rec;
    expect(sent('/crm/v3/objects/tickets')).toHaveLength(2);
    expect(sim.resources.get('tickets')!.records.size).toBe(before + 1);
    expect((created['properties'] as Rec)['subject']).toBe('after a 429');
  });
});

describe('hubspot auth and check', () => {
  const variant = manifest.manifest.auth.find((v) => v.name === 'oauth') as OAuth2Auth;
  const onSim = (url: string): string => `${sim.url}${new URL(url).pathname}`;
  const client = () => ({ clientId: sim.oauth.clientId, clientSecret: sim.oauth.clientSecret, tokenUrl: onSim(variant.token_url) });

  /** Consent and code exchange against the simulated flow: HubSpot's tokens refresh and expire in 30 minutes. */
  async function grant(): Promise<{ access_token: string; refresh_token?: string; expires_at?: number }> {
    const consent = authorizeUrl(variant, {
      clientId: sim.oauth.clientId,
      redirectUri: 'https://app.example/cb',
      state: 'st-9',
      authorizeUrl: onSim(variant.authorize_url),
    });
    const redirect = await fetch(consent, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const back = new URL(redirect.headers.get('location') as string);
    expect(back.searchParams.get('state')).toBe('st-9');
    return exchangeAuthorizationCode(variant, client(), back.searchParams.get('code') as string, 'https://app.example/cb');
  }

  it('the OAuth flow issues a 30-minute access token and a refresh token that work through the interpreter', async () => {
    const tokens = await grant();
    expect(tokens).toMatchObject({ access_token: expect.any(String), refresh_token: expect.any(String) });
    expect(tokens.expires_at! - Math.floor(Date.now() / 1000)).toBeGreaterThan(1790);
    expect(tokens.expires_at! - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(1800);
    const rt = new ConnectorRuntime(manifest, tokens, { baseUrl: sim.url, oauthClient: client() });
    expect(rt.authVariant).toBe('oauth');
    const page = (await rt.execute('deals', 'list', { limit: 1 })) as ListEnvelope;
    expect(page.data).toHaveLength(1);
    expect(sent('/crm/v3/objects/deals').at(-1)!.headers.authorization).toBe(`Bearer ${tokens.access_token}`);
  });

  it('an expired access token (401 EXPIRED_AUTHENTICATION) is refreshed with the refresh token and the call retried', async () => {
    const tokens = await grant();
    const stored: Rec[] = [];
    const rt = new ConnectorRuntime(manifest, tokens, { baseUrl: sim.url, oauthClient: client(), onTokenRefresh: (c) => void stored.push(c) });
    await rt.execute('contacts', 'list', { limit: 1 });
    sim.expireAccessTokens();
    const raw = await fetch(`${sim.url}/crm/v3/objects/contacts?limit=1`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(raw.status).toBe(401);
    expect(await raw.json()).toMatchObject({ status: 'error', category: 'EXPIRED_AUTHENTICATION', message: expect.stringMatching(/expired/) });
    sim.reset();

    const page = (await rt.execute('contacts', 'list', { limit: 1 })) as ListEnvelope;
    expect(page.data).toHaveLength(1);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ refresh_token: tokens.refresh_token, access_token: expect.any(String) });
    expect(stored[0]!['access_token']).not.toBe(tokens.access_token);
    const refresh = sent('/oauth/v1/token');
    expect(refresh).toHaveLength(1);
    const form = new URLSearchParams(refresh[0]!.rawBody);
    expect([form.get('grant_type'), form.get('refresh_token'), form.get('client_id'), form.get('client_secret')]).toEqual([
      'refresh_token',
      tokens.refresh_token,
      sim.oauth.clientId,
      sim.oauth.clientSecret,
    ]);
    // The failed call, the token request, the call again with the new token.
    expect(sim.requests.map((r) => r.path)).toEqual(['/crm/v3/objects/contacts', '/oauth/v1/token', '/crm/v3/objects/contacts']);
    expect(sim.requests.at(-1)!.headers.authorization).toBe(`Bearer ${String(stored[0]!['access_token'])}`);
  });

  it('a token past its expires_at is refreshed before the call; an unknown refresh token fails the refresh', async () => {
    const tokens = await grant();
    const rt = new ConnectorRuntime(manifest, { ...tokens, expires_at: Math.floor(Date.now() / 1000) - 60 }, { baseUrl: sim.url, oauthClient: client() });
    sim.reset();
    await rt.execute('companies', 'list', { limit: 1 });
    expect(sim.requests.map((r) => r.path)).toEqual(['/oauth/v1/token', '/crm/v3/objects/companies']);

    const stale = new ConnectorRuntime(
      manifest,
      { access_token: 'expired', refresh_token: 'not-issued', expires_at: 1 },
      { baseUrl: sim.url, oauthClient: client() },
    );
    expect((await failure(stale.execute('companies', 'list', { limit: 1 }))).code).toBe('oauth_refresh_failed');
  });

  it('check: a private app token or an OAuth token passes; a wrong one is upstream_credentials_rejected', async () => {
    expect(await hubspot().check()).toEqual({ ok: true, connector_type: 'hubspot', checked: true, info: {} });
    expect(sent('/crm/v3/objects/contacts').at(-1)!.query.get('limit')).toBe('1');
    const tokens = await grant();
    const viaOauth = connect('hubspot', { credentials: tokens as never, baseUrl: sim.url, oauthClient: client() });
    expect(viaOauth.authVariant).toBe('oauth');
    expect((await viaOauth.check()).checked).toBe(true);
    expect((await failure(hubspot({ private_app_token: 'pat-na1-revoked' }).check())).code).toBe('upstream_credentials_rejected');
  });
});

// PostgreSQL shows as skipped, with the reason, when SWITCHBOARD_TEST_POSTGRES_URL is not set.
describeEachDialect('hubspot sync on %s', (name) => {
  const open = (groups?: MigrationGroup[]): Promise<TestDatabase> => openTestDatabase(name, groups);
  let tdb: TestDatabase;
  let store: RecordStore;
  let upstream: OpenApiSimulator;
  let requests: string[] = [];
  let engine: SyncEngine;

  beforeAll(async () => {
    upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar, seed: 8, rateLimit: false });
    tdb = await open();
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test' });
    engine = new SyncEngine({
      database: tdb.database,
      sink: store,
      fullRefreshEvery: 10,
      runtimeFor: async () => ({
        manifest,
        runtime: new ConnectorRuntime(
          manifest,
          { private_app_token: PAT },
          {
            baseUrl: upstream.url,
            limiter: null,
            fetch: async (input, init) => {
              const u = new URL(input);
              requests.push(`${init?.method ?? 'GET'} ${u.pathname}${u.searchParams.get('archived') === 'true' ? '?archived' : ''}`);
              return fetch(input, init);
            },
          },
        ),
      }),
    });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
    await upstream.close();
  });

  const searchDef = (entity: string) => ({
    primaryKey: 'id',
    fields: manifest.entities.get(entity)!.def.search!.fields as Record<string, 'string'>,
    sources: manifest.entities.get(entity)!.def.search!.sources as Record<string, string>,
  });
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${upstream.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${PAT}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }).then(async (r) => (r.status === 204 ? undefined : ((await r.json()) as Rec)));

  it('a full run lists the four objects; an incremental run searches each on its last-modified property and removes what was archived', async () => {
    await engine.register('hs-1');
    requests = [];
    const full = await engine.runOnce('hs-1');
    expect(full.full).toBe(true);
    for (const entity of Object.keys(ENTITIES)) {
      expect(full.entities[entity]?.records).toBe(upstream.resources.get(entity)!.records.size);
      expect(await store.count('hs-1', entity)).toBe(upstream.resources.get(entity)!.records.size);
    }
    expect(new Set(requests)).toEqual(new Set(Object.keys(ENTITIES).map((e) => `GET /crm/v3/objects/${e}`)));
    // The sync asks for the properties its search fields read.
    expect(upstream.requests.find((r) => r.path === '/crm/v3/objects/contacts')!.query.getAll('properties')).toContain('email');

    const contact = [...upstream.resources.get('contacts')!.records.keys()][2]!;
    await api('PATCH', `/crm/v3/objects/contacts/${contact}`, { properties: { email: 'renamed@example.com' } });
    const deal = (await api('POST', '/crm/v3/objects/deals', { properties: { dealname: 'Fresh deal', amount: '5000' } }))!;
    const ticket = [...upstream.resources.get('tickets')!.records.keys()][0]!;
    await api('DELETE', `/crm/v3/objects/tickets/${ticket}`);

    requests = [];
    const inc = await engine.runOnce('hs-1');
    expect(inc.full).toBe(false);
    expect([...requests].sort()).toEqual(
      Object.keys(ENTITIES)
        .flatMap((e) => [`GET /crm/v3/objects/${e}?archived`, `POST /crm/v3/objects/${e}/search`])
        .sort(),
    );
    expect(inc.entities['contacts']?.records).toBeGreaterThanOrEqual(1);
    expect(inc.entities['tickets']?.deleted).toBe(1);

    const hit = await store.search('hs-1', 'contacts', searchDef('contacts'), {
      query: { filter: { eq: { email: 'renamed@example.com' } } },
      fields: ['id', 'email', 'firstname'],
    });
    expect(hit.data).toEqual([{ id: contact, email: 'renamed@example.com', firstname: 'Contact' }]);
    const fresh = await store.search('hs-1', 'deals', searchDef('deals'), {
      query: { filter: { eq: { id: deal['id'] as string } } },
      fields: ['id', 'dealname', 'amount'],
    });
    expect(fresh.data).toEqual([{ id: deal['id'], dealname: 'Fresh deal', amount: '5000' }]);
    expect(await store.count('hs-1', 'deals')).toBe(upstream.resources.get('deals')!.records.size);
    expect(await store.count('hs-1', 'tickets')).toBe(upstream.resources.get('tickets')!.records.size - 1);
    const gone = await store.search('hs-1', 'tickets', searchDef('tickets'), { query: { filter: { eq: { id: ticket } } }, fields: ['id'] });
    expect(gone.data).toEqual([]);
  }, 60_000);
});
