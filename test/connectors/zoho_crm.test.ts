/**
 * Zoho CRM's quirks, against the generic simulator serving connectors/zoho_crm/openapi.json (our
 * derivation from the official Node SDK) with its sidecar: `Authorization: Zoho-oauthtoken`, the
 * data centre (OAuth on the accounts server the user names before consent, calls on the API host
 * the token answer's api_domain names, `.com.au` included), page_token paging, writes as
 * `{data: [record]}` answered with the new id in `details`, 204 for an empty module, and the
 * incremental sync by If-Modified-Since (304 when nothing changed) with deletions from /deleted.
 * The generic suites run every entity × action.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorizeUrl, exchangeAuthorizationCode, refreshAccessToken } from '../../src/auth/index.ts';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import type { OAuth2Auth } from '../../src/manifest/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { preConsentCredentials, preConsentFields } from '../../src/service/connectors/oauth-flow.ts';
import { loadSidecar, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import { failure } from '../helpers/errors.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/zoho_crm';
const manifest = getConnector('zoho_crm');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { access_token: string; dc: string };

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 3, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const zoho = (credentials: Rec = CREDENTIALS, upstream = sim) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: upstream.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => zoho().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;
const sent = (path: string) => sim.requests.filter((r) => r.path === path);

describe('zoho_crm token, paging and writes', () => {
  it('sends Zoho-oauthtoken; the check reads the org; a refused token is upstream_credentials_rejected', async () => {
    expect(await zoho().check()).toMatchObject({ ok: true, info: { org_id: '5843104000000090001', company_name: 'Zylker Traders' } });
    expect(sent('/crm/v8/org').at(-1)!.headers['authorization']).toBe(`Zoho-oauthtoken ${CREDENTIALS.access_token}`);
    const refused = await failure(zoho({ ...CREDENTIALS, access_token: '1000.expired' }).check());
    expect(refused.code).toBe('upstream_credentials_rejected');
    expect(refused.message).toContain('invalid oauth token');
  });

  it('lists with the default fields, paging by info.next_page_token while more_records; ids are 19-digit text', async () => {
    const got: Rec[] = [];
    for await (const r of zoho().records('leads', { per_page: 4 })) got.push(r);
    expect(got.map((l) => l['Last_Name'])).toEqual(['Doe', 'Lebihans', 'Tannamuri', 'Lincoln', 'Simpson', 'Wilson']);
    for (const l of got) expect(l['id']).toMatch(/^\d{19}$/);
    const pages = sent('/crm/v8/Leads');
    expect(pages.map((p) => p.query.get('page_token') !== null)).toEqual([false, true]);
    expect(pages[0]!.query.get('fields')).toContain('Last_Name,First_Name');
    const one = await run('leads', 'get', { id: got[0]!['id'] });
    expect(one.data).toMatchObject({ id: got[0]!['id'], Last_Name: 'Doe', Owner: { name: 'Patricia Boyle' } });
  });

  it('writes {data: [record]} with custom fields merged in, and answers what was sent with the id from details', async () => {
    const account = ((await run('accounts', 'list', { per_page: 1 })).data as Rec[])[0]!;
    const created = (
      await run('contacts', 'create', {
        last_name: 'Burns',
        first_name: 'Kim',
        email: 'kim.burns@zylker.example',
        account_name: { id: account['id'] },
        custom_fields: { Region: 'EMEA' },
        trigger: [],
      })
    ).data as Rec;
    expect(created).toMatchObject({ Last_Name: 'Burns', Email: 'kim.burns@zylker.example', Region: 'EMEA', Created_By: { name: 'Patricia Boyle' } });
    expect(created['id']).toMatch(/^\d{19}$/);
    const body = JSON.parse(sent('/crm/v8/Contacts').at(-1)!.rawBody) as Rec;
    expect(body).toEqual({
      data: [{ Last_Name: 'Burns', First_Name: 'Kim', Email: 'kim.burns@zylker.example', Account_Name: { id: account['id'] }, Region: 'EMEA' }],
      trigger: [],
    });
    const updated = (await run('contacts', 'update', { id: created['id'], title: 'CFO' })).data as Rec;
    expect(updated).toMatchObject({ id: created['id'], Title: 'CFO' });
    const put = sim.requests.at(-1)!;
    expect([put.method, put.path, JSON.parse(put.rawBody)]).toEqual(['PUT', `/crm/v8/Contacts/${String(created['id'])}`, { data: [{ Title: 'CFO' }] }]);
    expect(((await run('contacts', 'get', { id: created['id'] })).data as Rec)['Title']).toBe('CFO');
  });

  it('an empty module answers 204 (no records); a missing record is upstream_not_found', async () => {
    for (const id of [...sim.resources.get('Deals')!.records.keys()]) sim.removeRecord('Deals', id);
    expect(await run('deals', 'list')).toMatchObject({ data: [], meta: { next_page: null } });
    const raw = await fetch(`${sim.url}/crm/v8/Deals?fields=Deal_Name`, { headers: { authorization: `Zoho-oauthtoken ${CREDENTIALS.access_token}` } });
    expect([raw.status, await raw.text()]).toEqual([204, '']);
    expect((await failure(run('deals', 'get', { id: '5843104000000999999' }))).code).toBe('upstream_not_found');
  });

  it('searches a module by email; nothing needs one of criteria, email, phone or word', async () => {
    const hits = (await run('search_results', 'list', { module: 'Leads', email: 'yoshi@bacchus.example' })).data as Rec[];
    expect(hits.map((h) => h['Last_Name'])).toEqual(['Tannamuri']);
    expect(sent('/crm/v8/Leads/search').at(-1)!.query.get('email')).toBe('yoshi@bacchus.example');
    expect((await failure(run('search_results', 'list', { module: 'Leads' }))).code).toBe('invalid_params');
  });
});

describe('zoho_crm OAuth: the accounts server before consent, the API host from api_domain', () => {
  const variant = manifest.manifest.auth.find((v) => v.name === 'oauth') as OAuth2Auth;

  it('asks for the accounts domain (com.au included) and stores the data centre the token answer names', async () => {
    expect(preConsentFields(manifest, variant)).toEqual(['accounts_domain']);
    expect(preConsentCredentials(manifest, variant, { accounts_domain: 'zoho.com.au' })).toEqual({ accounts_domain: 'zoho.com.au' });
    expect(() => preConsentCredentials(manifest, variant, { accounts_domain: 'evil.example' })).toThrow(/must be one of/);
    // A data centre in Australia: its token answer names https://www.zohoapis.com.au.
    const au = await startOpenApiSimulator({
      description: `${DIR}/openapi.json`,
      sidecar: parseSidecar(
        JSON.stringify({
          ...sidecar,
          oauth: { ...sidecar.oauth, token_response: { ...sidecar.oauth!.token_response, api_domain: 'https://www.zohoapis.com.au' } },
        }),
      ),
      seed: 3,
      rateLimit: false,
    });
    try {
      const consent = new URL(
        authorizeUrl(variant, {
          clientId: au.oauth.clientId,
          redirectUri: 'https://app.example/cb',
          state: 's1',
          credentials: { accounts_domain: 'zoho.com.au' },
        }),
      );
      expect(consent.origin).toBe('https://accounts.zoho.com.au');
      expect(consent.searchParams.get('scope')).toContain('ZohoCRM.modules.leads.ALL,ZohoCRM.modules.contacts.ALL');
      expect(consent.searchParams.get('access_type')).toBe('offline');
      const back = new URL((await fetch(`${au.url}${consent.pathname}${consent.search}`, { redirect: 'manual' })).headers.get('location') as string);
      const client = { clientId: au.oauth.clientId, clientSecret: au.oauth.clientSecret, tokenUrl: `${au.url}/oauth/v2/token` };
      const tokens = await exchangeAuthorizationCode(variant, client, back.searchParams.get('code') as string, 'https://app.example/cb');
      expect(tokens).toMatchObject({ access_token: expect.stringMatching(/^1000\./), refresh_token: expect.any(String), dc: 'com.au' });
      const refreshed: Rec = { ...tokens, ...(await refreshAccessToken(variant, client, tokens.refresh_token as string)), accounts_domain: 'zoho.com.au' };
      expect(refreshed['dc']).toBe('com.au');
      const hosts: string[] = [];
      const rt = new ConnectorRuntime(manifest, refreshed, {
        limiter: null,
        fetch: async (input, init) => {
          const u = new URL(input);
          hosts.push(u.origin);
          return fetch(`${au.url}${u.pathname}${u.search}`, init);
        },
      });
      expect(rt.authVariant).toBe('oauth');
      await rt.check();
      expect(hosts).toEqual(['https://www.zohoapis.com.au']);
      expect(au.requests.at(-1)!.headers['authorization']).toBe(`Zoho-oauthtoken ${String(refreshed['access_token'])}`);
    } finally {
      await au.close();
    }
  });
});

describeEachDialect('zoho_crm sync on %s', (name) => {
  let tdb: TestDatabase;
  let store: RecordStore;
  let upstream: OpenApiSimulator;
  let engine: SyncEngine;

  beforeAll(async () => {
    upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 5, rateLimit: false });
    tdb = await openTestDatabase(name);
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test' });
    engine = new SyncEngine({
      database: tdb.database,
      sink: store,
      fullRefreshEvery: 10,
      runtimeFor: async () => ({ manifest, runtime: zoho(CREDENTIALS, upstream) }),
    });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
    await upstream.close();
  });

  it('sends If-Modified-Since with the newest Modified_Time as Zoho wrote it (304: nothing), and removes what /deleted lists', async () => {
    await engine.register('zc-1');
    expect((await engine.runOnce('zc-1')).entities).toMatchObject({
      leads: { records: 6 },
      contacts: { records: 6 },
      accounts: { records: 5 },
      deals: { records: 6 },
    });
    const newest = [...upstream.resources.get('Leads')!.records.values()]
      .map((s) => String(s.record['Modified_Time']))
      .sort()
      .at(-1);
    upstream.requests.length = 0;
    const quiet = await engine.runOnce('zc-1');
    expect(quiet.full).toBe(false);
    const asked = upstream.requests.filter((r) => r.path === '/crm/v8/Leads');
    expect(asked.map((r) => r.headers['if-modified-since'])).toEqual([newest]);
    expect(asked[0]!.query.get('sort_by')).toBe('Modified_Time');
    expect(quiet.entities['leads']).toMatchObject({ records: 0, deleted: 0 });

    // One lead edited, one deleted (Zoho lists it under /Leads/deleted).
    const [edited, gone] = [...upstream.resources.get('Leads')!.records.values()].map((s) => String(s.record['id']));
    upstream.updateRecord('Leads', edited!, { Lead_Status: 'Contacted' });
    upstream.removeRecord('Leads', gone!);
    upstream.addRecord('deleted_leads', { id: gone!, display_name: 'Laurence Lebihans', type: 'recycle', deleted_time: new Date().toISOString() });
    const next = await engine.runOnce('zc-1');
    expect(next.entities['leads']).toMatchObject({ records: 1, deleted: 1 });
    expect(await store.count('zc-1', 'leads')).toBe(5);
  }, 60_000);
});
