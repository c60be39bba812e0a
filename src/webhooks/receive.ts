/**
 * Vendor webhooks in: verify a delivery as the connector type's manifest says (webhooks
 * section), refuse replays, attribute it to connectors, and apply its change to the record
 * store — the record from the payload, or fetched through `get`, or a deletion by id — so it is
 * searchable and in the change feed at once, with no sync.
 *
 * Order: nesting depth (400 invalid_json_depth, as every request body) → challenge handshake
 * (answered as is, only at the URL of a connector of the type) → signature (401
 * webhook_signature_invalid; a JWT must carry exp within the manifest's max age and, when the
 * manifest says so, aud = the URL it was posted to; a passcode, in a header or a body field, must
 * equal the secret) → timestamp window and replay key (401
 * webhook_replayed; the key is the body's delivery id for hmac, the token's jti or hash for jwt;
 * it is recorded only once the delivery was processed, so a vendor's retry of a failed one is not
 * a replay) → topic → the attributed connectors (attribution.ts: read from what their credential
 * checks reported; a delivery that may still belong to a connector not resolved yet is 503
 * webhook_attribution_pending, which the vendor retries) → apply. Nothing is stored before the
 * signature verifies. A delivery of several events (`events`: Microsoft Graph's batches) has each
 * event checked (a passcode per event), routed and applied on its own, and is answered 202.
 * Per-subscription secrets (signature.secret subscription, subscriptions.ts): a handshake carrying
 * the secret header is answered first (204, the header echoed; 409 webhook_handshake_unexpected
 * when the connector is making no subscription), and a delivery verifies with any of its URL's
 * connector's subscription secrets (none stored: 401).
 * At most `queueLimit` deliveries are processed at once per instance; more
 * are answered 503 webhook_queue_full with Retry-After, which vendors retry.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { jwtVerify, type JWTPayload } from 'jose';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { SwitchboardError } from '../errors/index.ts';
import { renderTree, type LoadedManifest } from '../manifest/compile.ts';
import type { ConnectorRuntime } from '../engine/index.ts';
import { checkBody } from '../errors/body-check.ts';
import { isAuthFailure, type ChangeApplier, type RecordsChanged } from '../sync/index.ts';
import { truthy } from '../templates/index.ts';
import type { EventsTables } from '../events/migrations.ts';
import type { WebhookAttributions } from './attribution.ts';
import { topicRule, type CompiledWebhooks } from '../manifest/webhooks.ts';
import { MAX_SECRET_LENGTH, SUBSCRIPTION_QUERY, type WebhookSubscriptions } from './subscriptions.ts';

/** Seconds a vendor is told to wait before retrying a delivery that cannot be attributed yet. */
export const ATTRIBUTION_RETRY_AFTER_S = 60;
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
  /** The connectors' per-subscription secrets (signature.secret subscription). */
  subscriptions?: Pick<WebhookSubscriptions, 'secrets' | 'handshake'>;
  /** One connector by id. */
  connector: (id: string) => Promise<(WebhookConnector & { connector_type: string }) | undefined>;
  /** The connectors' vendor accounts, as their credential checks reported them. */
  attributions: WebhookAttributions;
  /** A connector's runtime (its stored credentials): get for hydration. */
  runtimeFor: (connectorId: string) => Promise<ConnectorRuntime | undefined>;
  /** Ask for a sync of a connector now (a delivery naming no record: `sync` topic rules); false when one is already running. */
  requestSync?: (connectorId: string) => Promise<boolean>;
  now: () => number;
  queueLimit: number;
  log?: Logger;
}

export interface DeliveryAnswer {
  status: number;
  body: unknown;
  /** Set when the answer is not JSON (a handshake answered as text/plain). */
  contentType?: 'text/plain';
  /** Headers of the answer (a handshake's secret echoed). */
  headers?: Record<string, string>;
}

