/**
 * A validated manifest with every template compiled once and every params/credentials schema
 * compiled by ajv once. The engine only ever works with these compiled forms.
 */
import type { ValidateFunction } from 'ajv';
import type { Action, AuthVariant, BodyErrorRule, Entity, Manifest, Pagination } from '../../generated/manifest.ts';
import { compileTemplate, type Template } from '../templates/index.ts';
import type { CompiledWebhooks } from '../webhooks/manifest.ts';

export type ActionName = 'list' | 'get' | 'create' | 'update' | 'changes' | 'scroll';
export const ACTION_NAMES: readonly ActionName[] = ['list', 'get', 'create', 'update', 'changes', 'scroll'];
/** Actions only the sync engine runs: never exposed through execute, the catalog or generated types. */
export const SYNC_ONLY_ACTIONS: ReadonlySet<ActionName> = new Set(['changes', 'scroll']);
/** List-shaped actions: they return records and meta and may paginate. */
export const LIST_ACTIONS: ReadonlySet<ActionName> = new Set(['list', 'changes', 'scroll']);

/** A JSON value tree whose string leaves are compiled templates. */
export type TemplateTree =
  | { kind: 'template'; template: Template }
  | { kind: 'object'; entries: [string, TemplateTree][] }
  | { kind: 'array'; items: TemplateTree[] }
  | { kind: 'literal'; value: unknown };

export interface CompiledRequest {
  method: string;
  path: Template;
  query: [string, Template][];
  headers: [string, Template][];
  body?: TemplateTree;
  /** How body is sent: application/json, or application/x-www-form-urlencoded with nested keys. */
  bodyEncoding: 'json' | 'form';
  graphql?: { query: Template; variables?: TemplateTree };
}

export interface CompiledAction {
  entity: string;
  name: ActionName;
  def: Action;
  validateParams: ValidateFunction;
  /** Groups of params of which at least one must be given (the action's requires_any). */
  requiresAny: string[][];
  request: CompiledRequest;
  records?: Template;
  record?: Template;
  meta: [string, Template][];
  notFoundWhen?: Template;
  /** response.on_empty: a 2xx answer without a body is read back with this action of the entity, its params rendered from the call. */
  onEmpty?: { action: ActionName; params: [string, Template][] };
  /** Per-record field rewrites (response.map). */
  map: [string, Template][];
  pagination?: { def: Pagination; next?: Template; hasMore?: Template };
  retrySafe: boolean;
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
  secretFields: string[];
  /** The variant's own credential check (auth[].check), used instead of the manifest's. */
  check?: CompiledCheck;
  /** An oauth2 variant's follow_up requests, compiled (run by runFollowUps in src/auth). */
  followUps?: CompiledFollowUp[];
  /** A minted_bearer variant: how its short-lived token is minted (the header value is then "Bearer <minted token>"). */
  mint?: CompiledMint;
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
  /** The mint request, as an action without params (sent with "Authorization: Bearer <jwt>"). */
  action: CompiledAction;
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
  /** The webhooks section, compiled (src/webhooks). */
  webhooks?: CompiledWebhooks;
  /** Base URLs with variables (base_url.default, regions, auth[].base_url), by their source text. */
  baseUrls?: Map<string, Template>;
  /** manifest.vendor_description with its file resolved against the manifest's directory. */
  vendorDescription?: { file: string; format: 'openapi' | 'graphql' };
}

export function compileTree(value: unknown): TemplateTree {
  if (typeof value === 'string') return value.includes('{{') ? { kind: 'template', template: compileTemplate(value) } : { kind: 'literal', value };
  if (Array.isArray(value)) return { kind: 'array', items: value.map(compileTree) };
  if (value !== null && typeof value === 'object') return { kind: 'object', entries: Object.entries(value).map(([k, v]) => [k, compileTree(v)]) };
  return { kind: 'literal', value };
}

/** Render a template tree: undefined values drop their object key or array element. */
export function renderTree(tree: TemplateTree, ctx: Record<string, unknown>): unknown {
  switch (tree.kind) {
    case 'literal':
      return tree.value;
    case 'template':
      return tree.template.render(ctx);
    case 'array':
      return tree.items.map((t) => renderTree(t, ctx)).filter((v) => v !== undefined);
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [k, t] of tree.entries) {
        const v = renderTree(t, ctx);
        if (v !== undefined) out[k] = v;
      }
      return out;
    }
  }
}

/** Every template of a tree (for reference checks). */
export function treeTemplates(tree: TemplateTree, path: string[] = []): [string[], Template][] {
  switch (tree.kind) {
    case 'literal':
      return [];
    case 'template':
      return [[path, tree.template]];
    case 'array':
      return tree.items.flatMap((t, i) => treeTemplates(t, [...path, String(i)]));
    case 'object':
      return tree.entries.flatMap(([k, t]) => treeTemplates(t, [...path, k]));
  }
}
