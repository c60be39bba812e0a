/**
 * The Linear connector end to end: connectors/linear/connector.yaml run by the interpreter over
 * real HTTP against the generic GraphQL simulator serving connectors/linear/schema.graphql with
 * connectors/linear/simulator.yaml. Every entity × action; records checked against the
 * manifest's record schemas; Relay pages walked to the end; writes read back; Linear's error
 * codes (in a 200 body and in a 400) mapped to ours; the API key and OAuth (with refresh); the
 * credential check; a full then incremental sync with an edit and an archived issue.
 */
import type { ValidateFunction } from 'ajv';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorizeUrl, exchangeAuthorizationCode } from '../../src/auth/index.ts';
import { connect, ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { createAjv, type OAuth2Auth } from '../../src/manifest/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { startGraphqlSimulator, type GraphqlSimulator } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import type { MigrationGroup } from '../../src/store/database.ts';

type Rec = Record<string, any>;

const manifest = getConnector('linear');
const ajv = createAjv();
const validators = new Map<string, ValidateFunction>();
for (const [name, entity] of manifest.entities) validators.set(name, ajv.compile(entity.def.record));
const expectValid = (entity: string, records: Rec[]): void => {
  const v = validators.get(entity) as ValidateFunction;
  expect(records.length).toBeGreaterThan(0);
  for (const r of records) expect(v(r), `${entity} ${String(r['id'])}: ${ajv.errorsText(v.errors)}`).toBe(true);
};

const SCHEMA = 'connectors/linear/schema.graphql';
const SIDECAR = 'connectors/linear/simulator.yaml';
let sim: GraphqlSimulator;
let apiKey: string;
beforeAll(async () => {
  sim = await startGraphqlSimulator({ schema: SCHEMA, sidecar: SIDECAR, seed: 11, rateLimit: false });
  apiKey = (sim.sidecar.sandbox?.credentials ?? {})['api_key'] as string;
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.reset();
  sim.setRateLimit(false);
});

const linear = (key: string = apiKey) => connect('linear', { credentials: { api_key: key }, baseUrl: sim.url, retry: { baseDelayMs: 5 } });
const run = (entity: string, action: string, params?: Rec) =>
  linear().execute(entity as never, action as never, params as never) as Promise<ListEnvelope & RecordEnvelope>;
const list = (entity: string, params?: Rec) => run(entity, 'list', params) as Promise<ListEnvelope>;
const one = (entity: string, action: 'get' | 'create' | 'update', params: Rec) => run(entity, action, params) as Promise<RecordEnvelope>;
async function all(entity: string, params?: Rec): Promise<Rec[]> {
  const out: Rec[] = [];
  for await (const r of linear().records(entity as never, params as never)) out.push(r as Rec);
  return out;
}
/** Records the simulator holds for a type, live (not archived) ones by default. */
const stored = (type: string, archived = false): Rec[] =>
  [...(sim.resources.get(type)?.records.values() ?? [])].filter((r) => archived || r['archivedAt'] === null);
/** A GraphQL request straight to the simulator (what someone else does in Linear meanwhile). */
async function gql(query: string, variables: Rec = {}): Promise<Rec> {
  const r = await fetch(`${sim.url}/graphql`, {
    method: 'POST',
    headers: { authorization: apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return (await r.json()) as Rec;
}
const sentBodies = (): Rec[] => sim.requests.filter((r) => r.path === '/graphql').map((r) => JSON.parse(r.rawBody) as Rec);

const TYPES: Record<string, string> = { issues: 'Issue', projects: 'Project', teams: 'Team', comments: 'Comment', users: 'User' };

describe('the manifest', () => {
  it('declares list and get for every entity, create where Linear allows it, update for all', () => {
    const actions = Object.fromEntries([...manifest.entities].map(([n, e]) => [n, [...e.actions.keys()].sort()]));
    expect(actions).toEqual({
      issues: ['create', 'get', 'list', 'update'],
      projects: ['create', 'get', 'list', 'update'],
      teams: ['create', 'get', 'list', 'update'],
      comments: ['create', 'get', 'list', 'update'],
      // Users join by invitation: the API has no userCreate.
      users: ['get', 'list', 'update'],
    });
  });

  it('auth: a personal API key sent bare in Authorization, and OAuth 2 with refresh tokens', () => {
    const [key, oauth] = manifest.manifest.auth;
    expect(key).toMatchObject({ name: 'api_key', type: 'api_key', header: 'Authorization', value: '{{credentials.api_key}}' });
    expect(oauth).toMatchObject({
      name: 'oauth',
      type: 'oauth2',
      authorize_url: 'https://linear.app/oauth/authorize',
      token_url: 'https://api.linear.app/oauth/token',
      refreshes: true,
      expires: true,
      scope_separator: ',',
    });
  });

  it('names where its schema came from', () => {
    expect((manifest.manifest as Rec)['vendor_description']).toMatchObject({
      path: 'schema.graphql',
      format: 'graphql',
      licence: 'MIT',
      trimmed_by: 'derive.mjs',
    });
  });

  // The unpacked SDK (npm pack @linear/sdk@98.0.0) where the development machine keeps it.
  const SDK = process.env['LINEAR_SDK_DTS'] ?? '/work/vendor/linear-sdk-98.0.0/package/dist/index-D2pH4Pk9.d.mts';
  it.skipIf(!existsSync(SDK))(
    'schema.graphql is exactly what derive.mjs makes from the SDK',
    () => {
      const out = execFileSync(process.execPath, ['connectors/linear/derive.mjs', SDK], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
      expect(out).toBe(readFileSync('connectors/linear/schema.graphql', 'utf8'));
    },
    60_000,
  );
});

describe('every entity × action through the interpreter', () => {
  // list, get and an unknown id of every entity: test/conformance/connectors.test.ts.
  it('issues.create then get and update: the created issue reads back, in its team, with the team default state', async () => {
    const team = stored('Team')[1] as Rec;
    const assignee = stored('User')[2] as Rec;
    const made = (
      await one('issues', 'create', {
        team_id: team['id'],
        title: 'Checkout fails on Safari',
        description: 'Steps: ...',
        priority: 2,
        assignee_id: assignee['id'],
        label_ids: ['l1'],
        due_date: '2026-12-01',
      })
    ).data as Rec;
    expectValid('issues', [made]);
    expect(made).toMatchObject({
      title: 'Checkout fails on Safari',
      description: 'Steps: ...',
      priority: 2,
      labelIds: ['l1'],
      dueDate: '2026-12-01',
      team: { id: team['id'] },
      assignee: { id: assignee['id'] },
    });
    expect(made['state']).toMatchObject({ id: expect.any(String) });
    expect((await one('issues', 'get', { id: made['id'] })).data).toEqual(made);
    // The variables carry the input; nothing is spliced into the document.
    const sent = sentBodies().find((b) => String(b['query']).includes('issueCreate')) as Rec;
    expect(sent['variables']).toEqual({
      input: {
        teamId: team['id'],
        title: 'Checkout fails on Safari',
        description: 'Steps: ...',
        priority: 2,
        assigneeId: assignee['id'],
        labelIds: ['l1'],
        dueDate: '2026-12-01',
      },
    });
    expect(String(sent['query'])).not.toContain('Safari');

    const state = stored('WorkflowState')[3] as Rec;
    const changed = (await one('issues', 'update', { id: made['id'], title: 'Checkout fails on Safari 17', state_id: state['id'], priority: 1 })).data as Rec;
    expect(changed).toMatchObject({ id: made['id'], title: 'Checkout fails on Safari 17', priority: 1, state: { id: state['id'] }, description: 'Steps: ...' });
    expect(Date.parse(changed['updatedAt'] as string)).toBeGreaterThanOrEqual(Date.parse(made['updatedAt'] as string));
    expect((await one('issues', 'get', { id: made['id'] })).data).toEqual(changed);
  });

  it('issues.create in a team that does not exist is upstream_not_found; update without a change is invalid_params, sent nowhere', async () => {
    const e = await failure(one('issues', 'create', { team_id: 'missing-team', title: 'x' }));
    expect(e.code).toBe('upstream_not_found');
    expect(e.message).toContain('Entity not found: Team');
    sim.reset();
    const bad = await failure(one('issues', 'update', { id: (stored('Issue')[0] as Rec)['id'] }));
    expect(bad.code).toBe('invalid_params');
    expect(sim.requests).toHaveLength(0);
  });

  it('projects.create and update', async () => {
    const teams = stored('Team')
      .slice(0, 2)
      .map((t) => t['id']);
    const made = (await one('projects', 'create', { name: 'Q1 launch', team_ids: teams, description: 'Ship it', target_date: '2027-03-31', priority: 3 }))
      .data as Rec;
    expectValid('projects', [made]);
    expect(made).toMatchObject({ name: 'Q1 launch', description: 'Ship it', targetDate: '2027-03-31', priority: 3 });
    const lead = stored('User')[0] as Rec;
    const changed = (await one('projects', 'update', { id: made['id'], name: 'Q1 launch (web)', lead_id: lead['id'] })).data as Rec;
    expect(changed).toMatchObject({ id: made['id'], name: 'Q1 launch (web)', lead: { id: lead['id'] }, description: 'Ship it' });
    expect((await one('projects', 'get', { id: made['id'] })).data).toEqual(changed);
  });

  it('teams.create and update', async () => {
    const made = (await one('teams', 'create', { name: 'Platform', key: 'PLT', description: 'Infra', cycles_enabled: true })).data as Rec;
    expectValid('teams', [made]);
    expect(made).toMatchObject({ name: 'Platform', key: 'PLT', description: 'Infra', cyclesEnabled: true });
    const changed = (await one('teams', 'update', { id: made['id'], name: 'Platform & Infra', timezone: 'Europe/Paris' })).data as Rec;
    expect(changed).toMatchObject({ id: made['id'], name: 'Platform & Infra', timezone: 'Europe/Paris', key: 'PLT' });
    expect((await one('teams', 'get', { id: made['id'] })).data).toEqual(changed);
  });

  it('comments.create on an issue, listed by issue_id, and update', async () => {
    const issue = stored('Issue')[4] as Rec;
    const made = (await one('comments', 'create', { issue_id: issue['id'], body: 'Reproduced on 17.1' })).data as Rec;
    expectValid('comments', [made]);
    expect(made).toMatchObject({ body: 'Reproduced on 17.1', issueId: issue['id'], issue: { id: issue['id'] } });
    const onIssue = (await list('comments', { issue_id: issue['id'] })).data as Rec[];
    expect(onIssue.map((c) => c['id'])).toContain(made['id']);
    expect(onIssue.every((c) => c['issueId'] === issue['id'])).toBe(true);
    const changed = (await one('comments', 'update', { id: made['id'], body: 'Reproduced on 17.1 and 17.2' })).data as Rec;
    expect(changed).toMatchObject({ id: made['id'], body: 'Reproduced on 17.1 and 17.2', issueId: issue['id'] });
    expect((await one('comments', 'get', { id: made['id'] })).data).toEqual(changed);
  });

  it('users.update', async () => {
    const user = stored('User')[1] as Rec;
    const changed = (await one('users', 'update', { id: user['id'], display_name: 'ada', status_emoji: ':palm_tree:', status_label: 'On leave' })).data as Rec;
    expectValid('users', [changed]);
    expect(changed).toMatchObject({ id: user['id'], displayName: 'ada', statusEmoji: ':palm_tree:', statusLabel: 'On leave', email: user['email'] });
    expect((await one('users', 'get', { id: user['id'] })).data).toEqual(changed);
  });
});

describe('pagination and filters', () => {
  it('follows pageInfo.endCursor while hasNextPage, one request per page, every issue once', async () => {
    const first = await list('issues', { first: 2 });
    expect(typeof first.meta['next_page']).toBe('string');
    const second = await list('issues', { first: 2, after: first.meta['next_page'] });
    expect((second.data as Rec[]).map((r) => r['id'])).not.toContain((first.data[0] as Rec)['id']);
    sim.reset();
    const everything = await all('issues', { first: 2 });
    const live = stored('Issue');
    expect(everything).toHaveLength(live.length);
    expect(new Set(everything.map((r) => r['id'])).size).toBe(live.length);
    expect(sim.requests).toHaveLength(Math.ceil(live.length / 2));
    const last = await list('issues', { first: live.length });
    expect(last.meta['next_page']).toBeNull();
  });

  it('updated_since, team_id and assignee_id become filter comparators the simulator applies', async () => {
    const team = stored('Team')[0] as Rec;
    const inTeam = (await list('issues', { team_id: team['id'], first: 250 })).data as Rec[];
    expect(inTeam.map((r) => r['id']).sort()).toEqual(
      stored('Issue')
        .filter((r) => r['team'].__ref === team['id'])
        .map((r) => r['id'])
        .sort(),
    );
    expect(sentBodies().at(-1)?.['variables']).toMatchObject({ filter: { and: [{ team: { id: { eq: team['id'] } } }] } });

    const dates = stored('Issue')
      .map((r) => r['updatedAt'] as string)
      .sort();
    const since = dates[2] as string;
    const newer = (await list('issues', { updated_since: since, order_by: 'updatedAt' })).data as Rec[];
    expect(newer.map((r) => r['updatedAt'])).toEqual(dates.filter((d) => d > since));
    expect(sentBodies().at(-1)?.['variables']).toMatchObject({ orderBy: 'updatedAt', filter: { and: [{ updatedAt: { gt: since } }] } });
  });
});

describe('errors, rate limits and auth', () => {
  it('a RATELIMITED error inside a 200 is upstream_rate_limited, retried (not executed), then succeeds', async () => {
    sim.inject({ path: '/graphql', status: 200, json: { data: null, errors: [{ message: 'Rate limit exceeded', extensions: { code: 'RATELIMITED' } }] } });
    const rt = new ConnectorRuntime(manifest, { api_key: apiKey }, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5 } });
    const page = (await rt.execute('teams', 'list', {})) as ListEnvelope;
    expect(page.data.length).toBe(stored('Team').length);
    expect(rt.lastCall.attempts).toBe(2);
  });

  it('the SDK\'s words work too: extensions.type "ratelimited" in a 200, "authentication error" in a 400', async () => {
    sim.inject({
      path: '/graphql',
      status: 200,
      json: { data: null, errors: [{ message: 'Too many requests', extensions: { type: 'ratelimited', userError: false } }] },
    });
    const rt = new ConnectorRuntime(manifest, { api_key: apiKey }, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5 } });
    await rt.execute('teams', 'list', {});
    expect(rt.lastCall.attempts).toBe(2);
    sim.inject({
      path: '/graphql',
      status: 400,
      json: { errors: [{ message: 'Authentication required, not authenticated', extensions: { type: 'authentication error', userError: true } }] },
    });
    expect((await failure(list('teams'))).code).toBe('upstream_credentials_rejected');
  });

  it('over the simulated limit: a 400 RATELIMITED with X-RateLimit-Requests-* headers, waited out until the reset (epoch ms)', async () => {
    sim.setRateLimit({
      limit: 1,
      window_seconds: 1,
      headers: { limit: 'X-RateLimit-Requests-Limit', remaining: 'X-RateLimit-Requests-Remaining', reset: 'X-RateLimit-Requests-Reset' },
      reset: 'unix_ms',
    });
    const raw = await fetch(`${sim.url}/graphql`, {
      method: 'POST',
      headers: { authorization: apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ viewer { id } }' }),
    });
    expect(raw.headers.get('x-ratelimit-requests-limit')).toBe('1');
    expect(raw.headers.get('x-ratelimit-requests-remaining')).toBe('0');
    expect(Number(raw.headers.get('x-ratelimit-requests-reset'))).toBeGreaterThan(Date.now() - 1000);
    const over = await fetch(`${sim.url}/graphql`, {
      method: 'POST',
      headers: { authorization: apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ viewer { id } }' }),
    });
    expect(over.status).toBe(400);
    expect(((await over.json()) as Rec)['errors'][0]['extensions']['code']).toBe('RATELIMITED');
    // The create is retried too: Linear did not run a rate-limited request.
    const rt = new ConnectorRuntime(manifest, { api_key: apiKey }, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5 } });
    const made = (await rt.execute('teams', 'create', { name: 'After the wait' })) as RecordEnvelope;
    expect((made.data as Rec)['name']).toBe('After the wait');
    expect(rt.lastCall.retries).toBeGreaterThanOrEqual(1);
  });

  it('a limit that resets in an hour fails at once with the wait in details', async () => {
    sim.setRateLimit({ limit: 1, window_seconds: 3600, headers: { reset: 'X-RateLimit-Requests-Reset' }, reset: 'unix_ms' });
    await list('teams');
    const e = await failure(list('teams'));
    expect(e.code).toBe('upstream_rate_limited');
    expect(e.details['retry_after_ms']).toBeGreaterThan(60_000);
  });

  it('a wrong API key is upstream_credentials_rejected (AUTHENTICATION_ERROR in a 400), and the key travels without Bearer', async () => {
    const e = await failure(linear('lin_api_wrong').execute('issues', 'list', {} as never));
    expect(e.code).toBe('upstream_credentials_rejected');
    expect(e.message).toContain('Authentication required');
    await list('teams');
    expect(sim.requests.at(-1)?.headers.authorization).toBe(apiKey);
  });

  it('a document the schema refuses is a 400 GRAPHQL_VALIDATION_FAILED', async () => {
    const r = await gql('{ issues { nodes { id nope } } }');
    expect(r['errors'][0]).toMatchObject({ message: expect.stringContaining('Cannot query field "nope"'), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
  });

  it('check: the viewer proves the key; a revoked key fails the check', async () => {
    const ok = await linear().check();
    const viewer = stored('User')[0] as Rec;
    expect(ok).toEqual({
      ok: true,
      connector_type: 'linear',
      checked: true,
      info: { user_id: viewer['id'], user_name: viewer['name'], email: viewer['email'] },
    });
    sim.tokens.delete(apiKey);
    try {
      expect((await failure(linear().check())).code).toBe('upstream_credentials_rejected');
    } finally {
      sim.tokens.add(apiKey);
    }
  });

  it('OAuth: consent, code exchange, Bearer calls, and a refresh when the token expires', async () => {
    const variant = manifest.manifest.auth.find((v) => v.name === 'oauth') as OAuth2Auth;
    const onSim = (url: string): string => `${sim.url}${new URL(url).pathname}`;
    const consent = authorizeUrl(variant, {
      clientId: sim.oauth.clientId,
      redirectUri: 'https://app.example/cb',
      state: 's1',
      authorizeUrl: onSim(variant.authorize_url),
    });
    expect(new URL(consent).searchParams.get('scope')).toBe('read,write');
    const back = new URL((await fetch(consent, { redirect: 'manual' })).headers.get('location') as string);
    const client = { clientId: sim.oauth.clientId, clientSecret: sim.oauth.clientSecret, tokenUrl: onSim(variant.token_url) };
    const tokens = await exchangeAuthorizationCode(variant, client, back.searchParams.get('code') as string, 'https://app.example/cb');
    expect(tokens).toMatchObject({ access_token: expect.stringMatching(/^lin_oauth_/), refresh_token: expect.any(String), expires_at: expect.any(Number) });

    const refreshed: Rec[] = [];
    // An access token about to expire: the runtime refreshes it first, with the refresh token.
    const rt = new ConnectorRuntime(
      manifest,
      { access_token: tokens.access_token, refresh_token: tokens.refresh_token as string, expires_at: Math.floor(Date.now() / 1000) + 10 },
      {
        baseUrl: sim.url,
        limiter: null,
        oauthClient: client,
        onTokenRefresh: (c) => void refreshed.push(c),
      },
    );
    expect(rt.authVariant).toBe('oauth');
    sim.reset();
    const page = (await rt.execute('users', 'list', {})) as ListEnvelope;
    expect(page.data.length).toBe(stored('User').length);
    expect(refreshed).toHaveLength(1);
    expect(refreshed[0]?.['access_token']).not.toBe(tokens.access_token);
    expect(refreshed[0]?.['refresh_token']).not.toBe(tokens.refresh_token);
    expect(sim.requests.at(-1)?.headers.authorization).toBe(`Bearer ${String(refreshed[0]?.['access_token'])}`);
    // A refresh token is used once.
    const again = await fetch(client.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token as string,
        client_id: client.clientId,
        client_secret: client.clientSecret,
      }),
    });
    expect(again.status).toBe(400);
  });
});

