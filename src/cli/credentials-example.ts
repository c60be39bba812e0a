/**
 * The credentials example a command's hint shows, from the connector type's manifest: the
 * required fields of its first variant that is not OAuth (a key a user can paste), e.g. GitHub
 * `{"token":"..."}`, Zendesk `{"subdomain":"...","email":"...","api_token":"..."}`. An unknown
 * type (reported by the command itself right after) gets the generic `{"api_key":"..."}`.
 */
import type { AuthVariant } from '../../generated/manifest.ts';

export const GENERIC_CREDENTIALS_EXAMPLE = '{"api_key":"..."}';

/** The example credentials JSON of one variant: its required fields, each "...". */
export function variantExample(variant: AuthVariant): string {
  const fields = Object.entries(variant.fields).filter(([, f]) => f !== undefined && f.required !== false);
  return JSON.stringify(Object.fromEntries(fields.map(([name]) => [name, '...'])));
}

/** The example for `type`, and a note naming the other variants when there are several. */
export async function credentialsExample(type: string): Promise<{ json: string; note: string }> {
  let auth: AuthVariant[];
  try {
    const { getConnector } = await import('../manifest/index.ts');
    auth = getConnector(type).manifest.auth;
  } catch {
    return { json: GENERIC_CREDENTIALS_EXAMPLE, note: '' };
  }
  const chosen = auth.find((v) => v.type !== 'oauth2') ?? auth[0];
  if (chosen === undefined) return { json: GENERIC_CREDENTIALS_EXAMPLE, note: '' };
  const others = auth.filter((v) => v !== chosen).map((v) => v.name);
  const note = others.length > 0 ? ` (${type}'s ${chosen.name} variant; the others, ${others.join(', ')}: switchboard describe ${type})` : '';
  return { json: variantExample(chosen), note };
}
