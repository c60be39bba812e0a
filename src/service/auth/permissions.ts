/**
 * Allow-lists per application and per scoped token (issue 46): which connector types, entities
 * and actions a caller may use, with `read_only` as one preset (list/get/search/changes actions,
 * GET and HEAD proxy calls). Stored in the `access_permissions` table (operations-migrations.ts),
 * one row per application (`app:<id>`) and per scoped token (`tok_…`, its public id).
 *
 * A scoped token is never wider than its application: both lists apply (an intersection), so
 * narrowing the application narrows every token it minted at once.
 *
 * The rules are read for each authenticated request that reaches a connector (in a preHandler
 * hook) through a short-lived cache (lookup-cache.ts, like the token and connector lookups: a
 * change made through this instance applies at once, one made through another within
 * SWITCHBOARD_LOOKUP_CACHE_MS) and put on the principal; authorizeAccess is the one decision,
 * called by execute (search included), the change feed, the proxy and the hosted MCP tools alike. An allow-list of entities
 * or actions refuses the proxy, which could reach any of the vendor's endpoints.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { READ_METHODS } from '../../engine/proxy-request.ts';
import { SwitchboardError } from '../../errors/index.ts';
import type { Principal } from './authentication.ts';
import type { ServiceContext } from '../context.ts';
import type { OperationsTables } from '../ops/operations-migrations.ts';
import { sha256Hex } from './secrets.ts';
import { accessTokenId } from './token-revocation.ts';
import { LookupCache } from '../connectors/lookup-cache.ts';

/** One allow-list; an absent field allows everything of its kind. */
export interface AccessRules {
  connector_types?: string[];
  /** "type.entity" or "entity" (any type). */
  entities?: string[];
  /** "entity.action" or "action" (any entity). */
  actions?: string[];
  read_only?: boolean;
}

/** What a call would reach. */
export interface AccessTarget {
  connectorType: string;
  entity?: string;
  action?: string;
  /** A proxy call's HTTP method (no entity or action then). */
  method?: string;
}

/** The actions the read_only preset allows. */
export const READ_ACTIONS: ReadonlySet<string> = new Set(['list', 'get', 'search', 'context_store_search', 'changes']);
export const MAX_RULE_ITEMS = 200;

declare module './authentication.ts' {
  interface Principal {
    /** The allow-lists in force (the application's, then a scoped token's); each must allow a call. Unset or empty: no limit. */
    permissions?: { source: 'application' | 'token'; rules: AccessRules }[];
  }
}

const ITEM = { type: 'string', minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_.:-]+$' } as const;
const LIST = { type: 'array', maxItems: MAX_RULE_ITEMS, uniqueItems: true, items: ITEM } as const;
export const AccessRulesSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    connector_types: { ...LIST, description: 'Connector types allowed (absent: all)' },
    entities: { ...LIST, description: '"type.entity" or "entity" (absent: all)' },
    actions: { ...LIST, description: '"entity.action" or "action" (absent: all)' },
    read_only: { type: 'boolean', description: 'Only list, get, search and changes actions, and GET/HEAD proxy calls' },
  },
} as const;

const db = (ctx: ServiceContext) => ctx.database.db as unknown as Kysely<OperationsTables>;
export const applicationSubject = (applicationId: string): string => `app:${applicationId}`;

/** The stored allow-list of a subject (undefined: none, everything allowed). */
export async function readRules(ctx: ServiceContext, subjectId: string): Promise<AccessRules | undefined> {
  const row = await db(ctx).selectFrom('access_permissions').select('rules').where('subject_id', '=', subjectId).executeTakeFirst();
  return row === undefined ? undefined : (JSON.parse(row.rules) as AccessRules);
}

type Permissions = NonNullable<Principal['permissions']>;
/** The rules in force by subject list (application, scoped token), per service context. */
const cachedRules = new WeakMap<ServiceContext, LookupCache<Permissions>>();
function rulesCache(ctx: ServiceContext): LookupCache<Permissions> {
  let cache = cachedRules.get(ctx);
  if (cache === undefined) cachedRules.set(ctx, (cache = new LookupCache({ ttlMs: ctx.config.lookupCacheMs, now: ctx.now })));
  return cache;
}

/** Store (or, with null, remove) a subject's allow-list; one row per subject, last write wins. */
export async function writeRules(ctx: ServiceContext, applicationId: string, subjectId: string, rules: AccessRules | null): Promise<void> {
  try {
    await storeRules(ctx, applicationId, subjectId, rules);
  } finally {
    // Whatever this instance cached may name the subject: read again (a load running now does not store its older answer).
    rulesCache(ctx).clear();
  }
}

async function storeRules(ctx: ServiceContext, applicationId: string, subjectId: string, rules: AccessRules | null): Promise<void> {
  if (rules === null) {
    await db(ctx).deleteFrom('access_permissions').where('subject_id', '=', subjectId).where('application_id', '=', applicationId).execute();
    return;
  }
  const values = {
    subject_id: subjectId,
    application_id: applicationId,
    rules: JSON.stringify(normalize(rules)),
    updated_at: new Date(ctx.now()).toISOString(),
  };
  await db(ctx)
    .insertInto('access_permissions')
    .values(values)
    .onConflict((oc) => oc.column('subject_id').doUpdateSet({ rules: values.rules, updated_at: values.updated_at }))
    .execute();
}

