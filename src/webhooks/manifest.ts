/**
 * The manifest's `webhooks` section: how a vendor's webhook deliveries are verified, attributed
 * to connectors and turned into record changes. Its JSON Schema (part of the manifest schema)
 * and its compilation, run by the loader: templates compiled and checked, topics pointing at
 * entities that exist and can be hydrated. docs/manifest.md documents it.
 */
import { compileTree, type TemplateTree } from '../manifest/compile.ts';
import { compileTemplate, TemplateSyntaxError, type Template } from '../templates/index.ts';

const template = { type: 'string', description: 'A Handlebars template (see README: Templates).' } as const;

export const WEBHOOKS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['signature', 'attribution', 'topic', 'topics'],
  description: 'Vendor webhooks in: how deliveries are signed and attributed, and which topics change which entity (docs/manifest.md, "Webhooks").',
  properties: {
    description: { type: 'string' },
    signature: {
      type: 'object',
      additionalProperties: false,
      required: ['scheme', 'header', 'secret'],
      properties: {
        scheme: { enum: ['hmac', 'jwt'], description: 'hmac: an HMAC of the raw body in a header; jwt: an HS256 JWT signed with the secret in a header.' },
        algorithm: { enum: ['sha1', 'sha256'], description: 'hmac: the hash (default sha256).' },
        header: { type: 'string', minLength: 1, description: 'The header carrying the signature (or the JWT; a "Bearer " prefix is allowed).' },
        prefix: { type: 'string', description: 'hmac: text before the digest in the header, e.g. "sha1=".' },
        encoding: { enum: ['hex', 'base64'], description: 'hmac: how the digest is written (default hex).' },
        secret: { enum: ['oauth_client_secret', 'webhook_secret'], description: "The key: the deployment's OAuth client secret of this type, or SWITCHBOARD_<TYPE>_WEBHOOK_SECRET." },
        max_age_seconds: { type: 'integer', minimum: 1, maximum: 3600, description: 'jwt: the token must carry exp, at most this far ahead of now, and an iat (when given) no older than this (default 300).' },
        audience: { enum: ['ingress_url'], description: "jwt: the token's aud must equal the URL the delivery was posted to (the service's ingress URL for it, from SWITCHBOARD_PUBLIC_URL)." },
      },
    },
    delivery_id: { ...template, description: "The delivery id (scope: body, headers); a delivery id seen before is a replay (401). Not for scheme jwt: a token's replay key is its jti, else a hash of the token (the body is not signed)." },
    timestamp: { ...template, description: 'When the vendor sent it, Unix seconds (scope: body, headers); outside tolerance_seconds of now it is a replay (401).' },
    tolerance_seconds: { type: 'integer', minimum: 1, description: 'Replay window around now for timestamp (default 300).' },
    challenge: {
      type: 'object',
      additionalProperties: false,
      required: ['when', 'response'],
      description: "A subscription handshake answered before verification (monday's challenge): when `when` renders truthy, answer 200 with `response`.",
      properties: { when: template, response: { description: 'A JSON value whose string leaves are templates over body.' } },
    },
    attribution: {
      type: 'object',
      additionalProperties: false,
      required: ['by'],
      properties: {
        by: { enum: ['payload', 'url'], description: 'payload: one URL per vendor app, connectors found by `value` = their check `info`; url: the URL names the connector (subscriptions the service creates per connector), and with value and info the delivery must also name that connector\'s account.' },
        value: { ...template, description: 'The workspace/account id in the delivery (scope: body, headers, and token — the verified JWT claims — for scheme jwt).' },
        info: { type: 'string', description: "The key of the connector's credential check info it must equal (e.g. app_id), learned when the connector's credentials are checked." },
      },
    },
    subscribe: {
      type: 'object',
      additionalProperties: false,
      required: ['entity', 'action', 'url_param'],
      description: "The action that subscribes the vendor to a URL (monday's webhooks.create): hosted, its url_param is always the service's own ingress URL for the connector — filled in when absent, refused (400 webhook_ingress_url_only) when it names anything else.",
      properties: { entity: { type: 'string' }, action: { type: 'string' }, url_param: { type: 'string' } },
    },
    topic: { ...template, description: 'The delivery topic (scope: body, headers).' },
    topics: {
      type: 'array',
      minItems: 1,
      description: 'Topic rules, first match wins. A topic matching none is acknowledged and ignored.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['match', 'entity', 'id'],
        properties: {
          match: { type: 'string', minLength: 1, description: 'A topic, or a prefix ending in * (contact.*).' },
          entity: { type: 'string', description: 'The entity the topic changes.' },
          id: { ...template, description: 'The record id (scope: body, headers).' },
          record: { ...template, description: 'The record in the payload; absent: the record is fetched through the entity\'s get action (hydrate) with `get_params`.' },
          get_params: { type: 'object', additionalProperties: template, description: 'Params of get when hydrating (scope: body, headers, id); default {<primary key>: id}.' },
          delete: { type: 'boolean', description: 'The topic is a deletion: the record with this id is deleted (default false).' },
        },
      },
    },
  },
} as const;

