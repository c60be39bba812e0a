/**
 * monday webhooks in, with the monday simulator: the challenge handshake is echoed (only at a
 * monday connector's URL); a JWT-signed create_pulse delivery to the connector's URL stores the
 * item (hydrated through get) with no sync; a wrong or missing JWT and a replayed token are 401
 * and store nothing; delete_pulse removes the item; a URL naming another connector is 404.
 * Issue 37, item 1: a token of another monday account (signed with the app's secret, as monday
 * signs every app's deliveries) cannot touch this connector's items; a token replayed with
 * another body, or in parallel, is applied once; webhooks.create only points monday at the
 * connector's own URL; a connector whose account is not known yet answers 503 (retried) and
 * learns it in the background. SQLite always, PostgreSQL when configured.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startMondaySimulator, type MondaySimulator } from '../../connectors/monday/simulator/index.ts';
import { describeEachDialect, startHosted, type Harness, type Reply } from '../service/helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const SIGNING_SECRET = 'monday-app-signing-secret-for-tests';

describeEachDialect('monday webhooks in on %s', (dialect) => {
  let sim: MondaySimulator;
  let h: Harness;
  let token: string;
  let id: string;
  let itemId: string;
  let boardId: string;
  let n = 0;

  const hookUrl = (connectorId = id): string => `${h.url}/api/v1/webhooks/monday/${connectorId}`;
  /** A token as monday signs a delivery to the connector's URL: its account, aud = that URL, 5 minutes of life. */
  const jwt = (secret = SIGNING_SECRET, claims: Record<string, unknown> = {}, connectorId = id): Promise<string> =>
    new SignJWT({ accountId: Number(sim.state.account.id), userId: 2, aud: hookUrl(connectorId), ...claims })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt()
      .setExpirationTime('5m')
      .setJti(`jti-${dialect}-${++n}`)
      .sign(new TextEncoder().encode(secret));
  const event = (type: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    event: {
      app: 'monday',
      type,
      triggerTime: new Date().toISOString(),
      subscriptionId: 73759690,
      userId: 2,
      boardId: Number(boardId),
      pulseId: Number(itemId),
      triggerUuid: `uuid-${dialect}-${++n}`,
      ...extra,
    },
  });
  const deliver = async (body: unknown, authorization?: string | null, connectorId = id): Promise<Reply> =>
    h.request('POST', `/api/v1/webhooks/monday/${connectorId}`, {
      raw: JSON.stringify(body),
      headers: authorization === null ? {} : { authorization: authorization ?? (await jwt(SIGNING_SECRET, {}, connectorId)) },
    });

  beforeAll(async () => {
    sim = await startMondaySimulator({ size: 10 });
    ({ h, token } = await startHosted(dialect, {
      org: 'org-monday-hooks',
      upstreams: { monday: sim.url },
      config: { connectorTypes: { monday: { webhookSecret: SIGNING_SECRET } } },
    }));
    const r = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'c1', connector_type: 'monday', name: 'm', credentials: { api_key: sim.apiKey } },
    });
    expect(r.status, r.text).toBe(201);
    id = r.body.id;
    const boards = await h.request('POST', `${CONNECTORS}/${id}/execute`, { token, body: { entity: 'boards', action: 'list', params: {} } });
    expect(boards.status, boards.text).toBe(200);
    for (const b of boards.body.data as { id: string }[]) {
      const items = await h.request('POST', `${CONNECTORS}/${id}/execute`, {
        token,
        body: { entity: 'items', action: 'list', params: { board_id: b.id, limit: 1 } },
      });
      if (items.body?.data?.length > 0) {
        boardId = b.id;
        itemId = items.body.data[0].id;
        break;
      }
    }
    expect(itemId).toBeDefined();
  });
  afterAll(async () => {
    await h?.close();
    await sim?.close();
  });

  it('the challenge is echoed', async () => {
    const r = await deliver({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' }, null);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
  });

  it('a wrong or missing JWT is 401 and stores nothing', async () => {
    for (const auth of [await jwt('another-secret'), null, 'Bearer not-a-jwt']) {
      const r = await deliver(event('create_pulse'), auth);
      expect(r.status, r.text).toBe(401);
      expect(r.body.code).toBe('webhook_signature_invalid');
    }
    expect(await h.service.ctx.records.getRecord(id, 'items', itemId)).toBeUndefined();
  });

  it('a JWT-signed create_pulse stores the item, fetched through get, with no sync; its token again, even with another triggerUuid, is a replay', async () => {
    const body = event('create_pulse', { pulseName: 'ignored: the item is fetched' });
    const token = await jwt();
    const r = await deliver(body, token);
    expect(r.status, r.text).toBe(200);
    expect(r.body.connectors).toEqual([{ connector_id: id, added: 1, updated: 0, deleted: 0 }]);
    const stored = await h.service.ctx.records.getRecord(id, 'items', itemId);
    expect(stored).toMatchObject({ id: itemId, board: { id: boardId } });
    for (const replay of [body, event('delete_pulse'), { ...body, event: { ...(body['event'] as object), triggerUuid: undefined } }]) {
      const again = await deliver(replay, token);
      expect(again.status, again.text).toBe(401);
      expect(again.body.code).toBe('webhook_replayed');
    }
    expect(await h.service.ctx.records.getRecord(id, 'items', itemId)).toBeDefined();
  });

  it("a token of another monday account, one for another URL, and one without exp cannot delete this connector's item", async () => {
    const before = await h.snapshot();
    const forged = [
      await jwt(SIGNING_SECRET, { accountId: 1 }),
      await jwt(SIGNING_SECRET, { aud: 'https://tenant.example/hook' }),
      await new SignJWT({ accountId: Number(sim.state.account.id), aud: hookUrl() })
        .setProtectedHeader({ alg: 'HS256' })
        .sign(new TextEncoder().encode(SIGNING_SECRET)),
    ];
    for (const token of forged) {
      const r = await deliver(event('delete_pulse'), token);
      expect(r.status, r.text).toBe(401);
      expect(r.body.code).toBe('webhook_signature_invalid');
    }
    expect(await h.snapshot()).toBe(before);
  });

  it('the same delivery posted in parallel is applied once; the others are replays', async () => {
    const body = event('update_name');
    const token = await jwt();
    const replies = await Promise.all(Array.from({ length: 6 }, () => deliver(body, token)));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 401, 401, 401, 401, 401]);
    expect(replies.filter((r) => r.status === 401).every((r) => r.body.code === 'webhook_replayed')).toBe(true);
  });

  it('delete_pulse removes the item; the change feed says deleted', async () => {
    const r = await deliver(event('delete_pulse'));
    expect(r.status, r.text).toBe(200);
    expect(r.body.connectors).toEqual([{ connector_id: id, added: 0, updated: 0, deleted: 1 }]);
    expect(await h.service.ctx.records.getRecord(id, 'items', itemId)).toBeUndefined();
    const feed = await h.request('GET', `${CONNECTORS}/${id}/records?entity=items`, { token });
    expect(feed.body.data.map((d: { id: string; _metadata: { action: string } }) => [d.id, d._metadata.action])).toEqual([[itemId, 'deleted']]);
  });

  it("opting in creates monday subscriptions (create_webhook) pointed at the connector's URL; monday's challenge is answered", async () => {
    const r = await h.request('POST', `${CONNECTORS}/${id}/webhook-subscriptions`, {
      token,
      body: { params: { board_id: boardId }, events: ['create_item', 'item_deleted'] },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.url).toBe(`${h.url}/api/v1/webhooks/monday/${id}`);
    expect(r.body.data).toEqual([
      expect.objectContaining({ board_id: boardId, event: 'create_item' }),
      expect.objectContaining({ board_id: boardId, event: 'item_deleted' }),
    ]);
    // execute of webhooks.create: any other URL (the tenant's own server) is refused before monday is asked ...
    for (const url of [`${h.url}/healthz`, 'https://tenant.example/hook', hookUrl('00000000-0000-4000-8000-000000000000')]) {
      const bad = await h.request('POST', `${CONNECTORS}/${id}/execute`, {
        token,
        body: { entity: 'webhooks', action: 'create', params: { board_id: boardId, event: 'create_item', url } },
      });
      expect(bad.status, bad.text).toBe(400);
      expect(bad.body.code).toBe('webhook_ingress_url_only');
    }
    // ... and without one, the connector's own URL is filled in (monday's challenge is answered there).
    const own = await h.request('POST', `${CONNECTORS}/${id}/execute`, {
      token,
      body: { entity: 'webhooks', action: 'create', params: { board_id: boardId, event: 'change_name' } },
    });
    expect(own.status, own.text).toBe(200);
    expect(own.body.data).toMatchObject({ board_id: boardId, event: 'change_name' });
  });

  it('a connector created without a check: its account is learned in the background; until then deliveries are 503 with Retry-After, not lost', async () => {
    const r = await h.request('POST', `${CONNECTORS}?check=false`, {
      token,
      body: { customer_name: 'c2', connector_type: 'monday', name: 'unchecked', credentials: { api_key: sim.apiKey } },
    });
    expect(r.status, r.text).toBe(201);
    const other = r.body.id as string;
    const body = event('delete_pulse');
    const early = await deliver(body, undefined, other);
    expect(early.status, early.text).toBe(503);
    expect(early.body.code).toBe('webhook_attribution_pending');
    expect(Number(early.headers.get('retry-after'))).toBeGreaterThan(0);
    await h.service.ctx.webhookAttributions.settled();
    expect(await h.service.ctx.webhookAttributions.stateOf(other)).toEqual({ state: 'known', key: sim.state.account.id });
    const retried = await deliver(body, undefined, other);
    expect(retried.status, retried.text).toBe(200);
  });

  it('a URL naming no monday connector is 404, and its challenge is not echoed', async () => {
    const r = await deliver(event('create_pulse'), undefined, '00000000-0000-4000-8000-000000000000');
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('connector_not_found');
    const challenge = await deliver({ challenge: 'x' }, null, '00000000-0000-4000-8000-000000000000');
    expect(challenge.status).toBe(404);
    expect(challenge.body.code).toBe('connector_not_found');
  });
});