function normalize(rules: AccessRules): AccessRules {
  const out: AccessRules = {};
  for (const k of ['connector_types', 'entities', 'actions'] as const) if (rules[k] !== undefined) out[k] = [...new Set(rules[k])].sort();
  if (rules.read_only === true) out.read_only = true;
  return out;
}

/** The rules in force for a request's principal: its application's, and a scoped token's own (no promise when cached). */
function loadPermissions(ctx: ServiceContext, request: FastifyRequest, principal: Principal): Promise<void> | undefined {
  const subjects = [applicationSubject(principal.applicationId)];
  let tokenSubject: string | undefined;
  if (principal.customerName !== null) {
    const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '');
    if (bearer !== null) subjects.push((tokenSubject = accessTokenId(sha256Hex(bearer[1] as string))));
  }
  const cache = rulesCache(ctx);
  const key = subjects.join(' ');
  const hit = cache.peek(key);
  if (hit !== undefined) {
    principal.permissions = hit;
    return undefined;
  }
  return cache
    .get(key, () => readPermissions(ctx, subjects, tokenSubject))
    .then((found) => {
      principal.permissions = found ?? [];
    });
}

async function readPermissions(ctx: ServiceContext, subjects: string[], tokenSubject: string | undefined): Promise<Permissions> {
  const rows = await db(ctx).selectFrom('access_permissions').select(['subject_id', 'rules']).where('subject_id', 'in', subjects).execute();
  const found = new Map(rows.map((r) => [r.subject_id, JSON.parse(r.rules) as AccessRules]));
  const permissions: Permissions = [];
  const app = found.get(subjects[0] as string);
  if (app !== undefined) permissions.push({ source: 'application', rules: app });
  const token = tokenSubject === undefined ? undefined : found.get(tokenSubject);
  if (token !== undefined) permissions.push({ source: 'token', rules: token });
  return permissions;
}

/** Routes that reach a connector or show the lists: a connector_id route, MCP, /api/v1/account/permissions. */
const needsPermissions = (url: string | undefined): boolean =>
  url !== undefined && (url.includes(':connector_id') || url === '/mcp' || url === '/api/v1/account/permissions');

/** Load the allow-lists of the authenticated requests that need them (before their handler). */
export function installPermissions(app: FastifyInstance, ctx: ServiceContext): void {
  // Callback style: a cached answer goes on without a promise (one fewer microtask hop per request).
  app.addHook('preHandler', (request, _reply, done) => {
    const principal = request.principal;
    const loading =
      principal !== null && principal !== undefined && needsPermissions(request.routeOptions.url) ? loadPermissions(ctx, request, principal) : undefined;
    if (loading === undefined) done();
    else loading.then(() => done(), done);
  });
}

const refuse = (source: string, what: string, details: Record<string, unknown>): never => {
  const whose = source === 'token' ? 'this scoped token' : 'this application';
  throw new SwitchboardError('permission_denied', `Not allowed for ${whose}: ${what}`, { details: { ...details, permissions_of: source } });
};

/** Refuse (403 permission_denied, naming what is not allowed) a call outside the principal's allow-lists. */
export function authorizeAccess(principal: Pick<Principal, 'permissions'> | undefined, target: AccessTarget): void {
  for (const { source, rules } of principal?.permissions ?? []) {
    const { connectorType: type, entity, action, method } = target;
    if (rules.connector_types !== undefined && !rules.connector_types.includes(type)) refuse(source, `connector type ${type}`, { connector_type: type });
    if (method !== undefined) {
      if (rules.entities !== undefined || rules.actions !== undefined)
        refuse(source, `the proxy on ${type} (its allow-list names entities or actions)`, { connector_type: type, method });
      if (rules.read_only === true && !READ_METHODS.has(method.toUpperCase()))
        refuse(source, `${method.toUpperCase()} through the proxy (read-only: GET and HEAD only)`, { connector_type: type, method: method.toUpperCase() });
      continue;
    }
    if (entity !== undefined && rules.entities !== undefined && !rules.entities.includes(entity) && !rules.entities.includes(`${type}.${entity}`)) {
      refuse(source, `entity ${entity} of ${type}`, { connector_type: type, entity });
    }
    if (action !== undefined) {
      if (rules.actions !== undefined && !rules.actions.includes(action) && !(entity !== undefined && rules.actions.includes(`${entity}.${action}`))) {
        refuse(source, `action ${action}${entity !== undefined ? ` on ${entity}` : ''} of ${type}`, { connector_type: type, entity, action });
      }
      if (rules.read_only === true && !READ_ACTIONS.has(action))
        refuse(source, `action ${action} (read-only: ${[...READ_ACTIONS].join(', ')} only)`, { connector_type: type, entity, action });
    }
  }
}
