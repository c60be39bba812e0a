/**
 * Credentials: choosing the auth variant from the credentials' shape, decorating requests, and
 * the OAuth 2.0 authorization-code exchange and refresh (RFC 6749 §4.1.3, §6).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { OAuth2Auth } from '../../generated/manifest.ts';
import { SwitchboardError, type ErrorDetail } from '../errors/index.ts';
import type { FetchLike } from '../http/index.ts';
import { readBodyCapped } from '../http/response-limit.ts';
import type { CompiledAuthVariant, LoadedManifest } from '../manifest/index.ts';
import { fitsUrlVariable } from '../manifest/url-variables.ts';
import { compileTemplate } from '../templates/index.ts';

export type Credentials = Record<string, unknown>;

/**
 * The variant the credentials belong to: `name` when given, else the first variant whose
 * credential schema the credentials match exactly. Throws invalid_credentials listing, per
 * variant, why it did not match.
 */
export function selectAuthVariant(m: LoadedManifest, credentials: unknown, name?: string): CompiledAuthVariant {
  const candidates = name === undefined ? m.auth : m.auth.filter((v) => v.def.name === name);
  if (candidates.length === 0) {
    throw new SwitchboardError(
      'invalid_credentials',
      `Unknown auth variant "${String(name)}" for ${m.type}; variants: ${m.auth.map((v) => v.def.name).join(', ')}`,
    );
  }
  const problems: ErrorDetail[] = [];
  for (const v of candidates) {
    if (v.validate(credentials)) return v;
    for (const e of v.validate.errors ?? []) {
      const field =
        e.keyword === 'required'
          ? `/${String(e.params['missingProperty'])}`
          : e.keyword === 'additionalProperties'
            ? `/${String(e.params['additionalProperty'])}`
            : e.instancePath;
      const message =
        e.keyword === 'additionalProperties' ? 'is not a field of this variant' : e.keyword === 'required' ? 'is required' : (e.message ?? 'is invalid');
      problems.push({ path: `${v.def.name}:credentials${field}`, message });
    }
  }
  const shapes = m.auth.map((v) => `${v.def.name} {${Object.keys(v.def.fields).join(', ')}}`).join('; ');
  throw new SwitchboardError('invalid_credentials', `The credentials match no credential variant of ${m.type}. Variants: ${shapes}`, {
    errors: problems,
    details: { variants: m.auth.map((v) => ({ name: v.def.name, fields: Object.keys(v.def.fields) })) },
  });
}

/**
 * Secrets a variant derives from its secret fields and sends: a basic variant's base64
 * "user:password" (an upstream that echoes the Authorization header must not leak it). Scrubbed
 * from errors alongside the fields themselves.
 */
export function derivedSecrets(variant: CompiledAuthVariant, credentials: Credentials, config: Record<string, unknown> = {}): string[] {
  if (variant.def.type !== 'basic') return [];
  try {
    const value = variant.value.render({ credentials, config });
    return typeof value === 'string' && value.startsWith('Basic ') ? [value.slice(6)] : [];
  } catch {
    return [];
  }
}

/** Copy of credentials with secret fields replaced, for logs and errors. */
export function redactCredentials(variant: CompiledAuthVariant, credentials: Credentials): Credentials {
  return Object.fromEntries(Object.entries(credentials).map(([k, v]) => [k, variant.secretFields.includes(k) ? '[redacted]' : v]));
}

/** What one URL variable may be (as for base URLs): one host label or path segment. */

/**
 * An OAuth URL of the variant with its `{{credentials.<field>}}` variables filled in (Zendesk's
 * `https://{{credentials.subdomain}}.zendesk.com/oauth/tokens`): each value must match its field's
 * pattern and be one URL-safe token, so the flow can only reach a host under the vendor's domain.
 * A missing or refused value is invalid_credentials.
 */
export function oauthUrl(variant: Pick<OAuth2Auth, 'name' | 'fields'>, url: string, credentials: Credentials = {}): string {
  if (!url.includes('{{')) return url;
  return url.replace(/\{\{\s*([^}]*?)\s*\}\}/g, (_, expr: string) => {
    const name = /^credentials\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(expr)?.[1];
    const value = name === undefined ? undefined : credentials[name];
    const field = name === undefined ? undefined : variant.fields[name];
    const pattern = field?.pattern;
    const fits = fitsUrlVariable(value, field) && (pattern === undefined || new RegExp(`^(?:${pattern})$`, 'u').test(value));
    if (!fits) {
      const message =
        value === undefined || value === '' ? 'is required (it is part of the OAuth URLs)' : 'must be one host label or path segment matching its pattern';
      throw new SwitchboardError('invalid_credentials', `${variant.name}: ${expr} ${message}`, { errors: [{ path: `/${name ?? expr}`, message }] });
    }
    return value;
  });
}

