/**
 * Connector kinds by every name a caller may use: the type itself, its `aliases` (display names
 * such as "Monday"), both case-insensitively, and its `airbyte_definition_id`. Built once per
 * registry; two manifests claiming one name or one definition id is an error at build time, so a
 * name always selects exactly one kind.
 */
import type { LoadedManifest } from './compile.ts';

export interface KindIndex {
  /** The type a name (type or alias, any case, surrounding blanks ignored) selects, if any. */
  byName(name: string): string | undefined;
  /** The type with this Airbyte definition id (any case), if any. */
  byDefinitionId(id: string): string | undefined;
}

const built = new WeakMap<ReadonlyMap<string, LoadedManifest>, KindIndex>();

export function kindIndex(registry: ReadonlyMap<string, LoadedManifest>): KindIndex {
  const cached = built.get(registry);
  if (cached !== undefined) return cached;
  const names = new Map<string, string>();
  const ids = new Map<string, string>();
  const claim = (map: Map<string, string>, key: string, type: string, what: string): void => {
    const owner = map.get(key);
    if (owner !== undefined && owner !== type) throw new Error(`connector types ${owner} and ${type} both claim the ${what} "${key}"`);
    map.set(key, type);
  };
  // Types first: a type's own name wins over nothing, and an alias equal to another type is a clash.
  for (const type of registry.keys()) claim(names, type.toLowerCase(), type, 'name');
  for (const [type, m] of registry) {
    for (const alias of m.manifest.aliases ?? []) claim(names, alias.trim().toLowerCase(), type, 'name');
    const id = m.manifest.airbyte_definition_id;
    if (id !== undefined) claim(ids, id.toLowerCase(), type, 'airbyte_definition_id');
  }
  const index: KindIndex = {
    byName: (name) => names.get(name.trim().toLowerCase()),
    byDefinitionId: (id) => ids.get(id.trim().toLowerCase()),
  };
  built.set(registry, index);
  return index;
}
