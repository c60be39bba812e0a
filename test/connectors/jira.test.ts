/**
 * The Jira connector end to end: connectors/jira/connector.yaml run by the interpreter over real
 * HTTP against the generic simulator serving the connector's own vendored description
 * (jira-platform-v3.json) with its sidecar (simulator.yaml) — no code for Jira. Every entity ×
 * action; pagination by nextPageToken (issues), by startAt until isLast (projects) or total
 * (comments), and by short pages (users); ADF bodies; Jira's error bodies; rate limits; both auth
 * variants and their base URLs; the credential check; sync (issues incremental on updated).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorizeUrl, exchangeAuthorizationCode, runFollowUps } from '../../src/auth/index.ts';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
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

type Rec = Record<string, any>;
const manifest = getConnector('jira');
const DIR = join(import.meta.dirname, '../../connectors/jira');
const expectValid = recordChecker(manifest);

const BASIC = { site: 'acme', email: 'dev@acme.test', api_token: 'sim-jira-api-token' };
const OAUTH = { access_token: 'sim-jira-oauth-token', cloud_id: '11223344-a1b2-3b33-c444-def123456789' };

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: join(DIR, 'jira-platform-v3.json'), sidecar: join(DIR, 'simulator.yaml'), seed: 3 });
}, 60_000);
afterAll(() => sim.close());
beforeEach(() => {
  sim.reset();
  sim.resetRateLimit();
});

const runtime = (credentials: Rec = BASIC, fetchImpl?: typeof fetch) =>
  new ConnectorRuntime(manifest, credentials as never, {
    baseUrl: sim.url,
    limiter: null,
    retry: { baseDelayMs: 5 },
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
const run = (entity: string, action: string, params: Rec = {}, credentials: Rec = BASIC) =>
  runtime(credentials).execute(entity as never, action as never, params as never) as Promise<ListEnvelope & RecordEnvelope>;
async function all(entity: string, params: Rec = {}): Promise<Rec[]> {
  const out: Rec[] = [];
  for await (const r of runtime().records(entity as never, params as never)) out.push(r as Rec);
  return out;
}
/** The requests the simulator received on a path. */
const sent = (path: string) => sim.requests.filter((r) => r.path === path);
const lastBody = (path: string): Rec => JSON.parse(sent(path).at(-1)!.rawBody) as Rec;
const adf = (text: string) => ({ type: 'doc', version: 1, content: [{ type: 'paragraph', content: [{ type: 'text', text }] }] });

describe('the manifest', () => {
  it('declares issues, projects, comments and users with their actions', () => {
    const actions = Object.fromEntries([...manifest.entities].map(([n, e]) => [n, [...e.actions.keys()].sort()]));
    expect(actions).toEqual({
      issues: ['create', 'get', 'list', 'update'],
      projects: ['get', 'list'],
      comments: ['create', 'get', 'list', 'update'],
      users: ['get', 'list'],
    });
    expect(manifest.manifest.auth.map((v) => [v.name, v.type, Object.keys(v.fields)])).toEqual([
      ['api_token', 'basic', ['site', 'email', 'api_token']],
      ['oauth', 'oauth2', ['access_token', 'refresh_token', 'expires_at', 'cloud_id']],
    ]);
  });

  it('API token: basic auth (email:token) on https://<site>.atlassian.net; OAuth: bearer through api.atlassian.com/ex/jira/<cloud id>', () => {
    const basic = new ConnectorRuntime(manifest, BASIC as never, { limiter: null });
    const r = basic.render(basic.action('issues', 'get'), { issue_id_or_key: 'ENG-1' });
    expect(r.url).toBe('https://acme.atlassian.net/rest/api/3/issue/ENG-1');
    expect(r.init.headers['authorization']).toBe(`Basic ${Buffer.from('dev@acme.test:sim-jira-api-token').toString('base64')}`);
    const oauth = new ConnectorRuntime(manifest, OAUTH as never, { limiter: null });
    const o = oauth.render(oauth.action('projects', 'list'), {});
    expect(o.url).toBe(`https://api.atlassian.com/ex/jira/${OAUTH.cloud_id}/rest/api/3/project/search`);
    expect(o.init.headers['authorization']).toBe('Bearer sim-jira-oauth-token');
  });

  it('refuses a site or cloud id that would leave Atlassian’s hosts, before sending anything', async () => {
    for (const creds of [
      { ...BASIC, site: 'evil.example.com/x' },
      { ...BASIC, site: 'Acme' },
      { ...OAUTH, cloud_id: '../../other' },
    ]) {
      const e = await failure(Promise.resolve().then(() => new ConnectorRuntime(manifest, creds as never, { limiter: null }).execute('projects', 'list', {})));
      expect(e.code, JSON.stringify(creds)).toBe('invalid_credentials');
    }
  });
});

