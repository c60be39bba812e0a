/**
 * Microsoft Teams' quirks: connectors/microsoft_teams/connector.yaml (with ../_shared/microsoft.yaml,
 * the parts every Microsoft Graph connector shares) run by the interpreter over real HTTP against
 * the generic simulator serving Graph's own description (trimmed by trim.mjs). What every connector
 * shares is the conformance suite's; here: Graph's throttling (429 with Retry-After, retried), a
 * thread posted and replied to under its team and channel (a channel's record naming its team),
 * and the sync: messages of every channel of every joined team with their replies, then Graph's
 * delta filtered on lastModifiedDateTime, chat messages by $filter with the $orderby Graph
 * requires, and a message Graph reports deleted leaving search; change-notification subscriptions
 * on a channel's messages made, renewed and deleted (the shared Graph subscriptions part).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorizeUrl } from '../../src/auth/index.ts';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import type { OAuth2Auth } from '../../src/manifest/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/microsoft_teams';
const manifest = getConnector('microsoft_teams');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as Rec;

const start = (): Promise<OpenApiSimulator> => startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 5, rateLimit: false });
let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await start();
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const teams = (on = sim) => new ConnectorRuntime(manifest, CREDENTIALS, { baseUrl: on.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const data = async (p: Promise<unknown>): Promise<Rec[]> => ((await p) as ListEnvelope).data as Rec[];

describe('microsoft_teams', () => {
  it('asks for the Teams scopes on the tenant’s OAuth URLs; waits out a 429’s Retry-After, and reports throttling that lasts', async () => {
    const oauth = manifest.manifest.auth.find((v): v is OAuth2Auth => v.type === 'oauth2')!;
    expect(oauth.scopes).toEqual(
      expect.arrayContaining(['offline_access', 'Team.ReadBasic.All', 'ChannelMessage.Read.All', 'ChannelMessage.Send', 'Chat.ReadWrite']),
    );
    const url = new URL(authorizeUrl(oauth, { clientId: 'app', redirectUri: 'https://sb.example/cb', state: 's', credentials: { tenant: 'organizations' } }));
    expect(`${url.origin}${url.pathname}`).toBe('https://login.microsoftonline.com/organizations/oauth2/v2.0/authorize');

    const throttled = { status: 429, headers: { 'Retry-After': '0' }, json: { error: { code: 'TooManyRequests', message: 'Too many requests.' } } };
    sim.inject({ path: '/me/joinedTeams', ...throttled });
    expect((await data(teams().execute('teams', 'list', {}))).map((t) => t['displayName'])).toEqual([
      'Northwind Engineering',
      'Northwind Sales',
      'Launch 2027',
    ]);
    expect(sim.requests.filter((r) => r.path === '/me/joinedTeams')).toHaveLength(2);

    sim.inject({ path: '/me/joinedTeams', ...throttled, times: 10 });
    const err = await failure(teams().execute('teams', 'list', {}));
    expect(err.code).toBe('upstream_rate_limited');
    expect(err.message).toContain('Too many requests.');
  });

  it('posts a thread to a channel of a team and replies in it; channels name their team', async () => {
    const rt = teams();
    const [team] = await data(rt.execute('teams', 'list', {}));
    const channels = await data(rt.execute('channels', 'list', { team_id: team!['id'] }));
    expect(channels.map((c) => [c['team_id'], String(c['id'])])).toEqual(
      channels.map(() => [team!['id'], expect.stringMatching(/^19:[0-9a-f]{32}@thread\.tacv2$/)]),
    );
    const channel = channels[0]!;
    const ids = { team_id: team!['id'], channel_id: channel['id'] };
    const posted = (
      (await rt.execute('channel_messages', 'create', {
        ...ids,
        subject: 'Release 4.2',
        body: { contentType: 'html', content: '<p>Ships Thursday.</p>' },
      })) as RecordEnvelope
    ).data;
    expect(sim.requests.at(-1)!.path).toBe(`/teams/${String(team!['id'])}/channels/${encodeURIComponent(String(channel['id']))}/messages`);
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ subject: 'Release 4.2', body: { contentType: 'html', content: '<p>Ships Thursday.</p>' } });
    expect(posted).toMatchObject({
      id: expect.stringMatching(/^\d{13}$/),
      subject: 'Release 4.2',
      channelIdentity: { teamId: team!['id'], channelId: channel['id'] },
    });

    const reply = (
      (await rt.execute('channel_message_replies', 'create', {
        ...ids,
        channel_message_id: posted['id'],
        body: { contentType: 'text', content: 'Noted.' },
      })) as RecordEnvelope
    ).data;
    expect(reply).toMatchObject({ replyToId: posted['id'], body: { content: 'Noted.' } });
    const replies = await data(rt.execute('channel_message_replies', 'list', { ...ids, channel_message_id: posted['id'] }));
    expect(replies.map((r) => r['id'])).toEqual([reply['id']]);
    const got = ((await rt.execute('channel_messages', 'get', { ...ids, channel_message_id: posted['id'] })) as RecordEnvelope).data;
    expect(got['subject']).toBe('Release 4.2');
  });

  it('subscribes to a channel’s messages, renews and deletes the subscription; the clientState Graph echoes stays out of records', async () => {
    const rt = teams();
    const resource = 'teams/0b3a9a1e-4c2d-4e0f-9a8b-7c6d5e4f3a2b/channels/19:general@thread.tacv2/messages';
    const made = (
      (await rt.execute('subscriptions', 'create', {
        resource,
        change_type: 'created,updated,deleted',
        notification_url: 'https://sb.example/api/v1/webhooks/microsoft_teams/conn_01',
        expiration_date_time: '2026-11-29T13:00:00Z',
        client_state: 'sb-teams-clientstate-secret',
      })) as RecordEnvelope
    ).data as Rec;
    expect([sim.requests.at(-1)!.method, sim.requests.at(-1)!.path]).toEqual(['POST', '/subscriptions']);
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toMatchObject({ resource, clientState: 'sb-teams-clientstate-secret' });
    expect(made).toMatchObject({ resource });
    expect(JSON.stringify(made)).not.toContain('clientstate');
    expect(JSON.stringify(await data(rt.execute('subscriptions', 'list', {})))).not.toContain('clientstate');
    const renewed = (
      (await rt.execute('subscriptions', 'update', { subscription_id: made['id'], expiration_date_time: '2026-11-29T13:55:00Z' })) as RecordEnvelope
    ).data as Rec;
    expect([sim.requests.at(-1)!.method, JSON.parse(sim.requests.at(-1)!.rawBody)]).toEqual(['PATCH', { expirationDateTime: '2026-11-29T13:55:00Z' }]);
    expect(renewed).toMatchObject({ id: made['id'], expirationDateTime: '2026-11-29T13:55:00Z' });
    const deleted = ((await rt.execute('subscription_deletions', 'create', { subscription_id: made['id'] })) as RecordEnvelope).data;
    expect([sim.requests.at(-1)!.method, sim.requests.at(-1)!.path]).toEqual(['DELETE', `/subscriptions/${String(made['id'])}`]);
    expect(deleted).toEqual({ id: made['id'], deleted: true });
    expect(await failure(rt.execute('subscriptions', 'get', { subscription_id: made['id'] }))).toMatchObject({ code: 'upstream_not_found' });
    // Hosted, a connector subscribes through subscriptions.create (webhooks.subscribe).
    expect(manifest.manifest.webhooks?.subscribe).toMatchObject({ entity: 'subscriptions', action: 'create' });
  });

  describe('sync', () => {
    let fresh: OpenApiSimulator;
    let tdb: TestDatabase;
    let store: RecordStore;
    let engine: SyncEngine;
    beforeAll(async () => {
      fresh = await start();
      tdb = await openTestDatabase('sqlite');
      await migrate(tdb.database, [syncMigrations]);
      store = new RecordStore(tdb.database, { cursorSecret: 'test-secret' });
      engine = new SyncEngine({ database: tdb.database, sink: store, runtimeFor: async () => ({ manifest, runtime: teams(fresh) }), fullRefreshEvery: 100 });
    });
    afterAll(async () => {
      await engine.stop();
      await tdb.close();
      await fresh.close();
    });

    it('reads every channel’s messages with their replies, then the delta since the newest change; a deleted message leaves search', async () => {
      await engine.register('t');
      const full = await engine.runOnce('t');
      expect(full.entities['teams']!.records).toBe(3);
      expect(full.entities['channels']!.records).toBe(6);
      expect(full.entities['channel_messages']!.records).toBe(18);
      expect(full.entities['chats']!.records).toBe(4);
      expect(full.entities['chat_messages']!.records).toBe(12);
      const listed = fresh.requests.filter((r) => /^\/teams\/[^/]+\/channels\/[^/]+\/messages$/.test(r.path));
      expect(listed).toHaveLength(6);
      for (const r of listed) expect([r.query.get('$top'), r.query.get('$expand')]).toEqual(['50', 'replies']);

      const newest = '2026-01-01T17:00:00.000Z'; // the 18th seeded message, an hour apart from the first
      const [first] = [...fresh.resources.get('channels_messages')!.records.values()];
      const gone = String(first!.record['id']);
      fresh.updateRecord('channels_messages', gone, { deletedDateTime: '2026-11-20T10:00:00Z', body: { contentType: 'html', content: '' } });
      fresh.reset();
      const inc = await engine.runOnce('t');
      expect(inc.full).toBe(false);
      const deltas = fresh.requests.filter((r) => r.path.endsWith('/messages/delta'));
      expect(deltas).toHaveLength(6);
      for (const r of deltas) expect([r.query.get('$filter'), r.query.get('$top')]).toEqual([`lastModifiedDateTime gt ${newest}`, '50']);
      expect(inc.entities['channel_messages']).toMatchObject({ deleted: 1 });
      expect(await store.count('t', 'channel_messages')).toBe(17);
      const chats = fresh.requests.filter((r) => /^\/chats\/[^/]+\/messages$/.test(r.path));
      expect(chats).toHaveLength(4);
      for (const r of chats) {
        expect(r.query.get('$orderby')).toBe('lastModifiedDateTime desc');
        expect(r.query.get('$filter')).toBe('lastModifiedDateTime gt 2026-01-01T05:30:00.000Z'); // the 12th seeded chat message
      }
    });
  });
});
