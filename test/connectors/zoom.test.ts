/**
 * Zoom's quirks: connectors/zoom/connector.yaml run by the interpreter over real HTTP against the
 * generic simulator serving Zoom's own description (trimmed by trim.mjs) with its sidecar. What
 * every connector shares (each entity × action, sync) is the conformance suite's; here: a
 * Server-to-Server OAuth app's token (grant_type account_credentials with the account id, client
 * id and secret as HTTP Basic) got once and reused, `me` as the token's own user in list paths,
 * updates answered 204 and read back, and webhooks in with the shipped manifest: the
 * endpoint.url_validation handshake answered with the token's HMAC, deliveries verified by
 * HMAC-SHA256 of "v0:<timestamp>:<body>" and attributed by the account id the check reports.
 */
import { createHmac } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { eventsMigrations, type EventsTables } from '../../src/events/migrations.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate, openDatabase } from '../../src/store/database.ts';
import type { ChangeApplier } from '../../src/sync/index.ts';
import type { WebhookAttributions } from '../../src/webhooks/attribution.ts';
import { WebhookReceiver } from '../../src/webhooks/receive.ts';
import { failure } from '../helpers/errors.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/zoom';
const manifest = getConnector('zoom');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { access_token: string };
const S2S = { account_id: 'q6gBJVO5TzexKYTb_I2rpg', client_id: 'sim_client', client_secret: 'sim_secret' };

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 3, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const zoom = (credentials: Rec = CREDENTIALS) =>
  new ConnectorRuntime(manifest, credentials, {
    baseUrl: sim.url,
    limiter: null,
    oauthClient: { clientId: '', clientSecret: '', tokenUrl: `${sim.url}/oauth/token` },
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
  });

describe('zoom', () => {
  it('a Server-to-Server app gets its token with account_credentials (Basic client auth) once, and uses it as a bearer', async () => {
    const rt = zoom(S2S);
    const me = (await rt.execute('users', 'get', { user_id: 'me' })) as RecordEnvelope;
    expect(me.data).toMatchObject({ email: 'ada@northwind.example', account_id: S2S.account_id });
    await rt.execute('users', 'list', { page_size: 2 });
    const tokens = sim.requests.filter((r) => r.path === '/oauth/token');
    expect(tokens).toHaveLength(1);
    expect(tokens[0]!.headers['authorization']).toBe(`Basic ${Buffer.from('sim_client:sim_secret').toString('base64')}`);
    expect(Object.fromEntries(new URLSearchParams(tokens[0]!.rawBody))).toEqual({ grant_type: 'account_credentials', account_id: S2S.account_id });
    const api = sim.requests.filter((r) => r.path !== '/oauth/token');
    expect(api.map((r) => r.path)).toEqual(['/users/me', '/users']);
    expect(new Set(api.map((r) => r.headers['authorization']))).toHaveProperty('size', 1);
    expect(api[0]!.headers['authorization']).toMatch(/^Bearer eyJ/);
    const refused = await failure(zoom({ ...S2S, client_secret: 'wrong' }).check());
    expect(refused.code).toBe('upstream_credentials_rejected');
    expect(refused.message).not.toContain('wrong');
  });

  it("lists the token's own meetings under /users/me, pages by next_page_token, and reads an update (204) back", async () => {
    const rt = zoom();
    const pages: Rec[][] = [];
    for await (const page of rt.pages('meetings', { user_id: 'me', type: 'scheduled', page_size: 2 })) pages.push((page as ListEnvelope).data as Rec[]);
    expect(pages.length).toBeGreaterThan(1);
    const queries = sim.requests.filter((r) => r.path === '/users/me/meetings').map((r) => r.query.get('next_page_token'));
    expect(queries[0]).toBeNull();
    expect(queries.slice(1).every((q) => typeof q === 'string' && q !== '')).toBe(true);
    const first = pages[0]![0]!;
    expect(first['id']).toEqual(expect.any(Number));
    const updated = (await rt.execute('meetings', 'update', { meeting_id: first['id'], topic: 'Renamed sync', duration: 50 })) as RecordEnvelope;
    expect(updated.data).toMatchObject({ id: first['id'], topic: 'Renamed sync', duration: 50 });
    expect(sim.requests.slice(-2).map((r) => `${r.method} ${r.path}`)).toEqual([
      `PATCH /meetings/${String(first['id'])}`,
      `GET /meetings/${String(first['id'])}`,
    ]);
  });

  it("creates a webinar under me: the sidecar's template, not the description's sample, and listed under the user's own id", async () => {
    const rt = zoom();
    const me = ((await rt.execute('users', 'get', { user_id: 'me' })) as RecordEnvelope).data as Rec;
    const params = { user_id: 'me', topic: 'Holiday AMA', type: 5, duration: 45, start_time: '2026-12-21T17:00:00Z' };
    const created = ((await rt.execute('webinars', 'create', params)) as RecordEnvelope).data as Rec;
    expect(created).toMatchObject({ topic: 'Holiday AMA', duration: 45, host_id: me['id'], join_url: `https://us05web.zoom.us/w/${String(created['id'])}` });
    const listed = ((await rt.execute('webinars', 'list', { user_id: me['id'], page_size: 300 })) as ListEnvelope).data as Rec[];
    expect(listed.map((w) => w['id'])).toContain(created['id']);
  });
});

