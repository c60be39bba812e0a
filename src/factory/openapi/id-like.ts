/**
 * Which of several item paths of one collection is the record's own key: `/contacts/{ContactID}`
 * rather than `/contacts/{ContactNumber}` (a secondary number the vendor also looks records up by),
 * whatever order the description lists them in.
 */
import { norm, singular } from './names.ts';

const ID_NAMES = ['id', 'gid', 'uuid', 'sid', 'key'];
/** Names of secondary keys: numbers, codes, names, slugs, emails. */
const SECONDARY = /(number|num|no|code|name|slug|email|handle|ref|reference)$/;

/** How much a path parameter looks like the identifier of a record of `entity` (higher is more). */
export function idLikeness(param: string, entity: string): number {
  const n = norm(param);
  const one = norm(singular(entity));
  if (ID_NAMES.includes(n) || ID_NAMES.some((k) => n === `${one}${k}`)) return 3;
  if (/(id|sid|gid|uuid)$/.test(n)) return 2;
  if (SECONDARY.test(n)) return 0;
  return 1;
}

/** Whether an item path keyed by `candidate` should replace the one keyed by `current`: only when it looks more like the id. */
export function betterItemKey(candidate: string, current: string, entity: string): boolean {
  return idLikeness(candidate, entity) > idLikeness(current, entity);
}
