/**
 * Reading a GraphQL schema for a scaffold: JSON Schemas of input and output types, selections,
 * the shape of a root field (a list, a Relay connection, one node), a field's arguments as params
 * and variables, and an incremental filter argument.
 */
import {
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLOutputType,
} from 'graphql';
import { safeName, shortText, withType } from '../scaffold.ts';

export type Obj = Record<string, unknown>;

/** JSON Schema of a GraphQL input type (one level of input objects kept). */
export function inputSchema(t: GraphQLInputType, depth = 1): Obj {
  const inner = getNullableType(t);
  if (isListType(inner)) return { type: 'array', items: inputSchema(inner.ofType as GraphQLInputType, depth) };
  if (isEnumType(inner)) return { type: 'string', enum: inner.getValues().map((v) => v.name) };
  if (isInputObjectType(inner)) {
    if (depth === 0) return { type: 'object' };
    return { type: 'object', properties: Object.fromEntries(Object.values(inner.getFields()).map((f) => [f.name, inputSchema(f.type, depth - 1)])) };
  }
  if (isScalarType(inner)) {
    switch (inner.name) {
      case 'Int':
        return { type: 'integer' };
      case 'Float':
        return { type: 'number' };
      case 'Boolean':
        return { type: 'boolean' };
      case 'String':
      case 'ID':
        return { type: 'string' };
      default:
        return /json/i.test(inner.name) ? {} : { type: 'string', description: `GraphQL ${inner.name}` };
    }
  }
  return {};
}

/** JSON Schema of a GraphQL output field for the record (nullable unless non-null). */
export function outputSchema(t: GraphQLOutputType): Obj {
  const nullable = !isNonNullType(t);
  const inner = getNullableType(t);
  const withNull = (s: Obj): Obj =>
    nullable && typeof s['type'] === 'string'
      ? { ...s, type: [s['type'], 'null'], ...(Array.isArray(s['enum']) ? { enum: [...(s['enum'] as unknown[]), null] } : {}) }
      : s;
  if (isListType(inner)) return withNull({ type: 'array' });
  if (isObjectType(inner)) return withNull({ type: 'object' });
  if (isEnumType(inner)) return withNull({ type: 'string', enum: inner.getValues().map((v) => v.name) });
  if (isScalarType(inner)) {
    const s = inputSchema(inner);
    return s['type'] === undefined ? {} : withNull({ type: s['type'] });
  }
  return {};
}

/** A field's arguments none of which is required (what a selection may include unasked). */
export const noRequiredArgs = (f: GraphQLField<unknown, unknown>): boolean => f.args.every((a) => !isNonNullType(a.type) || a.defaultValue !== undefined);

/** The selection of a record: every scalar/enum field, and `{ id }` (or `{ __typename }`) of object fields. */
export function selection(t: GraphQLObjectType): string {
  const parts: string[] = [];
  for (const f of Object.values(t.getFields())) {
    if (!noRequiredArgs(f) || f.deprecationReason) continue;
    const named = getNamedType(f.type);
    if (isScalarType(named) || isEnumType(named)) parts.push(f.name);
    else if (isObjectType(named) && named.getFields()['id'] !== undefined) parts.push(`${f.name} { id }`);
  }
  return parts.join(' ');
}

/** What a root field returns: a list of T, a Relay connection of T, or one T. */
export function shapeOf(
  f: GraphQLField<unknown, unknown>,
): { kind: 'list' | 'connection' | 'one'; node: GraphQLObjectType; nodes?: 'edges' | 'nodes' } | undefined {
  const inner = getNullableType(f.type);
  if (isListType(inner)) {
    const node = getNamedType(inner);
    return isObjectType(node) ? { kind: 'list', node } : undefined;
  }
  if (!isObjectType(inner)) return undefined;
  const fields = inner.getFields();
  if (fields['pageInfo'] !== undefined) {
    const nodesField = fields['nodes'];
    if (nodesField !== undefined && isObjectType(getNamedType(nodesField.type)))
      return { kind: 'connection', node: getNamedType(nodesField.type) as GraphQLObjectType, nodes: 'nodes' };
    const edges = fields['edges'];
    const edge = edges !== undefined ? getNamedType(edges.type) : undefined;
    const node = edge !== undefined && isObjectType(edge) ? edge.getFields()['node'] : undefined;
    if (node !== undefined && isObjectType(getNamedType(node.type)))
      return { kind: 'connection', node: getNamedType(node.type) as GraphQLObjectType, nodes: 'edges' };
  }
  return { kind: 'one', node: inner };
}

export interface Built {
  params: Obj;
  /** `$a: Type, ...` */
  declarations: string;
  /** `a: $a, ...` */
  args: string;
  variables: Obj;
}

/**
 * Params, variable declarations, field arguments and variables of a field; a lone `input` object is
 * spread. An argument whose name is `taken` (by the enclosing field's) is `<field>_<name>`.
 */
