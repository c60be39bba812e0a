/**
 * OAuth refreshes that never storm (issue 46): one refresh in flight per connector across every
 * instance on the database, refused refreshes stop for good, transient failures back off.
 *
 * A runtime about to refresh (expired token, or a 401) calls `coordinate`. It reads the
 * connector row: credentials newer than the runtime's (another instance refreshed) are used
 * as they are, with no token request. Otherwise it takes the connector's lease row in
 * connector_refresh (a conditional UPDATE, atomic on SQLite and PostgreSQL alike, never held
 * across a transaction) and refreshes; the others poll the row until the new credentials are
 * stored or the lease is free again, within the time the call has left.
 *
 *   refused     the token endpoint answered invalid_grant (or any 400/401/403): the connector
 *               becomes auth_failed at once (connector.auth_failed to webhook subscribers, sync
 *               paused), and no refresh is tried again until its credentials change (PATCH, a
 *               new OAuth flow): every call gets oauth_refresh_failed without an upstream call.
 *   transient   unreachable, 5xx, 429: the attempt counts, and the next may start only after
 *               backoffBaseMs · 2^(failures-1), at most backoffCapMs; meanwhile calls get
 *               oauth_refresh_deferred (503 with Retry-After).
 *   hourly cap  at most maxPerHour attempts per connector per hour, whatever the traffic.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { Credentials } from '../../auth/index.ts';
import { SwitchboardError } from '../../errors/index.ts';
import type { ConnectorRow, KeyRing, ServiceStore } from '../../store/index.ts';
import type { ConnectorRefreshTable, OperationsTables } from '../ops/operations-migrations.ts';
import { sha256Hex } from '../auth/secrets.ts';

export interface RefreshLimits {
  /** Attempts per connector per hour (any outcome). */
  maxPerHour: number;
  /** First backoff after a transient failure, doubled on each further one, up to backoffCapMs. */
  backoffBaseMs: number;
  backoffCapMs: number;
  /** How long a lease holds when its instance dies mid-refresh. */
  leaseMs: number;
  /** How often a waiting instance looks at the lease row. */
  pollMs: number;
}

export const DEFAULT_REFRESH_LIMITS: RefreshLimits = { maxPerHour: 6, backoffBaseMs: 30_000, backoffCapMs: 15 * 60_000, leaseMs: 60_000, pollMs: 25 };

const HOUR_MS = 3_600_000;

/** OAuth error codes (RFC 6749 §5.2) that mean the grant itself is refused, not a passing failure. */
const REFUSALS = new Set(['invalid_grant', 'invalid_client', 'unauthorized_client', 'access_denied', 'invalid_scope']);

/** Whether a refresh failure is the token endpoint refusing the grant (permanent until the credentials change). */
export function isRefusedRefresh(e: unknown): e is SwitchboardError {
  if (!(e instanceof SwitchboardError)) return false;
  const oauthError = e.details['oauth_error'];
  if (typeof oauthError === 'string' && REFUSALS.has(oauthError)) return true;
  const status = e.details['upstream_status'];
  if (typeof status === 'number') return status === 400 || status === 401 || status === 403;
  return e.code === 'upstream_credentials_rejected';
}

/** The version of a connector's stored credentials the refresh state is about. */
export const credentialsVersion = (ciphertext: string): string => sha256Hex(ciphertext);

/** The clear error of a connector whose refresh was refused (also what an execute on it answers). */
export function refusedError(oauthError: string | undefined): SwitchboardError {
  const why = oauthError !== undefined ? ` (${oauthError})` : '';
  return new SwitchboardError(
    'oauth_refresh_failed',
    `${REFUSED_PREFIX}${why}: the connector is auth_failed and no refresh is tried again until its credentials are replaced (PATCH them or run the OAuth flow again)`,
    { details: { connector_status: 'auth_failed', ...(oauthError !== undefined ? { oauth_error: oauthError } : {}) } },
  );
}

/**
 * The refusal to answer at once for a connector whose refresh was refused (auth_failed with that
 * as its last error): no runtime, no upstream call. Undefined for any other connector.
 */
export function refreshRefusal(row: Pick<ConnectorRow, 'status' | 'last_error'>): SwitchboardError | undefined {
  if (row.status !== 'auth_failed' || row.last_error === null) return undefined;
  try {
    const last = JSON.parse(row.last_error) as { code?: unknown; message?: unknown };
    if (last.code !== 'oauth_refresh_failed' || typeof last.message !== 'string' || !last.message.startsWith(REFUSED_PREFIX)) return undefined;
    return new SwitchboardError('oauth_refresh_failed', last.message, { details: { connector_status: 'auth_failed' } });
  } catch {
    return undefined;
  }
}

