/**
 * A manifest's error rules applied to one upstream response: the first rule that matches turns
 * it into a SwitchboardError (code, upstream message, server-requested wait, and whether the
 * upstream ran the request), and errors.list reports every error entry of the body, not only
 * the first.
 */
import { SwitchboardError, type ErrorCode, type ErrorDetail } from '../errors/index.ts';
import type { LoadedManifest } from '../manifest/index.ts';
import type { TemplateContext } from '../templates/index.ts';

/** Every error entry of an error body as {path, message}, per the manifest's errors.list; [] without one. */
export function upstreamErrorEntries(manifest: LoadedManifest, ctx: TemplateContext): ErrorDetail[] {
  const list = manifest.errorList;
  if (list === undefined) return [];
  const items = list.items.render(ctx);
  if (!Array.isArray(items)) return [];
  return items.map((entry: unknown) => {
    const ectx = { entry };
    const path = list.path?.render(ectx);
    const message = list.message?.render(ectx) ?? (typeof entry === 'string' ? entry : (entry as { message?: unknown } | null)?.message);
    return {
      path: typeof path === 'string' && path !== '' ? (path.startsWith('/') ? path : `/${path}`) : '/',
      message: typeof message === 'string' && message !== '' ? message : JSON.stringify(entry),
    };
  });
}

/** The error the first matching rule makes of this response, or undefined when none matches. */
export function applyErrorRules(
  manifest: LoadedManifest,
  rules: LoadedManifest['bodyErrors'],
  ctx: TemplateContext,
  base: Record<string, unknown>,
): SwitchboardError | undefined {
  for (const rule of rules) {
    const extra = rule.test(ctx);
    if (extra === null) continue;
    const rctx = { ...ctx, ...extra };
    const msg = rule.message?.render(rctx);
    const retryAfter = rule.retryAfterSeconds?.render(rctx);
    const retryMs =
      typeof retryAfter === 'number'
        ? retryAfter * 1000
        : typeof retryAfter === 'string' && retryAfter !== '' && Number.isFinite(Number(retryAfter))
          ? Number(retryAfter) * 1000
          : undefined;
    const errors = upstreamErrorEntries(manifest, ctx);
    const text = typeof msg === 'string' && msg !== '' ? msg : 'the upstream reported an error';
    const more = errors.length > 1 ? ` (and ${String(errors.length - 1)} more error${errors.length > 2 ? 's' : ''}: see errors)` : '';
    return new SwitchboardError(rule.code as ErrorCode, `${manifest.type}: ${text}${more}`, {
      errors,
      details: { ...base, ...(retryMs !== undefined ? { retry_after_ms: retryMs } : {}), ...(rule.notExecuted ? { not_executed: true } : {}) },
    });
  }
  return undefined;
}
