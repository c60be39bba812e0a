/**
 * Connector operations of the hosted service: create (with credentials, or with the secret of
 * a finished service-side OAuth flow), list, get, patch, delete and execute.
 *
 * Every query is scoped by the caller's organization, so another organization's connector is
 * indistinguishable from one that does not exist (404 connector_not_found).
 */
import { subscriptionParams } from '../../webhooks/ingress.ts';
import { observing, withSpan } from '../../observe/hooks.ts';
import type { Credentials } from '../../auth/index.ts';
import { SYNC_ONLY_ACTIONS } from '../../manifest/index.ts';
import { isSwitchboardError, SwitchboardError } from '../../errors/index.ts';
import type { ConnectorPosition, ConnectorRow } from '../../store/index.ts';
import { refreshRefusal } from './refresh-coordinator.ts';
import { checkCredentials, CONNECTOR_STATUSES, markAuthFailed, parseLastError, type ConnectorLastError, type ConnectorStatus } from './connector-health.ts';
import { connectorType, nowIso, type ServiceContext } from '../context.ts';
import { oauthSecretContext } from './oauth-flow.ts';
import { executeFailure } from '../../engine/secret-scrub.ts';
import { connectorCredentialsContext, validateCredentials } from './runtime-pool.ts';
import { runSearch } from '../data/search-bridge.ts';
import { SEARCH_ACTIONS } from '../http/airbyte-envelope.ts';
import type { Principal } from '../auth/authentication.ts';
import { authorizeAccess } from '../auth/permissions.ts';
import { isAuthFailure } from '../../sync/index.ts';
import { newId, sha256Hex } from '../auth/secrets.ts';

/** The public view of a connector: everything but the credentials. */
export interface ConnectorView {
  id: string;
  organization_id: string;
  customer_name: string;
  connector_type: string;
  name: string;
  auth_variant: string;
  /** active, auth_failed or error (see connector-health.ts). */
  status: ConnectorStatus;
  last_checked_at: string | null;
  last_error: ConnectorLastError | null;
  created_at: string;
  updated_at: string;
}

