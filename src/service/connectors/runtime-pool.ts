/**
 * Interpreter instances per connector, reused across requests.
 *
 * The database row stays the source of truth: each request reads the connector row and the pool
 * reuses its cached runtime only while the row's ciphertext is the one the runtime was built
 * from. So credentials replaced by PATCH, or refreshed by another instance, are picked up on the
 * next request, while one instance's concurrent requests share one runtime and thus one OAuth
 * refresh in flight. For execute the pool also keeps the connector rows themselves, each for at
 * most lookupCacheMs (lookup-cache.ts): a change made through this instance (PATCH, DELETE, an
 * OAuth refresh, a re-encryption) drops the row at once, one made by another instance is seen
 * within that bound. Upstream throttles are per budget (budgetKey): connectors holding the same
 * API key share one, and with PostgreSQL or Redis every instance shares it too.
 */
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { selectAuthVariant, type Credentials } from '../../auth/index.ts';
import { secretValues } from '../../engine/secret-scrub.ts';
import { isSwitchboardError, SwitchboardError } from '../../errors/index.ts';
import { ConnectorRuntime, throttleOf, type RuntimeOptions } from '../../engine/index.ts';
import type { FetchLike, RetryPolicy, Throttle } from '../../http/index.ts';
import type { LoadedManifest } from '../../manifest/index.ts';
import type { ConnectorRow, KeyRing, ServiceStore } from '../../store/index.ts';
import type { ServiceConfig } from '../config.ts';
import { LookupCache } from './lookup-cache.ts';
import type { RefreshCoordinator } from './refresh-coordinator.ts';

/** AAD binding a connector's sealed credentials to its row. */
export function connectorCredentialsContext(connectorId: string): string {
  return `connector:${connectorId}`;
}

interface Entry {
  /** Mutable: an OAuth refresh replaces both. */
  state: { ciphertext: string; secrets: string[] };
  runtime: ConnectorRuntime;
  limiter: Throttle | null;
  /** The rate-limit budget whose throttle it holds (see budgetKey); undefined when unthrottled. */
  budget: string | undefined;
}

export interface PooledRuntime {
  runtime: ConnectorRuntime;
  /** Secret credential values, to scrub from anything returned or logged. */
  secrets: string[];
}

export interface RuntimePoolOptions {
  keyRing: KeyRing;
  store: ServiceStore;
  config: ServiceConfig;
  fetch: FetchLike;
  now: () => number;
  log: Logger;
  retry?: Partial<RetryPolicy> | undefined;
  /**
   * The upstream throttle of a budget (see budgetKey: one per API key, or per OAuth connector);
   * default an in-process RateLimiter from the manifest's rate_limit.
   */
  throttleFor?: ((budget: string, manifest: LoadedManifest) => Throttle | null) | undefined;
  /** Most connectors kept; the least recently used go first. Default 10 000. */
  maxEntries?: number;
  /** One OAuth refresh per connector across instances, with backoff (refresh-coordinator.ts); default each runtime refreshes on its own. */
  refresh?: RefreshCoordinator | undefined;
}

/**
 * Whose rate-limit budget a connector spends. Upstreams count requests per API key, so two
 * connectors holding the same key (one customer connected twice, two customers sharing an
 * account) share one throttle: `<type>:key:<sha256 of the secret fields>` (the hash only, never
 * the key, reaches the limits' store). OAuth tokens change on every refresh while the budget
 * stays the account's, so an OAuth connector keeps a budget of its own: `<type>:connector:<id>`.
 * A minted_bearer or client_credentials connector's budget is its token's: the hash of every
 * credential field (one app key, one installation or account).
 */
