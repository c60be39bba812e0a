/** An entity's `search`: it needs a sync (search reads synced records), and its sources name search fields. */
import type { Entity } from '../../../generated/manifest.ts';
import type { Checker, Path } from './checker.ts';

export function checkSearch(check: Checker, base: Path, entity: Entity): void {
  if (entity.search !== undefined && entity.sync === undefined) {
    check.add(
      [...base, 'search'],
      "search fields need a sync: search reads only records the hosted service has synced, so without a sync block this entity's search would always return []. Add sync (e.g. sync: { action: list }) or remove search",
    );
  }
  if (entity.search !== undefined) {
    for (const [field, source] of Object.entries(entity.search.sources ?? {})) {
      if (entity.search.fields[field] === undefined) check.add([...base, 'search', 'sources', field], `"${field}" is not a search field`);
      if (source === undefined || source === '') check.add([...base, 'search', 'sources', field], 'empty source path');
    }
  }
}
