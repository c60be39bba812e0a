/**
 * JSON Schemas derived from a manifest: params per action, credentials per auth variant, search
 * fields. Shared by the loader (validation at run time) and codegen (generated/ types), so the
 * schema a caller is typed against is the one their params are validated against.
 */
import type { Action, AuthVariant, Entity, Manifest } from '../../generated/manifest.ts';

export type JsonSchema = Record<string, unknown>;

/** Object schema of an action's params: closed (unknown params rejected), `required` lifted. */
export function paramsSchema(action: Action, title?: string): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, def] of Object.entries(action.params ?? {})) {
    if (def === undefined) continue;
    const { required: isRequired, ...schema } = def as Record<string, unknown>;
    properties[name] = schema;
    if (isRequired === true) required.push(name);
  }
  return { ...(title ? { title } : {}), type: 'object', additionalProperties: false, properties, required };
}

/** Object schema of one credential variant: closed, with its required fields. */
/** A field pattern as a whole-value match: `^(?:p)$`. */
export function anchored(pattern: string): string {
  return `^(?:${pattern})$`;
}

export function credentialsSchema(variant: AuthVariant, title?: string): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, f] of Object.entries(variant.fields)) {
    if (f === undefined) continue;
    properties[name] = {
      type: f.type,
      ...(f.pattern !== undefined ? { pattern: anchored(f.pattern) } : {}),
      ...(f.enum !== undefined ? { enum: [...f.enum] } : {}),
      ...(f.description ? { description: f.description } : {}),
    };
    if (f.required !== false) required.push(name);
  }
  return { ...(title ? { title } : {}), type: 'object', additionalProperties: false, properties, required };
}

/** The meta object schema of list actions, from the manifest's list_meta. */
export function listMetaSchema(manifest: Manifest, title?: string): JsonSchema {
  const meta = manifest.list_meta ?? {};
  return {
    ...(title ? { title } : {}),
    type: 'object',
    additionalProperties: false,
    properties: meta,
    required: Object.keys(meta),
  };
}

/** The record schema of an entity, titled for codegen. */
export function recordSchema(entity: Entity, title?: string): JsonSchema {
  return { ...(entity.record as JsonSchema), ...(title ? { title } : {}) };
}

const SEARCH_TYPE_SCHEMA: Record<string, JsonSchema> = {
  string: { type: ['string', 'null'] },
  integer: { type: ['integer', 'null'] },
  number: { type: ['number', 'null'] },
  boolean: { type: ['boolean', 'null'] },
  object: {},
  array: { type: ['array', 'null'] },
};

/** Schema of a search result item: the entity's searchable fields with their search types. */
export function searchRecordSchema(entity: Entity, title?: string): JsonSchema | undefined {
  if (entity.search === undefined) return undefined;
  const properties = Object.fromEntries(Object.entries(entity.search.fields).map(([k, t]) => [k, SEARCH_TYPE_SCHEMA[t as string] ?? {}]));
  return { ...(title ? { title } : {}), type: 'object', additionalProperties: false, properties };
}
