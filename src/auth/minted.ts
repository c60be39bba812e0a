/**
 * minted_bearer auth variants: the JWT (RFC 7519, RS256) an app signs with its private key to
 * mint a short-lived bearer token (a GitHub App installation token), and reading the minted
 * token's expiry. The engine sends the mint request and caches the token in memory.
 */
import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { SwitchboardError } from '../errors/index.ts';

/** The private key from a PEM credential; invalid_credentials, before anything is sent, when it is not an RSA private key. */
export function rsaPrivateKey(pem: unknown, field: string): KeyObject {
  if (typeof pem !== 'string' || pem.trim() === '') {
    throw new SwitchboardError('invalid_credentials', `${field} is required: the PEM private key that signs the JWT`, {
      errors: [{ path: `/${field}`, message: 'is required' }],
    });
  }
  let key: KeyObject;
  try {
    // Forms often turn line breaks into "\n" literally (a PEM never holds a backslash), or pad the value.
    const text = (pem.includes('\\n') ? pem.replace(/\\n/g, '\n') : pem).trim();
    key = createPrivateKey({ key: text, format: 'pem' });
  } catch {
    // The parser's message is not echoed: it could quote part of the key.
    throw new SwitchboardError('invalid_credentials', `${field} is not a PEM private key (-----BEGIN RSA PRIVATE KEY----- or -----BEGIN PRIVATE KEY-----)`, {
      errors: [{ path: `/${field}`, message: 'is not a PEM private key' }],
    });
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new SwitchboardError('invalid_credentials', `${field} is a ${String(key.asymmetricKeyType)} key; RS256 needs an RSA private key`, {
      errors: [{ path: `/${field}`, message: 'is not an RSA key' }],
    });
  }
  return key;
}

const b64url = (s: string | Buffer): string => Buffer.from(s).toString('base64url');

/** A compact JWS (RFC 7515) over the claims, RS256. */
export function signJwtRs256(key: KeyObject, claims: Record<string, unknown>): string {
  const input = `${b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
  return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

/**
 * When a minted token expires, in ms since the epoch: expires_at as an ISO 8601 time or Unix
 * seconds, or expires_in seconds from now. undefined when the answer says nothing; NaN when it
 * says something unreadable.
 */
export function mintedExpiry(expiresAt: unknown, expiresIn: unknown, nowMs: number): number | undefined {
  const num = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'string' && /^\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : NaN);
  if (expiresIn !== undefined && expiresIn !== null && expiresIn !== '') return nowMs + num(expiresIn) * 1000;
  if (expiresAt === undefined || expiresAt === null || expiresAt === '') return undefined;
  const n = num(expiresAt);
  if (!Number.isNaN(n)) return n * 1000;
  return typeof expiresAt === 'string' ? Date.parse(expiresAt) : NaN;
}
