/**
 * Close's webhooks: close-sig-hash is the hex HMAC-SHA256 of close-sig-timestamp followed by the raw
 * body, keyed with the subscription's signature_key read as hex bytes; deliveries name their
 * organization (the connectors' check organization_id) and the changed object, fetched through get
 * or deleted.
 */
import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getConnector } from '../../src/index.ts';
import { receiverFor, type ReceiverUnderTest } from '../helpers/webhooks.ts';

const KEY = '9a4f2c7e1b8d3a6f0c5e2b9d7a1f4c8e3b6d0a9f2c5e8b1d4a7f0c3e6b9d2a5f';
const ORG = 'orga_3Vqz5mB3c8pPZy0lD2rUxwG1hKkE1nI7WvE8sS6yT0L';
let t: ReceiverUnderTest;
beforeEach(async () => {
  t = await receiverFor(getConnector('close'), { secret: KEY, accounts: { 'conn-close': ORG } });
});
afterEach(() => t.close());

const event = (action: string, id = 'lead_8bQe0iGq9zT3xY2vW7uR5sP1oN4mL6kJ3hG0fD9cB2a') =>
  JSON.stringify({
    subscription_id: 'whsub_5mnGxHIp1ADHUV2rDylkXm',
    event: { id: `ev_${action}_4zXk2`, object_type: 'lead', action, object_id: id, organization_id: ORG, date_created: '2026-11-29T12:00:00.000000' },
  });
const sign = (raw: string, ts: string, key: Buffer | string = Buffer.from(KEY, 'hex')) => ({
  'close-sig-hash': createHmac('sha256', key).update(`${ts}${raw}`).digest('hex'),
  'close-sig-timestamp': ts,
});
const now = () => String(Math.floor(Date.now() / 1000));

describe('close webhooks', () => {
  it('accepts a good signature (the lead fetched through get; a deletion deleted); refuses a forged one, the key as text, and a stale timestamp', async () => {
    const raw = event('updated');
    expect(await t.receiver.receive(t.delivery(raw, sign(raw, now())))).toMatchObject({ status: 200, body: { topic: 'lead.updated', entity: 'leads' } });
    expect(t.gets).toEqual([{ entity: 'leads', params: { id: 'lead_8bQe0iGq9zT3xY2vW7uR5sP1oN4mL6kJ3hG0fD9cB2a' } }]);
    const del = event('deleted');
    await t.receiver.receive(t.delivery(del, sign(del, now())));
    expect(t.applied.at(-1)).toMatchObject({ entity: 'leads', deletions: ['lead_8bQe0iGq9zT3xY2vW7uR5sP1oN4mL6kJ3hG0fD9cB2a'] });
    const other = event('created');
    const forged = { ...sign(other, now()), 'close-sig-hash': createHmac('sha256', 'guess').update(other).digest('hex') };
    await expect(t.receiver.receive(t.delivery(other, forged))).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
    await expect(t.receiver.receive(t.delivery(other, sign(other, now(), KEY)))).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
    const old = String(Math.floor(Date.now() / 1000) - 3600);
    await expect(t.receiver.receive(t.delivery(other, sign(other, old)))).rejects.toMatchObject({ code: 'webhook_replayed' });
  });
});
