/**
 * The Monday connector end to end: connectors/monday/connector.yaml run by the interpreter over
 * real HTTP against the Monday simulator. Records are checked against the manifest's record
 * schemas (closed, so an undeclared field fails) and against the simulator's seeded data. Errors,
 * limits, size and the later API's shapes are in monday-limits.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { OAuth2Auth } from '../../generated/manifest.ts';
import { authorizeUrl, exchangeAuthorizationCode } from '../../src/auth/index.ts';
import { connect } from '../../src/index.ts';
import { failure } from '../helpers/errors.ts';
import { board0, expectValid, get, list, manifest, monday, orderedItems, runtime, sent, sim, useMondaySimulator, write, type Rec } from './monday-helpers.ts';

useMondaySimulator();

describe('monday users', () => {
  it('list: active users with every field, as seeded, page meta', async () => {
    const page = await list('users');
    const active = sim.state.users.filter((u) => u.status !== 'INACTIVE');
    expect(page.data.map((u) => u.id)).toEqual(active.map((u) => u.id));
    expect(page.meta).toEqual({ cursor: null, page: 1 });
    expectValid('users', page.data);
    const first = page.data[0]!;
    const seeded = active[0]!;
    expect(first).toMatchObject({
      name: seeded.name,
      email: seeded.email,
      kind: seeded.kind,
      status: 'ACTIVE',
      is_email_confirmed: seeded.is_email_confirmed,
      created_at: seeded.created_at,
      time_zone_identifier: seeded.time_zone_identifier,
    });
    expect((first.photo_url as Rec).thumb).toBe(`https://files.monday.com/use1/photos/${seeded.id}/thumb/${seeded.id}-user_photo.png`);
    expect(first.teams).toEqual(sim.state.teams.filter((t) => t.user_ids.includes(seeded.id)).map((t) => ({ id: t.id, name: t.name })));
  });

  it('list: limit + page pagination visits every user once and stops on the short page', async () => {
    const ids: string[] = [];
    for await (const u of monday().records('users', { limit: 4 })) ids.push(u.id);
    expect(ids).toEqual(sim.state.users.filter((u) => u.status !== 'INACTIVE').map((u) => u.id));
    // 13 active users at 4 a page: page 4 holds one user, so no call is spent on an empty page 5.
    expect(sent().map((b) => b.variables?.['page'])).toEqual([1, 2, 3, 4]);
  });

  it('list: when the last page is exactly full, one empty page ends the iteration', async () => {
    const active = sim.state.users.filter((u) => u.status !== 'INACTIVE').length;
    const ids: string[] = [];
    for await (const u of monday().records('users', { limit: active })) ids.push(u.id);
    expect(ids).toHaveLength(active);
    expect(sent().map((b) => b.variables?.['page'])).toEqual([1, 2]);
  });

  it('list: without a limit, the short-page rule uses the default page size the request sends (50)', async () => {
    const page = [];
    for await (const u of monday().records('users')) page.push(u);
    expect(page).toHaveLength(sim.state.users.filter((u) => u.status !== 'INACTIVE').length);
    expect(sent()).toHaveLength(1);
    expect(sent()[0]!.variables?.['limit']).toBe(50);
  });

  it('list: filters are sent as GraphQL variables, never in the query text', async () => {
    const page = await list('users', { kind: 'guests' });
    expect(page.data.map((u) => u.id)).toEqual(sim.state.users.filter((u) => u.status !== 'INACTIVE' && u.kind === 'guest').map((u) => u.id));
    const body = sent()[0]!;
    expect(body.variables).toMatchObject({ kind: 'guests', limit: 50, page: 1 });
    expect(body.query).not.toContain('guests');
  });

  it('get: by id, including a deactivated user; unknown id is upstream_not_found', async () => {
    const disabled = sim.state.users.find((u) => u.status === 'INACTIVE')!;
    const got = await get('users', { id: disabled.id });
    expectValid('users', [got.data]);
    expect(got.data).toMatchObject({ id: disabled.id, name: disabled.name, status: 'INACTIVE' });
    const err = await failure(get('users', { id: '999' }));
    expect(err.code).toBe('upstream_not_found');
  });
});

describe('monday teams, workspaces, tags', () => {
  it('teams: list and get, with members and owners', async () => {
    const page = await list('teams');
    expectValid('teams', page.data);
    expect(page.data.map((t) => t.name)).toEqual(sim.state.teams.map((t) => t.name));
    expect(page.meta).toEqual({ cursor: null, page: null });
    const t = sim.state.teams[1]!;
    const got = await get('teams', { id: t.id });
    expectValid('teams', [got.data]);
    // Team members are the team's active users.
    const active = new Set(sim.state.users.filter((u) => u.status !== 'INACTIVE').map((u) => u.id));
    expect((got.data.users as Rec[]).map((u) => u.id)).toEqual(t.user_ids.filter((id) => active.has(id)));
    expect((got.data.owners as Rec[]).map((u) => u.id)).toEqual(t.owner_ids);
    expect((await failure(get('teams', { id: '1' }))).code).toBe('upstream_not_found');
  });

  it('workspaces: list across pages and get', async () => {
    const all: Rec[] = [];
    for await (const w of monday().records('workspaces', { limit: 2 })) all.push({ ...w });
    expectValid('workspaces', all);
    expect(all.map((w) => w.id)).toEqual(sim.state.workspaces.map((w) => w.id));
    const ws = sim.state.workspaces[2]!;
    const got = await get('workspaces', { id: ws.id });
    expectValid('workspaces', [got.data]);
    expect(got.data).toMatchObject({ name: ws.name, kind: 'closed', description: ws.description, created_at: ws.created_at });
    expect((await failure(get('workspaces', { id: '42' }))).code).toBe('upstream_not_found');
  });

  it('tags: list and get', async () => {
    const page = await list('tags');
    expectValid('tags', page.data);
    expect(page.data).toEqual(sim.state.tags.map((t) => ({ id: t.id, name: t.name, color: t.color })));
    const got = await get('tags', { id: sim.state.tags[3]!.id });
    expect(got.data).toEqual({ id: sim.state.tags[3]!.id, name: sim.state.tags[3]!.name, color: sim.state.tags[3]!.color });
    expect((await failure(get('tags', { id: '7' }))).code).toBe('upstream_not_found');
  });
});

describe('monday boards', () => {
  it('list: every board with groups and columns', async () => {
    const page = await list('boards');
    expectValid('boards', page.data);
    expect(page.data.map((b) => b.id)).toEqual(sim.state.boards.map((b) => b.id));
    const b = page.data[0]!;
    expect(b).toMatchObject({ name: board0().name, board_kind: 'public', items_count: orderedItems().length, workspace_id: board0().workspace_id });
    expect((b.groups as Rec[]).map((g) => g.id)).toEqual(board0().groups.map((g) => g.id));
    const status = (b.columns as Rec[]).find((c) => c.id === 'status')!;
    expect(status.type).toBe('status');
    expect((status.settings as Rec).labels).toMatchObject({ '1': 'Done' });
  });

  it('list: workspace filter; get by id; unknown id is upstream_not_found', async () => {
    const ws = sim.state.boards[2]!.workspace_id!;
    const page = await list('boards', { workspace_ids: [ws] });
    expect(page.data.map((b) => b.id)).toEqual(sim.state.boards.filter((b) => b.workspace_id === ws).map((b) => b.id));
    const got = await get('boards', { id: sim.state.boards[3]!.id });
    expectValid('boards', [got.data]);
    expect(got.data).toMatchObject({ name: 'Marketing Calendar', board_kind: 'share' });
    expect((await failure(get('boards', { id: '123' }))).code).toBe('upstream_not_found');
  });
});

describe('monday items', () => {
  it('list: the first page of a board in board order, values as seeded, with a cursor', async () => {
    const page = await list('items', { board_id: board0().id, limit: 10 });
    expectValid('items', page.data);
    const seeded = orderedItems().slice(0, 10);
    expect(page.data.map((i) => i.id)).toEqual(seeded.map((i) => i.id));
    expect(typeof page.meta.cursor).toBe('string');
    expect(page.meta.page).toBeNull();
    const item = page.data[0]!;
    const s = seeded[0]!;
    expect(item).toMatchObject({
      name: s.name,
      state: 'active',
      created_at: s.created_at,
      board: { id: board0().id, name: board0().name },
      group: { id: s.group_id },
    });
    const byId = Object.fromEntries((item.column_values as Rec[]).map((c) => [c.id, c]));
    const connected = new Set(['connect_boards', 'mirror', 'dependency', 'formula']);
    for (const [colId, cell] of Object.entries(s.cells))
      expect(byId[colId], colId).toMatchObject({ text: connected.has(colId) ? null : cell.text, value: cell.value });
    expect(sent()[0]!.query).toContain('items_board: boards(ids: $board_ids');
    expect(sent()[0]!.variables).toMatchObject({ board_ids: [board0().id], limit: 10 });
  });

  it('list: meta.cursor fetches the next page through next_items_page', async () => {
    const first = await list('items', { board_id: board0().id, limit: 10 });
    const second = await list('items', { board_id: board0().id, limit: 10, cursor: first.meta.cursor as string });
    expect(second.data.map((i) => i.id)).toEqual(
      orderedItems()
        .slice(10, 20)
        .map((i) => i.id),
    );
    const body = sent()[1]!;
    expect(body.query).toContain('next_items_page(cursor: $cursor, limit: $limit)');
    expect(body.query).not.toContain('items_board');
    expect(body.variables?.['cursor']).toBe(first.meta.cursor);
  });

  it('list: records() goes through every page of every board, each item exactly once', async () => {
    for (let b = 0; b < sim.state.boards.length; b++) {
      sim.reset();
      const ids: string[] = [];
      for await (const i of monday().records('items', { board_id: sim.state.boards[b]!.id, limit: 7 })) ids.push(i.id);
      const expected = orderedItems(b).map((i) => i.id);
      expect(ids).toEqual(expected);
      expect(sent()).toHaveLength(Math.ceil(expected.length / 7));
      expect(
        sent()
          .slice(1)
          .every((q) => q.query.includes('next_items_page')),
      ).toBe(true);
    }
  });

  it('list: an unknown board is upstream_not_found', async () => {
    const err = await failure(list('items', { board_id: '42' }));
    expect(err.code).toBe('upstream_not_found');
    expect(err.details['upstream_status']).toBe(200);
  });

  it('list: a limit above 500 is refused before anything is sent', async () => {
    const err = await failure(list('items', { board_id: board0().id, limit: 501 }));
    expect(err.code).toBe('invalid_params');
    expect(sim.requests).toHaveLength(0);
  });

  it('get: by id; unknown id is upstream_not_found', async () => {
    const s = orderedItems()[5]!;
    const got = await get('items', { id: s.id });
    expectValid('items', [got.data]);
    expect(got.data).toMatchObject({ id: s.id, name: s.name, url: `https://acme-robotics.monday.com/boards/${s.board_id}/pulses/${s.id}` });
    const err = await failure(get('items', { id: '1' }));
    expect(err.code).toBe('upstream_not_found');
  });

  it('create: the item is on the board with its column values, visible through get and at the top of its group', async () => {
    const owner = sim.state.users[2]!;
    const created = await write('items', 'create', {
      board_id: board0().id,
      item_name: 'Launch partner portal',
      group_id: 'new_group',
      column_values: {
        status: { label: 'Stuck' },
        date4: { date: '2025-03-14' },
        numbers: 8,
        text: 'Initech',
        person: { personsAndTeams: [{ id: Number(owner.id), kind: 'person' }] },
      },
    });
    expectValid('items', [created.data]);
    const id = created.data.id as string;
    // column_values travel as a JSON string, as Monday's JSON scalar expects.
    expect(typeof sent()[0]!.variables?.['column_values']).toBe('string');
    const got = await get('items', { id });
    const cells = Object.fromEntries((got.data.column_values as Rec[]).map((c) => [c.id, c.text]));
    expect(got.data).toMatchObject({ name: 'Launch partner portal', group: { id: 'new_group', title: 'In progress' }, creator_id: sim.state.users[0]!.id });
    expect(cells).toMatchObject({ status: 'Stuck', date4: '2025-03-14', numbers: '8', text: 'Initech', person: owner.name, checkbox: '' });
    const firstInGroup = orderedItems().find((i) => i.group_id === 'new_group')!;
    expect(firstInGroup.id).toBe(id);
  });

  it('create: a GraphQL error inside a 200 is surfaced with the upstream message (unknown label)', async () => {
    const before = sim.state.items.size;
    const err = await failure(write('items', 'create', { board_id: board0().id, item_name: 'X', column_values: { status: { label: 'Maybe' } } }));
    expect(err.code).toBe('upstream_rejected');
    expect(err.message).toContain('invalid value - label does not exist in column');
    expect(err.details['upstream_status']).toBe(200);
    expect((err.details['upstream_body'] as { errors: { extensions: Rec }[] }).errors[0]!.extensions['code']).toBe('ColumnValueException');
    expect(sim.state.items.size).toBe(before);
    // create is not retry-safe: exactly one attempt.
    expect(sim.requests).toHaveLength(1);
  });

  it('create: create_labels_if_missing adds the label; unknown board is upstream_not_found', async () => {
    const created = await write('items', 'create', {
      board_id: board0().id,
      item_name: 'Y',
      column_values: { status: 'Waiting on customer' },
      create_labels_if_missing: true,
    });
    expect((created.data.column_values as Rec[]).find((c) => c.id === 'status')?.text).toBe('Waiting on customer');
    const err = await failure(write('items', 'create', { board_id: '77', item_name: 'Z' }));
    expect(err.code).toBe('upstream_not_found');
    expect(err.message).toContain('The board does not exist');
  });

  it('update: column values and name change, visible through a following get', async () => {
    const s = orderedItems()[3]!;
    const updated = await write('items', 'update', {
      id: s.id,
      board_id: s.board_id,
      column_values: { name: 'Renamed item', status: { index: 1 }, checkbox: { checked: 'true' }, long_text: { text: 'Notes' } },
    });
    expectValid('items', [updated.data]);
    const got = await get('items', { id: s.id });
    const cells = Object.fromEntries((got.data.column_values as Rec[]).map((c) => [c.id, c.text]));
    expect(got.data.name).toBe('Renamed item');
    expect(cells).toMatchObject({ status: 'Done', checkbox: 'v', long_text: 'Notes' });
    expect(got.data.updated_at).not.toBe(s.created_at);
  });

  it("update: an unknown column is upstream_rejected with Monday's message; an item of another board is upstream_not_found", async () => {
    const s = orderedItems()[0]!;
    const err = await failure(write('items', 'update', { id: s.id, board_id: s.board_id, column_values: { nope: 'x' } }));
    expect(err.code).toBe('upstream_rejected');
    expect(err.message).toContain("This column ID doesn't exist for the board");
    const other = await failure(write('items', 'update', { id: s.id, board_id: sim.state.boards[1]!.id, column_values: { text: 'x' } }));
    expect(other.code).toBe('upstream_not_found');
  });
});

describe('monday updates', () => {
  it('list: newest first, page by page', async () => {
    const newest = [...sim.state.updates].reverse();
    const first = await list('updates', { limit: 10 });
    expectValid('updates', first.data);
    expect(first.data.map((u) => u.id)).toEqual(newest.slice(0, 10).map((u) => u.id));
    expect(first.meta).toEqual({ cursor: null, page: 1 });
    const third = await list('updates', { limit: 10, page: 3 });
    expect(third.data.map((u) => u.id)).toEqual(newest.slice(20, 30).map((u) => u.id));
    expect(third.meta.page).toBe(3);
    const u = first.data[0]!;
    const seeded = newest[0]!;
    expect(u).toMatchObject({
      body: seeded.body,
      text_body: seeded.text_body,
      item_id: seeded.item_id,
      creator_id: seeded.creator_id,
      created_at: seeded.created_at,
    });
  });

  it('list: all updates of one item; an unknown item is upstream_not_found', async () => {
    const itemId = sim.state.updates[0]!.item_id;
    const ids: string[] = [];
    for await (const u of monday().records('updates', { item_id: itemId, limit: 2 })) ids.push(u.id);
    expect(ids).toEqual(
      [...sim.state.updates]
        .reverse()
        .filter((u) => u.item_id === itemId)
        .map((u) => u.id),
    );
    expect((await failure(list('updates', { item_id: '5' }))).code).toBe('upstream_not_found');
  });

  it('get: by id; unknown id is upstream_not_found', async () => {
    const s = sim.state.updates[7]!;
    const got = await get('updates', { id: s.id });
    expectValid('updates', [got.data]);
    expect(got.data).toMatchObject({ id: s.id, body: s.body, creator: { id: s.creator_id } });
    expect((await failure(get('updates', { id: '3' }))).code).toBe('upstream_not_found');
  });

  it("create: a comment on an item, visible through get and in the item's updates", async () => {
    const item = orderedItems()[2]!;
    const created = await write('updates', 'create', { item_id: item.id, body: '<p>Shipped to <b>staging</b></p>' });
    expectValid('updates', [created.data]);
    expect(created.data).toMatchObject({ item_id: item.id, text_body: 'Shipped to staging', creator_id: sim.state.users[0]!.id });
    const got = await get('updates', { id: created.data.id as string });
    expect(got.data.body).toBe('<p>Shipped to <b>staging</b></p>');
    const onItem = await list('updates', { item_id: item.id });
    expect(onItem.data[0]!.id).toBe(created.data.id);
    const err = await failure(write('updates', 'create', { item_id: '9', body: 'hi' }));
    expect(err.code).toBe('upstream_not_found');
  });
});

describe('monday auth', () => {
  it('token variant: Authorization carries the raw token (no Bearer) and API-Version is sent', async () => {
    const c = monday();
    expect(c.authVariant).toBe('token');
    await c.execute('tags', 'list');
    expect(sim.requests[0]!.headers['authorization']).toBe(sim.apiKey);
    expect(sim.requests[0]!.headers['api-version']).toBe('2026-10');
  });

  it('a bad token is upstream_credentials_rejected with the upstream 401 message', async () => {
    const err = await failure(runtime({}, { api_key: 'not-a-token' }).execute('tags', 'list'));
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toContain('Not Authenticated');
    expect(err.details['upstream_status']).toBe(401);
  });

  it("oauth variant: the manifest's OAuth flow (consent URL, code exchange) yields a token that works, sent without Bearer", async () => {
    const variant = manifest.auth.find((v) => v.def.name === 'oauth')!.def as OAuth2Auth;
    expect(variant).toMatchObject({
      authorize_url: 'https://auth.monday.com/oauth2/authorize',
      token_url: 'https://auth.monday.com/oauth2/token',
      refreshes: false,
      expires: false,
    });
    const redirectUri = 'http://127.0.0.1:1/callback';
    const consent = authorizeUrl(variant, { clientId: sim.oauth.clientId, redirectUri, state: 'st8', authorizeUrl: `${sim.url}/oauth2/authorize` });
    expect(new URL(consent).searchParams.get('scope')).toContain('boards:write');
    const auth = await fetch(consent, { redirect: 'manual' });
    expect(auth.status).toBe(302);
    const back = new URL(auth.headers.get('location')!);
    expect(back.searchParams.get('state')).toBe('st8');
    const client = { clientId: sim.oauth.clientId, clientSecret: sim.oauth.clientSecret, tokenUrl: `${sim.url}/oauth2/token` };
    const tokens = await exchangeAuthorizationCode(variant, client, back.searchParams.get('code')!, redirectUri);
    // Monday tokens do not expire and come without a refresh token.
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.expires_at).toBeUndefined();
    const c = connect('monday', {
      credentials: { access_token: tokens.access_token, client_id: sim.oauth.clientId, client_secret: sim.oauth.clientSecret },
      baseUrl: sim.url,
    });
    expect(c.authVariant).toBe('oauth');
    sim.reset();
    const page = await c.execute('users', 'list', { limit: 2 });
    expect(page.data).toHaveLength(2);
    expect(sim.requests[0]!.headers['authorization']).toBe(tokens.access_token);
  });

  it('oauth variant: a declined consent comes back as access_denied', async () => {
    sim.oauth.deny = true;
    const variant = manifest.auth.find((v) => v.def.name === 'oauth')!.def as OAuth2Auth;
    const consent = authorizeUrl(variant, {
      clientId: sim.oauth.clientId,
      redirectUri: 'http://127.0.0.1:1/cb',
      state: 's',
      authorizeUrl: `${sim.url}/oauth2/authorize`,
    });
    const back = new URL((await fetch(consent, { redirect: 'manual' })).headers.get('location')!);
    expect(back.searchParams.get('error')).toBe('access_denied');
  });
});
