/**
 * The Monday connector end to end (see monday.test.ts): errors and limits, a board at size, connected
 * columns, archive and delete, groups, columns, subitems, activity logs, retried mutations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type RecordEnvelope } from '../../src/index.ts';
import { startMondaySimulator, type MondaySimulator } from '../../connectors/monday/simulator/index.ts';
import { failure } from '../helpers/errors.ts';
import { board0, expectValid, get, list, monday, orderedItems, runtime, sent, sim, useMondaySimulator, write, type Rec } from './monday-helpers.ts';

useMondaySimulator();

describe('monday errors and limits', () => {
  it('complexity budget exhausted (2026-10 shape): upstream_rate_limited with retry_after from retry_in_seconds', async () => {
    sim.complexity.budget = 10;
    const err = await failure(list('tags'));
    expect(err.code).toBe('upstream_rate_limited');
    expect(err.message).toContain('Complexity budget exhausted');
    // 60 s exceeds the retry policy's 30 s cap, so the error is returned at once, with the wait.
    expect(err.details['retry_after_ms']).toBe(60_000);
    expect(sim.requests).toHaveLength(1);
    const body = err.details['upstream_body'] as { errors: { extensions: Rec }[] };
    expect(body.errors[0]!.extensions).toEqual({ code: 'COMPLEXITY_BUDGET_EXHAUSTED', retry_in_seconds: 60 });
  });

  it('complexity budget exhausted: the interpreter waits retry_in_seconds and the retry succeeds', async () => {
    await list('tags');
    const cost = 10_000_000 - sim.complexity.remaining();
    sim.complexity.reset();
    sim.complexity.budget = cost + 1;
    sim.complexity.windowSeconds = 1;
    sim.reset();
    await list('tags');
    const started = Date.now();
    const second = await list('tags');
    expect(second.data).toHaveLength(sim.state.tags.length);
    expect(sim.requests).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
  });

  it('an API version monday no longer serves is refused before anything is sent', async () => {
    const err = await failure(Promise.resolve().then(() => runtime({ api_version: '2025-04' })));
    expect(err.code).toBe('invalid_params');
    expect(err.message).toBe('Invalid config api_version for monday: must be one of: 2026-07, 2026-10');
    expect(sim.requests).toHaveLength(0);
  });

  it('complexity budget exhausted on 2026-07 (maintenance) is upstream_rate_limited too', async () => {
    sim.complexity.budget = 10;
    const v7 = await failure(runtime({ api_version: '2026-07' }).execute('tags', 'list'));
    expect(v7.code).toBe('upstream_rate_limited');
    expect(v7.details['retry_after_ms']).toBe(60_000);
    expect(sim.requests[0]!.headers['api-version']).toBe('2026-07');
  });

  it('any other GraphQL error in a 200 body is upstream_error with the upstream message', async () => {
    sim.inject({
      path: '/v2',
      status: 200,
      json: { errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }], account_id: 1 },
    });
    const err = await failure(list('tags'));
    expect(err.code).toBe('upstream_error');
    expect(err.message).toBe('monday: Internal server error');
  });

  it('transport-level 429 with Retry-After is retried', async () => {
    sim.inject({ path: '/v2', status: 429, headers: { 'Retry-After': '0' }, json: { errors: [{ message: 'Rate Limit Exceeded' }] } });
    const page = await list('tags');
    expect(page.data).toHaveLength(sim.state.tags.length);
    expect(sim.requests).toHaveLength(2);
  });
});

describe('monday at size', () => {
  let big: MondaySimulator;
  beforeAll(async () => {
    big = await startMondaySimulator({ size: 20_000, seed: 7 });
  });
  afterAll(() => big.close());

  it('lists a 8,000-item board at 500 per page, every item once', async () => {
    const c = connect('monday', { credentials: { api_key: big.apiKey }, baseUrl: big.url });
    const board = big.state.boards[0]!;
    let count = 0;
    const seen = new Set<string>();
    for await (const page of c.pages('items', { board_id: board.id, limit: 500 })) {
      count += page.data.length;
      for (const i of page.data) seen.add(i.id);
    }
    expect(count).toBe(8_000);
    expect(seen.size).toBe(8_000);
    expect(big.requests).toHaveLength(16);
  });
});

describe('monday connected columns (2026-10: text is empty, display_value carries the value)', () => {
  it('items.list and items.get return display_value for mirror, connect-boards, dependency and formula columns', async () => {
    const page = await list('items', { board_id: sim.state.boards[1]!.id, limit: 20 });
    expectValid('items', page.data);
    const linkedItem = page.data.find((i) => (i.column_values as Rec[]).some((c) => c.id === 'connect_boards' && (c.linked_item_ids as string[]).length > 0))!;
    const cells = Object.fromEntries((linkedItem.column_values as Rec[]).map((c) => [c.id, c]));
    const target = sim.state.items.get((cells['connect_boards']!.linked_item_ids as string[])[0]!)!;
    expect(cells['connect_boards']).toMatchObject({ type: 'board_relation', text: null, display_value: target.name });
    expect(cells['mirror']).toMatchObject({ type: 'mirror', text: null, display_value: target.cells['status']!.text });
    const seeded = sim.state.items.get(linkedItem.id as string)!;
    const hours = seeded.cells['numbers']!.text;
    expect(cells['formula']).toMatchObject({ type: 'formula', display_value: hours === '' ? '' : String(Math.round((Number(hours) / 8) * 100) / 100) });
    const withDependency = page.data.find((i) => (i.column_values as Rec[]).some((c) => c.id === 'dependency' && (c.linked_item_ids as string[]).length > 0))!;
    const dep = (withDependency.column_values as Rec[]).find((c) => c.id === 'dependency')!;
    expect(dep.display_value).toBe(sim.state.items.get((dep.linked_item_ids as string[])[0]!)!.name);
    const got = await get('items', { id: linkedItem.id as string });
    expect((got.data.column_values as Rec[]).find((c) => c.id === 'mirror')).toEqual(cells['mirror']);
  });
});

describe('monday items archive and delete, updates edit and delete (through update)', () => {
  it('items.update state archived archives the item: gone from the board list, get shows state archived', async () => {
    const s = orderedItems()[4]!;
    const archived = await write('items', 'update', { id: s.id, board_id: s.board_id, state: 'archived' });
    expectValid('items', [archived.data]);
    expect(archived.data).toMatchObject({ id: s.id, state: 'archived' });
    expect(sent()[0]!.query).toContain('archive_item(item_id: $item_id)');
    expect(sent()[0]!.query).not.toContain('change_multiple_column_values');
    expect((await get('items', { id: s.id })).data.state).toBe('archived');
    const ids: string[] = [];
    for await (const i of monday().records('items', { board_id: s.board_id, limit: 500 })) ids.push(i.id as string);
    expect(ids).not.toContain(s.id);
  });

  it('items.update state deleted deletes the item (get is then upstream_not_found); values and state together run in order', async () => {
    const s = orderedItems()[6]!;
    const deleted = await write('items', 'update', { id: s.id, board_id: s.board_id, state: 'deleted' });
    expect(deleted.data).toMatchObject({ id: s.id, state: 'deleted' });
    expect((await failure(get('items', { id: s.id }))).code).toBe('upstream_not_found');
    const t = orderedItems()[7]!;
    const both = await write('items', 'update', { id: t.id, board_id: t.board_id, column_values: { text: 'Last words' }, state: 'archived' });
    expect(both.data.state).toBe('archived');
    expect(sim.state.items.get(t.id)!.cells['text']!.text).toBe('Last words');
  });

  it('updates.update edits the body, and with state deleted deletes the update', async () => {
    const u = sim.state.updates[3]!;
    const edited = await write('updates', 'update', { id: u.id, body: '<p>Edited</p>' });
    expectValid('updates', [edited.data]);
    expect(edited.data).toMatchObject({ id: u.id, body: '<p>Edited</p>', text_body: 'Edited' });
    expect((await get('updates', { id: u.id })).data.body).toBe('<p>Edited</p>');
    const removed = await write('updates', 'update', { id: u.id, state: 'deleted' });
    expect(removed.data.id).toBe(u.id);
    expect((await failure(get('updates', { id: u.id }))).code).toBe('upstream_not_found');
    expect((await failure(write('updates', 'update', { id: '12', body: 'x' }))).code).toBe('upstream_not_found');
  });

  it('updates.update with only an id is invalid_params before anything is sent (requires_any: body or state)', async () => {
    const u = sim.state.updates[4]!;
    const e = await failure(write('updates', 'update', { id: u.id }));
    expect([e.code, e.status]).toEqual(['invalid_params', 400]);
    expect(e.errors).toEqual([{ path: '/', message: 'needs at least one of: body, state' }]);
    expect(e.message).toContain('updates.update');
    expect(sent()).toEqual([]);
    expect(sim.state.updates[4]!.body).toBe(u.body);
  });
});

describe('monday groups, columns, subitems, activity logs, me', () => {
  it("groups: list a board's groups; create one, which then appears in the list", async () => {
    const page = await list('groups', { board_id: board0().id });
    expectValid('groups', page.data);
    expect(page.data.map((g) => g.id)).toEqual(board0().groups.map((g) => g.id));
    expect(page.data[0]).toMatchObject({ title: 'Backlog', board_id: board0().id });
    const created = await write('groups', 'create', { board_id: board0().id, group_name: 'Blocked', group_color: '#ff642e' });
    expectValid('groups', [created.data]);
    expect(created.data).toMatchObject({ title: 'Blocked', color: '#ff642e', board_id: board0().id });
    const after = await list('groups', { board_id: board0().id });
    expect(after.data.map((g) => g.id)).toContain(created.data.id);
    expect((await failure(list('groups', { board_id: '5' }))).code).toBe('upstream_not_found');
  });

  it("columns: list a board's columns with settings; create one, then write a value to it", async () => {
    const page = await list('columns', { board_id: board0().id });
    expectValid('columns', page.data);
    expect(page.data.map((c) => c.id)).toEqual(board0().columns.map((c) => c.id));
    expect((page.data.find((c) => c.id === 'status')!.settings as Rec).labels).toMatchObject({ '1': 'Done' });
    const created = await write('columns', 'create', { board_id: board0().id, title: 'Budget', column_type: 'numbers', id: 'budget' });
    expectValid('columns', [created.data]);
    expect(created.data).toMatchObject({ id: 'budget', title: 'Budget', type: 'numbers', board_id: board0().id });
    const s = orderedItems()[0]!;
    await write('items', 'update', { id: s.id, board_id: s.board_id, column_values: { budget: 1200 } });
    expect(sim.state.items.get(s.id)!.cells['budget']!.text).toBe('1200');
    expect((await failure(list('columns', { board_id: '5' }))).code).toBe('upstream_not_found');
  });

  it("subitems: create under an item (create_subitem), then list the item's subitems", async () => {
    const parent = orderedItems()[1]!;
    expect((await list('subitems', { item_id: parent.id })).data).toEqual([]);
    const a = await write('subitems', 'create', { parent_item_id: parent.id, item_name: 'Write tests', column_values: { status: { label: 'Done' } } });
    const b = await write('subitems', 'create', { parent_item_id: parent.id, item_name: 'Review' });
    expectValid('subitems', [a.data, b.data]);
    expect(a.data).toMatchObject({ name: 'Write tests', parent_item_id: parent.id });
    expect((a.data.column_values as Rec[]).find((c) => c.id === 'status')?.text).toBe('Done');
    const subs = await list('subitems', { item_id: parent.id });
    expectValid('subitems', subs.data);
    expect(subs.data.map((x) => x.name)).toEqual(['Write tests', 'Review']);
    expect(subs.data.every((x) => x.parent_item_id === parent.id)).toBe(true);
    // A subitem lives on the parent board's subitems board.
    expect((subs.data[0]!.board as Rec).id).not.toBe(parent.board_id);
    expect((await failure(list('subitems', { item_id: '5' }))).code).toBe('upstream_not_found');
  });

  it('activity_logs: every page between from and to, newest first, including archive and delete events', async () => {
    const s = orderedItems()[2]!;
    const t = orderedItems()[3]!;
    sim.clock.advance(1000);
    const from = new Date(sim.clock.now()).toISOString();
    await write('items', 'update', { id: s.id, board_id: s.board_id, state: 'archived' });
    await write('items', 'update', { id: t.id, board_id: t.board_id, state: 'deleted' });
    sim.reset();
    const recent = await list('activity_logs', { board_id: board0().id, from });
    expectValid('activity_logs', recent.data);
    expect(recent.data.map((e) => [e.event, JSON.parse(e.data as string).pulse_id])).toEqual([
      ['delete_pulse', Number(t.id)],
      ['archive_pulse', Number(s.id)],
    ]);
    expect(sent()[0]!.variables).toMatchObject({ from, board_ids: [board0().id] });
    // All pages of the whole log: one create_pulse per seeded item of the board, plus the two above.
    const all: Rec[] = [];
    for await (const e of monday().records('activity_logs', { board_id: board0().id, limit: 50 })) all.push({ ...e });
    const boardItems = [...sim.state.items.values()].filter((i) => i.board_id === board0().id).length;
    expect(all.filter((e) => e.event === 'create_pulse')).toHaveLength(boardItems);
    expect(all).toHaveLength(boardItems + 2);
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
  });

  it("me: the token's user with the account", async () => {
    const got = await get('me', {});
    expectValid('me', [got.data]);
    const me = sim.state.users[0]!;
    expect(got.data).toMatchObject({
      id: me.id,
      name: me.name,
      email: me.email,
      status: 'ACTIVE',
      account: { id: sim.state.account.id, slug: 'acme-robotics', tier: 'pro' },
    });
  });
});

describe('monday limits: mutations monday did not run are retried; every error is reported', () => {
  it('create: COMPLEXITY_BUDGET_EXHAUSTED (200) is retried after retry_in_seconds, and the item is created once', async () => {
    const rt = runtime();
    await rt.execute('tags', 'list');
    // A budget that the next create exhausts, in a 1 s window.
    sim.complexity.reset();
    sim.complexity.budget = 1_000_000;
    sim.complexity.windowSeconds = 1;
    sim.complexity.charge(999_999);
    sim.reset();
    const before = sim.state.items.size;
    const created = (await rt.execute('items', 'create', { board_id: board0().id, item_name: 'Created after the budget reset' })) as RecordEnvelope;
    expect(created.data.name).toBe('Created after the budget reset');
    expect(sim.state.items.size).toBe(before + 1);
    expect(sim.requests).toHaveLength(2);
    // The wait is monday's retry_in_seconds (1 s), not a backoff guess.
    expect(rt.lastCall).toMatchObject({ attempts: 2, retries: 1 });
    expect(rt.lastCall.waitedMs).toBeGreaterThanOrEqual(1000);
  });

  it('update: the per-minute limit (HTTP 429 RATE_LIMIT_EXCEEDED) is retried after retry_in_seconds', async () => {
    const rt = runtime();
    const s = orderedItems()[0]!;
    sim.setRateLimit({ ...sim.sidecar.rate_limit!, limit: 1 });
    await rt.execute('tags', 'list');
    // The one request of this minute ages until 1 s is left in its window.
    sim.clock.advance(59_000);
    // Clear the request log only: reset() would also forget the request counted against the limit.
    sim.requests.length = 0;
    const updated = (await rt.execute('items', 'update', { id: s.id, board_id: s.board_id, column_values: { text: 'After the minute' } })) as RecordEnvelope;
    expect(updated.data.id).toBe(s.id);
    expect(sim.state.items.get(s.id)!.cells['text']!.text).toBe('After the minute');
    expect(sim.requests).toHaveLength(2);
    expect(rt.lastCall).toMatchObject({ attempts: 2, retries: 1 });
    expect(rt.lastCall.waitedMs).toBeGreaterThanOrEqual(1000);
  });

  it('a mutation failing for another reason is not retried (monday may have run it)', async () => {
    sim.inject({
      path: '/v2',
      status: 200,
      json: { errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }], account_id: 1 },
    });
    const err = await failure(write('items', 'create', { board_id: board0().id, item_name: 'Once' }));
    expect(err.code).toBe('upstream_error');
    expect(sim.requests).toHaveLength(1);
  });

  it('every entry of errors[] is reported with its path and code, not only the first', async () => {
    sim.inject({
      path: '/v2',
      status: 200,
      json: {
        data: { create_item: null, complexity: null },
        errors: [
          { message: "This column ID doesn't exist for the board", path: ['create_item'], extensions: { code: 'InvalidColumnIdException', status_code: 200 } },
          { message: 'Field is not available', path: ['complexity', 'query'], extensions: { code: 'FIELD_UNAVAILABLE' } },
        ],
        account_id: 1,
      },
    });
    const err = await failure(write('items', 'create', { board_id: board0().id, item_name: 'Two errors' }));
    expect(err.code).toBe('upstream_rejected');
    expect(err.message).toBe("monday: This column ID doesn't exist for the board (and 1 more error: see errors)");
    expect(err.errors).toEqual([
      { path: '/create_item', message: "InvalidColumnIdException: This column ID doesn't exist for the board" },
      { path: '/complexity/query', message: 'FIELD_UNAVAILABLE: Field is not available' },
    ]);
  });

  it('the rule matches any entry of errors[]: a limit error second in the list is still upstream_rate_limited', async () => {
    sim.inject({
      path: '/v2',
      status: 200,
      json: {
        errors: [
          { message: 'Partial failure', extensions: { code: 'SOMETHING' } },
          { message: 'Complexity budget exhausted', extensions: { code: 'COMPLEXITY_BUDGET_EXHAUSTED', retry_in_seconds: 45 } },
        ],
        account_id: 1,
      },
    });
    const err = await failure(list('tags'));
    expect(err.code).toBe('upstream_rate_limited');
    expect(err.message).toContain('Complexity budget exhausted');
    expect(err.details).toMatchObject({ retry_after_ms: 45_000, not_executed: true });
  });
});
