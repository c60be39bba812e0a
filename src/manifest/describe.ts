/**
 * What a connector type offers, from its manifest: entities and actions, each action's params
 * (type, required, description), record fields and search fields. `switchboard describe` prints
 * it as tables or JSON; the MCP server's `describe` tool returns it with the JSON Schemas.
 */
import { SYNC_ONLY_ACTIONS, type LoadedManifest } from './compile.ts';
import { paramsSchema, recordSchema, type JsonSchema } from './schemas.ts';
import { OPERATORS_BY_TYPE, type SearchType } from './search-operators.ts';

type Schema = Record<string, unknown>;

/** A JSON Schema's type in one short phrase: `string`, `integer|null`, `"a"|"b"`, `array<string>`, `string (date-time)`. */
export function typeLabel(s: Schema | undefined): string {
  if (s === undefined) return 'any';
  if (Array.isArray(s['enum'])) return (s['enum'] as unknown[]).map((v) => JSON.stringify(v)).join('|');
  if ('const' in s) return JSON.stringify(s['const']);
  const types = Array.isArray(s['type']) ? (s['type'] as string[]) : typeof s['type'] === 'string' ? [s['type']] : [];
  const one = (t: string): string => {
    if (t === 'array') return `array<${typeLabel(s['items'] as Schema | undefined)}>`;
    if (t === 'string' && typeof s['format'] === 'string') return `string (${s['format']})`;
    return t;
  };
  if (types.length === 0) {
    for (const k of ['anyOf', 'oneOf'] as const) if (Array.isArray(s[k])) return (s[k] as Schema[]).map(typeLabel).join('|');
    return s['properties'] !== undefined ? 'object' : 'any';
  }
  return types.map(one).join('|');
}

/** Limits worth showing beside a type: minimum, maximum, lengths, pattern, default. */
function constraints(s: Schema): string {
  const parts: string[] = [];
  for (const [k, label] of [
    ['minimum', 'min'],
    ['maximum', 'max'],
    ['minLength', 'min length'],
    ['maxLength', 'max length'],
    ['maxItems', 'max items'],
    ['pattern', 'pattern'],
    ['default', 'default'],
  ] as const) {
    if (s[k] !== undefined) parts.push(`${label} ${typeof s[k] === 'string' ? String(s[k]) : JSON.stringify(s[k])}`);
  }
  return parts.join(', ');
}

export interface ParamInfo {
  name: string;
  type: string;
  required: boolean;
  description: string;
  constraints: string;
  /**
   * An object param's own fields (of its items for an array of objects), each described the same
   * way, nested as deep as the schema goes (up to 4 levels). Absent without `properties`, and with
   * `schemas` (params_schema then holds them).
   */
  fields?: ParamInfo[];
}

/** Nesting depth past which fields are not listed (the params schema still holds them). */
const MAX_PARAM_DEPTH = 4;

/** The object schema whose properties describe a param's fields: itself, or an array's items. */
function fieldsSchema(s: Schema): Schema | undefined {
  if (s['properties'] !== null && typeof s['properties'] === 'object') return s;
  const items = s['items'] as Schema | undefined;
  if (items !== undefined && items['properties'] !== null && typeof items['properties'] === 'object') return items;
  return undefined;
}

/** One param as describe shows it; `nested` adds its fields (of an object, or of an array's objects). */
function paramInfo(name: string, p: Schema, required: boolean, nested: boolean, depth = 0): ParamInfo {
  const info: ParamInfo = {
    name,
    type: typeLabel(p),
    required,
    description: typeof p['description'] === 'string' ? p['description'] : '',
    constraints: constraints(p),
  };
  const obj = nested && depth < MAX_PARAM_DEPTH ? fieldsSchema(p) : undefined;
  if (obj !== undefined) {
    const req = new Set(Array.isArray(obj['required']) ? (obj['required'] as string[]) : []);
    info.fields = Object.entries(obj['properties'] as Record<string, Schema>).map(([n, f]) => paramInfo(n, f, req.has(n), true, depth + 1));
  }
  return info;
}

export interface ActionInfo {
  name: string;
  /** `hosted` for search: only the hosted service can run it (over synced data). */
  mode: 'library and hosted' | 'hosted only';
  description: string;
  params: ParamInfo[];
  /** With `schemas`: the params JSON Schema (the one generated/<type>/schemas/<entity>.<action>.params.json holds). */
  params_schema?: JsonSchema;
  /** With `schemas`: false for create and update. */
  read_only?: boolean;
}

