/**
 * The webhook receiver's bounds and refusals, without HTTP: deliveries beyond the in-flight
 * limit are refused at once with webhook_queue_full (and processed again once a slot is free);
 * a delivery that fails while being applied is not remembered, so the vendor's retry of it is
 * processed rather than refused as a replay; a type whose secret is not configured is
 * webhooks_not_configured. monday's JWT (issue 37, item 1): exp required and short, aud the URL
 * posted to, accountId the connector's account, the replay key the token's (not the body's);
 * a body nested deeper than 64 levels is 400 (item 3); a record gone upstream is deleted and
 * acknowledged (item 4).
 */
import { SignJWT } from 'jose';
import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConnectorRuntime } from '../../src/engine/index.ts';
import { SwitchboardError } from '../../src/errors/index.ts';
import { eventsMigrations, type EventsTables } from '../../src/events/migrations.ts';
import { connectorRegistry } from '../../src/manifest/index.ts';
import { migrate, openDatabase, type Database } from '../../src/store/database.ts';
import type { ChangeApplier } from '../../src/sync/index.ts';
import type { WebhookAttributions } from '../../src/webhooks/attribution.ts';
import { WebhookReceiver, type Delivery, type ReceiverOptions } from '../../src/webhooks/receive.ts';

const SECRET = 'signing-secret';
const CONNECTOR = '11111111-1111-4111-8111-111111111111';
const INGRESS = `https://switchboard.example/api/v1/webhooks/monday/${CONNECTOR}`;
const ACCOUNT = 4242;

