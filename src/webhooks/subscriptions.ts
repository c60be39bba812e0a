/**
 * Per-subscription webhook secrets (the manifest's `signature.secret: subscription` and
 * `subscription_secret`): vendors that choose or hand out a secret per webhook subscription
 * rather than one per app. The service keeps one row per subscription of a connector in
 * webhook_subscriptions, its secret sealed with the key ring (bound to the row and its connector),
 * and verifies the connector's deliveries (at its own URL) with any of its active secrets.
 *
 * A row is made `pending` when the service runs the subscribe action for a connector (hosted
 * execute, or POST .../webhook-subscriptions), and the vendor is pointed at the connector's URL
 * with `?subscription=<row id>` (SUBSCRIPTION_QUERY), so what comes back names its row:
 * - handshake: the vendor posts a handshake carrying the secret (X-Hook-Secret) to that URL while
 *   the action runs; it fills, atomically (compare-and-set on the state), the row the URL names
 *   (a URL naming none: the oldest pending row of the connector without a secret), which becomes
 *   `active`. A handshake with no such row open is refused (409 webhook_handshake_unexpected):
 *   nobody can plant a secret outside a subscription the service is making;
 * - response: the action's record carries the secret (its field is removed from what the caller
 *   gets);
 * - generated: the service makes it and sends it as one of the action's params.
 * A failed action deletes its row; a pending row is never used to verify, and expires after
 * PENDING_MS. A delivery whose URL names its subscription verifies with that one's secret only;
 * otherwise with any of the connector's. Secrets are never logged, returned or audited.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { SwitchboardError } from '../errors/index.ts';
import type { Envelope } from '../engine/types.ts';
import type { LoadedManifest } from '../manifest/compile.ts';
import type { SubscriptionSecretRule } from '../manifest/webhooks.ts';
import type { KeyRing } from '../store/encryption.ts';

/** How long a subscription being made waits for its handshake (the vendor sends it while it answers the create). */
export const PENDING_MS = 120_000;
/** Secrets tried per delivery at most (a connector's newest active subscriptions). */
export const MAX_SECRETS_PER_CONNECTOR = 50;
/** The query parameter of the URL a subscription is made with: its row's id. */
export const SUBSCRIPTION_QUERY = 'subscription';
/** A handshake secret longer than this is refused (a header, not a payload). */
export const MAX_SECRET_LENGTH = 1024;

export interface WebhookSubscriptionsTable {
  id: string;
  connector_id: string;
  connector_type: string;
  /** pending (being made: no secret to verify with yet) or active. */
  state: string;
  secret_key_id: string | null;
  secret_ciphertext: string | null;
  created_at: string;
  updated_at: string;
  /** pending rows: when the service stops waiting for the handshake. */
  expires_at: string | null;
}

export interface WebhookSubscriptionsTables {
  webhook_subscriptions: WebhookSubscriptionsTable;
}

/** The AAD a row's secret is sealed with: a ciphertext copied to another row or connector does not open. */
const secretContext = (id: string, connectorId: string): string => `webhook-subscription:${id}:${connectorId}`;

/** A subscription being made: its row, and the secret the service generated (from: generated). */
export interface PendingSubscription {
  id: string;
  connectorId: string;
  secret?: string;
}

export interface SubscriptionOptions {
  db: Kysely<WebhookSubscriptionsTables>;
  keyRing: KeyRing;
  now: () => number;
  log?: Logger;
}

export class WebhookSubscriptions {
  constructor(private readonly o: SubscriptionOptions) {}

