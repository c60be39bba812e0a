/**
 * `switchboard describe <type> [entity] [action] [--json]`: what a connector offers, from its
 * manifest: entities and actions, each action's params (type, required, description), record
 * fields and search fields. Tables for people, `--json` for machines.
 */
import type { Command } from 'commander';
import { SwitchboardError } from '../errors/index.ts';
import { failWith, CONNECTORS_OPTION, collect } from './cli-support.ts';

import type { ActionInfo, ParamInfo } from '../manifest/describe.ts';

/** Rows of the params table: each param, then its fields as `comment.body` (`items[].id` for an array's objects). */
function paramRows(params: ParamInfo[], prefix = ''): string[][] {
  return params.flatMap((p) => {
    const name = `${prefix}${p.name}`;
    const row = [name, p.type, p.required ? 'yes' : '', [p.description, p.constraints && `(${p.constraints})`].filter(Boolean).join(' ')];
    return [row, ...(p.fields === undefined ? [] : paramRows(p.fields, `${name}${p.type.startsWith('array') ? '[]' : ''}.`))];
  });
}

function table(headers: string[], rows: string[][]): string {
  if (rows.length === 0) return '  (none)\n';
  const widths = headers.map((h, i) => Math.min(48, Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length))));
  const line = (cells: string[]): string =>
    `  ${cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd()}\n`;
  return line(headers) + rows.map(line).join('');
}

function pick<T extends { name: string }>(items: T[], name: string, what: 'entity' | 'action', where: string): T {
  const found = items.find((i) => i.name === name);
  if (found === undefined) {
    throw new SwitchboardError(
      what === 'entity' ? 'unknown_entity' : 'unknown_action',
      `${where} has no ${what} "${name}"; ${what === 'entity' ? 'entities' : 'actions'}: ${items.map((i) => i.name).join(', ')}`,
      {
        details: { valid: items.map((i) => i.name) },
      },
    );
  }
  return found;
}

function actionText(type: string, entity: string, a: ActionInfo): string {
  const usage =
    a.mode === 'hosted only'
      ? `POST /api/v1/integrations/connectors/{id}/execute {"entity":"${entity}","action":"search","params":{...}}`
      : `switchboard exec ${type} ${entity} ${a.name} --params '{...}'`;
  return (
    `${type} ${entity} ${a.name}${a.mode === 'hosted only' ? ' (hosted only)' : ''}${a.description ? ` — ${a.description}` : ''}\n  ${usage}\n\nParams:\n` +
    table(['PARAM', 'TYPE', 'REQUIRED', 'DESCRIPTION'], paramRows(a.params)) +
    (a.params.some((p) => p.fields !== undefined) ? '  (a.b: field b of object param a, required when a is given; a[].b: of each element of array a)\n' : '')
  );
}

export function registerDescribeCommand(program: Command): void {
  program
    .command('describe')
    .description("Show a connector's entities and actions; an entity's record and search fields; an action's params (type, required, description)")
    .option(...CONNECTORS_OPTION, collect)
    .argument('<type>', 'connector type, e.g. granola')
    .argument('[entity]', 'entity, e.g. notes')
    .argument('[action]', 'list, get, create, update or search')
    .option('--json', 'print JSON instead of tables')
    .action(async (type: string, entityName: string | undefined, actionName: string | undefined, opts: { json?: boolean }) => {
      try {
        const { getConnector } = await import('../manifest/index.ts');
        const { describeManifest } = await import('../manifest/describe.ts');
        const c = describeManifest(getConnector(type));
        const out = (value: unknown, text: string): void => void process.stdout.write(opts.json ? `${JSON.stringify(value, null, 2)}\n` : text);
        if (entityName === undefined) {
          out(
            c,
            `${c.title} (${c.type}${c.kind ? `, ${c.kind}` : ''}) — ${c.base_url}\n` +
              (c.logo !== undefined
                ? `Logo: ${c.logo.startsWith('data:') ? `${c.logo.slice(0, c.logo.search(/[;,]/))} (inline, ${String(c.logo.length)} characters; --json prints it)` : c.logo}\n`
                : '') +
              `\nCredentials (${c.credentials.length === 1 ? 'one variant' : `${String(c.credentials.length)} variants; give the fields of one`}):\n` +
              table(
                ['VARIANT', 'TYPE', 'FIELDS'],
                c.credentials.map((v) => [v.variant, v.type, v.fields.map((f) => `${f.name}${f.secret ? ' (secret)' : ''}`).join(', ')]),
              ) +
              `\nEntities:\n` +
              table(
                ['ENTITY', 'ACTIONS', 'SYNCED'],
                c.entities.map((e) => [
                  e.name,
                  e.actions.map((a) => (a.mode === 'hosted only' ? `${a.name} (hosted only)` : a.name)).join(', '),
                  e.synced ? 'yes' : '',
                ]),
              ) +
              `\nMore: switchboard describe ${c.type} <entity> [action]\n`,
          );
          return;
        }
        const entity = pick(c.entities, entityName, 'entity', c.type);
        if (actionName === undefined) {
          out(
            entity,
            `${c.type} ${entity.name}${entity.description ? ` — ${entity.description}` : ''} (primary key ${entity.primary_key}${entity.synced ? ', synced' : ''})\n\nActions:\n` +
              table(
                ['ACTION', 'MODE', 'PARAMS'],
                entity.actions.map((a) => [a.name, a.mode, a.params.map((p) => (p.required ? `${p.name}*` : p.name)).join(', ')]),
              ) +
              `  (* required)\n\nRecord fields:\n` +
              table(
                ['FIELD', 'TYPE', 'REQUIRED', 'DESCRIPTION'],
                entity.record_fields.map((f) => [f.name, f.type, f.required ? 'yes' : '', f.description]),
              ) +
              `\nSearch fields${entity.search_fields.length > 0 ? ' (hosted search over synced records)' : ''}:\n` +
              table(
                ['FIELD', 'TYPE'],
                entity.search_fields.map((f) => [f.name, f.type]),
              ),
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
