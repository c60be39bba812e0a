/**
 * A runtime's credentials and the auth state they grow: the auth variant in use, OAuth refreshes
 * (once at a time; follow-ups on refresh), a minted_bearer variant's token (minted once at a
 * time, renewed before expiry), and the Authorization header (or credential query parameters) each
 * request carries.
 */
import type { OAuth2Auth } from '../../generated/manifest.ts';
import { clientCredentialsToken, refreshAccessToken, runFollowUps, type Credentials, type OAuthClient } from '../auth/index.ts';
import { mintedExpiry, rsaPrivateKey, signJwtRs256 } from '../auth/minted.ts';
import { SwitchboardError } from '../errors/index.ts';
import type { FetchLike } from '../http/index.ts';
import type { ClientCredentialsAuth, CompiledAuthVariant, CompiledMint, LoadedManifest } from '../manifest/index.ts';
import type { TemplateContext } from '../templates/index.ts';
import { setHeader } from './request.ts';
import type { RawResult, RuntimeOptions } from './types.ts';

/** Sends a minted_bearer variant's mint request carrying the signed JWT, within `deadlineMs`. */
export type MintCall = (mint: CompiledMint, jwt: string, deadlineMs: number) => Promise<RawResult>;

export class RuntimeCredentials {
  /** The credentials in use: the caller's, updated by every OAuth refresh. */
  credentials: Credentials;
  private refreshing: Promise<void> | undefined;
  /** A minted_bearer variant's token: in memory only, never stored or logged; renewed from renewAtMs on. */
  private minted: { token: string; renewAtMs: number } | undefined;
  private minting: Promise<void> | undefined;

  constructor(
    private readonly manifest: LoadedManifest,
    readonly variant: CompiledAuthVariant,
    credentials: Credentials,
    private readonly config: Record<string, unknown>,
    private readonly options: RuntimeOptions,
    private readonly fetchImpl: FetchLike,
  ) {
    this.credentials = credentials;
  }

  /** The minted token in use (minted_bearer variants), if any. */
  get mintedToken(): string | undefined {
    return this.minted?.token;
  }

  /**
   * Set the auth variant's header (a minted token, or the variant's rendered value), or the given
   * Authorization (a token mint's JWT); and the variant's query parameters on `url` (an api_key
   * variant's, replacing any the request carried: the credentials are the connector's).
   */
  apply(headers: Record<string, string>, ctx: TemplateContext, authorization: string | undefined, url: URL): void {
    if (authorization !== undefined) setHeader(headers, 'Authorization', authorization);
    else if (this.mints) setHeader(headers, 'Authorization', this.minted === undefined ? undefined : `Bearer ${this.minted.token}`);
    else setHeader(headers, this.variant.header, this.variant.value.render(ctx));
    if (authorization !== undefined) return;
    for (const [name, t] of this.variant.query ?? []) {
      const v = t.render(ctx);
      if (v === undefined || v === null || v === '') url.searchParams.delete(name);
      else url.searchParams.set(name, String(v));
    }
  }

  /** Whether the variant gets its own short-lived token (minted_bearer's mint, client_credentials' grant). */
  get mints(): boolean {
    return this.variant.mint !== undefined || this.variant.grant !== undefined;
  }

  oauthVariant(): OAuth2Auth | undefined {
    const d = this.variant.def;
    return d.type === 'oauth2' && d.refreshes === true ? d : undefined;
  }

