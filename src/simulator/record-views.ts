/**
 * What a record answer of the OpenAPI simulator shows, beyond the stored record itself:
 *
 * - fields answered only when a query parameter asks for them (the sidecar's
 *   `resources.<name>.include`: a vendor's transcript, with `include=transcript`);
 * - list items cut to the item schema when that schema is another than the record's and allows
 *   no other properties (`additionalProperties: false`: a vendor's NoteSummary in its list);
 * - the list order (`pagination.order`: `stored`, or `newest_first`, last stored first).
 */
import type { Description, Json } from './description.ts';

export interface IncludeRule {
  /** The query parameter naming the fields (one value, comma-separated values, or a list). */
  param: string;
  /** Fields answered only when the parameter names them. */
  fields: string[];
}

/** The record without the fields of `rule` the query does not ask for (the record itself when none is left out). */
export function included(record: Json, rule: IncludeRule | undefined, query: Json): Json {
  if (rule === undefined) return record;
  const raw = query[rule.param];
  const asked = new Set((Array.isArray(raw) ? raw : raw === undefined || raw === null ? [] : [raw]).flatMap((v) => String(v).split(',')).map((v) => v.trim()));
  const leave = rule.fields.filter((f) => !asked.has(f) && f in record);
  if (leave.length === 0) return record;
  const out = { ...record };
  for (const f of leave) delete out[f];
  return out;
}

/**
 * The fields each item of a list shows, when the list's item schema (at `key` of the list
 * response) is another than the record's and forbids other properties; else undefined (whole records).
 */
export function listItemFields(d: Description, responseRef: string | undefined, key: string | undefined, recordRef: string | undefined): string[] | undefined {
  if (responseRef === undefined || key === undefined || key === '') return undefined;
  const list = d.resolve<Json>(d.schemaAt(responseRef) ?? {});
  const array = d.resolve<Json>(((list.properties ?? {}) as Json)[key] ?? {});
  const items = array.items as Json | undefined;
  if (items === undefined || (typeof items.$ref === 'string' && items.$ref === recordRef)) return undefined;
  const schema = d.resolve<Json>(items);
  if (schema.additionalProperties !== false || schema.properties === undefined) return undefined;
  return Object.keys(schema.properties as Json);
}

/** The record with only `fields` (in the record's own order). */
export function pick(record: Json, fields: string[] | undefined): Json {
  if (fields === undefined) return record;
  return Object.fromEntries(Object.entries(record).filter(([k]) => fields.includes(k)));
}
