/**
 * Issue 40 on a real GraphQL description the project had never used: GitHub's schema (an extract
 * of @octokit/graphql-schema, test/fixtures/github). `switchboard init` makes entities of a
 * repository's issues and labels (`repository(owner, name) { issues / labels }`), then, with no
 * edit, list/get/create/update of both run through `switchboard exec --connectors` against
 * `switchboard simulate --graphql` on the same schema.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSwitchboard, startSwitchboard } from '../helpers/process.ts';

const GITHUB = 'test/fixtures/github/schema.graphql';
type Rec = Record<string, any>;

describe('init → simulate → exec on GitHub’s GraphQL schema', () => {
  let stop: (() => Promise<number | null>) | undefined;
  let url: string;
  let printed: { base_url: string; endpoint: string; resources: Record<string, { records: number }> };
  const out = join(mkdtempSync(join(tmpdir(), 'sb-init-github-')), 'connectors');
  beforeAll(async () => {
    const sim = await startSwitchboard(['simulate', '--graphql', GITHUB, '--port', '0', '--seed', '1'], /^}$/, { deadlineMs: 60_000 });
    stop = sim.stop;
    printed = JSON.parse(sim.lines.join('\n')) as typeof printed;
    url = printed.base_url.replace(/\/$/, '');
  }, 90_000);
  afterAll(async () => {
    await stop?.();
  });

  it('scaffolds a repository’s issues and labels that run unedited against the simulator', async () => {
    // The simulator serves the records viewer and repository(owner, name) reach.
    expect(printed.resources).toEqual({ Repository: { records: 5 }, Issue: { records: 5 }, Label: { records: 5 }, User: { records: 5 } });
    const init = await runSwitchboard([
      'init',
      'github',
      '--from-graphql',
      GITHUB,
      '--endpoint',
      'https://api.github.com/graphql',
      '--entities',
      'repository_issues,repository_labels',
      '--out',
      out,
    ]);
    expect(init.stderr).toBe('');
    expect(init.stdout).toMatch(/2 entities: repository_issues \[list, get, create, update\]; repository_labels \[list, get, create, update\]/);
    expect((await runSwitchboard(['validate', '--connectors', out])).code).toBe(0);
    const exec = async (entity: string, action: string, params: Rec): Promise<Rec> => {
      const r = await runSwitchboard(['exec', 'github', entity, action, '--params', JSON.stringify(params), '--base-url', url, '--connectors', out], {
        SWITCHBOARD_CREDENTIALS: JSON.stringify({ token: 't' }),
      });
      expect(r.stderr).toBe('');
      return (JSON.parse(r.stdout) as Rec)['data'];
    };
    // The repository to work in, as a user would find it: by owner and name.
    const name = 'Repository name 1';
    const repo = (
      (await (
        await fetch(`${url}/graphql`, {
          method: 'POST',
          headers: { authorization: 'bearer t', 'content-type': 'application/json' },
          body: JSON.stringify({ query: 'query ($n: String!) { repository(owner: "octocat", name: $n) { id } }', variables: { n: name } }),
        })
      ).json()) as Rec
    )['data'].repository;

    const issue = await exec('repository_issues', 'create', { repository_id: repo.id, title: 'Found a bug', body: 'Steps to reproduce' });
    expect(issue).toMatchObject({ title: 'Found a bug', body: 'Steps to reproduce', repository: { id: repo.id } });
    const state = issue.state === 'OPEN' ? 'CLOSED' : 'OPEN';
    expect(await exec('repository_issues', 'update', { id: issue.id, state, title: 'Fixed a bug' })).toMatchObject({
      id: issue.id,
      state,
      title: 'Fixed a bug',
    });
    expect(await exec('repository_issues', 'get', { id: issue.id })).toMatchObject({ id: issue.id, number: issue.number, title: 'Fixed a bug', state });
    const issues = (await exec('repository_issues', 'list', { owner: 'octocat', name, first: 50 })) as Rec[];
    expect(issues.map((i) => i['id'])).toContain(issue.id);
    expect(issues.every((i) => i['repository'].id === repo.id)).toBe(true);

    const label = await exec('repository_labels', 'create', { repository_id: repo.id, name: 'bug', color: 'd73a4a' });
    expect(label).toMatchObject({ name: 'bug', color: 'd73a4a', repository: { id: repo.id } });
    expect((await exec('repository_labels', 'update', { id: label.id, color: '00ff00' })).color).toBe('00ff00');
    expect(await exec('repository_labels', 'get', { id: label.id })).toMatchObject({ id: label.id, name: 'bug', color: '00ff00' });
    const labels = (await exec('repository_labels', 'list', { owner: 'octocat', name, first: 50 })) as Rec[];
    expect(labels.map((l) => l['name'])).toContain('bug');
    expect(labels.every((l) => l['repository'].id === repo.id)).toBe(true);
  }, 300_000);
});
