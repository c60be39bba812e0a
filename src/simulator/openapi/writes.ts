/**
 * Writes of the OpenAPI front end: bodies unwrapped from their envelope and merged onto records
 * where they fit the record's shape, answers wrapped back, and records a write creates of another
 * resource (the sidecar's created_by).
 */
import { clone, getPath, idAt, isPlainObject, setIdAt, setPath } from '../core/values.ts';
import { mintId } from '../core/store.ts';
import type { Json, Operation } from '../description.ts';
import { newId } from './ids.ts';
import type { RecordRules } from './records.ts';
import { envelopeOf, listedEnvelopeOf, pointerOfProperty, propertiesOf, singularOf } from './schema.ts';
import type { OpenApiContext, Resource, StoredRecord } from './types.ts';

export type Nested = { resource: Resource; value: Json; echo: string | undefined }[];

export interface Writes {
  wrap(op: Operation, record: unknown, r?: Resource, stored?: StoredRecord): unknown;
  unwrapBody(op: Operation, body: unknown): Json;
  /** `asSent`: fields kept as sent (the resource's written_as_sent), objects merged key by key. */
  merge(record: Json, fields: Json, recordRef: string | undefined, deep?: boolean, asSent?: string[]): void;
  takeNested(op: Operation, fields: Json): Nested;
  applyNested(nested: Nested, parentId: string, json: unknown): void;
}