export interface CompiledTopic {
  match: string;
  entity: string;
  id: Template;
  record?: Template;
  getParams?: [string, Template][];
  delete: boolean;
}

export interface CompiledWebhooks {
  signature: { scheme: 'hmac' | 'jwt'; algorithm: 'sha1' | 'sha256'; header: string; prefix: string; encoding: 'hex' | 'base64'; secret: 'oauth_client_secret' | 'webhook_secret'; maxAgeSeconds: number; audience?: 'ingress_url' };
  deliveryId?: Template;
  timestamp?: Template;
  toleranceSeconds: number;
  challenge?: { when: Template; response: TemplateTree };
  attribution: { by: 'payload' | 'url'; value?: Template; info?: string };
  subscribe?: { entity: string; action: string; urlParam: string };
  topic: Template;
  topics: CompiledTopic[];
}

/** The section as the manifest types it (generated/manifest.ts has the same shape). */
export interface WebhooksDef {
  signature: { scheme: 'hmac' | 'jwt'; algorithm?: 'sha1' | 'sha256'; header: string; prefix?: string; encoding?: 'hex' | 'base64'; secret: 'oauth_client_secret' | 'webhook_secret'; max_age_seconds?: number; audience?: 'ingress_url' };
  delivery_id?: string;
  timestamp?: string;
  tolerance_seconds?: number;
  challenge?: { when: string; response?: unknown };
  attribution: { by: 'payload' | 'url'; value?: string; info?: string };
  subscribe?: { entity: string; action: string; url_param: string };
  topic: string;
  topics: { match: string; entity: string; id: string; record?: string; get_params?: Record<string, string>; delete?: boolean }[];
}

const DELIVERY_ROOTS = new Set(['body', 'headers']);
/** Scheme jwt: the verified token's claims are `token`. */
const JWT_ROOTS = new Set(['body', 'headers', 'token']);

/** jwt: the longest lifetime left on a token, and the oldest iat, when the manifest says nothing. */
export const DEFAULT_JWT_MAX_AGE_SECONDS = 300;

/**
 * Compile the section; each problem is reported through `problem` with its path under
 * `webhooks`. `entities` maps each entity to its primary key and whether it has a get action.
 */
