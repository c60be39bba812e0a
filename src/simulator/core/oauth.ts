/**
 * A simulated OAuth 2.0 authorization-code server (RFC 6749 §4.1) for the simulators: the
 * authorize endpoint consents at once (or refuses, when `deny` is set or the request carries
 * `sim_deny=1`) and redirects with a single-use code; the token endpoint takes client
 * credentials in the body (form or JSON) or as HTTP Basic, checks the code, its expiry and the
 * redirect_uri, and answers the vendor's token response. Issued tokens go into `tokens`, the
 * set the simulator's API accepts. With `expires_in` issued tokens expire (their expiry in
 * `grants.expiries`, which the simulator checks); with `refresh_tokens` each grant carries a refresh
 * token that `grant_type=refresh_token` exchanges for a new access token (and a new refresh token,
 * unless `keep_refresh_token`); `grant_types` answers client-only grants (client_credentials). Vendor differences are
 * configuration (the sidecar's `oauth`).
 */
import { createHash, randomBytes } from 'node:crypto';
import { parseJson, type SimRequest, type SimResponse } from '../sim-server.ts';

export interface OAuthConfig {
  authorize_path: string;
  token_path: string;
  /**
   * The token response; strings may hold {{access_token}}, {{scope}}, {{refresh_token}} and
   * {{expires_in}} (a number when it is the whole string). Default {access_token, token_type:
   * Bearer, scope}, with refresh_token and expires_in when the flow issues them.
   */
  token_response?: Record<string, unknown>;
  /** Whether an access_denied redirect carries an error_description (default true). */
  deny_description?: boolean;
  /** More query parameters of the redirect to the callback, beside the code (a company id the consent chose: realmId). */
  callback_params?: Record<string, string>;
  /** Scope granted when the authorize request names none. */
  default_scope?: string;
  /** Prefix of issued tokens (some vendors' tokens have a recognisable form). */
  token_prefix?: string;
  /**
   * Lifetime of issued access tokens in seconds (e.g. 1800): the simulator refuses an
   * expired token with the code `expired_token`. Default: tokens never expire.
   */
  expires_in?: number;
  /**
   * Issue a refresh token with each access token ({{refresh_token}} in token_response) and
   * accept grant_type=refresh_token (RFC 6749 §6): a refresh token is used once, the answer
   * carries a new one, unless `keep_refresh_token`.
   */
  refresh_tokens?: boolean;
  /** The refresh token stays valid and comes back with each refreshed access token (as some vendors do). Default false: rotated. */
  keep_refresh_token?: boolean;
  /**
   * PKCE (RFC 7636) required: an authorize request without an S256 `code_challenge` is refused,
   * and the code exchange must carry the `code_verifier` whose SHA-256 it is. Without it, a
   * challenge given is still checked.
   */
  pkce?: boolean;
  /**
   * Grants answered for the client alone (RFC 6749 §4.4: client_credentials, or a vendor's own
   * such as account_credentials): a token for the client's id and secret, with the request's
   * scope, without a refresh token.
   */
  grant_types?: string[];
  /**
   * More JSON endpoints of the OAuth server about a grant (Atlassian's accessible-resources),
   * answered to `Authorization: Bearer <token>` for a token the simulator accepts (401 otherwise);
   * strings may hold {{scope}}. A token from an authorize request carrying `sim_grant=none` (the
   * user consented but granted nothing) gets an array answer as [] and an object answer as {}.
   */
  endpoints?: { path: string; method?: 'GET' | 'POST'; json: unknown }[];
}

/** Issued access tokens' expiry (ms since the epoch) and the refresh tokens a flow issued. */
export interface OAuthGrants {
  expiries: Map<string, number>;
  refreshTokens: Map<string, { scope: string | undefined; none?: boolean }>;
}

export interface OAuthClient {
  clientId: string;
  clientSecret: string;
  /** Refuse consent: authorize redirects with error=access_denied. */
  deny: boolean;
}

/** An OAuth error: RFC 6749 code, HTTP status and description; the simulator shapes the body. */
export interface OAuthError {
  status: 400 | 401;
  code: 'invalid_client' | 'invalid_request' | 'invalid_grant' | 'unsupported_grant_type';
  message: string;
}

