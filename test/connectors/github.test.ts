/**
 * The GitHub connector end to end: connectors/github/connector.yaml run by the interpreter over
 * real HTTP against the generic simulator serving GitHub's own description (the trimmed
 * @octokit/openapi@23.0.2 extract beside the manifest) with the connector's sidecar
 * (connectors/github/simulator.yaml). No simulator code for GitHub: every entity × action, Link
 * header pages, GitHub's error bodies, primary and secondary rate limits, the three token
 * variants with their checks (the app variant's minted tokens: github-app.test.ts), the OAuth web flow, and sync (full, incremental, deletes).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorizeUrl, exchangeAuthorizationCode } from '../../src/auth/index.ts';
import { connect, ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { type OAuth2Auth } from '../../src/manifest/index.ts';
import { RecordStore, searchDefOf } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import type { MigrationGroup } from '../../src/store/database.ts';
import { recordChecker } from '../helpers/records.ts';

type Rec = Record<string, unknown>;
const DESCRIPTION = new URL('../../connectors/github/openapi.json', import.meta.url).pathname;
const SIDECAR = new URL('../../connectors/github/simulator.yaml', import.meta.url).pathname;
const PAT = 'ghp_sandbox_token';
const INSTALLATION = 'ghs_sandbox_installation_token';

const manifest = getConnector('github');
const expectValid = recordChecker(manifest);

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: DESCRIPTION, sidecar: SIDECAR, seed: 3 });
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.reset();
  sim.setRateLimit({
    limit: 1_000_000,
    window_seconds: 3600,
    headers: { limit: 'x-ratelimit-limit', remaining: 'x-ratelimit-remaining', reset: 'x-ratelimit-reset' },
    reset: 'unix',
  });
});

const github = (credentials: Rec = { token: PAT }) => connect('github', { credentials: credentials as never, baseUrl: sim.url, retry: { baseDelayMs: 5 } });
const run = (entity: string, action: string, params?: Rec) =>
  github().execute(entity as never, action as never, params as never) as Promise<ListEnvelope & RecordEnvelope>;
const one = async (entity: string, action: 'get' | 'create' | 'update', params: Rec): Promise<Rec> =>
  (await run(entity, action, params)).data as unknown as Rec;
const list = async (entity: string, params: Rec): Promise<Rec[]> => (await run(entity, 'list', params)).data as unknown as Rec[];
const sent = (path: string) => sim.requests.filter((r) => r.path === path);

/** A repository created for one test, with its owner and name for the nested entities. */
async function newRepo(name: string): Promise<{ owner: string; repo: string; record: Rec }> {
  const record = await one('repositories', 'create', { name, description: `${name} for tests`, private: true });
  return { owner: (record.owner as Rec).login as string, repo: record.name as string, record };
}

describe('the manifest', () => {
  it('declares repositories, issues, pull requests and issue comments, each with list, get, create and update', () => {
    expect([...manifest.entities.keys()]).toEqual(['repositories', 'issues', 'pull_requests', 'issue_comments']);
    for (const [name, e] of manifest.entities) expect([...e.actions.keys()], name).toEqual(['list', 'get', 'create', 'update']);
    expect(manifest.auth.map((v) => [v.def.name, v.def.type, Object.keys(v.def.fields)])).toEqual([
      ['token', 'bearer', ['token']],
      ['installation_token', 'bearer', ['installation_token']],
      ['app', 'minted_bearer', ['app_id', 'installation_id', 'private_key']],
      ['oauth', 'oauth2', ['access_token', 'refresh_token', 'expires_at']],
    ]);
    expect(manifest.manifest.vendor_description).toMatchObject({
      path: 'openapi.json',
      format: 'openapi',
      licence: 'MIT, https://spdx.org/licenses/MIT',
      trimmed_by: 'trim.mjs',
    });
    // Lists follow GitHub's Link header; every list takes per_page 1..100 and a page.
    for (const [name, e] of manifest.entities) {
      expect(e.actions.get('list')?.def.pagination, name).toEqual({ type: 'link_header' });
      expect(e.actions.get('list')?.def.params?.['per_page'], name).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
    }
  });
});