export interface Delivery {
  type: string;
  /** Set when the URL names the connector (attribution by url). */
  connectorId?: string;
  headers: Record<string, string | string[] | undefined>;
  /** The delivery URL's query parameters (a handshake's validation token). */
  query?: Record<string, string>;
  raw: Buffer;
  /** The URL the delivery was posted to, as the vendor was given it (SWITCHBOARD_PUBLIC_URL + path): a JWT's aud must equal it. */
  ingressUrl: string;
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
      throw new SwitchboardError('webhook_queue_full', `${this.inflight} webhook deliveries are being processed; retry later`, {
        details: { retry_after_ms: 1000 },
      });
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
    // The same nesting limit as every other request body (the challenge and the signature check come after).
    const tooDeep = checkBody(body);
    if (tooDeep?.code === 'invalid_json_depth') throw tooDeep;
    const ctx: Record<string, unknown> = { body, headers: d.headers };
    const rule = w.subscriptionSecret;
    if (rule?.from === 'handshake' && header(d.headers, rule.header) !== undefined) return this.handshake(d, rule.header);
    // The subscription handshake: echoing the vendor's own challenge reveals nothing, but only a
    // connector of the type has a URL to answer it at.
    // The handshake may come with an empty body and its token in the URL's query.
    if (w.challenge !== undefined && truthy(w.challenge.when.render({ ...ctx, query: d.query ?? {} }))) {
      if (w.attribution.by === 'url') await this.namedConnector(d);
      // A handshake that proves the receiver holds the secret: the response reads the HMAC of the vendor's text.
      const hmac = w.challenge.hmac === undefined ? {} : { hmac: digest(w, this.secret(d, w), String(w.challenge.hmac.render(ctx) ?? '')) };
      const answer = renderTree(w.challenge.response, { ...ctx, query: d.query ?? {}, ...hmac });
      return w.challenge.contentType === 'text/plain' ? { status: 200, body: String(answer ?? ''), contentType: 'text/plain' } : { status: 200, body: answer };
    }

    const secrets = await this.secrets(d, w);
    const { secret, claims } = await this.verifyAny(d, w, secrets, body);
    if (claims !== undefined) ctx['token'] = claims;
    if (body === undefined || typeof body !== 'object' || body === null) throw new SwitchboardError('malformed_json', 'The delivery body is not a JSON object');

