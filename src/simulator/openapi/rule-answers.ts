/**
 * The sidecar's declared search, scroll and pages rules (rules.ts) as answers of their operations,
 * over the generic store or the caller's record sources.
 */
import type { Json, Operation } from '../description.ts';
import { idAt } from '../core/values.ts';
import { answerQuery, type QueryRule } from '../query-language.ts';
import { fill, listPage, readPath, RuleError, Scroll, search, type ChangedRule, type DeletionsRule, type ListRule, type RecordSource } from '../rules.ts';
import type { FilterEntry } from '../sidecar/types.ts';
import { compareValues } from './lists.ts';
import type { SimResponse } from '../sim-server.ts';
import type { ErrorAnswers } from './errors.ts';
import type { RecordRules } from './records.ts';
import type { OpenApiContext, StoredRecord } from './types.ts';

export interface RuleAnswers {
  /** The answer of a declared rule for the operation, or undefined when it has none. */
  byRule(op: Operation, query: Json, body: Json, link: RuleLink, pathParams?: Record<string, string>): SimResponse | undefined;
  /** Close the open scroll of every scroll rule. */
  closeScrolls(): void;
}

/** Where the request went (for next-page links), and its headers (a page size a query rule reads from one). */
export interface RuleLink {
  origin: string;
  path: string;
  headers?: Record<string, string | string[] | undefined>;
}