export function budgetKey(row: Pick<ConnectorRow, 'id' | 'connector_type' | 'auth_variant'>, manifest: LoadedManifest, credentials: Credentials): string {
  const variant = manifest.auth.find((a) => a.def.name === row.auth_variant);
  if (variant === undefined || variant.def.type === 'oauth2') return `${row.connector_type}:connector:${row.id}`;
  // A minted token is the app's for one installation (GitHub counts per installation): every field names the budget.
  const secrets =
    variant.def.type === 'minted_bearer' || variant.def.type === 'client_credentials'
      ? Object.keys(variant.def.fields)
          .sort()
          .map((k) => `${k}=${String(credentials[k] ?? '')}`)
      : secretValues(manifest, row.auth_variant, credentials);
  if (secrets.length === 0) return `${row.connector_type}:connector:${row.id}`;
  return `${row.connector_type}:key:${createHash('sha256')
    .update(JSON.stringify([row.connector_type, ...secrets]))
    .digest('hex')
    .slice(0, 32)}`;
}

export class RuntimePool {
  private readonly entries = new Map<string, Entry>();
  /**
   * Throttles by budget key, shared by the cached runtimes spending that budget, and dropped
   * with the last of them: so at most one throttle per budget at any time (a throttle evicted
   * on its own while a runtime still held it let a new runtime with the same key open a second
   * one, at twice the upstream's rate), and no more throttles than runtimes.
   */
  private readonly throttles = new Map<string, { throttle: Throttle | null; users: number }>();
  private readonly max: number;
  private readonly rows: LookupCache<ConnectorRow>;
  /** The id of the entry last moved to the end of `entries` (the most recently used one). */
  private lastUsed: string | undefined;

  constructor(private readonly o: RuntimePoolOptions) {
    this.max = o.maxEntries ?? 10_000;
    this.rows = new LookupCache({ ttlMs: o.config.lookupCacheMs, now: o.now, maxEntries: this.max });
  }

  /** The organization's connector `id` for an execute (recently read, see above), or undefined. */
  async row(organizationId: string, id: string): Promise<ConnectorRow | undefined> {
    return this.cachedRow(organizationId, id) ?? this.loadRow(organizationId, id);
  }

  /** The organization's connector `id` while its row is cached (no promise: the hot path of execute), else undefined. */
  cachedRow(organizationId: string, id: string): ConnectorRow | undefined {
    const row = this.rows.peek(id);
    // Read for another organization: only the database scopes the lookup by organization.
    return row !== undefined && row.organization_id === organizationId ? row : undefined;
  }

  private async loadRow(organizationId: string, id: string): Promise<ConnectorRow | undefined> {
    const row = this.rows.peek(id) ?? (await this.rows.get(id, () => this.o.store.getConnector(organizationId, id)));
    if (row !== undefined && row.organization_id !== organizationId) return this.o.store.getConnector(organizationId, id);
    return row;
  }

