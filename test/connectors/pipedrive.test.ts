/**
 * Pipedrive's quirks, against the generic simulator serving connectors/pipedrive/openapi.json
 * (derived from the official client) with its sidecar: OAuth calls going to the company's own
 * host named by the token answer's api_domain (token_fields), API v2 cursor paging beside v1
 * notes paged by an integer `start`, the x-api-token header, and an incremental sync by
 * updated_since that drops deleted deals. The generic suites run list/get/create/update.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorizeUrl, exchangeAuthorizationCode, refreshAccessToken } from '../../src/auth/index.ts';
import { connect, ConnectorRuntime, getConnector, type ListEnvelope } from '../../src/index.ts';
import type { OAuth2Auth } from '../../src/manifest/index.ts';
import { preConsentFields } from '../../src/service/connectors/oauth-flow.ts';
import { startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { loadSidecar } from '../../src/simulator/sidecar.ts';
import { RecordStore } from '../../src/search/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/pipedrive';
const manifest = getConnector('pipedrive');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const TOKEN = sidecar.sandbox?.credentials?.['api_token'] as string;

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 4, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const pipedrive = () => connect('pipedrive', { credentials: { api_token: TOKEN } as never, baseUrl: sim.url, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const sent = (path: string) => sim.requests.filter((r) => r.path === path);

describe('pipedrive API token and paging', () => {
  it('sends the token as x-api-token; v2 lists follow additional_data.next_cursor to the last page', async () => {
    const ids = [...sim.resources.get('persons')!.records.values()].map((s) => s.record['id']);
    const got: Rec[] = [];
    for await (const r of pipedrive().records('persons' as never, { limit: 3 } as never)) got.push(r as Rec);
    expect(got.map((r) => r['id'])).toEqual(ids);
    const pages = sent('/api/v2/persons');
    expect(pages).toHaveLength(Math.ceil(ids.length / 3));
    expect(pages[0]!.headers['x-api-token']).toBe(TOKEN);
    expect(pages[0]!.headers['authorization']).toBeUndefined();
    expect(pages.slice(1).every((p) => typeof p.query.get('cursor') === 'string')).toBe(true);
  });

  it('v1 notes page by an integer start from additional_data.pagination.next_start, absent on the last page', async () => {
    const first = (await pipedrive().execute('notes' as never, 'list' as never, { limit: 4 } as never)) as ListEnvelope;
    expect(first.data).toHaveLength(4);
    expect(first.meta.next_page).toBe(4);
    const last = (await pipedrive().execute('notes' as never, 'list' as never, { limit: 4, start: 4 } as never)) as ListEnvelope;
    expect(last.data).toHaveLength(sim.resources.get('notes')!.records.size - 4);
    expect(last.meta.next_page).toBeNull();
    expect(sent('/v1/notes').at(-1)!.query.get('start')).toBe('4');
  });

  it('the check reads the token owner from /v1/users/me', async () => {
    const info = await pipedrive().check();
    expect(info).toMatchObject({ ok: true, info: { company_domain: 'northwindlabs' } });
  });
});

describe('pipedrive OAuth: the company host from the token answer', () => {
  const variant = manifest.manifest.auth.find((v) => v.name === 'oauth') as OAuth2Auth;
  const onSim = (url: string): string => `${sim.url}${new URL(url).pathname}`;
  const client = () => ({ clientId: sim.oauth.clientId, clientSecret: sim.oauth.clientSecret, tokenUrl: onSim(variant.token_url) });

  it('nothing is asked before consent; the exchange and every refresh store company_domain, and calls go to that host', async () => {
    expect(preConsentFields(manifest, variant)).toEqual([]);
    const consent = authorizeUrl(variant, {
      clientId: sim.oauth.clientId,
      redirectUri: 'https://app.example/cb',
      state: 's1',
      authorizeUrl: onSim(variant.authorize_url),
    });
    const back = new URL((await fetch(consent, { redirect: 'manual' })).headers.get('location') as string);
    const tokens = await exchangeAuthorizationCode(variant, client(), back.searchParams.get('code') as string, 'https://app.example/cb');
    expect(tokens).toMatchObject({ access_token: expect.any(String), refresh_token: expect.any(String), company_domain: 'northwindlabs' });
    expect(tokens).not.toHaveProperty('api_domain');
    const refreshed = await refreshAccessToken(variant, client(), tokens.refresh_token as string);
    expect(refreshed['company_domain']).toBe('northwindlabs');

    // No base URL given: the variant's own, on the company's host (answered here by the simulator).
    const urls: string[] = [];
    const rt = new ConnectorRuntime(manifest, refreshed, {
      limiter: null,
      fetch: async (input, init) => {
        const u = new URL(input);
        urls.push(u.origin + u.pathname);
        return fetch(`${sim.url}${u.pathname}${u.search}`, init);
      },
    });
    expect(rt.authVariant).toBe('oauth');
    const page = (await rt.execute('deals', 'list', { limit: 2 })) as ListEnvelope;
    expect(page.data).toHaveLength(2);
    expect(urls).toEqual(['https://northwindlabs.pipedrive.com/api/v2/deals']);
    expect(sent('/api/v2/deals').at(-1)!.headers['authorization']).toBe(`Bearer ${refreshed.access_token}`);
  });
});

describeEachDialect('pipedrive sync on %s', (name) => {
  let tdb: TestDatabase;
  let store: RecordStore;
  let upstream: OpenApiSimulator;
  let engine: SyncEngine;
  const asked: string[] = [];

  beforeAll(async () => {
    upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 5, rateLimit: false });
    tdb = await openTestDatabase(name);
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
          { api_token: TOKEN },
          {
            baseUrl: upstream.url,
            limiter: null,
            fetch: async (input, init) => {
              const u = new URL(input);
              asked.push(
                `${u.pathname}?${[...u.searchParams.keys()]
                  .filter((k) => k === 'updated_since' || k === 'status')
                  .sort()
                  .join('&')}`,
              );
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

  it('an incremental run lists by updated_since and removes a deal deleted since the last run', async () => {
    await engine.register('pd-1');
    const full = await engine.runOnce('pd-1');
    expect(full.full).toBe(true);
    const deals = upstream.resources.get('deals')!.records.size;
    expect(await store.count('pd-1', 'deals')).toBe(deals);
    const id = [...upstream.resources.get('deals')!.records.values()][1]!.record['id'] as number;
    const patched = await fetch(`${upstream.url}/api/v2/deals/${id}`, {
      method: 'PATCH',
      headers: { 'x-api-token': TOKEN, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'deleted' }),
    });
    expect(patched.status).toBe(200);
    asked.length = 0;
    const inc = await engine.runOnce('pd-1');
    expect(inc.full).toBe(false);
    expect(asked).toContain('/api/v2/deals?updated_since');
    expect(asked).toContain('/api/v2/deals?status&updated_since');
    expect(asked).toContain('/v1/notes?updated_since');
    expect(inc.entities['deals']?.deleted).toBe(1);
    expect(await store.count('pd-1', 'deals')).toBe(deals - 1);
  }, 60_000);
});