describe('credential check (GET /rest/api/3/myself)', () => {
  it('passes with the API token and with an OAuth token, reporting the account', async () => {
    for (const creds of [BASIC, OAUTH]) {
      const c = await runtime(creds).check();
      expect(c).toMatchObject({ ok: true, connector_type: 'jira', checked: true, info: { account_id: expect.any(String) } });
    }
    expect(sent('/rest/api/3/myself')).toHaveLength(2);
  });

  it('a wrong API token is upstream_credentials_rejected with Jira’s message', async () => {
    const e = await failure(runtime({ ...BASIC, api_token: 'revoked' }).check());
    expect(e.code).toBe('upstream_credentials_rejected');
    expect(e.message).toMatch(/Client must be authenticated/);
  });
});

describe('OAuth 2.0 (3LO)', () => {
  it('consent URL with audience and prompt, code exchange against the simulated flow, then calls through /ex/jira/<cloud id>', async () => {
    const variant = manifest.manifest.auth.find((v) => v.name === 'oauth') as OAuth2Auth;
    const onSim = (url: string): string => `${sim.url}${new URL(url).pathname}`;
    const consent = new URL(
      authorizeUrl(variant, { clientId: sim.oauth.clientId, redirectUri: 'https://app.example/cb', state: 'st-9', authorizeUrl: onSim(variant.authorize_url) }),
    );
    expect(consent.searchParams.get('audience')).toBe('api.atlassian.com');
    expect(consent.searchParams.get('prompt')).toBe('consent');
    expect(consent.searchParams.get('scope')).toBe('read:jira-work write:jira-work read:jira-user offline_access');
    const back = new URL((await fetch(consent, { redirect: 'manual' })).headers.get('location') as string);
    expect(back.searchParams.get('state')).toBe('st-9');
    const client = { clientId: sim.oauth.clientId, clientSecret: sim.oauth.clientSecret, tokenUrl: onSim(variant.token_url) };
    const tokens = await exchangeAuthorizationCode(variant, client, back.searchParams.get('code') as string, 'https://app.example/cb');
    expect(tokens.access_token).toEqual(expect.any(String));
    expect(tokens.expires_at).toBeGreaterThan(Date.now() / 1000);
    // The token answer has no cloud id: the variant's follow_up asks accessible-resources (on
    // the simulator, same path) with the new token and fills it (library callers may instead
    // supply cloud_id themselves).
    expect(tokens).not.toHaveProperty('cloud_id');
    const oauthVariant = manifest.auth.find((v) => v.def.name === 'oauth')!;
    const creds = await runFollowUps(oauthVariant, tokens, { after: 'exchange', baseUrl: sim.url });
    expect(creds).toEqual({ ...tokens, cloud_id: OAUTH.cloud_id });
    expect(sent('/oauth/token/accessible-resources').at(-1)?.headers.authorization).toBe(`Bearer ${tokens.access_token}`);
    const rt = new ConnectorRuntime(manifest, creds as never, { baseUrl: sim.url, limiter: null });
    expect(rt.authVariant).toBe('oauth');
    expect((await rt.check()).checked).toBe(true);
    expect(sent('/rest/api/3/myself').at(-1)?.headers.authorization).toBe(`Bearer ${tokens.access_token}`);
    // Without the cloud id the OAuth variant does not match: refused before anything is sent.
    expect(() => new ConnectorRuntime(manifest, tokens as never, { limiter: null })).toThrow(/match no credential variant of jira/);
  });
});

