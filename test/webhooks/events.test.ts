/**
 * `events`: a delivery holding several events (Microsoft Graph's {value: [...]}): each is checked
 * (a passcode `field` is read from the event: a wrong one skipped, a delivery with no good one
 * refused), attributed, routed and applied on its own with `event` in the templates; the delivery
 * is answered 202 with each event's outcome. A signature over the whole delivery (hmac) is checked
 * once. `event` is refused in templates when there is no `events`.
 */
import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { loadManifestText, ManifestError } from '../../src/manifest/index.ts';
import { receiverFor, type ReceiverUnderTest } from '../helpers/webhooks.ts';

const SECRET = 'c1a5e0b7d92f4e38a6b1c0d9e8f7a6b5';
const manifest = (webhooks: string) =>
  loadManifestText(
    `
manifest_version: 1
type: hookdemo
title: Hook demo
kind: other
base_url: { default: https://api.example.com }
auth:
  - { name: token, type: bearer, fields: { token: { type: string, secret: true } }, token: "{{credentials.token}}" }
entities:
  items:
    primary_key: id
    record: { type: object, properties: { id: { type: string } } }
    actions:
      list:
        request: { method: GET, path: /items }
        response: { records: "{{body.data}}" }
      get:
        params: { item_id: { type: string, required: true } }
        request: { method: GET, path: "/items/{{params.item_id}}" }
        response: { record: "{{body}}" }
    sync: {}
webhooks:
${webhooks}
`,
    'hookdemo.yaml',
  );
const ROUTES = `
  events: "{{body.value}}"
  topic: "{{event.kind}}"
  topics:
    - { match: deleted, entity: items, id: "{{event.data.id}}", delete: true }
    - { match: "*", entity: items, id: "{{event.data.id}}", get_params: { item_id: "{{id}}" } }`;
const PASSCODE = `
  signature: { scheme: passcode, field: secret, secret: webhook_secret }
  attribution: { by: payload, value: "{{event.tenant}}", info: tenant_id }${ROUTES}`;
const ev = (kind: string, id: string, tenant: string, secret: unknown = SECRET) => ({ kind, tenant, secret, data: { id } });

let t: ReceiverUnderTest | undefined;
afterEach(() => t?.close());

describe('webhooks events', () => {
  it('applies each event on its own, attributed by its own tenant; answers 202', async () => {
    t = await receiverFor(manifest(PASSCODE), { secret: SECRET, accounts: { 'c-a': 'T-A', 'c-b': 'T-B' } });
    const raw = JSON.stringify({ value: [ev('created', 'i-1', 'T-A'), ev('deleted', 'i-2', 'T-B'), ev('created', 'i-3', 'T-none')] });
    const a = await t.receiver.receive(t.delivery(raw, {}));
    expect(a.status).toBe(202);
    expect(a.body).toMatchObject({
      ok: true,
      events: [
        { topic: 'created', id: 'i-1', connectors: [{ connector_id: 'c-a' }] },
        { topic: 'deleted', id: 'i-2', connectors: [{ connector_id: 'c-b' }] },
        { topic: 'created', id: 'i-3', connectors: [] },
      ],
    });
    expect(a.body).not.toHaveProperty('refused');
    expect(t.gets).toEqual([{ entity: 'items', params: { item_id: 'i-1' } }]);
    expect(t.applied.map((x) => x.deletions)).toEqual([[], ['i-2']]);
  });

  it('skips an event whose passcode is wrong or missing, and refuses a delivery with no good one', async () => {
    t = await receiverFor(manifest(PASSCODE), { secret: SECRET, accounts: { 'c-a': 'T-A' } });
    const mixed = JSON.stringify({ value: [ev('deleted', 'i-1', 'T-A', 'guess'), ev('deleted', 'i-2', 'T-A'), ev('deleted', 'i-3', 'T-A', 7)] });
    const a = await t.receiver.receive(t.delivery(mixed, {}));
    expect(a).toMatchObject({ status: 202, body: { refused: 2, events: [{ refused: expect.any(String) }, { id: 'i-2' }, { refused: expect.any(String) }] } });
    expect(t.applied.map((x) => x.deletions)).toEqual([['i-2']]);
    const bad = JSON.stringify({ value: [ev('deleted', 'i-4', 'T-A', 'guess'), ev('deleted', 'i-5', 'T-A', SECRET.slice(1))] });
    await expect(t.receiver.receive(t.delivery(bad, {}))).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
    // A passcode at the top of the body is not read: with events, it is each event's.
    const top = JSON.stringify({ secret: SECRET, value: [ev('deleted', 'i-6', 'T-A', 'guess')] });
    await expect(t.receiver.receive(t.delivery(top, {}))).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
    await expect(t.receiver.receive(t.delivery(JSON.stringify({ value: 'nope' }), {}))).rejects.toMatchObject({ code: 'invalid_request' });
    expect(t.applied).toHaveLength(1);
  });

  it('an hmac over the whole delivery is checked once, then each event applied', async () => {
    const w = `
  signature: { scheme: hmac, header: X-Sig, encoding: hex, secret: webhook_secret }
  attribution: { by: url }${ROUTES}`;
    t = await receiverFor(manifest(w), { secret: SECRET, connectors: ['c-u'] });
    const raw = JSON.stringify({ value: [ev('deleted', 'i-1', 'x', null), ev('deleted', 'i-2', 'x', null)] });
    const sig = createHmac('sha256', SECRET).update(raw).digest('hex');
    expect(await t.receiver.receive(t.delivery(raw, { 'x-sig': sig }, 'c-u'))).toMatchObject({ status: 202, body: { events: [{ id: 'i-1' }, { id: 'i-2' }] } });
    await expect(t.receiver.receive(t.delivery(raw, { 'x-sig': sig.replace(/^./, sig[0] === '0' ? '1' : '0') }, 'c-u'))).rejects.toMatchObject({
      code: 'webhook_signature_invalid',
    });
    expect(t.applied).toHaveLength(2);
  });

  it('refuses `event` in templates without events, and in the events template itself', () => {
    const noEvents = `
  signature: { scheme: passcode, field: secret, secret: webhook_secret }
  attribution: { by: url }
  topic: "{{event.kind}}"
  topics: [{ match: "*", entity: items, id: "{{event.data.id}}", delete: true }]`;
    expect(() => manifest(noEvents)).toThrow(ManifestError);
    expect(() => manifest(noEvents)).toThrow(/unknown variable "event"/);
    expect(() => manifest(PASSCODE.replace('"{{body.value}}"', '"{{event.value}}"'))).toThrow(/unknown variable "event"/);
  });
});
