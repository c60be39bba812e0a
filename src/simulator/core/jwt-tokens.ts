/**
 * Simulated token minting from an app's JWT (the sidecar's `jwt_tokens`; an app's
 * POST /app/installations/{installation_id}/access_tokens): the declared operation takes
 * "Authorization: Bearer <jwt>", verifies the JWT (RS256 signature with the public key declared
 * for its issuer, iss, iat, exp and its lifetime) and answers a fresh token, which the simulator
 * then accepts on its other operations until it expires. Vendor differences are configuration.
 */
import { createHash, createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';
import type { SimResponse } from '../sim-server.ts';

export interface JwtTokensConfig {
  /** The operation that mints ("POST /app/installations/{installation_id}/access_tokens"), taking the JWT as its bearer token. */
  operation?: string;
  /**
   * Or an OAuth 2.0 token endpoint outside the description taking the JWT bearer grant (RFC 7523:
   * POST grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<jwt>, DocuSign's /oauth/token).
   */
  path?: string;
  /** Public keys (PEM, SPKI or PKCS#1) by issuer (the JWT's iss). More come from the simulator's option jwtKeys. */
  public_keys?: Record<string, string>;
  /** SHA-256 fingerprints (base64 of the DER SPKI, the "SHA256:..." form without the prefix) a key must have to be accepted; default any declared key. */
  fingerprints?: string[];
  /** Longest JWT lifetime accepted, exp − now in seconds; default 600. */
  max_lifetime_seconds?: number;
  /** How long a minted token lives; default 3600. */
  ttl_seconds?: number;
  /** Prefix of minted tokens. */
  token_prefix?: string;
  /** The answer; strings may hold {{token}}, {{expires_at}} (ISO 8601) and {{expires_in}}. Default {token, expires_at}. */
  response?: Record<string, unknown>;
  /** HTTP status of the answer; default 201. */
  status?: number;
}

/** An error the simulator shapes as the vendor's error body. */
export interface JwtTokenError {
  status: 401;
  message: string;
}

const fill = (t: unknown, vars: Record<string, string | number>): unknown => {
  if (typeof t === 'string') {
    const whole = /^\{\{(\w+)\}\}$/.exec(t);
    if (whole !== null && typeof vars[whole[1] as string] === 'number') return vars[whole[1] as string];
    return t.replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(vars[k] ?? ''));
  }
  if (Array.isArray(t)) return t.map((x) => fill(x, vars));
  if (t !== null && typeof t === 'object') return Object.fromEntries(Object.entries(t).map(([k, v]) => [k, fill(v, vars)]));
  return t;
};

/** The SHA-256 fingerprint of a public key: base64 of the hash of its DER SPKI. */
export function keyFingerprint(key: KeyObject | string): string {
  const k = typeof key === 'string' ? createPublicKey(key) : key;
  return createHash('sha256')
    .update(k.export({ type: 'spki', format: 'der' }))
    .digest('base64');
}

/**
 * The minting operation as a hook: mint(authorization) answers the request (a token, or the
 * error), given the keys by issuer and the set of accepted tokens (with their expiry in ms).
 */
export function jwtTokenServer(
  config: JwtTokensConfig,
  keys: Map<string, KeyObject | string>,
  tokens: Set<string>,
  expiries: Map<string, number>,
  error: (e: JwtTokenError) => SimResponse,
  now: () => number = Date.now,
): (authorization: string) => SimResponse {
  for (const [iss, pem] of Object.entries(config.public_keys ?? {})) if (!keys.has(iss)) keys.set(iss, pem);
  const refuse = (message: string): SimResponse => error({ status: 401, message });
  return (authorization) => {
    const m = /^Bearer\s+([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\s*$/i.exec(authorization);
    if (m === null) return refuse('A JSON web token could not be decoded');
    const [, h, p, s] = m as unknown as [string, string, string, string];
    let header: { alg?: unknown };
    let claims: { iss?: unknown; iat?: unknown; exp?: unknown };
    try {
      header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as typeof header;
      claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as typeof claims;
    } catch {
      return refuse('A JSON web token could not be decoded');
    }
    if (header.alg !== 'RS256') return refuse("'alg' must be RS256");
    if (claims.iss === undefined || claims.iss === null) return refuse("Missing 'issuer' claim ('iss')");
    const pem = keys.get(String(claims.iss));
    if (pem === undefined) return refuse(`No app with issuer ${String(claims.iss)}`);
    let key: KeyObject;
    try {
      key = typeof pem === 'string' ? createPublicKey(pem) : pem;
    } catch {
      return refuse('The public key of the issuer is unusable');
    }
    if (config.fingerprints !== undefined && !config.fingerprints.includes(keyFingerprint(key)))
      return refuse('The public key of the issuer is not among the accepted fingerprints');
    let ok: boolean;
    try {
      ok = verify('sha256', Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url'));
    } catch {
      ok = false;
    }
    if (!ok) return refuse('A JSON web token could not be decoded: the signature does not verify');
    const t = now() / 1000;
    if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') return refuse("'iat' and 'exp' must be numbers (Unix seconds)");
    if (claims.iat > t + 60) return refuse("'Issued at' claim ('iat') must be an Integer representing a time in the past");
    if (claims.exp <= t) return refuse("'Expiration time' claim ('exp') is too far in the past");
    if (claims.exp - t > (config.max_lifetime_seconds ?? 600) + 1) return refuse("'Expiration time' claim ('exp') is too far in the future");
    const token = `${config.token_prefix ?? ''}${randomBytes(24).toString('base64url')}`;
    const ttl = config.ttl_seconds ?? 3600;
    const expires = Math.floor(now() / 1000) * 1000 + ttl * 1000;
    tokens.add(token);
    expiries.set(token, expires);
    const body = fill(config.response ?? { token: '{{token}}', expires_at: '{{expires_at}}' }, {
      token,
      expires_at: new Date(expires).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      expires_in: ttl,
    });
    return { status: config.status ?? 201, json: body };
  };
}

export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** The assertion of an RFC 7523 grant's form body as the bearer authorization mint() reads, or the OAuth error of another grant. */
export function jwtBearerAssertion(rawBody: string): { authorization: string } | { error: string } {
  const form = new URLSearchParams(rawBody);
  if (form.get('grant_type') !== JWT_BEARER_GRANT) return { error: `grant_type must be ${JWT_BEARER_GRANT}` };
  return { authorization: `Bearer ${form.get('assertion') ?? ''}` };
}
