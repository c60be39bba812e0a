/** Finding an action by entity and name, and validating a call's params against it. */
import { SwitchboardError, type ErrorDetail } from '../errors/index.ts';
import { SYNC_ONLY_ACTIONS, type ActionName, type CompiledAction, type LoadedManifest } from '../manifest/index.ts';

/**
 * The action definition, or unknown_entity / unknown_action listing the valid ones. Sync-only
 * actions (changes, scroll) are found only with `syncOnly: true` (the sync engine's calls).
 */
export function findAction(manifest: LoadedManifest, entity: string, action: string, syncOnly = false): CompiledAction {
  const e = manifest.entities.get(entity);
  if (e === undefined) {
    const valid = [...manifest.entities.keys()];
    throw new SwitchboardError('unknown_entity', `Unknown entity "${entity}" for ${manifest.type}. Valid entities: ${valid.join(', ')}`, {
      details: { entity, valid },
    });
  }
  if (action === 'search') {
    throw new SwitchboardError(
      'search_hosted_only',
      'search is available in hosted mode only: it queries data the Switchboard service has synced, and library mode has no service.',
    );
  }
  const a = e.actions.get(action as ActionName);
  if (a === undefined || (!syncOnly && SYNC_ONLY_ACTIONS.has(a.name))) {
    const valid = [...[...e.actions.keys()].filter((n) => !SYNC_ONLY_ACTIONS.has(n)), ...(e.def.search ? ['search'] : [])];
    throw new SwitchboardError('unknown_action', `Unknown action "${action}" for ${manifest.type} ${entity}. Valid actions: ${valid.join(', ')}`, {
      details: { entity, action, valid },
    });
  }
  return a;
}

/** Validate params against the action's schema; every failure with its path. */
export function validateParams(a: CompiledAction, params: unknown): Record<string, unknown> {
  const p = params ?? {};
  const errors = a.validateParams(p) ? missingGroups(a, p as Record<string, unknown>) : describeParamsErrors(a);
  if (errors.length > 0) {
    throw new SwitchboardError('invalid_params', `Invalid params for ${a.entity}.${a.name}: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, {
      errors,
    });
  }
  return p as Record<string, unknown>;
}

function describeParamsErrors(action: CompiledAction): ErrorDetail[] {
  return (action.validateParams.errors ?? []).map((e) => {
    if (e.keyword === 'additionalProperties') {
      const known = Object.keys(action.def.params ?? {});
      return { path: `/${String(e.params['additionalProperty'])}`, message: `unknown param; valid params: ${known.join(', ') || 'none'}` };
    }
    if (e.keyword === 'required') return { path: `/${String(e.params['missingProperty'])}`, message: 'is required' };
    if (e.keyword === 'enum') return { path: e.instancePath, message: `must be one of: ${(e.params['allowedValues'] as unknown[]).join(', ')}` };
    return { path: e.instancePath || '/', message: e.message ?? 'is invalid' };
  });
}

/**
 * The action's requires_any groups none of whose params was given: the request branches on them
 * (e.g. monday's updates.update edits with body or deletes with state), so without any of them it
 * would be sent incomplete. A param given as null or "" counts as not given, as templates treat it.
 */
function missingGroups(action: CompiledAction, params: Record<string, unknown>): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  for (const group of action.requiresAny) {
    if (group.some((k) => params[k] !== undefined && params[k] !== null && params[k] !== '')) continue;
    out.push({ path: '/', message: `needs at least one of: ${group.join(', ')}` });
  }
  return out;
}
