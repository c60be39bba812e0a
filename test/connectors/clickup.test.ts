/**
 * ClickUp's quirks, end to end: connectors/clickup/connector.yaml run by the interpreter over real
 * HTTP against the generic simulator serving our ClickUp description with its sidecar (no
 * ClickUp-specific simulator code). What every connector shares is the conformance suite's; here:
 * the personal token as the whole Authorization header (no Bearer), {err, ECODE} errors, task
 * pages counted from 0 and ended by last_page, a comment's create answer ({id, date}: the id a
 * number) and its empty update answer, and the sync down the hierarchy (spaces per Workspace,
 * folders per space, lists per folder: each parent listed under its own) with tasks read across
 * each Workspace, incrementally by date_updated_gt.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { RecordStore, searchMigrations } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate, openDatabase } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/clickup';
const manifest = getConnector('clickup');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { personal_token: string };

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar, seed: 5, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const clickup = (credentials: Rec = CREDENTIALS) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => clickup().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;
const ids = (resource: string) => [...(sim.resources.get(resource)?.records.keys() ?? [])];

describe('clickup', () => {
  it('sends the personal token as the whole Authorization header; the check names the user; a bad token is refused with its err', async () => {
    const checked = await clickup().check();
    expect(checked).toMatchObject({ ok: true, checked: true });
    expect(sim.requests.at(-1)!.headers['authorization']).toBe(CREDENTIALS.personal_token);
    const err = await failure(clickup({ personal_token: 'pk_0_NOT0A0TOKEN' }).check());
    expect([err.code, err.message]).toEqual(['upstream_credentials_rejected', 'clickup: Token invalid']);
  });

  it('pages a list of tasks from page 0 until last_page, the next page in meta', async () => {
    const list = ids('list')[0]!;
    for (let i = 0; i < 150; i++) sim.addRecord('task', { name: `Bulk ${i}`, list: { id: list, name: '', access: true } });
    const first = await run('tasks', 'list', { list_id: list });
    expect((first.data as Rec[]).length).toBe(100);
    expect(first.meta).toEqual({ next_page: 1 });
    let n = 0;
    for await (const page of clickup().pages('tasks', { list_id: list })) n += (page.data as Rec[]).length;
    expect(n).toBeGreaterThan(150);
    const pages = sim.requests.filter((r) => r.path === `/list/${list}/task`).map((r) => r.query.get('page'));
    expect(pages.slice(1)).toEqual([null, '1']);
  });

  it("creates a task's comment (its id given as text) and updates it (ClickUp answers {}: the record is what was set)", async () => {
    const task = ids('task')[0]!;
    const created = (await run('comments', 'create', { task_id: task, comment_text: 'Shipped to staging' })).data as Rec;
    expect(created).toMatchObject({ comment_text: 'Shipped to staging' });
    expect(typeof created['id']).toBe('string');
    const listed = (await run('comments', 'list', { task_id: task })).data as Rec[];
    expect(listed.map((c) => c['id'])).toContain(created['id']);
    const updated = (await run('comments', 'update', { comment_id: created['id'], comment_text: 'Shipped', resolved: true })).data as Rec;
    expect(updated).toEqual({ id: created['id'], comment_text: 'Shipped', resolved: true });
  });

  it('syncs down the hierarchy (each parent listed under its own) and tasks across the Workspace, then incrementally by date_updated_gt', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'clickup-sync-'));
    const database = openDatabase(join(dir, 'records.db'));
    try {
      await migrate(database, [searchMigrations, syncMigrations]);
      const store = new RecordStore(database, { cursorSecret: 'clickup' });
      const engine = new SyncEngine({ database, sink: store, fullRefreshEvery: 10, runtimeFor: async () => ({ manifest, runtime: clickup() }) });
      await engine.register('clickup');
      const full = await engine.runOnce('clickup');
      for (const [entity, resource] of [
        ['spaces', 'space'],
        ['folders', 'folder'],
        ['lists', 'list'],
        ['tasks', 'task'],
      ] as const)
        expect(full.entities[entity]?.records, entity).toBe(ids(resource).length);
      const folderCalls = sim.requests.filter((r) => /^\/space\/\d+\/folder$/.test(r.path)).length;
      expect(folderCalls).toBeGreaterThanOrEqual(ids('space').length);
      const before = sim.requests.length;
      const again = await engine.runOnce('clickup');
      expect(again.full).toBe(false);
      const feed = sim.requests.slice(before).filter((r) => /^\/team\/\d+\/task$/.test(r.path));
      expect(feed[0]!.query.get('date_updated_gt')).toMatch(/^\d{13}$/);
      await engine.stop();
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
