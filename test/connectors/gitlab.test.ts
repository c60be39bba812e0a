/**
 * GitLab's quirks, end to end: connectors/gitlab/connector.yaml run by the interpreter over real
 * HTTP against the generic simulator serving our v4 derivation (connectors/gitlab/openapi.json,
 * from @gitbeaker/core) with its sidecar — no GitLab-specific simulator code. What every connector
 * shares (each entity × action) is the shared conformance suite's; here: the PRIVATE-TOKEN header
 * and the check, a project named by its URL-encoded path, Link-header pages, issues and merge
 * requests by iid within their project, a pipeline created at the singular /pipeline, the sync of
 * notes per issue per project (for_each nested), and webhooks in with the X-Gitlab-Token secret.
 */
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

const DIR = 'connectors/gitlab';
const manifest = getConnector('gitlab');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { token: string };

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 4, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const gitlab = (credentials: Rec = CREDENTIALS, upstream = sim) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: upstream.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => gitlab().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;
const records = (resource: string, upstream = sim) => [...(upstream.resources.get(resource)?.records.values() ?? [])].map((s) => s.record);

describe('gitlab', () => {
  it('sends the access token as PRIVATE-TOKEN; the check names the user; a bad token is upstream_credentials_rejected', async () => {
    expect(manifest.auth.map((v) => [v.def.name, v.def.type])).toEqual([
      ['access_token', 'api_key'],
      ['oauth', 'oauth2'],
    ]);
    const checked = await gitlab().check();
    expect(checked).toMatchObject({ ok: true, checked: true });
    expect(sim.requests.at(-1)).toMatchObject({ method: 'GET', path: '/user' });
    expect(sim.requests.at(-1)!.headers['private-token']).toBe(CREDENTIALS.token);
    const err = await failure(gitlab({ token: 'glpat-not-a-token-000000000' }).check());
    expect([err.code, err.message]).toEqual(['upstream_credentials_rejected', expect.stringContaining('401 Unauthorized')]);
  });

  it('names a project by id or URL-encoded path; pages follow the Link header', async () => {
    const first = await run('projects', 'list', { membership: true, per_page: 2 });
    expect(first.data).toHaveLength(2);
    expect(Object.fromEntries(sim.requests.at(-1)!.query)).toMatchObject({ membership: 'true', per_page: '2' });
    expect((first.meta as Rec)['link']).toMatch(/^<http:\/\/127\.0\.0\.1:\d+\/projects\?membership=true&per_page=2&page=2>; rel="next"$/);
    const all: Rec[] = [];
    for await (const p of gitlab().records('projects', { per_page: 2 })) all.push(p);
    expect(all).toHaveLength(5);
    expect(sim.requests.slice(-3).map((r) => r.query.get('page'))).toEqual([null, '2', '3']);
    const project = first.data[0] as Rec;
    const byPath = (await run('projects', 'get', { project_id: project['path_with_namespace'] })).data as Rec;
    expect(byPath['id']).toBe(project['id']);
    // One path segment: the slash sent as %2F.
    expect(sim.requests.at(-1)!.path).toBe(`/projects/${encodeURIComponent(project['path_with_namespace'] as string)}`);
    expect(sim.requests.at(-1)!.segments).toEqual(['projects', project['path_with_namespace']]);
  });

  it('creates, reads and closes an issue by its iid within the project; a note on it; a pipeline at the singular /pipeline', async () => {
    const projectId = records('projects')[0]!['id'] as number;
    const issue = (await run('issues', 'create', { project_id: projectId, title: 'Refunds time out', labels: 'bug,payments' })).data as Rec;
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ title: 'Refunds time out', labels: 'bug,payments' });
    expect(issue).toMatchObject({ project_id: projectId, title: 'Refunds time out', state: 'opened' });
    expect(typeof issue['id']).toBe('number');
    const closed = (await run('issues', 'update', { project_id: projectId, issue_iid: issue['iid'], state_event: 'close' })).data as Rec;
    expect(sim.requests.at(-1)).toMatchObject({ method: 'PUT', path: `/projects/${projectId}/issues/${String(issue['iid'])}` });
    expect(closed['iid']).toBe(issue['iid']);
    const note = (await run('issue_notes', 'create', { project_id: projectId, issue_iid: issue['iid'], body: 'Fixed in !12' })).data as Rec;
    expect(note).toMatchObject({ body: 'Fixed in !12', noteable_iid: issue['iid'], project_id: projectId });
    const notes = (await run('issue_notes', 'list', { project_id: projectId, issue_iid: issue['iid'] })).data as Rec[];
    expect(notes.map((n) => n['id'])).toEqual([note['id']]);

    const pipeline = (await run('pipelines', 'create', { project_id: projectId, ref: 'main', variables: [{ key: 'DEPLOY', value: 'staging' }] })).data as Rec;
    expect(sim.requests.at(-1)).toMatchObject({ method: 'POST', path: `/projects/${projectId}/pipeline` });
    const got = (await run('pipelines', 'get', { project_id: projectId, pipeline_id: pipeline['id'] })).data as Rec;
    expect(got).toMatchObject({ id: pipeline['id'], project_id: projectId, ref: 'main' });
    const missing = await failure(run('issues', 'get', { project_id: projectId, issue_iid: 999999 }));
    expect([missing.code, missing.message]).toEqual(['upstream_not_found', expect.stringContaining('404 Issue Not Found')]);
  });
});

// ---------------------------------------------------------------- sync, on each database

