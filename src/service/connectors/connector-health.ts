/**
 * Connector health: the manifest's credential check run before credentials are stored (create,
 * PATCH) and on demand (POST .../check), and the connector status it maintains.
 *
 * status      active       the credentials worked the last time anything found out
 *             auth_failed  the upstream refused them (401/403 during a check, execute or sync;
 *                          or the OAuth refresh failed); the scheduler does not sync it until
 *                          the credentials are replaced or a check passes
 *             error        the last check failed for another reason (unreachable, 5xx, ...)
 * last_error  {code, message, at} of the failure that set auth_failed or error; null when active
 */
import type { Credentials } from '../../auth/index.ts';
import { ConnectorRuntime, type CheckResult, type RuntimeOptions } from '../../engine/index.ts';
import { isSwitchboardError, SwitchboardError } from '../../errors/index.ts';
import type { LoadedManifest } from '../../manifest/index.ts';
import type { ConnectorRow, ServiceStore } from '../../store/index.ts';
import { isAuthFailure } from '../../sync/index.ts';
import { nowIso, type ServiceContext } from '../context.ts';
import { scrubSecrets, secretValues } from '../../engine/secret-scrub.ts';

export type ConnectorStatus = 'active' | 'auth_failed' | 'error';
export const CONNECTOR_STATUSES: readonly ConnectorStatus[] = ['active', 'auth_failed', 'error'];

export interface ConnectorLastError {
  code: string;
  message: string;
  at: string;
}

/** The last_error column as an object (null when empty or unreadable). */
export function parseLastError(text: string | null): ConnectorLastError | null {
  if (text === null || text === '') return null;
  try {
    return JSON.parse(text) as ConnectorLastError;
  } catch {
    return { code: 'internal_error', message: text, at: '' };
  }
}

/** The same error with every credential value scrubbed from its message, errors and details. */
function scrubbed(e: SwitchboardError, secrets: string[]): SwitchboardError {
  return new SwitchboardError(e.code, scrubSecrets(e.message, secrets), {
    errors: scrubSecrets(e.errors, secrets),
    details: scrubSecrets(e.details, secrets),
    status: e.status,
  });
}

/**
 * Run a connector type's check with credentials not stored yet: a one-off runtime with the
 * deployment's base URL override, OAuth app and retry policy. Throws the (scrubbed) upstream
 * error: upstream_credentials_rejected (424, the upstream's message, pointed at /credentials),
 * upstream_unavailable (503), or whatever else the upstream answered.
 */
export async function checkCredentials(ctx: ServiceContext, manifest: LoadedManifest, credentials: Credentials, variant: string): Promise<CheckResult> {
  const typeCfg = ctx.config.connectorTypes[manifest.type];
  const options: RuntimeOptions = {
    fetch: ctx.fetch,
    // A one-off request: not worth a throttle, and it must not share a connector's budget.
    limiter: null,
    authVariant: variant,
    deadlineMs: ctx.config.upstreamDeadlineMs,
    ...(typeCfg?.baseUrl !== undefined ? { baseUrl: typeCfg.baseUrl } : {}),
    ...(typeCfg?.oauth !== undefined
      ? {
          oauthClient: {
            clientId: typeCfg.oauth.clientId,
            clientSecret: typeCfg.oauth.clientSecret,
            ...(typeCfg.oauth.tokenUrl !== undefined ? { tokenUrl: typeCfg.oauth.tokenUrl } : {}),
          },
        }
      : {}),
    ...(ctx.retry !== undefined ? { retry: ctx.retry } : {}),
  };
  const secrets = secretValues(manifest, variant, credentials);
  try {
    return await new ConnectorRuntime(manifest, credentials, options).check();
  } catch (e) {
    if (!isSwitchboardError(e)) throw e;
    const clean = scrubbed(e, secrets);
    if (clean.code === 'upstream_credentials_rejected') {
      throw new SwitchboardError(clean.code, clean.message, { details: clean.details, errors: [{ path: '/credentials', message: clean.message }] });
    }
    throw clean;
  }
}

/** The health columns after a check outcome at `at`. */
export function healthAfter(
  outcome: { ok: true } | { ok: false; error: SwitchboardError },
  at: string,
): Pick<ConnectorRow, 'status' | 'last_checked_at' | 'last_error'> {
  if (outcome.ok) return { status: 'active', last_checked_at: at, last_error: null };
  const status: ConnectorStatus = isAuthFailure(outcome.error) ? 'auth_failed' : 'error';
  return { status, last_checked_at: at, last_error: JSON.stringify({ code: outcome.error.code, message: outcome.error.message, at }) };
}

/**
 * Mark a connector auth_failed after the upstream refused its credentials during execute or
 * sync, unless they were replaced meanwhile (`ciphertext` is what the failing call used).
 * Returns true when the row changed.
 */
export async function markAuthFailed(store: ServiceStore, connectorId: string, error: SwitchboardError, at: string, ciphertext?: string): Promise<boolean> {
  const lastError = JSON.stringify({ code: error.code, message: error.message, at });
  const row = await store.setConnectorHealth(connectorId, { status: 'auth_failed', last_error: lastError }, ciphertext);
  return row !== undefined;
}

/** What POST .../check answers. */
export interface CheckResponse {
  ok: boolean;
  checked_at: string;
  /** The check's info (passing checks). */
  info?: Record<string, unknown>;
  /** The failure (failing checks). */
  error?: { code: string; message: string; details?: Record<string, unknown> };
  connector: ConnectorRow;
}

/**
 * Run the check with a stored connector's credentials and record the outcome: active (and its
 * paused sync resumes), auth_failed (sync paused) or error.
 */
export async function checkStoredConnector(ctx: ServiceContext, row: ConnectorRow, manifest: LoadedManifest): Promise<CheckResponse> {
  const { runtime, secrets } = ctx.runtimes.get(row, manifest);
  const at = nowIso(ctx);
  let response: Omit<CheckResponse, 'connector'>;
  let health: ReturnType<typeof healthAfter>;
  try {
    const result = await runtime.check();
    health = healthAfter({ ok: true }, at);
    response = { ok: true, checked_at: at, info: result.info };
  } catch (e) {
    if (!isSwitchboardError(e)) throw e;
    const clean = scrubbed(e, secrets);
    health = healthAfter({ ok: false, error: clean }, at);
    response = {
      ok: false,
      checked_at: at,
      error: { code: clean.code, message: clean.message, ...(Object.keys(clean.details).length > 0 ? { details: clean.details } : {}) },
    };
  }
  const updated = await ctx.store.setConnectorHealth(row.id, health, row.credentials_ciphertext);
  // The vendor account webhook deliveries are attributed by (src/webhooks/attribution.ts).
  if (response.ok) await ctx.webhookAttributions.learned(row.id, row.connector_type, response.info);
  else await ctx.webhookAttributions.failed(row.id, row.connector_type);
  if (health.status === 'active') await ctx.sync.resume(row.id);
  else if (health.status === 'auth_failed') await ctx.sync.pause(row.id);
  return { ...response, connector: updated ?? (await ctx.store.getConnectorById(row.id)) ?? row };
}
