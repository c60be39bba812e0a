/**
 * An entity's `sync`: the actions and params it names exist (full and incremental actions, the
 * sync-only changes and scroll actions, for_each over a parent entity, removals, hydrate), and
 * its record templates compile.
 */
import type { Entity } from '../../../generated/manifest.ts';
import type { CheckContext, Path } from './checker.ts';

type Sync = NonNullable<Entity['sync']>;

export function checkSync(ctx: CheckContext, base: Path, entityName: string, entity: Entity): void {
  const sync = entity.sync;
  if (sync === undefined) return;
  const { check, config } = ctx;
  const sat = [...base, 'sync'];
  const fullAction = sync.action ?? 'list';
  const incAction = sync.incremental?.action ?? 'list';
  checkSyncActions(ctx, sat, entityName, entity, sync);
  for (const only of ['changes', 'scroll'] as const) {
    const used = only === 'changes' ? incAction === 'changes' || fullAction === 'changes' : fullAction === 'scroll';
    if (entity.actions[only] !== undefined && !used)
      check.add(
        [...base, 'actions', only],
        `the sync-only ${only} action is not used by sync (set sync.${only === 'changes' ? 'incremental.action' : 'action'}: ${only})`,
      );
  }
  if (sync.for_each !== undefined) checkForEach(ctx, sat, entityName, entity, sync.for_each, sync.action ?? 'list');
  if (sync.removals !== undefined) checkRemovals(ctx, sat, sync, sync.removals);
  if (sync.deleted_when !== undefined) check.template([...sat, 'deleted_when'], sync.deleted_when, { roots: new Set(['record']), config });
  // Fixed params may be templates over the credentials and config (a tenant given with the credentials).
  const fixed: [Path, unknown][] = [
    [[...sat, 'params'], sync.params],
    [[...sat, 'incremental', 'params'], sync.incremental?.params],
    [[...sat, 'for_each', 'params'], sync.for_each?.params],
    [[...sat, 'removals', 'params'], sync.removals?.params],
  ];
  for (const [at, params] of fixed) {
    for (const [k, v] of Object.entries((params ?? {}) as Record<string, unknown>)) {
      if (typeof v === 'string' && v.includes('{{'))
        check.template([...at, k], v, { roots: new Set(['credentials', 'config']), config, credentials: ctx.credentialFields });
    }
  }
  if (sync.hydrate !== undefined) {
    const get = entity.actions['get'];
    if (get === undefined) check.add([...sat, 'hydrate', 'action'], `hydrate uses ${entityName}.get, which this entity does not declare`);
    else {
      for (const [k, src] of Object.entries(sync.hydrate.params)) {
        if ((get.params ?? {})[k] === undefined) check.add([...sat, 'hydrate', 'params', k], `"${k}" is not a param of ${entityName}.get`);
        if (src !== undefined) check.template([...sat, 'hydrate', 'params', k], src, { roots: new Set(['record']), config });
      }
    }
  }
}