  /** The runtime for a connector row (built, or reused while the row's credentials are unchanged). */
  get(row: ConnectorRow, manifest: LoadedManifest): PooledRuntime {
    const cached = this.entries.get(row.id);
    if (cached !== undefined && cached.state.ciphertext === row.credentials_ciphertext) {
      // Move to the end: Map order is our LRU order (already there when it was also the last one used).
      if (this.lastUsed !== row.id) {
        this.entries.delete(row.id);
        this.entries.set(row.id, cached);
        this.lastUsed = row.id;
      }
      return { runtime: cached.runtime, secrets: cached.state.secrets };
    }
    const context = connectorCredentialsContext(row.id);
    const credentials = this.o.keyRing.openJson<Credentials>({ keyId: row.credentials_key_id, ciphertext: row.credentials_ciphertext }, context);
    const budget = this.o.config.upstreamThrottle ? budgetKey(row, manifest, credentials) : undefined;
    const limiter = budget !== undefined ? this.throttle(budget, manifest) : null;
    const typeCfg = this.o.config.connectorTypes[row.connector_type];
    const state: Entry['state'] = { ciphertext: row.credentials_ciphertext, secrets: secretValues(manifest, row.auth_variant, credentials) };
    const options: RuntimeOptions = {
      fetch: this.o.fetch,
      limiter,
      authVariant: row.auth_variant,
      deadlineMs: this.o.config.upstreamDeadlineMs,
      ...(typeCfg?.baseUrl !== undefined ? { baseUrl: typeCfg.baseUrl } : {}),
      ...(typeCfg?.oauth !== undefined
        ? {
            oauthClient: {
              clientId: typeCfg.oauth.clientId,
              clientSecret: typeCfg.oauth.clientSecret,
              ...(typeCfg.oauth.tokenUrl !== undefined ? { tokenUrl: typeCfg.oauth.tokenUrl } : {}),
              ...(typeCfg.oauth.followUpBaseUrl !== undefined ? { followUpBaseUrl: typeCfg.oauth.followUpBaseUrl } : {}),
            },
          }
        : {}),
      ...(this.o.retry !== undefined ? { retry: this.o.retry } : {}),
      ...(this.o.refresh !== undefined ? { refreshCoordinator: this.coordinated(row, manifest, state, this.o.refresh) } : {}),
      onTokenRefresh: async (next) => {
        const sealed = this.o.keyRing.sealJson(next, context);
        const stored = await this.o.store.replaceCredentials(row.id, state.ciphertext, sealed, new Date(this.o.now()).toISOString());
        if (!stored) this.o.log.warn({ connector_id: row.id }, 'refreshed OAuth tokens not stored: the connector credentials changed meanwhile');
        // Either way the next request compares against the row and rebuilds if it differs.
        state.ciphertext = sealed.ciphertext;
        state.secrets = [...new Set([...state.secrets, ...secretValues(manifest, row.auth_variant, next)])];
        this.rows.delete(row.id);
        this.o.log.info({ connector_id: row.id }, 'OAuth tokens refreshed and stored');
      },
    };
    const entry: Entry = { state, runtime: new ConnectorRuntime(manifest, credentials, options), limiter, budget };
    if (row.credentials_key_id !== this.o.keyRing.primaryId) this.reseal(row, credentials, state);
    this.drop(row.id);
    this.entries.set(row.id, entry);
    this.lastUsed = row.id;
    if (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.drop(oldest);
    }
    return { runtime: entry.runtime, secrets: state.secrets };
  }

  /** The runtime's refreshes through the coordinator; credentials another instance stored are taken with their secrets. */
  private coordinated(
    row: ConnectorRow,
    manifest: LoadedManifest,
    state: Entry['state'],
    coordinator: RefreshCoordinator,
  ): NonNullable<RuntimeOptions['refreshCoordinator']> {
    return async (_held, run, timeoutMs) => {
      const before = state.ciphertext;
      const credentials = await coordinator.coordinate(row.id, state, run, timeoutMs);
      if (state.ciphertext !== before) {
        state.secrets = [...new Set([...state.secrets, ...secretValues(manifest, row.auth_variant, credentials)])];
        this.rows.delete(row.id);
      }
      return credentials;
    };
  }

  /**
   * What the sync worker needs to run a connector's pages on a runtime of its own: the row's
   * credentials, decrypted, and the throttle of its budget, the one this instance's runtime for
   * the connector holds (so the worker's requests and this thread's share it).
   */
  forWorker(row: ConnectorRow, manifest: LoadedManifest): { credentials: Credentials; throttle: Throttle | null } {
    this.get(row, manifest);
    const credentials = this.o.keyRing.openJson<Credentials>(
      { keyId: row.credentials_key_id, ciphertext: row.credentials_ciphertext },
      connectorCredentialsContext(row.id),
    );
    return { credentials, throttle: this.entries.get(row.id)?.limiter ?? null };
  }