describe('issues', () => {
  it('create (plain-text description as ADF), get by id and by key, update (description as ADF; Jira answers 204, the issue is read back)', async () => {
    const made = (
      await run('issues', 'create', {
        project_key: 'ENG',
        summary: 'Checkout fails',
        issue_type: 'Bug',
        description: 'Steps: pay\nthen fail',
        labels: ['checkout'],
        priority: 'High',
      })
    ).data;
    // Jira answers a create with {id, key, self} only.
    expect(Object.keys(made).sort()).toEqual(['id', 'key', 'self']);
    expect(lastBody('/rest/api/3/issue')).toEqual({
      fields: {
        project: { key: 'ENG' },
        summary: 'Checkout fails',
        issuetype: { name: 'Bug' },
        description: adf('Steps: pay\nthen fail'),
        labels: ['checkout'],
        priority: { name: 'High' },
      },
    });

    const byId = (await run('issues', 'get', { issue_id_or_key: made.id })).data;
    const byKey = (await run('issues', 'get', { issue_id_or_key: made.key })).data;
    expect(byKey).toEqual(byId);
    expect(byId).toMatchObject({ id: made.id, key: made.key, summary: 'Checkout fails', fields: { description: adf('Steps: pay\nthen fail') } });
    expect(byId.updated).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
    expectValid('issues', [byId]);

    const doc = { type: 'doc', version: 1, content: [{ type: 'heading', attrs: { level: 2 }, content: [{ type: 'text', text: 'Root cause' }] }] };
    const before = sent(`/rest/api/3/issue/${made.key}`).length;
    const edited = (await run('issues', 'update', { issue_id_or_key: made.key, description_adf: doc, notify_users: false })).data;
    // The PUT (answered 204 without a body, as Jira does), then the issue read back with get.
    const calls = sent(`/rest/api/3/issue/${made.key}`).slice(before);
    expect(calls.map((r) => r.method)).toEqual(['PUT', 'GET']);
    const put = calls[0]!;
    expect(put.query.has('returnIssue')).toBe(false);
    expect(put.query.get('notifyUsers')).toBe('false');
    expect(JSON.parse(put.rawBody)).toEqual({ fields: { description: doc } });
    // The fields not sent are kept.
    expect(edited).toMatchObject({ id: made.id, summary: 'Checkout fails', fields: { description: doc, summary: 'Checkout fails' } });

    const renamed = (await run('issues', 'update', { issue_id_or_key: made.id, summary: 'Checkout fails on Safari', assignee_account_id: null })).data;
    expect(renamed).toMatchObject({ id: made.id, key: made.key, summary: 'Checkout fails on Safari' });
    expectValid('issues', [renamed]);
    expect(
      JSON.parse(
        sent(`/rest/api/3/issue/${made.id}`)
          .filter((r) => r.method === 'PUT')
          .at(-1)!.rawBody,
      ),
    ).toEqual({ fields: { summary: 'Checkout fails on Safari', assignee: { accountId: null } } });
    expect((await run('issues', 'get', { issue_id_or_key: made.id })).data.summary).toBe('Checkout fails on Safari');
  });

  it("the simulator answers Edit issue as Jira's description says: 204 without a body, the issue only with returnIssue=true", async () => {
    const made = (await run('issues', 'create', { project_key: 'ENG', summary: 'Shape', issue_type: 'Task' })).data;
    const put = (query: string) =>
      fetch(`${sim.url}/rest/api/3/issue/${made.key}${query}`, {
        method: 'PUT',
        headers: { authorization: `Basic ${Buffer.from(`${BASIC.email}:${BASIC.api_token}`).toString('base64')}`, 'content-type': 'application/json' },
        body: JSON.stringify({ fields: { summary: 'Shape 2' } }),
      });
    const plain = await put('');
    expect(plain.status).toBe(204);
    expect(await plain.text()).toBe('');
    const asked = await put('?returnIssue=true');
    expect(asked.status).toBe(200);
    expect(((await asked.json()) as Rec).fields.summary).toBe('Shape 2');
  });

  it("an update answered 204 whose read-back fails reports the read-back's error (never a made-up record)", async () => {
    const made = (await run('issues', 'create', { project_key: 'ENG', summary: 'Gone', issue_type: 'Task' })).data;
    // The GET after the PUT fails: the caller learns it, with the get's error.
    const failingGet: typeof fetch = async (input, init) => {
      const req = new Request(input, init);
      if (req.method === 'GET' && new URL(req.url).pathname === `/rest/api/3/issue/${made.key}`)
        return new Response(JSON.stringify({ errorMessages: ['Issue does not exist or you do not have permission to see it.'], errors: {} }), {
          status: 404,
          headers: { 'content-type': 'application/json' },
        });
      return fetch(req);
    };
    const err = await failure(
      runtime(BASIC, failingGet).execute('issues' as never, 'update' as never, { issue_id_or_key: made.key, summary: 'Gone 2' } as never),
    );
    expect(err.code).toBe('upstream_not_found');
  });

  it('list: JQL search pages by nextPageToken until isLast; without jql every issue by last update', async () => {
    for (let i = 0; i < 2; i++) await run('issues', 'create', { project_key: 'ENG', summary: `Made ${i}`, issue_type: 'Task' });
    const total = sim.resources.get('issue')!.records.size;
    expect(total).toBeGreaterThanOrEqual(7);
    const first = await run('issues', 'list', { jql: 'project = ENG', max_results: 3, fields: ['summary', 'status'] });
    expect(first.data).toHaveLength(3);
    expect(typeof first.meta.next_page).toBe('string');
    const q = sent('/rest/api/3/search/jql')[0]!.query;
    expect(Object.fromEntries(q)).toEqual({ jql: 'project = ENG', fields: 'summary,status', maxResults: '3' });
    const second = await run('issues', 'list', { jql: 'project = ENG', max_results: 3, next_page_token: first.meta.next_page });
    expect(second.data.map((r) => r.id)).not.toContain(first.data[0]!.id);

    sim.requests.length = 0;
    const every = await all('issues', { max_results: 3 });
    expect(new Set(every.map((r) => r.id)).size).toBe(total);
    expectValid('issues', every);
    const searches = sent('/rest/api/3/search/jql');
    expect(searches).toHaveLength(Math.ceil(total / 3));
    expect(searches[0]!.query.get('jql')).toBe('updated >= 0 ORDER BY updated ASC');
    expect(searches[0]!.query.get('fields')).toBe('*navigable');
    expect(searches[1]!.query.get('nextPageToken')).toEqual(expect.any(String));
  });

  it('updated_since narrows the JQL to updated >= <epoch ms>, oldest first', async () => {
    await run('issues', 'list', { updated_since: 1769860800 });
    await run('issues', 'list', { jql: 'project = ENG', updated_since: 1769860800 });
    expect(sent('/rest/api/3/search/jql').map((r) => r.query.get('jql'))).toEqual([
      'updated >= 1769860800000 ORDER BY updated ASC',
      '(project = ENG) AND updated >= 1769860800000 ORDER BY updated ASC',
    ]);
  });

  it('bad input is invalid_params before any request', async () => {
    const before = sim.requests.length;
    expect((await failure(run('issues', 'create', { project_key: 'ENG', issue_type: 'Task' }))).code).toBe('invalid_params');
    expect(
      (await failure(run('issues', 'create', { project_key: 'ENG', summary: 'x', issue_type: 'Task', description_adf: { type: 'paragraph' } }))).code,
    ).toBe('invalid_params');
    const none = await failure(run('issues', 'update', { issue_id_or_key: 'ENG-1' }));
    expect(none.code).toBe('invalid_params');
    expect(none.message).toMatch(/needs at least one of/);
    expect((await failure(run('issues', 'list', { max_results: 500 }))).code).toBe('invalid_params');
    expect(sim.requests.length).toBe(before);
  });
});