describe('zoom webhooks in (the shipped manifest)', () => {
  const SECRET = 'zoom-secret-token-for-tests';
  const CONNECTOR = '33333333-3333-4333-8333-333333333333';
  const ACCOUNT = 'q6gBJVO5TzexKYTb_I2rpg';

  const receiver = async (deleted: string[][]) => {
    const database = openDatabase(':memory:');
    await migrate(database, [eventsMigrations]);
    return new WebhookReceiver({
      db: database.db as unknown as Kysely<EventsTables>,
      registry: new Map([['zoom', manifest]]),
      applier: () =>
        ({
          applyDelivery: async (connectorId: string, entity: { name: string }, _d: string, _u: unknown[], deletions: string[]) => {
            deleted.push(deletions);
            return { connector_id: connectorId, entity: entity.name, added: 0, updated: 0, deleted: deletions.length, source: {} };
          },
        }) as unknown as ChangeApplier,
      secretFor: (_t, kind) => (kind === 'webhook_secret' ? SECRET : undefined),
      connector: async () => undefined,
      attributions: {
        connectorsWithKey: async (_t: string, key: string) => (key === ACCOUNT ? [CONNECTOR] : []),
        hasPending: async () => false,
      } as unknown as WebhookAttributions,
      runtimeFor: async () => undefined,
      now: Date.now,
      queueLimit: 4,
    });
  };
  const signed = (body: Rec, secret = SECRET) => {
    const raw = JSON.stringify(body);
    const ts = String(Math.floor(Date.now() / 1000));
    const signature = `v0=${createHmac('sha256', secret).update(`v0:${ts}:${raw}`).digest('hex')}`;
    return {
      type: 'zoom',
      headers: { 'x-zm-signature': signature, 'x-zm-request-timestamp': ts },
      raw: Buffer.from(raw),
      ingressUrl: 'https://sb.example/api/v1/webhooks/zoom',
    };
  };

  it('answers endpoint.url_validation with {plainToken, encryptedToken}; applies a signed meeting.deleted to the account’s connector; refuses a bad signature', async () => {
    const deleted: string[][] = [];
    const r = await receiver(deleted);
    const validation = { event: 'endpoint.url_validation', payload: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw' }, event_ts: Date.now() };
    expect(await r.receive(signed(validation))).toEqual({
      status: 200,
      body: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw', encryptedToken: createHmac('sha256', SECRET).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex') },
    });
    const event = {
      event: 'meeting.deleted',
      event_ts: Date.now(),
      payload: {
        account_id: ACCOUNT,
        operator: 'ada@northwind.example',
        object: { id: 85746065432, uuid: 'aDYlohsHRtCd4ii1uC2+hA==', host_id: 'x', topic: 'Weekly sync' },
      },
    };
    expect(await r.receive(signed(event))).toMatchObject({ status: 200, body: { topic: 'meeting.deleted', entity: 'meetings', id: '85746065432' } });
    expect(deleted).toEqual([['85746065432']]);
    await expect(r.receive(signed(event))).rejects.toMatchObject({ code: 'webhook_replayed' });
    await expect(r.receive(signed({ ...event, event_ts: Date.now() + 1 }, 'not-the-secret'))).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
  });
});