  /**
   * Key rotation: credentials sealed with an older key of the ring are sealed again with the
   * primary key the first time they are used, so rotation completes for every active connector
   * without a migration. Conditional on the row being unchanged; failures only delay it.
   */
  private reseal(row: ConnectorRow, credentials: Credentials, state: Entry['state']): void {
    const sealed = this.o.keyRing.sealJson(credentials, connectorCredentialsContext(row.id));
    const previous = state.ciphertext;
    void this.o.store
      .replaceCredentials(row.id, previous, sealed, row.updated_at)
      .then((stored) => {
        if (stored && state.ciphertext === previous) state.ciphertext = sealed.ciphertext;
        if (stored) this.rows.delete(row.id);
      })
      .catch((e: unknown) =>
        this.o.log.warn({ connector_id: row.id, err_message: (e as Error).message }, 'could not re-encrypt credentials with the primary key'),
      );
  }

  /** The throttle of a budget, made on first use and then shared; one more runtime holds it. */
  private throttle(budget: string, manifest: LoadedManifest): Throttle | null {
    let held = this.throttles.get(budget);
    if (held === undefined) {
      held = { throttle: this.o.throttleFor?.(budget, manifest) ?? limiterOf(manifest, this.o.config.upstreamQueueLimit), users: 0 };
      this.throttles.set(budget, held);
    }
    held.users++;
    return held.throttle;
  }

  /** Remove a cached runtime, and its budget's throttle when no other runtime holds it. */
  private drop(connectorId: string): void {
    const entry = this.entries.get(connectorId);
    if (entry === undefined) return;
    this.entries.delete(connectorId);
    if (entry.budget === undefined) return;
    const held = this.throttles.get(entry.budget);
    if (held !== undefined && --held.users <= 0) this.throttles.delete(entry.budget);
  }

  /** Forget a connector (deleted, or credentials replaced): its runtime and its row. */
  forget(connectorId: string): void {
    this.drop(connectorId);
    this.rows.delete(connectorId);
  }

  /** How many runtimes and throttles are cached (for tests and the fleet bench). */
  get sizes(): { runtimes: number; throttles: number; rows: number } {
    return { runtimes: this.entries.size, throttles: this.throttles.size, rows: this.rows.size };
  }
}

/** The in-process throttle of a manifest (one bucket, or the buckets it keys finer). */
function limiterOf(m: LoadedManifest, maxQueue: number): Throttle | null {
  return throttleOf(m.manifest, maxQueue);
}

/** Validate credentials against a type's variants (selectAuthVariant); the variant name. Field paths are put under /credentials. */
export function validateCredentials(manifest: LoadedManifest, credentials: unknown, variantName?: string): string {
  // Credentials end up in HTTP headers: a line break would fail every call (or split a header), so refuse it now.
  // Fields declared multiline (a PEM key, which only signs and is never sent) may hold line breaks, never NUL.
  if (credentials !== null && typeof credentials === 'object') {
    const multiline = new Set(
      manifest.manifest.auth
        .filter((v) => variantName === undefined || v.name === variantName)
        .flatMap((v) => Object.entries(v.fields).flatMap(([k, f]) => (f?.multiline === true ? [k] : []))),
    );
    const broken = Object.entries(credentials).filter(([k, v]) => typeof v === 'string' && (multiline.has(k) ? /\u0000/ : /[\r\n\u0000]/).test(v));
    if (broken.length > 0) {
      throw new SwitchboardError('invalid_credentials', `Credential values must not contain line breaks or NUL: ${broken.map(([k]) => k).join(', ')}`, {
        errors: broken.map(([k]) => ({ path: `/credentials/${k}`, message: 'contains CR, LF or NUL' })),
      });
    }
  }
  try {
    return selectAuthVariant(manifest, credentials, variantName).def.name;
  } catch (e) {
    if (!isSwitchboardError(e, 'invalid_credentials')) throw e;
    // selectAuthVariant locates problems as "<variant>:credentials/<field>"; we point into the body.
    const errors = e.errors.map((x) => {
      const m = /^([^:]+):credentials(.*)$/.exec(x.path);
      return m ? { path: `/credentials${m[2] ?? ''}`, message: `variant ${m[1] ?? '?'}: ${x.message}` } : x;
    });
    throw new SwitchboardError('invalid_credentials', e.message, { errors, details: e.details });
  }
}
