/**
 * The Slack connector end to end: connectors/slack/connector.yaml run by the interpreter over
 * real HTTP against the generic simulator serving Slack's own Web API description
 * (connectors/slack/slack-web-api.json) with its sidecar (connectors/slack/simulator.yaml), and no
 * Slack code. Every entity × action; pagination across pages through response_metadata.next_cursor;
 * errors inside HTTP 200 bodies (ok: false) mapped by errors.in_body; 429 with Retry-After; the
 * token and OAuth v2 variants; the auth.test check; and sync (messages per channel, incremental by ts).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorizeUrl, exchangeAuthorizationCode } from '../../src/auth/index.ts';
import { connect, ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { type OAuth2Auth } from '../../src/manifest/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator, type Resource } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import type { MigrationGroup } from '../../src/store/database.ts';
import { recordChecker } from '../helpers/records.ts';
import { callBucket } from '../../src/engine/index.ts';

type Rec = Record<string, unknown>;
const DIR = new URL('../../connectors/slack/', import.meta.url).pathname;
const manifest = getConnector('slack');
const sidecar = loadSidecar(`${DIR}simulator.yaml`);
const BOT = 'xoxb-sandbox-bot-token';
const USER = 'xoxp-sandbox-user-token';
const expectValid = recordChecker(manifest);

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}slack-web-api.json`, sidecar, seed: 3 });
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.reset();
  sim.setRateLimit(false);
});

const slack = (credentials: Rec = { token: BOT }) => connect('slack', { credentials: credentials as never, baseUrl: sim.url, retry: { baseDelayMs: 5 } });
const run = (entity: string, action: string, params?: Rec) =>
  slack().execute(entity as never, action as never, params as never) as Promise<ListEnvelope & RecordEnvelope>;
const res = (name: string): Resource => sim.resources.get(name) as Resource;
const ids = (name: string): string[] => [...res(name).records.keys()];
const sent = (path: string) => sim.requests.filter((r) => r.path === path);
/** The seeded channels the bot is a member of, and their messages. */
const memberChannels = (): string[] => [...res('conversations').records.values()].filter((s) => s.record.is_member === true).map((s) => String(s.record.id));
const messagesIn = (channel: string): string[] =>
  [...res('messages').records.values()].filter((s) => s.parents.channel === channel).map((s) => String(s.record.ts));

describe('slack: the simulator serves the description with the sidecar’s RPC resources', () => {
  it('seeds channels, messages (under channels), users and user groups from the description’s examples', () => {
    expect(ids('conversations')).toHaveLength(5);
    expect(ids('users')).toHaveLength(5);
    expect(ids('usergroups')).toHaveLength(5);
    expect(ids('messages')).toHaveLength(12);
    for (const id of ids('conversations')) expect(id).toMatch(/^C[A-Z0-9]{8,}$/);
    for (const ts of ids('messages')) expect(ts).toMatch(/^\d{10}\.\d{6}$/);
    for (const s of res('messages').records.values()) expect(ids('conversations')).toContain(s.parents.channel);
  });
});

