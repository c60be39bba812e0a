/**
 * Microsoft Teams' change notifications (Microsoft Graph subscriptions on chatMessage): a batch
 * {value: [...]}, each notification checked on its own clientState (a wrong one skipped, a batch of
 * only wrong ones refused); the resource names the team and channel, or the chat, which get reads;
 * a reply's notification requests a sync (replies are read within their thread). The
 * validationToken handshake is still echoed as text.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getConnector } from '../../src/index.ts';
import { receiverFor, type ReceiverUnderTest } from '../helpers/webhooks.ts';

const SECRET = 'sb-teams-clientstate-4b8e1f06';
const CONNECTOR = 'conn-teams';
const TEAM = 'fbe2bf47-16c8-47cf-b4a5-4b9b187c508b';
const CHANNEL = '19:4a95f7d8db4c4e7fae857bcebe0623e6@thread.tacv2';
const CHAT = '19:2da4c29f6d7041eca70b638b43d45437@thread.v2';
let t: ReceiverUnderTest;
beforeEach(async () => {
  t = await receiverFor(getConnector('microsoft_teams'), { secret: SECRET, connectors: [CONNECTOR] });
});
afterEach(() => t.close());

const notification = (changeType: string, resource: string, id: string, clientState = SECRET) => ({
  subscriptionId: '10493aa0-4d29-4df5-bc0c-ef742cc6cd7f',
  changeType,
  clientState,
  subscriptionExpirationDateTime: '2026-11-29T15:55:48.1937213+00:00',
  resource,
  resourceData: { id, '@odata.type': '#Microsoft.Graph.chatMessage', '@odata.id': resource },
  tenantId: '9188040d-6c67-4c5b-b112-36a304b66dad',
});
const channelMsg = (id: string) => `teams('${TEAM}')/channels('${CHANNEL}')/messages('${id}')`;
const batch = (...value: unknown[]) => JSON.stringify({ value });

describe('microsoft_teams webhooks', () => {
  it('fetches a channel message and a chat message with the ids their resource names, deletes a deleted one, syncs on a reply', async () => {
    const raw = batch(
      notification('created', channelMsg('1764425100000'), '1764425100000'),
      notification('updated', `chats('${CHAT}')/messages('1764425200000')`, '1764425200000'),
      notification('deleted', channelMsg('1764425000000'), '1764425000000'),
      notification('created', `${channelMsg('1764425100000')}/replies('1764425300000')`, '1764425300000'),
    );
    const a = await t.receiver.receive(t.delivery(raw, {}, CONNECTOR));
    expect(a).toMatchObject({
      status: 202,
      body: { events: [{ entity: 'channel_messages' }, { entity: 'chat_messages' }, { entity: 'channel_messages' }, { sync_requested: [CONNECTOR] }] },
    });
    expect(t.gets).toEqual([
      { entity: 'channel_messages', params: { team_id: TEAM, channel_id: CHANNEL, channel_message_id: '1764425100000' } },
      { entity: 'chat_messages', params: { chat_id: CHAT, chat_message_id: '1764425200000' } },
    ]);
    expect(t.applied.map((x) => [x.entity, x.deletions])).toEqual([
      ['channel_messages', []],
      ['chat_messages', []],
      ['channel_messages', ['1764425000000']],
    ]);
    expect(t.syncs).toEqual([CONNECTOR]);
    const missed = { subscriptionId: '10493aa0-4d29-4df5-bc0c-ef742cc6cd7f', clientState: SECRET, lifecycleEvent: 'missed', resource: channelMsg('1') };
    expect(await t.receiver.receive(t.delivery(batch(missed), {}, CONNECTOR))).toMatchObject({ body: { events: [{ sync_requested: [CONNECTOR] }] } });
    expect(t.syncs).toEqual([CONNECTOR, CONNECTOR]);
  });

  it('skips a notification with a wrong clientState; refuses a batch with none right', async () => {
    const raw = batch(notification('deleted', channelMsg('1'), '1', 'wrong'), notification('deleted', channelMsg('2'), '2'));
    expect(await t.receiver.receive(t.delivery(raw, {}, CONNECTOR))).toMatchObject({ status: 202, body: { refused: 1 } });
    expect(t.applied.map((x) => x.deletions)).toEqual([['2']]);
    const forged = batch(notification('deleted', channelMsg('3'), '3', 'wrong'));
    await expect(t.receiver.receive(t.delivery(forged, {}, CONNECTOR))).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
    expect(t.applied).toHaveLength(1);
  });

  it('echoes the validationToken handshake', async () => {
    const d = { ...t.delivery('', {}, CONNECTOR), query: { validationToken: 'Validation: Testing client application reachability' } };
    expect(await t.receiver.receive(d)).toMatchObject({ status: 200, body: 'Validation: Testing client application reachability', contentType: 'text/plain' });
  });
});
