/**
 * The rows of a GraphQL list field: its filter argument (comparators on the sidecar's declared
 * fields, and/or), archived records left out unless asked for, ids, and ordering.
 */
import type { GraphqlErrors } from './errors.ts';
import { compare, COMPARATORS } from './schema-types.ts';
import type { GraphqlCtx, Rec } from './types.ts';

export interface RowFilters {
  /** The rows of a list field after its filter, archived and ordering arguments. */
  rowsOf(rows: Rec[], args: Rec): Rec[];
}

export function rowFilters(ctx: Pick<GraphqlCtx, 'g'>, errors: GraphqlErrors): RowFilters {
  const { g } = ctx;
  const { fieldError } = errors;
  const filterArg = g.filter_argument ?? 'filter';
  const orderArg = g.order_by?.argument ?? 'orderBy';
  const orderDir = g.order_by?.direction ?? 'asc';
  const archivedField = g.archived?.field ?? 'archivedAt';
  const archivedArg = g.archived?.argument ?? 'includeArchived';
  const filterable = new Set(g.filters ?? []);
  /** Whether a record passes a filter argument ({updatedAt: {gt}}, {team: {id: {eq}}}, and/or). */
  const passes = (rec: Rec, filter: Rec, prefix: string[] = []): boolean => {
    for (const [k, v] of Object.entries(filter)) {
      if (v === undefined || v === null) continue;
      if ((k === 'and' || k === 'or') && Array.isArray(v)) {
        const results = v.map((f) => passes(rec, f as Rec, prefix));
        if (k === 'and' ? results.includes(false) : !results.includes(true)) return false;
        continue;
      }
      const path = [...prefix, k];
      const obj = v as Rec;
      const isComparator = Object.keys(obj).length > 0 && Object.keys(obj).every((c) => COMPARATORS.has(c));
      if (!isComparator) {
        if (!passes(rec, obj, path)) return false;
        continue;
      }
      if (!filterable.has(path.join('.')))
        throw fieldError('invalid', `The simulator does not filter on ${path.join('.')} (declare it in the sidecar's graphql.filters)`);
      if (!matchComparator(readPath(rec, path), obj)) return false;
    }
    return true;
  };

  /** The rows of a list field after its filter, archived and ordering arguments. */
  const rowsOf = (rows: Rec[], args: Rec): Rec[] => {
    let out = rows;
    if (args[archivedArg] !== true) out = out.filter((r) => r[archivedField] === null || r[archivedField] === undefined);
    const filter = args[filterArg];
    if (filter !== null && typeof filter === 'object') out = out.filter((r) => passes(r, filter as Rec));
    if (Array.isArray(args['ids'])) {
      const ids = new Set((args['ids'] as unknown[]).map(String));
      out = out.filter((r) => ids.has(String(r['id'])));
    }
    const order = args[orderArg];
    if (typeof order === 'string') {
      out = [...out].sort((a, b) => compare(a[order] ?? '', b[order] ?? '') * (orderDir === 'desc' ? -1 : 1));
    }
    return out;
  };
  return { rowsOf };
}

/** The value at a path of a record; a related record ({__ref}) answers its id. */
export function readPath(rec: Rec, path: string[]): unknown {
  let v: unknown = rec;
  for (const p of path) {
    if (v === null || typeof v !== 'object') return undefined;
    const o = v as Rec;
    if (o['__ref'] !== undefined && typeof o['__ref'] === 'string') return p === 'id' ? o['__ref'] : undefined;
    v = o[p];
  }
  if (v !== null && typeof v === 'object' && typeof (v as Rec)['__ref'] === 'string') return (v as Rec)['__ref'];
  return v;
}

export function matchComparator(value: unknown, cmp: Rec): boolean {
  for (const [op, want] of Object.entries(cmp)) {
    if (want === undefined || (want === null && op !== 'eq' && op !== 'null')) continue;
    const ok = (() => {
      switch (op) {
        case 'eq':
          return want === null ? value === null || value === undefined : value !== null && value !== undefined && compare(value, want) === 0;
        case 'neq':
          return value === null || value === undefined || compare(value, want) !== 0;
        case 'gt':
          return value !== null && value !== undefined && compare(value, want) > 0;
        case 'gte':
          return value !== null && value !== undefined && compare(value, want) >= 0;
        case 'lt':
          return value !== null && value !== undefined && compare(value, want) < 0;
        case 'lte':
          return value !== null && value !== undefined && compare(value, want) <= 0;
        case 'in':
          return Array.isArray(want) && want.some((w) => value !== null && value !== undefined && compare(value, w) === 0);
        case 'nin':
          return Array.isArray(want) && !want.some((w) => value !== null && value !== undefined && compare(value, w) === 0);
        case 'null':
          return want === true ? value === null || value === undefined : value !== null && value !== undefined;
        case 'contains':
          return typeof value === 'string' && value.includes(String(want));
        case 'containsIgnoreCase':
          return typeof value === 'string' && value.toLowerCase().includes(String(want).toLowerCase());
        case 'eqIgnoreCase':
          return typeof value === 'string' && value.toLowerCase() === String(want).toLowerCase();
        case 'startsWith':
          return typeof value === 'string' && value.startsWith(String(want));
        case 'endsWith':
          return typeof value === 'string' && value.endsWith(String(want));
        default:
          return true;
      }
    })();
    if (!ok) return false;
  }
  return true;
}