describe('slack conversations', () => {
  it('list: every channel, two at a time across pages (cursor ← response_metadata.next_cursor)', async () => {
    const first = await run('conversations', 'list', { limit: 2 });
    expect(first.data).toHaveLength(2);
    expect(first.meta.next_cursor).toEqual(expect.any(String));
    const all: Rec[] = [];
    for await (const r of slack().records('conversations', { limit: 2, types: 'public_channel,private_channel' })) all.push(r as unknown as Rec);
    expect(all.map((c) => c.id).sort()).toEqual(ids('conversations').sort());
    expectValid('conversations', all);
    const pages = sent('/conversations.list').slice(1);
    expect(pages).toHaveLength(3);
    expect(pages[0]?.query.get('cursor')).toBeNull();
    expect(pages[1]?.query.get('cursor')).toBe(first.meta.next_cursor);
    expect(pages[0]?.query.get('types')).toBe('public_channel,private_channel');
    expect(pages[0]?.headers.authorization).toBe(`Bearer ${BOT}`);
    // The last page's next_cursor is "": meta says null.
    const last = await run('conversations', 'list', { limit: 10 });
    expect(last.meta.next_cursor).toBeNull();
  });

  it('get: one channel by id; an unknown id is channel_not_found inside a 200 → upstream_not_found', async () => {
    const id = ids('conversations')[1] as string;
    const got = await run('conversations', 'get', { channel: id });
    expect(got.data).toMatchObject({ id, name: expect.any(String) });
    expectValid('conversations', [got.data as Rec]);
    const e = await failure(run('conversations', 'get', { channel: 'C0NOSUCH00' }));
    expect(e.code).toBe('upstream_not_found');
    expect(e.message).toMatch(/channel_not_found/);
    // A malformed id never reaches Slack.
    expect((await failure(run('conversations', 'get', { channel: 'general' }))).code).toBe('invalid_params');
  });

  it('create: a form-encoded conversations.create, then get returns the channel', async () => {
    const created = await run('conversations', 'create', { name: 'launch-plan', is_private: true });
    expect(created.data).toMatchObject({ name: 'launch-plan', is_private: true });
    expect(String(created.data.id)).toMatch(/^C[A-Z0-9]{8,}$/);
    const req = sent('/conversations.create')[0];
    expect(req?.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
    expect(Object.fromEntries(new URLSearchParams(req?.rawBody))).toEqual({ name: 'launch-plan', is_private: 'true' });
    expect((await run('conversations', 'get', { channel: created.data.id as string })).data).toMatchObject({ id: created.data.id, name: 'launch-plan' });
    expect((await failure(run('conversations', 'create', { name: 'Has Spaces' }))).code).toBe('invalid_params');
  });

  it('update: conversations.rename; conversation_topics.update: conversations.setTopic', async () => {
    const id = ids('conversations')[2] as string;
    const renamed = await run('conversations', 'update', { channel: id, name: 'renamed-channel' });
    expect(renamed.data).toMatchObject({ id, name: 'renamed-channel' });
    const topic = await run('conversation_topics', 'update', { channel: id, topic: 'Launch on Friday' });
    expect(topic.data).toMatchObject({ id, topic: { value: 'Launch on Friday' } });
    expect((await run('conversations', 'get', { channel: id })).data).toMatchObject({ name: 'renamed-channel', topic: { value: 'Launch on Friday' } });
    expect((await failure(run('conversation_topics', 'update', { channel: 'C0NOSUCH00', topic: 'x' }))).code).toBe('upstream_not_found');
  });
});

describe('slack messages', () => {
  it('list: a channel’s history, paged, with ids "<channel>:<ts>"; oldest and latest bound it', async () => {
    const channel = memberChannels()[0] as string;
    const want = messagesIn(channel);
    expect(want.length).toBeGreaterThan(1);
    const all: Rec[] = [];
    for await (const r of slack().records('messages', { channel, limit: 1 })) all.push(r as unknown as Rec);
    expect(all.map((m) => m.ts).sort()).toEqual([...want].sort());
    for (const m of all) expect(m).toMatchObject({ id: `${channel}:${String(m.ts)}`, channel });
    expectValid('messages', all);
    expect(sent('/conversations.history')).toHaveLength(want.length);
    const sorted = [...want].sort();
    const after = await run('messages', 'list', { channel, oldest: sorted[0] });
    expect(after.data.map((m) => m.ts).sort()).toEqual(sorted.slice(1));
    const before = await run('messages', 'list', { channel, latest: sorted.at(-1) });
    expect(before.data.map((m) => m.ts).sort()).toEqual(sorted.slice(0, -1));
    expect((await failure(run('messages', 'list', { channel: 'C0NOSUCH00' }))).code).toBe('upstream_not_found');
  });

  it('create: chat.postMessage (blocks as a JSON form field), then the history has it', async () => {
    const channel = memberChannels()[0] as string;
    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: '*Launch* on Friday' } }];
    const posted = await run('messages', 'create', { channel, text: 'Launch on Friday', blocks });
    expect(posted.data).toMatchObject({ channel, text: 'Launch on Friday', ts: expect.stringMatching(/^\d{10}\.\d{6}$/) });
    expect(posted.data.id).toBe(`${channel}:${String(posted.data.ts)}`);
    const form = new URLSearchParams(sent('/chat.postMessage')[0]?.rawBody);
    expect(form.get('channel')).toBe(channel);
    expect(JSON.parse(form.get('blocks') as string)).toEqual(blocks);
    const before = messagesIn(channel)
      .filter((ts) => ts !== posted.data.ts)
      .sort()
      .at(-1) as string;
    const history = await run('messages', 'list', { channel, oldest: before });
    expect(history.data.map((m) => m.ts)).toEqual([posted.data.ts]);
    // Text or blocks: a message with neither is refused before anything is sent.
    expect((await failure(run('messages', 'create', { channel }))).code).toBe('invalid_params');
    expect((await failure(run('messages', 'create', { channel: 'C0NOSUCH00', text: 'x' }))).code).toBe('upstream_not_found');
  });

  it('update: chat.update edits the text; an unknown ts is message_not_found → upstream_not_found', async () => {
    const channel = memberChannels()[0] as string;
    const ts = messagesIn(channel)[0] as string;
    const edited = await run('messages', 'update', { channel, ts, text: 'edited text' });
    expect(edited.data).toMatchObject({ id: `${channel}:${ts}`, channel, ts, text: 'edited text' });
    const all = (await run('messages', 'list', { channel, limit: 100 })).data;
    expect(all.find((m) => m.ts === ts)).toMatchObject({ text: 'edited text' });
    const e = await failure(run('messages', 'update', { channel, ts: '1000000000.000001', text: 'x' }));
    expect(e.code).toBe('upstream_not_found');
    expect(e.message).toMatch(/message_not_found/);
  });
});

