/**
 * `rate_limit` and an action's own `rate_limit`: the key templates that name a call's bucket,
 * compiled and checked (they may use params, credentials, config and `action`, "<entity>.<action>").
 */
import type { Action } from '../../../generated/manifest.ts';
import type { Template } from '../../templates/index.ts';
import type { CompiledActionRateLimit } from '../compile.ts';
import type { CheckContext, Path } from './checker.ts';

/** Roots a rate-limit key may use. */
export const RATE_KEY_ROOTS = new Set(['params', 'credentials', 'config', 'action']);

/** The connector's `rate_limit.key` (params unchecked by name: the key serves every action; one without the param renders it empty). */
export function checkRateLimit(ctx: CheckContext): Template | undefined {
  const rl = ctx.m.rate_limit;
  if (rl === undefined) return undefined;
  if (rl.key === undefined) return undefined;
  return ctx.check.template(['rate_limit', 'key'], rl.key, { roots: RATE_KEY_ROOTS, credentials: ctx.credentialFields, config: ctx.config });
}

/** An action's own `rate_limit`: its rate and key (default none: the action's name keys it). */
export function checkActionRateLimit(ctx: CheckContext, at: Path, action: Action): CompiledActionRateLimit | undefined {
  const rl = action.rate_limit;
  if (rl === undefined) return undefined;
  const params = (action.params ?? {}) as Record<string, { required?: boolean }>;
  const key =
    rl.key === undefined
      ? undefined
      : ctx.check.template([...at, 'rate_limit', 'key'], rl.key, { roots: RATE_KEY_ROOTS, params, credentials: ctx.credentialFields, config: ctx.config });
  const rate = { requests: rl.requests, window_ms: rl.window_ms, ...(rl.burst !== undefined ? { burst: rl.burst } : {}) };
  return { rate, ...(key !== undefined ? { key } : {}) };
}
