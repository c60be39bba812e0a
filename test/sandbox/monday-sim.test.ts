/**
 * The Monday simulator on its own, over raw HTTP: GraphQL handling and errors per API version,
 * auth, cursor pagination, complexity, mutations, OAuth, determinism and size.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { boardOrder } from '../../connectors/monday/simulator/data.ts';
import { startMondaySimulator, type MondaySimulator } from '../../connectors/monday/simulator/index.ts';

type Json = Record<string, any>;

let sim: MondaySimulator;
beforeAll(async () => {
  sim = await startMondaySimulator();
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.reset();
  sim.resetData();
  sim.clock.offsetMs = 0;
  sim.complexity.budget = 10_000_000;
  sim.complexity.windowSeconds = 60;
  sim.setRateLimit(sim.sidecar.rate_limit!);
  sim.oauth.deny = false;
});

interface Gql {
  status: number;
  headers: Headers;
  body: Json;
}

async function gql(query: string, variables: Json = {}, headers: Record<string, string> = {}): Promise<Gql> {
  const res = await fetch(`${sim.url}/v2`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: sim.apiKey, 'API-Version': '2026-10', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Json };
}

const board = () => sim.state.boards[0]!;

describe('monday simulator: requests and auth', () => {
  it('answers a query with data, extensions.request_id, account_id and rate limit headers', async () => {
    const r = await gql('{ me { id name } account { id slug } }');
    expect(r.status).toBe(200);
    expect(r.body.data.me).toEqual({ id: sim.state.users[0]!.id, name: sim.state.users[0]!.name });
    expect(r.body.data.account.slug).toBe('acme-robotics');
    expect(typeof r.body.extensions.request_id).toBe('string');
    expect(r.body.account_id).toBe(Number(sim.state.account.id));
    expect(r.headers.get('ratelimit-policy')).toBe('"complexity";q=10000000;w=60');
    expect(r.headers.get('ratelimit')).toMatch(/^"complexity";r=\d+;t=\d+$/);
  });

  it('accepts the raw token and a Bearer-prefixed one; rejects others with 401 per version', async () => {
    expect((await gql('{ me { id } }', {}, { authorization: `Bearer ${sim.apiKey}` })).status).toBe(200);
    const bad = await gql('{ me { id } }', {}, { authorization: 'nope' });
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual({ errors: [{ message: 'Not Authenticated', extensions: { code: 'UNAUTHENTICATED', status_code: 401 } }] });
    // A version monday no longer serves is answered as the current one (2026-10 shapes).
    const retired = await gql('{ me { id } }', {}, { authorization: '', 'API-Version': '2024-10' });
    expect(retired.status).toBe(401);
    expect(retired.body).toEqual(bad.body);
  });

  it('a body without a query is a 400 "No query string was present"', async () => {
    const res = await fetch(`${sim.url}/v2`, {
      method: 'POST',
      headers: { authorization: sim.apiKey, 'content-type': 'application/json', 'API-Version': '2026-10' },
      body: '{}',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).errors[0].message).toBe('No query string was present');
    const notJson = await fetch(`${sim.url}/v2`, { method: 'POST', headers: { authorization: sim.apiKey }, body: 'query {' });
    expect(notJson.status).toBe(400);
  });

  it('fault injection from sim-server applies to /v2', async () => {
    sim.inject({ path: '/v2', status: 503, text: '<html>upstream down</html>', contentType: 'text/html' });
    const res = await fetch(`${sim.url}/v2`, { method: 'POST', headers: { authorization: sim.apiKey }, body: '{"query":"{ me { id } }"}' });
    expect(res.status).toBe(503);
    expect((await gql('{ me { id } }')).status).toBe(200);
  });
});

describe('monday simulator: GraphQL errors come back in a 200, worded like graphql-ruby', () => {
  it('syntax error', async () => {
    const r = await gql('query { boards(limit: 1) { id ) }');
    expect(r.status).toBe(200);
    expect(r.body.errors[0].message).toBe('Parse error on ")" (RPAREN) at [1, 31]');
    expect(r.body.data).toBeUndefined();
  });

  it('unknown field, unknown argument, missing argument, bad literal, bad variable', async () => {
    expect((await gql('{ me { id shoe_size } }')).body.errors[0]).toMatchObject({
      message: "Field 'shoe_size' doesn't exist on type 'User'",
      extensions: { code: 'undefinedField' },
    });
    expect((await gql('{ boards(color: 1) { id } }')).body.errors[0].message).toBe("Field 'boards' doesn't accept argument 'color'");
    expect((await gql('{ next_items_page { cursor } }')).body.errors[0].message).toBe("Field 'next_items_page' is missing required arguments: cursor");
    expect((await gql('{ boards(limit: "ten") { id } }')).body.errors[0].message).toBe(
      "Argument 'limit' on Field 'boards' has an invalid value (\"ten\"). Expected type 'Int'.",
    );
    const v = await gql('query ($l: Int!) { boards(limit: $l) { id } }', { l: 'x' });
    expect(v.status).toBe(200);
    expect(v.body.errors[0]).toMatchObject({
      message: 'Variable $l of type Int! was provided invalid value',
      extensions: { code: 'variableMismatch', value: 'x' },
    });
  });

  it('application errors carry Monday codes with partial data, on every served version', async () => {
    const q = 'mutation ($b: ID!) { create_item(board_id: $b, item_name: "x") { id } }';
    const unified = await gql(q, { b: '5' });
    expect(unified.body.data).toEqual({ create_item: null });
    expect(unified.body.errors[0]).toMatchObject({ path: ['create_item'], extensions: { code: 'InvalidBoardIdException', status_code: 200 } });
    expect(unified.body.error_code).toBeUndefined();
    const maintenance = await gql(q, { b: '5' }, { 'API-Version': '2026-07' });
    expect(maintenance.body.errors[0]).toMatchObject({ extensions: { code: 'InvalidBoardIdException' } });
    expect(maintenance.body.error_code).toBeUndefined();
  });
});

describe('monday simulator: items_page cursors', () => {
  const firstPage = 'query ($b: [ID!], $l: Int!) { boards(ids: $b) { items_page(limit: $l) { cursor items { id } } } }';
  const nextPage = 'query ($c: String!, $l: Int!) { next_items_page(cursor: $c, limit: $l) { cursor items { id } } }';

  it('pages through a board in board order, with a null cursor on the last page', async () => {
    const order = boardOrder(sim.state, board());
    let r = await gql(firstPage, { b: [board().id], l: 50 });
    let page = r.body.data.boards[0].items_page;
    const ids: string[] = page.items.map((i: Json) => i.id);
    while (page.cursor !== null) {
      r = await gql(nextPage, { c: page.cursor, l: 50 });
      page = r.body.data.next_items_page;
      ids.push(...page.items.map((i: Json) => i.id));
    }
    expect(ids).toEqual(order);
  });

  it('a cursor can be fetched again (same page), and board.items_page(cursor) works too', async () => {
    const first = (await gql(firstPage, { b: [board().id], l: 10 })).body.data.boards[0].items_page;
    const a = (await gql(nextPage, { c: first.cursor, l: 10 })).body.data.next_items_page;
    const b = (await gql(nextPage, { c: first.cursor, l: 10 })).body.data.next_items_page;
    expect(a.items).toEqual(b.items);
    expect(a.cursor).not.toBe(first.cursor);
    const viaBoard = await gql('query ($b: [ID!], $c: String) { boards(ids: $b) { items_page(limit: 10, cursor: $c) { items { id } } } }', {
      b: [board().id],
      c: first.cursor,
    });
    expect(viaBoard.body.data.boards[0].items_page.items).toEqual(a.items);
  });

  it('cursors expire 60 minutes after the first request', async () => {
    const first = (await gql(firstPage, { b: [board().id], l: 10 })).body.data.boards[0].items_page;
    sim.clock.advance(59 * 60 * 1000);
    expect((await gql(nextPage, { c: first.cursor, l: 10 })).body.data.next_items_page.items).toHaveLength(10);
    sim.clock.advance(2 * 60 * 1000);
    const expired = await gql(nextPage, { c: first.cursor, l: 10 });
    expect(expired.status).toBe(200);
    expect(expired.body.data).toBeNull();
    expect(expired.body.errors[0].extensions.code).toBe('CursorException');
    expect(expired.body.errors[0].message).toContain('expired');
    expect((await gql(nextPage, { c: 'bm90IGEgY3Vyc29y', l: 10 })).body.errors[0].message).toBe('Invalid cursor');
  });

  it('limit is at most 500', async () => {
    const r = await gql(firstPage, { b: [board().id], l: 501 });
    expect(r.body.errors[0].extensions.code).toBe('InvalidArgumentException');
  });

  it('query_params filters by rules and ids; group items_page keeps to its group', async () => {
    const done = await gql(
      'query ($b: [ID!]) { boards(ids: $b) { items_page(limit: 500, query_params: { rules: [{ column_id: "status", compare_value: [1] }] }) { items { id column_values(ids: ["status"]) { text } } } } }',
      { b: [board().id] },
    );
    const items = done.body.data.boards[0].items_page.items as Json[];
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((i) => i.column_values[0].text === 'Done')).toBe(true);
    const some = boardOrder(sim.state, board()).slice(3, 6);
    const byIds = await gql('query ($b: [ID!], $ids: [ID!]) { boards(ids: $b) { items_page(query_params: { ids: $ids }) { items { id } } } }', {
      b: [board().id],
      ids: some,
    });
    expect(byIds.body.data.boards[0].items_page.items.map((i: Json) => i.id)).toEqual(some);
    const group = await gql('query ($b: [ID!]) { boards(ids: $b) { groups(ids: ["new_group"]) { items_page(limit: 500) { items { group { id } } } } } }', {
      b: [board().id],
    });
    expect(group.body.data.boards[0].groups[0].items_page.items.every((i: Json) => i.group.id === 'new_group')).toBe(true);
  });

  it('typed column values resolve through the ColumnValue interface', async () => {
    const r = await gql(
      'query ($b: [ID!]) { boards(ids: $b) { items_page(limit: 1) { items { column_values { id ... on StatusValue { label index is_done } ... on DateValue { date } ... on PeopleValue { persons_and_teams { id kind } } } } } } }',
      { b: [board().id] },
    );
    const cvs = Object.fromEntries((r.body.data.boards[0].items_page.items[0].column_values as Json[]).map((c) => [c.id, c]));
    expect(Object.keys(cvs['status']!)).toEqual(['id', 'label', 'index', 'is_done']);
    expect(cvs['date4']).toHaveProperty('date');
  });
});

describe('monday simulator: complexity', () => {
  it('reports complexity and charges it against the per-minute budget', async () => {
    const r = await gql('{ complexity { before after query reset_in_x_seconds } tags { id } }');
    const c = r.body.data.complexity;
    expect(c.before).toBe(10_000_000);
    expect(c.after).toBe(10_000_000 - c.query);
    expect(sim.complexity.remaining()).toBe(c.after);
  });

  it('an exhausted budget answers the versioned error in a 200 with Retry-After, and comes back after the window', async () => {
    sim.complexity.budget = 30;
    expect((await gql('{ tags { id name color } }')).status).toBe(200);
    const v4 = await gql('{ tags { id name color } }');
    expect(v4.status).toBe(200);
    expect(v4.headers.get('retry-after')).toBe('60');
    expect(v4.body.errors).toEqual([{ message: 'Complexity budget exhausted', extensions: { code: 'COMPLEXITY_BUDGET_EXHAUSTED', retry_in_seconds: 60 } }]);
    const retired = await gql('{ tags { id name color } }', {}, { 'API-Version': '2024-10' });
    expect(retired.body.errors).toEqual(v4.body.errors);
    sim.clock.advance(60_000);
    expect((await gql('{ tags { id name color } }')).body.data.tags).toHaveLength(sim.state.tags.length);
  });

  it('a single query over 5,000,000 points is refused', async () => {
    const r = await gql('{ boards(limit: 500) { items_page(limit: 500) { items { column_values { id } subscribers { id } updates(limit: 100) { id } } } } }');
    expect(r.body.errors[0].extensions.code).toBe('maxComplexityExceeded');
    expect(sim.complexity.remaining()).toBe(10_000_000);
  });

  it('complexityHttpStatus: 429 makes the limit transport-level', async () => {
    const strict = await startMondaySimulator({ complexity: { budget: 1 }, complexityHttpStatus: 429 });
    try {
      const res = await fetch(`${strict.url}/v2`, {
        method: 'POST',
        headers: { authorization: strict.apiKey, 'content-type': 'application/json' },
        body: '{"query":"{ me { id } }"}',
      });
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('60');
    } finally {
      await strict.close();
    }
  });
});

describe('monday simulator: mutations', () => {
  const create =
    'mutation ($b: ID!, $n: String!, $g: String, $cv: JSON, $l: Boolean) { create_item(board_id: $b, item_name: $n, group_id: $g, column_values: $cv, create_labels_if_missing: $l) { id name group { id } column_values { id text value } } }';

  it('create_item stores typed values and puts the item at the top of its group', async () => {
    const r = await gql(create, {
      b: board().id,
      n: 'New',
      g: 'topics',
      cv: JSON.stringify({ status: 'Done', date4: '2025-05-06 09:30', numbers: '12.5', person: '51000001' }),
    });
    const item = r.body.data.create_item;
    const cells = Object.fromEntries((item.column_values as Json[]).map((c) => [c.id, c]));
    expect(cells['status']).toMatchObject({ text: 'Done', value: expect.stringContaining('"index":1') });
    expect(cells['date4']).toMatchObject({ text: '2025-05-06 09:30', value: expect.stringContaining('"time":"09:30:00"') });
    expect(cells['numbers']).toMatchObject({ text: '12.5', value: '"12.5"' });
    expect(cells['person']!.text).toBe(sim.state.users[0]!.name);
    expect(boardOrder(sim.state, board())[0]).toBe(item.id);
  });

  it('refuses bad JSON, unknown columns, unknown labels and bad dates without writing', async () => {
    const before = sim.state.items.size;
    expect((await gql(create, { b: board().id, n: 'x', cv: '{"status":' })).body.errors[0]).toMatchObject({
      message: 'Syntax error in JSON input',
      extensions: { code: 'JsonParseException', status_code: 400 },
    });
    expect((await gql(create, { b: board().id, n: 'x', cv: '{"nope":1}' })).body.errors[0].extensions.code).toBe('InvalidColumnIdException');
    expect((await gql(create, { b: board().id, n: 'x', cv: '{"status":{"label":"Maybe"}}' })).body.errors[0].extensions).toMatchObject({
      code: 'ColumnValueException',
      error_data: { column_type: 'status' },
    });
    expect((await gql(create, { b: board().id, n: 'x', cv: '{"date4":"tomorrow"}' })).body.errors[0].extensions.code).toBe('ColumnValueException');
    expect((await gql(create, { b: board().id, n: 'x', g: 'nope' })).body.errors[0].extensions.code).toBe('InvalidGroupIdException');
    expect((await gql(create, { b: board().id, n: 'x'.repeat(256) })).body.errors[0].extensions.code).toBe('ItemNameTooLongException');
    expect(sim.state.items.size).toBe(before);
    const added = await gql(create, { b: board().id, n: 'x', cv: '{"status":{"label":"Maybe"}}', l: true });
    expect(added.body.data.create_item.column_values.find((c: Json) => c.id === 'status').text).toBe('Maybe');
  });

  it('change_multiple_column_values, change_simple_column_value, create_update, delete_item', async () => {
    const itemId = boardOrder(sim.state, board())[0]!;
    const ch = await gql(
      'mutation ($b: ID!, $i: ID!, $cv: JSON!) { change_multiple_column_values(board_id: $b, item_id: $i, column_values: $cv) { name column_values(ids: ["text", "status"]) { text } } }',
      {
        b: board().id,
        i: itemId,
        cv: { name: 'Renamed', text: 'Hooli', status: { index: 2 } },
      },
    );
    expect(ch.body.data.change_multiple_column_values).toEqual({ name: 'Renamed', column_values: [{ text: 'Stuck' }, { text: 'Hooli' }] });
    const simple = await gql(
      'mutation ($b: ID!, $i: ID!) { change_simple_column_value(board_id: $b, item_id: $i, column_id: "checkbox", value: "true") { column_values(ids: ["checkbox"]) { text } } }',
      { b: board().id, i: itemId },
    );
    expect(simple.body.data.change_simple_column_value.column_values[0].text).toBe('v');
    const up = await gql('mutation ($i: ID!) { create_update(item_id: $i, body: "<p>Hello&nbsp;<b>team</b></p>") { id text_body item_id } }', { i: itemId });
    expect(up.body.data.create_update).toMatchObject({ text_body: 'Hello team', item_id: itemId });
    expect(sim.state.updates.at(-1)!.id).toBe(up.body.data.create_update.id);
    await gql('mutation ($i: ID!) { delete_item(item_id: $i) { id } }', { i: itemId });
    expect((await gql('query ($i: [ID!]) { items(ids: $i) { id } }', { i: [itemId] })).body.data.items).toEqual([]);
    expect(boardOrder(sim.state, board())).not.toContain(itemId);
  });
});

describe('monday simulator: OAuth', () => {
  const redirect = 'https://app.example.com/cb';
  const authorize = (extra = '') =>
    fetch(`${sim.url}/oauth2/authorize?client_id=${sim.oauth.clientId}&redirect_uri=${encodeURIComponent(redirect)}&state=s1${extra}`, { redirect: 'manual' });
  const exchange = (params: Record<string, string>) =>
    fetch(`${sim.url}/oauth2/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params) });

  it('authorize redirects with a code and the state; the code buys a non-expiring Bearer token once', async () => {
    const res = await authorize('&scope=boards:read');
    expect(res.status).toBe(302);
    const loc = new URL(res.headers.get('location')!);
    expect(`${loc.origin}${loc.pathname}`).toBe(redirect);
    expect(loc.searchParams.get('state')).toBe('s1');
    const code = loc.searchParams.get('code')!;
    const tok = await exchange({
      client_id: sim.oauth.clientId,
      client_secret: sim.oauth.clientSecret,
      code,
      redirect_uri: redirect,
      grant_type: 'authorization_code',
    });
    expect(tok.status).toBe(200);
    const body = (await tok.json()) as Json;
    expect(body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', scope: 'boards:read' });
    expect((await gql('{ me { id } }', {}, { authorization: body.access_token })).status).toBe(200);
    const again = await exchange({ client_id: sim.oauth.clientId, client_secret: sim.oauth.clientSecret, code });
    expect(again.status).toBe(400);
    expect(((await again.json()) as Json).error).toBe('invalid_grant');
  });

  it('access_denied when the user declines; bad client credentials are invalid_client', async () => {
    sim.oauth.deny = true;
    const loc = new URL((await authorize()).headers.get('location')!);
    expect(loc.searchParams.get('error')).toBe('access_denied');
    expect(loc.searchParams.get('state')).toBe('s1');
    expect(loc.searchParams.get('code')).toBeNull();
    sim.oauth.deny = false;
    const code = new URL((await authorize()).headers.get('location')!).searchParams.get('code')!;
    const bad = await exchange({ client_id: sim.oauth.clientId, client_secret: 'wrong', code });
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as Json).error).toBe('invalid_client');
    const basic = await fetch(`${sim.url}/oauth2/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${sim.oauth.clientId}:${sim.oauth.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ code, redirect_uri: redirect }),
    });
    expect(basic.status).toBe(200);
    expect((await fetch(`${sim.url}/oauth2/authorize?client_id=other&redirect_uri=x`, { redirect: 'manual' })).status).toBe(400);
  });
});

describe('monday simulator: data', () => {
  it('is deterministic per seed', async () => {
    const a = await startMondaySimulator({ seed: 42, size: 50 });
    const b = await startMondaySimulator({ seed: 42, size: 50 });
    const c = await startMondaySimulator({ seed: 43, size: 50 });
    try {
      const snap = (s: MondaySimulator) => JSON.stringify({ users: s.state.users, items: [...s.state.items.values()], updates: s.state.updates });
      expect(snap(a)).toBe(snap(b));
      expect(snap(a)).not.toBe(snap(c));
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it('defaults to a few hundred items over four boards, with updates', () => {
    expect(sim.state.items.size).toBe(300);
    expect(sim.state.boards).toHaveLength(4);
    expect(sim.state.boards.every((b) => boardOrder(sim.state, b).length > 0)).toBe(true);
    expect(sim.state.updates.length).toBeGreaterThan(100);
  });

  it('scales to 100,000 items and pages through the biggest board at 500', async () => {
    const big = await startMondaySimulator({ size: 100_000, seed: 3 });
    try {
      expect(big.state.items.size).toBe(100_000);
      const b = big.state.boards[0]!;
      const post = async (query: string, variables: Json): Promise<Json> => {
        const res = await fetch(`${big.url}/v2`, {
          method: 'POST',
          headers: { authorization: big.apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ query, variables }),
        });
        return ((await res.json()) as Json).data;
      };
      let page = (await post('query ($b: [ID!]) { boards(ids: $b) { items_page(limit: 500) { cursor items { id } } } }', { b: [b.id] })).boards[0].items_page;
      let count = page.items.length;
      while (page.cursor) {
        page = (await post('query ($c: String!) { next_items_page(cursor: $c, limit: 500) { cursor items { id } } }', { c: page.cursor })).next_items_page;
        count += page.items.length;
      }
      expect(count).toBe(40_000);
    } finally {
      await big.close();
    }
  }, 60_000);
});

describe("monday simulator: monday's 2026-10 schema, versions, defaults and the minute limit", () => {
  it('executes against the vendored 2026-10 SDL: fields removed in 2026-10 are validation errors, their replacements answer', async () => {
    const removed = await gql('{ users(limit: 1) { id enabled is_admin photo_thumb } }');
    expect(removed.status).toBe(200);
    expect(removed.body.errors.map((e: Json) => e.message)).toEqual([
      "Field 'enabled' doesn't exist on type 'User'",
      "Field 'is_admin' doesn't exist on type 'User'",
      "Field 'photo_thumb' doesn't exist on type 'User'",
    ]);
    const now = await gql('{ users(limit: 1) { id status kind is_email_confirmed created_at photo_url { thumb } utc_hours_diff } }');
    const u = sim.state.users[0]!;
    expect(now.body.data.users).toEqual([
      {
        id: u.id,
        status: 'ACTIVE',
        kind: 'admin',
        is_email_confirmed: true,
        created_at: u.created_at,
        photo_url: { thumb: `https://files.monday.com/use1/photos/${u.id}/thumb/${u.id}-user_photo.png` },
        utc_hours_diff: u.utc_hours_diff,
      },
    ]);
    // $emails must be [String!] on 2026-10.
    const emails = await gql('query ($e: [String]) { users(emails: $e) { id } }', { e: [u.email] });
    expect(emails.body.errors[0].message).toMatch(/\$e/);
  });

  it('a version monday serves is answered as itself; a retired or malformed one as the current 2026-10', async () => {
    const q = '{ version { value kind } versions { value kind } }';
    expect((await gql(q, {}, { 'API-Version': '2026-07' })).body.data.version).toEqual({ value: '2026-07', kind: 'maintenance' });
    expect((await gql(q, {}, { 'API-Version': '2025-04' })).body.data.version).toEqual({ value: '2026-10', kind: 'current' });
    expect((await gql(q, {}, { 'API-Version': 'latest' })).body.data.version).toEqual({ value: '2026-10', kind: 'current' });
    expect((await gql('{ version { display_name } versions { display_name } }')).body.data).toEqual({
      version: { display_name: '2026-10' },
      versions: [{ display_name: '2026-07' }, { display_name: '2026-10' }, { display_name: '2027-01' }],
    });
    expect((await gql('mutation { complexity { query } }')).body.data.complexity.query).toBeGreaterThan(0);
    expect((await gql(q)).body.data.versions).toEqual([
      { value: '2026-07', kind: 'maintenance' },
      { value: '2026-10', kind: 'current' },
      { value: '2027-01', kind: 'release_candidate' },
    ]);
  });

  it("applies the schema's default limit and page: updates 25 a page from page 1, users 200", async () => {
    const newest = [...sim.state.updates].reverse().map((u) => u.id);
    const r = await gql('{ updates { id } }');
    expect(r.body.data.updates.map((u: Json) => u.id)).toEqual(newest.slice(0, 25));
    const p2 = await gql('{ updates(page: 2) { id } }');
    expect(p2.body.data.updates.map((u: Json) => u.id)).toEqual(newest.slice(25, 50));
    const items = await gql('{ items { id } }');
    expect(items.body.data.items).toHaveLength(25);
    const users = await gql('{ users { id } }');
    expect(users.body.data.users).toHaveLength(sim.state.users.filter((x) => x.status !== 'INACTIVE').length);
  });

  it('the per-minute limit answers HTTP 429 RATE_LIMIT_EXCEEDED with retry_in_seconds and Retry-After, and lifts after the window', async () => {
    sim.setRateLimit({ ...sim.sidecar.rate_limit!, limit: 2 });
    expect((await gql('{ me { id } }')).status).toBe(200);
    sim.clock.advance(20_000);
    expect((await gql('{ me { id } }')).status).toBe(200);
    const limited = await gql('{ me { id } }');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('40');
    expect(limited.body.errors).toEqual([
      {
        message: 'Rate limit exceeded for the account, please retry after some time',
        extensions: { code: 'RATE_LIMIT_EXCEEDED', status_code: 429, retry_in_seconds: 40 },
      },
    ]);
    expect(limited.body.account_id).toBe(Number(sim.state.account.id));
    sim.clock.advance(40_000);
    expect((await gql('{ me { id } }')).status).toBe(200);
  });

  it('connected columns: text is null, display_value and linked_item_ids carry the value', async () => {
    const q = `query ($ids: [ID!]) { items(ids: $ids) { column_values(ids: ["connect_boards", "mirror", "dependency", "formula", "numbers"]) {
      id text ... on BoardRelationValue { display_value linked_item_ids } ... on MirrorValue { display_value } ... on DependencyValue { display_value linked_item_ids } ... on FormulaValue { display_value } } } }`;
    const item = [...sim.state.items.values()].find(
      (i) =>
        i.board_id === sim.state.boards[1]!.id &&
        i.cells['connect_boards']!.value !== null &&
        i.cells['dependency']!.value !== null &&
        i.cells['numbers']!.text !== '',
    )!;
    const r = await gql(q, { ids: [item.id] });
    const cells = Object.fromEntries((r.body.data.items[0].column_values as Json[]).map((c) => [c.id, c]));
    const linked = sim.state.items.get(JSON.parse(item.cells['connect_boards']!.value!).linkedPulseIds[0].linkedPulseId.toString())!;
    expect(cells['connect_boards']).toEqual({ id: 'connect_boards', text: null, display_value: linked.name, linked_item_ids: [linked.id] });
    expect(cells['mirror']).toEqual({ id: 'mirror', text: null, display_value: linked.cells['status']!.text });
    expect(cells['dependency']!.display_value).toBe(sim.state.items.get(String(Number(item.id) - 7))!.name);
    expect(cells['formula']).toEqual({ id: 'formula', text: null, display_value: String(Math.round((Number(item.cells['numbers']!.text) / 8) * 100) / 100) });
  });

  it('activity logs record API changes, newest first, filtered by from/to and item, with the 100 ns timestamp and JSON data', async () => {
    const b = board();
    const item = boardOrder(sim.state, b).map((id) => sim.state.items.get(id)!)[0]!;
    sim.clock.advance(5_000);
    const from = new Date(sim.clock.now()).toISOString();
    await gql('mutation ($i: ID!) { archive_item(item_id: $i) { id } }', { i: item.id });
    const r = await gql(
      'query ($b: [ID!], $f: ISO8601DateTime, $i: [ID!]) { boards(ids: $b) { activity_logs(from: $f, item_ids: $i) { event entity user_id created_at data } } }',
      { b: [b.id], f: from, i: [item.id] },
    );
    const logs = r.body.data.boards[0].activity_logs as Json[];
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ event: 'archive_pulse', entity: 'pulse', user_id: sim.state.users[0]!.id });
    expect(logs[0]!.created_at).toMatch(/^\d{17}$/);
    expect(JSON.parse(logs[0]!.data)).toMatchObject({ board_id: Number(b.id), pulse_id: Number(item.id) });
    const before = await gql('query ($b: [ID!], $t: ISO8601DateTime) { boards(ids: $b) { activity_logs(to: $t, limit: 1000) { event } } }', {
      b: [b.id],
      t: from,
    });
    expect((before.body.data.boards[0].activity_logs as Json[]).every((e) => e.event === 'create_pulse')).toBe(true);
  });
});