describe('every entity × action against the simulated API', () => {
  it('repositories: create, get by owner and name, update, list', async () => {
    const { owner, repo, record } = await newRepo('switchboard-repo');
    expectValid('repositories', [record]);
    expect(record).toMatchObject({ name: 'switchboard-repo', description: 'switchboard-repo for tests', private: true });
    expect(JSON.parse(sent('/user/repos').at(-1)!.rawBody)).toEqual({ name: 'switchboard-repo', description: 'switchboard-repo for tests', private: true });

    const got = await one('repositories', 'get', { owner, repo });
    expect(got.id).toBe(record.id);
    const updated = await one('repositories', 'update', { owner, repo, description: 'renamed', has_issues: false });
    expect(updated).toMatchObject({ id: record.id, description: 'renamed', has_issues: false });
    expect(sent(`/repos/${owner}/${repo}`).map((r) => r.method)).toEqual(['GET', 'PATCH']);
    expect((await one('repositories', 'get', { owner, repo })).description).toBe('renamed');

    const page = await run('repositories', 'list', { per_page: 100, sort: 'updated', direction: 'desc' });
    expectValid('repositories', page.data as Rec[]);
    expect((page.data as Rec[]).map((r) => r.id)).toContain(record.id);
    expect(page.meta).toEqual({ link: null });
    expect(sent('/user/repos').at(-1)?.query.toString()).toBe('sort=updated&direction=desc&per_page=100');

    // Every request: the bearer token, GitHub's media type and the API version.
    for (const r of sim.requests) {
      expect(r.headers.authorization).toBe(`Bearer ${PAT}`);
      expect(r.headers.accept).toBe('application/vnd.github+json');
      expect(r.headers['x-github-api-version']).toBe('2022-11-28');
    }
  });

  it('issues: create, get by number, update (close), list by state', async () => {
    const { owner, repo } = await newRepo('issues-repo');
    const created = await one('issues', 'create', { owner, repo, title: 'Crash on start', body: 'Steps...', labels: ['bug'], assignees: ['octocat'] });
    expectValid('issues', [created]);
    expect(created).toMatchObject({ title: 'Crash on start', body: 'Steps...' });
    const number = created.number as number;
    expect(JSON.parse(sent(`/repos/${owner}/${repo}/issues`).at(-1)!.rawBody)).toEqual({
      title: 'Crash on start',
      body: 'Steps...',
      labels: ['bug'],
      assignees: ['octocat'],
    });

    expect((await one('issues', 'get', { owner, repo, issue_number: number })).id).toBe(created.id);
    const closed = await one('issues', 'update', { owner, repo, issue_number: number, state: 'closed', state_reason: 'completed' });
    expect(closed).toMatchObject({ id: created.id, state: 'closed', state_reason: 'completed' });
    expect(sent(`/repos/${owner}/${repo}/issues/${number}`).map((r) => r.method)).toEqual(['GET', 'PATCH']);

    const other = await one('issues', 'create', { owner, repo, title: 'Still open' });
    expect((await list('issues', { owner, repo, state: 'all' })).map((i) => i.id).sort()).toEqual([created.id, other.id].sort());
    expect((await list('issues', { owner, repo, state: 'open' })).map((i) => i.id)).toEqual([other.id]);
    expect((await list('issues', { owner, repo, state: 'closed' })).map((i) => i.id)).toEqual([created.id]);
    expectValid('issues', await list('issues', { owner, repo, state: 'all' }));
  });

  it('pull requests: create, get, update, list', async () => {
    const { owner, repo } = await newRepo('pulls-repo');
    const created = await one('pull_requests', 'create', { owner, repo, title: 'Add connector', head: 'feature', base: 'main', draft: true });
    expectValid('pull_requests', [created]);
    expect(created).toMatchObject({ title: 'Add connector', draft: true });
    expect(JSON.parse(sent(`/repos/${owner}/${repo}/pulls`).at(-1)!.rawBody)).toEqual({ title: 'Add connector', head: 'feature', base: 'main', draft: true });
    const number = created.number as number;
    expect((await one('pull_requests', 'get', { owner, repo, pull_number: number })).id).toBe(created.id);
    const updated = await one('pull_requests', 'update', { owner, repo, pull_number: number, title: 'Add the GitHub connector', state: 'closed' });
    expect(updated).toMatchObject({ id: created.id, title: 'Add the GitHub connector', state: 'closed' });
    const listed = await list('pull_requests', { owner, repo, state: 'all', sort: 'updated', direction: 'desc' });
    expect(listed.map((p) => p.id)).toEqual([created.id]);
    expectValid('pull_requests', listed);
  });

  it('issue comments: create on an issue, get, update, list for the repository', async () => {
    const { owner, repo } = await newRepo('comments-repo');
    const issue = await one('issues', 'create', { owner, repo, title: 'Discuss' });
    const created = await one('issue_comments', 'create', { owner, repo, issue_number: issue.number, body: 'First!' });
    expectValid('issue_comments', [created]);
    expect(created.body).toBe('First!');
    expect(sent(`/repos/${owner}/${repo}/issues/${String(issue.number)}/comments`).map((r) => r.method)).toEqual(['POST']);
    const id = created.id as number;
    expect((await one('issue_comments', 'get', { owner, repo, comment_id: id })).body).toBe('First!');
    expect((await one('issue_comments', 'update', { owner, repo, comment_id: id, body: 'Edited' })).body).toBe('Edited');
    expect(sent(`/repos/${owner}/${repo}/issues/comments/${id}`).map((r) => r.method)).toEqual(['GET', 'PATCH']);
    const listed = await list('issue_comments', { owner, repo, sort: 'updated', direction: 'asc' });
    expect(listed.map((c) => [c.id, c.body])).toEqual([[id, 'Edited']]);
  });

  it('params are checked before anything is sent', async () => {
    const before = sim.requests.length;
    expect((await failure(run('issues', 'list', { owner: 'o', repo: 'r', per_page: 101 }))).code).toBe('invalid_params');
    expect((await failure(run('issues', 'create', { owner: 'o', repo: 'r' }))).code).toBe('invalid_params');
    expect((await failure(run('pull_requests', 'update', { owner: 'o', repo: 'r', pull_number: 1, state: 'merged' }))).code).toBe('invalid_params');
    expect(sim.requests.length).toBe(before);
  });
});

