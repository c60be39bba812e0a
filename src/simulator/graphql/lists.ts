/**
 * Declared relations and list fields of the GraphQL simulator (graphql-simulator.ts), read from
 * the sidecar:
 *
 * - `graphql.fields` whose value is an id (or a list of ids) of a resource's record, for a field
 *   of that resource's type: the record (or records, in the ids' order, missing ones left out).
 * - `graphql.lists."Type.field"`: which records a list field answers and how its arguments pick
 *   them: `back` (the records of the field's type whose dotted path holds this record's id, or a
 *   list holding it; a path may go through a declared relation: `item.board_id`), else the
 *   record's own list (embedded objects: a board's columns) or the resource's records (a root
 *   field); `order: newest_first`; `where` (fixed field values); `filters` by argument, entries
 *   of the top-level `filters` shape (`field`, `match`, `any`; a list argument matches any of its
 *   values); `sort` by argument value (`-field` descending).
 * - `graphql.types`: the concrete type of an interface's or union's value, by a field of the
 *   value (`{field, values, default}`).
 */
import {
  getNamedType,
  getNullableType,
  isAbstractType,
  isListType,
  isObjectType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';
import type { GraphqlContext } from './types.ts';
import type { GraphqlSidecar, Sidecar } from '../sidecar.ts';

type Rec = Record<string, unknown>;
/** A filters entry; for a GraphQL list also `values` (an argument value standing for record field values) and `default` (those when the argument is absent or false). */
export type FilterRule = NonNullable<Sidecar['filters']>[string] & { values?: Record<string, Rec>; default?: Rec };

interface Store {
  records(typeName: string): Map<string, Rec> | undefined;
  /** The value of a declared `graphql.fields` template for this record (and the request's context), else undefined. */
  declared(type: GraphQLObjectType, field: string, rec: Rec, ctx?: GraphqlContext): unknown;
  /** An `invalid` error of the field being resolved. */
  invalid(message: string): Error;
}

const instant = (x: unknown): number => (typeof x === 'number' ? x : typeof x === 'string' && /^\d{4}-\d{2}-\d{2}/.test(x) ? Date.parse(x) : NaN);

/** Order two values: numbers as numbers, ISO times as times (against epoch milliseconds too), the rest as text. */
function order(a: unknown, b: unknown): number {
  const [ta, tb] = [instant(a), instant(b)];
  if (!Number.isNaN(ta) && !Number.isNaN(tb)) return ta - tb;
  const [sa, sb] = [String(a ?? ''), String(b ?? '')];
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

const same = (a: unknown, b: unknown): boolean =>
  (a ?? null) === (b ?? null) || (a !== null && a !== undefined && b !== null && b !== undefined && String(a) === String(b));

export function graphqlLists(g: GraphqlSidecar, store: Store) {
  /** A field's value on a record: stored, else its declared template; a declared relation gives the related record. */
  const valueAt = (type: GraphQLObjectType, rec: Rec, path: string[]): unknown => {
    let [t, v]: [GraphQLObjectType | undefined, unknown] = [type, rec];
    for (const name of path) {
      if (v === null || typeof v !== 'object') return undefined;
      const o = v as Rec;
      const f: { type: GraphQLOutputType } | undefined = t?.getFields()[name];
      v = name in o || t === undefined ? o[name] : related(f?.type, store.declared(t, name, o));
      const named: unknown = f === undefined ? undefined : getNamedType(f.type);
      t = isObjectType(named) ? named : undefined;
    }
    return v;
  };

  /** Ids of a resource's records as the records (a list of ids as a list), for a field of that type; other values as they are. */
  const related = (fieldType: GraphQLOutputType | undefined, value: unknown): unknown => {
    const named = fieldType === undefined ? undefined : getNamedType(fieldType);
    const table = named === undefined ? undefined : store.records(named.name);
    if (table === undefined || value === null || value === undefined) return value ?? null;
    if (isListType(getNullableType(fieldType)))
      return Array.isArray(value) ? value.map((id) => (typeof id === 'object' ? id : table.get(String(id)))).filter((r) => r !== undefined) : value;
    return typeof value === 'object' ? value : (table.get(String(value)) ?? null);
  };

  /** Whether a record holds every field value of `conditions` (a list: any of its values). */
  const holds = (conditions: Rec, rec: Rec, type: GraphQLObjectType): boolean =>
    Object.entries(conditions).every(([field, want]) => (Array.isArray(want) ? want : [want]).some((w) => same(valueAt(type, rec, field.split('.')), w)));

  const passes = (rule: FilterRule, arg: string, value: unknown, rec: Rec, type: GraphQLObjectType): boolean => {
    const actual = valueAt(type, rec, (rule.field ?? arg).split('.'));
    const match = rule.match ?? 'equals';
    if (match === 'equals') return (Array.isArray(value) ? value : [value]).some((v) => same(actual, v));
    if (match === 'equals_ignore_case')
      return (Array.isArray(value) ? value : [value]).some((v) => String(actual ?? '').toLowerCase() === String(v).toLowerCase());
    if (match === 'contains')
      return String(actual ?? '')
        .toLowerCase()
        .includes(String(value).toLowerCase());
    const c = order(actual, value);
    return match === 'since' ? c >= 0 : match === 'before' ? c <= 0 : match === 'after' ? c > 0 : c < 0;
  };

  /** The records a declared list field picks, before the generic `ids` and `limit`/`page` arguments. */
  const select = (key: string, type: GraphQLObjectType, rows: Rec[], args: Rec): Rec[] => {
    const d = g.lists?.[key];
    if (d === undefined) return rows;
    let out = d.order === 'newest_first' ? [...rows].reverse() : rows;
    if (d.where !== undefined) out = out.filter((r) => holds(d.where as Rec, r, type));
    // A lookup (an argument naming records) finds them whatever the filters' defaults would leave out.
    const lookup = (d.lookup ?? []).some((a) => args[a] !== undefined && args[a] !== null);
    for (const [arg, rule] of Object.entries(d.filters ?? {})) {
      const value = args[arg];
      const conditions = value === undefined || value === null || value === false ? (lookup ? undefined : rule.default) : rule.values?.[String(value)];
      if (conditions !== undefined) out = out.filter((r) => holds(conditions, r, type));
      if (value === undefined || value === null || rule.values !== undefined || rule.any?.includes(String(value)) === true) continue;
      if (
        ['since', 'before', 'after', 'until'].includes(rule.match ?? 'equals') &&
        typeof value === 'string' &&
        Number.isNaN(Date.parse(value)) &&
        Number.isNaN(Number(value))
      ) {
        throw store.invalid(`${arg} must be an ISO 8601 date`);
      }
      out = out.filter((r) => passes(rule, arg, value, r, type));
    }
    for (const [arg, byValue] of Object.entries(d.sort ?? {})) {
      const key = byValue[String(args[arg])];
      if (key === undefined) continue;
      const [dir, field] = key.startsWith('-') ? [-1, key.slice(1)] : [1, key];
      out = [...out].sort((a, b) => dir * order(valueAt(type, a, field.split('.')), valueAt(type, b, field.split('.'))));
    }
    return out;
  };

  return {
    related,
    select,
    declared: store.declared,
    /** The rows of a declared non-root list field, else undefined: `back` references, else the record's own list. */
    rows(key: string, type: GraphQLObjectType, source: Rec, fieldName: string): Rec[] | undefined {
      const d = g.lists?.[key];
      if (d === undefined) return undefined;
      if (d.back === undefined) return Array.isArray(source[fieldName]) ? (source[fieldName] as Rec[]) : [];
      const path = d.back.split('.');
      const id = source['id'];
      return [...(store.records(type.name)?.values() ?? [])].filter((r) => {
        const v = valueAt(type, r, path);
        return Array.isArray(v)
          ? v.some((x) => same(x, id))
          : v !== null && typeof v === 'object'
            ? (v as Rec)['id'] === id
            : same(v, id) && v !== undefined && v !== null;
      });
    },
    /** The concrete type of a value of an abstract type declared in graphql.types, else undefined. */
    typeOf(abstract: string, value: unknown): string | undefined {
      const t = g.types?.[abstract];
      if (t === undefined || value === null || typeof value !== 'object') return undefined;
      return t.values[String((value as Rec)[t.field])] ?? t.default;
    },
  };
}

/** Refuse declarations naming what the schema lacks (when the simulator starts): each problem named. */
export function checkDeclared(schema: GraphQLSchema, g: GraphqlSidecar): void {
  const problems: string[] = [];
  const field = (where: string, key: string, list: boolean): void => {
    const [typeName, name] = key.split('.') as [string, string];
    const type = schema.getType(typeName);
    const f = isObjectType(type) ? type.getFields()[name] : undefined;
    if (f === undefined) problems.push(`graphql.${where}.${key}: the schema has no field ${key}`);
    else if (list && !isListType(getNullableType(f.type)) && getNamedType(f.type).name.endsWith('Connection') === false)
      problems.push(`graphql.${where}.${key}: ${key} is not a list`);
  };
  for (const key of Object.keys(g.fields ?? {})) field('fields', key, false);
  for (const key of Object.keys(g.lists ?? {})) field('lists', key, true);
  for (const [name, t] of Object.entries(g.types ?? {})) {
    const type = schema.getType(name);
    if (!isAbstractType(type)) problems.push(`graphql.types.${name}: the schema has no interface or union ${name}`);
    else
      for (const concrete of [...Object.values(t.values), ...(t.default === undefined ? [] : [t.default])])
        if (!schema.getPossibleTypes(type).some((p) => p.name === concrete)) problems.push(`graphql.types.${name}: ${concrete} is not a type of ${name}`);
  }
  if (problems.length > 0) throw new Error(`invalid simulator sidecar for this schema: ${problems.join('; ')}`);
}
