/**
 * response.on_empty (src/manifest/on-empty.ts): the params of the action that reads a record back
 * after a 2xx answer without a body, rendered over the call that got it (its params, the answer's
 * headers and status). A param that renders undefined or null is left out, as in a request.
 */
import type { CompiledAction } from '../manifest/index.ts';
import type { TemplateContext } from '../templates/index.ts';

export function readBackParams(onEmpty: Extract<NonNullable<CompiledAction['onEmpty']>, { action: unknown }>, ctx: TemplateContext): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [name, t] of onEmpty.params) {
    const v = t.render(ctx);
    if (v !== undefined && v !== null) params[name] = v;
  }
  return params;
}