describe('slack users and user groups', () => {
  it('users.list across pages and users.get; an unknown user is upstream_not_found', async () => {
    const all: Rec[] = [];
    for await (const r of slack().records('users', { limit: 2 })) all.push(r as unknown as Rec);
    expect(all.map((u) => u.id).sort()).toEqual(ids('users').sort());
    expectValid('users', all);
    const id = ids('users')[0] as string;
    expect((await run('users', 'get', { user: id })).data).toMatchObject({ id });
    expect((await failure(run('users', 'get', { user: 'U0NOSUCH00' }))).code).toBe('upstream_not_found');
  });

  it('usergroups: list, create, update', async () => {
    const listed = await run('usergroups', 'list', { include_count: true });
    expect(listed.data.map((g) => g.id).sort()).toEqual(ids('usergroups').sort());
    expect(listed.meta.next_cursor).toBeNull();
    expectValid('usergroups', listed.data);
    const channels = memberChannels().slice(0, 2);
    const created = await run('usergroups', 'create', { name: 'Launch crew', handle: 'launch', channels });
    expect(created.data).toMatchObject({ name: 'Launch crew', handle: 'launch' });
    expect(new URLSearchParams(sent('/usergroups.create')[0]?.rawBody).get('channels')).toBe(channels.join(','));
    const updated = await run('usergroups', 'update', { usergroup: created.data.id as string, description: 'Ships the launch' });
    expect(updated.data).toMatchObject({ id: created.data.id, name: 'Launch crew', description: 'Ships the launch' });
    expect((await run('usergroups', 'list')).data.map((g) => g.id)).toContain(created.data.id);
    expect((await failure(run('usergroups', 'update', { usergroup: 'S0NOSUCH00', name: 'x' }))).code).toBe('upstream_not_found');
    expect((await failure(run('usergroups', 'update', { usergroup: created.data.id as string }))).code).toBe('invalid_params');
  });
});

