/**
 * Typeform's quirks: connectors/typeform/connector.yaml run by the interpreter over real HTTP
 * against the generic simulator serving our description (openapi.yaml, from Typeform's official
 * client). What every connector shares is the conformance suite's; here: the token sent as a
 * bearer and the EU data center's host, responses paged by the `before` token and read alone by
 * included_response_ids, the per-form sync of responses by `since` (the newest submitted_at as
 * Typeform wrote it), a form renamed by JSON Patch and read back, and a signed webhook delivery
 * (Typeform-Signature: sha256=<base64 HMAC-SHA256>) whose response is read and stored.
 */
import { createHmac } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventsMigrations, type EventsTables } from '../../src/events/migrations.ts';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate, openDatabase } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations, type ChangeApplier } from '../../src/sync/index.ts';
import type { WebhookAttributions } from '../../src/webhooks/attribution.ts';
import { WebhookReceiver } from '../../src/webhooks/receive.ts';
import { failure } from '../helpers/errors.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/typeform';
const manifest = getConnector('typeform');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as Rec;
const FORM = 'u6nXL7';

const start = (): Promise<OpenApiSimulator> => startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar, seed: 5, rateLimit: false });
let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await start();
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const typeform = (on = sim) => new ConnectorRuntime(manifest, CREDENTIALS, { baseUrl: on.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });

