/**
 * Issue 40, classes 4 and 5 on a small schema of our own (test/fixtures/factory/nested.graphql):
 * entities under `viewer` and under a root field with required arguments (`repository(owner,
 * name) { issues }`), their arguments params of every action; the simulator finds records by any
 * key field (`repository(name:)`, `issue(number:)`), serves `node(id:)` and updates by
 * `<type>Id`; a field defined twice is repaired in memory and reported, not refused.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, validate } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startGraphqlSimulator, type GraphqlSimulator } from '../../src/simulator/index.ts';
import { buildTolerantSchema } from '../../src/simulator/graphql/sdl.ts';
import { runSwitchboard } from '../helpers/process.ts';

const NESTED = 'test/fixtures/factory/nested.graphql';
type Rec = Record<string, any>;

describe('GraphQL entities that are not root lists', () => {
  let sim: GraphqlSimulator;
  const gql = async (query: string, variables: Rec = {}): Promise<Rec> =>
    (await (
      await fetch(`${sim.url}/graphql`, {
        method: 'POST',
        headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      })
    ).json()) as Rec;
  beforeAll(async () => {
    sim = await startGraphqlSimulator({ schema: NESTED, seed: 1 });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('the SDL with a field defined twice is repaired: the first definition kept, the duplicate reported', () => {
    const { schema, warnings } = buildTolerantSchema(readFileSync(NESTED, 'utf8'));
    expect(warnings).toEqual(['Issue.title is defined twice: the first definition is kept']);
    expect(Object.keys(schema.getType('Issue') !== undefined ? (schema.getType('Issue') as any).getFields() : {}).filter((f) => f === 'title')).toHaveLength(1);
    expect(() => buildTolerantSchema('type Query { a: Nope }')).toThrow(/Unknown type "Nope"/);
  });

  it('init makes entities of connections under viewer and repository(owner, name); owner and name are params', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sb-gql-nested-')), 'connectors');
    const r = await runSwitchboard(['init', 'hub', '--from-graphql', NESTED, '--endpoint', 'https://api.hub.test/graphql', '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(
      /3 entities: viewer_repositories \[list, get, create, update\]; repository_issues \[list, get, create, update\]; repository_labels \[list, get\]/,
    );
    expect(r.stdout).toMatch(/schema repaired: Issue\.title is defined twice/);
    const m = parseYaml(readFileSync(join(out, 'hub', 'connector.yaml'), 'utf8')) as Rec;
    const issues = m['entities'].repository_issues.actions;
    expect(issues.list.params.owner).toEqual({ type: 'string', required: true });
    expect(issues.list.params.name).toEqual({ type: 'string', required: true });
    expect(issues.list.response.records).toBe('{{body.data.repository.issues.nodes}}');
    expect(issues.list.pagination.next).toBe('{{body.data.repository.issues.pageInfo.endCursor}}');
    expect(issues.get.request.graphql.query).toMatch(/^query \(\$id: ID!\) \{ node\(id: \$id\) \{ \.\.\. on Issue \{ id number title /);
    expect(issues.get.response).toEqual({ record: '{{body.data.node}}', not_found_when: '{{not body.data.node.id}}' });
    expect(m['entities'].viewer_repositories.actions.update.params.repository_id).toEqual({ type: 'string', required: true });
    const { schema } = buildTolerantSchema(readFileSync(NESTED, 'utf8'));
    for (const [e, ent] of Object.entries(m['entities'] as Rec))
      for (const [a, act] of Object.entries(ent.actions as Rec))
        expect(
          validate(schema, parse(act.request.graphql.query)).map((x) => x.message),
          `${e}.${a}`,
        ).toEqual([]);
    // --entities names a nested one; an unknown name lists them.
    const bad = await runSwitchboard([
      'init',
      'hub',
      '--from-graphql',
      NESTED,
      '--endpoint',
      'https://api.hub.test/graphql',
      '--entities',
      'issues',
      '--out',
      `${out}-bad`,
    ]);
    expect(JSON.parse(bad.stderr).error.message).toMatch(/issues not found in the schema; .*viewer_repositories, repository_issues, repository_labels/);
  }, 90_000);

  it('the simulator finds records by key fields, within their parent, and through node(id:)', async () => {
    expect([...sim.resources.keys()].sort()).toEqual(['Issue', 'Label', 'Repository', 'User']);
    // The repository the first seeded issue belongs to, found by its name (owner is no field of it: ignored).
    const own = sim.resources.get('Issue')!;
    const refOf = (i: Rec): unknown => (i['repository'] as Rec | null)?.['__ref'];
    const first = [...own.records.values()][0]!;
    const target = sim.resources.get('Repository')!.records.get(String(refOf(first)))!;
    const repo = (
      await gql('query ($name: String!) { repository(owner: "anyone", name: $name) { id name issues(first: 50) { nodes { id number repository { id } } } } }', {
        name: target['name'],
      })
    )['data'].repository;
    expect(repo).toMatchObject({ id: target['id'], name: target['name'] });
    const missing = await gql('{ repository(owner: "anyone", name: "No such") { id } }');
    expect(missing['data'].repository).toBeNull();
    expect(missing['errors'][0].message).toBe('Repository not found: name=No such');
    // Issues of the repository are those pointing at it; issue(number:) looks among them only.
    const mine = [...own.records.values()].filter((i) => refOf(i) === repo.id);
    expect(repo.issues.nodes.map((n: Rec) => n.id).sort()).toEqual(mine.map((i) => i['id']).sort());
    const other = [...own.records.values()].find((i) => refOf(i) !== repo.id)!;
    expect(other).toBeDefined();
    const q = 'query ($name: String!, $n: Int!) { repository(owner: "o", name: $name) { issue(number: $n) { id number } } }';
    expect((await gql(q, { name: target['name'], n: first['number'] }))['data'].repository.issue).toEqual({ id: first['id'], number: first['number'] });
    expect((await gql(q, { name: target['name'], n: other['number'] }))['errors'][0].message).toBe(`Issue not found: number=${other['number']}`);
    // node(id:) answers the record of whichever type holds the id, with its type.
    const byNode = await gql('query ($id: ID!) { node(id: $id) { __typename id ... on Issue { number } } }', { id: other['id'] });
    expect(byNode['data'].node).toEqual({ __typename: 'Issue', id: other['id'], number: other['number'] });
    expect((await gql('query ($id: ID!) { node(id: $id) { id } }', { id: 'nope' }))['errors'][0].message).toBe('Node not found: nope');
  });

  it('creates under a parent by <parent>Id, updates by id or <type>Id', async () => {
    const repo =
      (await gql('{ viewer { repositories(first: 1) { nodes { id } } } }'))['data'].viewer.repositories.nodes[0] ??
      (await gql('mutation { createRepository(input: {name: "Mine"}) { repository { id } } }'))['data'].createRepository.repository;
    const renamed = await gql('mutation ($id: ID!) { updateRepository(input: {repositoryId: $id, name: "Renamed"}) { repository { id name } } }', {
      id: repo.id,
    });
    expect(renamed['data'].updateRepository.repository).toEqual({ id: repo.id, name: 'Renamed' });
    const made = (
      await gql('mutation ($r: ID!) { createIssue(input: {repositoryId: $r, title: "Made"}) { issue { id number title repository { id name } } } }', {
        r: repo.id,
      })
    )['data'].createIssue.issue;
    expect(made).toMatchObject({ title: 'Made', repository: { id: repo.id, name: 'Renamed' } });
    const listed = (
      await gql('{ repository(owner: "o", name: "Renamed") { issues(first: 50) { nodes { id } } issue(number: ' + String(made.number) + ') { id } } }')
    )['data'].repository;
    expect(listed.issues.nodes.map((n: Rec) => n.id)).toContain(made.id);
    expect(listed.issue.id).toBe(made.id);
    const closed = (await gql('mutation ($id: ID!) { updateIssue(input: {id: $id, state: CLOSED}) { issue { id state } } }', { id: made.id }))['data']
      .updateIssue.issue;
    expect(closed).toEqual({ id: made.id, state: 'CLOSED' });
  });
});
