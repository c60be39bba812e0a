/**
 * The webhook receiver's bounds and refusals, without HTTP: deliveries beyond the in-flight
 * limit are refused at once with webhook_queue_full (and processed again once a slot is free);
 * a delivery that fails while being applied is not remembered, so the vendor's retry of it is
 * processed rather than refused as a replay; a type whose secret is not configured is
 * webhooks_not_configured.
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
import { WebhookReceiver, type ReceiverOptions } from '../../src/webhooks/receive.ts';

const SECRET = 'signing-secret';
const CONNECTOR = '11111111-1111-4111-8111-111111111111';

describe('webhook receiver', () => {
  let database: Database;
  let applied: string[];
  let gates: { release: () => void; fail: (e: Error) => void }[];
  let receiver: WebhookReceiver;
  let n = 0;

  const options = (over: Partial<ReceiverOptions> = {}): ReceiverOptions => ({
    db: database.db as unknown as Kysely<EventsTables>,
    registry: connectorRegistry(),
    applier: () => ({ applyDelivery: async (connectorId: string, entity: { name: string }, deliveryId: string) => { applied.push(deliveryId); return { connector_id: connectorId, entity: entity.name, added: 1, updated: 0, deleted: 0, source: { webhook: deliveryId } }; } }) as unknown as ChangeApplier,
    secretFor: () => SECRET,
    connectorsOfType: async () => [{ id: CONNECTOR, status: 'active' }],
    connector: async (id) => (id === CONNECTOR ? { id, status: 'active', connector_type: 'monday' } : undefined),
    // Every get waits until the test releases (or fails) it.
    runtimeFor: async () => ({ execute: () => new Promise((resolve, reject) => gates.push({ release: () => resolve({ data: { id: '1' } }), fail: reject })) }) as unknown as ConnectorRuntime,
    now: Date.now,
    queueLimit: 2,
    ...over,
  });
  const delivery = async (uuid = `u-${++n}`) => ({
    type: 'monday',
    connectorId: CONNECTOR,
    headers: { authorization: await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('5m').sign(new TextEncoder().encode(SECRET)) },
    raw: Buffer.from(JSON.stringify({ event: { type: 'create_pulse', pulseId: 1, triggerUuid: uuid } })),
  });
  const waitForGates = async (k: number): Promise<void> => {
    while (gates.length < k) await new Promise((r) => setImmediate(r));
  };

  beforeEach(async () => {
    database = openDatabase(':memory:');
    await migrate(database, [eventsMigrations]);
    applied = [];
    gates = [];
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
    expect(applied.sort()).toEqual(['a', 'b', 'c']);
  });

  it("a delivery that failed while applied is not a replay when the vendor retries it; a processed one is", async () => {
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

  it('no secret configured: webhooks_not_configured, naming the variable', async () => {
    const r = new WebhookReceiver(options({ secretFor: () => undefined }));
    await expect(r.receive(await delivery())).rejects.toMatchObject({ code: 'webhooks_not_configured', message: expect.stringContaining('SWITCHBOARD_MONDAY_WEBHOOK_SECRET') });
  });
});