/** The full sync's action and params, and the incremental one's. */
function checkSyncActions({ m, check }: CheckContext, sat: Path, entityName: string, entity: Entity, sync: Sync): void {
  const fullAction = sync.action ?? 'list';
  const list = entity.actions[fullAction];
  if (list === undefined) check.add(sat, `sync needs a ${fullAction} action on this entity`);
  else {
    const lp = list.params ?? {};
    for (const k of Object.keys(sync.params ?? {}))
      if (lp[k] === undefined) check.add([...sat, 'params', k], `"${k}" is not a param of ${entityName}.${fullAction}`);
  }
  const inc = sync.incremental;
  const incAction = inc?.action ?? 'list';
  const incDef = entity.actions[incAction];
  if (inc && incAction !== fullAction && incDef === undefined) check.add([...sat, 'incremental', 'action'], `"${incAction}" is not an action of ${entityName}`);
  if (inc && incDef !== undefined) {
    const ip = incDef.params ?? {};
    const fixed = incAction === fullAction ? {} : (inc.params ?? {});
    for (const k of Object.keys(fixed))
      if (ip[k] === undefined) check.add([...sat, 'incremental', 'params', k], `"${k}" is not a param of ${entityName}.${incAction}`);
    const mode = inc.mode ?? 'param';
    if (mode === 'param' || mode === 'token') {
      if (inc.param === undefined) check.add([...sat, 'incremental'], `incremental mode ${mode} needs the list param to set ("param")`);
      else if (ip[inc.param] === undefined) check.add([...sat, 'incremental', 'param'], `"${inc.param}" is not a param of ${entityName}.${incAction}`);
    }
    if (mode !== 'token' && mode !== 'link' && inc.cursor_field === undefined)
      check.add([...sat, 'incremental'], `incremental mode ${mode} needs the record field that holds the change time ("cursor_field")`);
    if (mode === 'link') {
      // The link is requested as a next page of the incremental action, whose later pages it then follows.
      const type = incDef.pagination?.type;
      if (type !== 'next_url' && type !== 'link_header')
        check.add(
          [...sat, 'incremental', 'action'],
          `incremental mode link follows a URL: ${entityName}.${incAction} needs next_url or link_header pagination`,
        );
      if (inc.start !== undefined)
        check.add([...sat, 'incremental', 'start'], 'incremental.start is for mode token (a full pass in mode link ends with its link)');
    }
    if (mode === 'token' || mode === 'link') {
      if (inc.token === undefined) check.add([...sat, 'incremental'], `incremental mode ${mode} needs the list_meta field holding the next ${mode} ("token")`);
      else if (m.list_meta?.[inc.token] === undefined) check.add([...sat, 'incremental', 'token'], `"${inc.token}" is not a list_meta field`);
      // With for_each a token (or link) is kept per parent (src/sync/parent-marks.ts); a start token is the entity's, and removals have no since value.
      if (sync.for_each !== undefined && inc.start !== undefined)
        check.add([...sat, 'incremental', 'start'], `incremental.start reads one token per entity: it cannot start a ${mode} per for_each parent`);
      if (sync.removals !== undefined) check.add([...sat, 'removals'], `incremental mode ${mode} has no high-water mark for removals`);
      if (inc.start !== undefined && mode === 'token') {
        const src = m.entities[inc.start.entity];
        if (src?.actions['get'] === undefined)
          check.add([...sat, 'incremental', 'start', 'entity'], `"${inc.start.entity}" is not an entity with a get action`);
        else
          for (const k of Object.keys(inc.start.params ?? {}))
            if ((src.actions['get'].params ?? {})[k] === undefined)
              check.add([...sat, 'incremental', 'start', 'params', k], `"${k}" is not a param of ${inc.start.entity}.get`);
        check.template([...sat, 'incremental', 'start', 'token'], inc.start.token, {
          roots: new Set(['record']),
          config: new Set(Object.keys(m.config ?? {})),
        });
      }
    }
  }
}

/** for_each: the parent entity, and the params it sets on the action the sync runs (list, or its own scroll). */
function checkForEach(
  { m, check, config }: CheckContext,
  sat: Path,
  entityName: string,
  entity: Entity,
  fe: NonNullable<Sync['for_each']>,
  action: 'list' | 'scroll' | 'changes',
): void {
  const parent = m.entities[fe.entity];
  if (parent === undefined || parent.actions['list'] === undefined)
    check.add([...sat, 'for_each', 'entity'], `"${fe.entity}" is not an entity with a list action`);
  const params = entity.actions[action]?.params ?? {};
  if (params[fe.param] === undefined) check.add([...sat, 'for_each', 'param'], `"${fe.param}" is not a param of ${entityName}.${action}`);
  check.template([...sat, 'for_each', 'value'], fe.value, { roots: new Set(['record']), config });
  for (const [k, t] of Object.entries(fe.also ?? {})) {
    if (params[k] === undefined) check.add([...sat, 'for_each', 'also', k], `"${k}" is not a param of ${entityName}.${action}`);
    else if (k === fe.param) check.add([...sat, 'for_each', 'also', k], `"${k}" is already for_each.param`);
    if (t !== undefined) check.template([...sat, 'for_each', 'also', k], t, { roots: new Set(['record']), config });
  }
}

function checkRemovals({ m, check, config }: CheckContext, sat: Path, sync: Sync, rm: NonNullable<Sync['removals']>): void {
  const rat = [...sat, 'removals'];
  const source = m.entities[rm.entity];
  const lp = source?.actions['list']?.params ?? {};
  if (source === undefined || source.actions['list'] === undefined) check.add([...rat, 'entity'], `"${rm.entity}" is not an entity with a list action`);
  else {
    if (rm.since_param !== undefined && lp[rm.since_param] === undefined)
      check.add([...rat, 'since_param'], `"${rm.since_param}" is not a param of ${rm.entity}.list`);
    for (const k of Object.keys(rm.params ?? {})) if (lp[k] === undefined) check.add([...rat, 'params', k], `"${k}" is not a param of ${rm.entity}.list`);
    if (sync.for_each !== undefined && lp[sync.for_each.param] === undefined)
      check.add([...rat, 'entity'], `with for_each, ${rm.entity}.list needs the param "${sync.for_each.param}" too`);
  }
  if (sync.incremental === undefined) check.add(rat, 'removals need incremental (they apply to incremental runs, since the last high-water mark)');
  check.template([...rat, 'id'], rm.id, { roots: new Set(['record']), config });
  if (rm.when !== undefined) check.template([...rat, 'when'], rm.when, { roots: new Set(['record']), config });
}
