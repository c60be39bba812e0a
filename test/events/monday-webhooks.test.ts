/**
 * monday webhooks in, with the monday simulator: the challenge handshake is echoed; a
 * JWT-signed create_pulse delivery to the connector's URL stores the item (hydrated through
 * get) with no sync; a wrong or missing JWT and a replayed trigger are 401 and store nothing;
 * delete_pulse removes the item; a URL naming another connector is 404. SQLite always,
 * PostgreSQL when configured.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startMondaySimulator, type MondaySimulator } from '../../src/sandbox/monday/index.ts';
import { describeEachDialect, startHarness, type Harness, type Reply } from '../service/helpers.ts';

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

  const jwt = (secret = SIGNING_SECRET): Promise<string> =>
    new SignJWT({ accountId: 1, userId: 2, aud: 'https://example.test/webhooks' }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(secret));
  const event = (type: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    event: { app: 'monday', type, triggerTime: new Date().toISOString(), subscriptionId: 73759690, userId: 2, boardId: Number(boardId), pulseId: Number(itemId), triggerUuid: `uuid-${dialect}-${++n}`, ...extra },
  });
  const deliver = async (body: unknown, authorization?: string | null, connectorId = id): Promise<Reply> =>
    h.request('POST', `/api/v1/webhooks/monday/${connectorId}`, { raw: JSON.stringify(body), headers: authorization === null ? {} : { authorization: authorization ?? (await jwt()) } });

  beforeAll(async () => {
    sim = await startMondaySimulator({ size: 10 });
    h = await startHarness(dialect, { config: { upstreamThrottle: false, connectorTypes: { monday: { baseUrl: sim.url, webhookSecret: SIGNING_SECRET } } } });
    token = await h.token(await h.createApp('org-monday-hooks'));
    const r = await h.request('POST', CONNECTORS, { token, body: { customer_name: 'c1', connector_type: 'monday', name: 'm', credentials: { api_key: sim.apiKey } } });
    expect(r.status, r.text).toBe(201);
    id = r.body.id;
    const boards = await h.request('POST', `${CONNECTORS}/${id}/execute`, { token, body: { entity: 'boards', action: 'list', params: {} } });
    expect(boards.status, boards.text).toBe(200);
    for (const b of boards.body.data as { id: string }[]) {
      const items = await h.request('POST', `${CONNECTORS}/${id}/execute`, { token, body: { entity: 'items', action: 'list', params: { board_id: b.id, limit: 1 } } });
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

  it('a JWT-signed create_pulse stores the item, fetched through get, with no sync; a replay is 401', async () => {
    const body = event('create_pulse', { pulseName: 'ignored: the item is fetched' });
    const r = await deliver(body);
    expect(r.status, r.text).toBe(200);
    expect(r.body.connectors).toEqual([{ connector_id: id, added: 1, updated: 0, deleted: 0 }]);
    const stored = await h.service.ctx.records.getRecord(id, 'items', itemId);
    expect(stored).toMatchObject({ id: itemId, board: { id: boardId } });
    const again = await deliver(body);
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('webhook_replayed');
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
    const r = await h.request('POST', `${CONNECTORS}/${id}/webhook-subscriptions`, { token, body: { params: { board_id: boardId }, events: ['create_item', 'item_deleted'] } });
    expect(r.status, r.text).toBe(201);
    expect(r.body.url).toBe(`${h.url}/api/v1/webhooks/monday/${id}`);
    expect(r.body.data).toEqual([expect.objectContaining({ board_id: boardId, event: 'create_item' }), expect.objectContaining({ board_id: boardId, event: 'item_deleted' })]);
    // A URL that does not answer the challenge is refused by monday.
    const bad = await h.request('POST', `${CONNECTORS}/${id}/execute`, { token, body: { entity: 'webhooks', action: 'create', params: { board_id: boardId, event: 'create_item', url: `${h.url}/healthz` } } });
    expect(bad.status, bad.text).toBe(422);
  });

  it('a URL naming no monday connector is 404', async () => {
    const r = await deliver(event('create_pulse'), undefined, '00000000-0000-4000-8000-000000000000');
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('connector_not_found');
  });
});
