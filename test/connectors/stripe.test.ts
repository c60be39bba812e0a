/**
 * The Stripe connector end to end: connectors/stripe/connector.yaml run by the interpreter over
 * real HTTP against the generic simulator serving Stripe's own description
 * (connectors/stripe/openapi-stripe.json) with its sidecar (connectors/stripe/simulator.yaml).
 * No Stripe-specific simulator code: the simulator decodes and validates the form-encoded,
 * deepObject bodies against the description and keeps what is created.
 *
 * Every entity × action; form bodies with nested keys; starting_after/has_more paging across
 * pages; expand[]; Idempotency-Key on creates and updates (the same on a retry); Stripe's error
 * body and Stripe-Should-Retry; the three auth variants and the credential check; sync, with
 * created[gte] incremental runs and deletions read from /v1/events.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorizeUrl, exchangeAuthorizationCode } from '../../src/auth/index.ts';
import { connect, ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { type OAuth2Auth } from '../../src/manifest/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { credentialsFromTokens } from '../../src/service/connectors/oauth-flow.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import type { MigrationGroup } from '../../src/store/database.ts';
import { recordChecker } from '../helpers/records.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/stripe';
const manifest = getConnector('stripe');
const expectValid = recordChecker(manifest);

const KEY = 'sk_test_sandbox';
const RESOURCES = ['customers', 'invoices', 'subscriptions', 'charges', 'products', 'prices', 'events'] as const;
/** The item path parameter of each resource (the simulator's not_found names them). */
const ID_PARAM: Record<string, string> = {
  customers: 'customer',
  invoices: 'invoice',
  subscriptions: 'subscription_exposed_id',
  charges: 'charge',
  products: 'id',
  prices: 'price',
  events: 'id',
};

