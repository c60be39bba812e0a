/**
 * The OpenAPI front end's record rules over the core store: timestamps, soft deletes, lookups by
 * other fields, and new records (the sidecar's template, else a sample of the schema).
 */
import { clone, deepMerge, deletePath, getPath, hashString, idAt, setIdAt, setPath } from '../core/values.ts';
import type { Json } from '../description.ts';
import { realisticRecord } from '../realistic.ts';
import { fill } from '../rules.ts';
import { mixSeed } from '../sim-server.ts';
import type { OpenApiContext, Resource, StoredRecord } from './types.ts';

export interface RecordRules {
  stamp(r: Resource, record: Json, which: 'created' | 'updated', at: string): void;
  softDeleted(r: Resource, record: Json): boolean;
  softDeleteParam(r: Resource): string | undefined;
  uniqueLookups(r: Resource, record: Json, n: number): void;
  find(r: Resource, id: string): StoredRecord | undefined;
  /** Path parameters naming a record of the resource by one of its aliases (a drive's `root` folder) with that record's id instead. */
  unaliased(r: Resource, params: Record<string, string>): Record<string, string>;
  newRecord(r: Resource, id: (like: unknown) => string | number, n: number, extra?: Json, now?: string, base?: Json, vars?: Record<string, string>): Json;
}

export function recordRules(ctx: OpenApiContext): RecordRules {
  const { sidecar, peek, options, seed } = ctx;
  /** Set a dotted timestamp field (sidecar resources.<name>.timestamps) on a record. */
  const stamp = (r: Resource, record: Json, which: 'created' | 'updated', at: string): void => {
    const paths = sidecar.resources?.[r.name]?.timestamps?.[which];
    const ts = sidecar.resources?.[r.name]?.timestamps;
    // unix: Unix seconds; unix_ms: epoch milliseconds; ms_text: epoch milliseconds written as text ("1767225600000"); else ISO 8601.
    const value =
      ts?.unix_ms === true ? Date.parse(at) : ts?.unix === true ? Math.floor(Date.parse(at) / 1000) : ts?.unix === 'ms_text' ? String(Date.parse(at)) : at;
    for (const path of typeof paths === 'string' ? [paths] : (paths ?? [])) setPath(record, path, value);
  };
  /** A record the sidecar's soft_delete marks as deleted: gone for get, update and lists, kept for exports. */
  const softDeleted = (r: Resource, record: Json): boolean => {
    const sd = sidecar.resources?.[r.name]?.soft_delete;
    return sd !== undefined && getPath(record, sd.field) === (sd.value === undefined ? true : sd.value);
  };
  /** The query param that asks a list or get for soft-deleted records: soft_delete.param, else a boolean flag's own name (archived). */
  const softDeleteParam = (r: Resource): string | undefined => {
    const sd = sidecar.resources?.[r.name]?.soft_delete;
    return sd === undefined ? undefined : (sd.param ?? (sd.value === undefined || sd.value === true ? sd.field : undefined));
  };
  /** Lookup fields that are text get a suffix, so each record's value is its own (EX-3, not EX five times). */
  const uniqueLookups = (r: Resource, record: Json, n: number): void => {
    for (const f of r.lookup) if (typeof record[f] === 'string') record[f] = `${record[f] as string}-${n}`;
  };
  /** The record an item path's id names: by id, else by an alias (the token's own user, `me`), else by a lookup field. */
  const find = (r: Resource, id: string): StoredRecord | undefined => {
    const alias = sidecar.resources?.[r.name]?.aliases?.[id];
    if (alias !== undefined) return [...r.records.values()][alias - 1];
    const direct = r.records.get(id);
    if (direct !== undefined || r.lookup.length === 0) return direct;
    for (const s of r.records.values()) if (r.lookup.some((f) => s.record[f] !== undefined && String(s.record[f]) === id)) return s;
    return undefined;
  };
  /**
   * A new record of a resource (seeded or created): its id drawn by `id` (shaped like the schema's),
   * then the sidecar's template filled with {{n}}, {{id}} and {{now}} (Unix seconds of `now`),
   * else a sample of the schema (an example of the description, `base`, before both); `extra`
   * merged over it; its timestamps set.
   */
  const newRecord = (
    r: Resource,
    id: (like: unknown) => string | number,
    n: number,
    extra?: Json,
    now = new Date().toISOString(),
    base?: Json,
    vars?: Record<string, string>,
  ): Json => {
    const rs = sidecar.resources?.[r.name];
    const sampled = (peek(r.recordRef) ?? {}) as Json;
    // An example without the id (e.g. chat.update message has no ts) takes the shape of one that has it.
    const minted = id(
      rs?.id_like ??
        idAt(base ?? sampled, r.idField) ??
        idAt(
          r.examples?.find((e) => idAt(e, r.idField) !== undefined),
          r.idField,
        ),
    );
    // A seed that names the id keeps it (the credentials' account, which every path names), in the template's fields too.
    const given = idAt(extra, r.idField);
    const recordId = typeof given === 'string' || typeof given === 'number' ? given : minted;
    let record = (
      base !== undefined
        ? clone(base)
        : rs?.template !== undefined
          ? (fill(rs.template, { ...options.vars, ...vars, n, id: recordId, now: Math.floor(Date.parse(now) / 1000) }) ?? {})
          : clone(sampled)
    ) as Json;
    // The sampler's placeholders ("string", {property1, property2}) become realistic values, the same for the same seed and record.
    if (rs?.template === undefined) realisticRecord(record, mixSeed(seed, hashString(r.name), n), r.name);
    // Path params are text: a parent's id filled into a field the schema types as a number ({{project_id}}) is that number.
    else
      for (const [k, v] of Object.entries(record))
        if (typeof sampled[k] === 'number' && typeof v === 'string' && /^-?\d+$/.test(v) && Object.values(vars ?? {}).includes(v)) record[k] = Number(v);
    if (extra !== undefined) record = deepMerge(record, extra);
    setIdAt(record, r.idField, recordId);
    stamp(r, record, 'created', now);
    stamp(r, record, 'updated', now);
    // A boolean soft-delete flag starts false (e.g. archived) unless a seed sets it (a record deleted before the
    // simulator started, for deleted-records lists); a mark by value is the record's own.
    if (
      rs?.soft_delete !== undefined &&
      (rs.soft_delete.value === undefined || rs.soft_delete.value === true) &&
      getPath(extra ?? {}, rs.soft_delete.field) === undefined
    ) {
      setPath(record, rs.soft_delete.field, false);
      if (rs.soft_delete.at !== undefined) deletePath(record, rs.soft_delete.at);
    }
    return record;
  };
  const unaliased = (r: Resource, params: Record<string, string>): Record<string, string> => {
    const aliases = sidecar.resources?.[r.name]?.aliases;
    if (aliases === undefined) return params;
    return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, aliases[v] === undefined ? v : String(find(r, v)?.record[r.idField] ?? v)]));
  };
  return { stamp, softDeleted, softDeleteParam, uniqueLookups, find, unaliased, newRecord };
}