export function argumentsOf(
  field: GraphQLField<unknown, unknown>,
  guess: (path: (string | number)[], m: string) => void,
  at: (string | number)[],
  taken: ReadonlySet<string> = new Set(),
): Built {
  const params: Obj = {};
  const variables: Obj = {};
  const decl: string[] = [];
  const args: string[] = [];
  for (const a of field.args as GraphQLArgument[]) {
    if (a.deprecationReason && !isNonNullType(a.type)) continue;
    const v = taken.has(a.name) ? `${field.name}_${a.name}` : a.name;
    decl.push(`$${v}: ${String(a.type)}`);
    args.push(`${a.name}: $${v}`);
    const inner = getNullableType(a.type);
    if (isInputObjectType(inner) && (a.name === 'input' || a.name === 'data' || field.args.length === 1)) {
      const spread: Obj = {};
      for (const f of Object.values(inner.getFields())) {
        // Deprecated input fields are left out: the vendor is retiring them.
        if (f.deprecationReason) continue;
        const name = safeName(f.name);
        params[name] = {
          ...withType(inputSchema(f.type)),
          ...(isNonNullType(f.type) && f.defaultValue === undefined ? { required: true } : {}),
          ...(shortText(f.description) ? { description: shortText(f.description) } : {}),
        };
        spread[f.name] = `{{params.${name}}}`;
      }
      variables[v] = spread;
      guess([...at, 'params'], `the fields of the ${a.name} argument (${inner.name}) are params; the variables put them back in ${a.name}`);
      continue;
    }
    const name = safeName(v);
    params[name] = {
      ...withType(inputSchema(a.type)),
      ...(isNonNullType(a.type) && a.defaultValue === undefined ? { required: true } : {}),
      ...(shortText(a.description) ? { description: shortText(a.description) } : {}),
    };
    variables[v] = `{{params.${name}}}`;
  }
  return { params, declarations: decl.join(', '), args: args.join(', '), variables };
}

export const query = (op: 'query' | 'mutation', b: Built, field: string, body: string): string =>
  `${op}${b.declarations ? ` (${b.declarations})` : ''} { ${field}${b.args ? `(${b.args})` : ''} ${body} }`;

/** A root field returning one object (`viewer`, `repository(owner, name)`) and a field of that object. */
export interface Reach {
  parent?: GraphQLField<unknown, unknown> | undefined;
  field: GraphQLField<unknown, unknown>;
}

/**
 * The arguments of a field reached through its parent (both fields' params and variables, the
 * field's own arguments renamed where the parent's take the name), the query document around a
 * selection body, and where the field's value sits under `body.data`.
 */
export function reached(
  r: Reach,
  guess: (path: (string | number)[], m: string) => void,
  at: (string | number)[],
): { built: Built; own: Built; doc: (body: string) => string; data: string } {
  const own0 = r.parent === undefined ? undefined : argumentsOf(r.parent, guess, at);
  const own = argumentsOf(r.field, guess, at, new Set(r.parent?.args.map((a) => a.name) ?? []));
  if (r.parent === undefined || own0 === undefined) return { built: own, own, doc: (body) => query('query', own, r.field.name, body), data: r.field.name };
  const parent = r.parent;
  const built: Built = {
    params: { ...own0.params, ...own.params },
    declarations: [own0.declarations, own.declarations].filter((d) => d !== '').join(', '),
    args: own.args,
    variables: { ...own0.variables, ...own.variables },
  };
  const inner = (body: string): string => `{ ${r.field.name}${own.args ? `(${own.args})` : ''} ${body} }`;
  return { built, own, doc: (body) => query('query', { ...built, args: own0.args }, parent.name, inner(body)), data: `${parent.name}.${r.field.name}` };
}

export const norm = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '');

/**
 * The filter argument of a list field that compares an updatedAt-like scalar field of the node
 * with gt (or gte): `filter: IssueFilter` where IssueFilter.updatedAt is a comparator with gt.
 */
export function incrementalFilter(
  field: GraphQLField<unknown, unknown>,
  node: GraphQLObjectType,
): { arg: string; field: string; op: string; and: boolean } | undefined {
  for (const a of field.args) {
    const t = getNamedType(a.type);
    if (!isInputObjectType(t) || a.name === 'input') continue;
    const fields = t.getFields();
    for (const name of ['updatedAt', 'updated_at', 'modifiedAt', 'modified_at', 'lastModified']) {
      const cmp = fields[name];
      const own = node.getFields()[name];
      if (cmp === undefined || own === undefined || !isScalarType(getNamedType(own.type))) continue;
      const ct = getNamedType(cmp.type);
      if (!isInputObjectType(ct)) continue;
      const op = ['gt', 'gte', 'after'].find((o) => ct.getFields()[o] !== undefined);
      if (op !== undefined) return { arg: a.name, field: name, op, and: fields['and'] !== undefined && isListType(getNullableType(fields['and'].type)) };
    }
  }
  return undefined;
}
