/** An action's `pagination`: its params are declared, its templates compile, URL-following pagination is for GET. */
import type { Action } from '../../../generated/manifest.ts';
import type { CompiledAction } from '../compile.ts';
import type { Checker, Path, Scope } from './checker.ts';

export function checkPagination(check: Checker, at: Path, action: Action, params: Record<string, unknown>, resScope: Scope): CompiledAction['pagination'] {
  const pg = action.pagination;
  if (pg === undefined) return undefined;
  const pat = [...at, 'pagination'];
  if ('param' in pg && params[pg.param] === undefined) check.add([...pat, 'param'], `pagination param "${pg.param}" is not a declared param of this action`);
  if ((pg.type === 'offset' || pg.type === 'page') && pg.limit_param !== undefined && params[pg.limit_param] === undefined)
    check.add([...pat, 'limit_param'], `"${pg.limit_param}" is not a declared param of this action`);
  const next =
    pg.type === 'cursor' || pg.type === 'graphql_cursor' || pg.type === 'scroll' || pg.type === 'next_url'
      ? check.template([...pat, 'next'], pg.next, resScope)
      : undefined;
  if ((pg.type === 'next_url' || pg.type === 'link_header') && action.request.method !== 'GET')
    check.add(
      [...pat, 'type'],
      `${pg.type} follows the URL of the next page with GET; this request is a ${action.request.method} (use cursor with a body param)`,
    );
  const hasMore = 'has_more' in pg && pg.has_more !== undefined ? check.template([...pat, 'has_more'], pg.has_more, resScope) : undefined;
  return { def: pg, ...(next ? { next } : {}), ...(hasMore ? { hasMore } : {}) };
}