describe('slack errors inside 200 bodies, rate limits, auth and check', () => {
  it('invalid_auth and not_authed are upstream_credentials_rejected', async () => {
    const e = await failure(slack({ token: 'xoxb-revoked-token' }).execute('users', 'list'));
    expect(e.code).toBe('upstream_credentials_rejected');
    expect(e.message).toMatch(/invalid_auth/);
    sim.inject({ path: '/users.list', status: 200, json: { ok: false, error: 'not_authed' } });
    expect((await failure(slack().execute('users', 'list'))).code).toBe('upstream_credentials_rejected');
  });

  it('missing_scope names the scope to add; other refusals are upstream_rejected; internal_error is upstream_unavailable', async () => {
    sim.inject({ path: '/chat.postMessage', status: 200, json: { ok: false, error: 'missing_scope', needed: 'chat:write', provided: 'channels:read' } });
    const e = await failure(run('messages', 'create', { channel: memberChannels()[0], text: 'hi' }));
    expect(e.code).toBe('upstream_credentials_rejected');
    expect(e.message).toMatch(/missing_scope: the token needs chat:write \(it has channels:read\)/);
    sim.inject({ path: '/conversations.create', status: 200, json: { ok: false, error: 'name_taken' } });
    const taken = await failure(run('conversations', 'create', { name: 'general' }));
    expect(taken.code).toBe('upstream_rejected');
    expect(taken.message).toMatch(/name_taken/);
    sim.inject({ path: '/users.list', status: 200, json: { ok: false, error: 'internal_error' }, times: 4 });
    expect((await failure(run('users', 'list'))).code).toBe('upstream_unavailable');
    expect(sent('/users.list')).toHaveLength(4);
  });

  it('ratelimited inside a 200 is retried, also for a create (not executed)', async () => {
    sim.inject({ path: '/chat.postMessage', status: 200, json: { ok: false, error: 'ratelimited' } });
    const rt = new ConnectorRuntime(manifest, { token: BOT }, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5 } });
    const posted = (await rt.execute('messages', 'create', { channel: memberChannels()[0], text: 'after the limit' })) as RecordEnvelope;
    expect(posted.data).toMatchObject({ text: 'after the limit' });
    expect(rt.lastCall.retries).toBe(1);
    expect(sent('/chat.postMessage')).toHaveLength(2);
  });

  it('a 429 with Retry-After is waited out and retried; the simulator answers 429 + Retry-After beyond its limit', async () => {
    sim.inject({ path: '/users.list', status: 429, headers: { 'retry-after': '1' }, json: { ok: false, error: 'ratelimited' } });
    const rt = new ConnectorRuntime(manifest, { token: BOT }, { baseUrl: sim.url, limiter: null });
    const page = (await rt.execute('users', 'list')) as ListEnvelope;
    expect(page.data).toHaveLength(5);
    expect(rt.lastCall.retries).toBe(1);
    expect(sent('/users.list')).toHaveLength(2);
    // The sidecar's limit (one request an hour here): the second request is 429 {ok: false, error: ratelimited} with Retry-After.
    sim.setRateLimit({ limit: 1, window_seconds: 3600 });
    const get = () => fetch(`${sim.url}/users.list`, { headers: { authorization: `Bearer ${BOT}` } });
    expect((await get()).status).toBe(200);
    const limited = await get();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await limited.json()).toEqual({ ok: false, error: 'ratelimited' });
  });

  it('credential variants: a bot token, a user token, a malformed token refused before sending', async () => {
    const bot = new ConnectorRuntime(manifest, { token: BOT }, { baseUrl: sim.url });
    expect(bot.authVariant).toBe('token');
    const user = new ConnectorRuntime(manifest, { token: USER }, { baseUrl: sim.url });
    expect(((await user.execute('users', 'list')) as ListEnvelope).data).toHaveLength(5);
    expect(sent('/users.list').at(-1)?.headers.authorization).toBe(`Bearer ${USER}`);
    const before = sim.requests.length;
    expect(() => slack({ token: 'not-a-slack-token' })).toThrow(expect.objectContaining({ code: 'invalid_credentials' }));
    expect(sim.requests.length).toBe(before);
  });

  it('OAuth v2: consent at /oauth/v2/authorize (comma-separated bot scopes), the code exchanged at oauth.v2.access for a bot token that works', async () => {
    const variant = manifest.manifest.auth.find((v) => v.type === 'oauth2') as OAuth2Auth;
    expect(variant.authorize_url).toBe('https://slack.com/oauth/v2/authorize');
    expect(variant.token_url).toBe('https://slack.com/api/oauth.v2.access');
    const onSim = (url: string): string => `${sim.url}${new URL(url).pathname}`;
    const consent = authorizeUrl(variant, {
      clientId: sim.oauth.clientId,
      redirectUri: 'https://app.example/cb',
      state: 'st-1',
      authorizeUrl: onSim(variant.authorize_url),
    });
    expect(new URL(consent).searchParams.get('scope')).toBe(variant.scopes?.join(','));
    const redirect = await fetch(consent, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const back = new URL(redirect.headers.get('location') as string);
    expect(back.searchParams.get('state')).toBe('st-1');
    const client = { clientId: sim.oauth.clientId, clientSecret: sim.oauth.clientSecret, tokenUrl: onSim(variant.token_url) };
    const tokens = await exchangeAuthorizationCode(variant, client, back.searchParams.get('code') as string, 'https://app.example/cb');
    expect(tokens.access_token).toMatch(/^xoxb-/);
    const rt = new ConnectorRuntime(manifest, { access_token: tokens.access_token }, { baseUrl: sim.url });
    expect(rt.authVariant).toBe('oauth');
    expect(((await rt.execute('conversations', 'list')) as ListEnvelope).data.length).toBeGreaterThan(0);
    // A reused code is refused (invalid_code in Slack's shape, no access_token).
    await expect(exchangeAuthorizationCode(variant, client, back.searchParams.get('code') as string, 'https://app.example/cb')).rejects.toMatchObject({
      code: 'upstream_credentials_rejected',
    });
  });

  it('check: auth.test proves the token and reports the workspace; a refused token fails the check', async () => {
    const ok = await slack().check();
    expect(ok).toEqual({
      ok: true,
      connector_type: 'slack',
      checked: true,
      info: { team_id: 'T12345678', team: 'Subarachnoid Workspace', url: 'https://subarachnoid.slack.com/', user_id: 'W12345678', bot_id: expect.any(String) },
    });
    expect(sent('/auth.test').at(-1)?.headers.authorization).toBe(`Bearer ${BOT}`);
    const e = await failure(slack({ token: 'xoxb-unknown' }).check());
    expect(e.code).toBe('upstream_credentials_rejected');
  });
});