  #iso(offsetMs = 0): string {
    return new Date(this.o.now() + offsetMs).toISOString();
  }

  /** A pending row for a subscription the service is about to make (expired pending rows of the connector dropped). */
  async begin(connector: { id: string; connector_type: string }, rule: SubscriptionSecretRule): Promise<PendingSubscription> {
    const at = this.#iso();
    await this.o.db
      .deleteFrom('webhook_subscriptions')
      .where('connector_id', '=', connector.id)
      .where('state', '=', 'pending')
      .where('expires_at', '<', at)
      .execute();
    const id = randomUUID();
    const secret = rule.from === 'generated' ? randomBytes(rule.bytes).toString('hex') : undefined;
    const sealed = secret === undefined ? undefined : this.o.keyRing.seal(secret, secretContext(id, connector.id));
    await this.o.db
      .insertInto('webhook_subscriptions')
      .values({
        id,
        connector_id: connector.id,
        connector_type: connector.connector_type,
        state: 'pending',
        secret_key_id: sealed?.keyId ?? null,
        secret_ciphertext: sealed?.ciphertext ?? null,
        created_at: at,
        updated_at: at,
        expires_at: this.#iso(PENDING_MS),
      })
      .execute();
    return { id, connectorId: connector.id, ...(secret !== undefined ? { secret } : {}) };
  }

  /**
   * A handshake's secret: stored in the oldest open pending row of the connector that has none
   * (compare-and-set, so parallel handshakes each take a row of their own or none). False when
   * no subscription of the connector is waiting for one.
   */
  async handshake(connectorId: string, secret: string, subscriptionId?: string): Promise<boolean> {
    const at = this.#iso();
    for (let round = 0; round < 3; round++) {
      let q = this.o.db.selectFrom('webhook_subscriptions').select('id').where('connector_id', '=', connectorId);
      if (subscriptionId !== undefined) q = q.where('id', '=', subscriptionId);
      const open = await q
        .where('state', '=', 'pending')
        .where('secret_ciphertext', 'is', null)
        .where('expires_at', '>', at)
        .orderBy('created_at')
        .orderBy('id')
        .limit(10)
        .execute();
      if (open.length === 0) return false;
      for (const { id } of open) {
        const sealed = this.o.keyRing.seal(secret, secretContext(id, connectorId));
        const r = await this.o.db
          .updateTable('webhook_subscriptions')
          .set({ state: 'active', secret_key_id: sealed.keyId, secret_ciphertext: sealed.ciphertext, updated_at: at, expires_at: null })
          .where('id', '=', id)
          .where('state', '=', 'pending')
          .where('secret_ciphertext', 'is', null)
          .executeTakeFirst();
        if (Number(r.numUpdatedRows) === 1) return true;
      }
    }
    return false;
  }

  /**
   * The subscribe action answered: the row is made active with its secret (from the record for
   * `response`, the generated one, or the handshake's, which must have come), and the answer is
   * returned without the secret. A subscription left with no secret is dropped (logged).
   */
  async complete(p: PendingSubscription, rule: SubscriptionSecretRule, result: Envelope): Promise<Envelope> {
    const at = this.#iso();
    if (rule.from === 'response') {
      const record = (Array.isArray(result.data) ? result.data[0] : result.data) as Record<string, unknown> | undefined;
      const secret = takePath(record, rule.field);
      if (typeof secret === 'string' && secret !== '') {
        const sealed = this.o.keyRing.seal(secret, secretContext(p.id, p.connectorId));
        await this.o.db
          .updateTable('webhook_subscriptions')
          .set({ state: 'active', secret_key_id: sealed.keyId, secret_ciphertext: sealed.ciphertext, updated_at: at, expires_at: null })
          .where('id', '=', p.id)
          .execute();
        return result;
      }
    } else if (rule.from === 'generated') {
      await this.o.db.updateTable('webhook_subscriptions').set({ state: 'active', updated_at: at, expires_at: null }).where('id', '=', p.id).execute();
      return result;
    } else {
      const row = await this.o.db.selectFrom('webhook_subscriptions').select('state').where('id', '=', p.id).executeTakeFirst();
      if (row?.state === 'active') return result;
    }
    await this.abort(p);
    this.o.log?.warn(
      { connector_id: p.connectorId, from: rule.from },
      'webhook subscription: the vendor gave no secret for it; its deliveries will not verify',
    );
    return result;
  }

  /** The subscribe action failed: its row goes. */
  async abort(p: PendingSubscription): Promise<void> {
    await this.o.db.deleteFrom('webhook_subscriptions').where('id', '=', p.id).execute();
  }

  /** The connector's active subscriptions' secrets (or the one the URL names), newest first (at most MAX_SECRETS_PER_CONNECTOR). */
  async secrets(connectorId: string, subscriptionId?: string): Promise<string[]> {
    let q = this.o.db.selectFrom('webhook_subscriptions').select(['id', 'secret_key_id', 'secret_ciphertext']).where('connector_id', '=', connectorId);
    if (subscriptionId !== undefined) q = q.where('id', '=', subscriptionId);
    const rows = await q.where('state', '=', 'active').orderBy('updated_at', 'desc').orderBy('id').limit(MAX_SECRETS_PER_CONNECTOR).execute();
    const out: string[] = [];
    for (const r of rows) {
      if (r.secret_key_id === null || r.secret_ciphertext === null) continue;
      try {
        out.push(this.o.keyRing.open({ keyId: r.secret_key_id, ciphertext: r.secret_ciphertext }, secretContext(r.id, connectorId)));
      } catch (e) {
        // A key no longer in the ring (or a row tampered with): that subscription verifies nothing.
        this.o.log?.warn(
          { connector_id: connectorId, subscription_id: r.id, code: (e as { code?: string }).code },
          'webhook subscription: its secret cannot be opened',
        );
      }
    }
    return out;
  }

  /** How many subscriptions of the connector are active (for tests and operators; no secrets). */
  async count(connectorId: string): Promise<{ active: number; pending: number }> {
    const rows = await this.o.db.selectFrom('webhook_subscriptions').select('state').where('connector_id', '=', connectorId).execute();
    return { active: rows.filter((r) => r.state === 'active').length, pending: rows.filter((r) => r.state === 'pending').length };
  }

  /**
   * Run an action for a connector: for the type's subscribe action with per-subscription
   * secrets, around a pending row (the generated secret sent in its param; a caller may not give
   * that param). Any other action just runs.
   */
  async around(
    manifest: LoadedManifest,
    connector: { id: string; connector_type: string },
    entity: string,
    action: string,
    params: Record<string, unknown>,
    run: (params: Record<string, unknown>) => Promise<Envelope>,
  ): Promise<Envelope> {
    const w = manifest.webhooks;
    const rule = w?.subscriptionSecret;
    if (rule === undefined || w?.subscribe?.entity !== entity || w.subscribe.action !== action) return run(params);
    if (rule.from === 'generated' && params[rule.param] !== undefined) {
      throw new SwitchboardError('invalid_params', `${entity}.${action}: the service generates ${rule.param} (the webhook secret) itself: omit it`, {
        errors: [{ path: `/params/${rule.param}`, message: 'must be omitted: the service generates it' }],
      });
    }
    const pending = await this.begin(connector, rule);
    // The vendor is pointed at the connector's URL naming this subscription (the URL param was checked and filled before).
    const given = params[w.subscribe.urlParam];
    const url = typeof given === 'string' ? withSubscription(given, pending.id) : given;
    const sent = {
      ...params,
      [w.subscribe.urlParam]: url,
      ...(pending.secret !== undefined && rule.from === 'generated' ? { [rule.param]: pending.secret } : {}),
    };
    let result: Envelope;
    try {
      result = await run(sent);
    } catch (e) {
      await this.abort(pending);
      throw e;
    }
    return this.complete(pending, rule, result);
  }
}

/** A URL with the subscription's id in its query. */
function withSubscription(url: string, id: string): string {
  const u = new URL(url);
  u.searchParams.set(SUBSCRIPTION_QUERY, id);
  return u.toString();
}

/** A dotted path's value in a record, removed from it (the secret is not handed back). */
function takePath(record: Record<string, unknown> | undefined, path: string): unknown {
  const keys = path.split('.');
  let parent: unknown = record;
  for (const k of keys.slice(0, -1)) parent = parent !== null && typeof parent === 'object' ? (parent as Record<string, unknown>)[k] : undefined;
  if (parent === null || typeof parent !== 'object') return undefined;
  const last = keys[keys.length - 1]!;
  const value = (parent as Record<string, unknown>)[last];
  delete (parent as Record<string, unknown>)[last];
  return value;
}