export function ruleAnswers(ctx: OpenApiContext, rules: RecordRules, errors: ErrorAnswers): RuleAnswers {
  const { d, sidecar, options, resources } = ctx;
  const { softDeleted } = rules;
  const { errorResponse, notFound } = errors;
  const sourceOf = (name: string, opKey?: string, under: Record<string, string> = {}): RecordSource => {
    const given = options.sources?.[opKey ?? ''] ?? options.sources?.[name];
    if (given !== undefined) return given;
    // The generic store's records (under the path's parent, for a nested list), soft-deleted ones left out (as lists leave them out).
    const r = resources.get(name);
    const all = (): StoredRecord[] =>
      r === undefined ? [] : [...r.records.values()].filter((x) => !softDeleted(r, x.record) && Object.entries(under).every(([k, v]) => x.parents[k] === v));
    return {
      size: () => all().length,
      slice: (start, end) =>
        all()
          .slice(start, end)
          .map((x) => x.record),
      indexOf: (id) => all().findIndex((x) => r !== undefined && String(idAt(x.record, r.idField)) === id),
    };
  };
  for (const [kind, rules] of [
    ['search', sidecar.search],
    ['scroll', sidecar.scroll],
    ['pages', sidecar.pages],
  ] as const) {
    for (const [key, rule] of Object.entries(rules ?? {})) {
      if (!d.operations.some((o) => o.key === key)) throw new Error(`simulator sidecar: ${kind}: the description has no operation ${key}`);
      if (!resources.has(rule.resource) && options.sources?.[key] === undefined && options.sources?.[rule.resource] === undefined)
        throw new Error(`simulator sidecar: ${kind}.${key}.resource: the description has no resource ${rule.resource}`);
    }
  }
  const unaliasedOf = (name: string, pathParams: Record<string, string>): Record<string, string> => {
    const r = resources.get(name);
    return r === undefined ? pathParams : rules.unaliased(r, pathParams);
  };
  // Query rules answer their own operation and the page behind a locator (`next`).
  const queries = new Map<string, { rule: QueryRule; locator?: string }>();
  for (const [key, rule] of Object.entries(sidecar.query ?? {})) {
    for (const [k, locator] of [
      [key, undefined],
      [rule.next?.operation, rule.next?.param],
    ] as const) {
      if (k === undefined) continue;
      if (!d.operations.some((o) => o.key === k)) throw new Error(`simulator sidecar: query: the description has no operation ${k}`);
      queries.set(k, { rule, ...(locator !== undefined ? { locator } : {}) });
    }
    for (const name of Object.values(rule.resources))
      if (!resources.has(name) && options.sources?.[name] === undefined)
        throw new Error(`simulator sidecar: query.${key}.resources: the description has no resource ${name}`);
  }
  for (const [key, rule] of Object.entries(sidecar.changed ?? {})) {
    if (!d.operations.some((o) => o.key === key)) throw new Error(`simulator sidecar: changed: the description has no operation ${key}`);
    for (const name of Object.values(rule.resources))
      if (!resources.has(name)) throw new Error(`simulator sidecar: changed.${key}.resources: the description has no resource ${name}`);
  }
  for (const [key, rule] of Object.entries(sidecar.deletions ?? {})) {
    if (!d.operations.some((o) => o.key === key)) throw new Error(`simulator sidecar: deletions: the description has no operation ${key}`);
    if (sidecar.resources?.[rule.resource]?.soft_delete === undefined)
      throw new Error(`simulator sidecar: deletions.${key}: resources.${rule.resource} declares no soft_delete (deleted records would not be kept)`);
  }
  const scrolls = new Map(Object.entries(sidecar.scroll ?? {}).map(([key, rule]) => [key, new Scroll(rule)]));
  const byRule = (op: Operation, query: Json, body: Json, link: RuleLink, pathParams: Record<string, string> = {}): SimResponse | undefined => {
    const queryRule = queries.get(op.key);
    const searchRule = sidecar.search?.[op.key];
    const scrollRule = sidecar.scroll?.[op.key];
    const listRule = sidecar.pages?.[op.key];
    try {
      if (queryRule !== undefined) {
        const { rule, locator } = queryRule;
        const request = locator === undefined ? { statement: query[rule.param] } : { locator: pathParams[locator] ?? '' };
        const json = answerQuery(rule, { ...request, headers: link.headers }, (name) => {
          const src = sourceOf(name);
          return src.slice(0, src.size()) as Json[];
        });
        return { status: op.successStatus, json };
      }
      const changed = sidecar.changed?.[op.key];
      if (changed !== undefined) return { status: op.successStatus, json: changedAnswer(changed, query) };
      const deletions = sidecar.deletions?.[op.key];
      if (deletions !== undefined) return { status: op.successStatus, json: deletionsAnswer(deletions, query) };
      if (searchRule !== undefined) {
        const src = sourceOf(searchRule.resource);
        return { status: op.successStatus, json: search(searchRule, src.slice(0, src.size()), body, pathParams) };
      }
      if (scrollRule !== undefined)
        return {
          status: op.successStatus,
          json: (scrolls.get(op.key) as Scroll).next(readPath(query, scrollRule.param), (start, end) => sourceOf(scrollRule.resource).slice(start, end)),
        };
      if (listRule !== undefined) {
        // A nested list (/contacts/{contact_id}/notes) needs its parent (the resource's `parent`).
        const pr = sidecar.resources?.[listRule.resource]?.parent;
        const parentId = pr === undefined ? undefined : pathParams[pr.param];
        if (pr !== undefined && parentId !== undefined && resources.get(pr.resource)?.records.has(parentId) !== true) return notFound(op, parentId, pr.param);
        const dflt = d.schemaAt(op.params.find((p) => p.name === listRule.per_page)?.schemaRef)?.default;
        const under =
          listRule.path_fields === undefined
            ? sourceOf(listRule.resource, op.key, pathParams)
            : fieldSource(sourceOf(listRule.resource, op.key), listRule.path_fields, unaliasedOf(listRule.resource, pathParams));
        const source = listRule.filters === undefined ? under : queryFiltered(under, listRule.filters, query, resources.get(listRule.resource)?.idField);
        return { status: op.successStatus, json: listPage(listRule, source, query, typeof dflt === 'number' ? dflt : undefined, link) };
      }
    } catch (e) {
      if (e instanceof RuleError)
        return errorResponse({ status: 400, code: e.code, message: e.message, ...(e.field !== undefined ? { field: e.field } : {}) }, op);
      throw e;
    }
    return undefined;
  };
  /** The records a DELETE soft-deleted (soft_delete), marked in the window the query's since/until params give, each as `item`. */
  const deletionsAnswer = (rule: DeletionsRule, query: Json): unknown => {
    const r = resources.get(rule.resource);
    const [since, until] = [rule.since, rule.until].map((p) => (p === undefined ? undefined : query[p]));
    const at = (x: Json): number => Date.parse(String(readPath(x, rule.field)));
    const within = (x: Json): boolean =>
      (since === undefined || at(x) >= Date.parse(String(since))) && (until === undefined || at(x) <= Date.parse(String(until)));
    const gone = [...(r?.records.values() ?? [])].map((x) => x.record).filter((x) => r !== undefined && softDeleted(r, x) && within(x));
    return fill(rule.response, { records: gone.map((x) => fill(rule.item, x)), since, until, count: gone.length });
  };
  /** The records of each resource the names parameter lists changed after `since` (soft-deleted ones as stored). */
  const changedAnswer = (rule: ChangedRule, query: Json): unknown => {
    const since = Date.parse(String(query[rule.since]));
    if (Number.isNaN(since)) throw new RuleError('invalid', `${rule.since} must be a date-time`, rule.since);
    const asked = String(query[rule.names] ?? '')
      .split(',')
      .map((n) => n.trim())
      .filter((n) => n !== '');
    const groups = asked.map((n) => {
      const name = Object.keys(rule.resources).find((k) => k.toLowerCase() === n.toLowerCase());
      if (name === undefined) throw new RuleError('invalid', `${rule.names}: no such entity ${n}`, rule.names);
      const r = resources.get(rule.resources[name]!);
      const records = [...(r?.records.values() ?? [])].map((x) => x.record).filter((x) => Date.parse(String(readPath(x, rule.field))) > since);
      return fill(rule.group, { name, records, count: records.length });
    });
    return fill(rule.response, { groups, now: new Date().toISOString() });
  };
  const closeScrolls = (): void => {
    for (const sc of scrolls.values()) sc.close();
  };
  return { byRule, closeScrolls };
}

