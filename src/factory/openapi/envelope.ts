/**
 * A single answer (get, create, update) the usual envelope names do not catch: a body with no id of
 * its own whose one object (or one-item array) holds the record, under any key (`{"Contacts":
 * [{ContactID, ...}]}`, `{"contact": {...}}`). `record: "{{body}}"` there would make every field of
 * the record missing.
 */
import { flatten, isArraySchema, isObjectSchema, propertiesOf, type OpenApiSchema } from '../json-schema.ts';
import { idLikeness } from './id-like.ts';

export interface Unwrapped {
  /** The key holding the record: `{{body.k}}`, or `{{first body.k}}` when `first` (a one-item array). */
  key: string;
  first: boolean;
  schema: OpenApiSchema;
  why: string;
}

/** An object schema with an id-like field of the entity's (`id`, `ContactID`...). */
export const hasIdField = (schema: OpenApiSchema, entity: string): boolean =>
  isObjectSchema(schema) && propertiesOf(schema).some(([k]) => idLikeness(k, entity) >= 2);
const hasId = hasIdField;

/** The record inside an envelope of the body, when the body has no id and one object or array of objects does; else a guess to make, if the body looks like an envelope. */
export function unwrapSingle(body: OpenApiSchema | undefined, entity: string): { found?: Unwrapped; doubt?: string } {
  if (body === undefined || propertiesOf(body).length === 0 || hasId(body, entity)) return {};
  const holders = propertiesOf(body)
    .map(([k, v]) => {
      const array = isArraySchema(v);
      const inner = array ? flatten(flatten(v)['items']) : v;
      return { k, array, inner };
    })
    .filter((h) => isObjectSchema(h.inner) && propertiesOf(h.inner).length > 0);
  if (holders.length === 0) return {};
  const withId = holders.filter((h) => hasId(h.inner, entity));
  if (withId.length === 1 && holders.length === 1) {
    const h = withId[0]!;
    return { found: { key: h.k, first: h.array, schema: h.inner, why: oneItemWhy(h.k, h.array) } };
  }
  return { doubt: `the body has no id of its own: is the record inside ${holders.map((h) => `"${h.k}"`).join(' or ')}?` };
}

/** Why the record is what `key` holds (the one item of its array when `array`). */
export const oneItemWhy = (key: string, array: boolean): string =>
  array ? `the body has no id of its own: the record is the one item of its "${key}" array` : `the body has no id of its own: the record is its "${key}"`;
