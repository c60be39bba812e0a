/**
 * An update sent as JSON Patch operations (RFC 6902: `[{op: replace, path: /title, value}]`, as
 * Typeform-style PATCH endpoints take them) read as the fields it writes and the paths it removes.
 * `add` on an array the record holds appends the value (`{op: add, path: /members, value: {...}}`).
 */
import { getPath } from '../core/values.ts';
import type { Json } from '../description.ts';

interface PatchOperation {
  op: string;
  path: string;
  value?: unknown;
}

const isPatch = (body: unknown): body is PatchOperation[] =>
  Array.isArray(body) &&
  body.length > 0 &&
  body.every(
    (o) =>
      o !== null &&
      typeof o === 'object' &&
      typeof (o as Json)['op'] === 'string' &&
      typeof (o as Json)['path'] === 'string' &&
      String((o as Json)['path']).startsWith('/'),
  );

/** A JSON pointer's keys (`/settings/is_public` → settings, is_public; ~1 is /, ~0 is ~). */
const keysOf = (pointer: string): string[] =>
  pointer
    .slice(1)
    .split('/')
    .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));

/** The fields a JSON Patch body writes (nested as the paths say) and the dotted paths it removes; undefined for another body. */
export function patchFields(body: unknown, record: Json): { fields: Json; removals: string[] } | undefined {
  if (!isPatch(body)) return undefined;
  const fields: Json = {};
  const removals: string[] = [];
  for (const { op, path, value } of body) {
    const keys = keysOf(path);
    if (keys.some((k) => k === '')) continue;
    if (op === 'remove') {
      removals.push(keys.join('.'));
      continue;
    }
    if (op !== 'add' && op !== 'replace') continue;
    const current = getPath(record, keys.join('.'));
    const written = op === 'add' && Array.isArray(current) && !Array.isArray(value) ? [...(current as unknown[]), value] : value;
    let at = fields;
    for (const k of keys.slice(0, -1)) at = (at[k] ??= {}) as Json;
    at[keys.at(-1)!] = written as Json[string];
  }
  return { fields, removals };
}

/** Remove a dotted path from a record (the parent objects kept). */
export function removePath(record: Json, dotted: string): void {
  const keys = dotted.split('.');
  const parent = keys.length === 1 ? record : getPath(record, keys.slice(0, -1).join('.'));
  if (parent !== null && typeof parent === 'object' && !Array.isArray(parent)) delete (parent as Json)[keys.at(-1)!];
}
