/**
 * The hosted SDK end to end: the service on port 0 (SQLite, and PostgreSQL when configured)
 * against the Granola and Intercom simulators, driven only through `createClient`: a connector
 * with credentials and one through the full service-side OAuth flow, every Intercom entity ×
 * action (and search) through `connector('intercom')`, search over the records the service
 * synced on create, `connector(type)` resolution, the access token's caching and renewal, 429
 * retries honouring Retry-After, and failures as SwitchboardError with the problem's code.
 *
 * The harness (test/service/helpers.ts) is used to start the service and to create the
 * application (an operator's `admin create-app`); every call a customer's backend would make
 * goes through the SDK.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { createClient, getConnector, SwitchboardError, type HostedClient } from '../../src/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { SYNC_ONLY_ACTIONS } from '../../src/manifest/index.ts';
import type { AnySimulator } from '../../src/simulator/sandbox.ts';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { startIntercomSimulator, type IntercomSimulator } from '../../connectors/intercom/simulator/index.ts';
import { defaultServiceConfig, grantOrganization, type CreatedApplication } from '../../src/service/index.ts';
import { withSandbox } from '../../src/service/data/sandbox-wiring.ts';
import { describeEachDialect, startHarness, testRegistry, type Harness } from '../service/helpers.ts';
import { failure } from '../helpers/errors.ts';
import { recordChecker } from '../helpers/records.ts';
import { eventually, recordingFetch, TOKEN_PATH, type Exchange } from './hosted-sdk-helpers.ts';

type Rec = Record<string, unknown>;

const REDIRECT = 'https://app.example.com/integrations/done';
const GRANOLA_NOTES = 24;
const INTERCOM_CONTACTS = 30;

// Records checked against the manifest's record schemas.
const intercomManifest = getConnector('intercom');
const checkRecords = recordChecker(intercomManifest);
const expectValid = (entity: string, records: unknown[]): void => checkRecords(entity, records as Rec[]);

describeEachDialect('the hosted SDK against the service on %s', (dialect) => {
  let granola: GranolaSimulator;
  let intercom: IntercomSimulator;
  let h: Harness;
  let app: CreatedApplication;
  let sb: HostedClient;
  const log: Exchange[] = [];
  const clientFor = (
    customerName: string,
    o: { maxAttempts?: number; log?: Exchange[]; app?: CreatedApplication; organizationId?: string } = {},
  ): HostedClient =>
    createClient({
      baseUrl: h.url,
      customerName,
      clientId: (o.app ?? app).client_id,
      clientSecret: (o.app ?? app).client_secret,
      fetch: recordingFetch(o.log ?? log),
      ...(o.maxAttempts !== undefined ? { maxAttempts: o.maxAttempts } : {}),
      ...(o.organizationId !== undefined ? { organizationId: o.organizationId } : {}),
    });
  let granolaId: string;
  let intercomId: string;

  beforeAll(async () => {
    // Simulators without rate limits: the service's first syncs run alongside the calls under test.
    granola = await startGranolaSimulator({ size: GRANOLA_NOTES, rateLimit: false });
    intercom = await startIntercomSimulator({ size: INTERCOM_CONTACTS, rateLimit: false, seed: 3 });
    const registry = testRegistry();
    const sandbox = {
      connectors: {
        granola: { base_url: granola.url, credentials: { api_key: granola.apiKey } },
        intercom: { base_url: intercom.url, credentials: { access_token: intercom.accessToken } },
      },
      simulators: { granola: granola as unknown as AnySimulator, intercom: intercom as unknown as AnySimulator },
    };
    const connectorTypes = withSandbox(defaultServiceConfig(), sandbox, registry).connectorTypes;
    h = await startHarness(dialect, { registry, config: { syncScheduler: true, upstreamThrottle: false, connectorTypes } });
    // What an operator does once (`switchboard admin create-app --org acme`); the rest is the SDK.
    app = await h.createApp('acme');
    sb = clientFor('customer-1');
  });
  afterAll(async () => {
    await h?.close();
    await granola?.close();
    await intercom?.close();
  });

  it('creates a connector with credentials (variant A), gets and lists it', async () => {
    const created = await sb.connectors.create({ connector_type: 'granola', name: 'Granola of customer-1', credentials: { api_key: granola.apiKey } });
    expect(created).toMatchObject({
      customer_name: 'customer-1',
      connector_type: 'granola',
      name: 'Granola of customer-1',
      auth_variant: 'api_key',
      organization_id: app.organization_id,
    });
    expect(created).not.toHaveProperty('credentials');
    granolaId = created.id;
    expect(await sb.connectors.get(granolaId)).toEqual(created);
    const page = await sb.connectors.list();
    expect(page.data.map((c) => c.id)).toEqual([granolaId]);
    expect(page.meta.has_more).toBe(false);
    expect(await sb.connector('granola').id()).toBe(granolaId);
  });

  it('checks credentials: a wrong key is refused on create (nothing stored); check(id) reports ok and the status', async () => {
    const refused = await failure(sb.connectors.create({ connector_type: 'granola', name: 'wrong', credentials: { api_key: 'grn_wrong' } }));
    expect(refused).toMatchObject({ code: 'upstream_credentials_rejected', status: 424 });
    expect(refused.message).toContain('Invalid API key');
    expect((await sb.connectors.list()).data.map((c) => c.id)).toEqual([granolaId]);
    const checked = await sb.connectors.check(granolaId);
    expect(checked).toMatchObject({ ok: true, info: {}, connector: { id: granolaId, status: 'active', last_error: null } });
    const status: 'active' | 'auth_failed' | 'error' = (await sb.connectors.get(granolaId)).status;
    expect(status).toBe('active');
    expect((await sb.connectors.list({ status: 'auth_failed' })).data).toEqual([]);
    // Replacing the credentials with a wrong key is refused the same way, and changes nothing.
    const before = await sb.connectors.get(granolaId);
    expect((await failure(sb.connectors.update(granolaId, { credentials: { api_key: 'grn_wrong' } }))).code).toBe('upstream_credentials_rejected');
    expect(await sb.connectors.get(granolaId)).toEqual(before);
    expect((await sb.connectors.update(granolaId, { name: before.name })).name).toBe(before.name);
  });

  it('creates a connector through the service-side OAuth flow (variant B)', async () => {
    const tokensBefore = intercom.tokens.size;
    const { consent_url, expires_at } = await sb.oauth.initiate({ connector_type: 'intercom', redirect_url: `${REDIRECT}?tab=crm` });
    expect(new URL(consent_url).origin).toBe(intercom.url);
    expect(Date.parse(expires_at)).toBeGreaterThan(Date.now());

    // The user's browser: the provider's consent page redirects to the service's callback...
    const consent = await fetch(consent_url, { redirect: 'manual' });
    expect(consent.status).toBe(302);
    const callback = consent.headers.get('location') as string;
    expect(callback.startsWith(`${h.url}/api/v1/integrations/connectors/oauth/callback?`)).toBe(true);
    // ...which exchanges the code and redirects to our redirect_url with the secret id.
    const done = await fetch(callback, { redirect: 'manual' });
    expect(done.status).toBe(302);
    const back = new URL(done.headers.get('location') as string);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get('tab')).toBe('crm');
    const secretId = back.searchParams.get('secret_id') as string;
    expect(secretId).toMatch(/^sbo_/);

    const created = await sb.connectors.create({ connector_type: 'intercom', name: 'Intercom of customer-1', server_side_oauth_secret_id: secretId });
    expect(created).toMatchObject({ customer_name: 'customer-1', connector_type: 'intercom', auth_variant: 'oauth' });
    intercomId = created.id;
    // The service holds the token the simulated Intercom issued through OAuth.
    expect(intercom.tokens.size).toBe(tokensBefore + 1);
    const viaOAuth = [...intercom.tokens].find((t) => t !== intercom.accessToken) as string;
    await sb.connector('intercom').execute('admins', 'list');
    expect(intercom.requests.filter((r) => r.path === '/admins').at(-1)?.headers.authorization).toBe(`Bearer ${viaOAuth}`);

    // A secret id works once.
    const again = await failure(sb.connectors.create({ connector_type: 'intercom', name: 'twice', server_side_oauth_secret_id: secretId }));
    expect(again).toMatchObject({ code: 'invalid_oauth_secret', status: 400 });
    expect((await sb.connectors.list()).data.map((c) => c.id).sort()).toEqual([granolaId, intercomId].sort());
  });

  it('searches the records the service synced when the connectors were created', async () => {
    const notes = sb.connector('granola');
    const all = await eventually(
      () => notes.search('notes', { query: { sort: [{ created_at: 'desc' }] }, fields: ['id', 'title'] }),
      (r) => r.data.length === GRANOLA_NOTES,
      'granola notes synced',
    );
    expect(all.data.map((n) => n.id)).toEqual(granola.ids());
    expect(typeof all.meta.synced_at).toBe('string');

    const target = granola.note(granola.ids()[5] as string)!;
    const one = await notes.search('notes', { query: { filter: { eq: { id: target.id } } }, fields: ['id', 'title', 'created_at'] });
    expect(one.data).toEqual([{ id: target.id, title: target.title, created_at: target.created_at }]);
    expect(one.meta).toMatchObject({ has_more: false, cursor: null });

    // Paging with the cursor, and a combined filter.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await notes.search('notes', {
        query: { sort: [{ created_at: 'desc' }] },
        fields: ['id'],
        limit: 10,
        ...(cursor !== undefined ? { cursor } : {}),
      });
      seen.push(...page.data.map((n) => n.id as string));
      cursor = page.meta.cursor ?? undefined;
    } while (cursor !== undefined);
    expect(seen).toEqual(granola.ids());
    const notTarget = await notes.search('notes', {
      query: { filter: { and: [{ not: { eq: { id: target.id } } }, { gte: { created_at: target.created_at } }] } },
      fields: ['id'],
    });
    expect(notTarget.data.map((n) => n.id).sort()).toEqual(granola.ids().slice(0, 5).sort());

    // Intercom contacts: one search per role, against the simulator's workspace.
    const contacts = sb.connector('intercom');
    const rendered = intercom.records('contacts');
    await eventually(
      () => contacts.search('contacts', { query: {}, fields: ['id'] }),
      (r) => r.data.length === rendered.length,
      'intercom contacts synced',
    );
    // Entities sync in name order and teams come last: once they are in, the first sync is done.
    await eventually(
      () => contacts.search('teams', { query: {}, fields: ['id'] }),
      (r) => r.data.length === intercom.records('teams').length,
      'intercom teams synced',
    );
    const users = await contacts.search('contacts', {
      query: { filter: { eq: { role: 'user' } }, sort: [{ created_at: 'asc' }] },
      fields: ['id', 'role', 'email'],
    });
    const expected = rendered.filter((c) => c.role === 'user');
    expect(expected.length).toBeGreaterThan(0);
    expect(users.data.map((c) => c.id).sort()).toEqual(expected.map((c) => c.id).sort());
    expect(users.data.every((c) => c.role === 'user')).toBe(true);
  });

  it('executes every Intercom entity × action through connector("intercom"), records as the simulator holds them', async () => {
    const ic = sb.connector('intercom');
    const recs = (resource: string): Rec[] => intercom.records(resource);
    const ids = (resource: string): string[] => recs(resource).map((r) => r.id as string);
    const done = new Set<string>();
    const mark = (entity: string, action: string) => done.add(`${entity}.${action}`);

    // contacts
    const contacts = await ic.execute('contacts', 'list', { per_page: 5 });
    expectValid('contacts', contacts.data);
    expect(contacts.data.map((c) => c.id)).toEqual(ids('contacts').slice(-5).reverse());
    expect(typeof contacts.meta.next_page).toBe('string');
    const next = await ic.execute('contacts', 'list', { per_page: 5, starting_after: contacts.meta.next_page as string });
    expect(next.data.map((c) => c.id)).toEqual(ids('contacts').slice(-10, -5).reverse());
    mark('contacts', 'list');
    const someone = recs('contacts')[3] as Rec & { id: string };
    const got = await ic.execute('contacts', 'get', { id: someone.id });
    expectValid('contacts', [got.data]);
    expect(got.data).toMatchObject({ id: someone.id, email: someone.email });
    mark('contacts', 'get');
    const owner = Number(ids('admins')[0]);
    const created = await ic.execute('contacts', 'create', {
      role: 'lead',
      email: 'ada@lovelace.example',
      name: 'Ada',
      owner_id: owner,
      custom_attributes: { plan_tier: 'pro' },
    });
    expectValid('contacts', [created.data]);
    expect(created.data).toMatchObject({ role: 'lead', email: 'ada@lovelace.example', name: 'Ada', owner_id: owner, custom_attributes: { plan_tier: 'pro' } });
    expect(intercom.resources.get('contacts')?.records.get(created.data.id)).toBeDefined();
    mark('contacts', 'create');
    const updated = await ic.execute('contacts', 'update', { id: created.data.id, role: 'user', name: 'Ada Lovelace' });
    expect(updated.data).toMatchObject({ id: created.data.id, role: 'user', name: 'Ada Lovelace', email: 'ada@lovelace.example' });
    expect((await ic.execute('contacts', 'get', { id: created.data.id })).data).toEqual(updated.data);
    mark('contacts', 'update');

    // conversations
    const conversations = await ic.execute('conversations', 'list', { per_page: 4 });
    expectValid('conversations', conversations.data);
    expect(conversations.data.map((c) => c.id)).toEqual(ids('conversations').slice(-4).reverse());
    mark('conversations', 'list');
    const conversation = await ic.execute('conversations', 'get', { id: ids('conversations')[2]! });
    expectValid('conversations', [conversation.data]);
    expect((conversation.data.conversation_parts as Rec).type).toBe('conversation_part.list');
    mark('conversations', 'get');

    // companies
    const companies = await ic.execute('companies', 'list', { per_page: 3 });
    expectValid('companies', companies.data);
    expect(companies.data.map((c) => c.id)).toEqual(
      intercom
        .listedCompanies()
        .slice(0, 3)
        .map((r) => r.id),
    );
    mark('companies', 'list');
    const company = await ic.execute('companies', 'get', { id: ids('companies')[1]! });
    expect(company.data).toEqual(recs('companies')[1]);
    mark('companies', 'get');
    const globex = await ic.execute('companies', 'create', { company_id: 'globex-1', name: 'Globex', size: 120, industry: 'Manufacturing' });
    expectValid('companies', [globex.data]);
    expect(globex.data).toMatchObject({ company_id: 'globex-1', name: 'Globex', size: 120, industry: 'Manufacturing' });
    mark('companies', 'create');
    const renamed = await ic.execute('companies', 'update', { id: globex.data.id, name: 'Globex Corp', monthly_spend: 900 });
    expect(renamed.data).toMatchObject({ id: globex.data.id, name: 'Globex Corp', monthly_spend: 900 });
    mark('companies', 'update');

    // teams, admins
    const teams = await ic.execute('teams', 'list');
    expectValid('teams', teams.data);
    expect(teams.data).toEqual(recs('teams'));
    expect(teams.meta).toEqual({ next_page: null });
    mark('teams', 'list');
    expect((await ic.execute('teams', 'get', { id: ids('teams')[0]! })).data.name).toBe(recs('teams')[0]!.name);
    mark('teams', 'get');
    const admins = await ic.execute('admins', 'list');
    expectValid('admins', admins.data);
    expect(admins.data.map((a) => a.id)).toEqual(ids('admins'));
    mark('admins', 'list');
    const admin = recs('admins')[2] as Rec & { id: string };
    expect((await ic.execute('admins', 'get', { id: admin.id })).data).toMatchObject({ id: admin.id, name: admin.name, email: admin.email });
    mark('admins', 'get');

    // tags
    const tags = await ic.execute('tags', 'list');
    expectValid('tags', tags.data);
    expect(tags.data.map((t) => t.id)).toEqual(ids('tags'));
    mark('tags', 'list');
    const tag = await ic.execute('tags', 'create', { name: 'Hosted SDK' });
    expect(tag.data).toEqual({ type: 'tag', id: expect.any(String), name: 'Hosted SDK' });
    mark('tags', 'create');
    expect((await ic.execute('tags', 'get', { id: tag.data.id })).data).toEqual(tag.data);
    mark('tags', 'get');

    // notes
    const note = await ic.execute('notes', 'create', { contact_id: someone.id, body: 'Called about renewal.', admin_id: admin.id });
    expectValid('notes', [note.data]);
    expect(note.data).toMatchObject({ type: 'note', body: '<p>Called about renewal.</p>', contact: { id: someone.id }, author: { id: admin.id } });
    mark('notes', 'create');

    // segments
    const segments = await ic.execute('segments', 'list', { include_count: true });
    expectValid('segments', segments.data);
    expect(segments.data).toEqual(recs('segments').map((s) => ({ ...s, count: expect.any(Number) })));
    expect(segments.data.reduce((n, s) => n + (['All users', 'All leads'].includes(s.name as string) ? (s.count as number) : 0), 0)).toBe(
      intercom.resources.get('contacts')?.records.size,
    );
    mark('segments', 'list');
    expect((await ic.execute('segments', 'get', { id: ids('segments')[0]! })).data.name).toBe(recs('segments')[0]!.name);
    mark('segments', 'get');

    // internal articles
    const article = await ic.execute('internal_articles', 'create', { title: 'Escalations', owner_id: owner, author_id: owner, body: '<p>Ask #eng.</p>' });
    expectValid('internal_articles', [article.data]);
    expect(article.data).toMatchObject({ title: 'Escalations', owner_id: owner, author_id: owner, body: '<p>Ask #eng.</p>' });
    expect(intercom.resources.get('internal_articles')?.records.get(String(article.data.id))?.record.title).toBe('Escalations');
    mark('internal_articles', 'create');

    // search, on every entity that has search fields (over the synced copy)
    const searched = {
      contacts: await ic.search('contacts', { query: { filter: { eq: { id: someone.id } } }, fields: ['id'] }),
      conversations: await ic.search('conversations', { query: { filter: { eq: { id: ids('conversations')[2]! } } }, fields: ['id', 'state'] }),
      companies: await ic.search('companies', { query: { filter: { eq: { id: ids('companies')[1]! } } }, fields: ['id', 'name'] }),
      teams: await ic.search('teams', { query: { filter: { eq: { name: recs('teams')[0]!.name as string } } }, fields: ['id'] }),
    };
    expect(searched.contacts.data).toEqual([{ id: someone.id }]);
    expect(searched.conversations.data).toEqual([{ id: ids('conversations')[2], state: conversation.data.state }]);
    expect(searched.companies.data).toEqual([{ id: ids('companies')[1], name: company.data.name }]);
    expect(searched.teams.data).toEqual([{ id: ids('teams')[0] }]);
    for (const entity of Object.keys(searched)) mark(entity, 'search');

    // Every action of the manifest was executed through the SDK (sync-only ones are not exposed).
    const declared = [...intercomManifest.entities].flatMap(([name, e]) => [
      ...[...e.actions.keys()].filter((a) => !SYNC_ONLY_ACTIONS.has(a)).map((a) => `${name}.${a}`),
      ...(e.def.search !== undefined ? [`${name}.search`] : []),
    ]);
    expect([...done].sort()).toEqual(declared.sort());
    expect(done.size).toBe(21 + 4);
  });

  it('connector(type) says clearly when the customer has no connector of the type, or several', async () => {
    const nobody = clientFor('customer-without-connectors');
    const none = await failure(nobody.connector('granola').execute('notes', 'list'));
    expect(none.code).toBe('connector_not_found');
    expect(none.message).toContain('customer-without-connectors');
    expect(none.message).toContain('granola');

    const twice = clientFor('customer-2');
    const a = await twice.connectors.create({ connector_type: 'granola', name: 'first', credentials: { api_key: granola.apiKey } });
    const b = await twice.connectors.create({ connector_type: 'granola', name: 'second', credentials: { api_key: granola.apiKey } });
    const several = await failure(twice.connector('granola').execute('notes', 'list', { page_size: 1 }));
    expect(several.message).toMatch(/several granola connectors/);
    expect(several.details.connector_ids).toEqual([a.id, b.id]);
    // By id, either one works; customer-1's connectors are not customer-2's.
    expect((await twice.connector<'granola'>(b.id).execute('notes', 'list', { page_size: 1 })).data).toHaveLength(1);
    expect(await sb.connector('granola').id()).toBe(granolaId);
    await twice.connectors.delete(a.id);
    expect(await twice.connector('granola').id()).toBe(b.id);
    expect((await failure(twice.connectors.get(a.id))).code).toBe('connector_not_found');
  });

  it('errors come back as SwitchboardError with the problem code, status, field errors and details', async () => {
    const ic = sb.connector('intercom');
    const notFound = await failure(ic.execute('contacts', 'get', { id: '5f0000000000000000000000' }));
    expect(notFound).toMatchObject({ code: 'upstream_not_found', status: 404, message: 'intercom: User Not Found' });
    // The same shape as library mode: details.upstream_status and details.upstream_body.
    expect(notFound.details).toMatchObject({ upstream_status: 404, upstream_body: { type: 'error.list', errors: [{ code: 'not_found' }] } });

    const invalid = await failure(ic.execute('contacts', 'create', { role: 'admin' } as never));
    expect(invalid).toMatchObject({ code: 'invalid_params', status: 400 });
    expect(invalid.errors.map((e) => e.path)).toContain('/params/role');

    const unknown = await failure(ic.execute('widgets' as never, 'list' as never));
    expect(unknown.code).toBe('unknown_entity');
    expect(unknown.details.valid).toEqual(expect.arrayContaining(['contacts', 'teams']));

    const badQuery = await failure(ic.search('contacts', { query: { filter: { eq: { colour: 'red' } } } } as never));
    expect(badQuery).toMatchObject({ code: 'invalid_search_query', status: 400 });

    const badCredentials = await failure(sb.connectors.create({ connector_type: 'granola', name: 'x', credentials: { apikey: 'x' } as never }));
    expect(badCredentials.code).toBe('invalid_credentials');
    expect(badCredentials.errors.map((e) => e.path)).toContain('/credentials/apikey');

    expect((await failure(sb.oauth.initiate({ connector_type: 'granola', redirect_url: REDIRECT }))).code).toBe('oauth_not_supported');
    expect((await failure(sb.connector('00000000-0000-4000-8000-000000000000').execute('notes' as never, 'list' as never))).code).toBe('connector_not_found');

    const wrongSecret = createClient({ baseUrl: h.url, customerName: 'customer-1', clientId: app.client_id, clientSecret: 'sbs_wrong' });
    expect(await failure(wrongSecret.connectors.list())).toMatchObject({ code: 'invalid_client', status: 401 });
  });

  it('sends X-Organization-Id for an application of several organizations', async () => {
    const multi = await h.createApp('org-one');
    const second = await grantOrganization(h.store, { clientId: multi.client_id, orgName: 'org-two' });
    const withoutOrg = clientFor('c', { app: multi });
    expect(await failure(withoutOrg.connectors.list())).toMatchObject({ code: 'organization_required', status: 400 });
    const inTwo = clientFor('c', { app: multi, organizationId: second.organization_id });
    const created = await inTwo.connectors.create({ connector_type: 'granola', name: 'g', credentials: { api_key: granola.apiKey } });
    expect(created.organization_id).toBe(second.organization_id);
    const inOne = clientFor('c', { app: multi, organizationId: multi.organization_id });
    expect((await inOne.connectors.list()).data).toEqual([]);
  });

  it('caches the access token: one token request for many calls, concurrent ones included', async () => {
    const own: Exchange[] = [];
    const c = clientFor('customer-1', { log: own });
    await Promise.all([c.connectors.list(), c.connector('granola').execute('notes', 'list', { page_size: 2 }), c.connectors.get(granolaId)]);
    for (let i = 0; i < 5; i++) await c.connector<'intercom'>(intercomId).execute('teams', 'list');
    expect(own.filter((x) => x.path === TOKEN_PATH)).toHaveLength(1);
    const bearers = new Set(own.filter((x) => x.path !== TOKEN_PATH).map((x) => x.authorization));
    expect(bearers.size).toBe(1);
    expect([...bearers][0]).toMatch(/^Bearer sbt_/);
    expect(own.every((x) => x.status === 200)).toBe(true);
  });

  it('renews the token before it expires, and once on a 401 (revoked or expired on the service)', async () => {
    const own: Exchange[] = [];
    const c = clientFor('customer-1', { log: own });
    const tokenRequests = () => own.filter((x) => x.path === TOKEN_PATH).length;
    await c.connectors.list();
    expect(tokenRequests()).toBe(1);

    // Revoked: the service no longer knows the token (it notices within lookupCacheMs: its clock
    // is moved past that). One 401, one new token, the call succeeds.
    await h.service.database.db.deleteFrom('access_tokens').execute();
    h.clock.offsetMs = 1_000;
    try {
      expect((await c.connectors.get(granolaId)).id).toBe(granolaId);
    } finally {
      h.clock.offsetMs = 0;
    }
    expect(tokenRequests()).toBe(2);
    expect(own.filter((x) => x.status === 401)).toHaveLength(1);

    // Expired by the service's clock (an hour later) while the client still trusts it.
    h.clock.offsetMs = 3_601_000;
    try {
      expect((await c.connector('granola').execute('notes', 'list', { page_size: 1 })).data).toHaveLength(1);
    } finally {
      h.clock.offsetMs = 0;
    }
    expect(tokenRequests()).toBe(3);
    expect(own.filter((x) => x.status === 401)).toHaveLength(2);

    // Within a minute of expiry the client renews first: no 401 this time.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 3_570_000 });
    try {
      await c.connectors.list();
    } finally {
      vi.useRealTimers();
    }
    expect(tokenRequests()).toBe(4);
    expect(own.filter((x) => x.status === 401)).toHaveLength(2);

    // Only once: a token the service refuses again is not renewed in a loop.
    const rejecting: FetchLike = async (input, init) => {
      const res = await fetch(input, init);
      if (new URL(input).pathname === TOKEN_PATH) return res;
      own.push({ method: init?.method ?? 'GET', path: new URL(input).pathname, status: 401, authorization: null, retryAfter: null, at: Date.now() });
      return new Response(JSON.stringify({ code: 'unauthorized', status: 401, detail: 'nope' }), {
        status: 401,
        headers: { 'content-type': 'application/problem+json' },
      });
    };
    const stubborn = createClient({ baseUrl: h.url, customerName: 'customer-1', clientId: app.client_id, clientSecret: app.client_secret, fetch: rejecting });
    const before = own.length;
    expect(await failure(stubborn.connectors.list())).toMatchObject({ code: 'unauthorized', status: 401 });
    expect(own.length - before).toBe(2);
  });

  it('keeps one token across calls when the service issues short-lived tokens, renewing it half-way', async () => {
    const short = await startHarness(dialect, { registry: testRegistry(), config: { tokenTtlSeconds: 30 } });
    try {
      const owner = await short.createApp('short-tokens');
      const own: Exchange[] = [];
      const c = createClient({
        baseUrl: short.url,
        customerName: 'c',
        clientId: owner.client_id,
        clientSecret: owner.client_secret,
        fetch: recordingFetch(own),
      });
      for (let i = 0; i < 5; i++) await c.connectors.list();
      expect(own.filter((x) => x.path === TOKEN_PATH)).toHaveLength(1);
      // Past half of its 30 s: renewed before it expires, without a 401.
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 16_000 });
      try {
        await c.connectors.list();
        await c.connectors.list();
      } finally {
        vi.useRealTimers();
      }
      expect(own.filter((x) => x.path === TOKEN_PATH)).toHaveLength(2);
      expect(own.every((x) => x.status === 200)).toBe(true);
    } finally {
      await short.close();
    }
  });

  it('retries a 429 after its Retry-After, and reports rate_limited when attempts run out', async () => {
    const limited = await startHarness(dialect, {
      registry: testRegistry(),
      config: { rateLimitPerMinute: 60, connectorTypes: { granola: { baseUrl: granola.url } } },
    });
    try {
      const owner = await limited.createApp('limited');
      const own: Exchange[] = [];
      const make = (maxAttempts?: number) =>
        createClient({
          baseUrl: limited.url,
          customerName: 'c',
          clientId: owner.client_id,
          clientSecret: owner.client_secret,
          fetch: recordingFetch(own),
          ...(maxAttempts !== undefined ? { maxAttempts } : {}),
        });
      const once = make(1);
      // Spend the organization's bucket (60 requests, refilled at one a second).
      let refused: SwitchboardError | undefined;
      for (let i = 0; i < 70 && refused === undefined; i++) {
        refused = await once.connectors.list().then(
          () => undefined,
          (e: unknown) => e as SwitchboardError,
        );
      }
      expect(refused).toBeInstanceOf(SwitchboardError);
      expect(refused).toMatchObject({ code: 'rate_limited', status: 429 });

      const patient = make();
      const started = Date.now();
      const from = own.length;
      const page = await patient.connectors.list();
      expect(page.data).toEqual([]);
      const calls = own.slice(from).filter((x) => x.path !== TOKEN_PATH);
      expect(calls.map((x) => x.status)).toEqual([429, 200]);
      const wait = Number(calls[0]!.retryAfter) * 1000;
      expect(wait).toBeGreaterThanOrEqual(1000);
      expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(wait - 50);
      expect(Date.now() - started).toBeLessThan(wait + 5000);
    } finally {
      await limited.close();
    }
  });
});