let sim: OpenApiSimulator;
beforeAll(async () => {
  // 12 records per resource: lists of 5 take three pages.
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi-stripe.json`, sidecar: { ...loadSidecar(`${DIR}/simulator.yaml`), records: 12 }, seed: 3 });
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.reset();
  sim.setRateLimit(false);
});

const stripe = (credentials: Rec = { api_key: KEY }) => connect('stripe', { credentials: credentials as never, baseUrl: sim.url, retry: { baseDelayMs: 5 } });
const run = (entity: string, action: string, params?: Rec) =>
  stripe().execute(entity as never, action as never, params as never) as Promise<ListEnvelope & RecordEnvelope>;
const list = (entity: string, params?: Rec) => run(entity, 'list', params) as Promise<ListEnvelope>;
const one = (entity: string, action: 'get' | 'create' | 'update', params: Rec) => run(entity, action, params) as Promise<RecordEnvelope>;
const ids = (entity: string): string[] => [...sim.resources.get(entity)!.records.keys()];
const sent = (method: string, path: string) => sim.requests.filter((r) => r.method === method && r.path === path);
/** The form a request sent, decoded as Stripe reads it. */
const form = (raw: string): [string, string][] => [...new URLSearchParams(raw).entries()];

describe('the manifest', () => {
  it('offers list/get/create/update on the six entities and list/get on events, creates and updates as idempotent form posts', () => {
    const actions = Object.fromEntries([...manifest.entities].map(([name, e]) => [name, [...e.actions.keys()].sort()]));
    expect(actions).toEqual({
      customers: ['create', 'get', 'list', 'update'],
      invoices: ['create', 'get', 'list', 'update'],
      subscriptions: ['create', 'get', 'list', 'update'],
      charges: ['create', 'get', 'list', 'update'],
      products: ['create', 'get', 'list', 'update'],
      prices: ['create', 'get', 'list', 'update'],
      events: ['get', 'list'],
    });
    for (const [name, e] of manifest.entities) {
      for (const a of ['create', 'update'] as const) {
        const def = e.actions.get(a)?.def;
        if (def === undefined) continue;
        expect(def.request.method, `${name}.${a}`).toBe('POST');
        expect(def.request.body_encoding, `${name}.${a}`).toBe('form');
        expect(def.request.headers, `${name}.${a}`).toEqual({ 'Idempotency-Key': '{{call.id}}' });
        expect(def.retry_safe, `${name}.${a}`).toBe(true);
      }
      const list = e.actions.get('list')!.def;
      expect(list.pagination).toEqual({ type: 'cursor', param: 'starting_after', next: "{{get (last body.data) 'id'}}", has_more: '{{body.has_more}}' });
      expect(list.request.query).toMatchObject({ 'created[gte]': '{{params.created_gte}}', 'expand[]': '{{params.expand}}', limit: '{{params.limit}}' });
    }
    expect(manifest.manifest.auth.map((v) => `${v.name}:${v.type}`)).toEqual(['api_key:bearer', 'connected_account:bearer', 'connect_oauth:oauth2']);
  });
});

describe('every entity × action through the interpreter', () => {
  for (const entity of RESOURCES) {
    it(`${entity}: list (valid records, meta), get, unknown id`, async () => {
      const page = await list(entity, { limit: 5 });
      expect(page.data).toHaveLength(5);
      expectValid(entity, page.data as Rec[]);
      expect(page.data.map((r) => (r as Rec).id)).toEqual(ids(entity).slice(0, 5));
      expect(page.meta).toEqual({ next_page: ids(entity)[4] });
      const got = await one(entity, 'get', { [ID_PARAM[entity]!]: ids(entity)[7] });
      expect(got.data.id).toBe(ids(entity)[7]);
      expectValid(entity, [got.data as Rec]);
      const missing = await failure(one(entity, 'get', { [ID_PARAM[entity]!]: 'nope_404' }));
      expect(missing.code).toBe('upstream_not_found');
      expect(missing.details).toMatchObject({ upstream_status: 404, upstream_body: { error: { type: 'invalid_request_error', code: 'resource_missing' } } });
    });
  }

  it('customers create → get → update, with nested address and metadata as deepObject keys', async () => {
    const created = await one('customers', 'create', {
      email: 'ada@example.com',
      name: 'Ada',
      address: { city: 'London', country: 'GB' },
      metadata: { plan: 'pro', seats: '3' },
      preferred_locales: ['en', 'fr'],
    });
    const post = sent('POST', '/v1/customers').at(-1)!;
    expect(post.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(form(post.rawBody).sort()).toEqual([
      ['address[city]', 'London'],
      ['address[country]', 'GB'],
      ['email', 'ada@example.com'],
      ['metadata[plan]', 'pro'],
      ['metadata[seats]', '3'],
      ['name', 'Ada'],
      ['preferred_locales[]', 'en'],
      ['preferred_locales[]', 'fr'],
    ]);
    expect(created.data).toMatchObject({
      email: 'ada@example.com',
      name: 'Ada',
      address: { city: 'London', country: 'GB' },
      metadata: { plan: 'pro', seats: '3' },
      preferred_locales: ['en', 'fr'],
    });
    const id = created.data.id as string;
    expect((await one('customers', 'get', { customer: id })).data).toMatchObject({ id, email: 'ada@example.com' });
    const updated = await one('customers', 'update', { customer: id, description: 'VIP', metadata: { plan: 'enterprise' } });
    expect(sent('POST', `/v1/customers/${id}`)).toHaveLength(1);
    expect(updated.data).toMatchObject({ id, description: 'VIP', email: 'ada@example.com', metadata: { plan: 'enterprise' } });
    expect((await one('customers', 'get', { customer: id })).data.description).toBe('VIP');
    expectValid('customers', [updated.data as Rec]);
  });

  it('subscriptions create with items[0][price] and items[0][quantity]; update changes an item and cancels at period end', async () => {
    const created = await one('subscriptions', 'create', {
      customer: 'cus_123',
      items: [{ price: 'price_1', quantity: 2 }, { price: 'price_2' }],
      metadata: { source: 'test' },
      trial_period_days: 14,
    });
    expect(form(sent('POST', '/v1/subscriptions').at(-1)!.rawBody).sort()).toEqual([
      ['customer', 'cus_123'],
      ['items[0][price]', 'price_1'],
      ['items[0][quantity]', '2'],
      ['items[1][price]', 'price_2'],
      ['metadata[source]', 'test'],
      ['trial_period_days', '14'],
    ]);
    // The subscription keeps its items list object; items[] was an instruction, not the record's shape.
    expect(created.data).toMatchObject({ customer: 'cus_123', metadata: { source: 'test' }, items: { object: 'list' } });
    expectValid('subscriptions', [created.data as Rec]);
    const id = created.data.id as string;
    const updated = await one('subscriptions', 'update', {
      subscription_exposed_id: id,
      cancel_at_period_end: true,
      items: [{ id: 'si_1', quantity: 5 }],
      proration_behavior: 'none',
    });
    expect(form(sent('POST', `/v1/subscriptions/${id}`).at(-1)!.rawBody).sort()).toEqual([
      ['cancel_at_period_end', 'true'],
      ['items[0][id]', 'si_1'],
      ['items[0][quantity]', '5'],
      ['proration_behavior', 'none'],
    ]);
    expect(updated.data).toMatchObject({ id, cancel_at_period_end: true });
  });

  it('invoices, charges, products and prices: create → get → update', async () => {
    const invoice = await one('invoices', 'create', {
      customer: 'cus_9',
      description: 'November',
      collection_method: 'send_invoice',
      days_until_due: 30,
      metadata: { order: '77' },
    });
    expect(invoice.data).toMatchObject({ customer: 'cus_9', description: 'November', collection_method: 'send_invoice', metadata: { order: '77' } });
    // days_until_due is an instruction: Stripe's invoice object has no such field, so it is not stored.
    expect(invoice.data).not.toHaveProperty('days_until_due');
    expect((await one('invoices', 'update', { invoice: invoice.data.id, footer: 'Thanks' })).data).toMatchObject({ footer: 'Thanks', description: 'November' });
    expect((await one('invoices', 'get', { invoice: invoice.data.id })).data.footer).toBe('Thanks');

    const charge = await one('charges', 'create', { amount: 2000, currency: 'usd', source: 'tok_visa', description: 'Order 77', capture: false });
    expect(form(sent('POST', '/v1/charges').at(-1)!.rawBody).sort()).toEqual([
      ['amount', '2000'],
      ['capture', 'false'],
      ['currency', 'usd'],
      ['description', 'Order 77'],
      ['source', 'tok_visa'],
    ]);
    expect(charge.data).toMatchObject({ amount: 2000, currency: 'usd', description: 'Order 77' });
    expect((await one('charges', 'update', { charge: charge.data.id, receipt_email: 'a@example.com' })).data.receipt_email).toBe('a@example.com');

    const product = await one('products', 'create', { name: 'Pro plan', description: 'Everything', images: ['https://example.com/p.png'] });
    expect(product.data).toMatchObject({ name: 'Pro plan', description: 'Everything', images: ['https://example.com/p.png'] });
    expect((await one('products', 'update', { id: product.data.id, active: false })).data).toMatchObject({ active: false, name: 'Pro plan' });

    const price = await one('prices', 'create', {
      currency: 'eur',
      unit_amount: 1500,
      product: 'prod_1',
      recurring: { interval: 'month', interval_count: 1 },
      nickname: 'Monthly',
    });
    expect(form(sent('POST', '/v1/prices').at(-1)!.rawBody).sort()).toEqual([
      ['currency', 'eur'],
      ['nickname', 'Monthly'],
      ['product', 'prod_1'],
      ['recurring[interval]', 'month'],
      ['recurring[interval_count]', '1'],
      ['unit_amount', '1500'],
    ]);
    expect(price.data).toMatchObject({ currency: 'eur', unit_amount: 1500, nickname: 'Monthly', recurring: { interval: 'month', interval_count: 1 } });
    expect((await one('prices', 'update', { price: price.data.id, nickname: 'Monthly (EUR)' })).data.nickname).toBe('Monthly (EUR)');
    for (const [entity, rec] of [
      ['invoices', invoice],
      ['charges', charge],
      ['products', product],
      ['prices', price],
    ] as const)
      expectValid(entity, [rec.data as Rec]);
  });

  it('events: list filtered by type and created range, get', async () => {
    const events = sim.resources.get('events')!;
    const [first, second] = ids('events');
    events.records.get(first!)!.record = { ...events.records.get(first!)!.record, type: 'customer.created', created: 100 };
    events.records.get(second!)!.record = { ...events.records.get(second!)!.record, type: 'customer.deleted', created: 200 };
    const page = await list('events', { type: 'customer.deleted', created_gte: 150, limit: 100 });
    expect(page.data.map((e) => (e as Rec).id)).toEqual([second]);
    expect(sent('GET', '/v1/events').at(-1)!.query.toString()).toBe('created%5Bgte%5D=150&limit=100&type=customer.deleted');
    expect((await one('events', 'get', { id: first })).data).toMatchObject({ id: first, type: 'customer.created' });
  });

  it('expand[] goes in the query of lists and gets, and in the body of writes', async () => {
    await list('invoices', { expand: ['data.customer', 'data.subscription'], limit: 1 });
    expect(sent('GET', '/v1/invoices').at(-1)!.query.getAll('expand[]')).toEqual(['data.customer', 'data.subscription']);
    await one('charges', 'get', { charge: ids('charges')[0], expand: ['customer'] });
    expect(
      sent('GET', `/v1/charges/${ids('charges')[0]}`)
        .at(-1)!
        .query.getAll('expand[]'),
    ).toEqual(['customer']);
    await one('customers', 'create', { email: 'x@example.com', expand: ['tax'] });
    expect(form(sent('POST', '/v1/customers').at(-1)!.rawBody)).toContainEqual(['expand[]', 'tax']);
  });
});

describe('pagination', () => {
  it('records() follows starting_after=<last id> while has_more, through every page', async () => {
    const got: Rec[] = [];
    for await (const r of stripe().records('customers', { limit: 5 })) got.push(r as unknown as Rec);
    expect(got.map((r) => r.id)).toEqual(ids('customers'));
    const pages = sent('GET', '/v1/customers');
    expect(pages.map((r) => r.query.get('starting_after'))).toEqual([null, ids('customers')[4], ids('customers')[9]]);
    expect(pages.every((r) => r.query.get('limit') === '5')).toBe(true);
  });

  it('the last page says has_more false and its next_page is null; a page after it is empty', async () => {
    const all = ids('products');
    const last = await list('products', { limit: 5, starting_after: all[all.length - 3] });
    expect(last.data.map((r) => (r as Rec).id)).toEqual(all.slice(-2));
    expect(last.meta.next_page).toBeNull();
    const none = await list('products', { limit: 5, starting_after: all.at(-1) });
    expect(none.data).toEqual([]);
  });
});

describe('errors', () => {
  it('a request Stripe refuses comes back as upstream_rejected with error.message and its param', async () => {
    // recurring without interval: the manifest leaves the nested rule to Stripe, the simulator applies the description's.
    const err = await failure(one('prices', 'create', { currency: 'usd', unit_amount: 100, recurring: { interval_count: 2 } }));
    expect(err.code).toBe('upstream_rejected');
    expect(err.message).toBe('stripe: recurring.interval is a required parameter. (param: recurring.interval)');
    expect(err.details).toMatchObject({
      upstream_status: 400,
      upstream_body: { error: { type: 'invalid_request_error', code: 'parameter_missing', param: 'recurring.interval' } },
    });
  });

  it('bad params never leave: types, enums and unknown params are invalid_params', async () => {
    const before = sim.requests.length;
    expect((await failure(one('customers', 'create', { balance: 'lots' }))).code).toBe('invalid_params');
    expect((await failure(one('subscriptions', 'create', { customer: 'c', items: [{ price: 'p', colour: 'red' }] }))).code).toBe('invalid_params');
    expect((await failure(list('customers', { limit: 5, page: 2 }))).code).toBe('invalid_params');
    expect(sim.requests.length).toBe(before);
  });

  it('a card error (402) is upstream_rejected with the decline code', async () => {
    sim.inject({
      path: '/v1/charges',
      status: 402,
      json: {
        error: { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.', param: '' },
      },
    });
    const err = await failure(one('charges', 'create', { amount: 100, currency: 'usd', source: 'tok_chargeDeclined' }));
    expect(err.code).toBe('upstream_rejected');
    expect(err.message).toBe('stripe: Your card has insufficient funds. (decline_code: insufficient_funds)');
  });

  it('a deleted customer (200 with deleted: true) is upstream_not_found', async () => {
    const id = ids('customers')[0]!;
    const rec = sim.resources.get('customers')!.records.get(id)!;
    rec.record = { id, object: 'customer', deleted: true };
    expect((await failure(one('customers', 'get', { customer: id }))).code).toBe('upstream_not_found');
  });

  it("a bad key is upstream_credentials_rejected with Stripe's message", async () => {
    const err = await failure(stripe({ api_key: 'sk_test_revoked' }).execute('customers', 'list', {}));
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toBe('stripe: Invalid API Key provided');
    expect(err.details).toMatchObject({ upstream_status: 401, upstream_body: { error: { code: 'api_key_invalid' } } });
    // A value that is no Stripe key matches no variant: refused before anything is sent.
    expect(() => stripe({ api_key: 'not-a-stripe-key' })).toThrow(expect.objectContaining({ code: 'invalid_credentials' }));
  });

  it('429 with Stripe-Should-Retry: true is retried, even for a create, which resends the same Idempotency-Key', async () => {
    sim.inject({
      path: '/v1/customers',
      status: 429,
      headers: { 'Stripe-Should-Retry': 'true' },
      json: { error: { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests' } },
    });
    const created = await one('customers', 'create', { email: 'retry@example.com' });
    expect(created.data.email).toBe('retry@example.com');
    const posts = sent('POST', '/v1/customers');
    expect(posts).toHaveLength(2);
    const keys = posts.map((p) => p.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    // The next call is a new logical call: a new key.
    await one('customers', 'create', { email: 'second@example.com' });
    expect(sent('POST', '/v1/customers').at(-1)!.headers['idempotency-key']).not.toBe(keys[0]);
  });

  it('a 500 with Stripe-Should-Retry: true is retried for an update (idempotent); Stripe-Should-Retry: false is not retried', async () => {
    const id = ids('products')[0]!;
    sim.inject({
      path: `/v1/products/${id}`,
      status: 500,
      headers: { 'Stripe-Should-Retry': 'true' },
      json: { error: { type: 'api_error', message: 'Something went wrong' } },
    });
    expect((await one('products', 'update', { id, name: 'Renamed' })).data.name).toBe('Renamed');
    const posts = sent('POST', `/v1/products/${id}`);
    expect(posts).toHaveLength(2);
    expect(posts[1]!.headers['idempotency-key']).toBe(posts[0]!.headers['idempotency-key']);

    sim.inject({
      path: '/v1/customers',
      status: 409,
      headers: { 'Stripe-Should-Retry': 'false' },
      json: {
        error: { type: 'idempotency_error', message: 'Keys for idempotent requests can only be used with the same parameters they were first used with.' },
      },
    });
    const err = await failure(one('customers', 'create', { email: 'conflict@example.com' }));
    expect(err.code).toBe('upstream_rejected');
    expect(err.message).toMatch(/^stripe: Keys for idempotent requests/);
    expect(sent('POST', '/v1/customers')).toHaveLength(1);
    // Stripe-Should-Retry: false on a 404 or a 401 keeps their own meaning.
    sim.inject({
      path: '/v1/prices/gone',
      status: 404,
      headers: { 'Stripe-Should-Retry': 'false' },
      json: { error: { type: 'invalid_request_error', code: 'resource_missing', message: 'No such price' } },
    });
    expect((await failure(one('prices', 'get', { price: 'gone' }))).code).toBe('upstream_not_found');
    sim.inject({
      path: '/v1/prices',
      status: 401,
      headers: { 'Stripe-Should-Retry': 'false' },
      json: { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } },
    });
    expect((await failure(list('prices'))).code).toBe('upstream_credentials_rejected');
  });

  it("the simulator's own limit: over it, 429 with Stripe-Should-Retry and code rate_limit; persistent 429s end as upstream_rate_limited", async () => {
    sim.setRateLimit({ ...sim.sidecar.rate_limit!, limit: 1, window_seconds: 86_400 });
    await list('customers', { limit: 1 });
    const raw = await fetch(`${sim.url}/v1/customers`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(raw.status).toBe(429);
    expect(raw.headers.get('stripe-should-retry')).toBe('true');
    // Stripe's 429 says no wait: the backoff applies.
    expect(raw.headers.get('retry-after')).toBeNull();
    expect(((await raw.json()) as { error: Rec }).error).toMatchObject({ code: 'rate_limit', type: 'invalid_request_error' });
    const err = await failure(list('customers', { limit: 1 }));
    expect(err.code).toBe('upstream_rate_limited');
    expect(err.details).toMatchObject({ upstream_status: 429, attempts: 4 });
  });
});

describe('auth variants and the credential check', () => {
  it('a secret key and a restricted key are bearer tokens; no Stripe-Account header without an account', async () => {
    await stripe({ api_key: KEY }).execute('customers', 'list', { limit: 1 });
    await stripe({ api_key: 'rk_test_sandbox' }).execute('customers', 'list', { limit: 1 });
    const [a, b] = sent('GET', '/v1/customers');
    expect(a!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(b!.headers.authorization).toBe('Bearer rk_test_sandbox');
    expect(a!.headers['stripe-account']).toBeUndefined();
  });

  it('Connect with the platform key: Stripe-Account names the connected account on every request', async () => {
    const rt = new ConnectorRuntime(manifest, { api_key: KEY, stripe_account: 'acct_1Connected' }, { baseUrl: sim.url, limiter: null });
    expect(rt.authVariant).toBe('connected_account');
    await rt.execute('customers', 'list', { limit: 1 });
    await rt.execute('customers', 'create', { email: 'on-behalf@example.com' });
    for (const r of sim.requests) {
      expect(r.headers['stripe-account']).toBe('acct_1Connected');
      expect(r.headers.authorization).toBe(`Bearer ${KEY}`);
    }
    expect(() => new ConnectorRuntime(manifest, { api_key: KEY, stripe_account: 'not-an-account' }, { baseUrl: sim.url })).toThrow(
      /match no credential variant/,
    );
  });

  it('Connect OAuth: consent at /oauth/authorize, code exchange at /oauth/token keeps stripe_user_id, then API calls with the token', async () => {
    const variant = manifest.manifest.auth.find((v) => v.name === 'connect_oauth') as OAuth2Auth;
    expect(variant.authorize_url).toBe('https://connect.stripe.com/oauth/authorize');
    expect(variant.token_url).toBe('https://connect.stripe.com/oauth/token');
    const onSim = (url: string): string => `${sim.url}${new URL(url).pathname}`;
    const consent = authorizeUrl(variant, {
      clientId: sim.oauth.clientId,
      redirectUri: 'https://app.example/cb',
      state: 'st-1',
      authorizeUrl: onSim(variant.authorize_url),
    });
    expect(new URL(consent).searchParams.get('scope')).toBe('read_write');
    const redirect = await fetch(consent, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const back = new URL(redirect.headers.get('location') as string);
    const app = { clientId: sim.oauth.clientId, clientSecret: sim.oauth.clientSecret, tokenUrl: onSim(variant.token_url) };
    const tokens = await exchangeAuthorizationCode(variant, app, back.searchParams.get('code') as string, 'https://app.example/cb');
    const credentials = credentialsFromTokens(variant, app, tokens);
    expect(Object.keys(credentials).sort()).toEqual(['access_token', 'refresh_token', 'stripe_user_id']);
    expect(credentials.stripe_user_id).toBe('acct_1SimConnected');
    const token = sent('POST', '/oauth/token').at(-1)!;
    expect(new URLSearchParams(token.rawBody).get('client_secret')).toBe(sim.oauth.clientSecret);

    const rt = new ConnectorRuntime(manifest, credentials as never, { baseUrl: sim.url, limiter: null });
    expect(rt.authVariant).toBe('connect_oauth');
    expect(((await rt.execute('prices', 'list', { limit: 2 })) as ListEnvelope).data).toHaveLength(2);
    expect(sent('GET', '/v1/prices').at(-1)!.headers.authorization).toBe(`Bearer ${credentials.access_token as string}`);
    // A refused consent comes back as error=access_denied.
    sim.oauth.deny = true;
    try {
      expect(new URL((await fetch(consent, { redirect: 'manual' })).headers.get('location') as string).searchParams.get('error')).toBe('access_denied');
    } finally {
      sim.oauth.deny = false;
    }
  });

  it('check asks GET /v1/account and reports the account; a revoked key fails the check', async () => {
    const result = await stripe().check();
    expect(result).toMatchObject({ ok: true, connector_type: 'stripe', checked: true });
    expect(Object.keys(result.info).sort()).toEqual(['account_id', 'business_name', 'country', 'default_currency']);
    expect(typeof result.info.account_id).toBe('string');
    expect(sent('GET', '/v1/account')).toHaveLength(1);
    const err = await failure(stripe({ api_key: 'sk_test_revoked' }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
  });
});

describeEachDialect('stripe sync on %s', (name) => {
  const open = (groups?: MigrationGroup[]): Promise<TestDatabase> => openTestDatabase(name, groups);
  let tdb: TestDatabase;
  let store: RecordStore;
  const engines: SyncEngine[] = [];
  beforeAll(async () => {
    tdb = await open();
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test' });
  });
  afterAll(async () => {
    for (const e of engines) await e.stop();
    await tdb.close();
  });

  function engineFor(only: string[]): SyncEngine {
    const view = { ...manifest, entities: new Map([...manifest.entities].filter(([n]) => only.includes(n))) };
    const e = new SyncEngine({
      database: tdb.database,
      sink: store,
      fullRefreshEvery: 10,
      runtimeFor: async () => ({
        manifest: view,
        runtime: new ConnectorRuntime(manifest, { api_key: KEY }, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5 } }),
      }),
    });
    engines.push(e);
    return e;
  }
  /** Give the simulator's records creation times (the sampled ones are all 0). */
  function stamp(entity: string, from: number): void {
    let t = from;
    for (const s of sim.resources.get(entity)!.records.values()) s.record = { ...s.record, created: t++ };
  }

  it('customers: a full run, then an incremental one with created[gte] that stores the new customer and drops the one customer.deleted reports', async () => {
    stamp('customers', 1_000);
    const size = sim.resources.get('customers')!.records.size;
    const newest = 1_000 + size - 1;
    const engine = engineFor(['customers']);
    const cid = `stripe-${name}`;
    await engine.register(cid);
    const full = await engine.runOnce(cid);
    expect(full).toMatchObject({ full: true, entities: { customers: { records: size, deleted: 0 } } });
    expect(sent('GET', '/v1/customers').map((r) => r.query.get('limit'))).toEqual(['100']);
    expect(await store.count(cid, 'customers')).toBe(size);

    // Upstream: one new customer, one deleted (and its customer.deleted event).
    const created = await one('customers', 'create', { email: `new-${name}@example.com`, name: 'Newcomer' });
    const newId = created.data.id as string;
    sim.resources.get('customers')!.records.get(newId)!.record.created = 5_000;
    const gone = ids('customers')[2]!;
    sim.resources.get('customers')!.records.delete(gone);
    const events = sim.resources.get('events')!;
    const eventIds = ids('events');
    events.records.get(eventIds[0]!)!.record = {
      ...events.records.get(eventIds[0]!)!.record,
      type: 'customer.deleted',
      created: 5_001,
      data: { object: { id: gone, object: 'customer', deleted: true } },
    };
    events.records.get(eventIds[1]!)!.record = {
      ...events.records.get(eventIds[1]!)!.record,
      type: 'customer.deleted',
      created: 10,
      data: { object: { id: ids('customers')[0], object: 'customer', deleted: true } },
    };
    sim.reset();

    const inc = await engine.runOnce(cid);
    expect(inc.full).toBe(false);
    // Only customers created since the newest one synced; removals from events since then too.
    const lists = sent('GET', '/v1/customers');
    expect(lists.map((r) => r.query.toString())).toEqual([`created%5Bgte%5D=${newest}&limit=100`]);
    const feed = sent('GET', '/v1/events');
    expect(feed.map((r) => r.query.toString())).toEqual([`created%5Bgte%5D=${newest}&limit=100&types%5B%5D=customer.deleted`]);
    // The newest customer of the last run comes again (gte: one created in the same second is not missed).
    expect(inc.entities['customers']).toMatchObject({ records: 2, deleted: 1 });
    expect(await store.count(cid, 'customers')).toBe(size);
    const def = { primaryKey: 'id', fields: manifest.entities.get('customers')!.def.search!.fields as Record<string, 'string'> };
    const hit = await store.search(cid, 'customers', def, { query: { filter: { eq: { email: `new-${name}@example.com` } } }, fields: ['id', 'name'] });
    expect(hit.data).toEqual([{ id: newId, name: 'Newcomer' }]);
    const deleted = await store.search(cid, 'customers', def, { query: { filter: { eq: { id: gone } } }, fields: ['id'] });
    expect(deleted.data).toEqual([]);
    // The old event (before the mark) deleted nothing.
    const kept = await store.search(cid, 'customers', def, { query: { filter: { eq: { id: ids('customers')[0]! } } }, fields: ['id'] });
    expect(kept.data).toHaveLength(1);
  });

  it('every entity syncs in full, subscriptions in every status, with records valid for their schemas', async () => {
    const synced = ['customers', 'invoices', 'subscriptions', 'charges', 'products', 'prices'];
    for (const e of synced) expect(manifest.entities.get(e)!.def.sync, e).toBeDefined();
    expect(manifest.entities.get('events')!.def.sync).toBeUndefined();
    const engine = engineFor(synced);
    const cid = `stripe-all-${name}`;
    await engine.register(cid);
    const full = await engine.runOnce(cid);
    for (const e of synced) {
      expect(full.entities[e]?.records, e).toBe(sim.resources.get(e)!.records.size);
      expect(await store.count(cid, e)).toBe(sim.resources.get(e)!.records.size);
    }
    expect(sent('GET', '/v1/subscriptions').at(-1)!.query.get('status')).toBe('all');
  });
});
