/**
 * Vendor webhooks in: verify a delivery as the connector type's manifest says (webhooks
 * section), refuse replays, attribute it to connectors, and apply its change to the record
 * store — the record from the payload, or fetched through `get`, or a deletion by id — so it is
 * searchable and in the change feed at once, with no sync.
 *
 * Order: challenge handshake (answered as is) → signature (401 webhook_signature_invalid) →
 * timestamp window and delivery id (401 webhook_replayed; the id is recorded only once the
 * delivery was processed, so a vendor's retry of a failed one is not a replay) → topic → the
 * attributed connectors → apply. Nothing is stored before the signature verifies. At most
 * `queueLimit` deliveries are processed at once per instance; more are answered 503
 * webhook_queue_full with Retry-After, which vendors retry.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { jwtVerify } from 'jose';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { SwitchboardError } from '../errors/index.ts';
import { renderTree, type LoadedManifest } from '../manifest/compile.ts';
import type { ConnectorRuntime } from '../engine/index.ts';
import { isAuthFailure, type ChangeApplier, type RecordsChanged } from '../sync/index.ts';
import { truthy } from '../templates/index.ts';
import type { EventsTables } from '../events/migrations.ts';
import { topicRule, type CompiledWebhooks } from './manifest.ts';

/** Connectors of a type checked for their attribution key per delivery at most (the rest on later deliveries). */
const RESOLVE_PER_DELIVERY = 20;
/** Receipts (replay detection by id) are kept this long at least. */
const RECEIPT_MS = 86_400_000;

export interface WebhookConnector {
  id: string;
  status: string;
}

export interface ReceiverOptions {
  db: Kysely<EventsTables>;
  registry: Map<string, LoadedManifest>;
  applier: () => ChangeApplier;
  /** The signing secret of a type (per the manifest's signature.secret), or undefined when not configured. */
  secretFor: (type: string, kind: 'oauth_client_secret' | 'webhook_secret') => string | undefined;
  /** Connectors of a type (for attribution by payload), and one connector by id. */
  connectorsOfType: (type: string) => Promise<WebhookConnector[]>;
  connector: (id: string) => Promise<(WebhookConnector & { connector_type: string }) | undefined>;
  /** A connector's runtime (its stored credentials): check info for attribution, get for hydration. */
  runtimeFor: (connectorId: string) => Promise<ConnectorRuntime | undefined>;
  now: () => number;
  queueLimit: number;
  log?: Logger;
}

export interface DeliveryAnswer {
  status: number;
  body: unknown;
}

export interface Delivery {
  type: string;
  /** Set when the URL names the connector (attribution by url). */
  connectorId?: string;
  headers: Record<string, string | string[] | undefined>;
  raw: Buffer;
}