describe('webhook receiver', () => {
  let database: Database;
  let applied: string[];
  let gates: { release: () => void; fail: (e: Error) => void }[];
  let receiver: WebhookReceiver;
  let n = 0;
  let account: { state: 'known'; key: string | null } | { state: 'pending' };
  let kicked: number;
  let getFails: SwitchboardError | undefined;
  let deleted: string[][];

  const options = (over: Partial<ReceiverOptions> = {}): ReceiverOptions => ({
    db: database.db as unknown as Kysely<EventsTables>,
    registry: connectorRegistry(),
    applier: () =>
      ({
        applyDelivery: async (connectorId: string, entity: { name: string }, deliveryId: string, upserts: unknown[], deletions: string[]) => {
          applied.push(deliveryId);
          deleted.push(deletions);
          return {
            connector_id: connectorId,
            entity: entity.name,
            added: upserts.length,
            updated: 0,
            deleted: deletions.length,
            source: { webhook: deliveryId },
          };
        },
      }) as unknown as ChangeApplier,
    secretFor: () => SECRET,
    connector: async (id) => (id === CONNECTOR ? { id, status: 'active', connector_type: 'monday' } : undefined),
    attributions: { stateOf: async () => account, resolveSoon: () => void kicked++ } as unknown as WebhookAttributions,
    // Every get waits until the test releases (or fails) it.
    runtimeFor: async () =>
      ({
        execute: () => {
          if (getFails !== undefined) return Promise.reject(getFails);
          return new Promise((resolve, reject) => gates.push({ release: () => resolve({ data: { id: '1' } }), fail: reject }));
        },
      }) as unknown as ConnectorRuntime,
    now: Date.now,
    queueLimit: 2,
    ...over,
  });
  /** A token as monday signs it: accountId, aud, iat, exp 5 minutes ahead, and a jti (unless `jti` is null). */
  const jwt = async (
    o: { jti?: string | null; claims?: Record<string, unknown>; exp?: string | null; iat?: number; secret?: string } = {},
  ): Promise<string> => {
    let t = new SignJWT({ accountId: ACCOUNT, userId: 2, aud: INGRESS, ...o.claims }).setProtectedHeader({ alg: 'HS256' });
    t = o.iat !== undefined ? t.setIssuedAt(o.iat) : t.setIssuedAt();
    if (o.exp !== null) t = t.setExpirationTime(o.exp ?? '5m');
    if (o.jti !== null) t = t.setJti(o.jti ?? `j-${++n}`);
    return t.sign(new TextEncoder().encode(o.secret ?? SECRET));
  };
  const delivery = async (uuid = `u-${++n}`, token?: string, body?: unknown, raw?: string): Promise<Delivery> => ({
    type: 'monday',
    connectorId: CONNECTOR,
    headers: { authorization: `Bearer ${token ?? (await jwt({ jti: uuid }))}` },
    raw: Buffer.from(raw ?? JSON.stringify(body ?? { event: { type: 'create_pulse', pulseId: 1, triggerUuid: uuid } })),
    ingressUrl: INGRESS,
  });
  const waitForGates = async (k: number): Promise<void> => {
    while (gates.length < k) await new Promise((r) => setImmediate(r));
  };

  beforeEach(async () => {
    database = openDatabase(':memory:');
    await migrate(database, [eventsMigrations]);
    applied = [];
    deleted = [];
    gates = [];
    account = { state: 'known', key: String(ACCOUNT) };
    kicked = 0;
    getFails = undefined;
    receiver = new WebhookReceiver(options());
  });
  afterEach(async () => database.close());

  it('beyond the in-flight limit: webhook_queue_full at once; accepted again when a slot frees', async () => {
    const first = receiver.receive(await delivery('a'));
    const second = receiver.receive(await delivery('b'));
    await waitForGates(2);
    await expect(receiver.receive(await delivery('c'))).rejects.toMatchObject({ code: 'webhook_queue_full' });
    gates[0]!.release();
    expect((await first).status).toBe(200);
    const third = receiver.receive(await delivery('c'));
    await waitForGates(3);
    gates[1]!.release();
    gates[2]!.release();
    expect((await second).status).toBe(200);
    expect((await third).status).toBe(200);
    expect(applied.sort()).toEqual(['jti:a', 'jti:b', 'jti:c']);
  });

  it('a delivery that failed while applied is not a replay when the vendor retries it; a processed one is', async () => {
    const d = await delivery('retry-me');
    const failing = receiver.receive(d);
    await waitForGates(1);
    gates[0]!.fail(new Error('upstream down'));
    await expect(failing).rejects.toThrow('upstream down');
    const retried = receiver.receive(d);
    await waitForGates(2);
    gates[1]!.release();
    expect((await retried).status).toBe(200);
    await expect(receiver.receive(d)).rejects.toMatchObject({ code: 'webhook_replayed' });
  });

  it('a connector whose credentials are refused is skipped; the delivery is acknowledged', async () => {
    const pending = receiver.receive(await delivery('refused'));
    await waitForGates(1);
    gates[0]!.fail(new SwitchboardError('upstream_credentials_rejected', 'token revoked'));
    const r = await pending;
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ connectors: [] });
    expect(applied).toEqual([]);
  });

  it.each([
    ['without exp', () => jwt({ exp: null }), 'exp'],
    ['expiring more than 300 s ahead', () => jwt({ exp: '1h' }), 'expires more than 300 s'],
    ['issued more than 300 s ago', () => jwt({ iat: Math.floor(Date.now() / 1000) - 900 }), 'issued more than 300 s ago'],
    ['for another URL (aud)', () => jwt({ claims: { aud: 'https://attacker.example/hook' } }), 'aud'],
    ['without aud', () => jwt({ claims: { aud: undefined } }), 'aud'],
    ['for another monday account', () => jwt({ claims: { accountId: 999 } }), 'another account'],
    ['naming no account', () => jwt({ claims: { accountId: undefined } }), 'does not name its account'],
  ])('a JWT %s is 401 and nothing is applied', async (_n, token, message) => {
    const r = receiver.receive(await delivery(undefined, await token()));
    await expect(r).rejects.toMatchObject({ code: 'webhook_signature_invalid', message: expect.stringContaining(message) });
    expect(gates).toEqual([]);
    expect(applied).toEqual([]);
  });

  it('the replay key is the token: another triggerUuid in the body does not make a token new; without jti, its hash', async () => {
    for (const jti of ['fixed', null]) {
      const token = await jwt({ jti });
      const first = receiver.receive(await delivery('body-1', token));
      await waitForGates(gates.length + 1);
      gates.at(-1)!.release();
      expect((await first).status).toBe(200);
      await expect(receiver.receive(await delivery('body-2', token))).rejects.toMatchObject({ code: 'webhook_replayed' });
      await expect(receiver.receive(await delivery('body-3', token, { event: { type: 'delete_pulse', pulseId: 1 } }))).rejects.toMatchObject({
        code: 'webhook_replayed',
      });
    }
    expect(applied).toEqual(['jti:fixed', expect.stringMatching(/^sha256:[0-9a-f]{64}$/)]);
  });

  it('the same delivery in parallel is applied once; the others are replays', async () => {
    receiver = new WebhookReceiver(options({ queueLimit: 10 }));
    const d = await delivery('parallel');
    const all = Array.from({ length: 5 }, () => receiver.receive(d));
    const replays = all.map((p) =>
      p.then(
        () => 'ok',
        (e: SwitchboardError) => e.code,
      ),
    );
    await waitForGates(1);
    gates[0]!.release();
    expect((await Promise.all(replays)).sort()).toEqual(['ok', 'webhook_replayed', 'webhook_replayed', 'webhook_replayed', 'webhook_replayed'].sort());
    expect(applied).toEqual(['jti:parallel']);
  });

  it("a connector whose account is not known yet: 503 webhook_attribution_pending, resolution started in the background, and the vendor's retry is not a replay", async () => {
    account = { state: 'pending' };
    const d = await delivery('early');
    await expect(receiver.receive(d)).rejects.toMatchObject({ code: 'webhook_attribution_pending', status: 503 });
    expect(kicked).toBe(1);
    account = { state: 'known', key: String(ACCOUNT) };
    const retried = receiver.receive(d);
    await waitForGates(1);
    gates[0]!.release();
    expect((await retried).status).toBe(200);
  });

  it('a body nested more than 64 levels is 400 invalid_json_depth, before anything else', async () => {
    const nested = (levels: number): string => `{"event":{"type":"create_pulse","pulseId":1,"x":${'{"d":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}}}`;
    await expect(receiver.receive(await delivery(undefined, undefined, undefined, nested(5000)))).rejects.toMatchObject({
      code: 'invalid_json_depth',
      status: 400,
    });
    await expect(receiver.receive(await delivery(undefined, undefined, undefined, nested(63)))).rejects.toMatchObject({
      code: 'invalid_json_depth',
      status: 400,
    });
    // 64 levels (the root, event, and 62 below) are fine: the depth every other request body may have.
    const fine = receiver.receive(await delivery(undefined, undefined, undefined, nested(62)));
    await waitForGates(1);
    gates[0]!.release();
    expect((await fine).status).toBe(200);
  });

  it("the challenge is echoed only at a connector's URL", async () => {
    const body = { challenge: 'abc' };
    expect(await receiver.receive({ ...(await delivery()), headers: {}, raw: Buffer.from(JSON.stringify(body)) })).toEqual({ status: 200, body });
    await expect(
      receiver.receive({ ...(await delivery()), connectorId: '00000000-0000-4000-8000-000000000000', headers: {}, raw: Buffer.from(JSON.stringify(body)) }),
    ).rejects.toMatchObject({ code: 'connector_not_found' });
    const { connectorId: _omit, ...noId } = await delivery();
    await expect(receiver.receive({ ...noId, headers: {}, raw: Buffer.from(JSON.stringify(body)) })).rejects.toMatchObject({ code: 'connector_not_found' });
  });

  it('a hydrated record gone upstream (get answers not found) is acknowledged and the local copy deleted', async () => {
    getFails = new SwitchboardError('upstream_not_found', 'no such item');
    const r = await receiver.receive(await delivery('gone'));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ connectors: [{ connector_id: CONNECTOR, added: 0, deleted: 1 }] });
    expect(deleted).toEqual([['1']]);
  });

  it('no secret configured: webhooks_not_configured, naming the variable', async () => {
    const r = new WebhookReceiver(options({ secretFor: () => undefined }));
    await expect(r.receive(await delivery())).rejects.toMatchObject({
      code: 'webhooks_not_configured',
      message: expect.stringContaining('SWITCHBOARD_MONDAY_WEBHOOK_SECRET'),
    });
  });
});
