/**
 * Trello's quirks, end to end: connectors/trello/connector.yaml run by the interpreter over real
 * HTTP against the generic simulator serving the trimmed Trello description with its sidecar (no
 * Trello-specific simulator code). What every connector shares is the conformance suite's; here:
 * the key and token in the query of every request (no Authorization header), a board's actions
 * newest first and paged by `before` (the last action's id), text error bodies, and webhook
 * deliveries signed with HMAC-SHA1 of the body followed by the callback URL.
 */
import { createHmac } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { eventsMigrations, type EventsTables } from '../../src/events/migrations.ts';
import { connectorRegistry } from '../../src/manifest/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate, openDatabase, type Database } from '../../src/store/database.ts';
import type { ChangeApplier } from '../../src/sync/index.ts';
import type { WebhookAttributions } from '../../src/webhooks/attribution.ts';
import { WebhookReceiver } from '../../src/webhooks/receive.ts';
import { failure } from '../helpers/errors.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/trello';
const manifest = getConnector('trello');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { api_key: string; api_token: string };

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 3, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const trello = (credentials: Rec = CREDENTIALS) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => trello().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;
const records = (resource: string) => [...(sim.resources.get(resource)?.records.values() ?? [])].map((s) => s.record as Rec);

describe('trello', () => {
  it('sends the key and the token in the query, no Authorization header; the check names the member; a bad token is refused', async () => {
    const checked = await trello().check();
    expect(checked).toMatchObject({ ok: true, checked: true, info: { username: 'adaokafor' } });
    const req = sim.requests.at(-1)!;
    expect([req.method, req.path, req.query.get('key'), req.query.get('token')]).toEqual(['GET', '/members/me', CREDENTIALS.api_key, CREDENTIALS.api_token]);
    expect(req.headers['authorization']).toBeUndefined();
    const err = await failure(trello({ ...CREDENTIALS, api_token: 'ATTAnot-a-token' }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toContain('invalid token');
  });

  it("lists a board's lists, cards and members; a missing card is upstream_not_found with Trello's text", async () => {
    const boards = (await run('boards', 'list')).data as Rec[];
    expect(boards.map((b) => b['name'])).toEqual(['Product roadmap', 'Sprint 42', 'Marketing launches', 'Hiring']);
    const board = String(boards[0]!['id']);
    const lists = (await run('lists', 'list', { id_board: board, filter: 'all' })).data as Rec[];
    expect(lists.length).toBeGreaterThan(0);
    for (const l of lists) expect(l['idBoard']).toBe(board);
    const cards = (await run('cards', 'list', { id_board: board })).data as Rec[];
    expect(cards.map((c) => c['id'])).toEqual(
      records('cards')
        .filter((c) => c['idBoard'] === board)
        .map((c) => c['id']),
    );
    const members = (await run('members', 'list', { id_board: board })).data as Rec[];
    for (const m of members) expect(m['idBoards']).toContain(board);
    const missing = await failure(run('cards', 'get', { id_card: '5abbe4b7ddc1b351ef961414' }));
    expect([missing.code, missing.message]).toEqual(['upstream_not_found', 'trello: The requested resource was not found.']);
  });

  it("pages a board's actions newest first by before, the last action's id, until a short page", async () => {
    const board = String(records('boards')[1]!['id']);
    const expected = records('actions')
      .filter((a) => (a['data'] as { board: { id: string } }).board.id === board)
      .reverse()
      .map((a) => a['id']);
    expect(expected.length).toBeGreaterThan(3);
    const first = await run('actions', 'list', { id_board: board, limit: 3 });
    expect((first.data as Rec[]).map((a) => a['id'])).toEqual(expected.slice(0, 3));
    expect(first.meta).toEqual({ next_page: expected[2] });
    const all: unknown[] = [];
    for await (const page of trello().pages('actions', { id_board: board, limit: 3 })) all.push(...(page.data as Rec[]).map((a) => a['id']));
    expect(all).toEqual(expected);
    const befores = sim.requests.filter((r) => r.path === `/boards/${board}/actions`).map((r) => r.query.get('before'));
    expect(befores.slice(1, 3)).toEqual([null, expected[2]]);
  });
});

// ---------------------------------------------------------------- webhooks in

describe('trello webhooks in', () => {
  const SECRET = 'trello-app-secret-for-tests';
  const CONNECTOR = '22222222-2222-4222-8222-222222222222';
  const INGRESS = `https://switchboard.example/api/v1/webhooks/trello/${CONNECTOR}`;
  let database: Database;
  let applied: { entity: string; upserts: Rec[]; deletions: string[] }[];
  let receiver: WebhookReceiver;

  beforeEach(async () => {
    database = openDatabase(':memory:');
    await migrate(database, [eventsMigrations]);
    applied = [];
    receiver = new WebhookReceiver({
      db: database.db as unknown as Kysely<EventsTables>,
      registry: connectorRegistry(),
      applier: () =>
        ({
          applyDelivery: async (connectorId: string, entity: { name: string }, deliveryId: string, upserts: Rec[], deletions: string[]) => {
            applied.push({ entity: entity.name, upserts, deletions });
            return {
              connector_id: connectorId,
              entity: entity.name,
              added: upserts.length,
              updated: 0,
              deleted: deletions.length,
              source: { webhook: deliveryId },
            };
          },
        }) as unknown as ChangeApplier,
      secretFor: (type, kind) => (type === 'trello' && kind === 'oauth_client_secret' ? SECRET : undefined),
      connector: async (id) => (id === CONNECTOR ? { id, status: 'active', connector_type: 'trello' } : undefined),
      attributions: { stateOf: async () => ({ state: 'known', key: null }), resolveSoon: () => undefined } as unknown as WebhookAttributions,
      runtimeFor: async () => trello(),
      now: Date.now,
      queueLimit: 4,
    });
  });

  /** A delivery as Trello signs it: base64 HMAC-SHA1 of the body followed by the callback URL. */
  const deliver = (
    body: Rec,
    sign: (raw: string) => string = (raw) =>
      createHmac('sha1', SECRET)
        .update(raw + INGRESS)
        .digest('base64'),
  ) => {
    const raw = JSON.stringify(body);
    return receiver.receive({ type: 'trello', connectorId: CONNECTOR, headers: { 'x-trello-webhook': sign(raw) }, raw: Buffer.from(raw), ingressUrl: INGRESS });
  };
  const action = (type: string, card: Rec, id = '6601f0c2a4d5e6f708192a3b'): Rec => ({
    action: { id, type, date: '2026-03-01T10:00:00.000Z', data: { card: { id: card['id'], name: card['name'] }, board: { id: card['idBoard'] } } },
    model: { id: card['idBoard'] },
  });

  it('verifies the signature over body and callback URL; updateCard fetches the card, deleteCard removes it; a replay is refused', async () => {
    const [card, gone] = records('cards');
    // Signed over the body alone, or with another secret: refused.
    for (const sign of [
      (raw: string) => createHmac('sha1', SECRET).update(raw).digest('base64'),
      (raw: string) =>
        createHmac('sha1', 'other')
          .update(raw + INGRESS)
          .digest('base64'),
    ])
      await expect(deliver(action('updateCard', card!), sign)).rejects.toMatchObject({ code: 'webhook_signature_invalid' });
    const ok = await deliver(action('updateCard', card!));
    expect(ok.status).toBe(200);
    expect(applied).toEqual([{ entity: 'cards', upserts: [expect.objectContaining({ id: card!['id'], name: card!['name'] })], deletions: [] }]);
    expect(sim.requests.at(-1)!.path).toBe(`/cards/${String(card!['id'])}`);
    await expect(deliver(action('updateCard', card!))).rejects.toMatchObject({ code: 'webhook_replayed' });
    await deliver(action('deleteCard', gone!, '6601f0c2a4d5e6f708192a3c'));
    expect(applied.at(-1)).toEqual({ entity: 'cards', upserts: [], deletions: [gone!['id']] });
  });
});
