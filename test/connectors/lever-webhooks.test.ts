/**
 * Lever's webhooks: the body carries `signature`, the hex HMAC-SHA256 of its `token` followed by its
 * `triggeredAt`, keyed with the webhook's signature token (the body itself is not signed); a
 * delivery seen before is a replay; stage changes fetch the opportunity, deletions delete it.
 */
import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getConnector } from '../../src/index.ts';
import { receiverFor, type ReceiverUnderTest } from '../helpers/webhooks.ts';

const TOKEN = 'lever-signature-token-3c9f1a';
const CONNECTOR = '77777777-7777-4777-8777-777777777777';
const OPPORTUNITY = '250d8f03-738a-4bba-a671-8a3d73477145';
let t: ReceiverUnderTest;
beforeEach(async () => {
  t = await receiverFor(getConnector('lever'), { secret: TOKEN, connectors: [CONNECTOR] });
});
afterEach(() => t.close());

const body = (event: string, key = TOKEN, at = Date.now()) => {
  const token = '8a1c2e4f9b7d';
  return JSON.stringify({
    triggeredAt: at,
    event,
    token,
    signature: createHmac('sha256', key).update(`${token}${at}`).digest('hex'),
    data: { opportunityId: OPPORTUNITY, candidateId: OPPORTUNITY, contactId: '4a3d8f2e-1b7c-4e9a-8d6f-2c5b0a9e7d13' },
  });
};

describe('lever webhooks', () => {
  it('accepts the HMAC of token + triggeredAt; refuses a forged one and a replay', async () => {
    const raw = body('candidateStageChange');
    expect(await t.receiver.receive(t.delivery(raw, {}, CONNECTOR))).toMatchObject({ status: 200, body: { entity: 'opportunities', id: OPPORTUNITY } });
    expect(t.gets).toEqual([{ entity: 'opportunities', params: { opportunity: OPPORTUNITY } }]);
    await expect(t.receiver.receive(t.delivery(raw, {}, CONNECTOR))).rejects.toMatchObject({ code: 'webhook_replayed' });
    await expect(t.receiver.receive(t.delivery(body('candidateDeleted', 'guessed-token'), {}, CONNECTOR))).rejects.toMatchObject({
      code: 'webhook_signature_invalid',
    });
    // The body's other fields are not signed: only its token and time are.
    const tampered = JSON.parse(body('candidateDeleted')) as Record<string, unknown>;
    expect(await t.receiver.receive(t.delivery(JSON.stringify(tampered), {}, CONNECTOR))).toMatchObject({ status: 200 });
    expect(t.applied.at(-1)).toMatchObject({ entity: 'opportunities', deletions: [OPPORTUNITY] });
  });
});