describe('pagination', () => {
  it('follows the Link header page after page, keeping the query', async () => {
    const { owner, repo } = await newRepo('paged-repo');
    const ids: unknown[] = [];
    for (let i = 0; i < 7; i++) ids.push((await one('issues', 'create', { owner, repo, title: `issue ${i}` })).id);
    sim.reset();
    const first = await run('issues', 'list', { owner, repo, state: 'all', per_page: 3 });
    expect(first.data).toHaveLength(3);
    expect(first.meta.link).toMatch(/^<http:\/\/127\.0\.0\.1:\d+\/repos\/octocat\/paged-repo\/issues\?state=all&per_page=3&page=2>; rel="next"$/);

    sim.reset();
    const all: Rec[] = [];
    for await (const r of github().records('issues' as never, { owner, repo, state: 'all', per_page: 3 } as never)) all.push(r as Rec);
    expect(all.map((r) => r.id)).toEqual(ids);
    expect(sent(`/repos/${owner}/${repo}/issues`).map((r) => r.query.toString())).toEqual([
      'state=all&per_page=3',
      'state=all&per_page=3&page=2',
      'state=all&per_page=3&page=3',
    ]);
  });
});

describe('errors', () => {
  it("404 is upstream_not_found with GitHub's message", async () => {
    const err = await failure(run('issues', 'get', { owner: 'octocat', repo: 'nowhere', issue_number: 999999 }));
    expect(err.code).toBe('upstream_not_found');
    expect(err.message).toBe('github: Not Found');
    expect(err.details).toMatchObject({ upstream_status: 404, upstream_body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' } });
    expect((await failure(run('repositories', 'get', { owner: 'octocat', repo: 'no-such-repo' }))).code).toBe('upstream_not_found');
  });

  it('401 Bad credentials is upstream_credentials_rejected; a token is required', async () => {
    const err = await failure(github({ token: 'ghp_revoked' }).execute('repositories', 'list', {}));
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toBe('github: Bad credentials');
    expect(err.details).toMatchObject({ upstream_status: 401 });
    const anonymous = await fetch(`${sim.url}/user/repos`);
    expect(anonymous.status).toBe(401);
  });

  it('422 Validation Failed is upstream_rejected with every error GitHub lists', async () => {
    // The simulator's own 422: an issue field value the description does not allow.
    const { owner, repo } = await newRepo('invalid-repo');
    const own = await failure(run('issues', 'create', { owner, repo, title: 'x', issue_field_values: [{ field_id: 1, value: 'v', colour: 'red' }] }));
    expect(own.code).toBe('upstream_rejected');
    expect(own.details).toMatchObject({ upstream_status: 422 });
    // GitHub's own answer, with two errors.
    sim.inject({
      path: `/repos/${owner}/${repo}/issues`,
      status: 422,
      json: {
        message: 'Validation Failed',
        errors: [
          { resource: 'Issue', field: 'title', code: 'missing_field' },
          { resource: 'Label', field: 'labels', code: 'invalid', message: 'no such label' },
        ],
        documentation_url: 'https://docs.github.com/rest/issues/issues#create-an-issue',
        status: '422',
      },
    });
    const err = await failure(run('issues', 'create', { owner, repo, title: 'x' }));
    expect(err.code).toBe('upstream_rejected');
    expect(err.errors).toEqual([
      { path: '/title', message: 'missing_field' },
      { path: '/labels', message: 'no such label' },
    ]);
  });

  it('a plain 403 (no rate-limit headers) stays upstream_credentials_rejected', async () => {
    sim.inject({
      path: '/user/repos',
      status: 403,
      json: { message: 'Resource not accessible by integration', documentation_url: 'https://docs.github.com/rest', status: '403' },
    });
    const err = await failure(run('repositories', 'list', {}));
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toBe('github: Resource not accessible by integration');
  });
});

describe('rate limits', () => {
  it('every answer carries x-ratelimit-limit, -remaining and -reset (Unix seconds)', async () => {
    sim.setRateLimit({
      limit: 5000,
      window_seconds: 3600,
      headers: { limit: 'x-ratelimit-limit', remaining: 'x-ratelimit-remaining', reset: 'x-ratelimit-reset' },
      reset: 'unix',
    });
    const res = await fetch(`${sim.url}/user/repos`, { headers: { authorization: `Bearer ${PAT}` } });
    expect(res.headers.get('x-ratelimit-limit')).toBe('5000');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('4999');
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThan(Date.now() / 1000 - 1);
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 3600);
  });

  it('the primary limit (remaining 0) is waited out until x-ratelimit-reset, on 403 and on 429', async () => {
    const now = String(Math.floor(Date.now() / 1000));
    for (const status of [403, 429]) {
      sim.reset();
      sim.inject({
        path: '/user/repos',
        status,
        json: { message: 'API rate limit exceeded for user ID 1.', documentation_url: 'https://docs.github.com/rest/rate-limit' },
        headers: { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': now },
      });
      const rt = new ConnectorRuntime(manifest, { token: PAT }, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5 } });
      const page = (await rt.execute('repositories', 'list', {})) as ListEnvelope;
      expect(page.data.length).toBeGreaterThan(0);
      expect(rt.lastCall.retries, String(status)).toBe(1);
      expect(sent('/user/repos')).toHaveLength(2);
    }
    // Persistent: upstream_rate_limited with GitHub's message after the attempts.
    sim.inject({
      path: '/user/repos',
      status: 403,
      json: { message: 'API rate limit exceeded for user ID 1.' },
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': now },
      times: 4,
    });
    const err = await failure(run('repositories', 'list', {}));
    expect(err.code).toBe('upstream_rate_limited');
    expect(err.message).toBe('github: API rate limit exceeded for user ID 1.');
    expect(err.details).toMatchObject({ upstream_status: 403, attempts: 4 });
  });

  it('a secondary limit (403 with Retry-After) is retried, creates too: GitHub did not run them', async () => {
    const { owner, repo } = await newRepo('secondary-repo');
    sim.reset();
    sim.inject({
      path: `/repos/${owner}/${repo}/issues`,
      status: 403,
      json: { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.' },
      headers: { 'retry-after': '0' },
    });
    const created = await one('issues', 'create', { owner, repo, title: 'After the limit' });
    expect(created.title).toBe('After the limit');
    expect(sent(`/repos/${owner}/${repo}/issues`).map((r) => r.method)).toEqual(['POST', 'POST']);
    expect(await list('issues', { owner, repo, state: 'all' })).toHaveLength(1);
  });

  it("the simulator's own limit: the call over it waits for the next window and succeeds", async () => {
    sim.setRateLimit({
      limit: 1,
      window_seconds: 1,
      headers: { limit: 'x-ratelimit-limit', remaining: 'x-ratelimit-remaining', reset: 'x-ratelimit-reset' },
      reset: 'unix',
    });
    const rt = new ConnectorRuntime(manifest, { token: PAT }, { baseUrl: sim.url, limiter: null });
    await rt.execute('repositories', 'list', {});
    await rt.execute('repositories', 'list', {});
    expect(rt.lastCall.retries).toBeGreaterThanOrEqual(1);
    expect(sent('/user/repos')).toHaveLength(2 + rt.lastCall.retries);
  });
});

describe('auth variants and credential checks', () => {
  it('a personal access token: check asks GET /user', async () => {
    const gh = github({ token: PAT });
    expect(gh.authVariant).toBe('token');
    expect(await gh.check()).toEqual({ ok: true, connector_type: 'github', checked: true, info: { login: 'octocat', user_id: 1, repositories: null } });
    expect(sim.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /user']);
    const bad = await failure(github({ token: 'ghp_wrong' }).check());
    expect(bad.code).toBe('upstream_credentials_rejected');
    expect(bad.message).toBe('github: Bad credentials');
  });

  it('an installation token: sent as a bearer token, its own check lists one repository of the installation', async () => {
    const gh = github({ installation_token: INSTALLATION });
    expect(gh.authVariant).toBe('installation_token');
    const result = await gh.check();
    expect(result).toMatchObject({ ok: true, checked: true, info: { login: null, user_id: null, repositories: expect.any(Number) } });
    expect(sim.requests.map((r) => `${r.method} ${r.path}?${r.query.toString()}`)).toEqual(['GET /installation/repositories?per_page=1']);
    expect(sim.requests[0]?.headers.authorization).toBe(`Bearer ${INSTALLATION}`);
    expect((await gh.execute('repositories', 'list', {})).data.length).toBeGreaterThan(0);
    expect((await failure(github({ installation_token: 'ghs_expired' }).check())).code).toBe('upstream_credentials_rejected');
  });

  it('credentials of no variant are invalid_credentials, naming the variants', async () => {
    const err = await failure(Promise.resolve().then(() => github({ password: 'x' })));
    expect(err.code).toBe('invalid_credentials');
    expect(err.message).toContain(
      'token {token}; installation_token {installation_token}; app {app_id, installation_id, private_key}; oauth {access_token, refresh_token, expires_at}',
    );
  });

  it('the OAuth web flow: consent, code exchange, then API calls and the check with the user token', async () => {
    const variant = manifest.manifest.auth.find((v) => v.name === 'oauth') as OAuth2Auth;
    expect(variant).toMatchObject({
      authorize_url: 'https://github.com/login/oauth/authorize',
      token_url: 'https://github.com/login/oauth/access_token',
      scopes: ['repo'],
    });
    const onSim = (url: string): string => `${sim.url}${new URL(url).pathname}`;
    const consent = authorizeUrl(variant, {
      clientId: sim.oauth.clientId,
      redirectUri: 'https://app.example/cb',
      state: 'st-1',
      authorizeUrl: onSim(variant.authorize_url),
    });
    expect(new URL(consent).searchParams.get('scope')).toBe('repo');
    const redirect = await fetch(consent, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const back = new URL(redirect.headers.get('location') as string);
    expect(back.searchParams.get('state')).toBe('st-1');
    const client = { clientId: sim.oauth.clientId, clientSecret: sim.oauth.clientSecret, tokenUrl: onSim(variant.token_url) };
    const tokens = await exchangeAuthorizationCode(variant, client, back.searchParams.get('code') as string, 'https://app.example/cb');
    // An OAuth app's token does not expire: no refresh_token, no expires_in.
    expect(Object.keys(tokens)).toEqual(['access_token']);
    expect(tokens.access_token).toMatch(/^gho_/);

    const gh = github({ access_token: tokens.access_token });
    expect(gh.authVariant).toBe('oauth');
    expect((await gh.check()).info).toMatchObject({ login: 'octocat' });
    expect((await gh.execute('repositories', 'list', {})).data.length).toBeGreaterThan(0);
    expect(sent('/user/repos').at(-1)?.headers.authorization).toBe(`Bearer ${tokens.access_token}`);
    // A code is good once.
    await expect(exchangeAuthorizationCode(variant, client, back.searchParams.get('code') as string, 'https://app.example/cb')).rejects.toMatchObject({
      code: 'upstream_credentials_rejected',
    });
  });
});

describe('expiring user tokens (a GitHub App that opts in)', () => {
  let expiring: OpenApiSimulator;
  beforeAll(async () => {
    const sidecar = loadSidecar(SIDECAR);
    const oauth = {
      ...sidecar.oauth!,
      refresh_tokens: true,
      token_response: {
        access_token: '{{access_token}}',
        token_type: 'bearer',
        scope: '{{scope}}',
        expires_in: 28800,
        refresh_token: '{{refresh_token}}',
        refresh_token_expires_in: 15897600,
      },
    };
    expiring = await startOpenApiSimulator({ description: DESCRIPTION, sidecar: { ...sidecar, oauth }, seed: 4 });
  });
  afterAll(() => expiring.close());

  it('the code exchange gives a refresh token and an expiry; an expired token is refreshed before the call, the new credentials reported', async () => {
    const variant = manifest.manifest.auth.find((v) => v.name === 'oauth') as OAuth2Auth;
    const onSim = (url: string): string => `${expiring.url}${new URL(url).pathname}`;
    const consent = authorizeUrl(variant, {
      clientId: expiring.oauth.clientId,
      redirectUri: 'https://app.example/cb',
      state: 's',
      authorizeUrl: onSim(variant.authorize_url),
    });
    const code = new URL((await fetch(consent, { redirect: 'manual' })).headers.get('location') as string).searchParams.get('code') as string;
    const client = { clientId: expiring.oauth.clientId, clientSecret: expiring.oauth.clientSecret, tokenUrl: onSim(variant.token_url) };
    const tokens = await exchangeAuthorizationCode(variant, client, code, 'https://app.example/cb');
    expect(tokens).toEqual({ access_token: expect.stringMatching(/^gho_/), refresh_token: expect.stringMatching(/^gho_r_/), expires_at: expect.any(Number) });
    expect(tokens.expires_at! - Date.now() / 1000).toBeGreaterThan(28000);

    // Stored long ago: the token has expired, so the interpreter refreshes first.
    const refreshed: Rec[] = [];
    const gh = connect('github', {
      credentials: { ...tokens, expires_at: Math.floor(Date.now() / 1000) - 60 } as never,
      baseUrl: expiring.url,
      oauthClient: client,
      onTokenRefresh: (c) => void refreshed.push(c as unknown as Rec),
    });
    expect((await gh.execute('repositories', 'list', {})).data.length).toBeGreaterThan(0);
    expect(refreshed).toHaveLength(1);
    const fresh = refreshed[0]!;
    expect(fresh.access_token).not.toBe(tokens.access_token);
    expect(fresh.refresh_token).not.toBe(tokens.refresh_token);
    expect(expiring.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /login/oauth/authorize',
      'POST /login/oauth/access_token',
      'POST /login/oauth/access_token',
      'GET /user/repos',
    ]);
    expect(expiring.requests.at(-1)?.headers.authorization).toBe(`Bearer ${String(fresh.access_token)}`);
    // A refresh token is good once.
    const again = connect('github', { credentials: { ...tokens, expires_at: 1 } as never, baseUrl: expiring.url, oauthClient: client });
    expect((await failure(again.execute('repositories', 'list', {}))).code).toBe('oauth_refresh_failed');
  });
});

// ---------------------------------------------------------------- sync, on each database

describeEachDialect('github sync on %s', (name) => {
  const open = (groups?: MigrationGroup[]): Promise<TestDatabase> => openTestDatabase(name, groups);
  let tdb: TestDatabase;
  let store: RecordStore;
  let upstream: OpenApiSimulator;
  const engines: SyncEngine[] = [];
  const OLD = '2026-01-01T00:00:00Z';
  const at = (seconds: number): string => new Date(Date.parse(OLD) + seconds * 1000).toISOString().replace('.000Z', 'Z');

  beforeAll(async () => {
    // Two repositories, each with issues, a pull request and comments.
    // An empty upstream: no seeded records, the sidecar's seeded repositories included.
    const sidecar = loadSidecar(SIDECAR);
    upstream = await startOpenApiSimulator({
      description: DESCRIPTION,
      sidecar: { ...sidecar, records: 0, resources: { ...sidecar.resources, repos: { ...sidecar.resources?.['repos'], records: 0 } } },
      seed: 9,
    });
    const gh = connect('github', { credentials: { token: PAT }, baseUrl: upstream.url });
    for (const repoName of ['alpha', 'beta']) {
      const repo = (await gh.execute('repositories', 'create', { name: repoName })).data as unknown as Rec;
      const owner = (repo.owner as Rec).login as string;
      for (let i = 0; i < 3; i++) {
        const issue = (await gh.execute('issues', 'create', { owner, repo: repoName, title: `${repoName} issue ${i}` })).data as unknown as Rec;
        await gh.execute('issue_comments', 'create', { owner, repo: repoName, issue_number: issue.number as number, body: `on ${repoName} ${i}` });
      }
      await gh.execute('pull_requests', 'create', { owner, repo: repoName, title: `${repoName} pull`, head: 'f', base: 'main' });
    }
    // Everything so far changed long ago, a second apart.
    for (const r of upstream.resources.values()) [...r.records.values()].forEach((s, i) => ((s.record as Rec).updated_at = at(i)));
    tdb = await open();
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test' });
  });
  afterAll(async () => {
    for (const e of engines) await e.stop();
    await tdb.close();
    await upstream.close();
  });

  function engine(): SyncEngine {
    const e = new SyncEngine({
      database: tdb.database,
      sink: store,
      fullRefreshEvery: 2,
      runtimeFor: async () => ({ manifest, runtime: new ConnectorRuntime(manifest, { token: PAT }, { baseUrl: upstream.url, limiter: null }) }),
    });
    engines.push(e);
    return e;
  }
  const searchDef = (entity: string) => searchDefOf(manifest.entities.get(entity)!.def)!;

  it('full, then incremental (since, or newest first for pull requests), then a full run drops what GitHub deleted', async () => {
    const e = engine();
    await e.register('gh-1');
    upstream.reset();
    const full = await e.runOnce('gh-1');
    expect(full.full).toBe(true);
    expect(full.entities).toMatchObject({
      repositories: { records: 2, deleted: 0 },
      issues: { records: 6 },
      pull_requests: { records: 2 },
      issue_comments: { records: 6 },
    });
    // Issues per repository (for_each over repositories with owner and repo), every state, oldest change first.
    const issueLists = upstream.requests.filter((r) => /\/issues$/.test(r.path));
    expect(issueLists.map((r) => `${r.path}?${r.query.toString()}`)).toEqual([
      '/repos/octocat/alpha/issues?state=all&sort=updated&direction=asc&per_page=100',
      '/repos/octocat/beta/issues?state=all&sort=updated&direction=asc&per_page=100',
    ]);
    expect(await store.count('gh-1', 'issues')).toBe(6);
    const found = await store.search('gh-1', 'issues', searchDef('issues'), {
      query: { filter: { eq: { title: 'beta issue 2' } } },
      fields: ['title', 'state', 'author'],
    });
    expect(found.data).toEqual([{ title: 'beta issue 2', state: 'open', author: 'octocat' }]);

    // One issue and one comment change on GitHub.
    const gh = connect('github', { credentials: { token: PAT }, baseUrl: upstream.url });
    const issues = (await gh.execute('issues', 'list', { owner: 'octocat', repo: 'alpha', state: 'all' })).data as unknown as Rec[];
    await gh.execute('issues', 'update', { owner: 'octocat', repo: 'alpha', issue_number: issues[1]!.number as number, state: 'closed' });
    upstream.reset();
    const inc = await e.runOnce('gh-1');
    expect(inc.full).toBe(false);
    // since = the newest updated_at synced (the sixth issue, 5 s after OLD), sent to each repository.
    const since = upstream.requests.filter((r) => /\/issues$/.test(r.path)).map((r) => r.query.get('since'));
    expect(since).toEqual([`${at(5).slice(0, -1)}.000Z`, `${at(5).slice(0, -1)}.000Z`]);
    // GitHub's since includes its own instant: the changed issue, and the newest one synced again.
    expect(inc.entities['issues']?.records).toBe(2);
    expect(inc.entities['repositories']?.records).toBe(1);
    const closed = await store.search('gh-1', 'issues', searchDef('issues'), { query: { filter: { eq: { state: 'closed' } } }, fields: ['id'] });
    expect(closed.data).toEqual([{ id: issues[1]!.id }]);
    expect(await store.count('gh-1', 'issues')).toBe(6);

    // An issue deleted on GitHub: no list reports it; the next full run (fullRefreshEvery: 2) removes it.
    const gone = [...upstream.resources.get('issues')!.records.entries()].find(([, s]) => (s.record as Rec).title === 'beta issue 0')!;
    upstream.resources.get('issues')!.records.delete(gone[0]);
    const third = await e.runOnce('gh-1');
    expect(third.full).toBe(true);
    expect(third.entities['issues']?.deleted).toBe(1);
    expect(await store.count('gh-1', 'issues')).toBe(5);
  });
});
