/** Reading a GraphQL schema's types (connections, lists, dates) and comparing values. */
import { getNamedType, getNullableType, isListType, isObjectType, type GraphQLObjectType, type GraphQLOutputType } from 'graphql';
import type { Rec } from './types.ts';

export const COMPARATORS = new Set([
  'eq',
  'neq',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'nin',
  'null',
  'contains',
  'containsIgnoreCase',
  'startsWith',
  'endsWith',
  'eqIgnoreCase',
]);

export function uuid(rand: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(rand() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** A new record id: the sidecar's id_template filled ({{type}}, {{number}}: 13 digits from the PRNG), else a UUID. */
export function mintId(template: string | undefined, type: string, rand: () => number): string {
  if (template === undefined) return uuid(rand);
  const number = String(1 + Math.floor(rand() * 9)) + Array.from({ length: 12 }, () => Math.floor(rand() * 10)).join('');
  return template.replaceAll('{{type}}', type).replaceAll('{{number}}', number);
}

/** A field's value from a template (graphql.fields): "{{name}}" alone is the source's (or a variable's) value as it is; inside text, its text. */
export function fill(template: unknown, scope: (name: string) => unknown): unknown {
  if (typeof template === 'string') {
    const whole = /^\{\{(\w+)\}\}$/.exec(template);
    if (whole !== null) return scope(whole[1] as string) ?? null;
    return template.replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(scope(k) ?? ''));
  }
  if (Array.isArray(template)) return template.map((t) => fill(t, scope));
  if (template !== null && typeof template === 'object') return Object.fromEntries(Object.entries(template as Rec).map(([k, v]) => [k, fill(v, scope)]));
  return template;
}

/** The node type of a Relay connection type (nodes or edges.node), else undefined. */
export function connectionNode(t: GraphQLOutputType): GraphQLObjectType | undefined {
  const inner = getNullableType(t);
  if (!isObjectType(inner)) return undefined;
  const fields = inner.getFields();
  if (fields['pageInfo'] === undefined) return undefined;
  const nodes = fields['nodes'];
  if (nodes !== undefined && isObjectType(getNamedType(nodes.type))) return getNamedType(nodes.type) as GraphQLObjectType;
  const edge = fields['edges'] !== undefined ? getNamedType(fields['edges'].type) : undefined;
  const node = edge !== undefined && isObjectType(edge) ? edge.getFields()['node'] : undefined;
  return node !== undefined && isObjectType(getNamedType(node.type)) ? (getNamedType(node.type) as GraphQLObjectType) : undefined;
}

/** A list of object type T (`[Board]`), else undefined. */
export function listNode(t: GraphQLOutputType): GraphQLObjectType | undefined {
  const inner = getNullableType(t);
  if (!isListType(inner)) return undefined;
  const n = getNamedType(inner);
  return isObjectType(n) ? n : undefined;
}

export const isDateScalar = (name: string): boolean => /date|time/i.test(name) && !/duration/i.test(name);
export const BASE_TIME = Date.UTC(2026, 0, 1);
export const DAY = 86_400_000;

/** Compare two values: dates by time, numbers as numbers, the rest as text. */
export function compare(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = String(a);
  const sb = String(b);
  const da = Date.parse(sa);
  const db = Date.parse(sb);
  if (/^\d{4}-\d{2}-\d{2}/.test(sa) && /^\d{4}-\d{2}-\d{2}/.test(sb) && !Number.isNaN(da) && !Number.isNaN(db)) return da - db;
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}
