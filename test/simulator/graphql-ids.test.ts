/**
 * The GraphQL simulator's graphql.id_template: the ids it mints for seeded and created records
 * take the vendor's shape (Shopify's gid://shopify/<Type>/<number>) instead of UUIDs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGraphqlSimulator, type GraphqlSimulator } from '../../src/simulator/index.ts';

type Rec = Record<string, any>;
const SDL = `
type PageInfo { hasNextPage: Boolean! endCursor: String }
type Widget { id: ID! name: String! }
type WidgetConnection { nodes: [Widget!]! pageInfo: PageInfo! }
input WidgetCreateInput { name: String! }
type WidgetCreatePayload { widget: Widget }
type Query { widgets(first: Int, after: String): WidgetConnection! widget(id: ID!): Widget }
type Mutation { widgetCreate(input: WidgetCreateInput!): WidgetCreatePayload }
`;

let sim: GraphqlSimulator;
let plain: GraphqlSimulator;
beforeAll(async () => {
  sim = await startGraphqlSimulator({ schema: SDL, sidecar: { records: 3, graphql: { id_template: 'gid://example/{{type}}/{{number}}' } }, seed: 2 });
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
