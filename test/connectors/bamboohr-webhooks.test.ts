/**
 * BambooHR's webhooks: X-BambooHR-Signature is the hex HMAC-SHA256 of the raw body followed by
 * X-BambooHR-Timestamp, keyed with the webhook's private key; a delivery lists employees, not their
 * records, so the connector's sync is requested.
 */
import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getConnector } from '../../src/index.ts';
import { receiverFor, type ReceiverUnderTest } from '../helpers/webhooks.ts';

const KEY = 'b7e2f9a41c6d8e3f0a5b2c9d7e1f4a8b';
const CONNECTOR = '88888888-8888-4888-8888-888888888888';
let t: ReceiverUnderTest;
beforeEach(async () => {
  t = await receiverFor(getConnector('bamboohr'), { secret: KEY, connectors: [CONNECTOR] });
});
afterEach(() => t.close());

const raw = JSON.stringify({
  employees: [{ id: '112', action: 'Updated', changedFields: ['jobTitle'], fields: { jobTitle: 'Staff Engineer' }, timestamp: '2026-11-29T12:00:00+00:00' }],
});
const sign = (ts: string, key = KEY) => ({ 'x-bamboohr-signature': createHmac('sha256', key).update(`${raw}${ts}`).digest('hex'), 'x-bamboohr-timestamp': ts });
const now = () => String(Math.floor(Date.now() / 1000));

describe('bamboohr webhooks', () => {
  it('accepts body + timestamp signed with the private key (a sync requested); refuses a forged signature and a stale timestamp', async () => {
    expect(await t.receiver.receive(t.delivery(raw, sign(now()), CONNECTOR))).toMatchObject({
      status: 200,
      body: { topic: 'employees', entity: 'employees', sync_requested: [CONNECTOR] },
    });
    expect(t.syncs).toEqual([CONNECTOR]);
    await expect(t.receiver.receive(t.delivery(raw, sign(now(), 'another-key'), CONNECTOR))).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
    const ts = now();
    const bodyOnly = { ...sign(ts), 'x-bamboohr-signature': createHmac('sha256', KEY).update(raw).digest('hex') };
    await expect(t.receiver.receive(t.delivery(raw, bodyOnly, CONNECTOR))).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
    await expect(t.receiver.receive(t.delivery(raw, sign(String(Number(ts) - 3600)), CONNECTOR))).rejects.toMatchObject({ code: 'webhook_replayed' });
  });
});
