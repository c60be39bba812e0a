/**
 * What a base URL or OAuth URL variable may hold: one URL-safe token (a host label or a path
 * segment: letters, digits, "-", "_"; no dot, slash, "@", ":" or "%"), so a customer's value can
 * only name a label under the vendor's own domain. A field with an `enum` may hold only its values,
 * and those may be labels joined by dots (a data centre's domain suffix, `com.au`): the manifest
 * then names every host the variable can reach.
 */
const URL_TOKEN = /^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$|^[A-Za-z0-9]$/;
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?';
const DOTTED = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);

/** True when `value` may fill a URL variable read from a field with these rules. */
export function fitsUrlVariable(value: unknown, field?: { enum?: readonly string[] | undefined }): value is string {
  if (typeof value !== 'string') return false;
  if (field?.enum !== undefined) return field.enum.includes(value) && DOTTED.test(value);
  return URL_TOKEN.test(value);
}

/** True when an enum value may stand in a URL: labels joined by dots. */
export const isDottedLabels = (value: string): boolean => DOTTED.test(value);
