/**
 * `base_url` (default, regions), each variant's base URL and OAuth URLs, and `config`: a URL's
 * variables must keep the request on the vendor's host (one host label or a path segment, from a
 * field with a pattern), and config patterns must compile and match their defaults.
 */
import type { Template } from '../../templates/index.ts';
import { anchored } from '../schemas.ts';
import { isDottedLabels } from '../url-variables.ts';
import { AUTH_ROOTS, type CheckContext, type Path } from './checker.ts';

type FieldRules = Record<string, { pattern?: string; enum?: string[]; secret?: boolean } | undefined>;

/** Base URLs with variables (default, regions, per-variant, OAuth), compiled by their source text. */
export function checkBaseUrls(ctx: CheckContext): Map<string, Template> {
  const { m, check } = ctx;
  const baseUrls = new Map<string, Template>();
  const baseUrl = (at: Path, source: string | undefined, fields: FieldRules): void => {
    const t = baseUrlTemplate(ctx, at, source, fields);
    if (t !== undefined && source !== undefined) baseUrls.set(source, t);
  };
  const anyFields = Object.assign({}, ...m.auth.map((v) => v.fields)) as FieldRules;
  baseUrl(['base_url', 'default'], m.base_url.default, anyFields);
  for (const [r, u] of Object.entries(m.base_url.regions ?? {})) baseUrl(['base_url', 'regions', r], u, anyFields);
  m.auth.forEach((v, i) => baseUrl(['auth', i, 'base_url'], v.base_url, v.fields));
  // A minted_bearer variant's token endpoint on another host (mint.base_url), with the variant's credential variables.
  m.auth.forEach((v, i) => (v.type === 'minted_bearer' ? baseUrl(['auth', i, 'mint', 'base_url'], v.mint.base_url, v.fields) : undefined));
  // OAuth URLs may name the account's host the same way (https://{{credentials.subdomain}}.zendesk.com/oauth/tokens).
  m.auth.forEach((v, i) => {
    if (v.type !== 'oauth2' && v.type !== 'client_credentials') return;
    const urls: ['authorize_url' | 'token_url', string][] =
      v.type === 'oauth2'
        ? [
            ['authorize_url', v.authorize_url],
            ['token_url', v.token_url],
          ]
        : [['token_url', v.token_url]];
    for (const [key, url] of urls) {
      if (!url.includes('{{')) continue;
      baseUrl(['auth', i, key], url, v.fields);
      const t = baseUrls.get(url);
      if (t !== undefined && t.references.some(([root]) => root !== 'credentials'))
        check.add(['auth', i, key], 'an OAuth URL variable must be a credential field of its variant (credentials.<name>)');
    }
  });
  return baseUrls;
}

/** One URL with variables, checked; undefined when it has none or does not compile. */
function baseUrlTemplate({ m, check, config }: CheckContext, at: Path, source: string | undefined, credentialFields: FieldRules): Template | undefined {
  if (source === undefined || !source.includes('{{')) return undefined;
  const t = check.template(at, source, { roots: AUTH_ROOTS, credentials: new Set(Object.keys(credentialFields)), config });
  if (t === undefined) return undefined;
  if (/^https?:\/\/\{\{[^}]*\}\}(?:[/:]|$)/.test(source))
    check.add(at, 'a base URL variable may be one label of the host (https://{{config.subdomain}}.example.com) or a path segment, not the whole host');
  for (const ref of t.references) {
    const [root, key] = ref;
    if (key === undefined || ref.length > 2) {
      check.add(at, `a base URL variable must name one field (config.<name> or credentials.<name>), not "${ref.join('.')}"`);
      continue;
    }
    if (root === 'config') {
      const f = m.config?.[key];
      if (f !== undefined && f.pattern === undefined && f.enum === undefined)
        check.add(
          ['config', key],
          `"${key}" is a variable of the base URL, so it needs a pattern (or enum) that keeps the request on the vendor's host, e.g. pattern: "[a-z0-9][a-z0-9-]{0,62}"`,
        );
    } else if (root === 'credentials') {
      const f = credentialFields[key];
      if (f !== undefined && f.pattern === undefined && f.enum === undefined)
        check.add(
          at,
          `credentials.${key} is a variable of the base URL, so its field needs a pattern (or enum) that keeps the request on the vendor's host, e.g. pattern: "[a-z0-9][a-z0-9-]{0,62}"`,
        );
      for (const v of f?.enum ?? [])
        if (!isDottedLabels(v))
          check.add(at, `credentials.${key} is a variable of the base URL, so each of its enum values must be host labels joined by dots, not "${v}"`);
      if (f?.secret === true) check.add(at, `credentials.${key} is secret, and a base URL is not: use a non-secret field`);
    }
  }
  if (t.single) check.add(at, 'a base URL must be more than one variable');
  return t;
}

/** Config patterns compile, and a default matches its pattern. */
export function checkConfig({ m, check }: CheckContext): void {
  for (const [k, f] of Object.entries(m.config ?? {})) {
    if (f?.pattern === undefined) continue;
    let re: RegExp | undefined;
    try {
      re = new RegExp(anchored(f.pattern), 'u');
    } catch (e) {
      check.add(['config', k, 'pattern'], `invalid regular expression: ${(e as Error).message}`);
    }
    if (re !== undefined && typeof f.default === 'string' && !re.test(f.default))
      check.add(['config', k, 'default'], `the default does not match the pattern ${f.pattern}`);
  }
}
