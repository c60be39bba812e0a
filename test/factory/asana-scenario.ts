/**
 * The "done when" scenario of `switchboard init` on Asana's description, run through the CLI
 * with no edit to the scaffolded manifest: list, get, create and update projects and tasks with
 * `switchboard exec --connectors <dir>` against an upstream at `baseUrl`. Shared by the test
 * against the local fake (asana-fake.ts) and the one against `switchboard simulate --openapi`.
 */
import { expect } from 'vitest';
import { runSwitchboard } from '../helpers/process.ts';

type Rec = Record<string, unknown>;

export async function asanaScenario(connectors: string, baseUrl: string, token = 'asana-test-token'): Promise<void> {
  const exec = async (entity: string, action: string, params: Rec, extra: string[] = []): Promise<Rec> => {
    const r = await runSwitchboard(['exec', 'asana', entity, action, '--params', JSON.stringify(params), '--base-url', baseUrl, '--connectors', connectors, ...extra], {
      SWITCHBOARD_CREDENTIALS: JSON.stringify({ token }),
    });
    expect(r.stderr, `${entity}.${action} ${JSON.stringify(params)}`).toBe('');
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout) as Rec;
  };
  const record = (out: Rec): Rec => out['data'] as Rec;

  // Projects: create (body wrapped in {"data": ...} by the template), get, update, list.
  const created = record(await exec('projects', 'create', { name: 'Launch plan', notes: 'Q3 launch', workspace: '12345' }));
  expect(created).toMatchObject({ name: 'Launch plan', notes: 'Q3 launch' });
  const gid = String(created['gid']);
  expect(record(await exec('projects', 'get', { project_gid: gid }))).toMatchObject({ gid, name: 'Launch plan', notes: 'Q3 launch' });
  expect(record(await exec('projects', 'update', { project_gid: gid, name: 'Launch plan v2' }))).toMatchObject({ gid, name: 'Launch plan v2' });
  expect(record(await exec('projects', 'get', { project_gid: gid }))).toMatchObject({ name: 'Launch plan v2' });
  await exec('projects', 'create', { name: 'Second', workspace: '12345' });
  await exec('projects', 'create', { name: 'Third', workspace: '12345' });
  const page = await exec('projects', 'list', { limit: 2, workspace: '12345' });
  expect((page['data'] as Rec[]).length).toBe(2);
  expect(typeof (page['meta'] as Rec)['next_page']).toBe('string');
  // Every page, through the inferred pagination (the offset token of next_page).
  const all = await exec('projects', 'list', { limit: 2, workspace: '12345' }, ['--all-pages']);
  expect((all['data'] as Rec[]).map((p) => p['gid'])).toContain(gid);
  expect((all['data'] as Rec[]).length).toBeGreaterThanOrEqual(3);

  // Tasks: the same four actions.
  const task = record(await exec('tasks', 'create', { name: 'Write the brief', projects: [gid], workspace: '12345' }));
  const taskGid = String(task['gid']);
  expect(record(await exec('tasks', 'get', { task_gid: taskGid }))).toMatchObject({ gid: taskGid, name: 'Write the brief' });
  expect(record(await exec('tasks', 'update', { task_gid: taskGid, completed: true }))).toMatchObject({ gid: taskGid, completed: true });
  const tasks = await exec('tasks', 'list', { project: gid, limit: 10 });
  expect((tasks['data'] as Rec[]).map((t) => t['gid'])).toContain(taskGid);
}
