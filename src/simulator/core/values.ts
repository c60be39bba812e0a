/** Small helpers over the simulators' stored records: copies, dotted paths, merges, seeds by name. */

export type Json = Record<string, unknown>;

export const clone = <T>(v: T): T => structuredClone(v);

export const isPlainObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A string's 32-bit hash: a PRNG seed per resource name. */
export function hashString(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h >>> 0;
}

/** The value at a dotted path of a record (undefined when a step is missing). */
export function getPath(obj: unknown, path: string): unknown {
  let o: unknown = obj;
  for (const p of path.split('.')) o = o !== null && typeof o === 'object' ? (o as Json)[p] : undefined;
  return o;
}

/** Set the value at a dotted path, making the objects on the way; a number indexes an array already there (`projects.0.gid`). */
export function setPath(obj: Json, path: string, value: unknown): void {
  const parts = path.split('.');
  let o = obj;
  for (const [i, p] of parts.slice(0, -1).entries()) {
    const indexed = Array.isArray(o[p]) && /^\d+$/.test(parts[i + 1] as string);
    if (o[p] === null || typeof o[p] !== 'object' || (Array.isArray(o[p]) && !indexed)) o[p] = {};
    o = o[p] as Json;
  }
  o[parts[parts.length - 1] as string] = value;
}

/**
 * A record's id at its resource's id field, which may be a dotted path into an object the record
 * holds (`id.record_id`: ids given as `{workspace_id, record_id}`); a plain field is read directly.
 */
export function idAt(record: unknown, field: string): unknown {
  if (field.includes('.')) return getPath(record, field);
  return record !== null && typeof record === 'object' ? (record as Json)[field] : undefined;
}

/** Set a record's id at its resource's id field (a dotted path makes the objects on the way). */
export function setIdAt(record: Json, field: string, value: unknown): void {
  if (field.includes('.')) setPath(record, field, value);
  else record[field] = value;
}

export function deletePath(obj: Json, path: string): void {
  const parts = path.split('.');
  const holder = getPath(obj, parts.slice(0, -1).join('.'));
  if (isPlainObject(holder)) delete holder[parts[parts.length - 1] as string];
}

/** Merge `over` into `base` (plain objects key by key, anything else replaced). */
export function deepMerge(base: Json, over: Json): Json {
  for (const [k, v] of Object.entries(over)) base[k] = isPlainObject(v) && isPlainObject(base[k]) ? deepMerge(base[k] as Json, v) : v;
  return base;
}
