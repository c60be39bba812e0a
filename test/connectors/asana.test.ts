/**
 * Asana's quirks, end to end: connectors/asana/connector.yaml run by the interpreter over real
 * HTTP against the generic simulator serving Asana's own description (connectors/asana/openapi.json,
 * trimmed by trim.mjs) with its sidecar — no Asana-specific simulator code. What every connector
 * shares (each entity × action) is the shared conformance suite's; here: the {"data": ...}
 * envelopes of writes and answers, opt_fields sent comma-separated, offset paging by
 * next_page.offset, the /users/me check, comments (stories) under a task, error codes, and the
 * tasks' incremental sync by modified_since, project by project.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connect, ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { loadSidecar } from '../../src/simulator/sidecar.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { dialectCases, type TestDatabase } from '../search/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/asana';
const manifest = getConnector('asana');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const TOKEN = sidecar.sandbox?.credentials?.['token'] as string;
const GID = /^[1-9]\d{15}$/;

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 5, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const asana = (credentials: Rec = { token: TOKEN }) =>
  connect('asana', { credentials: credentials as never, baseUrl: sim.url, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params?: Rec) =>
  asana().execute(entity as never, action as never, params as never) as Promise<ListEnvelope & RecordEnvelope>;
const records = (resource: string) => [...(sim.resources.get(resource)?.records.values() ?? [])].map((s) => s.record);
const gidOf = (v: unknown): string => (v as Rec)['gid'] as string;

describe('asana', () => {
  it('wraps writes in {"data": ...}, unwraps answers, and sends opt_fields comma-separated', async () => {
    const project = records('projects')[0]!;
    const workspace = gidOf(project['workspace']);
    const created = (
      await run('tasks', 'create', {
        name: 'Write the brief',
        notes: 'Two pages',
        projects: [project['gid']],
        workspace,
        opt_fields: ['name', 'notes', 'projects.name'],
      })
    ).data as Rec;
    expect(created['gid']).toMatch(GID);
    expect(created).toMatchObject({ name: 'Write the brief', notes: 'Two pages', workspace: { gid: workspace } });
    const sent = sim.requests.at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', path: '/tasks' });
    expect(sent.query.get('opt_fields')).toBe('name,notes,projects.name');
    expect(JSON.parse(sent.rawBody)).toEqual({ data: { name: 'Write the brief', notes: 'Two pages', projects: [project['gid']], workspace } });

    const updated = (await run('tasks', 'update', { task_gid: created['gid'], completed: true })).data as Rec;
    expect(updated).toMatchObject({ gid: created['gid'], completed: true, name: 'Write the brief' });
    expect(sim.requests.at(-1)).toMatchObject({ method: 'PUT', path: `/tasks/${created['gid'] as string}` });
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ data: { completed: true } });
  });

  it("pages a project's tasks by next_page.offset until next_page is null", async () => {
    const tasksOf = (p: Rec) => records('tasks').filter((t) => (t['projects'] as Rec[]).some((x) => x['gid'] === p['gid']));
    const project = records('projects').sort((a, b) => tasksOf(b).length - tasksOf(a).length)[0]!;
    const inProject = tasksOf(project);
    expect(inProject.length).toBeGreaterThan(2);
    const seen: string[] = [];
    let offset: string | undefined;
    let calls = 0;
    do {
      const page = await run('tasks', 'list', { project: project['gid'], limit: 2, ...(offset !== undefined ? { offset } : {}) });
      seen.push(...(page.data as Rec[]).map((t) => t['gid'] as string));
      const next = (page.meta as { next_page: string | null }).next_page;
      // The token Asana answers is the offset param the next request sends.
      expect(sim.requests.at(-1)!.query.get('offset') ?? undefined).toBe(offset);
      offset = next ?? undefined;
      calls++;
    } while (offset !== undefined);
    expect(calls).toBe(Math.ceil(inProject.length / 2));
    expect(seen).toEqual(inProject.map((t) => t['gid']));
  });

  it('the check reads /users/me; a bad token is upstream_credentials_rejected; an unknown task is upstream_not_found', async () => {
    const me = records('users')[0]!;
    const checked = await asana().check();
    expect(checked).toMatchObject({ ok: true, info: { user_gid: me['gid'], name: 'Ada Okafor', email: 'ada.okafor@northwindlabs.com' } });
    expect(sim.requests.at(-1)).toMatchObject({ method: 'GET', path: '/users/me' });
    expect(await asana({ service_account_token: sidecar.auth?.tokens?.[1] }).check()).toMatchObject({ ok: true });
    await expect(asana({ token: '2/1/2:wrong' }).execute('workspaces', 'list')).rejects.toMatchObject({ code: 'upstream_credentials_rejected' });
    await expect(run('tasks', 'get', { task_gid: '1000000000000000' })).rejects.toMatchObject({
      code: 'upstream_not_found',
      message: expect.stringContaining('Unknown object'),
    });
  });

  it("comments on a task, lists the task's stories, and edits the comment by its own gid", async () => {
    const task = records('tasks')[0]!;
    const before = ((await run('stories', 'list', { task_gid: task['gid'], limit: 100 })).data as Rec[]).length;
    const comment = (await run('stories', 'create', { task_gid: task['gid'], text: 'Shipped on Friday' })).data as Rec;
    expect(comment).toMatchObject({ resource_type: 'story', type: 'comment', text: 'Shipped on Friday', target: { gid: task['gid'] } });
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ data: { text: 'Shipped on Friday' } });
    const listed = (await run('stories', 'list', { task_gid: task['gid'], limit: 100 })).data as Rec[];
    expect(listed).toHaveLength(before + 1);
    expect(listed.at(-1)).toMatchObject({ gid: comment['gid'], text: 'Shipped on Friday' });
    const edited = (await run('stories', 'update', { story_gid: comment['gid'], text: 'Shipped on Thursday' })).data as Rec;
    expect(edited).toMatchObject({ gid: comment['gid'], text: 'Shipped on Thursday' });
    expect(sim.requests.at(-1)).toMatchObject({ method: 'PUT', path: `/stories/${comment['gid'] as string}` });
  });
});

// PostgreSQL shows as skipped, with the reason, when SWITCHBOARD_TEST_POSTGRES_URL is not set.
for (const [name, open, skipped] of dialectCases())
  describe.skipIf(skipped !== undefined)(`asana sync on ${name}${skipped !== undefined ? ` (${skipped})` : ''}`, () => {
    let tdb: TestDatabase;
    let store: RecordStore;
    let upstream: OpenApiSimulator;
    let engine: SyncEngine;

    beforeAll(async () => {
      upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 8, rateLimit: false });
      tdb = await open();
      await migrate(tdb.database, [syncMigrations]);
      store = new RecordStore(tdb.database, { cursorSecret: 'test' });
      engine = new SyncEngine({
        database: tdb.database,
        sink: store,
        fullRefreshEvery: 10,
        runtimeFor: async () => ({ manifest, runtime: new ConnectorRuntime(manifest, { token: TOKEN }, { baseUrl: upstream.url, limiter: null }) }),
      });
    });
    afterAll(async () => {
      await engine.stop();
      await tdb.close();
      await upstream.close();
    });

    const def = manifest.entities.get('tasks')!.def.search!;
    const searchDef = { primaryKey: 'gid', fields: def.fields as Record<string, 'string'>, sources: def.sources as Record<string, string> };

    it("a full run reads each workspace's projects and each project's tasks; an incremental run asks for the tasks modified since", async () => {
      await engine.register('as-1');
      const full = await engine.runOnce('as-1');
      expect(full.full).toBe(true);
      expect(await store.count('as-1', 'workspaces')).toBe(upstream.resources.get('workspaces')!.records.size);
      expect(await store.count('as-1', 'projects')).toBe(upstream.resources.get('projects')!.records.size);
      expect(await store.count('as-1', 'tasks')).toBe(upstream.resources.get('tasks')!.records.size);
      // Projects per workspace, tasks per project, with the fields search reads named in opt_fields.
      const taskLists = upstream.requests.filter((r) => r.path === '/tasks');
      expect(new Set(taskLists.map((r) => r.query.get('project')))).toEqual(new Set(upstream.resources.get('projects')!.records.keys()));
      expect(String(taskLists[0]!.query.get('opt_fields')).split(',')).toEqual(expect.arrayContaining(['name', 'modified_at', 'assignee.name']));

      const [first] = [...upstream.resources.get('tasks')!.records.keys()];
      const res = await fetch(`${upstream.url}/tasks/${first!}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ data: { name: 'Renamed launch task' } }),
      });
      expect(res.status).toBe(200);
      const before = upstream.requests.length;
      const inc = await engine.runOnce('as-1');
      expect(inc.full).toBe(false);
      const since = upstream.requests.slice(before).filter((r) => r.path === '/tasks');
      expect(since.length).toBeGreaterThan(0);
      for (const r of since) expect(r.query.get('modified_since')).toEqual(expect.any(String));
      expect(inc.entities['tasks']?.updated).toBe(1);
      const hit = await store.search('as-1', 'tasks', searchDef, { query: { filter: { eq: { name: 'Renamed launch task' } } }, fields: ['gid', 'name'] });
      expect(hit.data).toEqual([{ gid: first, name: 'Renamed launch task' }]);
    }, 60_000);
  });