// PostgreSQL shows as skipped, with the reason, when SWITCHBOARD_TEST_POSTGRES_URL is not set.
describeEachDialect('slack sync on %s', (name) => {
  const open = (groups?: MigrationGroup[]): Promise<TestDatabase> => openTestDatabase(name, groups);
  let tdb: TestDatabase;
  let store: RecordStore;
  let engine: SyncEngine;
  let syncSim: OpenApiSimulator;
  beforeAll(async () => {
    syncSim = await startOpenApiSimulator({ description: `${DIR}slack-web-api.json`, sidecar, seed: 9, rateLimit: false });
    tdb = await open();
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test' });
    engine = new SyncEngine({
      database: tdb.database,
      sink: store,
      fullRefreshEvery: 3,
      runtimeFor: async () => ({ manifest, runtime: new ConnectorRuntime(manifest, { token: BOT }, { baseUrl: syncSim.url, limiter: null }) }),
    });
    await engine.register('sl-1');
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
    await syncSim.close();
  });

  it('full, then incremental by ts (oldest), then a full refresh that drops deleted messages', async () => {
    const r = (n: string): Resource => syncSim.resources.get(n) as Resource;
    const channels = [...r('conversations').records.values()].filter((s) => s.record.is_member === true).map((s) => String(s.record.id));
    const inMember = [...r('messages').records.values()].filter((s) => channels.includes(s.parents.channel as string));
    expect(inMember.length).toBeGreaterThan(0);

    const full = await engine.runOnce('sl-1');
    expect(full).toMatchObject({
      full: true,
      entities: { conversations: { records: 5 }, users: { records: 5 }, usergroups: { records: 5 }, messages: { records: inMember.length } },
    });
    expect(await store.count('sl-1', 'messages')).toBe(inMember.length);
    const newest = inMember
      .map((s) => String(s.record.ts))
      .sort()
      .at(-1) as string;

    // A new message, then an incremental run: history is asked for messages after the newest ts.
    const channel = channels[0] as string;
    const rt = new ConnectorRuntime(manifest, { token: BOT }, { baseUrl: syncSim.url, limiter: null });
    const posted = (await rt.execute('messages', 'create', { channel, text: 'Incremental hello' })) as RecordEnvelope;
    syncSim.reset();
    const inc = await engine.runOnce('sl-1');
    expect(inc.full).toBe(false);
    expect(inc.entities['messages']?.records).toBe(1);
    const history = syncSim.requests.filter((q) => q.path === '/conversations.history');
    expect(history).toHaveLength(channels.length);
    for (const q of history) expect(q.query.get('oldest')).toBe(newest);
    const def = { primaryKey: 'id', fields: manifest.entities.get('messages')!.def.search!.fields as Record<string, 'string'> };
    const hit = await store.search('sl-1', 'messages', def, { query: { filter: { eq: { id: posted.data.id as string } } }, fields: ['id', 'text', 'channel'] });
    expect(hit.data).toEqual([{ id: posted.data.id, text: 'Incremental hello', channel }]);

    // A message deleted upstream: the incremental run cannot see it; the full refresh removes it.
    const gone = inMember[0]!;
    r('messages').records.delete(String(gone.record.ts));
    const gid = `${String(gone.parents.channel)}:${String(gone.record.ts)}`;
    expect((await engine.runOnce('sl-1')).full).toBe(false);
    expect((await store.search('sl-1', 'messages', def, { query: { filter: { eq: { id: gid } } } })).data).toHaveLength(1);
    const refresh = await engine.runOnce('sl-1');
    expect(refresh.full).toBe(true);
    expect(refresh.entities['messages']?.deleted).toBe(1);
    expect((await store.search('sl-1', 'messages', def, { query: { filter: { eq: { id: gid } } } })).data).toEqual([]);
    expect(await store.count('sl-1', 'messages')).toBe(inMember.length);
  });
});

