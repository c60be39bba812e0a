/** The chosen entities scaffolded: their actions, record schema and primary key. */
import type { Sidecar } from '../../simulator/sidecar.ts';
import { isObjectSchema, toJsonSchema, type OpenApiSchema } from '../json-schema.ts';
import { buildAction } from './action.ts';
import { idFieldFor } from '../../simulator/openapi/ids.ts';
import { findRecords, singular, success, type Obj } from './document.ts';
import type { Notes } from './notes.ts';
import type { EntityPlan } from './plan.ts';
import type { SharedId } from './tenant.ts';

export interface ScaffoldedEntities {
  entities: Obj;
  /** Header params with a default, sent on every request. */
  sentHeaders: Record<string, string>;
  /** The first list without required params, for the credential check. */
  checkRequest: Obj | undefined;
}

export function scaffoldEntities(
  chosen: EntityPlan[],
  sidecar: Pick<Sidecar, 'auth' | 'pagination'> | undefined,
  { guess, report }: Notes,
  shared: SharedId[] = [],
): ScaffoldedEntities {
  const sentHeaders: Record<string, string> = {};
  const entities: Obj = {};
  let checkRequest: Obj | undefined;
  // Account or tenant ids every call needs are credential fields (tenant.ts): no action asks for them.
  const credentialParams = new Set([...(sidecar?.auth?.params ?? []), ...shared.map((s) => s.name)]);
  const sharedPath = Object.fromEntries(shared.filter((s) => s.in === 'path').map((s) => [s.name, `{{credentials.${s.field}}}`]));
  for (const plan of chosen) {
    const at = ['entities', plan.name];
    const actions: Obj = {};
    // A collection path answering one object (GET /me, GET /account): a get, not a list.
    const listed = plan.ops.list ? success(plan.ops.list.op).schema : undefined;
    let singleton = false;
    if (plan.ops.list && plan.ops.get === undefined && listed !== undefined && findRecords(listed, plan.name) === undefined && isObjectSchema(listed)) {
      plan.ops.get = plan.ops.list;
      delete plan.ops.list;
      singleton = true;
    }
    let recordSchema: OpenApiSchema | undefined;
    for (const action of ['list', 'get', 'create', 'update'] as const) {
      const def = plan.ops[action];
      if (def === undefined) continue;
      const aat = [...at, 'actions', action];
      const built = buildAction(def, action, plan, aat, { guess, report, sentHeaders, credentialParams, sharedPath, sidecarPagination: sidecar?.pagination });
      actions[action] = built.action;
      if (action === 'get' && built.recordSchema) recordSchema = built.recordSchema;
      if (action === 'list' && built.recordSchema && recordSchema === undefined) recordSchema = built.recordSchema;
      if (action !== 'list' && built.recordSchema && recordSchema === undefined) recordSchema = built.recordSchema;
      if (action === 'list' && checkRequest === undefined && built.checkable) checkRequest = built.checkable;
    }
    const record = toJsonSchema(recordSchema ?? { type: 'object' }, { depth: 1, loose: true });
    const props = (record['properties'] ?? {}) as Obj;
    // The id the item path takes, named the vendor's way ({Sid} → sid, {InvoiceID} → InvoiceID).
    const pk =
      plan.idField ??
      ['id', 'gid', 'uuid', 'key'].find((k) => props[k] !== undefined) ??
      idFieldFor(plan.itemParam, Object.keys(props), singular(plan.name)) ??
      Object.keys(props).find((k) => /(^|_)id$/.test(k));
    if (pk !== undefined && props[pk] === undefined) props[pk] = { type: ['string', 'integer'] };
    if (pk === undefined) {
      props['id'] = { type: ['string', 'integer'] };
      guess([...at, 'primary_key'], 'no id-like field in the record schema: name the field that identifies a record');
    } else if (pk !== 'id' && plan.idField === undefined) guess([...at, 'primary_key'], `"${pk}" looks like the identifier`);
    const primaryKey = pk ?? 'id';
    // Only the key is required: lists often return compact records.
    const pkSchema = props[primaryKey] as Obj | undefined;
    if (pkSchema && Array.isArray(pkSchema['type']))
      pkSchema['type'] =
        (pkSchema['type'] as string[]).filter((t) => t !== 'null').length === 1 ? (pkSchema['type'] as string[]).find((t) => t !== 'null') : pkSchema['type'];
    entities[plan.name] = {
      title: plan.name.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase()),
      primary_key: primaryKey,
      record: { type: 'object', required: [primaryKey], properties: props },
      actions,
    };
    if (recordSchema === undefined) guess([...at, 'record'], "no response schema: describe the record's fields");
    if (plan.otherItems !== undefined && plan.otherItems.length > 0 && plan.item !== undefined) {
      guess(
        [...at, 'actions', plan.ops.get !== undefined ? 'get' : 'update'],
        `the item path ${plan.item} is keyed by {${plan.itemParam ?? ''}}; also in the description, not scaffolded: ${plan.otherItems.join(', ')}`,
      );
    }
    if (singleton) guess([...at, 'actions', 'get'], `${plan.collection ?? ''} answers one object, not a list: scaffolded as get`);
  }
  return { entities, sentHeaders, checkRequest };
}
