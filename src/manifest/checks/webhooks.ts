/**
 * The `webhooks` section's checks and compilation, run by the loader: templates compiled and
 * checked, topics pointing at entities that exist and can be hydrated.
 */
import { compileTemplate, TemplateSyntaxError, type Template } from '../../templates/index.ts';
import { compileTree, type TemplateTree } from '../template-tree.ts';
import type { CompiledEntity } from '../compile.ts';
import type { CheckContext } from './checker.ts';
import { DEFAULT_JWT_MAX_AGE_SECONDS, type CompiledTopic, type CompiledWebhooks, type SubscriptionSecretRule, type WebhooksDef } from '../webhooks.ts';

const DELIVERY_ROOTS = new Set(['body', 'headers']);
/** A handshake may also read the delivery URL's query (a validation token sent there). */
const CHALLENGE_ROOTS = new Set(['body', 'headers', 'query']);
/** Scheme jwt: the verified token's claims are `token`. */
const JWT_ROOTS = new Set(['body', 'headers', 'token']);
/** With `events`: the event being routed is `event`. */
const EVENT_ROOTS = new Set(['body', 'headers', 'event']);

/**
 * Compile the section; each problem is reported through `problem` with its path under
 * `webhooks`. `entities` maps each entity to its primary key and whether it has a get action.
 */
