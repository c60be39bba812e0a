/**
 * Outlook's change notifications (Microsoft Graph subscriptions): a delivery is a batch
 * {value: [...]}, each notification carrying the subscription's clientState (the webhook secret),
 * checked per notification: one with a wrong clientState is skipped, a batch of only wrong ones is
 * refused (401). Each good one is routed on its resource type and changeType, its record fetched
 * through get or deleted; the batch is answered 202. The validationToken handshake is still echoed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getConnector } from '../../src/index.ts';
import { subscriptionParams } from '../../src/webhooks/ingress.ts';
import { receiverFor, type ReceiverUnderTest } from '../helpers/webhooks.ts';

const SECRET = 'sb-graph-clientstate-7f3a9c2e';
const CONNECTOR = 'conn-outlook';
const TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad';
let t: ReceiverUnderTest;
beforeEach(async () => {
  t = await receiverFor(getConnector('outlook'), { secret: SECRET, connectors: [CONNECTOR] });
});
afterEach(() => t.close());

const notification = (changeType: string, type: string, collection: string, id: string, clientState = SECRET) => ({
  subscriptionId: '7f105c7d-2dc5-4530-97cd-4e7ae6534c07',
  subscriptionExpirationDateTime: '2026-12-01T18:23:45.9356913Z',
  changeType,
  resource: `Users/8f3c1d2e-5a6b-4c7d-9e0f-1a2b3c4d5e6f/${collection}/${id}`,
  resourceData: {
    '@odata.type': type,
    '@odata.id': `Users/8f3c1d2e-5a6b-4c7d-9e0f-1a2b3c4d5e6f/${collection}/${id}`,
    '@odata.etag': 'W/"CQAAABYAAADkrWGo7bouTKlsgTZMr9KwAAAUWRHf"',
    id,
  },
  clientState,
  tenantId: TENANT,
});
const MSG = 'AAMkAGUAAAwTW09AAA=';
const batch = (...value: unknown[]) => JSON.stringify({ value });

describe('outlook webhooks', () => {
  it('applies each notification of a batch: a created message fetched through get, a deleted event deleted; answered 202', async () => {
    const raw = batch(
      notification('created', '#Microsoft.Graph.Message', 'Messages', MSG),
      notification('deleted', '#Microsoft.Graph.Event', 'Events', 'AAMkAGI2TG93AAA='),
      notification('updated', '#Microsoft.Graph.Contact', 'Contacts', 'AAMkADc0Zjg3AAA='),
    );
    const a = await t.receiver.receive(t.delivery(raw, { 'content-type': 'application/json' }, CONNECTOR));
    expect(a.status).toBe(202);
    expect(a.body).toMatchObject({ ok: true, events: [{ entity: 'messages', id: MSG }, { entity: 'events' }, { entity: 'contacts' }] });
    expect(t.gets).toEqual([
      { entity: 'messages', params: { message_id: MSG } },
      { entity: 'contacts', params: { contact_id: 'AAMkADc0Zjg3AAA=' } },
    ]);
    expect(t.applied.map((x) => [x.entity, x.deletions])).toEqual([
      ['messages', []],
      ['events', ['AAMkAGI2TG93AAA=']],
      ['contacts', []],
    ]);

    // A lifecycle notification: `missed` requests a sync; reauthorizationRequired is acknowledged and ignored.
    const lifecycle = (lifecycleEvent: string) => ({
      subscriptionId: '7f105c7d-2dc5-4530-97cd-4e7ae6534c07',
      subscriptionExpirationDateTime: '2026-12-01T18:23:45.9356913Z',
      tenantId: TENANT,
      clientState: SECRET,
      lifecycleEvent,
    });
    const l = await t.receiver.receive(t.delivery(batch(lifecycle('missed'), lifecycle('reauthorizationRequired')), {}, CONNECTOR));
    expect(l.body).toMatchObject({
      events: [
        { topic: 'missed', sync_requested: [CONNECTOR] },
        { topic: 'reauthorizationRequired', ignored: 'no topic rule' },
      ],
    });
    expect(t.syncs).toEqual([CONNECTOR]);
  });

  it('skips a notification whose clientState is wrong (the others applied), and refuses a batch with no good one', async () => {
    const raw = batch(
      notification('updated', '#Microsoft.Graph.Message', 'Messages', 'AAMkForged0AAA=', 'guessed'),
      notification('updated', '#Microsoft.Graph.Message', 'Messages', MSG),
    );
    const a = await t.receiver.receive(t.delivery(raw, {}, CONNECTOR));
    expect(a).toMatchObject({ status: 202, body: { refused: 1, events: [{ refused: expect.stringContaining('clientState') }, { id: MSG }] } });
    expect(t.gets).toEqual([{ entity: 'messages', params: { message_id: MSG } }]);
    const forged = batch(notification('deleted', '#Microsoft.Graph.Message', 'Messages', MSG, 'guessed'), {
      ...notification('deleted', '#Microsoft.Graph.Message', 'Messages', MSG),
      clientState: undefined,
    });
    await expect(t.receiver.receive(t.delivery(forged, {}, CONNECTOR))).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
    expect(t.applied).toHaveLength(1);
  });

  it('still echoes the validationToken handshake as text, only at a connector of the type', async () => {
    const d = {
      ...t.delivery('', { 'content-type': 'text/plain' }, CONNECTOR),
      query: { validationToken: 'Validation: Testing client application reachability' },
    };
    expect(await t.receiver.receive(d)).toEqual({ status: 200, body: 'Validation: Testing client application reachability', contentType: 'text/plain' });
    await expect(t.receiver.receive({ ...d, connectorId: 'conn-other' })).rejects.toMatchObject({ code: 'connector_not_found' });
  });

  it('subscribes with the connector’s own URL as notificationUrl (hosted fills it in, refuses another)', () => {
    const ctx = { publicUrl: () => 'https://sb.example' };
    const row = { id: CONNECTOR, connector_type: 'outlook' };
    const params = { resource: 'me/messages', change_type: 'created,updated,deleted', expiration_date_time: '2026-12-02T12:00:00Z', client_state: SECRET };
    expect(subscriptionParams(ctx, row, getConnector('outlook'), 'subscriptions', 'create', params)).toEqual({
      ...params,
      notification_url: `https://sb.example/api/v1/webhooks/outlook/${CONNECTOR}`,
    });
    expect(() =>
      subscriptionParams(ctx, row, getConnector('outlook'), 'subscriptions', 'create', { ...params, notification_url: 'https://evil.example/hook' }),
    ).toThrow(expect.objectContaining({ code: 'webhook_ingress_url_only' }));
  });
});