describe('typeform', () => {
  it('sends the personal token as a bearer, to the EU data center’s host when the region says so', async () => {
    const seen: string[] = [];
    const fetch: FetchLike = async (input, init) => {
      seen.push(`${String(input)} ${String(new Headers(init?.headers).get('authorization'))}`);
      return new Response(JSON.stringify({ email: 'ada@northwind.example', account_id: '01D8JX5BHSQEXZAGNF9VJNWY9T' }), {
        headers: { 'content-type': 'application/json' },
      });
    };
    await new ConnectorRuntime(manifest, CREDENTIALS, { fetch, limiter: null, config: { region: 'eu' } }).check();
    expect(seen).toEqual([`https://api.eu.typeform.com/me Bearer ${String(CREDENTIALS['token'])}`]);
    const oauth = manifest.manifest.auth.find((v) => v.type === 'oauth2');
    expect(oauth).toMatchObject({ authorize_url: 'https://api.typeform.com/oauth/authorize', scopes: expect.arrayContaining(['offline', 'responses:read']) });
  });

  it('pages a form’s responses newest first by the before token, each naming its form; reads one by included_response_ids', async () => {
    const rt = typeform();
    const ids: string[] = [];
    for await (const page of rt.pages('responses', { form_id: FORM, page_size: 2 }))
      ids.push(...((page as ListEnvelope).data as Rec[]).map((r) => String(r['response_id'])));
    const listed = sim.requests.filter((r) => r.path === `/forms/${FORM}/responses`);
    expect(ids.length).toBeGreaterThan(2);
    expect(new Set(ids).size).toBe(ids.length);
    expect(listed.map((r) => r.query.get('before'))).toEqual([null, ...ids.filter((_, i) => i % 2 === 1)].slice(0, listed.length));

    const one = ((await rt.execute('responses', 'get', { form_id: FORM, response_id: ids[1] })) as RecordEnvelope).data;
    expect(one).toMatchObject({ response_id: ids[1], form_id: FORM });
    expect(sim.requests.at(-1)!.query.get('included_response_ids')).toBe(ids[1]);
    expect((await failure(rt.execute('responses', 'get', { form_id: FORM, response_id: '0'.repeat(32) }))).code).toBe('upstream_not_found');
  });

  it('renames a form by JSON Patch (204) and answers it read back', async () => {
    const renamed = (await typeform().execute('forms', 'update', {
      form_id: FORM,
      operations: [{ op: 'replace', path: '/title', value: 'Customer satisfaction 2027' }],
    })) as RecordEnvelope;
    expect(renamed.data).toMatchObject({ id: FORM, title: 'Customer satisfaction 2027' });
    const [patch, read] = sim.requests.slice(-2);
    expect([patch!.method, JSON.parse(patch!.rawBody), read!.method]).toEqual([
      'PATCH',
      [{ op: 'replace', path: '/title', value: 'Customer satisfaction 2027' }],
      'GET',
    ]);
  });

  describe('sync and webhooks', () => {
    let fresh: OpenApiSimulator;
    let tdb: TestDatabase;
    let store: RecordStore;
    let engine: SyncEngine;
    beforeAll(async () => {
      fresh = await start();
      tdb = await openTestDatabase('sqlite');
      await migrate(tdb.database, [syncMigrations]);
      store = new RecordStore(tdb.database, { cursorSecret: 'test-secret' });
      engine = new SyncEngine({ database: tdb.database, sink: store, runtimeFor: async () => ({ manifest, runtime: typeform(fresh) }), fullRefreshEvery: 100 });
    });
    afterAll(async () => {
      await engine.stop();
      await tdb.close();
      await fresh.close();
    });

    it('syncs every form’s responses, then only those submitted since the newest seen', async () => {
      await engine.register('tf');
      const full = await engine.runOnce('tf');
      expect(full.entities['forms']!.records).toBe(5);
      expect(full.entities['responses']!.records).toBe(20);
      const newest = [...fresh.resources.get('responses')!.records.values()]
        .map((s) => String(s.record['submitted_at']))
        .sort()
        .at(-1)!;

      const added = fresh.addRecord('responses', { submitted_at: '2026-11-28T16:20:00Z' });
      fresh.resources.get('responses')!.records.get(String(added['response_id']))!.parents = { form_id: FORM };
      fresh.reset();
      const inc = await engine.runOnce('tf');
      expect(inc.full).toBe(false);
      const asked = fresh.requests.filter((r) => r.path.endsWith('/responses'));
      expect(asked).toHaveLength(5);
      for (const r of asked) expect(r.query.get('since')).toBe(newest);
      // since is inclusive: the newest response seen comes again, beside the new one.
      expect(inc.entities['responses']).toMatchObject({ records: 2 });
      expect(await store.count('tf', 'responses')).toBe(21);
    });

    it('verifies a delivery’s Typeform-Signature and stores the response it names, read through responses.get', async () => {
      const database = openDatabase(':memory:');
      await migrate(database, [eventsMigrations]);
      const applied: [string, string[]][] = [];
      const connectorId = '66666666-6666-4666-8666-666666666666';
      const receiver = new WebhookReceiver({
        db: database.db as unknown as Kysely<EventsTables>,
        registry: new Map([['typeform', manifest]]),
        applier: () =>
          ({
            applyDelivery: async (id: string, entity: { name: string }, _d: string, upserts: Rec[], deletions: string[]) => {
              applied.push([entity.name, upserts.map((u) => `${String(u['form_id'])}/${String(u['response_id'])}`)]);
              return { connector_id: id, entity: entity.name, added: upserts.length, updated: 0, deleted: deletions.length, source: {} };
            },
          }) as unknown as ChangeApplier,
        secretFor: () => 'typeform-webhook-secret',
        connector: async (id) => (id === connectorId ? { id, status: 'active', connector_type: 'typeform' } : undefined),
        attributions: {} as WebhookAttributions,
        runtimeFor: async () => typeform(fresh),
        now: Date.now,
        queueLimit: 4,
      });
      try {
        const [first] = [...fresh.resources.get('responses')!.records.values()];
        const token = String(first!.record['token']);
        const raw = JSON.stringify({
          event_id: '01JCQ7X4Y2B3C4D5E6F7G8H9J0',
          event_type: 'form_response',
          form_response: { form_id: first!.parents['form_id'], token },
        });
        const signed = (secret: string) => `sha256=${createHmac('sha256', secret).update(raw).digest('base64')}`;
        const delivery = (signature: string) => ({
          type: 'typeform',
          connectorId,
          headers: { 'typeform-signature': signature },
          raw: Buffer.from(raw),
          ingressUrl: `https://sb.example/api/v1/webhooks/typeform/${connectorId}`,
        });
        await expect(receiver.receive(delivery(signed('another-secret')))).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
        expect(await receiver.receive(delivery(signed('typeform-webhook-secret')))).toMatchObject({ status: 200 });
        expect(applied).toEqual([['responses', [`${String(first!.parents['form_id'])}/${token}`]]]);
        expect(fresh.requests.at(-1)!.query.get('included_response_ids')).toBe(token);
      } finally {
        await database.close();
      }
    });
  });
});
