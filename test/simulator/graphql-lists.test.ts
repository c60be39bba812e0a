/**
 * The GraphQL simulator's declared records, relations and list fields (src/simulator/graphql/lists.ts),
 * on a small schema of our own: records seeded from the sidecar's template and seed lists,
 * relations named by the ids a record holds (graphql.fields), list fields with back references,
 * fixed conditions, argument filters with values, defaults and lookups, sorts and newest-first
 * order (graphql.lists), an interface's concrete types by a field (graphql.types), a type named
 * under resources that no root field lists, reseed(), and the checks at load and start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSidecar, startGraphqlSimulator, type GraphqlSimulator } from '../../src/simulator/index.ts';

type Rec = Record<string, any>;

const SDL = `
interface Value { id: ID! }
type TextValue implements Value { id: ID! kind: String text: String }
type NumberValue implements Value { id: ID! kind: String number: Float }
type Person { id: ID! name: String! email: String! status: String! createdAt: String! teams(ids: [ID!]): [Team] }
type Team { id: ID! name: String! members(ids: [ID!], limit: Int, page: Int): [Person] lead: Person events(from: String, limit: Int): [Event] values: [Value] }
type Event { id: ID! at: Float! }
type Query {
  people(ids: [ID!], emails: [String!], name: String, inactive: Boolean, newest: Boolean, limit: Int, page: Int): [Person]
  teams(ids: [ID!]): [Team]
}
`;

const SIDECAR = `
records: 0
resources:
  Person:
    template: { status: active, createdAt: "2026-01-0{{n}}T00:00:00Z" }
    seed:
      - { id: p1, name: Ada, email: ada@example.com }
      - { id: p2, name: Bob, email: bob@example.com }
      - { id: p3, name: Cy, email: cy@example.com, status: inactive }
  Team:
    seed:
      - { id: t1, name: Core, member_ids: [p2, p1, gone], lead_id: p3 }
      - { id: t2, name: Ops, member_ids: [p3], lead_id: null }
  Event:
    seed:
      - { id: e1, team_id: t1, at: 1767225600000 }
      - { id: e2, team_id: t1, at: 1767312000000 }
      - { id: e3, team_id: t2, at: 1767312000000 }
graphql:
  fields:
    Team.members: "{{member_ids}}"
    Team.lead: "{{lead_id}}"
    Team.values: [{ id: v1, kind: text, text: hello }, { id: v2, kind: number, number: 2 }]
  lists:
    Query.people:
      lookup: [ids, emails]
      filters:
        emails: { field: email, match: equals_ignore_case }
        name: { match: contains }
        inactive: { values: { "true": { status: inactive } }, default: { status: [active] } }
      sort: { newest: { "true": -createdAt } }
    Person.teams: { back: member_ids }
    Team.events: { back: team_id, order: newest_first, filters: { from: { field: at, match: since } } }
  types:
    Value: { field: kind, values: { text: TextValue, number: NumberValue } }
`;

async function post(sim: GraphqlSimulator, query: string, variables: Rec = {}): Promise<Rec> {
  const res = await fetch(`${sim.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'tok' },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as Rec;
}
const ids = (list: Rec[]): string[] => list.map((r) => r['id'] as string);

describe('declared records, relations and lists', () => {
  let sim: GraphqlSimulator;
  beforeAll(async () => {
    sim = await startGraphqlSimulator({ schema: SDL, sidecar: parseSidecar(SIDECAR) });
  });
  afterAll(() => sim.close());

  it('seeds the declared types from the template and one seed entry per record, and the type no root field lists', () => {
    expect([...(sim.resources.get('Person')?.records.values() ?? [])]).toEqual([
      { status: 'active', createdAt: '2026-01-01T00:00:00Z', id: 'p1', name: 'Ada', email: 'ada@example.com' },
      { status: 'active', createdAt: '2026-01-02T00:00:00Z', id: 'p2', name: 'Bob', email: 'bob@example.com' },
      { status: 'inactive', createdAt: '2026-01-03T00:00:00Z', id: 'p3', name: 'Cy', email: 'cy@example.com' },
    ]);
    expect([...(sim.resources.get('Event')?.records.keys() ?? [])]).toEqual(['e1', 'e2', 'e3']);
  });

  it('filters lists by declared arguments: defaults, values, lookups, contains, case-insensitive equality, sorts', async () => {
    const r = await post(
      sim,
      `{ all: people { id } inactive: people(inactive: true) { id } byId: people(ids: ["p3", "p1"]) { id } byEmail: people(emails: ["CY@example.com"]) { id }
         named: people(name: "o") { id } newest: people(newest: true) { id } paged: people(newest: true, limit: 1, page: 2) { id } }`,
    );
    expect(r['data']).toEqual({
      all: [{ id: 'p1' }, { id: 'p2' }],
      inactive: [{ id: 'p3' }],
      byId: [{ id: 'p1' }, { id: 'p3' }],
      byEmail: [{ id: 'p3' }],
      named: [{ id: 'p2' }],
      newest: [{ id: 'p2' }, { id: 'p1' }],
      paged: [{ id: 'p1' }],
    });
  });

  it('resolves relations by the ids a record holds, lists that point back, and concrete types by a field', async () => {
    const r = await post(
      sim,
      `{ teams { id lead { name } members { id } one: members(ids: ["p1"]) { id } second: members(limit: 1, page: 2) { id } events { id } since: events(from: "2026-01-02") { id }
         values { __typename ... on TextValue { text } ... on NumberValue { number } } } people(ids: ["p1", "p3"]) { id teams { id } } }`,
    );
    const [core, ops] = r['data']['teams'] as Rec[];
    expect(core).toMatchObject({
      id: 't1',
      lead: { name: 'Cy' },
      members: [{ id: 'p2' }, { id: 'p1' }],
      one: [{ id: 'p1' }],
      second: [{ id: 'p1' }],
      events: [{ id: 'e2' }, { id: 'e1' }],
      since: [{ id: 'e2' }],
    });
    expect(core!['values']).toEqual([
      { __typename: 'TextValue', text: 'hello' },
      { __typename: 'NumberValue', number: 2 },
    ]);
    expect(ops).toMatchObject({ lead: null, members: [{ id: 'p3' }], events: [{ id: 'e3' }] });
    expect((r['data']['people'] as Rec[]).map((p) => [p['id'], ids(p['teams'])])).toEqual([
      ['p1', ['t1']],
      ['p3', ['t2']],
    ]);
    const bad = await post(sim, '{ teams(ids: ["t1"]) { events(from: "soon") { id } } }');
    expect(bad['errors'][0]).toMatchObject({ message: 'from must be an ISO 8601 date', extensions: { code: 'invalid' } });
  });

  it('reseeds every table in place', async () => {
    const people = sim.resources.get('Person')!.records;
    people.delete('p1');
    (people.get('p2') as Rec)['name'] = 'Changed';
    sim.reseed();
    expect(sim.resources.get('Person')!.records).toBe(people);
    expect(ids([...people.values()] as Rec[])).toEqual(['p1', 'p2', 'p3']);
    expect((await post(sim, '{ people(ids: ["p2"]) { name } }'))['data']['people']).toEqual([{ name: 'Bob' }]);
  });
});

describe('checks of the declarations', () => {
  it('refuses at start what the schema lacks, naming it', async () => {
    const start = (yaml: string) => startGraphqlSimulator({ schema: SDL, sidecar: parseSidecar(yaml) });
    await expect(start('graphql: { lists: { Team.nope: { back: x } } }')).rejects.toThrow(/graphql.lists.Team.nope: the schema has no field Team.nope/);
    await expect(start('graphql: { lists: { Team.name: { order: newest_first } } }')).rejects.toThrow(/Team.name is not a list/);
    await expect(start('graphql: { fields: { Person.age: 3 } }')).rejects.toThrow(/no field Person.age/);
    await expect(start('graphql: { types: { Team: { field: kind, values: {} } } }')).rejects.toThrow(/no interface or union Team/);
    await expect(start('graphql: { types: { Value: { field: kind, values: { x: Team } } } }')).rejects.toThrow(/Team is not a type of Value/);
    await expect(start('resources: { Nope: { records: 0 } }')).rejects.toThrow(/resources.Nope names no object type with an id/);
  });

  it('refuses malformed keys when the sidecar loads', () => {
    expect(() => parseSidecar('graphql: { lists: { Team.members: { order: oldest } } }')).toThrow(/allowed values/);
    expect(() => parseSidecar('graphql: { lists: { Team.members: { sort: { by: { x: "name desc" } } } } }')).toThrow(/must match pattern/);
    expect(() => parseSidecar('graphql: { lists: { Team.members: { filters: { a: { values: { x: 1 } } } } } }')).toThrow(/must be object/);
    expect(() => parseSidecar('graphql: { lists: { members: {} } }')).toThrow(/property name/);
    expect(() => parseSidecar('graphql: { types: { Value: { values: {} } } }')).toThrow(/required property 'field'/);
    // contains, values and default belong to GraphQL lists, not to the top-level filters of query parameters.
    expect(() => parseSidecar('filters: { q: { match: contains } }')).toThrow(/allowed values/);
    expect(() => parseSidecar('filters: { q: { default: { a: 1 } } }')).toThrow(/additional properties \(default\)/);
    expect(() => parseSidecar('resources: { Person: { seed: [] } }')).toThrow(/invalid simulator sidecar/);
  });
});
