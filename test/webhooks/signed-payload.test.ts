/**
 * hmac signatures over a payload that is not just the body: `signature.payload` renders the signed
 * text over headers, the parsed body and the raw body (`raw`): a timestamp header then the body, a
 * `<t>.` from a header of several parts before it, or body fields alone; `signature.value` says
 * where the signature is (a part of such a header, a body field); `key_encoding: hex` reads the
 * secret as hex bytes. And a delivery that names no record, only accounts (a `sync` topic rule,
 * attribution by a list of accounts): the attributed connectors' syncs are requested.
 */
import { createHmac } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventsMigrations, type EventsTables } from '../../src/events/migrations.ts';
import { loadManifestText, ManifestError } from '../../src/manifest/index.ts';
import { migrate, openDatabase, type Database } from '../../src/store/database.ts';
import type { ChangeApplier } from '../../src/sync/index.ts';
import type { WebhookAttributions } from '../../src/webhooks/attribution.ts';
import { WebhookReceiver, type Delivery } from '../../src/webhooks/receive.ts';

const SECRET = '6f2a9c41d8e07b35a1c4f9e2d6b80a73';
const ACCOUNTS: Record<string, string[]> = { 'dbid:AAA': ['c-1'], 'dbid:BBB': ['c-2', 'c-3'] };

const manifestText = (webhooks: string): string => `
manifest_version: 1
type: hookdemo
title: Hook demo
kind: other
base_url: { default: https://api.example.com }
auth:
  - { name: token, type: bearer, fields: { token: { type: string, secret: true } }, token: "{{credentials.token}}" }
entities:
  leads:
    primary_key: id
    record: { type: object, properties: { id: { type: string } } }
    actions:
      list:
        request: { method: GET, path: /leads }
        response: { records: "{{body.data}}" }
    sync: {}
webhooks:
${webhooks}
`;
const TOPICS = `
  attribution: { by: payload, value: "{{body.account}}", info: account_id }
  topic: "{{body.event}}"
  topics:
    - { match: lead.deleted, entity: leads, id: "{{body.id}}", delete: true }`;