export function compileWebhooks(
  w: WebhooksDef,
  entities: Map<string, { hasGet: boolean; synced: boolean; params?: Map<string, string[]> }>,
  problem: (path: (string | number)[], message: string) => void,
): CompiledWebhooks | undefined {
  const before = { n: 0 };
  const add = (path: (string | number)[], message: string): void => {
    before.n++;
    problem(path, message);
  };
  const tpl = (path: (string | number)[], source: string, roots: ReadonlySet<string> = DELIVERY_ROOTS): Template | undefined => {
    let t: Template;
    try {
      t = compileTemplate(source);
    } catch (e) {
      add(path, e instanceof TemplateSyntaxError ? `template error: ${e.message}` : String(e));
      return undefined;
    }
    for (const [root] of t.references)
      if (root !== undefined && !roots.has(root)) add(path, `unknown variable "${root}": templates here may use ${[...roots].map((r) => `${r}.*`).join(', ')}`);
    return t;
  };
  const s = w.signature;
  if (
    s.scheme === 'jwt' &&
    (s.algorithm !== undefined || s.prefix !== undefined || s.signed_prefix !== undefined || s.encoding !== undefined || s.signed !== undefined)
  )
    add(['signature'], 'algorithm, prefix, signed_prefix, encoding and signed are for scheme hmac');
  if (s.scheme !== 'jwt' && (s.max_age_seconds !== undefined || s.audience !== undefined))
    add(['signature'], 'max_age_seconds and audience are for scheme jwt');
  if (s.scheme !== 'passcode' && s.header === undefined && s.value === undefined)
    add(['signature'], `scheme ${s.scheme} needs the header carrying the signature (or, hmac, a value template)`);
  if (s.scheme !== 'passcode' && s.field !== undefined) add(['signature', 'field'], 'field is for scheme passcode');
  if (s.scheme === 'passcode' && (s.header === undefined) === (s.field === undefined))
    add(['signature'], 'scheme passcode takes the header or the body field carrying the passcode (one of them)');
  if (
    s.scheme === 'passcode' &&
    (s.algorithm !== undefined || s.prefix !== undefined || s.signed_prefix !== undefined || s.encoding !== undefined || s.signed !== undefined)
  )
    add(['signature'], 'algorithm, prefix, signed_prefix, encoding and signed are for scheme hmac');
  if (w.challenge?.hmac !== undefined && s.scheme !== 'hmac')
    add(['challenge', 'hmac'], "challenge.hmac uses the signature's algorithm and encoding: scheme hmac only");
  if (s.scheme === 'jwt' && w.delivery_id !== undefined)
    add(['delivery_id'], "scheme jwt: the replay key is the token's jti (else a hash of the token), never the unsigned body");
  if (w.attribution.by === 'url' && (w.attribution.value === undefined) !== (w.attribution.info === undefined))
    add(['attribution'], 'attribution by url takes value and info together (the account the delivery names, and the check info key it must equal)');
  if (w.subscribe !== undefined) {
    const declared = entities.get(w.subscribe.entity)?.params?.get(w.subscribe.action);
    if (declared === undefined) add(['subscribe'], `no action ${w.subscribe.entity}.${w.subscribe.action}`);
    else if (!declared.includes(w.subscribe.url_param))
      add(['subscribe', 'url_param'], `${w.subscribe.entity}.${w.subscribe.action} has no param "${w.subscribe.url_param}"`);
  }
  // With `events`, the routing templates also read the event at hand.
  const routeRoots = w.events !== undefined ? EVENT_ROOTS : DELIVERY_ROOTS;
  const valueRoots = s.scheme === 'jwt' ? new Set([...JWT_ROOTS, ...routeRoots]) : routeRoots;
  if (w.attribution.by === 'payload' && (w.attribution.value === undefined || w.attribution.info === undefined))
    add(['attribution'], 'attribution by payload needs value (the id in the delivery) and info (the check info key it equals)');
  const topics: CompiledTopic[] = [];
  w.topics.forEach((t, i) => {
    const e = entities.get(t.entity);
    if (e === undefined) add(['topics', i, 'entity'], `unknown entity "${t.entity}" (entities: ${[...entities.keys()].join(', ')})`);
    else if (!e.synced) add(['topics', i, 'entity'], `entity "${t.entity}" has no sync section: webhooks change the synced records`);
    else if (t.sync !== true && t.record === undefined && t.delete !== true && !e.hasGet)
      add(['topics', i], `entity "${t.entity}" has no get action to hydrate the record: give record (where the payload carries it)`);
    if (t.sync === true && (t.id !== undefined || t.record !== undefined || t.get_params !== undefined || t.delete !== undefined))
      add(['topics', i], 'a sync rule names no record: no id, record, get_params or delete');
    if (t.sync !== true && t.id === undefined) add(['topics', i, 'id'], 'the record id is required (or sync: true for a delivery naming no record)');
    if (t.sync === true) {
      topics.push({ match: t.match, entity: t.entity, sync: true, delete: false });
      return;
    }
    const id = t.id === undefined ? undefined : tpl(['topics', i, 'id'], t.id, routeRoots);
    const record = t.record !== undefined ? tpl(['topics', i, 'record'], t.record, routeRoots) : undefined;
    const getParams: [string, Template][] = [];
    for (const [k, src] of Object.entries(t.get_params ?? {})) {
      const c = tpl(['topics', i, 'get_params', k], src, new Set([...routeRoots, 'id']));
      if (c) getParams.push([k, c]);
    }
    if (id)
      topics.push({
        match: t.match,
        entity: t.entity,
        id,
        sync: false,
        ...(record ? { record } : {}),
        ...(t.get_params ? { getParams } : {}),
        delete: t.delete === true,
      });
  });
  const topic = tpl(['topic'], w.topic, routeRoots);
  const events = w.events !== undefined ? tpl(['events'], w.events) : undefined;
  const deliveryId = w.delivery_id !== undefined ? tpl(['delivery_id'], w.delivery_id) : undefined;
  const timestamp = w.timestamp !== undefined ? tpl(['timestamp'], w.timestamp) : undefined;
  const value = w.attribution.value !== undefined ? tpl(['attribution', 'value'], w.attribution.value, valueRoots) : undefined;
  const signedPrefix = s.signed_prefix !== undefined ? tpl(['signature', 'signed_prefix'], s.signed_prefix, new Set(['headers'])) : undefined;
  const payload = s.payload !== undefined ? tpl(['signature', 'payload'], s.payload, new Set(['headers', 'body', 'raw'])) : undefined;
  const sigValue = s.value !== undefined ? tpl(['signature', 'value'], s.value) : undefined;
  if (s.scheme !== 'hmac' && (s.payload !== undefined || s.value !== undefined || s.key_encoding !== undefined))
    add(['signature'], 'payload, value and key_encoding are for scheme hmac');
  if (s.payload !== undefined && (s.signed_prefix !== undefined || s.signed !== undefined))
    add(['signature', 'payload'], 'payload is the whole signed text: not with signed_prefix or signed');
  const when = w.challenge !== undefined ? tpl(['challenge', 'when'], w.challenge.when, CHALLENGE_ROOTS) : undefined;
  const challengeHmac = w.challenge?.hmac !== undefined ? tpl(['challenge', 'hmac'], w.challenge.hmac) : undefined;
  let response: TemplateTree | undefined;
  try {
    response = w.challenge !== undefined ? compileTree(w.challenge.response ?? null) : undefined;
    if (w.challenge?.content_type === 'text/plain' && (typeof w.challenge.response !== 'string' || w.challenge.response === ''))
      add(['challenge', 'response'], 'a text/plain answer is one template (a string)');
  } catch (e) {
    add(['challenge', 'response'], `template error: ${(e as Error).message}`);
  }
  const subscriptionSecret = subscriptionSecretRule(w, entities, add);
  if (before.n > 0 || topic === undefined) return undefined;
  return {
    signature: {
      scheme: s.scheme,
      algorithm: s.algorithm ?? 'sha256',
      header: (s.header ?? '').toLowerCase(),
      ...(s.field !== undefined ? { field: s.field } : {}),
      prefix: s.prefix ?? '',
      ...(signedPrefix ? { signedPrefix } : {}),
      ...(payload ? { payload } : {}),
      ...(sigValue ? { value: sigValue } : {}),
      keyEncoding: s.key_encoding ?? 'utf8',
      encoding: s.encoding ?? 'hex',
      signed: s.signed ?? 'body',
      secret: s.secret,
      maxAgeSeconds: s.max_age_seconds ?? DEFAULT_JWT_MAX_AGE_SECONDS,
      ...(s.audience !== undefined ? { audience: s.audience } : {}),
    },
    ...(deliveryId ? { deliveryId } : {}),
    ...(events ? { events } : {}),
    ...(timestamp ? { timestamp } : {}),
    toleranceSeconds: w.tolerance_seconds ?? 300,
    ...(when !== undefined && response !== undefined
      ? { challenge: { when, response, contentType: w.challenge?.content_type ?? 'application/json', ...(challengeHmac ? { hmac: challengeHmac } : {}) } }
      : {}),
    ...(subscriptionSecret !== undefined ? { subscriptionSecret } : {}),
    attribution: { by: w.attribution.by, ...(value ? { value } : {}), ...(w.attribution.info !== undefined ? { info: w.attribution.info } : {}) },
    ...(w.subscribe !== undefined ? { subscribe: { entity: w.subscribe.entity, action: w.subscribe.action, urlParam: w.subscribe.url_param } } : {}),
    topic,
    topics,
  };
}

