/**
 * `switchboard describe <type> [entity] [action] [--json]`: what a connector offers, from its
 * manifest: entities and actions, each action's params (type, required, description), record
 * fields and search fields. Tables for people, `--json` for machines.
 */
import type { Command } from 'commander';
import { SwitchboardError } from '../errors/index.ts';
import { failWith } from './cli-support.ts';

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
  for (const [k, label] of [['minimum', 'min'], ['maximum', 'max'], ['minLength', 'min length'], ['maxLength', 'max length'], ['maxItems', 'max items'], ['pattern', 'pattern'], ['default', 'default']] as const) {
    if (s[k] !== undefined) parts.push(`${label} ${typeof s[k] === 'string' ? String(s[k]) : JSON.stringify(s[k])}`);
  }
  return parts.join(', ');
}

function table(headers: string[], rows: string[][]): string {
  if (rows.length === 0) return '  (none)\n';
  const widths = headers.map((h, i) => Math.min(48, Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length))));
  const line = (cells: string[]): string => `  ${cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd()}\n`;
  return line(headers) + rows.map(line).join('');
}

interface ParamInfo {
  name: string;
  type: string;
  required: boolean;
  description: string;
  constraints: string;
}

interface ActionInfo {
  name: string;
  /** `hosted` for search: only the hosted service can run it (over synced data). */
  mode: 'library and hosted' | 'hosted only';
  description: string;
  params: ParamInfo[];
}

interface EntityInfo {
  name: string;
  description: string;
  primary_key: string;
  actions: ActionInfo[];
  record_fields: { name: string; type: string; required: boolean; description: string }[];
  search_fields: { name: string; type: string }[];
  synced: boolean;
}