describe('rate limits: a bucket per method, in its tier', () => {
  const bucket = (entity: string, action: string, params: Record<string, unknown>) =>
    callBucket(manifest, manifest.entities.get(entity)!.actions.get(action as 'list')!, { params, credentials: { token: BOT }, config: {} });

  it('Tier 2 by default, one bucket per method; the other tiers as declared', () => {
    expect(bucket('conversations', 'list', {})?.rate).toMatchObject({ requests: 20, window_ms: 60000 });
    expect(bucket('users', 'list', {})?.id).not.toBe(bucket('conversations', 'list', {})?.id);
    expect(bucket('messages', 'list', { channel: 'C1' })?.rate).toMatchObject({ requests: 50, window_ms: 60000 });
    expect(bucket('users', 'get', { user: 'U1' })?.rate).toMatchObject({ requests: 100, window_ms: 60000 });
  });

  it('chat.postMessage: 1 a second per channel', () => {
    const c1 = bucket('messages', 'create', { channel: 'C1', text: 'a' });
    expect(c1?.rate).toMatchObject({ requests: 1, window_ms: 1000 });
    expect(bucket('messages', 'create', { channel: 'C1', text: 'b' })).toEqual(c1);
    expect(bucket('messages', 'create', { channel: 'C2', text: 'a' })?.id).not.toBe(c1?.id);
  });
});
