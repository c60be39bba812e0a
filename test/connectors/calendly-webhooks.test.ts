/**
 * Calendly's webhooks: Calendly-Webhook-Signature "t=<unix>,v1=<hex>" over "<t>.<raw body>" with the
 * subscription's signing key, t within 3 minutes; the delivery names the subscription's creator,
 * which must be the connector's user; the invitee comes whole in the payload.
 */
import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getConnector } from '../../src/index.ts';
import { receiverFor, type ReceiverUnderTest } from '../helpers/webhooks.ts';

const KEY = 'sandbox-calendly-signing-key-7Qp2';
const USER = 'https://api.calendly.com/users/AAAAAAAAAAAAAAAA';
const CONNECTOR = '66666666-6666-4666-8666-666666666666';
let t: ReceiverUnderTest;
beforeEach(async () => {
  t = await receiverFor(getConnector('calendly'), { secret: KEY, accounts: { [CONNECTOR]: USER } });
});
afterEach(() => t.close());

const invitee = {
  uri: 'https://api.calendly.com/scheduled_events/GBGBDCAADAEDCRZ2/invitees/AAAAAAAAAAAAAAAA',
  email: 'ada@northwind.example',
  name: 'Ada Okafor',
  status: 'active',
  event: 'https://api.calendly.com/scheduled_events/GBGBDCAADAEDCRZ2',
  created_at: '2026-11-29T12:00:00.000000Z',
};
const body = (createdBy = USER, at = '2026-11-29T12:00:01.000000Z') =>
  JSON.stringify({ event: 'invitee.created', created_at: at, created_by: createdBy, payload: invitee });
const header = (raw: string, ts: number, key = KEY) => ({
  'calendly-webhook-signature': `t=${ts},v1=${createHmac('sha256', key).update(`${ts}.${raw}`).digest('hex')}`,
});
const now = () => Math.floor(Date.now() / 1000);

describe('calendly webhooks', () => {
  it('accepts "<t>.<body>" signed with the key and applies the invitee; refuses a forged, stale or other-user delivery', async () => {
    const raw = body();
    expect(await t.receiver.receive(t.delivery(raw, header(raw, now()), CONNECTOR))).toMatchObject({
      status: 200,
      body: { entity: 'invitees', id: invitee.uri },
    });
    expect(t.applied).toEqual([{ entity: 'invitees', upserts: [invitee], deletions: [] }]);
    await expect(t.receiver.receive(t.delivery(raw, header(raw, now(), 'not-the-key'), CONNECTOR))).rejects.toMatchObject({
      code: 'webhook_signature_invalid',
    });
    // Signed right four minutes ago: outside Calendly's three.
    await expect(t.receiver.receive(t.delivery(raw, header(raw, now() - 240), CONNECTOR))).rejects.toMatchObject({ code: 'webhook_replayed' });
    const other = body('https://api.calendly.com/users/BBBBBBBBBBBBBBBB', '2026-11-29T12:00:02.000000Z');
    await expect(t.receiver.receive(t.delivery(other, header(other, now()), CONNECTOR))).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
  });
});