describe('hmac over a rendered payload', () => {
  let database: Database;
  let deletions: string[][];
  let syncs: string[];
  const receiverFor = (webhooks: string, running: string[] = []): WebhookReceiver =>
    new WebhookReceiver({
      db: database.db as unknown as Kysely<EventsTables>,
      registry: new Map([['hookdemo', loadManifestText(manifestText(webhooks), 'hookdemo.yaml')]]),
      applier: () =>
        ({
          applyDelivery: async (connectorId: string, entity: { name: string }, _id: string, _u: unknown[], d: string[]) => {
            deletions.push(d);
            return { connector_id: connectorId, entity: entity.name, added: 0, updated: 0, deleted: d.length, source: {} };
          },
        }) as unknown as ChangeApplier,
      secretFor: () => SECRET,
      connector: async () => undefined,
      attributions: { connectorsWithKey: async (_t: string, k: string) => ACCOUNTS[k] ?? [], hasPending: async () => false } as unknown as WebhookAttributions,
      runtimeFor: async () => undefined,
      requestSync: async (id) => {
        syncs.push(id);
        return !running.includes(id);
      },
      now: Date.now,
      queueLimit: 4,
    });
  beforeEach(async () => {
    database = openDatabase(':memory:');
    await migrate(database, [eventsMigrations]);
    deletions = [];
    syncs = [];
  });
  afterEach(async () => database.close());

  const delivery = (raw: string, headers: Record<string, string>): Delivery => ({
    type: 'hookdemo',
    headers,
    raw: Buffer.from(raw),
    ingressUrl: 'https://switchboard.example/api/v1/webhooks/hookdemo',
  });
  const hmac = (key: string | Buffer, text: string): string => createHmac('sha256', key).update(text).digest('hex');
  const now = (): string => String(Math.floor(Date.now() / 1000));
  const deleted = JSON.stringify({ event: 'lead.deleted', id: 'lead_1', account: 'dbid:AAA' });

  it('a timestamp header and the body, keyed with the hex-decoded secret: good accepted, forged or stale refused', async () => {
    const r = receiverFor(`
  signature: { scheme: hmac, header: close-sig-hash, payload: "{{headers.close-sig-timestamp}}{{raw}}", key_encoding: hex, secret: webhook_secret }
  timestamp: "{{headers.close-sig-timestamp}}"${TOPICS}`);
    const ts = now();
    const good = hmac(Buffer.from(SECRET, 'hex'), `${ts}${deleted}`);
    expect(await r.receive(delivery(deleted, { 'close-sig-hash': good, 'close-sig-timestamp': ts }))).toMatchObject({ status: 200, body: { id: 'lead_1' } });
    expect(deletions).toEqual([['lead_1']]);
    // The secret's text as the key, the body alone, another timestamp: refused.
    for (const sig of [hmac(SECRET, `${ts}${deleted}`), hmac(Buffer.from(SECRET, 'hex'), deleted)])
      await expect(r.receive(delivery(deleted, { 'close-sig-hash': sig, 'close-sig-timestamp': ts }))).rejects.toMatchObject({
        code: 'webhook_signature_invalid',
      });
    const old = String(Number(ts) - 3600);
    const stale = hmac(Buffer.from(SECRET, 'hex'), `${old}${deleted}`);
    await expect(r.receive(delivery(deleted, { 'close-sig-hash': stale, 'close-sig-timestamp': old }))).rejects.toMatchObject({ code: 'webhook_replayed' });
  });

  it('a "t=…,v1=…" header: the signature is its v1 part, over "<t>.<body>"', async () => {
    const r = receiverFor(`
  signature: { scheme: hmac, header: calendly-webhook-signature, value: "{{get (pairs headers.calendly-webhook-signature ',' '=') 'v1'}}", payload: "{{join (array (get (pairs headers.calendly-webhook-signature ',' '=') 't') raw) '.'}}", secret: webhook_secret }
  timestamp: "{{get (pairs headers.calendly-webhook-signature ',' '=') 't'}}"${TOPICS}`);
    const ts = now();
    const v1 = hmac(SECRET, `${ts}.${deleted}`);
    expect(await r.receive(delivery(deleted, { 'calendly-webhook-signature': `t=${ts},v1=${v1}` }))).toMatchObject({ status: 200 });
    await expect(r.receive(delivery(deleted, { 'calendly-webhook-signature': `t=${Number(ts) + 1},v1=${v1}` }))).rejects.toMatchObject({
      code: 'webhook_signature_invalid',
    });
    await expect(r.receive(delivery(deleted, { 'calendly-webhook-signature': `t=${ts}` }))).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
  });

  it('body fields alone, the signature in the body', async () => {
    const r = receiverFor(`
  signature: { scheme: hmac, value: "{{body.signature}}", payload: "{{body.token}}{{body.triggeredAt}}", secret: webhook_secret }
  timestamp: "{{div body.triggeredAt 1000}}"${TOPICS}`);
    const at = Date.now();
    const body = (sig: string) => JSON.stringify({ event: 'lead.deleted', id: 'lead_2', account: 'dbid:AAA', token: 'tok-9', triggeredAt: at, signature: sig });
    expect(await r.receive(delivery(body(hmac(SECRET, `tok-9${at}`)), {}))).toMatchObject({ status: 200, body: { id: 'lead_2' } });
    await expect(r.receive(delivery(body(hmac(SECRET, `tok-8${at}`)), {}))).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
  });

  it('a notice naming accounts, no record: each attributed connector’s sync is requested', async () => {
    const r = receiverFor(
      `
  signature: { scheme: hmac, header: x-dropbox-signature, secret: oauth_client_secret }
  attribution: { by: payload, value: "{{body.list_folder.accounts}}", info: account_id }
  topic: "{{#if body.list_folder}}list_folder{{/if}}"
  topics:
    - { match: list_folder, entity: leads, sync: true }`,
      ['c-3'],
    );
    const notice = JSON.stringify({ list_folder: { accounts: ['dbid:AAA', 'dbid:BBB', 'dbid:ZZZ'] }, delta: { users: [12345678] } });
    const answer = await r.receive(delivery(notice, { 'x-dropbox-signature': hmac(SECRET, notice) }));
    expect(answer).toEqual({ status: 200, body: { ok: true, topic: 'list_folder', entity: 'leads', sync_requested: ['c-1', 'c-2'], sync_running: ['c-3'] } });
    expect(syncs).toEqual(['c-1', 'c-2', 'c-3']);
    await expect(r.receive(delivery(notice, { 'x-dropbox-signature': hmac('other', notice) }))).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
    expect(deletions).toEqual([]);
  });

  it('the loader keeps payload, value and key_encoding to hmac, payload apart from signed_prefix, and sync rules free of record fields', () => {
    const problems = (w: string): string[] => {
      try {
        loadManifestText(manifestText(w), 'hookdemo.yaml');
      } catch (e) {
        if (e instanceof ManifestError) return e.problems.map((p) => `${p.location}: ${p.message}`);
        throw e;
      }
      return [];
    };
    expect(problems(`  signature: { scheme: passcode, header: x-token, payload: "{{raw}}", secret: webhook_secret }${TOPICS}`)).toEqual([
      'webhooks.signature: payload, value and key_encoding are for scheme hmac',
    ]);
    expect(problems(`  signature: { scheme: hmac, header: x-sig, payload: "{{raw}}", signed_prefix: "v0:", secret: webhook_secret }${TOPICS}`)).toEqual([
      'webhooks.signature.payload: payload is the whole signed text: not with signed_prefix or signed',
    ]);
    expect(
      problems(`  signature: { scheme: hmac, header: x-sig, secret: webhook_secret }
  attribution: { by: payload, value: "{{body.a}}", info: account_id }
  topic: "x"
  topics:
    - { match: x, entity: leads, sync: true, id: "{{body.id}}" }
    - { match: y, entity: leads, delete: true }`),
    ).toEqual([
      'webhooks.topics.0: a sync rule names no record: no id, record, get_params or delete',
      'webhooks.topics.1.id: the record id is required (or sync: true for a delivery naming no record)',
    ]);
  });
});
