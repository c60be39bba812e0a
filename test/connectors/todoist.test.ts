/**
 * Todoist's quirks: a personal API token as the bearer, cursor pages ({results, next_cursor}) of a
 * seeded task's comments (listed by task_id), updates POSTed to the record, the sync through the
 * Sync endpoint (every record with sync_token "*", then the changes since the last answer's
 * sync_token; completed and deleted tasks leave search), and webhooks in with the shipped
 * manifest: deliveries verified by X-Todoist-Hmac-SHA256 (base64 HMAC-SHA256 of the body with the
 * app's client secret) and attributed by the user id the check reports. Reads and writes run
 * against the generic simulator; the Sync endpoint's requests against a stand-in fetch.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { eventsMigrations, type EventsTables } from '../../src/events/migrations.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { RecordStore, searchMigrations } from '../../src/search/index.ts';
import { migrate, openDatabase } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations, type ChangeApplier } from '../../src/sync/index.ts';
import type { WebhookAttributions } from '../../src/webhooks/attribution.ts';
import { WebhookReceiver } from '../../src/webhooks/receive.ts';
import { failure } from '../helpers/errors.ts';
import { startConnectorSimulator, type ConnectorSimulator } from '../helpers/simulators.ts';

type Rec = Record<string, unknown>;
const manifest = getConnector('todoist');

describe('todoist', () => {
  let sim: ConnectorSimulator;
  let rt: ConnectorRuntime;
  beforeAll(async () => {
    sim = await startConnectorSimulator('todoist');
    rt = new ConnectorRuntime(manifest, sim.credentials, { baseUrl: sim.baseUrl, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
  });
  afterAll(() => sim?.close());

  it("pages a task's comments by cursor, updates a task by POST, and reports the token's user", async () => {
    expect(rt.authVariant).toBe('api_token');
    const task = ((await rt.execute('tasks', 'create', { content: 'Plan the offsite', priority: 4, labels: ['ops'] })) as RecordEnvelope).data;
    for (const content of ['Venue shortlist attached', 'Budget approved', 'Dates confirmed'])
      await rt.execute('comments', 'create', { task_id: task['id'], content });
    const first = (await rt.execute('comments', 'list', { task_id: task['id'], limit: 2 })) as ListEnvelope;
    expect(first.data.map((c) => c['content'])).toEqual(['Venue shortlist attached', 'Budget approved']);
    const rest = (await rt.execute('comments', 'list', { task_id: task['id'], limit: 2, cursor: first.meta['next_cursor'] })) as ListEnvelope;
    expect(rest.data.map((c) => c['content'])).toEqual(['Dates confirmed']);
    expect(rest.meta['next_cursor']).toBeNull();
    const updated = ((await rt.execute('tasks', 'update', { id: task['id'], content: 'Plan the 2026 offsite' })) as RecordEnvelope).data;
    expect(updated).toMatchObject({ id: task['id'], content: 'Plan the 2026 offsite', priority: 4 });
    expect((await failure(rt.execute('comments', 'list', {}))).code).toBe('invalid_params');
    expect((await rt.check()).info).toEqual({ user_id: '2671355', email: 'ada.okafor@northwindlabs.com', full_name: 'Ada Okafor' });
  });

  it('syncs through the Sync endpoint: "*" first, then the last sync_token; completed and deleted tasks leave search', async () => {
    const sent: Rec[] = [];
    const answers = [
      { sync_token: 'tok1', full_sync: true, items: [task('t1', 'Draft brief'), task('t2', 'Book venue')] },
      { sync_token: 'tok2', full_sync: false, items: [{ ...task('t1', 'Draft brief'), checked: true }, { ...task('t3', 'Send invites') }] },
    ];
    // The tasks' requests answered in turn; the other resources (synced too) have nothing.
    const upstream: FetchLike = async (_input, init) => {
      const body = JSON.parse(String(init?.body)) as { resource_types: string[] };
      if (!body.resource_types.includes('items')) return Response.json({ sync_token: 'other', full_sync: true });
      sent.push(body);
      return Response.json(answers[sent.length - 1]);
    };
    const t = new ConnectorRuntime(manifest, { api_token: 'a'.repeat(40) }, { fetch: upstream, limiter: null });
    const dir = mkdtempSync(join(tmpdir(), 'todoist-sync-'));
    const database = openDatabase(join(dir, 'records.db'));
    await migrate(database, [searchMigrations, syncMigrations]);
    const store = new RecordStore(database, { cursorSecret: 'todoist' });
    const engine = new SyncEngine({ database, sink: store, fullRefreshEvery: 10, runtimeFor: async () => ({ manifest, runtime: t }) });
    try {
      await engine.register('todoist');
      expect((await engine.runOnce('todoist')).entities['tasks']?.records).toBe(2);
      const again = await engine.runOnce('todoist');
      expect(again.full).toBe(false);
      expect(sent).toEqual([
        { sync_token: '*', resource_types: ['items'] },
        { sync_token: 'tok1', resource_types: ['items'] },
      ]);
      expect(await store.count('todoist', 'tasks')).toBe(2);
    } finally {
      await engine.stop();
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function task(id: string, content: string): Rec {
  return { id, content, project_id: 'p1', checked: false, is_deleted: false, labels: [], priority: 1, updated_at: '2026-11-29T10:00:00Z' };
}

describe('todoist webhooks', () => {
  const SECRET = 'todoist-client-secret-for-tests';
  const CONNECTOR = '44444444-4444-4444-8444-444444444444';
  const USER = '2671355';
  const receiver = async (applied: { upserts: unknown[]; deletions: string[] }[]) => {
    const database = openDatabase(':memory:');
    await migrate(database, [eventsMigrations]);
    return new WebhookReceiver({
      db: database.db as unknown as Kysely<EventsTables>,
      registry: new Map([['todoist', manifest]]),
      applier: () =>
        ({
          applyDelivery: async (connectorId: string, entity: { name: string }, _d: string, upserts: unknown[], deletions: string[]) => {
            applied.push({ upserts, deletions });
            return { connector_id: connectorId, entity: entity.name, added: upserts.length, updated: 0, deleted: deletions.length, source: {} };
          },
        }) as unknown as ChangeApplier,
      secretFor: (_t, kind) => (kind === 'oauth_client_secret' ? SECRET : undefined),
      connector: async () => undefined,
      attributions: {
        connectorsWithKey: async (_t: string, key: string) => (key === USER ? [CONNECTOR] : []),
        hasPending: async () => false,
      } as unknown as WebhookAttributions,
      runtimeFor: async () => undefined,
      now: Date.now,
      queueLimit: 4,
    });
  };
  const signed = (body: Rec, delivery: string, secret = SECRET) => {
    const raw = JSON.stringify(body);
    return {
      type: 'todoist',
      headers: { 'x-todoist-hmac-sha256': createHmac('sha256', secret).update(raw).digest('base64'), 'x-todoist-delivery-id': delivery },
      raw: Buffer.from(raw),
      ingressUrl: 'https://sb.example/api/v1/webhooks/todoist',
    };
  };

  it("applies a signed item:updated and item:completed to the user's connector; refuses a replay and a bad signature", async () => {
    const applied: { upserts: unknown[]; deletions: string[] }[] = [];
    const r = await receiver(applied);
    const event = (name: string) => ({
      event_name: name,
      user_id: USER,
      event_data: task('6X7rM8997g3RQmvh', 'Book the venue'),
      initiator: { id: USER, email: 'ada.okafor@northwindlabs.com', full_name: 'Ada Okafor' },
      triggered_at: '2026-11-29T10:00:00.000000Z',
      version: '10',
    });
    expect(await r.receive(signed(event('item:updated'), 'd1'))).toMatchObject({
      status: 200,
      body: { topic: 'item:updated', entity: 'tasks', id: '6X7rM8997g3RQmvh' },
    });
    expect(await r.receive(signed(event('item:completed'), 'd2'))).toMatchObject({ status: 200, body: { topic: 'item:completed', entity: 'tasks' } });
    expect(applied).toEqual([
      { upserts: [expect.objectContaining({ id: '6X7rM8997g3RQmvh', content: 'Book the venue' })], deletions: [] },
      { upserts: [], deletions: ['6X7rM8997g3RQmvh'] },
    ]);
    await expect(r.receive(signed(event('item:updated'), 'd1'))).rejects.toMatchObject({ code: 'webhook_replayed' });
    await expect(r.receive(signed(event('item:updated'), 'd3', 'not-the-secret'))).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
  });
});
