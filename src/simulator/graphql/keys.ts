/**
 * Finding records by their keys: the arguments of a field that name a scalar field of the record's
 * type (`id`, `<type>Id`, or any field of the same name: `repository(owner, name)` by name,
 * `issue(number:)` by number), and the records a field of a parent lists (those pointing back at
 * the parent, or every record of the type when none of its fields can point at the parent's type).
 */
import { getNamedType, isEnumType, isScalarType, type GraphQLField, type GraphQLObjectType } from 'graphql';
import { readPath } from './filters.ts';
import type { GraphqlResource, Rec } from './types.ts';

/** `[record field, value]` of each given argument that names a scalar field of the type. */
export function keyArgs(f: GraphQLField<unknown, unknown>, type: GraphQLObjectType, args: Rec): [string, unknown][] {
  const fields = type.getFields();
  const keys: [string, unknown][] = [];
  for (const a of f.args) {
    const v = args[a.name];
    if (v === undefined || v === null) continue;
    const name = a.name === 'id' || a.name.toLowerCase() === `${type.name.toLowerCase()}id` ? 'id' : a.name;
    const field = fields[name];
    const named = field === undefined ? undefined : getNamedType(field.type);
    if (named !== undefined && (isScalarType(named) || isEnumType(named))) keys.push([name, v]);
  }
  return keys;
}

/** The record whose key fields hold the given values (compared as text), else undefined. */
export function findByKeys(r: GraphqlResource, rows: Iterable<Rec>, keys: [string, unknown][]): Rec | undefined {
  if (keys.length === 1 && keys[0]?.[0] === 'id') {
    const rec = r.records.get(String(keys[0][1]));
    if (rec === undefined) return undefined;
    for (const row of rows) if (row === rec) return rec;
    return undefined;
  }
  for (const row of rows) if (keys.every(([k, v]) => row[k] !== undefined && row[k] !== null && String(row[k]) === String(v))) return row;
  return undefined;
}

/** How a missing record is named: `<id>` alone, else `field=value, ...`. */
export const keyText = (keys: [string, unknown][]): string =>
  keys.length === 1 && keys[0]?.[0] === 'id' ? String(keys[0][1]) : keys.map(([k, v]) => `${k}=${String(v)}`).join(', ');

/**
 * The records of `child` a field of a `parentType` record lists: those whose field of the parent's
 * type (the one the field name suggests) holds the parent's id; every record when no field of the
 * child's type can point at the parent's.
 */
export function pointingBack(child: GraphqlResource, back: GraphQLField<unknown, unknown>[], parentType: string, fieldName: string, parentId: unknown): Rec[] {
  if (back.length === 0) return [...child.records.values()];
  const stem = fieldName.toLowerCase();
  const via =
    back.find((rf) => stem.includes(rf.name.toLowerCase().replace(/e$/, ''))) ??
    back.find((rf) => rf.name.toLowerCase() === parentType.toLowerCase()) ??
    back[0];
  return via === undefined ? [] : [...child.records.values()].filter((rec) => readPath(rec, [via.name]) === parentId);
}