describeEachDialect('sync on %s', (dialect) => {
  const open = (groups?: MigrationGroup[]): Promise<TestDatabase> => openTestDatabase(dialect, groups);
  it('full sync of every entity, then incremental: an edit and a new issue come in, an archived issue leaves search', async () => {
    const s = await startGraphqlSimulator({ schema: SCHEMA, sidecar: SIDECAR, seed: 23, rateLimit: false });
    const tdb = await open();
    try {
      await migrate(tdb.database, [syncMigrations]);
      const store = new RecordStore(tdb.database, { cursorSecret: 'test-secret' });
      const engine = new SyncEngine({
        database: tdb.database,
        sink: store,
        runtimeFor: async () => ({ manifest, runtime: new ConnectorRuntime(manifest, { api_key: apiKey }, { baseUrl: s.url, limiter: null }) }),
        fullRefreshEvery: 100,
      });
      const live = (type: string): Rec[] => [...(s.resources.get(type)?.records.values() ?? [])].filter((r) => r['archivedAt'] === null);
      const issueDef = { primaryKey: 'id', fields: manifest.entities.get('issues')!.def.search!.fields as Record<string, 'string'> };
      const storedIssues = async (): Promise<Rec[]> =>
        (await store.search('lin', 'issues', issueDef, { query: { sort: [{ id: 'asc' }] }, fields: ['id', 'title'], limit: 1000 })).data as Rec[];
      await engine.register('lin');
      const first = await engine.runOnce('lin');
      expect(first.full).toBe(true);
      for (const [entity, type] of Object.entries(TYPES)) expect(first.entities[entity]?.records, entity).toBe(live(type).length);
      expect((await storedIssues()).map((r) => r['id'])).toEqual(
        live('Issue')
          .map((r) => r['id'])
          .sort(),
      );

      // Meanwhile in Linear: an edit, a new issue, an archived one.
      const post = async (query: string, variables: Rec): Promise<Rec> =>
        (await (
          await fetch(`${s.url}/graphql`, {
            method: 'POST',
            headers: { authorization: apiKey, 'content-type': 'application/json' },
            body: JSON.stringify({ query, variables }),
          })
        ).json()) as Rec;
      const [edited, archived] = live('Issue') as [Rec, Rec];
      await post('mutation ($id: String!) { issueUpdate(id: $id, input: { title: "Edited in Linear" }) { success } }', { id: edited['id'] });
      const made = await post('mutation ($t: String!) { issueCreate(input: { teamId: $t, title: "Filed in Linear" }) { issue { id } } }', {
        t: live('Team')[0]?.['id'],
      });
      const archive = await post('mutation ($id: String!) { issueArchive(id: $id) { success } }', { id: archived['id'] });
      expect(archive['data']).toEqual({ issueArchive: { success: true } });

      s.reset();
      const second = await engine.runOnce('lin');
      expect(second.full).toBe(false);
      expect(second.entities['issues']).toMatchObject({ records: 2, deleted: 1 });
      // Only changes were asked for: updatedAt after the last run's mark, archived ones for removals.
      const bodies = s.requests.map((r) => JSON.parse(r.rawBody) as Rec).filter((b) => String(b['query']).includes('issues('));
      expect(bodies.every((b) => b['variables']['filter']?.['and']?.[0]?.['updatedAt']?.['gt'] !== undefined)).toBe(true);
      expect(bodies.some((b) => b['variables']['includeArchived'] === true)).toBe(true);
      const after = await storedIssues();
      expect(after.map((r) => r['id'])).toEqual(
        live('Issue')
          .map((r) => r['id'])
          .sort(),
      );
      expect(after.find((r) => r['id'] === edited['id'])?.['title']).toBe('Edited in Linear');
      expect(after.map((r) => r['id'])).toContain(made['data']['issueCreate']['issue']['id']);
      expect(after.map((r) => r['id'])).not.toContain(archived['id']);
    } finally {
      await tdb.close();
      await s.close();
    }
  });
});