function header(headers: Delivery['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

const refuse = (message: string): SwitchboardError => new SwitchboardError('webhook_signature_invalid', message);

export class WebhookReceiver {
  private inflight = 0;
  constructor(private readonly o: ReceiverOptions) {}

  /** Process one delivery; throws SwitchboardErrors for refusals (the route answers them as problems). */
  async receive(d: Delivery): Promise<DeliveryAnswer> {
    const manifest = this.o.registry.get(d.type);
    const w = manifest?.webhooks;
    if (manifest === undefined || w === undefined) throw new SwitchboardError('route_not_found', `No webhooks for connector type "${d.type}"`);
    if (this.inflight >= this.o.queueLimit) {
      throw new SwitchboardError('webhook_queue_full', `${this.inflight} webhook deliveries are being processed; retry later`, { details: { retry_after_ms: 1000 } });
    }
    this.inflight++;
    try {
      return await this.process(d, manifest, w);
    } finally {
      this.inflight--;
    }
  }

  private async process(d: Delivery, manifest: LoadedManifest, w: CompiledWebhooks): Promise<DeliveryAnswer> {
    let body: unknown;
    try {
      body = JSON.parse(d.raw.toString('utf8'));
    } catch {
      body = undefined;
    }
    const ctx = { body, headers: d.headers };
    // The subscription handshake: echoing the vendor's own challenge reveals nothing.
    if (w.challenge !== undefined && body !== undefined && truthy(w.challenge.when.render(ctx))) return { status: 200, body: renderTree(w.challenge.response, ctx) };

    const secret = this.o.secretFor(d.type, w.signature.secret);
    if (secret === undefined) {
      const v = w.signature.secret === 'oauth_client_secret' ? `SWITCHBOARD_${d.type.toUpperCase()}_OAUTH_CLIENT_SECRET` : `SWITCHBOARD_${d.type.toUpperCase()}_WEBHOOK_SECRET`;
      throw new SwitchboardError('webhooks_not_configured', `Webhooks of ${d.type} are signed with a secret this deployment does not have: set ${v}`);
    }
    await this.verify(d, w, secret);
    if (body === undefined || typeof body !== 'object' || body === null) throw new SwitchboardError('malformed_json', 'The delivery body is not a JSON object');

    const ts = w.timestamp?.render(ctx);
    if (w.timestamp !== undefined) {
      const seconds = Number(ts);
      if (!Number.isFinite(seconds) || Math.abs(this.o.now() / 1000 - seconds) > w.toleranceSeconds) {
        throw new SwitchboardError('webhook_replayed', `The delivery's timestamp is outside ${w.toleranceSeconds} s of now`);
      }
    }
    const rawId = w.deliveryId?.render(ctx);
    const deliveryId = rawId === undefined || rawId === null || rawId === '' ? undefined : String(rawId);
    if (deliveryId !== undefined) {
      const at = new Date(this.o.now()).toISOString();
      await this.o.db.deleteFrom('webhook_receipts').where('received_at', '<', new Date(this.o.now() - Math.max(RECEIPT_MS, 2 * w.toleranceSeconds * 1000)).toISOString()).execute();
      const r = await this.o.db.insertInto('webhook_receipts').values({ connector_type: d.type, delivery_id: deliveryId, received_at: at }).onConflict((oc) => oc.columns(['connector_type', 'delivery_id']).doNothing()).executeTakeFirst();
      if (Number(r.numInsertedOrUpdatedRows ?? 0n) === 0) throw new SwitchboardError('webhook_replayed', `Delivery ${deliveryId} was received before`);
    }
    try {
      return await this.apply(d, manifest, w, ctx, deliveryId ?? `${d.type}:${String(ts ?? this.o.now())}`);
    } catch (e) {
      // Not processed: the vendor's retry of this delivery must not count as a replay.
      if (deliveryId !== undefined) await this.o.db.deleteFrom('webhook_receipts').where('connector_type', '=', d.type).where('delivery_id', '=', deliveryId).execute();
      throw e;
    }
  }

  private async verify(d: Delivery, w: CompiledWebhooks, secret: string): Promise<void> {
    const s = w.signature;
    const given = header(d.headers, s.header);
    if (given === undefined || given === '') throw refuse(`The delivery has no ${s.header} header`);
    if (s.scheme === 'hmac') {
      if (!given.startsWith(s.prefix)) throw refuse(`${s.header} does not start with "${s.prefix}"`);
      const expected = createHmac(s.algorithm, secret).update(d.raw).digest();
      const got = Buffer.from(given.slice(s.prefix.length).trim(), s.encoding);
      if (got.length !== expected.length || !timingSafeEqual(got, expected)) throw refuse(`${s.header} does not match the body`);
      return;
    }
    const token = given.replace(/^Bearer\s+/i, '');
    try {
      await jwtVerify(token, new TextEncoder().encode(secret), { algorithms: ['HS256'], currentDate: new Date(this.o.now()) });
    } catch (e) {
      throw refuse(`${s.header} is not a valid JWT signed with the app's secret (${(e as Error).message})`);
    }
  }

  private async apply(d: Delivery, manifest: LoadedManifest, w: CompiledWebhooks, ctx: Record<string, unknown>, deliveryId: string): Promise<DeliveryAnswer> {
    const topic = String(w.topic.render(ctx) ?? '');
    const rule = topicRule(w, topic);
    if (rule === undefined) return { status: 200, body: { ok: true, topic, ignored: 'no topic rule' } };
    const entity = manifest.entities.get(rule.entity)!;
    const idValue = rule.id.render(ctx);
    if (idValue === undefined || idValue === null || idValue === '') throw new SwitchboardError('invalid_request', `The ${topic} delivery has no record id`);
    const id = String(idValue);
    const connectors = await this.attributed(d, manifest, w, ctx);
    const changes: RecordsChanged[] = [];
    for (const c of connectors) {
      let upserts: Record<string, unknown>[] = [];
      if (!rule.delete) {
        const record = rule.record?.render(ctx);
        if (record !== undefined && record !== null && typeof record === 'object') upserts = [record as Record<string, unknown>];
        else {
          const runtime = await this.o.runtimeFor(c.id);
          if (runtime === undefined) continue;
          const params = rule.getParams !== undefined ? Object.fromEntries(rule.getParams.map(([k, t]) => [k, t.render({ ...ctx, id })])) : { [entity.def.primary_key]: id };
          try {
            upserts = [(await runtime.execute(entity.name, 'get', params)).data as Record<string, unknown>];
          } catch (e) {
            // This connector's credentials no longer work (it is auth_failed): the others still get the change.
            // Anything else (the vendor API down) fails the delivery, so the vendor retries it.
            if (!isAuthFailure(e)) throw e;
            this.o.log?.info({ connector_id: c.id, code: e.code }, 'webhook: could not fetch the record for this connector');
            continue;
          }
        }
      }
      changes.push(await this.o.applier().applyDelivery(c.id, entity, deliveryId, upserts, rule.delete ? [id] : []));
    }
    return { status: 200, body: { ok: true, topic, entity: entity.name, id, connectors: changes.map((c) => ({ connector_id: c.connector_id, added: c.added, updated: c.updated, deleted: c.deleted })) } };
  }

  /** The connectors a delivery is for: the one the URL names, or those whose check info matches the payload's id. */
  private async attributed(d: Delivery, manifest: LoadedManifest, w: CompiledWebhooks, ctx: Record<string, unknown>): Promise<WebhookConnector[]> {
    if (w.attribution.by === 'url') {
      const c = d.connectorId === undefined ? undefined : await this.o.connector(d.connectorId);
      if (c === undefined || c.connector_type !== d.type) throw new SwitchboardError('connector_not_found', `No ${d.type} connector ${d.connectorId ?? ''}`);
      return [c];
    }
    const key = w.attribution.value?.render(ctx);
    if (key === undefined || key === null || key === '') throw new SwitchboardError('invalid_request', 'The delivery does not name its workspace');
    const all = await this.o.connectorsOfType(d.type);
    const known = await this.o.db.selectFrom('webhook_attributions').selectAll().where('connector_type', '=', d.type).execute();
    const byId = new Map(known.map((k) => [k.connector_id, k.attribution_key]));
    // Connectors not asked yet: their credential check names their workspace (once, remembered).
    const unknown = all.filter((c) => !byId.has(c.id) && c.status !== 'auth_failed').slice(0, RESOLVE_PER_DELIVERY);
    for (const c of unknown) {
      const runtime = await this.o.runtimeFor(c.id);
      if (runtime === undefined || manifest.check === undefined) continue;
      let value: string | null = null;
      try {
        const info = (await runtime.check()).info as Record<string, unknown> | undefined;
        const v = info?.[w.attribution.info!];
        value = v === undefined || v === null ? null : String(v);
      } catch (e) {
        this.o.log?.info({ connector_id: c.id, code: (e as { code?: string }).code }, 'webhook attribution: credential check failed');
        continue;
      }
      byId.set(c.id, value);
      await this.o.db
        .insertInto('webhook_attributions')
        .values({ connector_id: c.id, connector_type: d.type, attribution_key: value, resolved_at: new Date(this.o.now()).toISOString() })
        .onConflict((oc) => oc.column('connector_id').doUpdateSet({ attribution_key: value, resolved_at: new Date(this.o.now()).toISOString() }))
        .execute();
    }
    const live = new Set(all.map((c) => c.id));
    return all.filter((c) => live.has(c.id) && byId.get(c.id) === String(key));
  }
}