describeEachDialect('gitlab sync on %s', (name) => {
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
      runtimeFor: async () => ({ manifest, runtime: gitlab(CREDENTIALS, upstream) }),
    });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
    await upstream.close();
  });

  it("syncs projects, their issues, merge requests and pipelines, and each issue's and merge request's notes; then only what changed", async () => {
    await engine.register('gl-1');
    const first = await engine.runOnce('gl-1');
    expect(first.full).toBe(true);
    expect(first.entities).toMatchObject({
      projects: { records: 5 },
      issues: { records: 15 },
      merge_requests: { records: 15 },
      pipelines: { records: 15 },
      issue_notes: { records: 45 },
      merge_request_notes: { records: 45 },
    });
    // Notes are read per issue, under the issue's own project.
    const noteLists = upstream.requests.filter((r) => /^\/projects\/\d+\/issues\/\d+\/notes$/.test(r.path));
    expect(noteLists).toHaveLength(15);

    const issue = records('issues', upstream)[0]!;
    upstream.updateRecord('issues', String(issue['iid']), { title: 'Checkout fails for 3-D Secure cards (Safari)' });
    const since = upstream.requests.length;
    const second = await engine.runOnce('gl-1');
    expect(second.full).toBe(false);
    // updated_after is inclusive: the changed issue, and the one that set the last mark again.
    expect(second.entities['issues']).toMatchObject({ records: 2 });
    const issueLists = upstream.requests.slice(since).filter((r) => /^\/projects\/\d+\/issues$/.test(r.path) && r.query.get('updated_after') !== null);
    expect(issueLists.length).toBeGreaterThan(0);
    expect(await store.getRecord('gl-1', 'issues', String(issue['id']))).toMatchObject({ title: 'Checkout fails for 3-D Secure cards (Safari)' });
  }, 60_000);
});

// ---------------------------------------------------------------- webhooks in, hosted

// GitLab signs nothing: each delivery carries the hook's secret token in X-Gitlab-Token, which is
// the deployment's SWITCHBOARD_GITLAB_WEBHOOK_SECRET. Deliveries go to the connector's own URL.
describeEachDialect('gitlab webhooks in on %s', (dialect) => {
  const SECRET = 'gitlab-webhook-secret-for-tests';
  let upstream: OpenApiSimulator;
  let h: Harness;
  let token: string;
  let id: string;
  let n = 0;
  const deliver = (body: Rec, secret = SECRET, uuid = `6f1c2a4e-0000-4000-8000-${String(++n).padStart(12, '0')}`): Promise<Reply> =>
    h.request('POST', `/api/v1/webhooks/gitlab/${id}`, {
      raw: JSON.stringify(body),
      headers: { 'X-Gitlab-Token': secret, 'X-Gitlab-Event': 'Issue Hook', 'X-Gitlab-Event-UUID': uuid },
    });

  beforeAll(async () => {
    upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 6, rateLimit: false });
    ({ h, token } = await startHosted(dialect, {
      org: 'org-gitlab-hooks',
      upstreams: { gitlab: upstream.url },
      config: { connectorTypes: { gitlab: { webhookSecret: SECRET } } },
    }));
    const r = await h.request('POST', '/api/v1/integrations/connectors', {
      token,
      body: { customer_name: 'c1', connector_type: 'gitlab', name: 'g', credentials: CREDENTIALS },
    });
    expect(r.status, r.text).toBe(201);
    id = r.body.id;
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await upstream?.close();
  });

  it('refuses a wrong or missing token; an issue event fetches the issue, a note event the note; a replay is refused', async () => {
    const issue = records('issues', upstream)[0]!;
    const projectId = issue['project_id'] as number;
    const issueEvent: Rec = {
      object_kind: 'issue',
      event_type: 'issue',
      project: { id: projectId, path_with_namespace: 'northwind/payments-api' },
      object_attributes: { id: issue['id'], iid: issue['iid'], title: 'Checkout fails (edited)', action: 'update' },
    };
    for (const secret of ['not-the-secret', '']) {
      const r = await deliver(issueEvent, secret);
      expect([r.status, r.body.code], r.text).toEqual([401, 'webhook_signature_invalid']);
    }
    const applied = await deliver(issueEvent, SECRET, 'aaaaaaaa-0000-4000-8000-000000000001');
    expect(applied.status, applied.text).toBe(200);
    expect(applied.body).toMatchObject({ entity: 'issues', id: String(issue['id']), connectors: [{ connector_id: id, added: 1 }] });
    expect(await h.service.ctx.records.getRecord(id, 'issues', String(issue['id']))).toMatchObject({ iid: issue['iid'], title: issue['title'] });
    const replay = await deliver(issueEvent, SECRET, 'aaaaaaaa-0000-4000-8000-000000000001');
    expect([replay.status, replay.body.code]).toEqual([401, 'webhook_replayed']);

    const note = records('issues_notes', upstream).find((x) => x['noteable_iid'] === issue['iid'])!;
    const noteEvent: Rec = {
      object_kind: 'note',
      event_type: 'note',
      project: { id: projectId },
      object_attributes: { id: note['id'], noteable_type: 'Issue', note: note['body'] },
      issue: { id: issue['id'], iid: issue['iid'] },
    };
    const noted = await deliver(noteEvent);
    expect(noted.body).toMatchObject({ entity: 'issue_notes', connectors: [{ connector_id: id, added: 1 }] });
    expect(await h.service.ctx.records.getRecord(id, 'issue_notes', String(note['id']))).toMatchObject({ body: note['body'] });
    const push = await deliver({ object_kind: 'push', project: { id: projectId } });
    expect(push.body).toMatchObject({ ok: true, ignored: 'no topic rule' });
  }, 60_000);
});
