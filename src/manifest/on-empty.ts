/**
 * response.on_empty of an action that answers one record (create, update): a 2xx answer without
 * a body (Jira's edit answers 204 No Content) is read back with another action of the entity,
 * usually get, its params rendered from the call. Checked at load time here: the action exists,
 * answers one record and is not this one; every param named is one of its params; its required
 * params are all given; it has no on_empty of its own (no chain of read-backs). Or, for a write
 * nothing can read back (a mail accepted for sending: 202 and its id in a header), `record`: the
 * record rendered from the call itself (params, headers, status).
 */
import type { Template } from '../templates/index.ts';
import { LIST_ACTIONS, type ActionName, type CompiledAction } from './compile.ts';

type Path = (string | number)[];

/** What on_empty needs of the loader's checker (checks/checker.ts): report a problem, compile a template in a scope. */
export interface OnEmptyChecker<S> {
  add(path: Path, message: string): void;
  template(path: Path, source: string, scope: S): Template | undefined;
}

export interface OnEmptyDef {
  action?: string;
  record?: string;
  params?: Record<string, string | undefined>;
}

export function compileOnEmpty<S>(
  check: OnEmptyChecker<S>,
  at: Path,
  name: ActionName,
  def: OnEmptyDef | undefined,
  entityActions: Record<string, { params?: Record<string, unknown>; response?: { on_empty?: unknown } } | undefined>,
  scope: S,
): CompiledAction['onEmpty'] {
  if (def === undefined) return undefined;
  const here = [...at, 'response', 'on_empty'];
  if (LIST_ACTIONS.has(name)) {
    check.add(here, `on_empty is for actions that answer one record; ${name} answers a list`);
    return undefined;
  }
  if ((def.action === undefined) === (def.record === undefined)) {
    check.add(here, 'on_empty takes exactly one of action (a read-back) and record (the record rendered from the call)');
    return undefined;
  }
  if (def.record !== undefined) {
    if (def.params !== undefined) check.add([...here, 'params'], 'params are for a read-back action; a record is rendered from the call');
    const record = check.template([...here, 'record'], def.record, scope);
    return record === undefined ? undefined : { record };
  }
  if (def.action === undefined) return undefined;
  const target = entityActions[def.action];
  if (target === undefined || def.action === name || LIST_ACTIONS.has(def.action as ActionName) || target.response?.on_empty !== undefined) {
    const valid = Object.keys(entityActions).filter((n) => n !== name && !LIST_ACTIONS.has(n as ActionName));
    check.add(
      [...here, 'action'],
      `"${def.action}" is not another action of this entity that answers one record without an on_empty of its own (valid: ${valid.join(', ') || 'none'})`,
    );
    return undefined;
  }
  const declared = (target.params ?? {}) as Record<string, { required?: boolean } | undefined>;
  const params: [string, Template][] = [];
  for (const [k, src] of Object.entries(def.params ?? {})) {
    if (declared[k] === undefined)
      check.add([...here, 'params', k], `"${k}" is not a param of ${def.action} (params: ${Object.keys(declared).join(', ') || 'none'})`);
    const t = src === undefined ? undefined : check.template([...here, 'params', k], src, scope);
    if (t !== undefined) params.push([k, t]);
  }
  for (const [k, p] of Object.entries(declared)) {
    if (p?.required === true && def.params?.[k] === undefined) check.add([...here, 'params'], `${def.action} needs its required param "${k}"`);
  }
  return { action: def.action as ActionName, params };
}
