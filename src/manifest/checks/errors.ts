/**
 * The `errors` section: the message template, the rules in the body (in_body) and on the status
 * (on_status), each with exactly one of when or match, and the list of error entries.
 */
import { truthy } from '../../templates/index.ts';
import type { LoadedManifest } from '../compile.ts';
import { compileErrorMatch } from '../error-match.ts';
import { ERROR_ROOTS, MATCH_ROOTS, type CheckContext, type Scope } from './checker.ts';

export type CompiledErrors = Pick<LoadedManifest, 'errorMessage' | 'bodyErrors' | 'statusErrors' | 'errorList'>;

export function checkErrors(ctx: CheckContext): CompiledErrors {
  const { m, check, config } = ctx;
  const errorMessage = m.errors?.message !== undefined ? check.template(['errors', 'message'], m.errors.message, { roots: ERROR_ROOTS, config }) : undefined;
  const bodyErrors = errorRules(ctx, 'in_body');
  const statusErrors = errorRules(ctx, 'on_status');
  const errorList = checkErrorList(ctx);
  return { ...(errorMessage ? { errorMessage } : {}), bodyErrors, statusErrors, ...(errorList ? { errorList } : {}) };
}

function errorRules({ m, check, config }: CheckContext, key: 'in_body' | 'on_status'): LoadedManifest['bodyErrors'] {
  const out: LoadedManifest['bodyErrors'] = [];
  (m.errors?.[key] ?? []).forEach((rule, i) => {
    const at = ['errors', key, i];
    // A match rule's templates may also read `matched`, the error entry that matched.
    const scope: Scope = { roots: rule.match !== undefined ? MATCH_ROOTS : ERROR_ROOTS, config };
    if ((rule.match === undefined) === (rule.when === undefined))
      check.add(at, 'an error rule needs exactly one of when (a template) or match (a path and values)');
    let test: LoadedManifest['bodyErrors'][number]['test'] | undefined;
    if (rule.match !== undefined) test = compileErrorMatch(rule.match.path, rule.match.in);
    else if (rule.when !== undefined) {
      const when = check.template([...at, 'when'], rule.when, scope);
      if (when) test = (ctx) => (truthy(when.render(ctx)) ? {} : null);
    }
    if (rule.status !== undefined && test !== undefined) {
      const statuses = new Set(rule.status);
      const inner = test;
      test = (ctx) => (statuses.has(ctx['status'] as number) ? inner(ctx) : null);
    }
    const message = rule.message !== undefined ? check.template([...at, 'message'], rule.message, scope) : undefined;
    const retry = rule.retry_after_seconds !== undefined ? check.template([...at, 'retry_after_seconds'], rule.retry_after_seconds, scope) : undefined;
    if (test)
      out.push({
        test,
        code: rule.code,
        notExecuted: rule.not_executed === true,
        ...(message ? { message } : {}),
        ...(retry ? { retryAfterSeconds: retry } : {}),
      });
  });
  return out;
}

function checkErrorList({ m, check, config }: CheckContext): LoadedManifest['errorList'] {
  const el = m.errors?.list;
  if (el === undefined) return undefined;
  const items = check.template(['errors', 'list', 'items'], el.items, { roots: ERROR_ROOTS, config });
  const entryScope: Scope = { roots: new Set(['entry']), config };
  const path = el.path !== undefined ? check.template(['errors', 'list', 'path'], el.path, entryScope) : undefined;
  const message = el.message !== undefined ? check.template(['errors', 'list', 'message'], el.message, entryScope) : undefined;
  return items ? { items, ...(path ? { path } : {}), ...(message ? { message } : {}) } : undefined;
}