const REFUSED_PREFIX = "The OAuth provider refused to refresh this connector's access token";

function deferred(message: string, retryAfterMs: number): SwitchboardError {
  const ms = Math.max(1000, Math.ceil(retryAfterMs));
  return new SwitchboardError('oauth_refresh_deferred', message, { details: { retry_after_ms: ms, retry_after_seconds: Math.ceil(ms / 1000) } });
}

export interface RefreshCoordinatorOptions {
  db: Kysely<OperationsTables>;
  store: ServiceStore;
  keyRing: KeyRing;
  /** The service clock (epoch ms). */
  now: () => number;
  /** A refresh was refused with these credentials: mark the connector auth_failed and tell subscribers. */
  onRefused: (connectorId: string, error: SwitchboardError, ciphertext: string) => Promise<void>;
  limits?: Partial<RefreshLimits>;
}

/** The credentials a runtime holds, as the pool tracks them (mutable: the refresh replaces them). */
export interface HeldCredentials {
  ciphertext: string;
}

export class RefreshCoordinator {
  readonly limits: RefreshLimits;

  constructor(private readonly o: RefreshCoordinatorOptions) {
    this.limits = { ...DEFAULT_REFRESH_LIMITS, ...o.limits };
  }

  /**
   * The credentials to use after `held` needed a refresh: newer stored ones, or those of a
   * refresh this call ran under the connector's lease (`run` stores them and updates `held`).
   * Throws oauth_refresh_failed (refused), oauth_refresh_deferred (backing off, hourly cap,
   * another instance still refreshing at the end of `timeoutMs`) or connector_not_found.
   */
  async coordinate(connectorId: string, held: HeldCredentials, run: () => Promise<Credentials>, timeoutMs: number): Promise<Credentials> {
    const giveUpAt = Date.now() + timeoutMs;
    for (;;) {
      const row = await this.o.store.getConnectorById(connectorId);
      if (row === undefined) throw new SwitchboardError('connector_not_found', 'The connector was deleted');
      if (row.credentials_ciphertext !== held.ciphertext) return this.adopt(row, held);
      const version = credentialsVersion(row.credentials_ciphertext);
      const state = await this.state(connectorId, version);
      const current = state.credentials_version === version;
      if (current && state.refused === 1) throw refusedError(oauthErrorOf(state.last_error));
      const now = this.o.now();
      if (current && state.next_attempt_at !== null && Date.parse(state.next_attempt_at) > now) {
        const wait = Date.parse(state.next_attempt_at) - now;
        throw deferred(`Refreshing this connector's OAuth token failed recently; the next attempt may start in ${Math.ceil(wait / 1000)} s`, wait);
      }
      const windowOpen = Date.parse(state.window_start) + HOUR_MS > now;
      const attempts = windowOpen ? state.window_attempts : 0;
      const leaseFree = state.lease_until === null || Date.parse(state.lease_until) <= now;
      if (leaseFree && attempts >= this.limits.maxPerHour) {
        const wait = Date.parse(state.window_start) + HOUR_MS - now;
        throw deferred(
          `This connector's OAuth token was refreshed ${attempts} times within the hour (at most ${this.limits.maxPerHour}); the next attempt may start in ${Math.ceil(wait / 1000)} s`,
          wait,
        );
      }
      if (leaseFree) {
        const holder = await this.claim(state, version, windowOpen ? state.window_start : new Date(now).toISOString(), attempts, now);
        if (holder !== undefined) return this.refreshHolding(connectorId, held, holder, version, run);
      }
      if (Date.now() + this.limits.pollMs > giveUpAt) throw deferred('Another instance is refreshing this connector’s OAuth token; retry shortly', 1000);
      await sleep(this.limits.pollMs);
    }
  }

  /** Use the credentials another instance stored. */
  private adopt(row: ConnectorRow, held: HeldCredentials): Credentials {
    const credentials = this.o.keyRing.openJson<Credentials>({ keyId: row.credentials_key_id, ciphertext: row.credentials_ciphertext }, `connector:${row.id}`);
    held.ciphertext = row.credentials_ciphertext;
    return credentials;
  }

