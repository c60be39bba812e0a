/**
 * GraphQL mutations over the store: `<type>Create`/`create<Type>`, `<type>Update`,
 * `<type>Delete`/`<type>Archive` and `<type>Unarchive` (and the `create_`/`update_` spellings); the
 * input object's fields set the record's fields of the same name, `<field>Id` links a related
 * record, `createdAt`/`updatedAt` are kept; an update or delete names its record by `id` or
 * `<type>Id`; a payload type returns the record in its field of the
 * record's type, with `success: true`.
 */
import { getNamedType, getNullableType, isAbstractType, isInputObjectType, isListType, isNonNullType, isObjectType, type GraphQLField } from 'graphql';
import { creationRandom, MAX_RECORDS } from '../core/store.ts';
import { clone } from '../core/values.ts';
import type { GraphqlStore } from './records.ts';
import { connectionNode } from './schema-types.ts';
import type { GraphqlCtx, GraphqlResource, Rec } from './types.ts';

export type Mutate = (f: GraphQLField<unknown, unknown>, args: Rec) => unknown;

export function mutations(ctx: GraphqlCtx, store: GraphqlStore): Mutate {
  const { g, options, seed, resources } = ctx;
  const { fieldError } = ctx.errors;
  const { sampleRecord, refFields, syncIdField } = store;
  const archivedField = g.archived?.field ?? 'archivedAt';
  const now = (): string => new Date().toISOString();
  const resourceOfMutation = (f: GraphQLField<unknown, unknown>): { r: GraphqlResource; holder?: string } | undefined => {
    const ret = getNamedType(f.type);
    if (isObjectType(ret) && resources.has(ret.name)) return { r: resources.get(ret.name) as GraphqlResource };
    if (isObjectType(ret)) {
      for (const pf of Object.values(ret.getFields())) {
        const n = getNamedType(pf.type);
        if (isObjectType(n) && resources.has(n.name) && !isListType(getNullableType(pf.type)))
          return { r: resources.get(n.name) as GraphqlResource, holder: pf.name };
      }
    }
    const name = f.name.toLowerCase().replace(/_/g, '');
    const type = [...resources.values()].find((r) => name.startsWith(r.type.name.toLowerCase()) || name.endsWith(r.type.name.toLowerCase()));
    return type === undefined ? undefined : { r: type };
  };
  const verbOf = (name: string): 'create' | 'update' | 'delete' | 'archive' | 'unarchive' | undefined => {
    const n = name.toLowerCase().replace(/_/g, '');
    for (const v of ['unarchive', 'create', 'update', 'delete', 'archive'] as const) if (n.startsWith(v) || n.endsWith(v)) return v;
    return undefined;
  };
  const selfId = (r: GraphqlResource): string => `${r.type.name.charAt(0).toLowerCase()}${r.type.name.slice(1)}Id`;
  /** Copy an input object onto a record: same-named fields, `<field>Id` links a related record. */
  const applyInput = (r: GraphqlResource, rec: Rec, input: Rec): void => {
    const fields = r.type.getFields();
    for (const [k, v] of Object.entries(input)) {
      if (v === undefined || k === 'id' || k === selfId(r)) continue;
      const linked = k.endsWith('Id') ? fields[k.slice(0, -2)] : undefined;
      const direct = fields[k];
      const target = linked !== undefined && isObjectType(getNamedType(linked.type)) ? linked : (direct ?? linked);
      if (target === undefined) continue;
      const named = getNamedType(target.type);
      // A link to an interface or union (`ownerId` of `owner: RepositoryOwner`) names no one store: kept as it is.
      if (isAbstractType(named)) continue;
      if (isObjectType(named)) {
        if (isListType(getNullableType(target.type)) || connectionNode(target.type) !== undefined) continue;
        const related = resources.get(named.name);
        if (v === null) rec[target.name] = null;
        else if (related !== undefined) {
          if (!related.records.has(String(v))) throw fieldError('not_found', `${named.name} not found: ${String(v)}`, { type: named.name, id: String(v) });
          rec[target.name] = { __ref: String(v) };
        }
        syncIdField(r, rec, target.name);
        continue;
      }
      rec[target.name] = clone(v);
    }
  };
  const payload = (f: GraphQLField<unknown, unknown>, holder: string | undefined, rec: Rec | null): unknown => {
    if (holder === undefined) return rec;
    return { [holder]: rec, success: true, lastSyncId: ++syncId };
  };
  let syncId = 0;
  const mutate = (f: GraphQLField<unknown, unknown>, args: Rec): unknown => {
    const target = resourceOfMutation(f);
    const verb = verbOf(f.name);
    if (target === undefined || verb === undefined) return {};
    const { r, holder } = target;
    // The input object: of the (non-list) input-object arguments, the one the request gives (Shopify's
    // productUpdate takes `product`, `identifier` or the deprecated `input`), else the first.
    const inputArgs = f.args.filter((a) => isInputObjectType(getNullableType(a.type)) && a.name !== 'filter');
    const inputArg = inputArgs.find((a) => args[a.name] !== undefined && args[a.name] !== null) ?? inputArgs[0];
    const input = (inputArg !== undefined ? args[inputArg.name] : undefined) as Rec | undefined;
    const fields = r.type.getFields();
    const timestamp = (rec: Rec, name: string): void => {
      if (fields[name] !== undefined) rec[name] = now();
    };
    if (verb === 'create') {
      if (r.records.size >= (options.maxRecords ?? MAX_RECORDS))
        throw fieldError('invalid', `The simulator keeps at most ${String(options.maxRecords ?? MAX_RECORDS)} ${r.type.name} records`);
      const rand = creationRandom(seed, r.type.name, r);
      const rec = sampleRecord(r.type, r.records.size, rand);
      // Related records the input does not name: none, or the first of its type where one is required.
      for (const rf of refFields(r.type)) {
        const first = isNonNullType(rf.type) ? resources.get(getNamedType(rf.type).name)?.records.keys().next().value : undefined;
        rec[rf.name] = first === undefined ? null : { __ref: first };
        syncIdField(r, rec, rf.name);
      }
      if (typeof input?.['id'] === 'string' && input['id'] !== '') {
        if (r.records.has(input['id'])) throw fieldError('invalid', `${r.type.name} ${input['id']} already exists`);
        rec['id'] = input['id'];
      }
      applyInput(r, rec, input ?? Object.fromEntries(Object.entries(args).filter(([k]) => k !== 'id')));
      timestamp(rec, 'createdAt');
      timestamp(rec, 'updatedAt');
      r.records.set(String(rec['id']), rec);
      return payload(f, holder, rec);
    }
    // The record: by id, or by `<type>Id` (`updateIssue(input: {issueId})`).
    const id = String(args['id'] ?? input?.['id'] ?? args[selfId(r)] ?? input?.[selfId(r)] ?? '');
    const rec = r.records.get(id);
    if (rec === undefined) throw fieldError('not_found', `${r.type.name} not found: ${id}`, { type: r.type.name, id });
    if (verb === 'update') {
      applyInput(r, rec, input ?? Object.fromEntries(Object.entries(args).filter(([k]) => k !== 'id')));
      timestamp(rec, 'updatedAt');
    } else if (verb === 'archive' || (verb === 'delete' && fields[archivedField] !== undefined)) {
      rec[archivedField] = now();
      timestamp(rec, 'updatedAt');
    } else if (verb === 'unarchive') {
      rec[archivedField] = null;
      timestamp(rec, 'updatedAt');
    } else r.records.delete(id);
    return payload(f, holder, holder === undefined ? rec : verb === 'delete' && fields[archivedField] === undefined ? null : rec);
  };
  return mutate;
}