describe('projects', () => {
  it('list pages by startAt until isLast; get by id and by key', async () => {
    const page = await run('projects', 'list', { max_results: 2 });
    expect(page.data).toHaveLength(2);
    expect(page.meta.next_page).toBe(2);
    const every = await all('projects', { max_results: 2 });
    expect(every).toHaveLength(5);
    expect(new Set(every.map((p) => p.id)).size).toBe(5);
    expectValid('projects', every);
    expect(
      sent('/rest/api/3/project/search')
        .slice(1)
        .map((r) => r.query.get('startAt')),
    ).toEqual([null, '2', '4']);
    const one = every[3]!;
    expect((await run('projects', 'get', { project_id_or_key: one.id })).data).toEqual(one);
    expect((await run('projects', 'get', { project_id_or_key: one.key })).data).toEqual(one);
  });

  it('a project that does not exist is upstream_not_found with Jira’s message', async () => {
    const e = await failure(run('projects', 'get', { project_id_or_key: 'NOPE' }));
    expect(e.code).toBe('upstream_not_found');
    expect(e.message).toMatch(/No project could be found/);
  });
});

describe('comments', () => {
  it('create (plain text or ADF), list per issue by startAt until total, get, update', async () => {
    const issue = (await run('issues', 'create', { project_key: 'ENG', summary: 'Has comments', issue_type: 'Task' })).data;
    const a = (await run('comments', 'create', { issue_id_or_key: issue.key, body: 'First look' })).data;
    expect(lastBody(`/rest/api/3/issue/${issue.key}/comment`)).toEqual({ body: adf('First look') });
    expect(a).toMatchObject({ body: adf('First look'), issue_id_or_key: issue.key });
    const doc = { type: 'doc', version: 1, content: [{ type: 'bulletList', content: [] }] };
    const b = (await run('comments', 'create', { issue_id_or_key: issue.key, body_adf: doc })).data;
    const c = (await run('comments', 'create', { issue_id_or_key: issue.key, body: 'Third' })).data;

    const page = await run('comments', 'list', { issue_id_or_key: issue.key, max_results: 2 });
    expect(page.data.map((x) => x.id)).toEqual([a.id, b.id]);
    expect(page.meta.next_page).toBe(2);
    const every = await all('comments', { issue_id_or_key: issue.key, max_results: 2 });
    expect(every.map((x) => x.id)).toEqual([a.id, b.id, c.id]);
    expect(every.every((x) => x.issue_id_or_key === issue.key)).toBe(true);
    expectValid('comments', every);
    // Another issue's comments are its own; an issue that does not exist is Jira's 404.
    const other = (await run('issues', 'create', { project_key: 'ENG', summary: 'No comments', issue_type: 'Task' })).data;
    expect((await run('comments', 'list', { issue_id_or_key: other.key })).data).toEqual([]);
    expect((await failure(run('comments', 'list', { issue_id_or_key: 'ENG-999' }))).code).toBe('upstream_not_found');

    expect((await run('comments', 'get', { issue_id_or_key: issue.key, comment_id: b.id })).data).toMatchObject({ id: b.id, body: doc });
    const edited = (await run('comments', 'update', { issue_id_or_key: issue.key, comment_id: a.id, body: 'Second look', notify_users: false })).data;
    expect(edited).toMatchObject({ id: a.id, body: adf('Second look') });
    expect((await run('comments', 'get', { issue_id_or_key: issue.key, comment_id: a.id })).data.body).toEqual(adf('Second look'));

    expect((await failure(run('comments', 'create', { issue_id_or_key: issue.key }))).code).toBe('invalid_params');
    const missing = await failure(run('comments', 'get', { issue_id_or_key: issue.key, comment_id: '424242' }));
    expect(missing.code).toBe('upstream_not_found');
  });
});