const CODE_TTL_MS = 10 * 60 * 1000;

function fill(template: unknown, vars: Record<string, string | number>): unknown {
  if (typeof template === 'string') {
    const whole = /^\{\{(\w+)\}\}$/.exec(template);
    if (whole !== null && typeof vars[whole[1] as string] === 'number') return vars[whole[1] as string];
    return template.replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(vars[k] ?? ''));
  }
  if (Array.isArray(template)) return template.map((t) => fill(t, vars));
  if (template !== null && typeof template === 'object') return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, fill(v, vars)]));
  return template;
}

/**
 * The OAuth endpoints as a request hook: answers requests to the two paths, undefined otherwise.
 * `error` turns an OAuthError into the vendor's body (default: RFC 6749 JSON).
 */
export function oauthServer(
  config: OAuthConfig,
  client: OAuthClient,
  tokens: Set<string>,
  error: (e: OAuthError) => SimResponse = (e) => ({ status: e.status, json: { error: e.code, error_description: e.message } }),
  now: () => number = Date.now,
  grants: OAuthGrants = { expiries: new Map(), refreshTokens: new Map() },
): (req: SimRequest) => SimResponse | undefined {
  const codes = new Map<string, { redirectUri: string; scope: string | undefined; expires: number; none: boolean; challenge: string | null }>();
  /** What each issued access token was granted (sim_grant=none: nothing). */
  const issued = new Map<string, { scope: string | undefined; none: boolean }>();

  const authorize = (req: SimRequest): SimResponse => {
    const redirect = req.query.get('redirect_uri');
    if (req.query.get('client_id') !== client.clientId) return error({ status: 400, code: 'invalid_client', message: 'Unknown client_id' });
    let target: URL;
    try {
      target = new URL(redirect ?? '');
      if (target.protocol !== 'https:' && target.protocol !== 'http:') throw new Error('scheme');
    } catch {
      return error({ status: 400, code: 'invalid_request', message: 'redirect_uri must be an absolute http(s) URL' });
    }
    const challenge = req.query.get('code_challenge');
    if (challenge !== null ? req.query.get('code_challenge_method') !== 'S256' : config.pkce === true)
      return error({ status: 400, code: 'invalid_request', message: 'code_challenge with code_challenge_method S256 is required' });
    if (client.deny || req.query.get('sim_deny') === '1') {
      target.searchParams.set('error', 'access_denied');
      if (config.deny_description !== false) target.searchParams.set('error_description', 'The user denied the authorization request');
    } else {
      const code = randomBytes(16).toString('hex');
      codes.set(code, {
        redirectUri: redirect as string,
        scope: req.query.get('scope') ?? config.default_scope,
        expires: now() + CODE_TTL_MS,
        none: req.query.get('sim_grant') === 'none',
        challenge,
      });
      target.searchParams.set('code', code);
      for (const [k, v] of Object.entries(config.callback_params ?? {})) target.searchParams.set(k, v);
    }
    const state = req.query.get('state');
    if (state !== null) target.searchParams.set('state', state);
    return { status: 302, headers: { location: target.toString() }, text: '' };
  };

  const token = (req: SimRequest): SimResponse => {
    const params: Record<string, string> = {};
    if (String(req.headers['content-type'] ?? '').includes('application/json')) {
      const b = parseJson(req.rawBody);
      if (b !== null && typeof b === 'object') for (const [k, v] of Object.entries(b)) if (typeof v === 'string') params[k] = v;
    } else for (const [k, v] of new URLSearchParams(req.rawBody)) params[k] = v;
    const basic = /^Basic\s+(\S+)$/i.exec(String(req.headers.authorization ?? ''));
    if (basic?.[1] !== undefined) {
      const [id, secret] = Buffer.from(basic[1], 'base64').toString('utf8').split(':');
      params.client_id ??= decodeURIComponent(id ?? '');
      params.client_secret ??= decodeURIComponent(secret ?? '');
    }
    if (params.client_id !== client.clientId || params.client_secret !== client.clientSecret)
      return error({ status: 401, code: 'invalid_client', message: 'Invalid client_id or client_secret' });
    if (params.grant_type === 'refresh_token' && config.refresh_tokens === true) {
      const presented = params.refresh_token ?? '';
      const grant = grants.refreshTokens.get(presented);
      if (grant === undefined) return error({ status: 400, code: 'invalid_grant', message: 'Invalid or already used refresh token' });
      if (config.keep_refresh_token === true) return issue(grant.scope, presented, grant.none === true);
      grants.refreshTokens.delete(presented);
      return issue(grant.scope, mintRefreshToken(grant.scope, grant.none === true), grant.none === true);
    }
    if (params.grant_type !== undefined && config.grant_types?.includes(params.grant_type) === true)
      return issue(params.scope ?? config.default_scope, undefined, false);
    if (params.grant_type !== undefined && params.grant_type !== 'authorization_code') {
      return error({
        status: 400,
        code: 'unsupported_grant_type',
        message: `Only authorization_code${config.refresh_tokens === true ? ' and refresh_token are' : ' is'} supported`,
      });
    }
    const entry = codes.get(params.code ?? '');
    if (entry === undefined || entry.expires < now()) return error({ status: 400, code: 'invalid_grant', message: 'Invalid or expired code' });
    if (params.redirect_uri !== undefined && params.redirect_uri !== entry.redirectUri)
      return error({ status: 400, code: 'invalid_grant', message: 'redirect_uri does not match the authorization request' });
    if (
      entry.challenge !== null &&
      createHash('sha256')
        .update(params.code_verifier ?? '')
        .digest('base64url') !== entry.challenge
    )
      return error({ status: 400, code: 'invalid_grant', message: 'code_verifier does not match the code_challenge' });
    codes.delete(params.code as string);
    return issue(entry.scope, config.refresh_tokens === true ? mintRefreshToken(entry.scope, entry.none) : undefined, entry.none);
  };

  const mintRefreshToken = (scope: string | undefined, none: boolean): string => {
    const refreshToken = `${config.token_prefix ?? ''}r_${randomBytes(24).toString('base64url')}`;
    grants.refreshTokens.set(refreshToken, { scope, none });
    return refreshToken;
  };

  /** A new access token (with its expiry), answered in the configured token response. */
  const issue = (scope: string | undefined, refreshToken: string | undefined, none: boolean): SimResponse => {
    const accessToken = `${config.token_prefix ?? ''}${randomBytes(24).toString('base64url')}`;
    tokens.add(accessToken);
    issued.set(accessToken, { scope, none });
    if (config.expires_in !== undefined) grants.expiries.set(accessToken, now() + config.expires_in * 1000);
    const template = config.token_response ?? {
      access_token: '{{access_token}}',
      token_type: 'Bearer',
      scope: '{{scope}}',
      ...(refreshToken !== undefined ? { refresh_token: '{{refresh_token}}' } : {}),
      ...(config.expires_in !== undefined ? { expires_in: '{{expires_in}}' } : {}),
    };
    return {
      status: 200,
      json: fill(template, {
        access_token: accessToken,
        scope: scope ?? '',
        refresh_token: refreshToken ?? '',
        ...(config.expires_in !== undefined ? { expires_in: config.expires_in } : {}),
      }),
    };
  };

  const endpoint = (e: NonNullable<OAuthConfig['endpoints']>[number], req: SimRequest): SimResponse => {
    const presented = /^Bearer\s+(\S+)$/i.exec(String(req.headers.authorization ?? ''))?.[1];
    if (presented === undefined || !tokens.has(presented)) return error({ status: 401, code: 'invalid_client', message: 'A valid access token is required' });
    const grant = issued.get(presented);
    if (grant?.none === true) return { status: 200, json: Array.isArray(e.json) ? [] : e.json !== null && typeof e.json === 'object' ? {} : e.json };
    return { status: 200, json: fill(e.json, { scope: grant?.scope ?? config.default_scope ?? '' }) };
  };

  return (req) => {
    if (req.path === config.authorize_path && req.method === 'GET') return authorize(req);
    if (req.path === config.token_path && req.method === 'POST') return token(req);
    const e = config.endpoints?.find((x) => x.path === req.path && (x.method ?? 'GET') === req.method);
    if (e !== undefined) return endpoint(e, req);
    return undefined;
  };
}
