/** Which credentials a simulator accepts: the tokens given, else the sidecar's, else any. */
import type { Sidecar } from '../sidecar/types.ts';

export interface AcceptedTokens {
  /** The tokens accepted (add or delete to grant or revoke). */
  tokens: Set<string>;
  /**
   * Whether tokens are checked: when a list was given, even once every token in it is revoked (an
   * empty set then refuses all); without one, any credential the API's scheme accepts will do.
   */
  check: boolean;
}

export function acceptedTokens(given: Iterable<string> | undefined, sidecar: Sidecar): AcceptedTokens {
  return { tokens: new Set(given ?? sidecar.auth?.tokens ?? []), check: given !== undefined || sidecar.auth?.tokens !== undefined };
}

/**
 * The token an Authorization header presents: a bearer (or other scheme's) token as sent; for HTTP
 * basic, the password of base64(user:password), so a sidecar lists API tokens, not encodings of them;
 * with an empty password, the user name (an API key sent as the user name, as Close takes it).
 */
export function presentedToken(authorization: string): string | undefined {
  // The scheme is an RFC 7235 token: letters, digits and !#$%&'*+-.^_`|~ (Klaviyo's Klaviyo-API-Key, Okta's SSWS).
  const m = /^([\w!#$%&'*+.^`|~-]+)\s+(\S+)\s*$/.exec(authorization);
  if (m === null) return undefined;
  if ((m[1] as string).toLowerCase() !== 'basic') return m[2];
  const decoded = Buffer.from(m[2] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const password = decoded.slice(colon + 1);
  return password === '' && colon > 0 ? decoded.slice(0, colon) : password;
}

/** The token of a credential header as a GraphQL API reads it: the last word, with or without a scheme. */
export function headerToken(raw: string | string[] | undefined): string | undefined {
  return /^(?:[\w!#$%&'*+.^`|~-]+\s+)?(\S+)\s*$/.exec(String(Array.isArray(raw) ? raw[0] : (raw ?? '')))?.[1];
}