/** Random bytes in a generated subscription secret, unless the manifest says. */
const GENERATED_SECRET_BYTES = 32;

/**
 * `subscription_secret`, with `signature.secret: subscription` (one without the other is a
 * problem): deliveries come to the connector's own URL (attribution by url) from subscriptions the
 * service makes (subscribe), and each form names what it reads.
 */
function subscriptionSecretRule(
  w: WebhooksDef,
  entities: Map<string, { params?: Map<string, string[]> }>,
  add: (path: (string | number)[], message: string) => void,
): SubscriptionSecretRule | undefined {
  const r = w.subscription_secret;
  const bySubscription = w.signature.secret === 'subscription';
  if (r === undefined) {
    if (bySubscription) add(['subscription_secret'], "signature.secret subscription needs subscription_secret: where each subscription's secret comes from");
    return undefined;
  }
  if (!bySubscription) add(['subscription_secret'], 'subscription_secret is for signature.secret: subscription');
  if (w.attribution.by !== 'url')
    add(['attribution', 'by'], 'subscription secrets are kept per connector: deliveries must come to its URL (attribution by url)');
  if (w.subscribe === undefined) add(['subscribe'], 'subscription secrets are kept while the service runs the subscribe action: name it');
  if (w.challenge?.hmac !== undefined) add(['challenge', 'hmac'], 'a handshake proving the secret needs one secret per type, not one per subscription');
  const extra = (keys: string[]): void => {
    const given = (['header', 'field', 'param', 'bytes'] as const).filter((k) => r[k] !== undefined && !keys.includes(k));
    if (given.length > 0) add(['subscription_secret'], `from ${r.from} takes no ${given.join(', ')}`);
  };
  if (r.from === 'handshake') {
    extra(['header']);
    if (r.header === undefined) add(['subscription_secret', 'header'], 'from handshake needs the header carrying the secret');
    return r.header === undefined ? undefined : { from: 'handshake', header: r.header.toLowerCase() };
  }
  if (r.from === 'response') {
    extra(['field']);
    if (r.field === undefined)
      add(['subscription_secret', 'field'], "from response needs the dotted field of the subscribe action's record holding the secret");
    return r.field === undefined ? undefined : { from: 'response', field: r.field };
  }
  extra(['param', 'bytes']);
  if (r.param === undefined) {
    add(['subscription_secret', 'param'], 'from generated needs the subscribe action param the secret is sent in');
    return undefined;
  }
  const declared = w.subscribe === undefined ? undefined : entities.get(w.subscribe.entity)?.params?.get(w.subscribe.action);
  if (declared !== undefined && !declared.includes(r.param))
    add(['subscription_secret', 'param'], `${w.subscribe!.entity}.${w.subscribe!.action} has no param "${r.param}"`);
  return { from: 'generated', param: r.param, bytes: r.bytes ?? GENERATED_SECRET_BYTES };
}

/** The manifest's webhooks section checked against its entities; problems reported under `webhooks`. */
export function checkWebhooks({ m, check }: CheckContext, entities: Map<string, CompiledEntity>): CompiledWebhooks | undefined {
  if (m.webhooks === undefined) return undefined;
  const shapes = new Map(
    [...entities].map(([n, e]) => [
      n,
      {
        hasGet: e.actions.has('get'),
        synced: e.def.sync !== undefined,
        params: new Map([...e.actions].map(([a, act]) => [a, Object.keys(act.def.params ?? {})])),
      },
    ]),
  );
  return compileWebhooks(m.webhooks as WebhooksDef, shapes, (path, msg) => check.add(['webhooks', ...path], msg));
}
