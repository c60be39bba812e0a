/**
 * The generic GraphQL simulator on a schema it has no code for: our own tracker API
 * (test/fixtures/factory/tickets.graphql). Documents validated against the schema, errors in
 * GraphQL's {errors: [...]} shape with the sidecar's codes and statuses, deterministic seeded
 * records, Relay connections (nodes, edges, pageInfo), a record by id, create/update/archive
 * mutations that persist, the filters, ordering and archived records the sidecar declares, auth
 * and rate limits, the OAuth refresh grant. Last, `switchboard simulate --graphql` as a command,
 * and the manifest `switchboard init --from-graphql` scaffolds from the same schema run unedited
 * against it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseSidecar, startGraphqlSimulator, type GraphqlSimulator, type Sidecar } from '../../src/simulator/index.ts';
import { runSwitchboard, startSwitchboard } from '../helpers/process.ts';

type Rec = Record<string, any>;
const TICKETS = new URL('../fixtures/factory/tickets.graphql', import.meta.url).pathname;

async function post(
  sim: GraphqlSimulator,
  query: string,
  variables: Rec = {},
  headers: Record<string, string> = { authorization: 'tok' },
  path = '/graphql',
): Promise<{ status: number; headers: Headers; body: Rec }> {
  const res = await fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Rec };
}

const SIDECAR: Sidecar = {
  records: 7,
  pagination: { default_limit: 3, max_limit: 5 },
  graphql: { filters: ['id', 'updatedAt', 'board.id'], archived: { field: 'archivedAt', argument: 'includeArchived' } },
};

describe('a schema it has no code for', () => {
  let sim: GraphqlSimulator;
  beforeAll(async () => {
    sim = await startGraphqlSimulator({ schema: TICKETS, sidecar: SIDECAR, seed: 4 });
  });
  afterAll(() => sim.close());
  beforeEach(() => sim.reset());

  it('seeds each listed object type with the same records for the same seed', async () => {
    expect([...sim.resources.keys()].sort()).toEqual(['Board', 'Member', 'Ticket']);
    const q = '{ tickets(first: 5) { nodes { id title status points board { id title } owner { id } createdAt } } }';
    const a = (await post(sim, q)).body;
    const twin = await startGraphqlSimulator({ schema: TICKETS, sidecar: SIDECAR, seed: 4 });
    const other = await startGraphqlSimulator({ schema: TICKETS, sidecar: SIDECAR, seed: 5 });
    try {
      expect((await post(twin, q)).body).toEqual(a);
      expect((await post(other, q)).body['data']['tickets']['nodes'][0]['id']).not.toBe(a['data']['tickets']['nodes'][0]['id']);
    } finally {
      await twin.close();
      await other.close();
    }
    const first = a['data']['tickets']['nodes'][0];
    expect(first).toMatchObject({ title: 'Ticket title 1', status: 'open', points: 1 });
    // A related record is one of the seeded boards.
    expect(sim.resources.get('Board')?.records.has(first['board']['id'])).toBe(true);
  });

  it('refuses a document the schema does not allow, with a 400 and every problem in errors', async () => {
    const r = await post(sim, '{ tickets { nodes { id nope } } nothing }');
    expect(r.status).toBe(400);
    expect(r.body['errors'].map((e: Rec) => e['message'])).toEqual([
      expect.stringContaining('Cannot query field "nope"'),
      expect.stringContaining('Cannot query field "nothing"'),
    ]);
    expect(r.body['errors'][0]['extensions']).toEqual({ code: 'invalid' });
    expect((await post(sim, '{ tickets { ')).status).toBe(400);
    const badVar = await post(sim, 'query ($n: Int) { tickets(first: $n) { nodes { id } } }', { n: 'five' });
    expect(badVar.status).toBe(400);
    expect(badVar.body['errors'][0]['message']).toMatch(/\$n/);
    const notJson = await fetch(`${sim.url}/graphql`, { method: 'POST', headers: { authorization: 'tok' }, body: 'query' });
    expect(notJson.status).toBe(400);
    expect((await fetch(`${sim.url}/graphql`, { headers: { authorization: 'tok' } })).status).toBe(405);
    expect((await post(sim, '{ me { id } }', {}, { authorization: 'tok' }, '/other')).status).toBe(404);
    // The schema's deprecated fields are still served, as the vendor does.
    expect((await post(sim, '{ ticket(id: "x") { legacyRank } }')).status).toBe(200);
  });

  it('pages a Relay connection with first/after: nodes, edges with cursors, pageInfo; the page size is capped by the sidecar', async () => {
    const q =
      'query ($after: String, $first: Int) { tickets(first: $first, after: $after) { nodes { id } edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage endCursor } } }';
    const ids: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const t: Rec = (await post(sim, q, { after, first: 2 })).body['data']['tickets'];
      expect(t['edges'].map((e: Rec) => e['node']['id'])).toEqual(t['nodes'].map((n: Rec) => n['id']));
      expect(t['pageInfo']['endCursor']).toBe(t['edges'].at(-1)['cursor']);
      expect(t['pageInfo']['hasPreviousPage']).toBe(pages > 0);
      ids.push(...t['nodes'].map((n: Rec) => n['id']));
      pages++;
      if (!t['pageInfo']['hasNextPage']) break;
      after = t['pageInfo']['endCursor'];
    }
    expect(ids).toEqual([...(sim.resources.get('Ticket')?.records.keys() ?? [])]);
    expect(pages).toBe(4);
    expect((await post(sim, q, { first: 100 })).body['data']['tickets']['nodes']).toHaveLength(5);
    expect((await post(sim, q, {})).body['data']['tickets']['nodes']).toHaveLength(3);
    const bad = await post(sim, q, { after: 'not-a-cursor' });
    expect(bad.body['errors'][0]['message']).toMatch(/not a cursor/);
    const backward = await post(sim, '{ tickets(last: 2) { nodes { id } } }');
    expect(backward.body['errors'][0]['message']).toMatch(/pages forward only/);
  });

  it('answers a record by id, a list filtered by ids, and the viewer; a missing id is an error beside null data', async () => {
    const [id] = [...(sim.resources.get('Ticket')?.records.keys() ?? [])];
    expect((await post(sim, 'query ($id: String!) { ticket(id: $id) { id title } }', { id })).body).toEqual({
      data: { ticket: { id, title: 'Ticket title 1' } },
    });
    const boards = [...(sim.resources.get('Board')?.records.keys() ?? [])];
    expect((await post(sim, 'query ($ids: [ID!]) { boards(ids: $ids) { id } }', { ids: [boards[2]] })).body['data']['boards']).toEqual([{ id: boards[2] }]);
    expect((await post(sim, '{ me { id } }')).body['data']['me']['id']).toBe([...(sim.resources.get('Member')?.records.keys() ?? [])][0]);
    const missing = await post(sim, '{ ticket(id: "nope") { id } }');
    expect(missing.status).toBe(200);
    expect(missing.body).toEqual({ data: null, errors: [{ message: 'Ticket not found: nope', path: ['ticket'], extensions: { code: 'not_found' } }] });
  });

  it('creates and updates through mutations: the input sets fields, <field>Id links a record, the payload carries the record', async () => {
    const board = [...(sim.resources.get('Board')?.records.keys() ?? [])][1] as string;
    const owner = [...(sim.resources.get('Member')?.records.keys() ?? [])][3] as string;
    const made = await post(
      sim,
      'mutation ($i: TicketCreateInput!) { ticketCreate(input: $i) { success lastSyncId ticket { id title notes status points board { id } owner { id } createdAt updatedAt archivedAt } } }',
      {
        i: { title: 'Write the docs', notes: 'All of them', status: 'open', boardId: board, ownerId: owner },
      },
    );
    const t = made.body['data']['ticketCreate'];
    expect(t).toMatchObject({
      success: true,
      lastSyncId: expect.any(Number),
      ticket: { title: 'Write the docs', notes: 'All of them', status: 'open', board: { id: board }, owner: { id: owner }, archivedAt: null },
    });
    expect(Date.parse(t['ticket']['createdAt'])).toBeGreaterThan(Date.UTC(2026, 5));
    const id = t['ticket']['id'] as string;
    const upd = await post(
      sim,
      'mutation ($id: String!, $i: TicketUpdateInput!) { ticketUpdate(id: $id, input: $i) { ticket { id title notes status owner { id } updatedAt } } }',
      { id, i: { status: 'done', ownerId: null } },
    );
    expect(upd.body['data']['ticketUpdate']['ticket']).toMatchObject({ id, title: 'Write the docs', notes: 'All of them', status: 'done', owner: null });
    expect((await post(sim, 'query ($id: String!) { ticket(id: $id) { status } }', { id })).body['data']['ticket']).toEqual({ status: 'done' });
    // A record's connection lists the records pointing back at it.
    const onBoard = await post(sim, 'query { boards { id tickets(first: 50) { nodes { id } } } }');
    const mine = onBoard.body['data']['boards'].find((b: Rec) => b['id'] === board);
    expect(mine['tickets']['nodes'].map((n: Rec) => n['id'])).toContain(id);
    // A link to a record that does not exist, or an update of one, is refused.
    const dangling = await post(sim, 'mutation ($i: TicketCreateInput!) { ticketCreate(input: $i) { success } }', { i: { title: 'x', boardId: 'no-board' } });
    expect(dangling.body['errors'][0]).toMatchObject({ message: 'Board not found: no-board', extensions: { code: 'not_found' } });
    const ghost = await post(sim, 'mutation { ticketUpdate(id: "ghost", input: { title: "x" }) { success } }');
    expect(ghost.body['errors'][0]['message']).toBe('Ticket not found: ghost');
  });

  it('filters on the fields the sidecar declares (comparators, related ids, and/or), and refuses the others by name', async () => {
    const all = [...(sim.resources.get('Ticket')?.records.values() ?? [])].filter((r) => r['archivedAt'] === null);
    const since = all.map((r) => r['updatedAt'] as string).sort()[3] as string;
    const q = 'query ($f: TicketFilter) { tickets(filter: $f, first: 50) { nodes { id updatedAt board { id } } } }';
    const newer = (await post(sim, q, { f: { updatedAt: { gt: since } } })).body['data']['tickets']['nodes'] as Rec[];
    expect(newer.map((r) => r['id']).sort()).toEqual(
      all
        .filter((r) => (r['updatedAt'] as string) > since)
        .map((r) => r['id'])
        .sort(),
    );
    const board = (all[0] as Rec)['board'].__ref as string;
    const both = (await post(sim, q, { f: { and: [{ updatedAt: { gt: since } }, { board: { id: { eq: board } } }] } })).body['data']['tickets'][
      'nodes'
    ] as Rec[];
    expect(both.every((r) => r['board']['id'] === board && r['updatedAt'] > since)).toBe(true);
    const either = (await post(sim, q, { f: { or: [{ id: { eq: (all[0] as Rec)['id'] } }, { id: { eq: (all[1] as Rec)['id'] } }] } })).body['data']['tickets'][
      'nodes'
    ] as Rec[];
    expect(either.map((r) => r['id']).sort()).toEqual([(all[0] as Rec)['id'], (all[1] as Rec)['id']].sort());
    const refused = await post(sim, q, { f: { title: { contains: 'x' } } });
    expect(refused.body['errors'][0]['message']).toMatch(/does not filter on title .*graphql\.filters/);
  });

  it('archives with <type>Archive and <type>Delete: gone from lists unless includeArchived, orderBy sorts', async () => {
    const [a, b] = [...(sim.resources.get('Ticket')?.records.keys() ?? [])] as [string, string];
    expect(
      (await post(sim, 'mutation ($id: String!) { ticketArchive(id: $id) { success ticket { archivedAt } } }', { id: a })).body['data']['ticketArchive'][
        'ticket'
      ]['archivedAt'],
    ).toEqual(expect.any(String));
    await post(sim, 'mutation ($id: String!) { ticketDelete(id: $id) { success } }', { id: b });
    // Every page (the sidecar caps pages at 5).
    const ids = async (includeArchived: boolean): Promise<string[]> => {
      const out: string[] = [];
      let after: string | null = null;
      for (;;) {
        const t: Rec = (
          await post(
            sim,
            'query ($x: Boolean, $after: String) { tickets(first: 5, after: $after, includeArchived: $x, orderBy: updatedAt) { nodes { id } pageInfo { hasNextPage endCursor } } }',
            { x: includeArchived, after },
          )
        ).body['data']['tickets'];
        out.push(...(t['nodes'] as Rec[]).map((r) => r['id'] as string));
        if (!t['pageInfo']['hasNextPage']) return out;
        after = t['pageInfo']['endCursor'];
      }
    };
    expect(await ids(false)).not.toContain(a);
    expect(await ids(false)).not.toContain(b);
    const withArchived = await ids(true);
    expect(withArchived).toContain(a);
    // Ascending updatedAt: the two just archived come last.
    expect(withArchived.slice(-2)).toEqual([a, b]);
  });
});

describe('the sidecar', () => {
  it('checks tokens in the header it names, with or without a scheme word; renames codes, shapes error entries, sets statuses and messages', async () => {
    const sim = await startGraphqlSimulator({
      schema: TICKETS,
      sidecar: {
        auth: { tokens: ['k1'], header: 'X-Api-Key', message: 'Bad key' },
        error: { codes: { unauthorized: 'AUTH', not_found: 'MISSING', invalid: 'BAD_DOC' } },
        graphql: {
          path: '/api',
          status: { unauthorized: 403, not_found: 404 },
          error: { message: '{{message}}', extensions: { code: '{{code}}', status: '{{status}}' } },
          messages: { not_found: 'No {{type}} {{id}}' },
        },
      },
    });
    try {
      expect((await post(sim, '{ me { id } }', {}, { 'x-api-key': 'k1' }, '/api')).status).toBe(200);
      expect((await post(sim, '{ me { id } }', {}, { 'x-api-key': 'Bearer k1' }, '/api')).status).toBe(200);
      const refused = await post(sim, '{ me { id } }', {}, { 'x-api-key': 'k2' }, '/api');
      expect(refused).toMatchObject({ status: 403, body: { errors: [{ message: 'Bad key', extensions: { code: 'AUTH', status: 403 } }] } });
      expect((await post(sim, '{ me { id } }', {}, { authorization: 'k1' }, '/api')).status).toBe(403);
      const missing = await post(sim, '{ ticket(id: "t9") { id } }', {}, { 'x-api-key': 'k1' }, '/api');
      expect(missing).toMatchObject({ status: 404, body: { data: null, errors: [{ message: 'No Ticket t9', extensions: { code: 'MISSING', status: 404 } }] } });
      expect((await post(sim, '{ nope }', {}, { 'x-api-key': 'k1' }, '/api')).body['errors'][0]['extensions']).toEqual({ code: 'BAD_DOC', status: 400 });
      // A revoked token is refused, even when none is left.
      sim.tokens.delete('k1');
      expect((await post(sim, '{ me { id } }', {}, { 'x-api-key': 'k1' }, '/api')).status).toBe(403);
    } finally {
      await sim.close();
    }
  });

  it('rate limits with the headers it names', async () => {
    const sim = await startGraphqlSimulator({
      schema: TICKETS,
      sidecar: { rate_limit: { limit: 2, window_seconds: 60, headers: { limit: 'X-Limit', remaining: 'X-Remaining', reset: 'X-Reset' }, reset: 'unix_ms' } },
    });
    try {
      const first = await post(sim, '{ me { id } }');
      expect(first.headers.get('x-limit')).toBe('2');
      expect(first.headers.get('x-remaining')).toBe('1');
      expect(Number(first.headers.get('x-reset'))).toBeGreaterThan(Date.now());
      await post(sim, '{ me { id } }');
      const over = await post(sim, '{ me { id } }');
      expect(over.status).toBe(429);
      expect(over.body['errors'][0]['extensions']['code']).toBe('rate_limited');
      sim.resetRateLimit();
      expect((await post(sim, '{ me { id } }')).status).toBe(200);
    } finally {
      await sim.close();
    }
  });

  it('words errors as graphql-ruby, shapes entries per code, wraps answers in an envelope, derives declared fields, takes variables as JSON text', async () => {
    const sim = await startGraphqlSimulator({
      schema: TICKETS,
      sidecar: {
        error: { codes: { bad_request: 'BAD', rate_limited: 'SLOW' } },
        rate_limit: { limit: 4, window_seconds: 60, sliding: true },
        graphql: {
          dialect: 'graphql-ruby',
          status: { invalid: 200, bad_request: 422 },
          errors: { rate_limited: { message: '{{message}}', extensions: { code: '{{code}}', retry_in_seconds: '{{retry_in_seconds}}' } } },
          messages: { bad_request: 'No query string was present', rate_limited: 'Slow down' },
          envelope: { extensions: { request_id: '{{request_id}}' }, account_id: '{{account_id}}' },
          fields: { 'Member.email': 'm-{{id}}@{{domain}}', 'Member.name': '{{account_id}}' },
        },
      },
      vars: () => ({ account_id: 7, domain: 'example.test' }),
    });
    try {
      // Fields declared from the record and the code's variables ("{{name}}" alone keeps the value's type).
      const me = (await post(sim, '{ me { id email name } }')).body['data']['me'];
      expect(me).toEqual({ id: me.id, email: `m-${me.id}@example.test`, name: '7' });
      const unknown = await post(sim, '{ me { id shoe } }');
      expect(unknown.status).toBe(200);
      expect(unknown.body['errors'][0]).toMatchObject({
        message: "Field 'shoe' doesn't exist on type 'Member'",
        extensions: { code: 'undefinedField', typeName: 'Member', fieldName: 'shoe' },
      });
      expect(unknown.body).toMatchObject({ account_id: 7, extensions: { request_id: expect.any(String) } });
      expect((await post(sim, '{ me { id ) }')).body['errors'][0]['message']).toBe('Parse error on ")" (RPAREN) at [1, 11]');
      const res = await fetch(`${sim.url}/graphql`, {
        method: 'POST',
        headers: { authorization: 'tok' },
        body: JSON.stringify({ query: 'query ($n: Int) { tickets(first: $n) { nodes { id } } }', variables: '{"n": 2}' }),
      });
      expect(((await res.json()) as Rec)['data']['tickets']['nodes']).toHaveLength(2);
      // A sliding window: the first request of the window ages out 40 s from now.
      sim.clock.advance(20_000);
      const limited = await post(sim, '{ me { id } }');
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('40');
      expect(limited.body['errors']).toEqual([{ message: 'Slow down', extensions: { code: 'SLOW', retry_in_seconds: 40 } }]);
      sim.clock.advance(40_000);
      const empty = await fetch(`${sim.url}/graphql`, { method: 'POST', headers: { authorization: 'tok' }, body: '{}' });
      expect(empty.status).toBe(422);
      expect(((await empty.json()) as Rec)['errors'][0]).toEqual({ message: 'No query string was present', extensions: { code: 'BAD' } });
    } finally {
      await sim.close();
    }
  });

  it('meters query cost against a budget, answers the API version asked for, and runs code-given resolvers with that context', async () => {
    const sim = await startGraphqlSimulator({
      schema: TICKETS,
      sidecar: {
        graphql: {
          versions: { header: 'API-Version', served: { '2026-01': 'current', '2025-10': 'maintenance' }, default: '2026-01' },
          complexity: {
            budget: 30,
            window_seconds: 60,
            max_query: 20,
            sizes: { boards: 5 },
            headers: { 'X-Budget': '{{remaining}}/{{budget}} in {{reset}}s' },
          },
        },
      },
      resolvers: { 'Query.me': (_s, _a, ctx) => ({ id: ctx.version, name: `cost ${String(ctx.complexity?.query)}, ${String(ctx.complexity?.after)} left` }) },
    });
    try {
      // boards without ids: 1 + 5 (its size) × 2 fields; with two ids: 1 + 2 × 2.
      const q = '{ boards { id title } }';
      expect((await post(sim, q)).headers.get('x-budget')).toBe('19/30 in 60s');
      expect((await post(sim, '{ boards(ids: ["a", "b"]) { id title } }')).headers.get('x-budget')).toBe('14/30 in 60s');
      const me = await post(sim, '{ me { id name } }', {}, { authorization: 'tok', 'api-version': '2025-10' });
      expect(me.body['data']['me']).toEqual({ id: '2025-10', name: 'cost 3, 11 left' });
      expect((await post(sim, '{ me { id } }', {}, { authorization: 'tok', 'api-version': '1999-01' })).body['data']['me']['id']).toBe('2026-01');
      const exhausted = await post(sim, q);
      expect(exhausted.status).toBe(429);
      expect(exhausted.headers.get('retry-after')).toBe('60');
      expect(exhausted.body['errors'][0]['extensions']['code']).toBe('complexity_exhausted');
      const tooBig = await post(sim, '{ a: boards { id title } b: boards { id title } }');
      expect(tooBig.body['errors'][0]).toMatchObject({
        message: 'Query has complexity of 22, which exceeds max complexity of 20',
        extensions: { code: 'too_complex' },
      });
      sim.clock.advance(60_000);
      expect((await post(sim, q)).status).toBe(200);
      expect(sim.complexity?.remaining()).toBe(19);
    } finally {
      await sim.close();
    }
  });

  it('pages by cursor over snapshots: the next-page field, a cursor fetched again, rows gone since left out, expiry and bad cursors', async () => {
    const rows: Rec[] = [1, 2, 3, 4, 5].map((n) => ({ id: `r${n}`, state: 'active' }));
    const sim = await startGraphqlSimulator({
      schema:
        'type Row { id: ID! }\ntype RowsPage { cursor: String rows: [Row!]! }\ntype Query { rows(limit: Int!, cursor: String): RowsPage! next_rows(cursor: String!, limit: Int!): RowsPage! }',
      sidecar: {
        error: { codes: { invalid_cursor: 'BAD_CURSOR', expired_cursor: 'OLD_CURSOR' } },
        graphql: { cursor_pages: { next: 'next_rows', ttl_seconds: 60, max_limit: 3, skip: { field: 'state', values: ['gone'] } } },
      },
      resolvers: {
        'Query.rows': (_s, a, ctx) => {
          const p = ctx.cursorPage(rows, a['limit'] as number, a['cursor'] as string | undefined);
          return { cursor: p.cursor, rows: p.rows };
        },
      },
    });
    try {
      const first = (await post(sim, '{ rows(limit: 2) { cursor rows { id } } }')).body['data']['rows'];
      expect(first.rows).toEqual([{ id: 'r1' }, { id: 'r2' }]);
      const next = 'query ($c: String!) { next_rows(cursor: $c, limit: 2) { cursor rows { id } } }';
      rows[3]!['state'] = 'gone';
      const second = (await post(sim, next, { c: first.cursor })).body['data']['next_rows'];
      expect(second.rows).toEqual([{ id: 'r3' }, { id: 'r5' }]);
      expect(second.cursor).toBeNull();
      expect((await post(sim, next, { c: first.cursor })).body['data']['next_rows']).toEqual(second);
      expect((await post(sim, '{ rows(limit: 9) { cursor } }')).body['errors'][0]).toMatchObject({
        message: 'limit must be between 1 and 3 (got 9)',
        extensions: { code: 'invalid' },
      });
      expect((await post(sim, next, { c: 'bm9wZQ' })).body['errors'][0]).toMatchObject({ message: 'Invalid cursor', extensions: { code: 'BAD_CURSOR' } });
      sim.clock.advance(61_000);
      expect((await post(sim, next, { c: first.cursor })).body['errors'][0]['extensions']['code']).toBe('OLD_CURSOR');
    } finally {
      await sim.close();
    }
  });

  it('runs an OAuth flow whose refresh tokens are used once', async () => {
    const sim = await startGraphqlSimulator({
      schema: TICKETS,
      sidecar: { auth: { tokens: [] }, oauth: { authorize_path: '/oauth/authorize', token_path: '/oauth/token', refresh_tokens: true } },
    });
    try {
      const consent = await fetch(`${sim.url}/oauth/authorize?client_id=sim_client&redirect_uri=https://app.example/cb&state=s`, { redirect: 'manual' });
      const code = new URL(consent.headers.get('location') as string).searchParams.get('code') as string;
      const token = async (params: Record<string, string>): Promise<{ status: number; body: Rec }> => {
        const r = await fetch(`${sim.url}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ client_id: 'sim_client', client_secret: 'sim_secret', ...params }),
        });
        return { status: r.status, body: (await r.json()) as Rec };
      };
      const issued = await token({ grant_type: 'authorization_code', code, redirect_uri: 'https://app.example/cb' });
      expect(issued.body).toMatchObject({ access_token: expect.any(String), refresh_token: expect.any(String), token_type: 'Bearer' });
      expect((await post(sim, '{ me { id } }', {}, { authorization: `Bearer ${issued.body['access_token']}` })).status).toBe(200);
      const renewed = await token({ grant_type: 'refresh_token', refresh_token: issued.body['refresh_token'] });
      expect(renewed.status).toBe(200);
      expect(renewed.body['refresh_token']).not.toBe(issued.body['refresh_token']);
      expect((await post(sim, '{ me { id } }', {}, { authorization: `Bearer ${renewed.body['access_token']}` })).status).toBe(200);
      expect((await token({ grant_type: 'refresh_token', refresh_token: issued.body['refresh_token'] })).body['error']).toBe('invalid_grant');
    } finally {
      await sim.close();
    }
  });

  it('refuses unknown or incomplete graphql keys, naming them', () => {
    expect(() => parseSidecar('graphql: { filter: [a], path: api }')).toThrow(/additional properties \(filter\)|must match pattern/);
    expect(() => parseSidecar('graphql: { filters: ["a b"] }')).toThrow(/invalid simulator sidecar/);
    expect(parseSidecar('graphql: { filters: [updatedAt, team.id], status: { rate_limited: 400 } }').graphql?.filters).toEqual(['updatedAt', 'team.id']);
    expect(() => parseSidecar('graphql: { complexity: { window_seconds: 60 } }')).toThrow(/complexity must have required property 'budget'/);
    expect(() => parseSidecar('graphql: { cursor_pages: { ttl: 60 } }')).toThrow(/additional properties \(ttl\)/);
    expect(() => parseSidecar('graphql: { versions: { header: API-Version, served: {} } }')).toThrow(/required property 'default'/);
    expect(() => parseSidecar('graphql: { fields: { url: x } }')).toThrow(/property name/);
    expect(() => parseSidecar('graphql: { dialect: graphql-php }')).toThrow(/allowed values/);
    expect(parseSidecar('rate_limit: { limit: 5, window_seconds: 60, sliding: true }').rate_limit?.sliding).toBe(true);
  });
});

describe('switchboard simulate --graphql, and init from the same schema', () => {
  let stop: (() => Promise<number | null>) | undefined;
  let url: string;
  let printed: { base_url: string; endpoint: string; resources: Record<string, { records: number }> };
  beforeAll(async () => {
    const run = await startSwitchboard(['simulate', '--graphql', TICKETS, '--port', '0', '--seed', '2'], /^}$/, { deadlineMs: 60_000 });
    stop = run.stop;
    printed = JSON.parse(run.lines.join('\n')) as typeof printed;
    url = printed.base_url;
  }, 90_000);
  afterAll(async () => {
    await stop?.();
  });

  it('prints where it listens and what it seeded', () => {
    expect(printed.endpoint).toBe(`${url}/graphql`);
    expect(printed.resources).toEqual({ Ticket: { records: 5 }, Member: { records: 5 }, Board: { records: 5 } });
  });

  it('the scaffolded manifest lists, gets, creates and updates against it with no edit', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sb-init-gql-')), 'connectors');
    const init = await runSwitchboard([
      'init',
      'tracker',
      '--from-graphql',
      TICKETS,
      '--endpoint',
      'https://tracker.example/graphql',
      '--entities',
      'tickets',
      '--out',
      out,
    ]);
    expect(init.code, init.stderr).toBe(0);
    const exec = async (action: string, params: Rec, extra: string[] = []): Promise<Rec> => {
      const r = await runSwitchboard(
        ['exec', 'tracker', 'tickets', action, '--params', JSON.stringify(params), '--base-url', url, '--connectors', out, ...extra],
        { SWITCHBOARD_CREDENTIALS: JSON.stringify({ token: 't' }) },
      );
      expect(r.stderr).toBe('');
      return JSON.parse(r.stdout) as Rec;
    };
    const board = (await (
      await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { authorization: 't', 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ boards { id } }' }),
      })
    ).json()) as Rec;
    const made = (await exec('create', { title: 'From the scaffold', board_id: board['data']['boards'][0]['id'] }))['data'];
    expect(made).toMatchObject({ title: 'From the scaffold', board: { id: board['data']['boards'][0]['id'] } });
    // The deprecated field is not asked for.
    expect(made).not.toHaveProperty('legacyRank');
    expect((await exec('update', { id: made['id'], status: 'done' }))['data']).toMatchObject({ id: made['id'], status: 'done' });
    expect((await exec('get', { id: made['id'] }))['data']).toMatchObject({ id: made['id'], title: 'From the scaffold', status: 'done' });
    const all = await exec('list', { first: 2 }, ['--all-pages']);
    expect((all['data'] as Rec[]).map((r) => r['id'])).toContain(made['id']);
    expect(all['data']).toHaveLength(6);
  }, 180_000);

  it('refuses a missing schema, both or neither of --openapi and --graphql', async () => {
    const missing = await runSwitchboard(['simulate', '--graphql', '/nonexistent/schema.graphql', '--port', '0']);
    expect(missing.stderr).toMatch(/No such file: \/nonexistent\/schema.graphql/);
    const neither = await runSwitchboard(['simulate', '--port', '0']);
    expect(neither.stderr).toMatch(/Give one of --openapi <file> or --graphql <sdl>/);
    const notSdl = await runSwitchboard(['simulate', '--graphql', new URL('../../connectors/linear/simulator.yaml', import.meta.url).pathname, '--port', '0']);
    expect(notSdl.stderr).toMatch(/Cannot read the GraphQL schema/);
  });
});