export function compileWebhooks(w: WebhooksDef, entities: Map<string, { hasGet: boolean; synced: boolean; params?: Map<string, string[]> }>, problem: (path: (string | number)[], message: string) => void): CompiledWebhooks | undefined {
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
    for (const [root] of t.references) if (root !== undefined && !roots.has(root)) add(path, `unknown variable "${root}": templates here may use ${[...roots].map((r) => `${r}.*`).join(', ')}`);
    return t;
  };
  const s = w.signature;
  if (s.scheme === 'jwt' && (s.algorithm !== undefined || s.prefix !== undefined || s.encoding !== undefined)) add(['signature'], 'algorithm, prefix and encoding are for scheme hmac');
  if (s.scheme === 'hmac' && (s.max_age_seconds !== undefined || s.audience !== undefined)) add(['signature'], 'max_age_seconds and audience are for scheme jwt');
  if (s.scheme === 'jwt' && w.delivery_id !== undefined) add(['delivery_id'], "scheme jwt: the replay key is the token's jti (else a hash of the token), never the unsigned body");
  if (w.attribution.by === 'url' && (w.attribution.value === undefined) !== (w.attribution.info === undefined)) add(['attribution'], 'attribution by url takes value and info together (the account the delivery names, and the check info key it must equal)');
  if (w.subscribe !== undefined) {
    const declared = entities.get(w.subscribe.entity)?.params?.get(w.subscribe.action);
    if (declared === undefined) add(['subscribe'], `no action ${w.subscribe.entity}.${w.subscribe.action}`);
    else if (!declared.includes(w.subscribe.url_param)) add(['subscribe', 'url_param'], `${w.subscribe.entity}.${w.subscribe.action} has no param "${w.subscribe.url_param}"`);
  }
  const valueRoots = s.scheme === 'jwt' ? JWT_ROOTS : DELIVERY_ROOTS;
  if (w.attribution.by === 'payload' && (w.attribution.value === undefined || w.attribution.info === undefined)) add(['attribution'], 'attribution by payload needs value (the id in the delivery) and info (the check info key it equals)');
  const topics: CompiledTopic[] = [];
  w.topics.forEach((t, i) => {
    const e = entities.get(t.entity);
    if (e === undefined) add(['topics', i, 'entity'], `unknown entity "${t.entity}" (entities: ${[...entities.keys()].join(', ')})`);
    else if (!e.synced) add(['topics', i, 'entity'], `entity "${t.entity}" has no sync section: webhooks change the synced records`);
    else if (t.record === undefined && t.delete !== true && !e.hasGet) add(['topics', i], `entity "${t.entity}" has no get action to hydrate the record: give record (where the payload carries it)`);
    const id = tpl(['topics', i, 'id'], t.id);
    const record = t.record !== undefined ? tpl(['topics', i, 'record'], t.record) : undefined;
    const getParams: [string, Template][] = [];
    for (const [k, src] of Object.entries(t.get_params ?? {})) {
      const c = tpl(['topics', i, 'get_params', k], src, new Set([...DELIVERY_ROOTS, 'id']));
      if (c) getParams.push([k, c]);
    }
    if (id) topics.push({ match: t.match, entity: t.entity, id, ...(record ? { record } : {}), ...(t.get_params ? { getParams } : {}), delete: t.delete === true });
  });
  const topic = tpl(['topic'], w.topic);
  const deliveryId = w.delivery_id !== undefined ? tpl(['delivery_id'], w.delivery_id) : undefined;
  const timestamp = w.timestamp !== undefined ? tpl(['timestamp'], w.timestamp) : undefined;
  const value = w.attribution.value !== undefined ? tpl(['attribution', 'value'], w.attribution.value, valueRoots) : undefined;
  const when = w.challenge !== undefined ? tpl(['challenge', 'when'], w.challenge.when) : undefined;
  let response: TemplateTree | undefined;
  try {
    response = w.challenge !== undefined ? compileTree(w.challenge.response ?? null) : undefined;
  } catch (e) {
    add(['challenge', 'response'], `template error: ${(e as Error).message}`);
  }
  if (before.n > 0 || topic === undefined) return undefined;
  return {
    signature: { scheme: s.scheme, algorithm: s.algorithm ?? 'sha256', header: s.header.toLowerCase(), prefix: s.prefix ?? '', encoding: s.encoding ?? 'hex', secret: s.secret, maxAgeSeconds: s.max_age_seconds ?? DEFAULT_JWT_MAX_AGE_SECONDS, ...(s.audience !== undefined ? { audience: s.audience } : {}) },
    ...(deliveryId ? { deliveryId } : {}),
    ...(timestamp ? { timestamp } : {}),
    toleranceSeconds: w.tolerance_seconds ?? 300,
    ...(when !== undefined && response !== undefined ? { challenge: { when, response } } : {}),
    attribution: { by: w.attribution.by, ...(value ? { value } : {}), ...(w.attribution.info !== undefined ? { info: w.attribution.info } : {}) },
    ...(w.subscribe !== undefined ? { subscribe: { entity: w.subscribe.entity, action: w.subscribe.action, urlParam: w.subscribe.url_param } } : {}),
    topic,
    topics,
  };
}

/** The first topic rule matching a topic (exact, or a prefix rule ending in *). */
export function topicRule(w: CompiledWebhooks, topic: string): CompiledTopic | undefined {
  return w.topics.find((t) => (t.match.endsWith('*') ? topic.startsWith(t.match.slice(0, -1)) : t.match === topic));
}
