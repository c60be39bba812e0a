/** Upstream base URLs given by people (CLI flags, env vars, library options) are checked here. */
import { SwitchboardError } from '../errors/index.ts';
import type { LoadedManifest } from '../manifest/index.ts';
import { fitsUrlVariable } from '../manifest/url-variables.ts';

/**
 * The base URL without trailing slashes, or `invalid_base_url` with the fix spelled out: the most
 * common mistake is a missing scheme (`127.0.0.1:4010`), which `new URL` would read as scheme `127.0.0.1:`.
 */
export function checkBaseUrl(raw: string, what = 'base URL'): string {
  const value = raw.trim();
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    const hint = /^[\w.-]+:\d+(\/.*)?$/.test(value) || /^[\w.-]+\.[a-z]{2,}(\/.*)?$/i.test(value) ? `http://${value}` : 'http://127.0.0.1:4010';
    throw new SwitchboardError('invalid_base_url', `Invalid ${what} "${raw}": include the scheme, e.g. ${hint}`, {
      details: { value: raw, example: hint },
    });
  }
  return value.replace(/\/+$/, '');
}

/**
 * The manifest's base URL for this connector: as declared, or with its variables
 * (`https://{{config.subdomain}}.zendesk.com`) filled from config and credentials. Every variable
 * must be one URL-safe token (letters, digits, "-", "_"; no dot, so a variable in the host can
 * only name a label under the vendor's domain) besides its field's own pattern: a customer cannot
 * point the connector at another host. A missing or refused value is invalid_params (config) or
 * invalid_credentials (a credential field).
 */
export function renderBaseUrl(
  manifest: LoadedManifest,
  declared: string,
  ctx: { config: Record<string, unknown>; credentials: Record<string, unknown> },
): string {
  const t = manifest.baseUrls?.get(declared);
  if (t === undefined) return declared.replace(/\/+$/, '');
  for (const [root, key] of t.references) {
    const where = root === 'config' ? ctx.config : ctx.credentials;
    const value = key === undefined ? undefined : where[key];
    // A credential field with an enum (in any variant: the manifest lists every value) may name a domain suffix.
    const field = root === 'config' || key === undefined ? undefined : manifest.manifest.auth.map((v) => v.fields[key]).find((f) => f?.enum !== undefined);
    if (fitsUrlVariable(value, field)) continue;
    const code = root === 'config' ? 'invalid_params' : 'invalid_credentials';
    const message =
      value === undefined || value === null || value === ''
        ? 'is required (it is part of the base URL)'
        : field?.enum !== undefined
          ? `must be one of ${field.enum.join(', ')}`
          : 'must be one host label or path segment (letters, digits, "-", "_")';
    throw new SwitchboardError(code, `${manifest.type}: ${root}.${String(key)} ${message}`, { errors: [{ path: `/${root}/${String(key)}`, message }] });
  }
  return checkBaseUrl(String(t.render(ctx)));
}
