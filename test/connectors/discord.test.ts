/**
 * Discord's quirks, end to end: connectors/discord/connector.yaml run by the interpreter over real
 * HTTP against the generic simulator serving Discord's own description (trimmed from
 * discord/discord-api-spec) with its sidecar — no Discord-specific simulator code. What every
 * connector shares is the conformance suite's; here: the bot token as `Authorization: Bot <token>`,
 * a route's 429 whose body says how long to wait (retried after it), snowflake ids paging messages
 * back by `before` and guilds forward by `after`, a reply's message_reference, and the sync of
 * messages per text channel, new ones by `after` the last id seen.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { RecordStore, searchMigrations } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate, openDatabase } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';
import { callBucket } from '../../src/engine/index.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/discord';
const manifest = getConnector('discord');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as Record<string, string>;

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 3, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const discord = (credentials: Rec = CREDENTIALS) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = async (entity: string, action: string, params: Rec): Promise<ListEnvelope & RecordEnvelope> =>
  (await discord().execute(entity, action, params)) as ListEnvelope & RecordEnvelope;
/** Every guild's channels. */
const allChannels = async (): Promise<Rec[]> => {
  const channels: Rec[] = [];
  for (const g of (await run('guilds', 'list', {})).data as Rec[]) channels.push(...((await run('channels', 'list', { guild_id: g['id'] })).data as Rec[]));
  return channels;
};
/** The seeded text channels (type 0). */
const textChannels = async (): Promise<Rec[]> => (await allChannels()).filter((c) => c['type'] === 0);