    const ts = w.timestamp?.render(ctx);
    if (w.timestamp !== undefined) {
      const seconds = Number(ts);
      if (!Number.isFinite(seconds) || Math.abs(this.o.now() / 1000 - seconds) > w.toleranceSeconds) {
        throw new SwitchboardError('webhook_replayed', `The delivery's timestamp is outside ${w.toleranceSeconds} s of now`);
      }
    }
    const rawId = claims !== undefined ? tokenReplayKey(d, w, claims) : w.deliveryId?.render(ctx);
    const deliveryId = rawId === undefined || rawId === null || rawId === '' ? undefined : String(rawId);
    if (deliveryId !== undefined) {
      const at = new Date(this.o.now()).toISOString();
      await this.o.db
        .deleteFrom('webhook_receipts')
        .where('received_at', '<', new Date(this.o.now() - Math.max(RECEIPT_MS, 2 * w.toleranceSeconds * 1000)).toISOString())
        .execute();
      const r = await this.o.db
        .insertInto('webhook_receipts')
        .values({ connector_type: d.type, delivery_id: deliveryId, received_at: at })
        .onConflict((oc) => oc.columns(['connector_type', 'delivery_id']).doNothing())
        .executeTakeFirst();
      if (Number(r.numInsertedOrUpdatedRows ?? 0n) === 0) throw new SwitchboardError('webhook_replayed', `Delivery ${deliveryId} was received before`);
    }
    try {
      const key = deliveryId ?? `${d.type}:${String(ts ?? this.o.now())}`;
      return w.events !== undefined
        ? await this.applyEvents(d, manifest, w, ctx, key, secret === undefined ? secrets : [secret])
        : await this.apply(d, manifest, w, ctx, key);
    } catch (e) {
      // Not processed: the vendor's retry of this delivery must not count as a replay.
      if (deliveryId !== undefined)
        await this.o.db.deleteFrom('webhook_receipts').where('connector_type', '=', d.type).where('delivery_id', '=', deliveryId).execute();
      throw e;
    }
  }

  /**
   * A handshake naming a subscription's secret (from: handshake): kept for a subscription the
   * service is making for the URL's connector, and echoed; refused when it is making none.
   */
  private async handshake(d: Delivery, name: string): Promise<DeliveryAnswer> {
    const c = await this.namedConnector(d);
    const secret = header(d.headers, name) ?? '';
    if (secret === '' || secret.length > MAX_SECRET_LENGTH) throw refuse(`The handshake's ${name} is empty or longer than ${MAX_SECRET_LENGTH} characters`);
    if (this.o.subscriptions === undefined || !(await this.o.subscriptions.handshake(c.id, secret, subscriptionOf(d)))) {
      throw new SwitchboardError(
        'webhook_handshake_unexpected',
        `No webhook subscription of connector ${c.id} is being made: a handshake is only taken while the service runs its subscribe action`,
      );
    }
    this.o.log?.info({ connector_id: c.id, connector_type: d.type }, 'webhook: a subscription handshake stored its secret');
    return { status: 204, body: undefined, headers: { [name]: secret } };
  }

  /** The secrets a delivery may be signed with: the type's one, or each of the URL's connector's subscriptions' (none: 401). */
  private async secrets(d: Delivery, w: CompiledWebhooks): Promise<string[]> {
    if (w.signature.secret !== 'subscription') return [this.secret(d, w)];
    const c = await this.namedConnector(d);
    const secrets = (await this.o.subscriptions?.secrets(c.id, subscriptionOf(d))) ?? [];
    if (secrets.length === 0) throw refuse(`Connector ${c.id} has no webhook subscription with a secret to verify the delivery with`);
    return secrets;
  }

  /**
   * The delivery checked against each secret in turn (per-subscription secrets: one of them
   * signed it); the first that verifies, with the JWT's claims. A passcode per event (`events`) is
   * checked per event instead: `secret` is then undefined.
   */
  private async verifyAny(
    d: Delivery,
    w: CompiledWebhooks,
    secrets: string[],
    body: unknown,
  ): Promise<{ secret: string | undefined; claims: JWTPayload | undefined }> {
    if (w.signature.field !== undefined && w.events !== undefined) return { secret: undefined, claims: undefined };
    let last: unknown;
    for (const secret of secrets) {
      try {
        return { secret, claims: await this.verify(d, w, secret, body) };
      } catch (e) {
        if (!(e instanceof SwitchboardError) || e.code !== 'webhook_signature_invalid') throw e;
        last = e;
      }
    }
    throw last;
  }

  /** The type's signing secret, or webhooks_not_configured. */
  private secret(d: Delivery, w: CompiledWebhooks): string {
    if (w.signature.secret === 'subscription') throw new SwitchboardError('webhooks_not_configured', `Webhooks of ${d.type} have a secret per subscription`);
    const secret = this.o.secretFor(d.type, w.signature.secret);
    if (secret !== undefined) return secret;
    const v =
      w.signature.secret === 'oauth_client_secret'
        ? `SWITCHBOARD_${d.type.toUpperCase()}_OAUTH_CLIENT_SECRET`
        : `SWITCHBOARD_${d.type.toUpperCase()}_WEBHOOK_SECRET`;
    throw new SwitchboardError('webhooks_not_configured', `Webhooks of ${d.type} are signed with a secret this deployment does not have: set ${v}`);
  }

  /** The verified JWT's claims (scheme jwt), or undefined (hmac). */
  private async verify(d: Delivery, w: CompiledWebhooks, secret: string, body: unknown): Promise<JWTPayload | undefined> {
    const s = w.signature;
    // A delivery of several events, each with its own passcode: checked per event (applyEvents).
    if (s.field !== undefined && w.events !== undefined) return undefined;
    if (s.field !== undefined) {
      // passcode in the body: the secret itself, compared in constant time.
      const value = getPath(body, s.field);
      if (typeof value !== 'string' || value === '') throw refuse(`The delivery has no ${s.field}`);
      if (!sameText(value, secret)) throw refuse(`The delivery's ${s.field} is not the webhook secret`);
      return undefined;
    }
    if (s.scheme === 'hmac' && s.value !== undefined) return this.verifyHmac(d, w, secret, body, s.value.render({ headers: d.headers, body }));
    const given = header(d.headers, s.header);
    if (given === undefined || given === '') throw refuse(`The delivery has no ${s.header} header`);
    if (s.scheme === 'passcode') {
      if (!sameText(given, secret)) throw refuse(`${s.header} is not the webhook secret`);
      return undefined;
    }
    if (s.scheme === 'hmac') {
      if (!given.startsWith(s.prefix)) throw refuse(`${s.header} does not start with "${s.prefix}"`);
      return this.verifyHmac(d, w, secret, body, given.slice(s.prefix.length));
    }
    const token = given.replace(/^Bearer\s+/i, '');
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, new TextEncoder().encode(secret), {
        algorithms: ['HS256'],
        currentDate: new Date(this.o.now()),
        requiredClaims: ['exp'],
        ...(s.audience === 'ingress_url' ? { audience: d.ingressUrl } : {}),
      }));
    } catch (e) {
      throw refuse(`${s.header} is not a valid JWT signed with the app's secret (${(e as Error).message})`);
    }
    const nowS = this.o.now() / 1000;
    if ((payload.exp as number) - nowS > s.maxAgeSeconds) throw refuse(`${s.header}: the token expires more than ${s.maxAgeSeconds} s from now`);
    if (payload.iat !== undefined && nowS - payload.iat > s.maxAgeSeconds) throw refuse(`${s.header}: the token was issued more than ${s.maxAgeSeconds} s ago`);
    return payload;
  }

  /** hmac: the signature as sent against the HMAC of the signed text (the raw body, or the payload template's text). */
  private verifyHmac(d: Delivery, w: CompiledWebhooks, secret: string, body: unknown, sent: unknown): undefined {
    const s = w.signature;
    const where = s.value !== undefined ? 'The signature' : s.header;
    if (typeof sent !== 'string' || sent.trim() === '') throw refuse(`${where} is missing`);
    const mac = createHmac(s.algorithm, s.keyEncoding === 'utf8' ? secret : Buffer.from(secret, s.keyEncoding));
    if (s.payload !== undefined) mac.update(String(s.payload.render({ headers: d.headers, body, raw: d.raw.toString('utf8') }) ?? ''));
    else {
      if (s.signedPrefix !== undefined) mac.update(String(s.signedPrefix.render({ headers: d.headers }) ?? ''));
      mac.update(d.raw);
      // Some vendors sign the body followed by the callback URL they were given: this delivery's ingress URL.
      if (s.signed === 'body_and_ingress_url') mac.update(d.ingressUrl);
    }
    const expected = mac.digest();
    const got = Buffer.from(sent.trim(), s.encoding);
    if (got.length !== expected.length || !timingSafeEqual(got, expected)) throw refuse(`${where} does not match the delivery`);
    return undefined;
  }

  private async apply(d: Delivery, manifest: LoadedManifest, w: CompiledWebhooks, ctx: Record<string, unknown>, deliveryId: string): Promise<DeliveryAnswer> {
    const topic = String(w.topic.render(ctx) ?? '');
    const rule = topicRule(w, topic);
    if (rule === undefined) return { status: 200, body: { ok: true, topic, ignored: 'no topic rule' } };
    const entity = manifest.entities.get(rule.entity)!;
    if (rule.sync || rule.id === undefined) return this.requestSyncs(d, w, ctx, topic, entity.name);
    const idValue = rule.id.render(ctx);
    if (idValue === undefined || idValue === null || idValue === '') throw new SwitchboardError('invalid_request', `The ${topic} delivery has no record id`);
    const id = String(idValue);
    const connectors = await this.attributed(d, w, ctx);
    const changes: RecordsChanged[] = [];
    for (const c of connectors) {
      let upserts: Record<string, unknown>[] = [];
      let deletions: string[] = rule.delete ? [id] : [];
      if (!rule.delete) {
        const record = rule.record?.render(ctx);
        if (record !== undefined && record !== null && typeof record === 'object') upserts = [record as Record<string, unknown>];
        else {
          const runtime = await this.o.runtimeFor(c.id);
          if (runtime === undefined) continue;
          const params =
            rule.getParams !== undefined ? Object.fromEntries(rule.getParams.map(([k, t]) => [k, t.render({ ...ctx, id })])) : { [entity.def.primary_key]: id };
          try {
            upserts = [(await runtime.execute(entity.name, 'get', params)).data as Record<string, unknown>];
          } catch (e) {
            if (e instanceof SwitchboardError && e.code === 'upstream_not_found') {
              // The record is gone upstream (deleted since the vendor sent this): acknowledged, and the local copy dropped.
              deletions = [id];
            } else if (isAuthFailure(e)) {
              // This connector's credentials no longer work (it is auth_failed): the others still get the change.
              this.o.log?.info({ connector_id: c.id, code: e.code }, 'webhook: could not fetch the record for this connector');
              continue;
            } else throw e; // anything else (the vendor API down) fails the delivery, so the vendor retries it
          }
        }
      }
      changes.push(await this.o.applier().applyDelivery(c.id, entity, deliveryId, upserts, deletions));
    }
    return {
      status: 200,
      body: {
        ok: true,
        topic,
        entity: entity.name,
        id,
        connectors: changes.map((c) => ({ connector_id: c.connector_id, added: c.added, updated: c.updated, deleted: c.deleted })),
      },
    };
  }

  /**
   * A delivery holding several events (`events`): each is checked (its passcode `field`, when the
   * signature is one), then routed and applied on its own, with `event` in the templates. An event
   * whose passcode is missing or wrong is skipped (and counted); a delivery none of whose events
   * pass is refused (401). Answered 202 with each event's outcome.
   */
  private async applyEvents(
    d: Delivery,
    manifest: LoadedManifest,
    w: CompiledWebhooks,
    ctx: Record<string, unknown>,
    deliveryId: string,
    secrets: string[],
  ): Promise<DeliveryAnswer> {
    const events = w.events!.render(ctx);
    if (!Array.isArray(events)) throw new SwitchboardError('invalid_request', 'The delivery holds no list of events');
    const field = w.signature.field;
    const results: unknown[] = [];
    let refused = 0;
    for (const [i, event] of events.entries()) {
      if (field !== undefined) {
        const value = getPath(event, field);
        if (typeof value !== 'string' || value === '' || !secrets.some((secret) => sameText(value, secret))) {
          refused++;
          this.o.log?.warn({ connector_type: d.type, event: i }, `webhook: an event whose ${field} is not the secret was skipped`);
          results.push({ refused: `event ${i}: its ${field} is not the webhook secret` });
          continue;
        }
      }
      results.push((await this.apply(d, manifest, w, { ...ctx, event }, `${deliveryId}:${i}`)).body);
    }
    if (events.length > 0 && refused === events.length)
      throw refuse(`None of the delivery's ${events.length} events has the webhook secret as its ${field ?? ''}`);
    return { status: 202, body: { ok: true, events: results, ...(refused > 0 ? { refused } : {}) } };
  }

  /** A notice naming no record (`sync` rule): a sync of each attributed connector is requested. */
  private async requestSyncs(d: Delivery, w: CompiledWebhooks, ctx: Record<string, unknown>, topic: string, entity: string): Promise<DeliveryAnswer> {
    const connectors = await this.attributed(d, w, ctx);
    const requested: string[] = [];
    const running: string[] = [];
    for (const c of connectors) {
      if (this.o.requestSync === undefined) break;
      ((await this.o.requestSync(c.id)) ? requested : running).push(c.id);
    }
    return { status: 200, body: { ok: true, topic, entity, sync_requested: requested, ...(running.length > 0 ? { sync_running: running } : {}) } };
  }

  /** The connector the URL names, of the delivery's type, or connector_not_found. */
  private async namedConnector(d: Delivery): Promise<WebhookConnector> {
    const c = d.connectorId === undefined ? undefined : await this.o.connector(d.connectorId);
    if (c === undefined || c.connector_type !== d.type) throw new SwitchboardError('connector_not_found', `No ${d.type} connector ${d.connectorId ?? ''}`);
    return c;
  }

  /**
   * The connectors a delivery is for: the one the URL names (and, with attribution value/info,
   * only when the delivery names that connector's account), or those whose check info matches
   * the payload's id. Reads what the connectors' checks reported; never runs a check.
   */
  private async attributed(d: Delivery, w: CompiledWebhooks, ctx: Record<string, unknown>): Promise<WebhookConnector[]> {
    const a = w.attribution;
    const rendered = a.value?.render(ctx);
    // A delivery may name several accounts (a list): it is for the connectors of any of them.
    const keys = (Array.isArray(rendered) ? rendered : [rendered]).filter((k) => k !== undefined && k !== null && k !== '').map(String);
    const key = keys.length === 0 ? undefined : keys.join(',');
    if (a.by === 'url') {
      const c = await this.namedConnector(d);
      if (a.value === undefined) return [c];
      if (key === undefined) throw refuse('The delivery does not name its account');
      const known = await this.o.attributions.stateOf(c.id);
      if (known.state === 'pending') throw this.pending(`The account of connector ${c.id} is not known yet`);
      if (known.key !== key) throw refuse(`The delivery is for another account than connector ${c.id}'s`);
      return [c];
    }
    if (key === undefined) throw new SwitchboardError('invalid_request', 'The delivery does not name its workspace');
    const ids = [...new Set((await Promise.all(keys.map((k) => this.o.attributions.connectorsWithKey(d.type, k)))).flat())];
    if (ids.length === 0 && (await this.o.attributions.hasPending(d.type)))
      throw this.pending('No connector is known for this workspace yet, and some are still being resolved');
    return ids.map((id) => ({ id, status: 'active' }));
  }

  /** 503 webhook_attribution_pending (the vendor retries it), with a background resolution started. */
  private pending(message: string): SwitchboardError {
    this.o.attributions.resolveSoon();
    return new SwitchboardError('webhook_attribution_pending', `${message}; retry later`, { details: { retry_after_ms: ATTRIBUTION_RETRY_AFTER_S * 1000 } });
  }
}

/** The subscription the delivery URL names (?subscription=<id>), when it names one. */
function subscriptionOf(d: Delivery): string | undefined {
  const id = d.query?.[SUBSCRIPTION_QUERY];
  return id === undefined || id === '' ? undefined : id;
}

/** The HMAC of a text as the signature scheme writes it (its algorithm and encoding). */
function digest(w: CompiledWebhooks, secret: string, text: string): string {
  return createHmac(w.signature.algorithm, secret).update(text).digest(w.signature.encoding);
}

/** Two texts equal, compared in constant time (by their SHA-256, so lengths leak nothing). */
function sameText(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** A dotted path's value in a parsed body. */
function getPath(value: unknown, path: string): unknown {
  let v = value;
  for (const k of path.split('.')) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/** A JWT delivery's replay key: its jti, else a hash of the token (the body is unsigned, so never from it). */
function tokenReplayKey(d: Delivery, w: CompiledWebhooks, claims: JWTPayload): string {
  if (typeof claims.jti === 'string' && claims.jti !== '') return `jti:${claims.jti}`;
  const token = (header(d.headers, w.signature.header) ?? '').replace(/^Bearer\s+/i, '');
  return `sha256:${createHash('sha256').update(token).digest('hex')}`;
}