  /** The connector's refresh row (made on first need). */
  private async state(connectorId: string, version: string): Promise<ConnectorRefreshTable> {
    const found = await this.o.db.selectFrom('connector_refresh').selectAll().where('connector_id', '=', connectorId).executeTakeFirst();
    if (found !== undefined) return found;
    const fresh: ConnectorRefreshTable = {
      connector_id: connectorId,
      lease_holder: null,
      lease_until: null,
      window_start: new Date(this.o.now()).toISOString(),
      window_attempts: 0,
      credentials_version: version,
      failures: 0,
      next_attempt_at: null,
      refused: 0,
      last_error: null,
    };
    await this.o.db
      .insertInto('connector_refresh')
      .values(fresh)
      .onConflict((oc) => oc.column('connector_id').doNothing())
      .execute();
    return (await this.o.db.selectFrom('connector_refresh').selectAll().where('connector_id', '=', connectorId).executeTakeFirst()) ?? fresh;
  }

  /** Take the lease and count the attempt, only if the row is still as read (one winner among instances); the holder id, or undefined. */
  private async claim(state: ConnectorRefreshTable, version: string, windowStart: string, attempts: number, now: number): Promise<string | undefined> {
    const holder = randomUUID();
    const nowIso = new Date(now).toISOString();
    const sameVersion = state.credentials_version === version;
    const r = await this.o.db
      .updateTable('connector_refresh')
      .set({
        lease_holder: holder,
        lease_until: new Date(now + this.limits.leaseMs).toISOString(),
        window_start: windowStart,
        window_attempts: attempts + 1,
        credentials_version: version,
        // New credentials start with a clean record.
        ...(sameVersion ? {} : { failures: 0, next_attempt_at: null, refused: 0, last_error: null }),
      })
      .where('connector_id', '=', state.connector_id)
      .where('window_start', '=', state.window_start)
      .where('window_attempts', '=', state.window_attempts)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', nowIso)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1 ? holder : undefined;
  }

  private async refreshHolding(
    connectorId: string,
    held: HeldCredentials,
    holder: string,
    version: string,
    run: () => Promise<Credentials>,
  ): Promise<Credentials> {
    const release = (set: Partial<ConnectorRefreshTable>) =>
      this.o.db
        .updateTable('connector_refresh')
        .set({ ...set, lease_holder: null, lease_until: null })
        .where('connector_id', '=', connectorId)
        .where('lease_holder', '=', holder)
        .execute();
    // Another instance may have stored new credentials between our read and our claim.
    const row = await this.o.store.getConnectorById(connectorId);
    if (row === undefined || row.credentials_ciphertext !== held.ciphertext) {
      await release({});
      if (row === undefined) throw new SwitchboardError('connector_not_found', 'The connector was deleted');
      return this.adopt(row, held);
    }
    const ciphertext = held.ciphertext;
    let credentials: Credentials;
    try {
      credentials = await run();
    } catch (e) {
      const at = new Date(this.o.now()).toISOString();
      const summary = e instanceof SwitchboardError ? { code: e.code, ...safeDetails(e.details), at } : { code: 'internal_error', at };
      if (isRefusedRefresh(e)) {
        await release({ refused: 1, last_error: JSON.stringify(summary), credentials_version: version, next_attempt_at: null });
        const refused = refusedError(oauthErrorOf(JSON.stringify(summary)));
        await this.o.onRefused(connectorId, refused, ciphertext);
        throw refused;
      }
      const current = await this.o.db.selectFrom('connector_refresh').select('failures').where('connector_id', '=', connectorId).executeTakeFirst();
      const failures = (current?.failures ?? 0) + 1;
      const wait = Math.min(this.limits.backoffCapMs, this.limits.backoffBaseMs * 2 ** (failures - 1));
      await release({ failures, next_attempt_at: new Date(this.o.now() + wait).toISOString(), last_error: JSON.stringify(summary) });
      const why = e instanceof SwitchboardError ? e.code : 'internal_error';
      throw deferred(`Refreshing this connector's OAuth token failed (${why}); the next attempt may start in ${Math.ceil(wait / 1000)} s`, wait);
    }
    await release({ failures: 0, next_attempt_at: null, refused: 0, last_error: null, credentials_version: credentialsVersion(held.ciphertext) });
    return credentials;
  }
}

/** What of a failure's details is kept: the OAuth error code when it looks like one, and the status (never a body). */
function safeDetails(d: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const oauthError = d['oauth_error'];
  if (typeof oauthError === 'string' && OAUTH_ERROR_CODE.test(oauthError)) out['oauth_error'] = oauthError;
  if (typeof d['upstream_status'] === 'number') out['upstream_status'] = d['upstream_status'];
  return out;
}

const OAUTH_ERROR_CODE = /^[A-Za-z0-9_.-]{1,64}$/;

function oauthErrorOf(lastError: string | null): string | undefined {
  if (lastError === null) return undefined;
  try {
    const v = (JSON.parse(lastError) as { oauth_error?: unknown }).oauth_error;
    return typeof v === 'string' && OAUTH_ERROR_CODE.test(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
