/**
 * Where a GraphQL schema lists records: root query fields returning a list or a connection of an
 * object type, and the list or connection fields of the object a root field returns when that
 * root field's required arguments are scalars (`viewer`, `repository(owner, name)`,
 * `organization(login)`). A nested one is named `<root field>_<field>` (`repository_issues`).
 */
import { getNamedType, getNullableType, isEnumType, isNonNullType, isScalarType, type GraphQLArgument, type GraphQLObjectType } from 'graphql';
import { safeName } from '../scaffold.ts';
import type { EntitySource } from './entity.ts';
import { shapeOf } from './schema.ts';

/** A required argument a caller can give as a param: a scalar or an enum (lists of them too). */
const scalarOrOptional = (a: GraphQLArgument): boolean => {
  if (!isNonNullType(a.type) || a.defaultValue !== undefined) return true;
  const named = getNamedType(getNullableType(a.type));
  return isScalarType(named) || isEnumType(named);
};

export function entitySources(queryType: GraphQLObjectType): EntitySource[] {
  const roots: EntitySource[] = [];
  const nested: EntitySource[] = [];
  for (const parent of Object.values(queryType.getFields())) {
    const shape = shapeOf(parent);
    if (shape === undefined) continue;
    if (shape.kind !== 'one') {
      roots.push({ name: safeName(parent.name), field: parent, shape });
      continue;
    }
    if (!parent.args.every(scalarOrOptional)) continue;
    for (const field of Object.values(shape.node.getFields())) {
      const s = shapeOf(field);
      if (s === undefined || s.kind === 'one' || field.deprecationReason || s.node.getFields()['id'] === undefined || !field.args.every(scalarOrOptional))
        continue;
      nested.push({ name: safeName(`${parent.name}_${field.name}`), parent, field, shape: s });
    }
  }
  const taken = new Set(roots.map((r) => r.name));
  return [...roots, ...nested.filter((n) => !taken.has(n.name))];
}

/**
 * The entities scaffolded when none is named: every root list, and for each type no root field
 * lists, the first field under a root field that does.
 */
export function defaultSources(candidates: EntitySource[]): EntitySource[] {
  const listed = new Set(candidates.filter((c) => c.parent === undefined).map((c) => c.shape.node));
  return candidates.filter((c) => {
    if (c.parent === undefined) return true;
    if (listed.has(c.shape.node)) return false;
    listed.add(c.shape.node);
    return true;
  });
}
