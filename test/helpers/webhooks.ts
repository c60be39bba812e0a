/**
 * A vendor-webhook receiver over one connector manifest, for the connectors' webhook quirks: an
 * in-memory receipts table, the signing secret given, the connectors attributed by a fixed table,
 * and what the deliveries do recorded (records applied, ids deleted, gets run, syncs requested).
 */
import type { Kysely } from 'kysely';
import { eventsMigrations, type EventsTables } from '../../src/events/migrations.ts';
import type { ConnectorRuntime } from '../../src/engine/index.ts';
import type { LoadedManifest } from '../../src/manifest/index.ts';
import { migrate, openDatabase } from '../../src/store/database.ts';
import type { ChangeApplier } from '../../src/sync/index.ts';
import type { WebhookAttributions } from '../../src/webhooks/attribution.ts';
import { WebhookReceiver, type Delivery } from '../../src/webhooks/receive.ts';

export interface ReceiverUnderTest {
  receiver: WebhookReceiver;
  /** Per delivery applied: the entity, the records upserted and the ids deleted. */
  applied: { entity: string; upserts: Record<string, unknown>[]; deletions: string[] }[];
  /** Gets run to hydrate a record: entity and params. */
  gets: { entity: string; params: Record<string, unknown> }[];
  syncs: string[];
  delivery(raw: string, headers: Record<string, string>, connectorId?: string): Delivery;
  close(): Promise<void>;
}

/** `accounts`: the attribution key (check info) of each connector id; `connectors`: the ids a URL may name. */
export async function receiverFor(
  manifest: LoadedManifest,
  o: { secret: string; accounts?: Record<string, string>; connectors?: string[]; record?: Record<string, unknown> },
): Promise<ReceiverUnderTest> {
  const database = openDatabase(':memory:');
  await migrate(database, [eventsMigrations]);
  const applied: ReceiverUnderTest['applied'] = [];
  const gets: ReceiverUnderTest['gets'] = [];
  const syncs: string[] = [];
  const accounts = o.accounts ?? {};
  const receiver = new WebhookReceiver({
    db: database.db as unknown as Kysely<EventsTables>,
    registry: new Map([[manifest.type, manifest]]),
    applier: () =>
      ({
        applyDelivery: async (connectorId: string, entity: { name: string }, _d: string, upserts: Record<string, unknown>[], deletions: string[]) => {
          applied.push({ entity: entity.name, upserts, deletions });
          return { connector_id: connectorId, entity: entity.name, added: upserts.length, updated: 0, deleted: deletions.length, source: {} };
        },
      }) as unknown as ChangeApplier,
    secretFor: () => o.secret,
    connector: async (id) => ((o.connectors ?? Object.keys(accounts)).includes(id) ? { id, status: 'active', connector_type: manifest.type } : undefined),
    attributions: {
      connectorsWithKey: async (_t: string, key: string) => Object.keys(accounts).filter((id) => accounts[id] === key),
      hasPending: async () => false,
      stateOf: async (id: string) => ({ state: 'known', key: accounts[id] ?? null }),
      resolveSoon: () => undefined,
    } as unknown as WebhookAttributions,
    runtimeFor: async () =>
      ({
        execute: async (entity: string, _action: string, params: Record<string, unknown>) => {
          gets.push({ entity, params });
          return { data: { ...(o.record ?? {}), ...params } };
        },
      }) as unknown as ConnectorRuntime,
    requestSync: async (id) => (syncs.push(id), true),
    now: Date.now,
    queueLimit: 4,
  });
  return {
    receiver,
    applied,
    gets,
    syncs,
    delivery: (raw, headers, connectorId) => ({
      type: manifest.type,
      ...(connectorId !== undefined ? { connectorId } : {}),
      headers,
      raw: Buffer.from(raw),
      ingressUrl: `https://sb.example/api/v1/webhooks/${manifest.type}${connectorId !== undefined ? `/${connectorId}` : ''}`,
    }),
    close: () => database.close(),
  };
}
