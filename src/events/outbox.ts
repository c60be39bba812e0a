/**
 * Signed webhooks out, from a durable outbox in the database.
 *
 * - emit(): one event_outbox row (the event id is its key) and, in the same transaction, one
 *   webhook_deliveries row per endpoint of the organization subscribed to its type — the unique
 *   (endpoint, event) pair makes each event go to each endpoint once, however often emit runs
 *   with the same event id.
 * - Sending: a pool of sends in flight with caps per endpoint and per organization, refilled as
 *   each send ends and picking organizations in turn (delivery-pool.ts): one tenant's slow
 *   endpoints never hold another's deliveries. Each due row is claimed atomically (an UPDATE
 *   that re-checks it is free, so instances claim disjoint rows), POSTed signed through the
 *   webhook transport (webhook-sender.ts: public addresses only, checked after DNS; redirects not
 *   followed), and its attempt recorded. A claim is a lease (60 s): an instance that dies
 *   mid-send leaves the row to another after it expires (the receiver may then see the event
 *   twice: deduplicate by id).
 * - Failures (non-2xx, 3xx included, timeouts, refused addresses) retry with exponential backoff
 *   (30 s, doubling, at most 1 h apart) until a day after the event; then the delivery is failed.
 *   The log keeps the status and a generic reason, never the answer's body.
 * - Time comes from the injected clock, so tests drive retries without waiting.
 */
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { webhookOut } from '../observe/hooks.ts';
import { SwitchboardError } from '../errors/index.ts';
import type { DialectName } from '../store/database.ts';
import type { KeyRing } from '../store/encryption.ts';
import { DeliveryPool, DEFAULT_POOL_LIMITS, type PoolLimits } from './delivery-pool.ts';
import { insertEndpointWithinCap, parseEndpointUrl } from './endpoint-url.ts';
import type { EventsTables } from './migrations.ts';
import { DeliveryFailure, type WebhookSend, type WebhookSenderOptions } from './webhook-sender.ts';

import type { EventType } from './event-types.ts';
export { EVENT_TYPES, type EventType } from './event-types.ts';

/** The header carrying `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const SIGNATURE_HEADER = 'switchboard-signature';
/** Retries stop this long after the event. */
export const RETRY_WINDOW_MS = 86_400_000;
const FIRST_RETRY_MS = 30_000;
const MAX_RETRY_GAP_MS = 3_600_000;
const CLAIM_MS = 60_000;
const SEND_TIMEOUT_MS = 10_000;
/** Events, their deliveries and the delivery log are kept this long, then pruned. */
export const EVENT_RETENTION_MS = 30 * 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;
/** Endpoints an organization may register unless configured (SWITCHBOARD_WEBHOOK_ENDPOINTS_PER_ORGANIZATION). */
export const DEFAULT_ENDPOINTS_PER_ORGANIZATION = 20;

export interface OutboxOptions {
  db: Kysely<EventsTables>;
  dialect: DialectName;
  keyRing: KeyRing;
  /** The webhook transport (webhook-sender.ts). */
  send: WebhookSend;
  /** The addresses it refuses, also checked when an endpoint is registered. */
  addresses: WebhookSenderOptions;
  /** Endpoints per organization; default DEFAULT_ENDPOINTS_PER_ORGANIZATION. */
  endpointsPerOrganization?: number;
  /** Sends in flight: total, per organization, per endpoint (delivery-pool.ts). */
  poolLimits?: PoolLimits;
  now: () => number;
  log?: Logger;
  instanceId?: string;
  /** How often due deliveries are looked for when idle; default 1 s. */
  pollMs?: number;
}

export interface WebhookEndpoint {
  id: string;
  url: string;
  events: EventType[];
  created_at: string;
}