async function describeConnector(type: string): Promise<{ type: string; title: string; kind: string; base_url: string; credentials: { variant: string; type: string; fields: { name: string; secret: boolean; description: string }[] }[]; entities: EntityInfo[] }> {
  const { getConnector, SYNC_ONLY_ACTIONS } = await import('../manifest/index.ts');
  const m = getConnector(type);
  const entities: EntityInfo[] = [...m.entities.values()].map((e) => {
    const record = e.def.record as Schema;
    const required = new Set(Array.isArray(record['required']) ? (record['required'] as string[]) : []);
    const actions: ActionInfo[] = [...e.actions.values()].filter((a) => !SYNC_ONLY_ACTIONS.has(a.name)).map((a) => ({
      name: a.name,
      mode: 'library and hosted',
      description: a.def.description ?? '',
      params: Object.entries(a.def.params ?? {}).flatMap(([name, p]) =>
        p === undefined ? [] : [{ name, type: typeLabel(p as Schema), required: p.required === true, description: p.description ?? '', constraints: constraints(p as Schema) }],
      ),
    }));
    if (e.def.search !== undefined) {
      actions.push({
        name: 'search',
        mode: 'hosted only',
        description: 'Query the records the hosted service has synced (docs/search.md)',
        params: [
          { name: 'query', type: 'object', required: false, description: '{filter?, sort?}: eq, neq, gt, gte, lt, lte, in, like, keyword, fuzzy, not, and, or over the search fields', constraints: '' },
          { name: 'limit', type: 'integer', required: false, description: 'page size', constraints: 'min 1, max 1000, default 1000' },
          { name: 'cursor', type: 'string', required: false, description: 'meta.cursor of the previous page', constraints: '' },
          { name: 'fields', type: 'array<string>', required: false, description: 'fields to return (dotted paths allowed)', constraints: '' },
        ],
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
      search_fields: Object.entries(e.def.search?.fields ?? {}).map(([name, t]) => ({ name, type: String(t) })),
      synced: e.def.sync !== undefined,
    };
  });
  return {
    type: m.type,
    title: m.manifest.title,
    kind: m.manifest.kind ?? '',
    base_url: m.manifest.base_url.default,
    credentials: m.manifest.auth.map((v) => ({
      variant: v.name,
      type: v.type,
      fields: Object.entries(v.fields).flatMap(([name, f]) => (f === undefined ? [] : [{ name, secret: f.secret === true, description: f.description ?? '' }])),
    })),
    entities,
  };
}

function pick<T extends { name: string }>(items: T[], name: string, what: 'entity' | 'action', where: string): T {
  const found = items.find((i) => i.name === name);
  if (found === undefined) {
    throw new SwitchboardError(what === 'entity' ? 'unknown_entity' : 'unknown_action', `${where} has no ${what} "${name}"; ${what === 'entity' ? 'entities' : 'actions'}: ${items.map((i) => i.name).join(', ')}`, {
      details: { valid: items.map((i) => i.name) },
    });
  }
  return found;
}

function actionText(type: string, entity: string, a: ActionInfo): string {
  const usage = a.mode === 'hosted only' ? `POST /api/v1/integrations/connectors/{id}/execute {"entity":"${entity}","action":"search","params":{...}}` : `switchboard exec ${type} ${entity} ${a.name} --params '{...}'`;
  return (
    `${type} ${entity} ${a.name}${a.mode === 'hosted only' ? ' (hosted only)' : ''}${a.description ? ` — ${a.description}` : ''}\n  ${usage}\n\nParams:\n` +
    table(
      ['PARAM', 'TYPE', 'REQUIRED', 'DESCRIPTION'],
      a.params.map((p) => [p.name, p.type, p.required ? 'yes' : '', [p.description, p.constraints && `(${p.constraints})`].filter(Boolean).join(' ')]),
    )
  );
}

export function registerDescribeCommand(program: Command): void {
  program
    .command('describe')
    .description("Show a connector's entities and actions; an entity's record and search fields; an action's params (type, required, description)")
    .argument('<type>', 'connector type, e.g. granola')
    .argument('[entity]', 'entity, e.g. notes')
    .argument('[action]', 'list, get, create, update or search')
    .option('--json', 'print JSON instead of tables')
    .action(async (type: string, entityName: string | undefined, actionName: string | undefined, opts: { json?: boolean }) => {
      try {
        const c = await describeConnector(type);
        const out = (value: unknown, text: string): void => void process.stdout.write(opts.json ? `${JSON.stringify(value, null, 2)}\n` : text);
        if (entityName === undefined) {
          out(
            c,
            `${c.title} (${c.type}${c.kind ? `, ${c.kind}` : ''}) — ${c.base_url}\n\nCredentials (one variant):\n` +
              table(['VARIANT', 'TYPE', 'FIELDS'], c.credentials.map((v) => [v.variant, v.type, v.fields.map((f) => `${f.name}${f.secret ? ' (secret)' : ''}`).join(', ')])) +
              `\nEntities:\n` +
              table(['ENTITY', 'ACTIONS', 'SYNCED'], c.entities.map((e) => [e.name, e.actions.map((a) => (a.mode === 'hosted only' ? `${a.name} (hosted only)` : a.name)).join(', '), e.synced ? 'yes' : ''])) +
              `\nMore: switchboard describe ${c.type} <entity> [action]\n`,
          );
          return;
        }
        const entity = pick(c.entities, entityName, 'entity', c.type);
        if (actionName === undefined) {
          out(
            entity,
            `${c.type} ${entity.name}${entity.description ? ` — ${entity.description}` : ''} (primary key ${entity.primary_key}${entity.synced ? ', synced' : ''})\n\nActions:\n` +
              table(['ACTION', 'MODE', 'PARAMS'], entity.actions.map((a) => [a.name, a.mode, a.params.map((p) => (p.required ? `${p.name}*` : p.name)).join(', ')])) +
              `  (* required)\n\nRecord fields:\n` +
              table(['FIELD', 'TYPE', 'REQUIRED', 'DESCRIPTION'], entity.record_fields.map((f) => [f.name, f.type, f.required ? 'yes' : '', f.description])) +
              `\nSearch fields${entity.search_fields.length > 0 ? ' (hosted search over synced records)' : ''}:\n` +
              table(['FIELD', 'TYPE'], entity.search_fields.map((f) => [f.name, f.type])),
          );
          return;
        }
        const action = pick(entity.actions, actionName, 'action', `${c.type} ${entity.name}`);
        out({ type: c.type, entity: entity.name, ...action }, actionText(c.type, entity.name, action));
      } catch (e) {
        failWith(e);
      }
    });
}