export interface EntityInfo {
  name: string;
  description: string;
  primary_key: string;
  actions: ActionInfo[];
  record_fields: { name: string; type: string; required: boolean; description: string }[];
  /** With `schemas`, each search field also lists the operators its type accepts. */
  search_fields: { name: string; type: string; operators?: string[] }[];
  synced: boolean;
  /** With `schemas`: the entity's title and its record JSON Schema. */
  title?: string;
  record_schema?: JsonSchema;
}

export interface ConnectorInfo {
  type: string;
  title: string;
  kind: string;
  /** With `schemas`: the manifest's description. */
  description?: string;
  /** The manifest's logo (https URL or data:image URI), when it declares one. */
  logo?: string;
  base_url: string;
  credentials: { variant: string; type: string; fields: { name: string; secret: boolean; description: string }[] }[];
  entities: EntityInfo[];
}

export interface DescribeOptions {
  /** Add JSON Schemas (params, record), titles and search operators: what a machine (an MCP client) needs. */
  schemas?: boolean;
  /** Which actions to include (search included); default all. */
  actions?: (name: string) => boolean;
}

/** Actions that only read: the ones a read-only MCP server exposes. */
export const READ_ACTIONS: ReadonlySet<string> = new Set(['list', 'get', 'search']);

export function describeManifest(m: LoadedManifest, options: DescribeOptions = {}): ConnectorInfo {
  const keep = options.actions ?? ((): boolean => true);
  const entities: EntityInfo[] = [...m.entities.values()].map((e) => {
    const record = e.def.record as Schema;
    const required = new Set(Array.isArray(record['required']) ? (record['required'] as string[]) : []);
    const actions: ActionInfo[] = [...e.actions.values()]
      .filter((a) => !SYNC_ONLY_ACTIONS.has(a.name) && keep(a.name))
      .map((a) => ({
        name: a.name,
        mode: 'library and hosted',
        description: a.def.description ?? '',
        params: Object.entries(a.def.params ?? {}).flatMap(([name, p]) =>
          p === undefined ? [] : [paramInfo(name, p as Schema, p.required === true, options.schemas !== true)],
        ),
        ...(options.schemas ? { params_schema: paramsSchema(a.def), read_only: READ_ACTIONS.has(a.name) } : {}),
      }));
    if (e.def.search !== undefined && keep('search')) {
      actions.push({
        name: 'search',
        mode: 'hosted only',
        description: 'Query the records the hosted service has synced (docs/search.md)',
        params: [
          {
            name: 'query',
            type: 'object',
            required: false,
            description: '{filter?, sort?}: eq, neq, gt, gte, lt, lte, in, like, keyword, fuzzy, not, and, or over the search fields',
            constraints: '',
          },
          { name: 'limit', type: 'integer', required: false, description: 'page size', constraints: 'min 1, max 1000, default 1000' },
          { name: 'cursor', type: 'string', required: false, description: 'meta.cursor of the previous page', constraints: '' },
          { name: 'fields', type: 'array<string>', required: false, description: 'fields to return (dotted paths allowed)', constraints: '' },
        ],
        ...(options.schemas ? { read_only: true } : {}),
      });
    }
    return {
      name: e.name,
      description: e.def.description ?? e.def.title ?? '',
      primary_key: e.def.primary_key,
      actions,
      record_fields: Object.entries((record['properties'] ?? {}) as Record<string, Schema>).map(([name, s]) => ({
        name,
        type: typeLabel(s),
        required: required.has(name),
        description: typeof s['description'] === 'string' ? s['description'] : '',
      })),
      search_fields: Object.entries(e.def.search?.fields ?? {}).map(([name, t]) => ({
        name,
        type: String(t),
        ...(options.schemas ? { operators: [...(OPERATORS_BY_TYPE[t as SearchType] ?? [])] } : {}),
      })),
      synced: e.def.sync !== undefined,
      ...(options.schemas ? { title: e.def.title ?? e.name, record_schema: recordSchema(e.def) } : {}),
    };
  });
  return {
    type: m.type,
    title: m.manifest.title,
    kind: m.manifest.kind ?? '',
    ...(options.schemas ? { description: m.manifest.description ?? '' } : {}),
    ...(m.manifest.logo !== undefined ? { logo: m.manifest.logo } : {}),
    base_url: m.manifest.base_url.default,
    credentials: m.manifest.auth.map((v) => ({
      variant: v.name,
      type: v.type,
      fields: Object.entries(v.fields).flatMap(([name, f]) => (f === undefined ? [] : [{ name, secret: f.secret === true, description: f.description ?? '' }])),
    })),
    entities,
  };
}
