/** Bridge from a manifest entity to what the record store needs. */
import type { Entity } from '../manifest/index.ts';
import type { SearchEntityDef, SearchType } from './query.ts';

/** The search definition of a manifest entity (primary key, search fields, sources), or undefined if it has none. */
export function searchDefOf(entity: Entity): SearchEntityDef | undefined {
  if (entity.search === undefined) return undefined;
  const fields: Record<string, SearchType> = {};
  for (const [name, type] of Object.entries(entity.search.fields)) if (type !== undefined) fields[name] = type;
  const sources: Record<string, string> = {};
  for (const [name, path] of Object.entries(entity.search.sources ?? {})) if (path !== undefined) sources[name] = path;
  return { primaryKey: entity.primary_key, fields, ...(Object.keys(sources).length > 0 ? { sources } : {}) };
}
