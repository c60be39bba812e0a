/**
 * An entity's `actions`: params schemas (strict, named param by param), requires_any, the
 * request, the response (records or record, not_found_when, on_empty, map, list meta) and
 * pagination, compiled into the action the engine runs.
 */
import type { Action } from '../../../generated/manifest.ts';
import type { Template } from '../../templates/index.ts';
import { LIST_ACTIONS, type ActionName, type CompiledAction } from '../compile.ts';
import { compileOnEmpty } from '../on-empty.ts';
import { paramsSchema } from '../schemas.ts';
import { REQUEST_ROOTS, RESPONSE_ROOTS, type CheckContext, type Checker, type Path, type Scope } from './checker.ts';
import { ajv, strictCompile, unknownKeywords } from './json-schema.ts';
import { checkPagination } from './pagination.ts';
import { checkActionRateLimit } from './rate-limit.ts';
import { compileRequest } from './request.ts';

type EntityActions = Record<string, Action | undefined>;

/** One action; undefined when its params schema or its request path does not compile. */
export function checkAction(
  ctx: CheckContext,
  entityName: string,
  entityActions: EntityActions,
  name: ActionName,
  action: Action,
  listMeta: string[],
): CompiledAction | undefined {
  const { check, config } = ctx;
  const at = ['entities', entityName, 'actions', name];
  const params = (action.params ?? {}) as Record<string, { required?: boolean }>;
  const reqScope: Scope = { roots: REQUEST_ROOTS, params, credentials: ctx.credentialFields, config };
  const resScope: Scope = { roots: RESPONSE_ROOTS, params, config };

  const validateParams = paramsValidator(check, at, action);
  if (validateParams === undefined) return undefined;
  const requiresAny = (action.requires_any ?? []).map((group) => [...group]);
  for (const [i, group] of requiresAny.entries()) {
    for (const p of group)
      if (params[p] === undefined)
        check.add([...at, 'requires_any', String(i)], `"${p}" is not a param of this action (params: ${Object.keys(params).join(', ') || 'none'})`);
  }
  const request = compileRequest(check, [...at, 'request'], action.request, reqScope);

  const res = action.response;
  const records = res.records !== undefined ? check.template([...at, 'response', 'records'], res.records, resScope) : undefined;
  const record = res.record !== undefined ? check.template([...at, 'response', 'record'], res.record, resScope) : undefined;
  const notFoundWhen = res.not_found_when !== undefined ? check.template([...at, 'response', 'not_found_when'], res.not_found_when, resScope) : undefined;
  const onEmpty = compileOnEmpty(check, at, name, res.on_empty, entityActions, resScope);
  if (res.empty_on !== undefined && !LIST_ACTIONS.has(name) && name !== 'get')
    check.add([...at, 'response', 'empty_on'], 'empty_on is for get and list actions (a write answered without a body reads on_empty)');
  const map: [string, Template][] = [];
  for (const [k, src] of Object.entries(res.map ?? {})) {
    const t = src === undefined ? undefined : check.template([...at, 'response', 'map', k], src, { roots: new Set(['record', 'params']), params, config });
    if (t) map.push([k, t]);
  }
  const meta = checkShape(check, at, name, action, listMeta, resScope);
  const pagination = checkPagination(check, at, action, params, resScope);
  const pg = action.pagination;
  const nextReq =
    pg !== undefined && 'request' in pg && pg.request !== undefined ? compileRequest(check, [...at, 'pagination', 'request'], pg.request, reqScope) : undefined;

  const rateLimit = checkActionRateLimit(ctx, at, action);

  if (!request) return undefined;
  return {
    entity: entityName,
    name,
    def: action,
    validateParams,
    requiresAny,
    request,
    ...(records ? { records } : {}),
    ...(record ? { record } : {}),
    meta,
    map,
    ...(notFoundWhen ? { notFoundWhen } : {}),
    ...(res.empty_on !== undefined ? { emptyOn: [...res.empty_on] } : {}),
    ...(onEmpty ? { onEmpty } : {}),
    ...(pagination ? { pagination } : {}),
    ...(nextReq && pg !== undefined && 'param' in pg ? { nextRequest: { param: pg.param, request: nextReq } } : {}),
    retrySafe: action.retry_safe ?? (LIST_ACTIONS.has(name) || name === 'get'),
    ...(rateLimit !== undefined ? { rateLimit } : {}),
  };
}

/** The params validator (strict when it can be); undefined, with the problem reported, when the schema is invalid. */
function paramsValidator(check: Checker, at: Path, action: Action): CompiledAction['validateParams'] | undefined {
  try {
    const schema = paramsSchema(action);
    let validateParams = strictCompile(schema);
    if (validateParams === undefined) {
      validateParams = ajv.compile(schema);
      // Param by param, to name the one at fault.
      for (const [param, schema] of Object.entries(action.params ?? {})) {
        const bad = unknownKeywords(schema === undefined ? {} : paramsSchema({ ...action, params: { [param]: schema } }));
        if (bad !== undefined) check.add([...at, 'params', param], bad);
      }
    }
    return validateParams;
  } catch (e) {
    check.add([...at, 'params'], `invalid param schema: ${(e as Error).message}`);
    return undefined;
  }
}

/** A list action answers records with the declared list_meta; the others answer one record and do not paginate. */
function checkShape(check: Checker, at: Path, name: ActionName, action: Action, listMeta: string[], resScope: Scope): [string, Template][] {
  const res = action.response;
  const meta: [string, Template][] = [];
  if (LIST_ACTIONS.has(name)) {
    if (res.records === undefined) check.add([...at, 'response'], `a ${name} action needs response.records`);
    const given = Object.keys(res.meta ?? {});
    for (const k of listMeta) if (!given.includes(k)) check.add([...at, 'response', 'meta'], `missing meta field "${k}" declared in list_meta`);
    for (const k of given) {
      if (!listMeta.includes(k))
        check.add([...at, 'response', 'meta', k], `meta field "${k}" is not declared in list_meta (declared: ${listMeta.join(', ') || 'none'})`);
      const src = res.meta?.[k];
      const t = src === undefined ? undefined : check.template([...at, 'response', 'meta', k], src, resScope);
      if (t) meta.push([k, t]);
    }
  } else {
    if (res.record === undefined) check.add([...at, 'response'], `a ${name} action needs response.record`);
    if (res.records !== undefined) check.add([...at, 'response', 'records'], `records is for list actions; use record`);
    if (action.pagination !== undefined) check.add([...at, 'pagination'], 'pagination is for list actions');
  }
  return meta;
}
