/**
 * The execute request described per connector type, from the manifests: for each type a union of
 * `{entity, action, params}` objects, one per entity × action, whose `entity` and `action` are
 * constants and whose `params` is that action's params schema (the one the engine validates
 * with). `openapi-typescript` turns it into a typed client: a wrong entity, action or param does
 * not compile. The route itself validates the body's shape and then answers unknown_entity,
 * unknown_action or invalid_params (with paths) — the codes a client can act on.
 */
import { paramsSchema, SYNC_ONLY_ACTIONS, type LoadedManifest } from '../../manifest/index.ts';
import type { Schema } from '../http/schemas.ts';

const pascal = (s: string): string => s.replace(/(^|[_\-.\s])([a-z0-9])/gi, (_m, _sep: string, c: string) => c.toUpperCase());

/** Component schemas to add: per type `<Type>ExecuteRequest`, per action `<Type><Entity><Action>Params`. */
export function executeComponents(registry: ReadonlyMap<string, LoadedManifest>): { schemas: Record<string, Schema>; perType: string[] } {
  const schemas: Record<string, Schema> = {};
  const perType: string[] = [];
  for (const [type, m] of [...registry].sort(([a], [b]) => a.localeCompare(b))) {
    const variants: Schema[] = [];
    for (const [entityName, entity] of m.entities) {
      for (const [actionName, action] of entity.actions) {
        if (SYNC_ONLY_ACTIONS.has(actionName)) continue; // run by sync only, never by execute
        const paramsName = `${pascal(type)}${pascal(entityName)}${pascal(actionName)}Params`;
        const params = paramsSchema(action.def, paramsName);
        schemas[paramsName] = params;
        const required = ((params['required'] as string[] | undefined) ?? []).length > 0;
        variants.push({
          type: 'object',
          additionalProperties: false,
          required: ['entity', 'action', ...(required ? ['params'] : [])],
          properties: { entity: { const: entityName }, action: { const: actionName }, params: { $ref: `#/components/schemas/${paramsName}` } },
        });
      }
      if (entity.def.search !== undefined) {
        variants.push({
          type: 'object',
          additionalProperties: false,
          required: ['entity', 'action'],
          properties: { entity: { const: entityName }, action: { const: 'search' }, params: { $ref: '#/components/schemas/SearchParams' } },
        });
      }
    }
    const name = `${pascal(type)}ExecuteRequest`;
    schemas[name] = { title: name, description: `Execute on a ${m.manifest.title} connector (type ${type})`, oneOf: variants };
    perType.push(name);
  }
  return { schemas, perType };
}
