/**
 * Write rules of the generic record store, declared per resource in the sidecar
 * (`resources.<name>`), for the OpenAPI simulator's creates and updates:
 *
 * - `unique`: fields no two records may share (text compared trimmed and ignoring case, as
 *   emails are): a create or update that would repeat a value answers 409 `conflict` with the
 *   rule's message, whose `{{id}}` is the record that holds it and `{{field}}` the field.
 * - `upsert`: a field of the create body naming the record the create updates instead, when a
 *   record already holds that value (e.g. POST /companies by company_id).
 * - `parent` of a nested collection (`/contacts/{contact_id}/notes`): the record the path
 *   parameter names must exist (else the parameter's 404), and `append` adds a reference to each
 *   created record to a list of that parent (`to`, a dotted path to an array; `item`, a template
 *   with the created record's fields, `{{id}}`...; `count`, a dotted number increased with it).
 */
import type { Json } from './description.ts';
import { fill, readPath } from './rules.ts';

export interface UniqueRule {
  fields: string[];
  /** The 409's message: {{id}} (the record holding the value), {{field}}. */
  message?: string;
}

export interface ParentAppend {
  to: string;
  item: unknown;
  count?: string;
}

const comparable = (v: unknown): string => (typeof v === 'string' ? v.trim().toLowerCase() : JSON.stringify(v));
const given = (v: unknown): boolean => v !== undefined && v !== null && v !== '';

/** The record (id and field) that already holds a value of a unique field the body sets, other than `self`. */
export function uniqueConflict(
  rule: UniqueRule,
  records: Iterable<[string, { record: Json }]>,
  body: Json,
  self?: string,
): { id: string; field: string } | undefined {
  const wanted = rule.fields.filter((f) => given(readPath(body, f))).map((f) => [f, comparable(readPath(body, f))] as const);
  if (wanted.length === 0) return undefined;
  for (const [id, s] of records) {
    if (id === self) continue;
    for (const [field, value] of wanted) {
      const have = readPath(s.record, field);
      if (given(have) && comparable(have) === value) return { id, field };
    }
  }
  return undefined;
}

/** The 409 message of a conflict. */
export const conflictMessage = (rule: UniqueRule, c: { id: string; field: string }): string =>
  String(fill(rule.message ?? 'A record with this {{field}} already exists: {{id}}', c));

/** The id of the record whose `field` equals the body's (an upsert's target), if any. */
export function upsertTarget(field: string, records: Iterable<[string, { record: Json }]>, body: Json): string | undefined {
  const value = readPath(body, field);
  if (!given(value)) return undefined;
  for (const [id, s] of records) if (readPath(s.record, field) === value) return id;
  return undefined;
}

/** Add a reference to a created record to its parent's list (and count). */
export function appendToParent(append: ParentAppend, parent: Json, record: Json): void {
  let holder: unknown = parent;
  const parts = append.to.split('.');
  for (const p of parts.slice(0, -1)) {
    const h = holder as Json;
    if (h[p] === null || typeof h[p] !== 'object') h[p] = {};
    holder = h[p];
  }
  const last = parts[parts.length - 1] as string;
  const list = Array.isArray((holder as Json)[last]) ? ((holder as Json)[last] as unknown[]) : [];
  (holder as Json)[last] = [...list, fill(append.item, record)];
  if (append.count !== undefined) {
    const path = append.count.split('.');
    const owner = readPath(parent, path.slice(0, -1).join('.')) as Json | undefined;
    const key = path[path.length - 1] as string;
    const target = path.length === 1 ? parent : owner;
    if (target !== undefined && target !== null) target[key] = (typeof target[key] === 'number' ? (target[key] as number) : 0) + 1;
  }
}