/** OAuth app settings of a deployment (hosted mode) or of the caller (library mode). */
export interface OAuthClient {
  clientId: string;
  clientSecret: string;
  /** Token URL override (regions, simulators); default the manifest's token_url. */
  tokenUrl?: string;
  /** Where the variant's follow_up requests go instead of their own origin (simulators): see runFollowUps. */
  followUpBaseUrl?: string;
}

/** Token fields from a token endpoint answer, in manifest credential field names. */
export interface TokenSet {
  access_token: string;
  refresh_token?: string;
  expires_at?: number;
  [extra: string]: unknown;
}

/** What a token request reads of its variant (oauth2 or client_credentials). */
type TokenVariant = Pick<OAuth2Auth, 'name' | 'fields' | 'token_url' | 'token_request_auth' | 'token_fields'>;

async function tokenRequest(
  variant: TokenVariant,
  client: OAuthClient,
  form: Record<string, string>,
  fetchImpl: FetchLike,
  timeoutMs: number,
  credentials: Credentials = {},
  nowMs: number = Date.now(),
): Promise<TokenSet> {
  const body = new URLSearchParams(form);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if (variant.token_request_auth === 'client_secret_basic') {
    const enc = (s: string): string => encodeURIComponent(s);
    headers['authorization'] = `Basic ${Buffer.from(`${enc(client.clientId)}:${enc(client.clientSecret)}`).toString('base64')}`;
  } else {
    body.set('client_id', client.clientId);
    body.set('client_secret', client.clientSecret);
  }
  const url = client.tokenUrl ?? oauthUrl(variant, variant.token_url, credentials);
  let res: Response;
  try {
    res = await fetchImpl(url, { method: 'POST', headers, body: body.toString(), signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    throw new SwitchboardError('upstream_unavailable', `The OAuth token endpoint could not be reached: ${(e as Error).message}`, { cause: e });
  }
  const text = await res.text();
  let json: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object') json = parsed as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  if (!res.ok || json === undefined || typeof json['access_token'] !== 'string') {
    // RFC 6749 §5.2 error bodies, or Intercom's error.list shape.
    const listed = Array.isArray(json?.['errors']) ? (json['errors'] as { message?: unknown }[])[0]?.message : undefined;
    const upstreamError = json?.['error_description'] ?? json?.['error'] ?? listed ?? text.slice(0, 200);
    // A 2xx carrying an error code is a refusal too (Slack's oauth.v2.access: 200 {ok: false, error: "invalid_code"}).
    const refused = !res.ok || typeof json?.['error'] === 'string';
    throw new SwitchboardError(
      refused ? 'upstream_credentials_rejected' : 'upstream_protocol_error',
      `The OAuth token endpoint refused the request: ${String(upstreamError)}`,
      {
        details: { upstream_status: res.status, ...(json && typeof json['error'] === 'string' ? { oauth_error: json['error'] } : {}) },
      },
    );
  }
  const tokens: TokenSet = { access_token: json['access_token'] };
  if (typeof json['refresh_token'] === 'string') tokens.refresh_token = json['refresh_token'];
  if (typeof json['expires_in'] === 'number') tokens.expires_at = Math.floor(nowMs / 1000) + json['expires_in'];
  // Other fields of the answer that the variant declares as credential fields (Stripe Connect's
  // stripe_user_id): kept with the tokens. Fields it does not declare are left out, so the tokens
  // still match the variant exactly.
  for (const k of Object.keys(variant.fields ?? {})) {
    const v = json[k];
    if (!(k in tokens) && k !== 'expires_in' && (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')) tokens[k] = v;
  }
  Object.assign(tokens, tokenFields(variant, json));
  return tokens;
}

/**
 * The variant's token_fields rendered over the token answer (a company's own API host named in
 * it). The manifest loader has checked each template and that it fills a non-secret field; a
 * field that renders empty or not to a value is upstream_protocol_error (the body is not quoted:
 * it holds the tokens).
 */
function tokenFields(variant: TokenVariant, body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, src] of Object.entries(variant.token_fields ?? {})) {
    if (src === undefined) continue;
    const v = compileTemplate(src).render({ body });
    if (v === undefined || v === null || v === '' || typeof v === 'object')
      throw new SwitchboardError('upstream_protocol_error', `The OAuth token endpoint's answer gave no ${field} (token_fields.${field})`, {
        errors: [{ path: `/${field}`, message: 'the token answer lacks it' }],
      });
    out[field] = v;
  }
  return out;
}

/** Exchange an authorization code for tokens at the variant's token URL (its variables from `credentials`, e.g. the subdomain). */
export function exchangeAuthorizationCode(
  variant: OAuth2Auth,
  client: OAuthClient,
  code: string,
  redirectUri: string,
  fetchImpl: FetchLike = fetch,
  timeoutMs = 30_000,
  credentials: Credentials = {},
  codeVerifier?: string,
): Promise<TokenSet> {
  const form: Record<string, string> = { grant_type: 'authorization_code', code, redirect_uri: redirectUri };
  // PKCE (RFC 7636): the verifier whose challenge the consent URL carried.
  if (variant.pkce !== undefined) form['code_verifier'] = requiredVerifier(variant, codeVerifier);
  return tokenRequest(variant, client, form, fetchImpl, timeoutMs, credentials);
}

/** A fresh PKCE code verifier (RFC 7636 §4.1): 32 random bytes, base64url (43 characters). */
export function pkceVerifier(): string {
  return randomBytes(32).toString('base64url');
}

/** The S256 code challenge of a verifier (RFC 7636 §4.2): base64url of its SHA-256. */
export function pkceChallenge(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

function requiredVerifier(variant: OAuth2Auth, verifier: string | undefined): string {
  if (verifier === undefined || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier))
    throw new SwitchboardError('invalid_request', `OAuth variant ${variant.name} uses PKCE: give the flow's code verifier (43 to 128 URL-safe characters)`);
  return verifier;
}

/** Get a new access token with a refresh token; keeps the old refresh token if none is returned. */
export async function refreshAccessToken(
  variant: OAuth2Auth,
  client: OAuthClient,
  refreshToken: string,
  fetchImpl: FetchLike = fetch,
  timeoutMs = 30_000,
  credentials: Credentials = {},
): Promise<TokenSet> {
  try {
    const t = await tokenRequest(variant, client, { grant_type: 'refresh_token', refresh_token: refreshToken }, fetchImpl, timeoutMs, credentials);
    return { ...t, refresh_token: t.refresh_token ?? refreshToken };
  } catch (e) {
    if (e instanceof SwitchboardError) throw new SwitchboardError('oauth_refresh_failed', e.message, { details: e.details, cause: e });
    throw e;
  }
}

/**
 * A client_credentials variant's access token (RFC 6749 §4.4): the grant (client_credentials, or
 * a vendor's own such as account_credentials) with the app's id and secret and the variant's other
 * form fields, at its token URL (or `tokenUrl`, a simulator's). Refusals are
 * upstream_credentials_rejected with the endpoint's error, never the secret.
 */
export function clientCredentialsToken(
  variant: TokenVariant,
  client: OAuthClient,
  form: Record<string, string>,
  fetchImpl: FetchLike = fetch,
  timeoutMs = 30_000,
  credentials: Credentials = {},
  nowMs: number = Date.now(),
): Promise<TokenSet> {
  return tokenRequest(variant, client, form, fetchImpl, timeoutMs, credentials, nowMs);
}

/** The consent URL for the authorization-code flow; `credentials` fill the URL's variables (a Zendesk subdomain). */
export function authorizeUrl(
  variant: OAuth2Auth,
  o: { clientId: string; redirectUri: string; state: string; authorizeUrl?: string; credentials?: Credentials; codeVerifier?: string },
): string {
  const url = new URL(o.authorizeUrl ?? oauthUrl(variant, variant.authorize_url, o.credentials));
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', o.clientId);
  url.searchParams.set('redirect_uri', o.redirectUri);
  url.searchParams.set('state', o.state);
  if (variant.scopes && variant.scopes.length > 0) url.searchParams.set('scope', variant.scopes.join(variant.scope_separator ?? ' '));
  for (const [k, v] of Object.entries(variant.authorize_params ?? {})) if (v !== undefined) url.searchParams.set(k, v);
  if (variant.pkce !== undefined) {
    url.searchParams.set('code_challenge', pkceChallenge(requiredVerifier(variant, o.codeVerifier)));
    url.searchParams.set('code_challenge_method', variant.pkce);
  }
  return url.toString();
}

export interface FollowUpOptions {
  /** After the code exchange every follow_up runs; after a refresh only those with on_refresh: true. */
  after: 'exchange' | 'refresh';
  fetchImpl?: FetchLike;
  /**
   * Send the requests here instead of to their own origin, keeping their path and query (a
   * simulator answering every host of the API, a proxy): https://api.example.com/x/y with
   * http://127.0.0.1:4010 goes to http://127.0.0.1:4010/x/y.
   */
  baseUrl?: string | undefined;
  config?: Record<string, unknown>;
  /** Per request; default 30 s. */
  timeoutMs?: number;
  /** Largest answer read; default 1 MiB. */
  maxBytes?: number;
}

/**
 * Run an oauth2 variant's follow_up requests (manifest `follow_up`) with fresh tokens and return
 * the credentials with the fields they fill (Jira: cloud_id from accessible-resources). Each is
 * one request, bounded in time and size, sent without following redirects. A field that renders
 * empty fails with oauth_nothing_granted (the follow_up's `missing` message); an unreachable or
 * refusing endpoint with the usual upstream_* codes. Messages name the URL and status, never a
 * token or the answer's body.
 */
export async function runFollowUps(variant: CompiledAuthVariant, credentials: Credentials, o: FollowUpOptions): Promise<Credentials> {
  const steps = (variant.followUps ?? []).filter((f) => o.after === 'exchange' || f.onRefresh);
  if (steps.length === 0) return credentials;
  const fetchImpl = o.fetchImpl ?? fetch;
  const out: Credentials = { ...credentials };
  for (const f of steps) {
    const ctx = { credentials: out, config: o.config ?? {} };
    const headers: Record<string, string> = { accept: 'application/json' };
    for (const [name, t] of f.headers) {
      const v = t.render(ctx);
      if (v !== undefined && v !== null && v !== '') headers[name.toLowerCase()] = String(v);
    }
    const u = new URL(f.url);
    const url = o.baseUrl === undefined ? f.url : `${o.baseUrl.replace(/\/+$/, '')}${u.pathname}${u.search}`;
    const what = `${u.origin}${u.pathname}`;
    let res: Response;
    try {
      res = await fetchImpl(url, { method: f.method, headers, redirect: 'manual', signal: AbortSignal.timeout(o.timeoutMs ?? 30_000) });
    } catch (e) {
      if (e instanceof SwitchboardError) throw e;
      throw new SwitchboardError('upstream_unavailable', `${what} could not be reached after the OAuth code exchange: ${(e as Error).message}`, { cause: e });
    }
    const raw = await readBodyCapped(res, o.maxBytes ?? 1024 * 1024, what);
    if (res.status === 401 || res.status === 403) {
      throw new SwitchboardError('upstream_credentials_rejected', `${what} refused the new access token (HTTP ${res.status})`, {
        details: { upstream_status: res.status },
      });
    }
    if (res.status < 200 || res.status > 299) {
      throw new SwitchboardError(
        res.status >= 500 ? 'upstream_unavailable' : 'upstream_error',
        `${what} answered HTTP ${res.status} after the OAuth code exchange`,
        { details: { upstream_status: res.status } },
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new SwitchboardError('upstream_protocol_error', `${what} did not answer JSON`);
    }
    const answer = { body, headers: Object.fromEntries(res.headers) };
    for (const [field, t] of f.fields) {
      const v = t.render(answer);
      if (v === undefined || v === null || v === '') {
        throw new SwitchboardError('oauth_nothing_granted', f.missing ?? `${what} answered no ${field}`, {
          errors: [{ path: `/${field}`, message: 'the follow_up answer lacks it' }],
          details: { field },
        });
      }
      if (typeof v === 'object')
        throw new SwitchboardError('upstream_protocol_error', `${what} answered ${Array.isArray(v) ? 'a list' : 'an object'} where ${field} should be a value`);
      out[field] = v;
    }
  }
  return out;
}
