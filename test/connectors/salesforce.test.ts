/**
 * Salesforce's quirks, end to end: connectors/salesforce/connector.yaml run by the interpreter over
 * real HTTP against the generic simulator serving our description (connectors/salesforce/openapi.json,
 * from derive.mjs) with its sidecar — SOQL answered by the simulator's generic query rules, no
 * Salesforce-specific simulator code. What every connector shares is the conformance suite's; here:
 * the org's host from the token answer's instance_url (production and sandbox variants), the JWT
 * bearer flow, lists as SOQL statements followed through nextRecordsUrl batches, updates read back
 * after their 204, SOQL and limit errors, and a sync that reads changes by SystemModstamp and
 * deletions from getDeleted.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { exchangeAuthorizationCode, authorizeUrl } from '../../src/auth/index.ts';
import { ConnectorRuntime, getConnector, type ListEnvelope } from '../../src/index.ts';
import type { OAuth2Auth } from '../../src/manifest/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/salesforce';
const manifest = getConnector('salesforce');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as Record<string, string>;
const TOKEN = CREDENTIALS['access_token']!;
const CONSUMER_KEY = '3MVG9SANDBOXconsumerKeyForJwtBearerFlow.NorthwindTraders';
const app = generateKeyPairSync('rsa', { modulusLength: 2048 });

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 2, rateLimit: false, jwtKeys: { [CONSUMER_KEY]: app.publicKey } });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const salesforce = (credentials: Rec = CREDENTIALS) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const queries = () => sim.requests.filter((r) => r.path.startsWith('/services/data/v66.0/query'));

describe('salesforce', () => {
  it("OAuth: the token answer's instance_url names the org's host, which every call then goes to; the check reads the Organization", async () => {
    const variant = manifest.manifest.auth.find((v) => v.name === 'oauth') as OAuth2Auth;
    const onSim = (url: string): string => `${sim.url}${new URL(url).pathname}`;
    const consent = authorizeUrl(variant, {
      clientId: sim.oauth.clientId,
      redirectUri: 'https://app.example/cb',
      state: 's',
      authorizeUrl: onSim(variant.authorize_url),
    });
    const back = new URL((await fetch(consent, { redirect: 'manual' })).headers.get('location') as string);
    const client = { clientId: sim.oauth.clientId, clientSecret: sim.oauth.clientSecret, tokenUrl: onSim(variant.token_url) };
    const tokens = await exchangeAuthorizationCode(variant, client, back.searchParams.get('code') as string, 'https://app.example/cb');
    expect(tokens).toMatchObject({ access_token: expect.any(String), refresh_token: expect.any(String), my_domain: 'northwind' });
    expect(tokens).not.toHaveProperty('instance_url');

    const urls: string[] = [];
    const rt = new ConnectorRuntime(manifest, tokens, {
      limiter: null,
      fetch: async (input, init) => {
        const u = new URL(input);
        urls.push(u.origin + u.pathname);
        return fetch(`${sim.url}${u.pathname}${u.search}`, init);
      },
    });
    expect(rt.authVariant).toBe('oauth');
    expect(await rt.check()).toMatchObject({
      ok: true,
      info: { organization_id: '00DDn00000NwLbsMAF', organization_name: 'Northwind Traders', edition: 'Enterprise Edition', is_sandbox: false },
    });
    expect(urls).toEqual(['https://northwind.my.salesforce.com/services/data/v66.0/query']);
    // A sandbox's My Domain (acme--uat) is the sandbox variant, on its own host.
    const sandbox = new ConnectorRuntime(manifest, { access_token: 'x', my_domain: 'northwind--uat' }, { limiter: null });
    expect(sandbox.authVariant).toBe('oauth_sandbox');
    expect(sandbox.render(manifest.entities.get('accounts')!.actions.get('get')!, { id: '001Dn00000bVqHxIAK' }).url).toBe(
      'https://northwind--uat.sandbox.my.salesforce.com/services/data/v66.0/sobjects/Account/001Dn00000bVqHxIAK',
    );
  });

  it('the JWT bearer flow: a JWT signed by the connected app, posted as the assertion, buys the bearer token the calls carry', async () => {
    const jwt = {
      consumer_key: CONSUMER_KEY,
      username: 'integration@northwind.example',
      private_key: app.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      my_domain: 'northwind',
    };
    const rt = salesforce(jwt);
    expect(rt.authVariant).toBe('jwt');
    const leads = (await rt.execute('leads', 'list', {})) as ListEnvelope;
    expect((leads.data as Rec[]).map((l) => l['Company'])).toContain('Proseware');
    const [mint, call] = sim.requests.slice(-2);
    expect(mint).toMatchObject({ method: 'POST', path: '/services/oauth2/token' });
    const form = new URLSearchParams(mint!.rawBody);
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const claims = JSON.parse(Buffer.from(form.get('assertion')!.split('.')[1]!, 'base64url').toString('utf8')) as Rec;
    expect(claims).toMatchObject({ iss: CONSUMER_KEY, sub: jwt.username, aud: 'https://login.salesforce.com' });
    expect((claims['exp'] as number) - (claims['iat'] as number)).toBeLessThanOrEqual(240);
    expect(call!.headers['authorization']).toMatch(/^Bearer 00DDn00000NwLbs!AQ0AQ/);
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect((await failure(salesforce({ ...jwt, private_key: stranger }).execute('leads', 'list', {}))).code).toBe('upstream_credentials_rejected');
  });

  it('lists are SOQL statements; batches of batch_size follow nextRecordsUrl; modified_since filters on SystemModstamp', async () => {
    for (let i = 0; i < 445; i++) sim.addRecord('Account', { Name: `Bulk ${i}` });
    const pages: number[] = [];
    for await (const page of salesforce().pages('accounts', { batch_size: 200 })) pages.push(page.data.length);
    expect(pages).toEqual([200, 200, 50]);
    const [first, second] = queries();
    expect(first!.path).toBe('/services/data/v66.0/query');
    expect(first!.query.get('q')).toMatch(/^SELECT Id, Name, .*, SystemModstamp FROM Account ORDER BY SystemModstamp ASC$/);
    expect(first!.headers['sforce-query-options']).toBe('batchSize=200');
    expect(second!.path).toMatch(/^\/services\/data\/v66\.0\/query\/[A-Za-z0-9_-]+-200$/);

    const since = (await salesforce().execute('accounts', 'list', { modified_since: '2026-01-01T00:02:00.000Z' })) as ListEnvelope;
    expect(queries().at(-1)!.query.get('q')).toContain('FROM Account WHERE SystemModstamp > 2026-01-01T00:02:00.000Z ORDER BY SystemModstamp ASC');
    expect((since.data as Rec[]).slice(0, 3).map((a) => a['Name'])).toEqual(['Litware Bank', 'Adatum Energy', 'Bulk 0']);
    // One batch of the default 2,000: nothing behind it.
    expect(since.meta).toMatchObject({ total_size: 447, next_records_url: null });
  });

  it('creates answer the new Id; updates answer 204 and are read back; SOQL and limit errors keep their codes', async () => {
    const made = (await salesforce().execute('opportunities', 'create', {
      fields: { Name: 'Proseware - Pilot', StageName: 'Prospecting', CloseDate: '2026-09-30', Amount: 25000 },
    })) as { data: Rec };
    expect(made.data).toEqual({ Id: expect.stringMatching(/^006[A-Za-z0-9]{15}$/) });
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ Name: 'Proseware - Pilot', StageName: 'Prospecting', CloseDate: '2026-09-30', Amount: 25000 });
    const id = made.data['Id'] as string;
    const updated = (await salesforce().execute('opportunities', 'update', { id, fields: { StageName: 'Qualification', Probability: 20 } })) as { data: Rec };
    expect(sim.requests.slice(-2).map((r) => `${r.method} ${r.path}`)).toEqual([
      `PATCH /services/data/v66.0/sobjects/Opportunity/${id}`,
      `GET /services/data/v66.0/sobjects/Opportunity/${id}`,
    ]);
    expect(updated.data).toMatchObject({ Id: id, StageName: 'Qualification', Probability: 20, Amount: 25000 });

    const bad = await failure(salesforce().execute('soql', 'list', { q: 'SELECT Id, Nmae FROM Account' }));
    expect(bad.details['upstream_status']).toBe(400);
    expect(bad.message).toContain("No such column 'Nmae' on entity 'Account'");
    sim.setRateLimit({ limit: 1, window_seconds: 3600 });
    await salesforce().execute('soql', 'list', { q: 'SELECT Id FROM Case' });
    const spent = await failure(salesforce().execute('soql', 'list', { q: 'SELECT Id FROM Case' }));
    expect([spent.code, spent.details['upstream_status']]).toEqual(['upstream_rate_limited', 403]);
    sim.setRateLimit(false);
  });
});

describe('salesforce sync', () => {
  let tdb: TestDatabase;
  let engine: SyncEngine;
  let store: RecordStore;
  beforeAll(async () => {
    tdb = await openTestDatabase('sqlite');
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test' });
    engine = new SyncEngine({ database: tdb.database, sink: store, fullRefreshEvery: 10, runtimeFor: async () => ({ manifest, runtime: salesforce() }) });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
  });

  it('an incremental run reads what changed since the last SystemModstamp and removes what getDeleted names', async () => {
    await engine.register('sf-1');
    expect((await engine.runOnce('sf-1')).full).toBe(true);
    expect(await store.count('sf-1', 'contacts')).toBe(6);
    const [kept, gone] = [...sim.resources.get('Contact')!.records.values()].map((s) => s.record['Id'] as string);
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const contact = (id: string) => `${sim.url}/services/data/v66.0/sobjects/Contact/${id}`;
    expect((await fetch(contact(kept!), { method: 'PATCH', headers, body: JSON.stringify({ Title: 'COO' }) })).status).toBe(204);
    expect((await fetch(contact(gone!), { method: 'DELETE', headers })).status).toBe(204);
    const before = sim.requests.length;
    const inc = await engine.runOnce('sf-1');
    expect(inc.full).toBe(false);
    const asked = sim.requests.slice(before);
    const q = asked.find((r) => r.path.endsWith('/query') && r.query.get('q')!.includes('FROM Contact'))!.query.get('q')!;
    expect(q).toMatch(/WHERE SystemModstamp > 2026-01-01T00:05:00\.000Z ORDER BY SystemModstamp ASC$/);
    const deleted = asked.find((r) => r.path === '/services/data/v66.0/sobjects/Contact/deleted/')!;
    expect(deleted.query.get('start')).toBe('2026-01-01T00:05:00.000Z');
    expect(Date.parse(deleted.query.get('end')!)).toBeGreaterThan(Date.parse('2026-01-01'));
    expect(inc.entities['contacts']).toMatchObject({ deleted: 1 });
    expect(await store.count('sf-1', 'contacts')).toBe(5);
  }, 60_000);
});