export function writes(ctx: OpenApiContext, rules: RecordRules): Writes {
  const { d, sidecar, classified, resources, sample, seed } = ctx;
  const { stamp } = rules;
  /** The record's own field names (for envelopes that hold it as the one item of a list). */
  const recordFieldsOf = (r: Resource | undefined): Set<string> | undefined =>
    r?.recordRef === undefined ? undefined : new Set(Object.keys(propertiesOf(d, d.schemaAt(r.recordRef))));
  const wrap = (op: Operation, record: unknown, r?: Resource, stored?: StoredRecord): unknown => {
    const resource = classified.get(op.key)?.resource;
    // A declared record property wraps the answers that have it (create and move: {metadata}); a method answering the record itself (a get) is not wrapped.
    const declaredEnv = r?.declared?.record;
    const env =
      declaredEnv !== undefined && propertiesOf(d, d.schemaAt(op.responseRef))[declaredEnv] !== undefined
        ? declaredEnv
        : envelopeOf(d, d.schemaAt(op.responseRef), resource);
    // The record as the one item of an array under the resource's plural key ({"Invoices": [{...}]}).
    const recordFields = recordFieldsOf(r ?? (resource === undefined ? undefined : resources.get(resource)));
    const listed = env === undefined ? listedEnvelopeOf(d, d.schemaAt(op.responseRef), resource, recordFields) : undefined;
    if (listed !== undefined) return { ...((sample(op.responseRef) ?? {}) as Json), [listed]: [record] };
    if (env === undefined) {
      // A create or update answered with a schema of its own (e.g. CreatedIssue {id, key, self}):
      // the record's fields that schema declares.
      if (r === undefined || op.responseRef === undefined || op.responseRef === r.recordRef || record === null || typeof record !== 'object') return record;
      const declared = Object.keys(propertiesOf(d, d.schemaAt(op.responseRef)));
      const own = new Set(Object.keys(propertiesOf(d, d.schemaAt(r.recordRef))));
      if (declared.length === 0 || (declared.every((k) => own.has(k)) && declared.length === own.size)) return record;
      // The sidecar's example of the operation fills what the record cannot (a batch write's replies).
      const example = sidecar.operations?.[op.key]?.example;
      const answer: Json = {
        ...(isPlainObject(example) ? (example as Json) : {}),
        ...Object.fromEntries(Object.entries(record as Json).filter(([k]) => declared.includes(k))),
      };
      // The new record's id under its own name ({requestId, callId, url}: a call's id as callId).
      const named = declared.find((k) => !own.has(k) && k.replace(/_/g, '').toLowerCase() === `${singularOf(r.name).replace(/_/g, '')}id`.toLowerCase());
      if (named !== undefined) answer[named] = idAt(record, r.idField) as Json;
      return answer;
    }
    const body = (sample(op.responseRef) ?? {}) as Json;
    // An RPC answer may repeat the record's id and parent beside it (chat.postMessage: {channel, ts, message}).
    if (r?.declared !== undefined && stored !== undefined) {
      if (r.idField in body && r.idField !== env) body[r.idField] = idAt(record, r.idField);
      for (const [k, v] of Object.entries(stored.parents)) if (k in body && k !== env) body[k] = v;
    }
    // A declared record held as the one item of an array ({signers: [{...}]}: its schema is the array's items).
    const value = r?.declared?.record === env && r.recordRef?.endsWith('/items') === true ? [record] : record;
    // Nested envelopes ({response: {result: {client}}}): the record at that path of the sampled body.
    if (env.includes('.') && r?.declared?.record === undefined) {
      setPath(body, env, value);
      return body;
    }
    return { ...body, [env]: value };
  };
  const unwrapBody = (op: Operation, body: unknown): Json => {
    const resource = classified.get(op.key)?.resource;
    const env =
      envelopeOf(d, d.schemaAt(op.bodyRef), resource) ??
      listedEnvelopeOf(d, d.schemaAt(op.bodyRef), resource, recordFieldsOf(resource === undefined ? undefined : resources.get(resource)));
    const wrapped = env !== undefined && body !== null && typeof body === 'object' ? getPath(body, env) : body;
    // A record sent as the one item of an array ({"Invoices": [{...}]}): that item.
    const inner = Array.isArray(wrapped) && wrapped.length === 1 ? wrapped[0] : wrapped;
    return inner !== null && typeof inner === 'object' && !Array.isArray(inner) ? (inner as Json) : {};
  };
  /**
   * Copy body fields onto a record where they fit the record's shape; a bare id names a nested
   * object. A field the record schema declares with another shape is not copied (e.g. create
   * takes `items: [{price}]` where the subscription holds a list object), nor is one it does not
   * declare when it declares properties (request options such as `expand`).
   */
  const merge = (record: Json, fields: Json, recordRef: string | undefined, deep = false, asSent: string[] = []): void => {
    const props = recordRef === undefined ? {} : propertiesOf(d, d.schemaAt(recordRef));
    const declared = Object.keys(props).length > 0;
    const loose = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '');
    for (const [field, v] of Object.entries(fields)) {
      // A body field named the vendor's other way (a form's To, StatusCallback for the record's to, status_callback).
      const k = !declared || props[field] !== undefined ? field : (Object.keys(props).find((p) => loose(p) === loose(field)) ?? field);
      if (declared && props[k] === undefined) continue;
      const have = record[k];
      // written_as_sent: the vendor reads back another shape than it takes (e.g. property values); kept as sent, objects merged key by key.
      if (asSent.includes(k)) {
        record[k] =
          have !== null && typeof have === 'object' && !Array.isArray(have) && v !== null && typeof v === 'object' && !Array.isArray(v)
            ? { ...(have as Json), ...(v as Json) }
            : v;
        continue;
      }
      if (declared && props[k] === undefined) continue;
      // An update sets the fields it names inside a nested object (e.g. {fields: {summary}}), keeping the others.
      if (
        deep &&
        have !== null &&
        typeof have === 'object' &&
        !Array.isArray(have) &&
        v !== null &&
        typeof v === 'object' &&
        !Array.isArray(v) &&
        !['gid', 'id', 'uuid'].some((f) => f in (have as Json))
      ) {
        const copy = clone(have as Json);
        merge(copy, v as Json, undefined, true);
        record[k] = copy;
        continue;
      }
      if (have !== null && typeof have === 'object' && !Array.isArray(have) && (typeof v === 'string' || typeof v === 'number')) {
        const idKey = ['gid', 'id', 'uuid'].find((f) => f in (have as Json));
        if (idKey !== undefined) record[k] = { ...(have as Json), [idKey]: v };
        continue;
      }
      if (Array.isArray(have) && Array.isArray(v) && have[0] !== null && typeof have[0] === 'object' && v.every((x) => typeof x === 'string')) {
        const idKey = ['gid', 'id', 'uuid'].find((f) => f in (have[0] as Json));
        if (idKey !== undefined) record[k] = v.map((x) => ({ ...(have[0] as Json), [idKey]: x }));
        continue;
      }
      // An object merges into the object the record holds (e.g. metadata keys, a partial recurring).
      const value =
        have !== null && typeof have === 'object' && !Array.isArray(have) && v !== null && typeof v === 'object' && !Array.isArray(v)
          ? { ...(have as Json), ...(v as Json) }
          : v;
      const propRef = declared && recordRef !== undefined ? pointerOfProperty(d, recordRef, k) : undefined;
      if (propRef !== undefined && d.validateValue(propRef, value) !== null) continue;
      record[k] = value;
    }
  };
  const takeNested = (op: Operation, fields: Json): Nested => nestedWrites(sidecar, resources, op, fields);
  /** Store the nested records under their parent (the last path param of their list), and echo them into the answer. */
  const applyNested = (nested: { resource: Resource; value: Json; echo: string | undefined }[], parentId: string, json: unknown): void => {
    for (const n of nested) {
      const listKey = sidecar.resources?.[n.resource.name]?.lists?.[0];
      const listOp = d.operations.find((o) => o.key === listKey);
      const parentParam = listOp?.pathParams[listOp.pathParams.length - 1];
      const record = clone((sample(n.resource.recordRef) ?? {}) as Json);
      merge(record, n.value, n.resource.recordRef);
      const id = mintId(seed, n.resource.name, n.resource, (rand) => newId(rand, idAt(record, n.resource.idField)));
      setIdAt(record, n.resource.idField, id);
      const at = new Date().toISOString();
      stamp(n.resource, record, 'created', at);
      stamp(n.resource, record, 'updated', at);
      n.resource.records.set(String(id), { record, parents: parentParam === undefined ? {} : { [parentParam]: parentId } });
      if (n.echo !== undefined && json !== null && typeof json === 'object') setPath(json as Json, n.echo, [clone(record)]);
    }
  };
  return { wrap, unwrapBody, merge, takeNested, applyNested };
}

/** Body fields that create records of another resource (the sidecar's created_by: a ticket update's comment), taken out of `fields`. */
function nestedWrites(sidecar: OpenApiContext['sidecar'], resources: OpenApiContext['resources'], op: Operation, fields: Json): Nested {
  const out: Nested = [];
  for (const [name, conf] of Object.entries(sidecar.resources ?? {})) {
    for (const w of conf.created_by ?? []) {
      if (w.operation !== op.key || !(w.field in fields)) continue;
      const value = fields[w.field];
      delete fields[w.field];
      const resource = resources.get(name);
      if (resource !== undefined && value !== null && typeof value === 'object' && !Array.isArray(value))
        out.push({ resource, value: value as Json, echo: w.echo });
    }
  }
  return out;
}
