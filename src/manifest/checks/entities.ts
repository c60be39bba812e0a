/**
 * The `entities` section (and `list_meta`, which every list action answers): each entity's record
 * schema and primary key, then its actions, sync and search, in that order.
 */
import type { Entity } from '../../../generated/manifest.ts';
import { ACTION_NAMES, type ActionName, type CompiledAction, type CompiledEntity } from '../compile.ts';
import type { CheckContext, Path } from './checker.ts';
import { checkAction } from './actions.ts';
import { ajv, strictlyValid, unknownKeywords } from './json-schema.ts';
import { checkSearch } from './search.ts';
import { checkSync } from './sync.ts';

export function checkEntities(ctx: CheckContext): Map<string, CompiledEntity> {
  const { m, check } = ctx;
  const listMeta = Object.keys(m.list_meta ?? {});
  for (const [k, schema] of Object.entries(m.list_meta ?? {})) {
    const bad = schema === undefined || strictlyValid(schema) ? undefined : unknownKeywords(schema);
    if (bad !== undefined) check.add(['list_meta', k], bad);
  }
  const entities = new Map<string, CompiledEntity>();
  for (const [entityName, entity] of Object.entries(m.entities)) {
    if (entity === undefined) continue;
    const base = ['entities', entityName];
    checkRecord(ctx, base, entity);
    const actions = new Map<ActionName, CompiledAction>();
    for (const [actionName, action] of Object.entries(entity.actions)) {
      if (action === undefined || !ACTION_NAMES.includes(actionName as ActionName)) continue;
      const compiled = checkAction(ctx, entityName, entity.actions, actionName as ActionName, action, listMeta);
      if (compiled !== undefined) actions.set(actionName as ActionName, compiled);
    }
    // Sync settings refer to actions and params of this entity.
    checkSync(ctx, base, entityName, entity);
    checkSearch(check, base, entity);
    entities.set(entityName, { name: entityName, def: entity, actions });
  }
  return entities;
}

/** The record schema: an object, holding the primary key, valid JSON Schema with known keywords only. */
function checkRecord({ check }: CheckContext, base: Path, entity: Entity): void {
  const recordProps = (entity.record['properties'] ?? {}) as Record<string, unknown>;
  if (entity.record['type'] !== 'object') check.add([...base, 'record', 'type'], 'a record schema must have type: object');
  if (recordProps[entity.primary_key] === undefined) {
    check.add([...base, 'primary_key'], `primary key "${entity.primary_key}" is not a property of the record schema`);
  }
  try {
    if (!strictlyValid(entity.record)) {
      ajv.compile(entity.record);
      const bad = unknownKeywords(entity.record);
      if (bad !== undefined) check.add([...base, 'record'], bad);
    }
  } catch (e) {
    check.add([...base, 'record'], `invalid JSON Schema: ${(e as Error).message}`);
  }
}
