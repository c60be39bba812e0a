/**
 * A subscription handshake that carries its token in the delivery URL's query, with an empty body,
 * and wants it echoed as text/plain (Microsoft Graph's change notifications: POST
 * <url>?validationToken=...): answered before any verification; a delivery without the token goes
 * on to the signature check. The loader keeps a text/plain answer to one template.
 */
import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventsMigrations, type EventsTables } from '../../src/events/migrations.ts';
import { loadManifestText, ManifestError } from '../../src/manifest/index.ts';
import { migrate, openDatabase, type Database } from '../../src/store/database.ts';
import type { ChangeApplier } from '../../src/sync/index.ts';
import type { WebhookAttributions } from '../../src/webhooks/attribution.ts';
import { WebhookReceiver, type Delivery } from '../../src/webhooks/receive.ts';

const CONNECTOR = '44444444-4444-4444-8444-444444444444';
const manifestText = (challenge: string): string => `
manifest_version: 1
type: notifydemo
title: Notify demo
kind: other
base_url: { default: https://api.example.com }
auth:
  - { name: token, type: bearer, fields: { token: { type: string, secret: true } }, token: "{{credentials.token}}" }
entities:
  messages:
    primary_key: id
    record: { type: object, properties: { id: { type: string } } }
    actions:
      list:
        request: { method: GET, path: /messages }
        response: { records: "{{body.value}}" }
    sync: {}
webhooks:
  signature: { scheme: passcode, field: clientState, secret: webhook_secret }
${challenge}
  attribution: { by: url }
  topic: "{{body.changeType}}"
  topics:
    - { match: deleted, entity: messages, id: "{{body.resourceData.id}}", delete: true }
`;
const CHALLENGE = `  challenge: { when: "{{query.validationToken}}", response: "{{query.validationToken}}", content_type: text/plain }`;

describe('a handshake token in the query, echoed as text/plain', () => {
  let database: Database;
  let receiver: WebhookReceiver;
  let deletions: string[][];
  beforeEach(async () => {
    database = openDatabase(':memory:');
    await migrate(database, [eventsMigrations]);
    deletions = [];
    receiver = new WebhookReceiver({
      db: database.db as unknown as Kysely<EventsTables>,
      registry: new Map([['notifydemo', loadManifestText(manifestText(CHALLENGE), 'notifydemo.yaml')]]),
      applier: () =>
        ({
          applyDelivery: async (connectorId: string, entity: { name: string }, _i: string, _u: unknown[], d: string[]) => {
            deletions.push(d);
            return { connector_id: connectorId, entity: entity.name, added: 0, updated: 0, deleted: d.length, source: {} };
          },
        }) as unknown as ChangeApplier,
      secretFor: () => 'client-state-secret',
      connector: async (id) => (id === CONNECTOR ? { id, status: 'active', connector_type: 'notifydemo' } : undefined),
      attributions: {} as WebhookAttributions,
      runtimeFor: async () => undefined,
      now: Date.now,
      queueLimit: 4,
    });
  });
  afterEach(async () => database.close());

  const delivery = (raw: string, query?: Record<string, string>): Delivery => ({
    type: 'notifydemo',
    connectorId: CONNECTOR,
    headers: {},
    ...(query !== undefined ? { query } : {}),
    raw: Buffer.from(raw),
    ingressUrl: `https://sb.example/api/v1/webhooks/notifydemo/${CONNECTOR}`,
  });

  it('echoes the validation token as text/plain from an empty body; other deliveries are verified as usual', async () => {
    const token = 'Validation: Testing client application reachability for subscription Request-Id: 3b3f9821-ce3f-23d9-879b-00a23f3 1';
    expect(await receiver.receive(delivery('', { validationToken: token }))).toEqual({ status: 200, body: token, contentType: 'text/plain' });
    await expect(receiver.receive(delivery('', { other: 'x' }))).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
    const notification = { changeType: 'deleted', clientState: 'client-state-secret', resourceData: { id: 'AAMkAD1' } };
    expect(await receiver.receive(delivery(JSON.stringify(notification)))).toMatchObject({ status: 200, body: { id: 'AAMkAD1' } });
    expect(deletions).toEqual([['AAMkAD1']]);
    // A handshake for a connector the URL does not name is refused.
    await expect(receiver.receive({ ...delivery('', { validationToken: token }), connectorId: '55555555-5555-4555-8555-555555555555' })).rejects.toMatchObject({
      code: 'connector_not_found',
    });
  });

  it('the loader keeps a text/plain answer to one template, and query to the handshake', () => {
    const problems = (challenge: string, more = ''): string[] => {
      try {
        loadManifestText(manifestText(challenge).replace('  topic: "{{body.changeType}}"', more || '  topic: "{{body.changeType}}"'), 'notifydemo.yaml');
      } catch (e) {
        if (e instanceof ManifestError) return e.problems.map((p) => `${p.location}: ${p.message}`);
        throw e;
      }
      return [];
    };
    expect(problems(CHALLENGE)).toEqual([]);
    expect(problems(CHALLENGE.replace('response: "{{query.validationToken}}"', 'response: { token: "{{query.validationToken}}" }'))).toEqual([
      'webhooks.challenge.response: a text/plain answer is one template (a string)',
    ]);
    expect(problems(CHALLENGE, '  topic: "{{query.changeType}}"')).toEqual([expect.stringMatching(/^webhooks\.topic: unknown variable "query"/)]);
  });
});
