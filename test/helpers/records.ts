/** What the connector tests share: checking the records an action returned against the manifest's record schema. */
import type { ValidateFunction } from 'ajv';
import { expect } from 'vitest';
import { createAjv } from '../../src/manifest/index.ts';
import type { LoadedManifest } from '../../src/manifest/index.ts';

type Rec = Record<string, unknown>;

/**
 * A check that records of an entity are valid against the entity's record schema (the manifest's
 * `record`), naming the record and the errors when one is not; an empty list fails too.
 */
export function recordChecker(manifest: LoadedManifest): (entity: string, records: Rec[]) => void {
  const ajv = createAjv();
  const validators = new Map<string, ValidateFunction>();
  for (const [name, entity] of manifest.entities) validators.set(name, ajv.compile(entity.def.record));
  return (entity, records) => {
    const v = validators.get(entity);
    if (v === undefined) throw new Error(`${manifest.type} has no entity ${entity}`);
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) expect(v(r), `${entity} ${String(r['id'])}: ${ajv.errorsText(v.errors)}`).toBe(true);
  };
}