/** The records of `source` whose dotted fields equal (or contain) the path parameters `fields` names (a list rule's `path_fields`). */
function fieldSource(source: RecordSource, fields: NonNullable<ListRule['path_fields']>, pathParams: Record<string, string>): RecordSource {
  const all = (): Json[] =>
    (source.slice(0, source.size()) as Json[]).filter((r) =>
      Object.entries(fields).every(([param, rule]) => {
        const { field, match } = typeof rule === 'string' ? { field: rule, match: 'equals' } : rule;
        const v = readPath(r, field);
        const want = pathParams[param] ?? '';
        if (match === 'contains') return (Array.isArray(v) ? v : [v]).some((x) => typeof x === 'string' && x.toLowerCase().includes(want.toLowerCase()));
        // An array field holds the parameter's value among its items (a member's board ids).
        return Array.isArray(v) ? v.some((x) => String(x) === want) : String(v) === want;
      }),
    );
  return { size: () => all().length, slice: (start, end) => all().slice(start, end), indexOf: (id) => all().findIndex((r) => String(r['id']) === id) };
}

/**
 * The records of `source` that the request's query keeps (a list rule's `filters`, as the top-level
 * ones: `{since: {field: submitted_at, match: since}}`; an `equals` value may list several,
 * comma-separated, as `included_response_ids=a,b` does). A record whose field does not compare is kept.
 */
function queryFiltered(source: RecordSource, filters: Record<string, FilterEntry>, query: Json, idField = 'id'): RecordSource {
  const active = Object.entries(filters).filter(([param]) => query[param] !== undefined && query[param] !== null && query[param] !== '');
  if (active.length === 0) return source;
  const keep = (r: Json): boolean =>
    active.every(([param, rule]) => {
      const field = readPath(r, rule.field ?? param);
      const match = rule.match ?? 'equals';
      if (match === 'equals')
        return String(query[param])
          .split(',')
          .some((v) => String(field) === v.trim());
      const c = compareValues(field, query[param]);
      return c === undefined || (match === 'since' ? c >= 0 : match === 'before' ? c <= 0 : match === 'after' ? c > 0 : c < 0);
    });
  const all = (): Json[] => (source.slice(0, source.size()) as Json[]).filter(keep);
  return { size: () => all().length, slice: (start, end) => all().slice(start, end), indexOf: (id) => all().findIndex((r) => String(r[idField]) === id) };
}
