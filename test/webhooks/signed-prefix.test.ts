/**
 * hmac signatures over more than the body, and handshakes that prove the secret: with
 * `signature.signed_prefix` the HMAC is of the rendered prefix and the raw body
 * ("v0:<timestamp>:<body>", the timestamp from a header); with `challenge.hmac` the handshake's
 * answer carries the HMAC of the vendor's token (an endpoint URL validation), and needs the
 * secret configured. The loader keeps both to scheme hmac.
 */
import { createHmac } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventsMigrations, type EventsTables } from '../../src/events/migrations.ts';
import { loadManifestText, ManifestError, type LoadedManifest } from '../../src/manifest/index.ts';
import { migrate, openDatabase, type Database } from '../../src/store/database.ts';
import type { ChangeApplier } from '../../src/sync/index.ts';
import type { WebhookAttributions } from '../../src/webhooks/attribution.ts';
import { WebhookReceiver, type Delivery } from '../../src/webhooks/receive.ts';

const SECRET = 'webhook-secret-token';
const CONNECTOR = '22222222-2222-4222-8222-222222222222';

const manifestText = (webhooks: string): string => `
manifest_version: 1
type: hookdemo
title: Hook demo
kind: other
base_url: { default: https://api.example.com }
auth:
  - { name: token, type: bearer, fields: { token: { type: string, secret: true } }, token: "{{credentials.token}}" }
entities:
  meetings:
    primary_key: id
    record: { type: object, properties: { id: { type: integer } } }
    actions:
      list:
        request: { method: GET, path: /meetings }
        response: { records: "{{body.meetings}}" }
    sync: {}
webhooks:
${webhooks}
  attribution: { by: url }
  topic: "{{body.event}}"
  topics:
    - { match: meeting.deleted, entity: meetings, id: "{{body.payload.object.id}}", delete: true }
`;

const WEBHOOKS = `
  signature: { scheme: hmac, header: x-zm-signature, prefix: "v0=", signed_prefix: "v0:{{headers.x-zm-request-timestamp}}:", secret: webhook_secret }
  timestamp: "{{headers.x-zm-request-timestamp}}"
  challenge:
    when: "{{eq body.event 'endpoint.url_validation'}}"
    hmac: "{{body.payload.plainToken}}"
    response: { plainToken: "{{body.payload.plainToken}}", encryptedToken: "{{hmac}}" }`;

describe('hmac over a signed prefix; a challenge answered with an HMAC', () => {
  let database: Database;
  let manifest: LoadedManifest;
  let deletions: string[][];
  let secret: string | undefined;
  let receiver: WebhookReceiver;

  beforeEach(async () => {
    database = openDatabase(':memory:');
    await migrate(database, [eventsMigrations]);
    manifest = loadManifestText(manifestText(WEBHOOKS), 'hookdemo.yaml');
    deletions = [];
    secret = SECRET;
    receiver = new WebhookReceiver({
      db: database.db as unknown as Kysely<EventsTables>,
      registry: new Map([['hookdemo', manifest]]),
      applier: () =>
        ({
          applyDelivery: async (connectorId: string, entity: { name: string }, _id: string, _u: unknown[], d: string[]) => {
            deletions.push(d);
            return { connector_id: connectorId, entity: entity.name, added: 0, updated: 0, deleted: d.length, source: {} };
          },
        }) as unknown as ChangeApplier,
      secretFor: () => secret,
      connector: async (id) => (id === CONNECTOR ? { id, status: 'active', connector_type: 'hookdemo' } : undefined),
      attributions: {} as WebhookAttributions,
      runtimeFor: async () => undefined,
      now: Date.now,
      queueLimit: 4,
    });
  });
  afterEach(async () => database.close());

  const delivery = (body: unknown, headers: Record<string, string> = {}): Delivery => ({
    type: 'hookdemo',
    connectorId: CONNECTOR,
    headers,
    raw: Buffer.from(JSON.stringify(body)),
    ingressUrl: `https://switchboard.example/api/v1/webhooks/hookdemo/${CONNECTOR}`,
  });
  const signed = (body: unknown, ts = String(Math.floor(Date.now() / 1000)), key = SECRET): Delivery => {
    const raw = JSON.stringify(body);
    const sig = createHmac('sha256', key).update(`v0:${ts}:${raw}`).digest('hex');
    return delivery(body, { 'x-zm-signature': `v0=${sig}`, 'x-zm-request-timestamp': ts });
  };
  const deleted = { event: 'meeting.deleted', payload: { object: { id: 85746065 } } };

  it('verifies the HMAC of "v0:<timestamp>:<body>"; the body alone, another timestamp or key is refused', async () => {
    expect(await receiver.receive(signed(deleted))).toMatchObject({ status: 200, body: { topic: 'meeting.deleted', id: '85746065' } });
    expect(deletions).toEqual([['85746065']]);
    const ts = String(Math.floor(Date.now() / 1000));
    const bodyOnly = createHmac('sha256', SECRET).update(JSON.stringify(deleted)).digest('hex');
    await expect(receiver.receive(delivery(deleted, { 'x-zm-signature': `v0=${bodyOnly}`, 'x-zm-request-timestamp': ts }))).rejects.toMatchObject({
      code: 'webhook_signature_invalid',
    });
    const other = signed(deleted, ts);
    other.headers['x-zm-request-timestamp'] = String(Number(ts) - 1);
    await expect(receiver.receive(other)).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
    await expect(receiver.receive(signed(deleted, ts, 'another-secret'))).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
    // Signed right, but long ago: outside the timestamp window.
    await expect(receiver.receive(signed(deleted, String(Math.floor(Date.now() / 1000) - 3600)))).rejects.toMatchObject({ code: 'webhook_replayed' });
  });

  it('answers the URL validation with the token and its HMAC, unsigned; without a configured secret it is webhooks_not_configured', async () => {
    const validation = { event: 'endpoint.url_validation', payload: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw' }, event_ts: 1654503849680 };
    const answer = await receiver.receive(delivery(validation));
    expect(answer).toEqual({
      status: 200,
      body: { plainToken: 'qgg8vlvZRS6UYooatFL8Aw', encryptedToken: createHmac('sha256', SECRET).update('qgg8vlvZRS6UYooatFL8Aw').digest('hex') },
    });
    expect(deletions).toEqual([]);
    secret = undefined;
    await expect(receiver.receive(delivery(validation))).rejects.toMatchObject({ code: 'webhooks_not_configured' });
  });

  it('the loader keeps signed_prefix and challenge.hmac to scheme hmac, and signed_prefix to headers', () => {
    const problems = (w: string): string[] => {
      try {
        loadManifestText(manifestText(w), 'hookdemo.yaml');
      } catch (e) {
        if (e instanceof ManifestError) return e.problems.map((p) => `${p.location}: ${p.message}`);
        throw e;
      }
      return [];
    };
    const passcode = WEBHOOKS.replace('scheme: hmac, header: x-zm-signature, prefix: "v0=", ', 'scheme: passcode, header: x-token, ');
    expect(problems(passcode)).toEqual([
      'webhooks.signature: algorithm, prefix, signed_prefix, encoding and signed are for scheme hmac',
      "webhooks.challenge.hmac: challenge.hmac uses the signature's algorithm and encoding: scheme hmac only",
    ]);
    expect(problems(WEBHOOKS.replace('{{headers.x-zm-request-timestamp}}:"', '{{body.event_ts}}:"'))).toEqual([
      expect.stringMatching(/^webhooks\.signature\.signed_prefix: unknown variable "body"/),
    ]);
  });
});
