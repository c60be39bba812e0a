/**
 * Random identifiers and their hashes.
 *
 * Client secrets, access tokens, OAuth states and pending-secret ids are 256-bit random values,
 * so they are stored as plain sha256: a slow password hash (scrypt, argon2) exists to make
 * guessing low-entropy human passwords expensive, and nobody can enumerate 2^256 candidates
 * however fast the hash is. sha256 keeps the token endpoint and every authenticated request
 * cheap, and lets a token be looked up by its hash with an index instead of a per-row compare.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/** `prefix` + 32 random bytes in base64url (43 characters). The prefix makes leaked values recognisable to secret scanners. */
export function randomSecret(prefix = ''): string {
  return prefix + randomBytes(32).toString('base64url');
}

/** A new UUID v4 (ids of organizations, applications, connectors). */
export function newId(): string {
  return randomUUID();
}

/** sha256 of a string, hex. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex digests. */
export function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/** Prefixes of the values the service hands out. */
export const PREFIX = {
  clientId: 'sbc_',
  clientSecret: 'sbs_',
  accessToken: 'sbt_',
  oauthSecret: 'sbo_',
} as const;
