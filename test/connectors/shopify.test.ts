/**
 * Shopify's quirks, against the generic GraphQL simulator serving Shopify's own 2026-10 schema
 * (trimmed) with its sidecar: calls on the shop's own host with X-Shopify-Access-Token, global
 * ids (gid://shopify/...), cost-based THROTTLED answers waited out as the bucket's refill rate says,
 * mutations' userErrors as refusals, a lookup of no record as not found, and the webhook rules
 * (HMAC-SHA256 in base64, REST-shaped payloads mapped to global ids). The generic suites run
 * list/get/create/update and sync.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { topicRule } from '../../src/manifest/webhooks.ts';
import { startGraphqlSimulator, type GraphqlSimulator } from '../../src/simulator/index.ts';
import { loadSidecar } from '../../src/simulator/sidecar.ts';
import { compileTemplate } from '../../src/templates/index.ts';
import { failure } from '../helpers/errors.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/shopify';
const manifest = getConnector('shopify');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox?.credentials as Record<string, string>;
const ENDPOINT = '/admin/api/2026-10/graphql.json';

let sim: GraphqlSimulator;
beforeAll(async () => {
  sim = await startGraphqlSimulator({ schema: `${DIR}/schema-2026-10.graphql`, sidecar, seed: 6, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

/** A runtime with no base URL given (the shop's own host), its requests answered by `answer` (default: the simulator). */
function onShopHost(answer?: (url: URL, init: RequestInit) => Promise<Response>) {
  const seen: { url: string; headers: Record<string, string>; body: Rec }[] = [];
  const rt = new ConnectorRuntime(manifest, CREDENTIALS, {
    limiter: null,
    retry: { maxAttempts: 1 },
    fetch: async (input, init = {}) => {
      const u = new URL(input);
      seen.push({ url: `${u.origin}${u.pathname}`, headers: init.headers as Record<string, string>, body: JSON.parse(String(init.body)) as Rec });
      return answer !== undefined ? answer(u, init) : fetch(`${sim.url}${u.pathname}${u.search}`, init);
    },
  });
  return { rt, seen };
}
const graphqlAnswer =
  (body: unknown, status = 200) =>
  async () =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('shopify on the shop host', () => {
  it("posts {query, variables} to the shop's versioned endpoint with X-Shopify-Access-Token; ids are global ids", async () => {
    const { rt, seen } = onShopHost();
    const page = (await rt.execute('products', 'list', { first: 2, updated_since: '2026-01-02T00:00:00Z', query: 'status:active' })) as ListEnvelope;
    expect(page.data).toHaveLength(2);
    for (const p of page.data as Rec[]) expect(p['id']).toMatch(/^gid:\/\/shopify\/Product\/\d{13}$/);
    expect(seen[0]!.url).toBe(`https://${CREDENTIALS['shop']}.myshopify.com${ENDPOINT}`);
    expect(seen[0]!.headers['X-Shopify-Access-Token'] ?? seen[0]!.headers['x-shopify-access-token']).toBe(CREDENTIALS['access_token']);
    expect((seen[0]!.body['variables'] as Rec)['query']).toBe("updated_at:>'2026-01-02T00:00:00Z' AND (status:active)");
    const one = (await rt.execute('products', 'get', { id: (page.data as Rec[])[0]!['id'] })) as RecordEnvelope;
    expect(one.data['id']).toBe((page.data as Rec[])[0]!['id']);
    expect((await failure(rt.execute('products', 'get', { id: 'gid://shopify/Product/1' }))).code).toBe('upstream_not_found');
  });

  it('the check reads the shop, its myshopify domain being what webhooks are attributed by', async () => {
    const { rt } = onShopHost();
    expect(await rt.check()).toMatchObject({ ok: true, info: { shop_domain: 'northwind-outfitters.myshopify.com' } });
  });
});

describe('shopify errors', () => {
  it('THROTTLED waits as long as the bucket needs to refill: (requested - available) / restore rate', async () => {
    const { rt } = onShopHost(
      graphqlAnswer({
        errors: [{ message: 'Throttled', extensions: { code: 'THROTTLED', documentation: 'https://shopify.dev/api/usage/limits#rate-limits' } }],
        extensions: {
          cost: { requestedQueryCost: 152, actualQueryCost: null, throttleStatus: { maximumAvailable: 2000, currentlyAvailable: 52, restoreRate: 100 } },
        },
      }),
    );
    const e = await failure(rt.execute('orders', 'list', { first: 50 }));
    expect(e.code).toBe('upstream_rate_limited');
    expect(e.details).toMatchObject({ retry_after_ms: 1000, not_executed: true });
  });

  it("a mutation's userErrors are a refusal with Shopify's message; a missing scope is a credentials refusal", async () => {
    const refused = onShopHost(
      graphqlAnswer({ data: { productCreate: { product: null, userErrors: [{ field: ['title'], message: "Title can't be blank" }] } } }),
    );
    const e = await failure(refused.rt.execute('products', 'create', { title: ' ' }));
    expect([e.code, e.message]).toEqual(['upstream_rejected', "shopify: Title can't be blank"]);
    const denied = onShopHost(
      graphqlAnswer({
        errors: [{ message: 'Access denied for customers field. Required access: `read_customers` access scope.', extensions: { code: 'ACCESS_DENIED' } }],
      }),
    );
    expect((await failure(denied.rt.execute('customers', 'list', {}))).code).toBe('upstream_credentials_rejected');
    const unknown = onShopHost(graphqlAnswer({ errors: '[API] Invalid API key or access token (unrecognized login or wrong password)' }, 401));
    const u = await failure(unknown.rt.execute('customers', 'list', {}));
    expect([u.code, u.message]).toEqual(['upstream_credentials_rejected', expect.stringContaining('Invalid API key or access token')]);
  });

  it('an update sends the product input with its id (productUpdate(product:)) and answers the changed record', async () => {
    const { rt, seen } = onShopHost();
    const id = ((await rt.execute('products', 'list', { first: 1 })) as ListEnvelope).data[0]!['id'];
    const updated = (await rt.execute('products', 'update', { id, title: 'Merino crew sweater', tags: ['wool'] })) as RecordEnvelope;
    expect(updated.data).toMatchObject({ id, title: 'Merino crew sweater', tags: ['wool'] });
    expect((seen.at(-1)!.body['variables'] as Rec)['product']).toEqual({ id, title: 'Merino crew sweater', tags: ['wool'] });
  });
});

describe('shopify webhooks', () => {
  const w = manifest.webhooks!;
  it('are HMAC-SHA256 of the raw body in base64, with the app secret; REST payloads name global ids', () => {
    expect(w.signature).toMatchObject({ scheme: 'hmac', algorithm: 'sha256', header: 'x-shopify-hmac-sha256', encoding: 'base64' });
    const del = topicRule(w, 'products/delete')!;
    expect(del).toMatchObject({ entity: 'products', delete: true });
    expect(compileTemplate(manifest.manifest.webhooks!.topics[0]!.id!).render({ body: { id: 8012345678901 } })).toBe('gid://shopify/Product/8012345678901');
    expect(topicRule(w, 'products/update')).toMatchObject({ entity: 'products', delete: false });
    expect(topicRule(w, 'inventory_levels/update')).toMatchObject({ entity: 'inventory_levels' });
    expect(topicRule(w, 'app/uninstalled')).toBeUndefined();
  });
});
