/**
 * Vendor webhooks in, end to end with the Intercom simulator: a signed contact.user.updated
 * delivery makes the change searchable with no sync and shows in the change feed as updated; a
 * mis-signed, unsigned, replayed or stale one is 401 and changes nothing; a deletion carries the
 * id only and shows as deleted; a conversation topic is hydrated through get; a workspace no
 * connector belongs to is acknowledged and ignored. Issue 37: attribution is learned when a
 * connector is created or checked, never by checks inside a delivery's request, so twenty broken
 * connectors of another organization cannot keep a workspace's deliveries from its connector
 * (item 2); a delivery nobody claims while connectors are still being resolved is 503 (the vendor
 * retries), failed checks are remembered with backoff; a conversation gone upstream is
 * acknowledged and its local copy dropped (item 4). SQLite always, PostgreSQL when configured.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Kysely } from 'kysely';
import { startIntercomSimulator, type IntercomSimulator } from '../../connectors/intercom/simulator/index.ts';
import { PENDING_FAILURES, RESOLVE_BATCH } from '../../src/webhooks/attribution.ts';
import type { WebhooksInTables } from '../../src/webhooks/migrations.ts';
import { describeEachDialect, openApiErrors, startHarness, type Harness, type Reply } from '../service/helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const HOOK = '/api/v1/webhooks/intercom';
const TOKEN = 'sk_webhook_test_intercom_token_5a1';
const CLIENT_SECRET = 'intercom-app-client-secret-for-tests';

describeEachDialect('Intercom webhooks in on %s', (dialect) => {
  let sim: IntercomSimulator;
  let h: Harness;
  let token: string;
  let id: string;
  let appId: string;
  let seq = 0;

  const sign = (raw: string, secret = CLIENT_SECRET): string => `sha1=${createHmac('sha1', secret).update(raw).digest('hex')}`;
  const notification = (
    topic: string,
    item: Record<string, unknown>,
    o: { app_id?: string; id?: string; created_at?: number } = {},
  ): Record<string, unknown> => ({
    type: 'notification_event',
    app_id: o.app_id ?? appId,
    data: { type: 'notification_event_data', item },
    links: {},
    id: o.id ?? `notif_${dialect}_${++seq}`,
    topic,
    delivery_status: 'pending',
    delivery_attempts: 1,
    delivered_at: 0,
    first_sent_at: o.created_at ?? Math.floor((Date.now() + h.clock.offsetMs) / 1000),
    created_at: o.created_at ?? Math.floor((Date.now() + h.clock.offsetMs) / 1000),
  });
  const deliver = (body: unknown, signature?: string | null): Promise<Reply> => {
    const raw = JSON.stringify(body);
    return h.request('POST', HOOK, { raw, headers: signature === null ? {} : { 'x-hub-signature': signature ?? sign(raw) } });
  };
  const searchByName = async (name: string): Promise<string[]> => {
    const r = await h.request('POST', `${CONNECTORS}/${id}/execute`, {
      token,
      body: { entity: 'contacts', action: 'search', params: { query: { filter: { eq: { name } } }, fields: ['id'] } },
    });
    expect(r.status, r.text).toBe(200);
    return r.body.data.map((d: { id: string }) => d.id);
  };
  const feedAfter = async (cursor: string | null): Promise<{ data: { id: string; name?: string; _metadata: { action: string } }[]; next_cursor: string }> => {
    const r = await h.request('GET', `${CONNECTORS}/${id}/records?entity=contacts${cursor === null ? '' : `&modified_after=${cursor}`}&limit=1000`, { token });
    expect(r.status, r.text).toBe(200);
    return r.body;
  };
  const endCursor = async (): Promise<string> => {
    let cursor: string | null = null;
    for (;;) {
      const page = await feedAfter(cursor);
      cursor = page.next_cursor;
      if (page.data.length < 1000) return cursor;
    }
  };

  beforeAll(async () => {
    sim = await startIntercomSimulator({ size: 30, rateLimit: false, accessToken: TOKEN });
    h = await startHarness(dialect, {
      config: { upstreamThrottle: false, connectorTypes: { intercom: { baseUrl: sim.url, oauth: { clientId: 'intercom-app', clientSecret: CLIENT_SECRET } } } },
    });
    token = await h.token(await h.createApp('org-hooks'));
    const r = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'c1', connector_type: 'intercom', name: 'ic', credentials: { access_token: TOKEN } },
    });
    expect(r.status, r.text).toBe(201);
    id = r.body.id;
    appId = sim.workspaceId;
    await h.service.ctx.sync.runOnce(id, { full: true });
  });
  afterAll(async () => {
    await h?.close();
    await sim?.close();
  });

  it('a signed contact.user.updated makes the change searchable with no sync, and the feed says updated', async () => {
    const cursor = await endCursor();
    const target = (await h.service.ctx.records.getRecord(id, 'contacts', (await feedAfter(null)).data[0]!.id))!;
    const r = await deliver(notification('contact.user.updated', { ...target, name: 'Grace Webhook' }));
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ ok: true, entity: 'contacts', id: target['id'], connectors: [{ connector_id: id, added: 0, updated: 1, deleted: 0 }] });
    expect(openApiErrors('POST', '/api/v1/webhooks/{connector_type}', r)).toEqual([]);
    expect(await searchByName('Grace Webhook')).toEqual([target['id']]);
    const feed = await feedAfter(cursor);
    expect(feed.data.map((d) => [d.id, d._metadata.action, d.name])).toEqual([[target['id'], 'updated', 'Grace Webhook']]);
  });

  it.each([
    ['mis-signed (another secret)', (raw: string) => sign(raw, 'not-the-secret'), 'webhook_signature_invalid'],
    ['unsigned', () => null, 'webhook_signature_invalid'],
    ['signed with a digest of another body', () => sign('{}'), 'webhook_signature_invalid'],
  ])('%s: 401 and nothing changes', async (_n, signature, code) => {
    const target = (await feedAfter(null)).data[1]!;
    const before = await h.snapshot();
    const cursor = await endCursor();
    const body = notification('contact.user.updated', { ...(await h.service.ctx.records.getRecord(id, 'contacts', target.id)), name: 'Mallory' });
    const raw = JSON.stringify(body);
    const sig = signature(raw);
    const r = await h.request('POST', HOOK, { raw, headers: sig === null ? {} : { 'x-hub-signature': sig } });
    expect(r.status, r.text).toBe(401);
    expect(r.body.code).toBe(code);
    expect(await searchByName('Mallory')).toEqual([]);
    expect((await feedAfter(cursor)).data).toEqual([]);
    expect(await h.snapshot()).toBe(before);
  });

  it('a replay (same delivery id) and a stale timestamp are 401 webhook_replayed', async () => {
    const target = (await feedAfter(null)).data[2]!;
    const record = await h.service.ctx.records.getRecord(id, 'contacts', target.id);
    const first = notification('contact.user.updated', { ...record, name: 'Replay One' });
    expect((await deliver(first)).status).toBe(200);
    const again = await deliver({ ...first, data: { type: 'notification_event_data', item: { ...record, name: 'Replay Two' } } });
    expect(again.status, again.text).toBe(401);
    expect(again.body.code).toBe('webhook_replayed');
    const stale = await deliver(
      notification('contact.user.updated', { ...record, name: 'Replay Three' }, { created_at: Math.floor(Date.now() / 1000) - 3600 }),
    );
    expect(stale.status).toBe(401);
    expect(stale.body.code).toBe('webhook_replayed');
    expect(await searchByName('Replay Two')).toEqual([]);
    expect(await searchByName('Replay Three')).toEqual([]);
    expect(await searchByName('Replay One')).toEqual([target.id]);
  });

  it('contact.deleted carries the id only: the record leaves search and the feed says deleted', async () => {
    const cursor = await endCursor();
    const target = (await feedAfter(null)).data[3]!;
    const r = await deliver(notification('contact.deleted', { type: 'contact', id: target.id }));
    expect(r.status, r.text).toBe(200);
    expect(r.body.connectors).toEqual([{ connector_id: id, added: 0, updated: 0, deleted: 1 }]);
    expect(await h.service.ctx.records.getRecord(id, 'contacts', target.id)).toBeUndefined();
    const feed = await feedAfter(cursor);
    expect(feed.data.map((d) => [d.id, d._metadata.action])).toEqual([[target.id, 'deleted']]);
  });

  it('a conversation topic is hydrated through get', async () => {
    const convId = (
      await h.request('POST', `${CONNECTORS}/${id}/execute`, { token, body: { entity: 'conversations', action: 'list', params: { per_page: 1 } } })
    ).body.data[0].id as string;
    await h.service.ctx.records.deleteRecords(id, 'conversations', [convId]);
    const r = await deliver(notification('conversation.admin.replied', { type: 'conversation', id: convId }));
    expect(r.status, r.text).toBe(200);
    expect(r.body.connectors).toEqual([{ connector_id: id, added: 1, updated: 0, deleted: 0 }]);
    expect((await h.service.ctx.records.getRecord(id, 'conversations', convId))?.['id']).toBe(convId);
  });

  it('a workspace no connector belongs to, and a topic with no rule, are acknowledged and ignored', async () => {
    const other = await deliver(notification('contact.user.updated', { type: 'contact', id: 'x1', name: 'Nobody' }, { app_id: 'zzzzzzzz' }));
    expect(other.status, other.text).toBe(200);
    expect(other.body.connectors).toEqual([]);
    const ping = await deliver(notification('ping', { type: 'ping', message: 'hi' }));
    expect(ping.status).toBe(200);
    expect(ping.body.ignored).toBeDefined();
  });

  it('a connector type without webhooks is 404', async () => {
    const r = await h.request('POST', '/api/v1/webhooks/granola', { raw: '{}', headers: {} });
    expect(r.status).toBe(404);
  });

  it('a conversation deleted upstream since: the delivery is acknowledged (2xx) and the local copy dropped', async () => {
    // A local copy of a conversation the workspace no longer has (get answers 404).
    const entity = h.service.ctx.registry.get('intercom')!.entities.get('conversations')!;
    const stored = (sim.records('conversations') as Record<string, unknown>[])[0]!;
    const gone = `${String(stored['id'])}9090`;
    await h.service.ctx.sync.applier.upsert(id, entity, [{ ...stored, id: gone }]);
    expect(await h.service.ctx.records.getRecord(id, 'conversations', gone)).toBeDefined();
    const r = await deliver(notification('conversation.user.replied', { type: 'conversation', id: gone }));
    expect(r.status, r.text).toBe(200);
    expect(r.body.connectors).toEqual([{ connector_id: id, added: 0, updated: 0, deleted: 1 }]);
    expect(await h.service.ctx.records.getRecord(id, 'conversations', gone)).toBeUndefined();
  });

  describe('attribution', () => {
    const attributions = (): Kysely<WebhooksInTables> => h.service.ctx.database.db as unknown as Kysely<WebhooksInTables>;
    let broken: string[];
    let victim: string;

    it("is learned when a connector is created: twenty-one broken connectors of another organization do not keep a workspace's deliveries from it, and none is checked in the delivery", async () => {
      const attacker = await h.token(await h.createApp('org-attacker'));
      broken = [];
      for (let i = 0; i < 21; i++) {
        const r = await h.request('POST', `${CONNECTORS}?check=false`, {
          token: attacker,
          body: { customer_name: `b${i}`, connector_type: 'intercom', name: `broken-${i}`, credentials: { access_token: `sk_broken_${i}` } },
        });
        expect(r.status, r.text).toBe(201);
        broken.push(r.body.id);
      }
      const victimToken = await h.token(await h.createApp('org-victim'));
      const v = await h.request('POST', CONNECTORS, {
        token: victimToken,
        body: { customer_name: 'v', connector_type: 'intercom', name: 'victim', credentials: { access_token: TOKEN } },
      });
      expect(v.status, v.text).toBe(201);
      victim = v.body.id;
      const r = await deliver(notification('contact.user.updated', { type: 'contact', id: 'attributed-1', name: 'Attributed Once' }));
      expect(r.status, r.text).toBe(200);
      expect(r.body.connectors.map((c: { connector_id: string }) => c.connector_id).sort()).toEqual([id, victim].sort());
      await h.service.ctx.webhookAttributions.settled();
      // The delivery was claimed: no background pass was started, and no broken connector was checked.
      const rows = await attributions().selectFrom('webhook_attributions').select('connector_id').where('connector_id', 'in', broken).execute();
      expect(rows).toEqual([]);
    });

    it('a delivery nobody claims while connectors are still being resolved is 503 with Retry-After; failed checks are remembered with backoff, then it is acknowledged', async () => {
      const unclaimed = () => deliver(notification('contact.user.updated', { type: 'contact', id: 'nobody-1', name: 'Nobody' }, { app_id: 'unknownws' }));
      const failures = async (): Promise<number[]> =>
        (await attributions().selectFrom('webhook_attributions').select('failures').where('connector_id', 'in', broken).execute())
          .map((r) => Number(r.failures))
          .sort();
      // Each unclaimed delivery starts at most one background pass of RESOLVE_BATCH checks.
      for (let pass = 1; pass <= Math.ceil(broken.length / RESOLVE_BATCH); pass++) {
        const r = await unclaimed();
        expect(r.status, r.text).toBe(503);
        expect(r.body.code).toBe('webhook_attribution_pending');
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
        await h.service.ctx.webhookAttributions.settled();
        expect((await failures()).length).toBe(Math.min(broken.length, pass * RESOLVE_BATCH));
      }
      // Remembered: more deliveries before the retry time check nothing again.
      for (let i = 0; i < 3; i++) {
        expect((await unclaimed()).status).toBe(503);
        await h.service.ctx.webhookAttributions.settled();
      }
      expect(await failures()).toEqual(broken.map(() => 1));
      // Past each backoff, the background retries them; after PENDING_FAILURES failures they no longer hold deliveries back.
      for (let round = 2; round <= PENDING_FAILURES; round++) {
        h.clock.offsetMs += 3_600_000;
        for (let pass = 0; pass < Math.ceil(broken.length / RESOLVE_BATCH); pass++) {
          h.service.ctx.webhookAttributions.resolveSoon();
          await h.service.ctx.webhookAttributions.settled();
        }
        expect(await failures()).toEqual(broken.map(() => round));
      }
      const acknowledged = await unclaimed();
      expect(acknowledged.status, acknowledged.text).toBe(200);
      expect(acknowledged.body.connectors).toEqual([]);
      // The victim's deliveries were never held back.
      const r = await deliver(notification('contact.user.updated', { type: 'contact', id: 'attributed-2', name: 'Still Attributed' }));
      expect(r.status, r.text).toBe(200);
      expect(r.body.connectors.map((c: { connector_id: string }) => c.connector_id)).toContain(victim);
    });
  });
});