  /** Refresh the OAuth token (once at a time per instance) and report the new credentials; `timeoutMs` bounds the token request (default the per-attempt timeout). */
  async refresh(timeoutMs: number): Promise<void> {
    const v = this.oauthVariant();
    const rt = this.credentials['refresh_token'];
    if (v === undefined || typeof rt !== 'string') return;
    this.refreshing ??= (async () => {
      const run = async (): Promise<Credentials> => {
        const cid = this.credentials['client_id'];
        const csec = this.credentials['client_secret'];
        const client: OAuthClient | undefined =
          this.options.oauthClient ?? (typeof cid === 'string' && typeof csec === 'string' ? { clientId: cid, clientSecret: csec } : undefined);
        if (client === undefined)
          throw new SwitchboardError('oauth_refresh_failed', 'The access token needs refreshing but no OAuth client id/secret is configured');
        const tokens = await refreshAccessToken(v, client, rt, this.fetchImpl, timeoutMs, this.credentials);
        const fields = Object.keys(v.fields);
        let updated: Credentials = { ...this.credentials };
        for (const [k, val] of Object.entries(tokens)) if (fields.includes(k) && val !== undefined) updated[k] = val;
        // follow_up requests declared on_refresh: true refill their fields with the new token.
        if (this.variant.followUps?.some((f) => f.onRefresh) === true) {
          updated = await runFollowUps(this.variant, updated, {
            after: 'refresh',
            fetchImpl: this.fetchImpl,
            baseUrl: client.followUpBaseUrl,
            config: this.config,
            timeoutMs,
          });
        }
        this.credentials = updated;
        await this.options.onTokenRefresh?.({ ...updated });
        return updated;
      };
      const coordinator = this.options.refreshCoordinator;
      if (coordinator === undefined) await run();
      else this.credentials = await coordinator({ ...this.credentials }, run, timeoutMs);
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /**
   * Have a minted token ready (minted_bearer variants): mint one (once at a time per instance)
   * when there is none or it is due for renewal; `force` drops the current one first (after a 401).
   */
  async ensureMinted(timeoutMs: number, force: boolean, callMint: MintCall): Promise<void> {
    const mint = this.variant.mint;
    const now = (): number => (this.options.now ?? Date.now)();
    if (!this.mints || (!force && this.minted !== undefined && now() < this.minted.renewAtMs)) return;
    if (force) this.minted = undefined;
    if (mint === undefined) {
      this.minting ??= this.grant(timeoutMs, now).finally(() => {
        this.minting = undefined;
      });
      return this.minting;
    }
    this.minting ??= (async () => {
      const ctx = { credentials: this.credentials, config: this.config };
      const keyField = mint.privateKey.references.find(([root]) => root === 'credentials')?.[1] ?? 'private_key';
      const key = rsaPrivateKey(mint.privateKey.render(ctx), keyField);
      const t = Math.floor(now() / 1000);
      const claims: Record<string, unknown> = {};
      for (const [k, tpl] of mint.claims) {
        const v = tpl.render(ctx);
        if (v !== undefined && v !== null && v !== '') claims[k] = v;
      }
      claims['iat'] = t - mint.backdateSeconds;
      claims['exp'] = t + mint.lifetimeSeconds;
      const jwt = signJwtRs256(key, claims);
      const variant = this.variant.def.name;
      let raw: RawResult;
      try {
        raw = await callMint(mint, jwt, timeoutMs);
      } catch (e) {
        if (e instanceof SwitchboardError && e.code === 'upstream_credentials_rejected') {
          throw new SwitchboardError(
            'upstream_credentials_rejected',
            `${this.manifest.type} refused the JWT of auth variant ${variant} (check the app id and the private key): ${e.message}`,
            {
              errors: e.errors,
              details: { ...e.details, auth_variant: variant, stage: 'mint' },
              cause: e,
            },
          );
        }
        throw e;
      }
      const token = mint.token.render(raw.ctx);
      const expiry = mintedExpiry(mint.expiresAt?.render(raw.ctx), mint.expiresIn?.render(raw.ctx), now());
      if (typeof token !== 'string' || token === '' || (expiry !== undefined && !Number.isFinite(expiry))) {
        // The answer is not quoted: it would hold the token.
        const why =
          typeof token !== 'string' || token === ''
            ? `no token at ${mint.token.source}`
            : `an unreadable expiry at ${(mint.expiresAt ?? mint.expiresIn)?.source ?? ''}`;
        throw new SwitchboardError('upstream_protocol_error', `${this.manifest.type} answered the token mint of auth variant ${variant} with ${why}`, {
          details: { upstream_status: raw.status, stage: 'mint' },
        });
      }
      this.minted = { token, renewAtMs: expiry === undefined ? Infinity : expiry - mint.renewBeforeSeconds * 1000 };
    })().finally(() => {
      this.minting = undefined;
    });
    return this.minting;
  }

  /** A client_credentials variant's token from its token URL (the deployment's token URL override, a simulator's, first). */
  private async grant(timeoutMs: number, now: () => number): Promise<void> {
    const g = this.variant.grant!;
    const ctx = { credentials: this.credentials, config: this.config };
    const text = (v: unknown): string => (v === undefined || v === null ? '' : String(v));
    const form: Record<string, string> = { grant_type: g.grantType };
    if (g.scope !== undefined) form['scope'] = g.scope;
    for (const [k, t] of g.params) {
      const v = text(t.render(ctx));
      if (v !== '') form[k] = v;
    }
    const def = this.variant.def as ClientCredentialsAuth;
    const client: OAuthClient = {
      clientId: text(g.clientId.render(ctx)),
      clientSecret: text(g.clientSecret.render(ctx)),
      ...(this.options.oauthClient?.tokenUrl !== undefined ? { tokenUrl: this.options.oauthClient.tokenUrl } : {}),
    };
    let tokens;
    try {
      tokens = await clientCredentialsToken(
        { ...def, token_request_auth: g.tokenRequestAuth },
        client,
        form,
        this.fetchImpl,
        timeoutMs,
        this.credentials,
        now(),
      );
    } catch (e) {
      if (e instanceof SwitchboardError) {
        throw new SwitchboardError(e.code, `${this.manifest.type} auth variant ${def.name}: ${e.message}`, {
          details: { ...e.details, auth_variant: def.name, stage: 'token' },
          cause: e,
        });
      }
      throw e;
    }
    const expiry = tokens.expires_at === undefined ? Infinity : tokens.expires_at * 1000;
    this.minted = { token: tokens.access_token, renewAtMs: Math.max(now(), expiry - g.renewBeforeSeconds * 1000) };
  }

  expiresSoon(): boolean {
    const exp = this.credentials['expires_at'];
    return this.oauthVariant() !== undefined && typeof exp === 'number' && exp * 1000 - Date.now() < 60_000;
  }
}