describe('users', () => {
  it('list pages by startAt until a short page; get by account id', async () => {
    const every = await all('users', { max_results: 2 });
    expect(every).toHaveLength(5);
    expect(new Set(every.map((u) => u.accountId)).size).toBe(5);
    expectValid('users', every);
    expect(sent('/rest/api/3/users/search').map((r) => r.query.get('startAt'))).toEqual([null, '2', '4']);
    const u = every[2]!;
    expect((await run('users', 'get', { account_id: u.accountId })).data).toEqual(u);
    const e = await failure(run('users', 'get', { account_id: 'no-such-account' }));
    expect(e.code).toBe('upstream_not_found');
    expect(e.message).toMatch(/Specified user does not exist/);
  });
});

describe('errors and rate limits', () => {
  it('an issue that does not exist is upstream_not_found with errorMessages[0]', async () => {
    const e = await failure(run('issues', 'get', { issue_id_or_key: 'ENG-404' }));
    expect(e.code).toBe('upstream_not_found');
    expect(e.message).toBe('jira: Issue does not exist or you do not have permission to see it.');
  });

  it('a 400 with errors by field reports each field', async () => {
    const body = { errorMessages: [], errors: { summary: 'You must specify a summary of the issue.', issuetype: 'Specify an issue type' } };
    const stub = (async () => new Response(JSON.stringify(body), { status: 400, headers: { 'content-type': 'application/json' } })) as typeof fetch;
    const e = await failure(runtime(BASIC, stub).execute('issues', 'create', { project_key: 'ENG', summary: ' ', issue_type: 'Nope' } as never));
    expect(e.code).toBe('upstream_rejected');
    expect(e.message).toMatch(/You must specify a summary of the issue/);
    expect(e.errors).toEqual([
      { path: '/summary', message: 'You must specify a summary of the issue.' },
      { path: '/issuetype', message: 'Specify an issue type' },
    ]);
  });

  it('429 with Retry-After beyond the longest wait fails at once as upstream_rate_limited; X-RateLimit-* headers are sent', async () => {
    sim.setRateLimit({
      limit: 2,
      window_seconds: 3600,
      headers: { limit: 'X-RateLimit-Limit', remaining: 'X-RateLimit-Remaining', reset: 'Retry-After' },
      reset: 'seconds',
    });
    try {
      await run('projects', 'list', {});
      const ok = await fetch(`${sim.url}/rest/api/3/myself`, {
        headers: { authorization: `Basic ${Buffer.from('a@b.c:sim-jira-api-token').toString('base64')}` },
      });
      expect(ok.headers.get('x-ratelimit-limit')).toBe('2');
      expect(ok.headers.get('x-ratelimit-remaining')).toBe('0');
      const e = await failure(run('projects', 'list', {}));
      expect(e.code).toBe('upstream_rate_limited');
      expect(e.details?.['retry_after_ms']).toBeGreaterThan(60_000);
    } finally {
      sim.setRateLimit(false);
    }
  });

  it('a 429 with a short Retry-After is retried', async () => {
    let calls = 0;
    const flaky = (async (input: string | URL | Request, init?: RequestInit) => {
      if (calls++ === 0)
        return new Response(JSON.stringify({ errorMessages: ['Rate limit exceeded'] }), {
          status: 429,
          headers: { 'retry-after': '0', 'content-type': 'application/json' },
        });
      return fetch(input, init);
    }) as typeof fetch;
    const page = await runtime(BASIC, flaky).execute('users', 'list', {} as never);
    expect((page as ListEnvelope).data).toHaveLength(5);
    expect(calls).toBe(2);
  });
});

