/**
 * Credential values kept out of what callers see: the secret values of a connector's credentials
 * (the fields its auth variant marks secret, and what is derived from them, such as a Basic
 * header's base64), and failures with those values scrubbed. Shared by the hosted service and
 * the local MCP backend.
 */
import { derivedSecrets, type Credentials } from '../auth/index.ts';
import { SwitchboardError } from '../errors/index.ts';
import type { LoadedManifest } from '../manifest/index.ts';

/** String values of the credential fields the variant marks secret. */
export function secretValues(manifest: LoadedManifest, variantName: string, credentials: Credentials): string[] {
  const v = manifest.auth.find((a) => a.def.name === variantName);
  const fields = v?.secretFields ?? Object.keys(credentials);
  const values = fields.map((f) => credentials[f]).filter((x): x is string => typeof x === 'string' && x !== '');
  return v === undefined ? values : [...values, ...derivedSecrets(v, credentials)];
}

const REDACTED = '[redacted]';

/** Deep copy of `value` with every occurrence of any of `secrets` inside strings replaced. */
export function scrubSecrets<T>(value: T, secrets: readonly string[]): T {
  const active = secrets.filter((s) => s.length >= 4);
  if (active.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return active.reduce((s, secret) => (s.includes(secret) ? s.split(secret).join(REDACTED) : s), v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}

/**
 * An execute failure fit to return: credential values scrubbed from message, errors and details,
 * and invalid_params paths put under /params (where the caller sent them).
 */
export function executeFailure(e: SwitchboardError, secrets: readonly string[]): SwitchboardError {
  const errors = scrubSecrets(e.errors, secrets);
  const details = scrubSecrets(e.details, secrets);
  const prefixed = errors.map((x) => (e.code === 'invalid_params' ? { ...x, path: `/params${x.path === '/' ? '' : x.path}` } : x));
  return new SwitchboardError(e.code, scrubSecrets(e.message, secrets), { errors: prefixed, details, status: e.status });
}