export function connectorView(r: ConnectorRow): ConnectorView {
  return {
    id: r.id,
    organization_id: r.organization_id,
    customer_name: r.customer_name,
    connector_type: r.connector_type,
    name: r.name,
    auth_variant: r.auth_variant,
    status: (CONNECTOR_STATUSES as readonly string[]).includes(r.status) ? (r.status as ConnectorStatus) : 'error',
    last_checked_at: r.last_checked_at,
    last_error: parseLastError(r.last_error),
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** Whether create and PATCH run the credential check first (`?check=false` skips it); default true. */
export interface CheckOption {
  check?: boolean;
}

export interface CreateConnectorBody {
  customer_name: string;
  connector_type: string;
  name: string;
  credentials?: Record<string, unknown>;
  server_side_oauth_secret_id?: string;
  /** Airbyte's stream selection: accepted and ignored (the manifest decides what syncs). */
  replication_config?: Record<string, unknown>;
}

/**
 * Create a connector (variant A or B). The manifest's credential check runs first (unless
 * `check: false`); nothing is stored when it or any other check fails.
 */
export async function createConnector(ctx: ServiceContext, organizationId: string, body: CreateConnectorBody, opts: CheckOption = {}): Promise<ConnectorRow> {
  const runCheck = opts.check ?? true;
  const hasCredentials = body.credentials !== undefined;
  const hasSecret = body.server_side_oauth_secret_id !== undefined;
  if (hasCredentials === hasSecret) {
    const message = hasCredentials ? 'send only one of credentials and server_side_oauth_secret_id' : 'send credentials or server_side_oauth_secret_id';
    throw new SwitchboardError(
      'invalid_request',
      `Exactly one of credentials (variant A) and server_side_oauth_secret_id (variant B) is required: ${message}`,
      {
        errors: [
          { path: '/credentials', message },
          { path: '/server_side_oauth_secret_id', message },
        ],
      },
    );
  }
  const manifest = connectorType(ctx, body.connector_type);
  const id = newId();
  const now = nowIso(ctx);
  const base = {
    id,
    organization_id: organizationId,
    customer_name: body.customer_name,
    // The type itself, whichever of its names the caller used.
    connector_type: manifest.type,
    name: body.name,
    status: 'active',
    last_checked_at: null as string | null,
    last_error: null,
    created_at: now,
    updated_at: now,
  };

  // What the check reports names the vendor account webhook deliveries are attributed by (src/webhooks/attribution.ts).
  let info: Record<string, unknown> | undefined;
  if (body.credentials !== undefined) {
    const variant = validateCredentials(manifest, body.credentials);
    if (runCheck) {
      info = (await checkCredentials(ctx, manifest, body.credentials as Credentials, variant)).info;
      base.last_checked_at = nowIso(ctx);
    }
    const sealed = ctx.keyRing.sealJson(body.credentials, connectorCredentialsContext(id));
    const row: ConnectorRow = { ...base, auth_variant: variant, credentials_key_id: sealed.keyId, credentials_ciphertext: sealed.ciphertext };
    await ctx.store.insertConnector(row);
    if (info !== undefined) await ctx.webhookAttributions.learned(row.id, row.connector_type, info);
    return row;
  }

  const idHash = sha256Hex(body.server_side_oauth_secret_id as string);
  const lookup = { idHash, organizationId, connectorType: manifest.type, customerName: body.customer_name };
  if (runCheck) {
    // Check the tokens before consuming the secret (no upstream call inside the transaction);
    // a rejected check leaves the secret unused, like any other failed create.
    const pending = await ctx.store.findUsableOAuthSecret(lookup, now);
    if (pending !== undefined) {
      const tokens = ctx.keyRing.openJson<Credentials>({ keyId: pending.key_id, ciphertext: pending.ciphertext }, oauthSecretContext(idHash));
      info = (await checkCredentials(ctx, manifest, tokens, validateCredentials(manifest, tokens, pending.auth_variant))).info;
      base.last_checked_at = nowIso(ctx);
    }
  }
  // Consume the secret and insert the connector in one transaction: if the insert fails, the
  // secret stays usable; if two requests race, the conditional UPDATE lets only one through.
  const created = await ctx.store.transaction(async (tx) => {
    const secret = await tx.consumeOAuthSecret(lookup, now);
    if (secret === undefined) {
      throw new SwitchboardError(
        'invalid_oauth_secret',
        'server_side_oauth_secret_id is unknown, expired or already used, or it was issued to another organization, customer_name or connector_type',
        { errors: [{ path: '/server_side_oauth_secret_id', message: 'is not a usable secret for this organization, customer and connector type' }] },
      );
    }
    const credentials = ctx.keyRing.openJson<Credentials>({ keyId: secret.key_id, ciphertext: secret.ciphertext }, oauthSecretContext(idHash));
    const variant = validateCredentials(manifest, credentials, secret.auth_variant);
    const sealed = ctx.keyRing.sealJson(credentials, connectorCredentialsContext(id));
    const row: ConnectorRow = { ...base, auth_variant: variant, credentials_key_id: sealed.keyId, credentials_ciphertext: sealed.ciphertext };
    await tx.insertConnector(row);
    await tx.wipeOAuthSecret(idHash);
    return row;
  });
  if (info !== undefined) await ctx.webhookAttributions.learned(created.id, created.connector_type, info);
  return created;
}

/** A connector of the organization, or connector_not_found. */
export async function requireConnector(ctx: ServiceContext, organizationId: string, id: string): Promise<ConnectorRow> {
  const row = await ctx.store.getConnector(organizationId, id);
  if (row === undefined) throw notFound(id);
  return row;
}

function notFound(id: string): SwitchboardError {
  return new SwitchboardError('connector_not_found', `No connector ${id} in this organization`, { details: { connector_id: id } });
}

/** Opaque list cursor: the keyset position of the last row of the previous page. */
export function encodeListCursor(p: ConnectorPosition): string {
  return Buffer.from(JSON.stringify([p.createdAt, p.id])).toString('base64url');
}

export function decodeListCursor(s: string): ConnectorPosition {
  try {
    const v: unknown = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string') return { createdAt: v[0], id: v[1] };
  } catch {
    // fall through to the error below
  }
  throw new SwitchboardError('invalid_request', 'cursor is not a cursor returned by this endpoint', {
    errors: [{ path: 'query:cursor', message: 'is not a cursor returned by this endpoint' }],
  });
}

export interface ListQuery {
  customer_name?: string;
  connector_type?: string;
  /** Left here only when no connector type has it (customers.ts folds a known one into connector_type). */
  definition_id?: string;
  status?: ConnectorStatus;
  limit?: number;
  cursor?: string;
}

/** One page of the organization's connectors, oldest first. */
export async function listConnectors(
  ctx: ServiceContext,
  organizationId: string,
  q: ListQuery,
): Promise<{ data: ConnectorView[]; meta: { cursor: string | null; has_more: boolean } }> {
  const limit = q.limit ?? 50;
  if (q.definition_id !== undefined) return { data: [], meta: { cursor: null, has_more: false } };
  const rows = await ctx.store.listConnectors(organizationId, {
    customerName: q.customer_name,
    connectorType: q.connector_type,
    status: q.status,
    after: q.cursor !== undefined ? decodeListCursor(q.cursor) : undefined,
    limit: limit + 1,
  });
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    data: page.map(connectorView),
    meta: { cursor: hasMore && last ? encodeListCursor({ createdAt: last.created_at, id: last.id }) : null, has_more: hasMore },
  };
}

export interface PatchConnectorBody {
  name?: string;
  credentials?: Record<string, unknown>;
}

/**
 * Rename and/or replace credentials (validated and checked like on create; nothing changes
 * when the check fails). New credentials make the connector active again and resume its sync.
 */
export async function patchConnector(
  ctx: ServiceContext,
  organizationId: string,
  id: string,
  body: PatchConnectorBody,
  opts: CheckOption = {},
): Promise<ConnectorRow> {
  const current = await requireConnector(ctx, organizationId, id);
  const patch: Parameters<ServiceContext['store']['updateConnector']>[2] = { updated_at: nowIso(ctx) };
  let info: Record<string, unknown> | undefined;
  if (body.name !== undefined) patch.name = body.name;
  if (body.credentials !== undefined) {
    const manifest = connectorType(ctx, current.connector_type);
    patch.auth_variant = validateCredentials(manifest, body.credentials);
    if (opts.check ?? true) {
      info = (await checkCredentials(ctx, manifest, body.credentials as Credentials, patch.auth_variant)).info;
      patch.last_checked_at = nowIso(ctx);
    }
    const sealed = ctx.keyRing.sealJson(body.credentials, connectorCredentialsContext(id));
    patch.credentials_key_id = sealed.keyId;
    patch.credentials_ciphertext = sealed.ciphertext;
    patch.status = 'active';
    patch.last_error = null;
  }
  const row = await ctx.store.updateConnector(organizationId, id, patch);
  if (row === undefined) throw notFound(id); // deleted meanwhile
  ctx.runtimes.forget(id);
  ctx.syncWorker?.forget(id);
  // New credentials may reach another account: what their check reported, or (unchecked) asked again in the background.
  if (info !== undefined) await ctx.webhookAttributions.learned(id, row.connector_type, info);
  else if (body.credentials !== undefined) await ctx.webhookAttributions.forget(id);
  if (body.credentials !== undefined) await ctx.sync.resume(id);
  return row;
}

/**
 * Delete a connector with its credentials, and — in the same transaction, through the hook —
 * what other modules keep about it (synced records), so either all of it goes or none does.
 */
export async function deleteConnector(ctx: ServiceContext, organizationId: string, id: string): Promise<void> {
  await ctx.store.transaction(async (tx) => {
    const row = await tx.getConnector(organizationId, id);
    if (row === undefined || !(await tx.deleteConnector(organizationId, id))) throw notFound(id);
    await ctx.hooks.onConnectorDeleted?.(row, tx.db);
  });
  ctx.runtimes.forget(id);
  ctx.syncWorker?.forget(id);
}

export interface ExecuteBody {
  entity: string;
  action: string;
  /** null or absent: no params. */
  params?: Record<string, unknown> | null;
}

/** Search params as Airbyte's SDK sends them too: `fields` as key lists (`[["user", "name"]]`) → dotted paths. */
function searchParams(params: Record<string, unknown> | null | undefined): Record<string, unknown> {
  const p = params ?? {};
  const fields = p['fields'];
  if (!Array.isArray(fields) || !fields.some(Array.isArray)) return p;
  return { ...p, fields: fields.map((f) => (Array.isArray(f) && f.every((k) => typeof k === 'string') ? f.join('.') : f)) };
}

/** Run one action on a connector: the library-mode envelope, or the search response (in a span when traced). */
export function executeAction(
  ctx: ServiceContext,
  organizationId: string,
  id: string,
  body: ExecuteBody,
  signal?: AbortSignal,
  access?: Pick<Principal, 'permissions'>,
): Promise<unknown> {
  if (!observing) return runAction(ctx, organizationId, id, body, signal, access);
  const name = SEARCH_ACTIONS.has(body.action) ? 'switchboard search' : 'switchboard execute';
  return withSpan(name, { 'switchboard.entity': String(body.entity), 'switchboard.action': String(body.action) }, () =>
    runAction(ctx, organizationId, id, body, signal, access),
  );
}

async function runAction(
  ctx: ServiceContext,
  organizationId: string,
  id: string,
  body: ExecuteBody,
  signal?: AbortSignal,
  access?: Pick<Principal, 'permissions'>,
): Promise<unknown> {
  const row = ctx.runtimes.cachedRow(organizationId, id) ?? (await ctx.runtimes.row(organizationId, id));
  if (row === undefined) throw notFound(id);
  authorizeAccess(access, { connectorType: row.connector_type, entity: body.entity, action: body.action });
  const manifest = connectorType(ctx, row.connector_type);
  if (SEARCH_ACTIONS.has(body.action)) {
    const entity = manifest.entities.get(body.entity);
    if (entity === undefined) {
      const valid = [...manifest.entities.keys()];
      throw new SwitchboardError('unknown_entity', `Unknown entity "${body.entity}" for ${manifest.type}. Valid entities: ${valid.join(', ')}`, {
        details: { entity: body.entity, valid },
      });
    }
    if (entity.def.search === undefined) {
      const valid = [...entity.actions.keys()].filter((a) => !SYNC_ONLY_ACTIONS.has(a));
      throw new SwitchboardError(
        'unknown_action',
        `${manifest.type} ${body.entity} has no search fields, so no ${body.action} action. Valid actions: ${valid.join(', ')}`,
        {
          details: { entity: body.entity, action: body.action, valid },
        },
      );
    }
    return runSearch(ctx, { connector: row, manifest, entity: body.entity, params: searchParams(body.params) });
  }
  // Its token endpoint refused the refresh: no upstream call until the credentials are replaced.
  const refused = refreshRefusal(row);
  if (refused !== undefined) throw refused;
  const { runtime, secrets } = ctx.runtimes.get(row, manifest);
  try {
    // A caller is not held behind a paused or saturated connector: past a short wait it gets 429 with Retry-After.
    // The action that points the vendor at a URL only ever points it at this connector's ingress URL (src/webhooks/ingress.ts).
    const params = subscriptionParams(ctx, row, manifest, body.entity, body.action, body.params ?? {});
    // A subscription whose secret is its own (a handshake, the answer, or one generated) is kept for the connector.
    return await ctx.webhookSubscriptions.around(manifest, row, body.entity, body.action, params, (p) =>
      runtime.execute(body.entity, body.action, p, { signal, maxThrottleWaitMs: ctx.config.upstreamMaxWaitMs }),
    );
  } catch (e) {
    if (!isSwitchboardError(e)) throw e;
    // Upstream details are passed through, but never anything that contains a credential.
    const clean = executeFailure(e, secrets);
    if (isAuthFailure(clean)) {
      // Refused credentials may have been replaced elsewhere meanwhile: read the row again next time.
      ctx.runtimes.forget(row.id);
      await noteAuthFailure(ctx, row, clean);
    }
    throw clean;
  }
}

/** An execute or a proxy call met refused credentials: mark the connector auth_failed and pause its sync (best effort: the caller gets the upstream answer either way). */
export async function noteAuthFailure(ctx: ServiceContext, row: ConnectorRow, error: SwitchboardError): Promise<void> {
  try {
    if (await markAuthFailed(ctx.store, row.id, error, nowIso(ctx), row.credentials_ciphertext)) await ctx.sync.pause(row.id);
  } catch (e) {
    ctx.log.warn({ connector_id: row.id, err_message: (e as Error).message }, 'could not record the auth_failed status');
  }
}