/** The signature header value for a body at a time: `t=<unix>,v1=<hex>`. */
export function signPayload(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`;
}

/** The delay before attempt `n + 1` after `n` failed attempts. */
export function backoffMs(failedAttempts: number): number {
  return Math.min(MAX_RETRY_GAP_MS, FIRST_RETRY_MS * 2 ** Math.max(0, failedAttempts - 1));
}

const secretContext = (endpointId: string): string => `webhook-endpoint:${endpointId}`;

export class EventOutbox {
  readonly instanceId: string;
  private timer: NodeJS.Timeout | undefined;
  private prunedAt = -Infinity;
  private readonly pool: DeliveryPool;

  constructor(private readonly o: OutboxOptions) {
    this.instanceId = o.instanceId ?? `events-${randomUUID()}`;
    this.pool = new DeliveryPool(
      o.db,
      o.poolLimits ?? DEFAULT_POOL_LIMITS,
      () => ({ by: this.instanceId, now: this.iso(), until: this.iso(CLAIM_MS) }),
      (d) => this.attempt(d),
      () => this.kick(),
    );
  }

  private iso(offsetMs = 0): string {
    return new Date(this.o.now() + offsetMs).toISOString();
  }

  /** Register an endpoint; the answer carries its secret, the only time it is shown. */
  async createEndpoint(organizationId: string, url: string, events: EventType[]): Promise<WebhookEndpoint & { secret: string }> {
    const parsed = parseEndpointUrl(url, this.o.addresses);
    const id = randomUUID();
    const secret = `whsec_${randomBytes(24).toString('base64url')}`;
    const sealed = this.o.keyRing.seal(secret, secretContext(id));
    const row = {
      id,
      organization_id: organizationId,
      url: parsed.toString(),
      events: JSON.stringify([...new Set(events)].sort()),
      secret_key_id: sealed.keyId,
      secret_ciphertext: sealed.ciphertext,
      created_at: this.iso(),
    };
    await insertEndpointWithinCap(this.o.db, this.o.dialect, row, this.o.endpointsPerOrganization ?? DEFAULT_ENDPOINTS_PER_ORGANIZATION);
    return { ...this.endpointOf(row), secret };
  }

  private endpointOf(r: EventsTables['webhook_endpoints']): WebhookEndpoint {
    return { id: r.id, url: r.url, events: JSON.parse(r.events) as EventType[], created_at: r.created_at };
  }

  async listEndpoints(organizationId: string): Promise<WebhookEndpoint[]> {
    const rows = await this.o.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map((r) => this.endpointOf(r));
  }

  async getEndpoint(organizationId: string, id: string): Promise<WebhookEndpoint> {
    const row = await this.o.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (row === undefined) throw new SwitchboardError('webhook_endpoint_not_found', `No webhook endpoint ${id} in this organization`);
    return this.endpointOf(row);
  }

  async deleteEndpoint(organizationId: string, id: string): Promise<void> {
    await this.getEndpoint(organizationId, id);
    await this.o.db.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('webhook_attempts')
        .where('delivery_id', 'in', trx.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', id))
        .execute();
      await trx.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
      await trx.deleteFrom('webhook_endpoints').where('id', '=', id).execute();
    });
  }

  /** The delivery log of an endpoint, newest first: each event's delivery with its attempts. */
  async deliveries(organizationId: string, endpointId: string, limit: number): Promise<Record<string, unknown>[]> {
    await this.getEndpoint(organizationId, endpointId);
    const rows = await this.o.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('event_outbox as e', 'e.id', 'd.event_id')
      .select([
        'd.id',
        'd.event_id',
        'e.type',
        'd.status',
        'd.attempts',
        'd.next_attempt_at',
        'd.last_status',
        'd.last_error',
        'd.delivered_at',
        'd.created_at',
      ])
      .where('d.endpoint_id', '=', endpointId)
      .orderBy('d.created_at', 'desc')
      .orderBy('d.id', 'desc')
      .limit(limit)
      .execute();
    const attempts =
      rows.length === 0
        ? []
        : await this.o.db
            .selectFrom('webhook_attempts')
            .selectAll()
            .where(
              'delivery_id',
              'in',
              rows.map((r) => r.id),
            )
            .orderBy('attempt')
            .execute();
    return rows
      .map((r) => ({
        ...r,
        event_type: r.type,
        type: undefined,
        attempt_log: attempts
          .filter((a) => a.delivery_id === r.id)
          .map((a) => ({ attempt: a.attempt, at: a.at, status_code: a.status_code, error: a.error, duration_ms: a.duration_ms })),
      }))
      .map(({ type: _t, ...rest }) => rest);
  }

  /**
   * Record an event and queue it for every subscribed endpoint of the organization. `id` makes
   * it idempotent (the same id twice is one event); default a new id.
   */
  async emit(organizationId: string, type: EventType, data: Record<string, unknown>, id: string = `evt_${randomUUID()}`): Promise<string> {
    const created = this.iso();
    let queued = 0;
    await this.o.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('event_outbox')
        .values({ id, organization_id: organizationId, type, payload: JSON.stringify(data), created_at: created })
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) return;
      const endpoints = await trx.selectFrom('webhook_endpoints').select(['id', 'events']).where('organization_id', '=', organizationId).execute();
      const subscribed = endpoints.filter((e) => (JSON.parse(e.events) as string[]).includes(type));
      if (subscribed.length === 0) return;
      await trx
        .insertInto('webhook_deliveries')
        .values(
          subscribed.map((e) => ({
            id: randomUUID(),
            endpoint_id: e.id,
            event_id: id,
            status: 'pending' as const,
            attempts: 0,
            next_attempt_at: created,
            created_at: created,
          })),
        )
        .onConflict((oc) => oc.columns(['endpoint_id', 'event_id']).doNothing())
        .execute();
      queued = subscribed.length;
    });
    webhookOut('queued', queued);
    this.kick();
    return id;
  }

  /** Forget events older than EVENT_RETENTION_MS, with their deliveries (settled by then: retries stop after a day) and attempts. */
  async prune(): Promise<void> {
    this.prunedAt = this.o.now();
    const before = this.iso(-EVENT_RETENTION_MS);
    await this.o.db.transaction().execute(async (trx) => {
      const old = trx.selectFrom('event_outbox').select('id').where('created_at', '<', before);
      await trx
        .deleteFrom('webhook_attempts')
        .where('delivery_id', 'in', trx.selectFrom('webhook_deliveries').select('id').where('event_id', 'in', old))
        .execute();
      await trx.deleteFrom('webhook_deliveries').where('event_id', 'in', old).execute();
      await trx.deleteFrom('event_outbox').where('created_at', '<', before).execute();
    });
  }

  /**
   * Send every due delivery and wait for the sends (tests and one-off runs; the background
   * delivery is start()). Returns how many attempts ended meanwhile.
   */
  async deliverDue(): Promise<number> {
    if (this.o.now() - this.prunedAt >= PRUNE_EVERY_MS) await this.prune();
    const before = this.pool.completed;
    for (;;) {
      const started = await this.pool.fill();
      if (started === 0 && this.pool.busy === 0) return this.pool.completed - before;
      await this.pool.nextSettled();
    }
  }

  private async attempt(d: EventsTables['webhook_deliveries']): Promise<void> {
    const endpoint = await this.o.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', d.endpoint_id).executeTakeFirst();
    const event = await this.o.db.selectFrom('event_outbox').selectAll().where('id', '=', d.event_id).executeTakeFirst();
    if (endpoint === undefined || event === undefined) {
      await this.o.db.deleteFrom('webhook_deliveries').where('id', '=', d.id).execute();
      return;
    }
    const body = JSON.stringify({
      id: event.id,
      type: event.type,
      created_at: event.created_at,
      organization_id: event.organization_id,
      data: JSON.parse(event.payload) as unknown,
    });
    const started = this.o.now();
    let status: number | null = null;
    let error: string | null = null;
    try {
      const secret = this.o.keyRing.open({ keyId: endpoint.secret_key_id, ciphertext: endpoint.secret_ciphertext }, secretContext(endpoint.id));
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'Switchboard-Webhooks/1',
        [SIGNATURE_HEADER]: signPayload(secret, body, Math.floor(started / 1000)),
        'switchboard-event-id': event.id,
        'switchboard-event-type': event.type,
      };
      status = (await this.o.send(endpoint.url, headers, body, SEND_TIMEOUT_MS)).status;
      // Only a 2xx delivers: a redirect is not followed, and is a failed attempt like any other status.
      if (status < 200 || status >= 300) error = status >= 300 && status < 400 ? `HTTP ${status}: redirects are not followed` : `HTTP ${status}`;
    } catch (e) {
      // The log is the tenant's: a generic reason only, never a connect error's detail.
      error = e instanceof DeliveryFailure ? e.reason : 'delivery failed';
      if (!(e instanceof DeliveryFailure))
        this.o.log?.warn({ endpoint_id: endpoint.id, err_message: (e as Error).message }, 'webhook send failed unexpectedly');
    }
    const ok = error === null;
    const attempt = d.attempts + 1;
    const at = this.iso();
    const givesUp = !ok && this.o.now() + backoffMs(attempt) > Date.parse(event.created_at) + RETRY_WINDOW_MS;
    let recorded = false;
    await this.o.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('webhook_deliveries')
        .set({
          status: ok ? 'delivered' : givesUp ? 'failed' : 'pending',
          attempts: attempt,
          last_status: status,
          last_error: error,
          delivered_at: ok ? at : null,
          next_attempt_at: ok || givesUp ? null : this.iso(backoffMs(attempt)),
          claimed_by: null,
          claimed_until: null,
        })
        .where('id', '=', d.id)
        .where('claimed_by', '=', this.instanceId)
        .executeTakeFirst();
      // Our claim lapsed and another instance took the row: its attempt is the one on record.
      if (Number(updated.numUpdatedRows) === 0) return;
      await trx
        .insertInto('webhook_attempts')
        .values({ delivery_id: d.id, attempt, at, instance: this.instanceId, status_code: status, error, duration_ms: Math.max(0, this.o.now() - started) })
        .execute();
      recorded = true;
    });
    if (recorded) webhookOut(ok ? 'delivered' : givesUp ? 'failed' : 'retried', 1, this.o.now() - Date.parse(event.created_at));
    if (!ok)
      this.o.log?.info(
        { endpoint_id: endpoint.id, event_id: event.id, attempt, status_code: status },
        givesUp ? 'webhook delivery failed for good' : 'webhook delivery failed; will retry',
      );
  }

  /** Deliver in the background: now, after each emit and each send's end, and every pollMs. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.kick(), this.o.pollMs ?? 1000);
    this.timer.unref();
    this.kick();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.pool.drained();
  }

  private kick(): void {
    if (this.timer === undefined) return;
    void (async () => {
      if (this.o.now() - this.prunedAt >= PRUNE_EVERY_MS) await this.prune();
      await this.pool.fill();
    })().catch((e: unknown) => this.o.log?.warn({ err_message: (e as Error).message }, 'webhook delivery pass failed'));
  }
}
