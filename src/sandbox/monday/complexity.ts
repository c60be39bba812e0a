/**
 * Complexity: Monday's primary rate limit (developer.monday.com/api-reference/docs/rate-limits).
 *
 * - Every query has a cost; a single query may cost at most 5,000,000 points.
 * - Personal API tokens share one read+write budget of 10,000,000 points per minute (paid plans).
 * - "Per-minute budgets follow a sliding window and reset 60 seconds after the first API call was
 *   made": the window opens on the first call and the whole budget comes back when it closes.
 *
 * Monday does not publish its cost formula. The simulator's is the documented intuition: each
 * field costs 1, and a field returning a list multiplies its selection's cost by how many
 * elements it can return (its `limit`, the number of `ids`, or the collection's size), so
 * nested pages cost what the docs warn they do. Tests only rely on the budget arithmetic.
 */
import { Kind, type DocumentNode, type FieldNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionSetNode, type ValueNode } from 'graphql';

export interface ComplexityOptions {
  /** Points per window; default 10,000,000 (personal token, paid plan). */
  budget?: number;
  /** Window length in seconds; default 60. */
  windowSeconds?: number;
  /** Largest cost of one query; default 5,000,000. */
  maxQuery?: number;
}

/** The per-minute complexity budget, mutable at runtime so tests can exhaust it on purpose. */
export class ComplexityBudget {
  budget: number;
  windowSeconds: number;
  maxQuery: number;
  private windowStart: number | null = null;
  private used = 0;

  constructor(
    opts: ComplexityOptions,
    private readonly now: () => number,
  ) {
    this.budget = opts.budget ?? 10_000_000;
    this.windowSeconds = opts.windowSeconds ?? 60;
    this.maxQuery = opts.maxQuery ?? 5_000_000;
  }

  private roll(): void {
    if (this.windowStart !== null && this.now() >= this.windowStart + this.windowSeconds * 1000) {
      this.windowStart = null;
      this.used = 0;
    }
  }

  /** Points left in the current window. */
  remaining(): number {
    this.roll();
    return Math.max(0, this.budget - this.used);
  }

  /** Whole seconds until the window resets (the full window when none is open). */
  resetInSeconds(): number {
    this.roll();
    if (this.windowStart === null) return this.windowSeconds;
    return Math.max(1, Math.ceil((this.windowStart + this.windowSeconds * 1000 - this.now()) / 1000));
  }

  /** Charge `cost`; returns the budget before and after, or null when it does not fit. */
  charge(cost: number): { before: number; after: number } | null {
    this.roll();
    const before = this.budget - this.used;
    if (cost > before) return null;
    this.windowStart ??= this.now();
    this.used += cost;
    return { before, after: before - cost };
  }

  /** Forget the current window (full budget again). */
  reset(): void {
    this.windowStart = null;
    this.used = 0;
  }
}

/** Sizes of the collections a list field can return when it has no limit. */
export interface CollectionSizes {
  users: number;
  teams: number;
  tags: number;
  columns: number;
  groups: number;
}

function argValue(node: ValueNode | undefined, variables: Record<string, unknown>): unknown {
  if (node === undefined) return undefined;
  switch (node.kind) {
    case Kind.VARIABLE:
      return variables[node.name.value];
    case Kind.INT:
      return Number(node.value);
    case Kind.LIST:
      return node.values.map((v) => argValue(v, variables));
    case Kind.STRING:
    case Kind.ENUM:
      return node.value;
    default:
      return undefined;
  }
}

/** Estimated cost of one operation. */
export function queryCost(doc: DocumentNode, op: OperationDefinitionNode, variables: Record<string, unknown>, sizes: CollectionSizes): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);

  const multiplier = (field: FieldNode, parent: string | undefined): number => {
    // ItemsResponse.items is the page itself: its size is already the items_page limit.
    if (field.name.value === 'items' && (parent === 'items_page' || parent === 'next_items_page')) return 1;
    const arg = (name: string): unknown => argValue(field.arguments?.find((a) => a.name.value === name)?.value, variables);
    const limit = arg('limit');
    const ids = arg('ids');
    const idCount = Array.isArray(ids) ? ids.length : undefined;
    switch (field.name.value) {
      case 'items_page':
      case 'next_items_page':
        return typeof limit === 'number' ? limit : 25;
      case 'boards':
      case 'workspaces':
      case 'updates':
      case 'items':
        return idCount ?? (typeof limit === 'number' ? limit : 25);
      case 'users':
      case 'subscribers':
      case 'owners':
      case 'owners_subscribers':
      case 'users_subscribers':
        return idCount ?? (typeof limit === 'number' ? limit : sizes.users);
      case 'teams':
      case 'team_owners':
      case 'team_subscribers':
      case 'teams_subscribers':
      case 'team_owners_subscribers':
        return idCount ?? sizes.teams;
      case 'tags':
        return idCount ?? sizes.tags;
      case 'columns':
      case 'column_values':
        return idCount ?? sizes.columns;
      case 'groups':
        return idCount ?? sizes.groups;
      case 'replies':
      case 'likes':
      case 'viewers':
      case 'assets':
      case 'persons_and_teams':
      case 'subitems':
        return 2;
      default:
        return 1;
    }
  };

  const cost = (set: SelectionSetNode | undefined, parent: string | undefined, seen: Set<string>): number => {
    if (set === undefined) return 0;
    let total = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        if (sel.name.value.startsWith('__')) continue;
        total += sel.selectionSet ? 1 + multiplier(sel, parent) * cost(sel.selectionSet, sel.name.value, seen) : 1;
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        total += cost(sel.selectionSet, parent, seen);
      } else if (!seen.has(sel.name.value)) {
        const frag = fragments.get(sel.name.value);
        total += cost(frag?.selectionSet, parent, new Set([...seen, sel.name.value]));
      }
    }
    return total;
  };
  return Math.max(1, cost(op.selectionSet, undefined, new Set()));
}
