/**
 * A sync's for_each parents: the params each parent record sets (for_each.param and also's). A
 * parent entity whose own list needs the param its own for_each sets (a folder's lists need the
 * folder, the folders their space, the spaces their workspace) is listed once per its own
 * parents in turn, up to a few levels; one whose list stands alone is listed once.
 */
import type { Sync } from '../../generated/manifest.ts';
import type { ConnectorRuntime } from '../engine/index.ts';
import { compileTemplate } from '../templates/index.ts';

type ForEach = NonNullable<Sync['for_each']>;

const MAX_DEPTH = 4;

export async function forEachParents(runtime: ConnectorRuntime, fe: ForEach, signal: AbortSignal | undefined, depth = 0): Promise<Record<string, unknown>[]> {
  const value = compileTemplate(fe.value);
  const also = Object.entries(fe.also ?? {}).map(([k, t]) => [k, compileTemplate(String(t))] as const);
  const parent = runtime.manifest.entities.get(fe.entity);
  const own = parent?.def.sync?.for_each;
  const needs = own !== undefined && parent?.def.actions['list']?.params?.[own.param]?.required === true;
  const grand = needs && depth < MAX_DEPTH ? await forEachParents(runtime, own, signal, depth + 1) : [{}];
  const out: Record<string, unknown>[] = [];
  for (const g of grand) {
    for await (const record of runtime.records(fe.entity, { ...runtime.fixedParams(fe.params), ...g }, { signal })) {
      const v = value.render({ record });
      if (v === undefined || v === null || v === '') continue;
      const set: Record<string, unknown> = { [fe.param]: v };
      for (const [k, t] of also) {
        const a = t.render({ record });
        if (a !== undefined && a !== null && a !== '') set[k] = a;
      }
      out.push(set);
    }
  }
  return out;
}
