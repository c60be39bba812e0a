/**
 * Vendor shapes of the GraphQL simulator (Shopify's): graphql.id_template (the ids it mints for
 * seeded and created records take the vendor's shape, gid://shopify/<Type>/<number>, instead of
 * UUIDs), graphql.missing: null (a nullable lookup of no record answers null, no error), and a
 * mutation's input object named otherwise than `input` beside other input-object arguments.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGraphqlSimulator, type GraphqlSimulator } from '../../src/simulator/index.ts';

type Rec = Record<string, any>;
const SDL = `
type PageInfo { hasNextPage: Boolean! endCursor: String }
type Widget { id: ID! name: String! }
type WidgetConnection { nodes: [Widget!]! pageInfo: PageInfo! }
input WidgetCreateInput { name: String! }
input WidgetIdentifiers { handle: String }
input WidgetUpdateInput { id: ID name: String }
type WidgetCreatePayload { widget: Widget }
type WidgetUpdatePayload { widget: Widget }
type Query { widgets(first: Int, after: String): WidgetConnection! widget(id: ID!): Widget }
type Mutation { widgetCreate(input: WidgetCreateInput!): WidgetCreatePayload widgetUpdate(identifier: WidgetIdentifiers, widget: WidgetUpdateInput): WidgetUpdatePayload }
`;

let sim: GraphqlSimulator;
let plain: GraphqlSimulator;
beforeAll(async () => {
  sim = await startGraphqlSimulator({
    schema: SDL,
    sidecar: { records: 3, graphql: { id_template: 'gid://example/{{type}}/{{number}}', missing: 'null' } },
    seed: 2,
  });
  plain = await startGraphqlSimulator({ schema: SDL, sidecar: { records: 3 }, seed: 2 });
});
afterAll(async () => {
  await sim.close();
  await plain.close();
});

const post = async (s: GraphqlSimulator, query: string, variables: Rec = {}): Promise<Rec> =>
  (await (
    await fetch(`${s.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 't' },
      body: JSON.stringify({ query, variables }),
    })
  ).json()) as Rec;

describe('graphql.id_template', () => {
  it('shapes seeded and created ids; without it ids are UUIDs', async () => {
    const ids = ((await post(sim, '{ widgets(first: 5) { nodes { id } } }'))['data']['widgets']['nodes'] as Rec[]).map((n) => n['id']);
    expect(ids).toHaveLength(3);
    for (const id of ids) expect(id).toMatch(/^gid:\/\/example\/Widget\/[1-9]\d{12}$/);
    const made = await post(sim, 'mutation ($input: WidgetCreateInput!) { widgetCreate(input: $input) { widget { id name } } }', { input: { name: 'New' } });
    expect(made['data']['widgetCreate']['widget']).toEqual({ id: expect.stringMatching(/^gid:\/\/example\/Widget\/[1-9]\d{12}$/), name: 'New' });
    const got = await post(sim, 'query ($id: ID!) { widget(id: $id) { name } }', { id: made['data']['widgetCreate']['widget']['id'] });
    expect(got['data']['widget']).toEqual({ name: 'New' });
    const uuids = ((await post(plain, '{ widgets(first: 5) { nodes { id } } }'))['data']['widgets']['nodes'] as Rec[]).map((n) => n['id']);
    for (const id of uuids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4/);
  });
});

describe('graphql.missing and named input objects', () => {
  it('a nullable lookup of no record is null without an error (with missing: null), else not_found', async () => {
    const q = 'query ($id: ID!) { widget(id: $id) { id } }';
    expect(await post(sim, q, { id: 'gid://example/Widget/1' })).toEqual({ data: { widget: null } });
    const refused = await post(plain, q, { id: 'nope' });
    expect(refused['data']['widget']).toBeNull();
    expect(refused['errors'][0]['extensions']['code']).toBe('not_found');
  });

  it('an update takes the input-object argument the request gives, not the first declared', async () => {
    const id = ((await post(sim, '{ widgets(first: 1) { nodes { id } } }'))['data']['widgets']['nodes'] as Rec[])[0]!['id'];
    const m = 'mutation ($widget: WidgetUpdateInput) { widgetUpdate(widget: $widget) { widget { id name } } }';
    expect((await post(sim, m, { widget: { id, name: 'Renamed' } }))['data']['widgetUpdate']['widget']).toEqual({ id, name: 'Renamed' });
  });
});
