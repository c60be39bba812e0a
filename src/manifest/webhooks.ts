/**
 * The manifest's `webhooks` section in its compiled form: how a vendor's webhook deliveries are
 * verified, attributed to connectors and turned into record changes. Its JSON Schema is part of
 * manifest.schema.json; checks/webhooks.ts compiles it at load time; src/webhooks/ receives the
 * deliveries. docs/manifest.md documents it.
 */
import type { Template } from '../templates/index.ts';
import type { TemplateTree } from './template-tree.ts';

export interface CompiledTopic {
  match: string;
  entity: string;
  /** Undefined for a `sync` rule (a notice naming no record). */
  id?: Template;
  /** The delivery names no record: the attributed connectors' syncs are requested. */
  sync: boolean;
  record?: Template;
  getParams?: [string, Template][];
  delete: boolean;
}

/**
 * A subscription's secret: a handshake header the vendor sends to the connector's URL while the
 * subscription is being made (echoed back), a field of the subscribe action's record, or random
 * bytes the service sends as one of its params.
 */
export type SubscriptionSecretRule =
  { from: 'handshake'; header: string } | { from: 'response'; field: string } | { from: 'generated'; param: string; bytes: number };

export interface CompiledWebhooks {
  /** passcode: `field` (dotted, in the body, or in each event with `events`) or `header` carries the secret itself; header is '' then. */
  signature: {
    scheme: 'hmac' | 'jwt' | 'passcode';
    algorithm: 'sha1' | 'sha256';
    header: string;
    field?: string;
    prefix: string;
    /** hmac: rendered (over headers) and signed before the raw body ("v0:<timestamp>:" before the body). */
    signedPrefix?: Template;
    /** hmac: the signed text (over headers, body and raw), instead of the raw body. */
    payload?: Template;
    /** hmac: the signature as sent (over headers and body), instead of the header after its prefix. */
    value?: Template;
    /** hmac: the secret as text (utf8), or hex- or base64-decoded bytes. */
    keyEncoding: 'utf8' | 'hex' | 'base64';
    encoding: 'hex' | 'base64';
    /** hmac: the raw body, or the raw body followed by the ingress URL the delivery was posted to. */
    signed: 'body' | 'body_and_ingress_url';
    /** subscription: each of the connector's subscriptions' own secret, kept as `subscriptionSecret` says. */
    secret: 'oauth_client_secret' | 'webhook_secret' | 'subscription';
    maxAgeSeconds: number;
    audience?: 'ingress_url';
  };
  deliveryId?: Template;
  /** A delivery holding several events: the list (over body), each then checked, routed and applied with `event`. */
  events?: Template;
  timestamp?: Template;
  toleranceSeconds: number;
  /** `hmac`: the text whose HMAC (keyed with the signing secret) the response reads as {{hmac}}. */
  challenge?: { when: Template; response: TemplateTree; hmac?: Template; contentType: 'application/json' | 'text/plain' };
  /** With signature.secret subscription: where each subscription's secret comes from (src/webhooks/subscriptions.ts). */
  subscriptionSecret?: SubscriptionSecretRule;
  attribution: { by: 'payload' | 'url'; value?: Template; info?: string };
  subscribe?: { entity: string; action: string; urlParam: string };
  topic: Template;
  topics: CompiledTopic[];
}

/** The section as the manifest types it (generated/manifest.ts has the same shape). */
export interface WebhooksDef {
  signature: {
    scheme: 'hmac' | 'jwt' | 'passcode';
    algorithm?: 'sha1' | 'sha256';
    header?: string;
    field?: string;
    prefix?: string;
    signed_prefix?: string;
    payload?: string;
    value?: string;
    key_encoding?: 'utf8' | 'hex' | 'base64';
    encoding?: 'hex' | 'base64';
    signed?: 'body' | 'body_and_ingress_url';
    secret: 'oauth_client_secret' | 'webhook_secret' | 'subscription';
    max_age_seconds?: number;
    audience?: 'ingress_url';
  };
  delivery_id?: string;
  events?: string;
  timestamp?: string;
  tolerance_seconds?: number;
  challenge?: { when: string; response?: unknown; hmac?: string; content_type?: 'application/json' | 'text/plain' };
  subscription_secret?: { from: 'handshake' | 'response' | 'generated'; header?: string; field?: string; param?: string; bytes?: number };
  attribution: { by: 'payload' | 'url'; value?: string; info?: string };
  subscribe?: { entity: string; action: string; url_param: string };
  topic: string;
  topics: { match: string; entity: string; id?: string; sync?: boolean; record?: string; get_params?: Record<string, string>; delete?: boolean }[];
}

/** jwt: the longest lifetime left on a token, and the oldest iat, when the manifest says nothing. */
export const DEFAULT_JWT_MAX_AGE_SECONDS = 300;

/** The first topic rule matching a topic (exact, or a prefix rule ending in *). */
export function topicRule(w: CompiledWebhooks, topic: string): CompiledTopic | undefined {
  return w.topics.find((t) => (t.match.endsWith('*') ? topic.startsWith(t.match.slice(0, -1)) : t.match === topic));
}