describe('discord', () => {
  it("sends the bot token as 'Bot <token>'; the check names the bot user; a wrong token is refused", async () => {
    const checked = await discord().check();
    expect(checked).toMatchObject({ ok: true, info: { user_id: '1274550987654321024', username: 'northwind-helper', bot: true } });
    expect(sim.requests.at(-1)!.headers['authorization']).toBe(`Bot ${CREDENTIALS['bot_token']}`);
    const err = await failure(discord({ bot_token: 'MTA.wrong.token' }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
  });

  it("a route's 429 says how long to wait in its body (retry_after): the call waits and is sent again", async () => {
    const [channel] = await textChannels();
    sim.setRateLimit({ limit: 1, window_seconds: 1 });
    try {
      // Server-asked waits honoured up to 2 s (the bucket's window is 1 s).
      const patient = new ConnectorRuntime(manifest, CREDENTIALS, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 2000 } });
      await patient.execute('channels', 'get', { channel_id: channel!['id'] });
      const before = sim.requests.length;
      const got = (await patient.execute('channels', 'get', { channel_id: channel!['id'] })) as RecordEnvelope;
      expect(got.data).toMatchObject({ id: channel!['id'] });
      expect(sim.requests.length - before).toBeGreaterThanOrEqual(2);
      // Without room to wait, the call fails as rate limited, with Discord's wait.
      const hasty = new ConnectorRuntime(manifest, CREDENTIALS, { baseUrl: sim.url, limiter: null, retry: { maxAttempts: 1 } });
      const err = await failure(hasty.execute('channels', 'get', { channel_id: channel!['id'] }));
      expect(err.code).toBe('upstream_rate_limited');
      expect(err.details['retry_after_ms']).toBeGreaterThan(0);
    } finally {
      sim.setRateLimit(false);
    }
  });

  it('pages messages back in time by before (the last id of each page), newest first, and guilds forward by after', async () => {
    const [channel] = await textChannels();
    const channelId = channel!['id'] as string;
    for (let i = 0; i < 5; i++) await run('messages', 'create', { channel_id: channelId, content: `Build ${i} passed` });
    const pages: string[][] = [];
    for await (const page of discord().pages('messages', { channel_id: channelId, limit: 3 })) pages.push((page.data as Rec[]).map((m) => m['id'] as string));
    const ids = pages.flat();
    expect(new Set(ids).size).toBe(ids.length);
    const sorted = [...ids].sort((a, b) => (a.length !== b.length ? b.length - a.length : b < a ? -1 : 1));
    expect(ids).toEqual(sorted);
    const sent = sim.requests.filter((r) => r.path === `/channels/${channelId}/messages` && r.method === 'GET').map((r) => r.query.get('before'));
    expect(sent.slice(0, 2)).toEqual([null, pages[0]!.at(-1)]);
    const newest = (await run('messages', 'list', { channel_id: channelId, limit: 1 })).data as Rec[];
    expect(newest[0]).toMatchObject({ content: 'Build 4 passed' });
    const guildPages: number[] = [];
    for await (const page of discord().pages('guilds', { limit: 2 })) guildPages.push(page.data.length);
    expect(guildPages.slice(0, 2)).toEqual([2, 1]);
  });

  it('replies to a message (message_reference), edits it, and reads it back', async () => {
    const [channel] = await textChannels();
    const channelId = channel!['id'] as string;
    const first = (await run('messages', 'create', { channel_id: channelId, content: 'Deploy at 5?' })).data as Rec;
    const reply = (
      await run('messages', 'create', {
        channel_id: channelId,
        content: 'Yes',
        reply_to: first['id'],
        allowed_mentions: { parse: [], replied_user: false },
      })
    ).data as Rec;
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({
      content: 'Yes',
      allowed_mentions: { parse: [], replied_user: false },
      message_reference: { message_id: first['id'] },
    });
    await run('messages', 'update', { channel_id: channelId, message_id: reply['id'], content: 'Yes, at 5' });
    expect(sim.requests.at(-1)).toMatchObject({ method: 'PATCH', path: `/channels/${channelId}/messages/${reply['id']}` });
    const got = (await run('messages', 'get', { channel_id: channelId, message_id: reply['id'] })).data as Rec;
    expect(got).toMatchObject({ id: reply['id'], content: 'Yes, at 5' });
    const missing = await failure(run('messages', 'get', { channel_id: channelId, message_id: '1163421849870925824' }));
    expect(missing.code).toBe('upstream_not_found');
  });

  it('syncs guilds, their channels and the messages of text channels, then only messages after the last id seen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'discord-sync-'));
    const database = openDatabase(join(dir, 'records.db'));
    try {
      await migrate(database, [searchMigrations, syncMigrations]);
      const store = new RecordStore(database, { cursorSecret: 'discord' });
      const engine = new SyncEngine({ database, sink: store, fullRefreshEvery: 10, runtimeFor: async () => ({ manifest, runtime: discord() }) });
      await engine.register('discord');
      const full = await engine.runOnce('discord');
      expect(full.entities['guilds']?.records).toBe(3);
      expect(full.entities['channels']?.records).toBeGreaterThan(0);
      // Messages are read in text and announcement channels only, not in voice channels or categories.
      const read = new Set(sim.requests.filter((r) => /^\/channels\/\d+\/messages$/.test(r.path)).map((r) => r.path.split('/')[2]));
      const channels = await allChannels();
      expect(channels.filter((c) => read.has(c['id'] as string)).map((c) => c['type'])).toEqual(expect.arrayContaining([0]));
      expect(channels.filter((c) => read.has(c['id'] as string)).every((c) => c['type'] === 0 || c['type'] === 5)).toBe(true);
      const [channel] = await textChannels();
      await run('messages', 'create', { channel_id: channel!['id'], content: 'New since the last run' });
      const before = sim.requests.length;
      const again = await engine.runOnce('discord');
      expect(again.full).toBe(false);
      const feed = sim.requests.slice(before).filter((r) => r.path === `/channels/${channel!['id']}/messages`);
      expect(feed[0]!.query.get('after')).toMatch(/^\d{17,20}$/);
      expect(again.entities['messages']?.records).toBeGreaterThanOrEqual(1);
      await engine.stop();
    } finally {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('rate limits: a bucket per route and channel or guild, learned from the headers, under the global 50/s', () => {
  const bucket = (entity: string, action: string, params: Rec) =>
    callBucket(manifest, manifest.entities.get(entity)!.actions.get(action as 'list')!, { params, credentials: CREDENTIALS, config: {} });

  it("messages' changes share list's bucket (one route); another channel or route has its own", () => {
    const list = bucket('messages', 'list', { channel_id: '1' });
    expect(bucket('messages', 'changes', { channel_id: '1' })).toEqual(list);
    expect(bucket('messages', 'list', { channel_id: '2' })?.id).not.toBe(list?.id);
    expect(bucket('messages', 'create', { channel_id: '1', content: 'hi' })?.id).not.toBe(list?.id);
    expect(bucket('channels', 'list', { guild_id: '7' })?.id).not.toBe(bucket('channels', 'list', { guild_id: '8' })?.id);
  });

  it('the simulator announces a spent bucket as Discord does, and the manifest reads it', async () => {
    const { learnedWaitMs } = await import('../../src/engine/rate-buckets.ts');
    const spent = new Headers({ 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset-After': '4.2' });
    expect(learnedWaitMs(manifest.manifest, spent)).toBe(4200);
    expect(learnedWaitMs(manifest.manifest, new Headers({ 'X-RateLimit-Remaining': '1', 'X-RateLimit-Reset-After': '4.2' }))).toBeUndefined();
    expect(sidecar.rate_limit?.headers).toMatchObject({ remaining: 'X-RateLimit-Remaining', reset: 'X-RateLimit-Reset-After' });
  });
});