describeEachDialect('jira sync on %s', (name) => {
  const open = (groups?: MigrationGroup[]): Promise<TestDatabase> => openTestDatabase(name, groups);
  let tdb: TestDatabase;
  let store: RecordStore;
  let upstream: OpenApiSimulator;
  const engines: SyncEngine[] = [];
  beforeAll(async () => {
    // A simulator of its own: the other tests' creates would change the counts.
    upstream = await startOpenApiSimulator({ description: join(DIR, 'jira-platform-v3.json'), sidecar: join(DIR, 'simulator.yaml'), seed: 9 });
    tdb = await open();
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test' });
  });
  afterAll(async () => {
    for (const e of engines) await e.stop();
    await tdb.close();
    await upstream.close();
  });
  const upstreamRuntime = () => new ConnectorRuntime(manifest, BASIC as never, { baseUrl: upstream.url, limiter: null, retry: { baseDelayMs: 5 } });

  it('issues incrementally on updated (epoch-ms JQL), projects and users in full; a full refresh drops deleted issues', async () => {
    const engine = new SyncEngine({
      database: tdb.database,
      sink: store,
      fullRefreshEvery: 3,
      runtimeFor: async () => ({ manifest, runtime: upstreamRuntime() }),
    });
    engines.push(engine);
    const id = `jira-${name}`;
    await engine.register(id);
    const full = await engine.runOnce(id);
    expect(full).toMatchObject({ full: true, entities: { issues: { records: 5 }, projects: { records: 5 }, users: { records: 5 } } });
    const issues = [...upstream.resources.get('issue')!.records.values()].map((s) => s.record as Rec);
    const mark = Math.max(...issues.map((r) => Date.parse(r.fields.updated)));

    upstream.requests.length = 0;
    const target = issues[1]!;
    await upstreamRuntime().execute('issues', 'update', { issue_id_or_key: target.id, summary: 'Renamed upstream' } as never);
    const inc = await engine.runOnce(id);
    expect(inc.full).toBe(false);
    const jql = upstream.requests.filter((r) => r.path === '/rest/api/3/search/jql').map((r) => r.query.get('jql'));
    expect(jql).toEqual([`updated >= ${Math.floor(mark / 1000)}000 ORDER BY updated ASC`]);
    const def = { primaryKey: 'id', fields: manifest.entities.get('issues')!.def.search!.fields as Record<string, 'string'> };
    const hit = await store.search(id, 'issues', def, { query: { filter: { eq: { id: target.id } } }, fields: ['id', 'summary'] });
    expect(hit.data).toEqual([{ id: target.id, summary: 'Renamed upstream' }]);

    // Deleted upstream: gone after the next full refresh (the third run).
    upstream.resources.get('issue')!.records.delete(String(issues[0]!.id));
    await engine.runOnce(id);
    const refresh = await engine.runOnce(id);
    expect(refresh.full).toBe(true);
    expect(refresh.entities['issues']).toMatchObject({ records: 4, deleted: 1 });
    expect(await store.count(id, 'issues')).toBe(4);
    expect(await store.count(id, 'users')).toBe(5);
  }, 60_000);
});
