/**
 * A validated manifest with every template compiled once and every params/credentials schema
 * compiled by ajv once. The engine only ever works with these compiled forms.
 */
import type { ValidateFunction } from 'ajv';
import type { Action, AuthVariant, BodyErrorRule, Entity, Manifest, Pagination } from '../../generated/manifest.ts';
import type { Template } from '../templates/index.ts';
import type { TemplateTree } from './template-tree.ts';
import type { CompiledWebhooks } from './webhooks.ts';

export { compileTree, renderTree, treeTemplates, type TemplateTree } from './template-tree.ts';

export type ActionName = 'list' | 'get' | 'create' | 'update' | 'changes' | 'scroll';
export const ACTION_NAMES: readonly ActionName[] = ['list', 'get', 'create', 'update', 'changes', 'scroll'];
/** Actions only the sync engine runs: never exposed through execute, the catalog or generated types. */
export const SYNC_ONLY_ACTIONS: ReadonlySet<ActionName> = new Set(['changes', 'scroll']);
/** List-shaped actions: they return records and meta and may paginate. */
export const LIST_ACTIONS: ReadonlySet<ActionName> = new Set(['list', 'changes', 'scroll']);

export interface CompiledRequest {
  method: string;
  path: Template;
  query: [string, Template][];
  headers: [string, Template][];
  body?: TemplateTree;
  /** How body is sent: application/json, or application/x-www-form-urlencoded with nested keys. */
  bodyEncoding: 'json' | 'form';
  graphql?: { query: Template; variables?: TemplateTree };
  /** request.base_url: another base URL of the vendor this request goes to (replaced, like the connector's, by an explicit one). */
  baseUrl?: string;
}

export interface CompiledAction {
  entity: string;
  name: ActionName;
  def: Action;
  validateParams: ValidateFunction;
  /** Groups of params of which at least one must be given (the action's requires_any). */
  requiresAny: string[][];
  request: CompiledRequest;
  /** pagination.request: sent instead of `request` when the cursor param `param` is given. */
  nextRequest?: { param: string; request: CompiledRequest };
  records?: Template;
  record?: Template;
  meta: [string, Template][];
  notFoundWhen?: Template;
  /** response.empty_on: statuses answered without a body that mean nothing to answer (no records; no such record). */
  emptyOn?: number[];
  /** response.on_empty: a 2xx answer without a body is read back with this action of the entity, its params rendered from the call; or its record is rendered from the call. */
  onEmpty?: { action: ActionName; params: [string, Template][] } | { record: Template };
  /** Per-record field rewrites (response.map). */
  map: [string, Template][];
  pagination?: { def: Pagination; next?: Template; hasMore?: Template };
  retrySafe: boolean;
  /** The action's own rate_limit (its tier): its rate, and the key template naming its bucket (default: the action). */
  rateLimit?: CompiledActionRateLimit;
}

/** An action's own bucket: its rate and the template of its key. */
export interface CompiledActionRateLimit {
  rate: { requests: number; window_ms: number; burst?: number };
  key?: Template;
}

export interface CompiledEntity {
  name: string;
  def: Entity;
  actions: Map<ActionName, CompiledAction>;
}

export interface CompiledAuthVariant {
  def: AuthVariant;
  validate: ValidateFunction;
  /** The header this variant sets and the template of its value. */
  header: string;
  value: Template;
  /** An api_key variant's query parameters, set on every request's URL (name, template of its value). */
  query?: [string, Template][];
  secretFields: string[];
  /** The variant's own credential check (auth[].check), used instead of the manifest's. */
  check?: CompiledCheck;
  /** An oauth2 variant's follow_up requests, compiled (run by runFollowUps in src/auth). */
  followUps?: CompiledFollowUp[];
  /** A minted_bearer variant: how its short-lived token is minted (the header value is then "Bearer <minted token>"). */
  mint?: CompiledMint;
  /** A client_credentials variant: the token request that gets its short-lived access token (sent as "Bearer <token>"). */
  grant?: CompiledGrant;
}

/** A client_credentials variant's token request (RFC 6749 §4.4), compiled. */
export interface CompiledGrant {
  /** The token URL as declared (its credential variables filled at request time, as OAuth URLs' are). */
  tokenUrl: string;
  grantType: string;
  clientId: Template;
  clientSecret: Template;
  tokenRequestAuth: 'client_secret_post' | 'client_secret_basic';
  /** The scope form field, or undefined. */
  scope?: string;
  /** More form fields (templates over credentials and config). */
  params: [string, Template][];
  renewBeforeSeconds: number;
}

/** One follow_up request of an oauth2 variant: headers over credentials/config, fields over the answer. */
export interface CompiledFollowUp {
  method: 'GET' | 'POST';
  url: string;
  headers: [string, Template][];
  fields: [string, Template][];
  missing?: string;
  onRefresh: boolean;
}

/** A minted_bearer variant's JWT and mint request, compiled. */
export interface CompiledMint {
  privateKey: Template;
  claims: [string, Template][];
  backdateSeconds: number;
  lifetimeSeconds: number;
  /** The mint request, as an action without params (sent with "Authorization: Bearer <jwt>" unless it reads {{jwt}} itself). */
  action: CompiledAction;
  /** The request's templates read {{jwt}} (an RFC 7523 grant's assertion): no Authorization header. */
  jwtInRequest: boolean;
  /** mint.base_url as declared (compiled in baseUrls when it has variables): the token endpoint's host, when not the API's. */
  baseUrl?: string;
  token: Template;
  expiresAt?: Template;
  expiresIn?: Template;
  renewBeforeSeconds: number;
}

export interface CompiledBodyErrorRule {
  /** The rule's test: null when it does not apply, else the extra template context (`matched`). */
  test: (ctx: Record<string, unknown>) => Record<string, unknown> | null;
  code: BodyErrorRule['code'];
  message?: Template;
  retryAfterSeconds?: Template;
  /** The upstream did not run the request: retry it even when the action is not retry-safe. */
  notExecuted: boolean;
}

/** errors.list compiled: where the error entries are and how each is shown. */
export interface CompiledErrorList {
  items: Template;
  path?: Template;
  message?: Template;
}

/** The manifest's credential check, compiled: its request as an action, plus success and info. */
export interface CompiledCheck {
  action: CompiledAction;
  success?: Template;
  info: [string, Template][];
}

/** A loaded connector: the manifest as written plus its compiled forms. */
export interface LoadedManifest {
  file: string;
  manifest: Manifest;
  type: string;
  headers: [string, Template][];
  auth: CompiledAuthVariant[];
  entities: Map<string, CompiledEntity>;
  errorMessage?: Template;
  bodyErrors: CompiledBodyErrorRule[];
  /** errors.on_status: rules for non-2xx responses. */
  statusErrors: CompiledBodyErrorRule[];
  errorList?: CompiledErrorList;
  check?: CompiledCheck;
  /** The webhooks section, compiled (webhooks.ts; deliveries are received by src/webhooks). */
  webhooks?: CompiledWebhooks;
  /** Base URLs with variables (base_url.default, regions, auth[].base_url), by their source text. */
  baseUrls?: Map<string, Template>;
  /** rate_limit.key, compiled: the template naming the bucket of a call without a rate_limit of its own. */
  rateKey?: Template;
  /** manifest.vendor_description with its file resolved against the manifest's directory. */
  vendorDescription?: { file: string; format: 'openapi' | 'graphql' };
}
