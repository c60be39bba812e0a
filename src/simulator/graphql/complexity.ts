/**
 * A query-cost budget for the GraphQL simulator (sidecar `graphql.complexity`), as APIs that
 * meter by query cost do (a "complexity" budget, points).
 *
 * Cost: every field costs 1; a field with a selection adds its selection's cost times how many
 * elements it can return: the length of its `ids` argument, else its `limit`/`first` argument as
 * sent, else the sidecar's size for it (`sizes`, by `Type.field` or field name), else the declared
 * default of its `limit`/`first` argument, else `list_size` for a list (default 1), else 1.
 * The budget is a window that opens on the first charged query and comes back whole when it ends.
 */
import {
  getNamedType,
  getNullableType,
  isAbstractType,
  isListType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import type { GraphqlSidecar } from '../sidecar.ts';

export type ComplexitySidecar = NonNullable<GraphqlSidecar['complexity']>;

/** The budget, mutable at runtime so tests can exhaust it on purpose. */
export class ComplexityBudget {
  budget: number;
  windowSeconds: number;
  maxQuery: number;
  private windowStart: number | null = null;
  private used = 0;

  constructor(
    opts: ComplexitySidecar,
    private readonly now: () => number,
  ) {
    this.budget = opts.budget;
    this.windowSeconds = opts.window_seconds;
    this.maxQuery = opts.max_query ?? Number.MAX_SAFE_INTEGER;
  }

  private roll(): void {
    if (this.windowStart !== null && this.now() >= this.windowStart + this.windowSeconds * 1000) this.reset();
  }

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

  /** Charge `cost`; the budget before and after, or null when it does not fit. */
  charge(cost: number): { before: number; after: number } | null {
    this.roll();
    const before = this.budget - this.used;
    if (cost > before) return null;
    this.windowStart ??= this.now();
    this.used += cost;
    return { before, after: before - cost };
  }

  reset(): void {
    this.windowStart = null;
    this.used = 0;
  }
}

function argValue(node: ValueNode | undefined, variables: Record<string, unknown>): unknown {
  if (node === undefined) return undefined;
  if (node.kind === Kind.VARIABLE) return variables[node.name.value];
  if (node.kind === Kind.INT) return Number(node.value);
  if (node.kind === Kind.LIST) return node.values.map((v) => argValue(v, variables));
  return undefined;
}

/** The cost of one operation. */
export function queryCost(
  schema: GraphQLSchema,
  doc: DocumentNode,
  op: OperationDefinitionNode,
  variables: Record<string, unknown>,
  c: ComplexitySidecar,
): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const multiplier = (parent: GraphQLNamedType, f: GraphQLField<unknown, unknown>, args: Record<string, unknown>): number => {
    if (Array.isArray(args['ids'])) return args['ids'].length;
    for (const a of ['limit', 'first']) if (typeof args[a] === 'number') return args[a];
    const size = c.sizes?.[`${parent.name}.${f.name}`] ?? c.sizes?.[f.name];
    if (size !== undefined) return size;
    for (const a of f.args) if ((a.name === 'limit' || a.name === 'first') && typeof a.defaultValue === 'number') return a.defaultValue;
    return isListType(getNullableType(f.type)) ? (c.list_size ?? 1) : 1;
  };
  const cost = (set: SelectionSetNode | undefined, parent: GraphQLNamedType | undefined, seen: Set<string>): number => {
    if (set === undefined) return 0;
    let total = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        if (sel.name.value.startsWith('__')) continue;
        const f =
          parent !== undefined && (isObjectType(parent) || isAbstractType(parent) || 'getFields' in parent)
            ? (parent as { getFields(): Record<string, GraphQLField<unknown, unknown>> }).getFields()[sel.name.value]
            : undefined;
        if (sel.selectionSet === undefined || f === undefined || parent === undefined) {
          total += 1;
          continue;
        }
        const args = Object.fromEntries((sel.arguments ?? []).map((a) => [a.name.value, argValue(a.value, variables)]));
        total += 1 + multiplier(parent, f, args) * cost(sel.selectionSet, getNamedType(f.type), seen);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        total += cost(sel.selectionSet, sel.typeCondition ? (schema.getType(sel.typeCondition.name.value) ?? parent) : parent, seen);
      } else if (!seen.has(sel.name.value)) {
        const frag = fragments.get(sel.name.value);
        if (frag !== undefined) total += cost(frag.selectionSet, schema.getType(frag.typeCondition.name.value) ?? parent, new Set([...seen, sel.name.value]));
      }
    }
    return total;
  };
  const root = op.operation === 'mutation' ? schema.getMutationType() : op.operation === 'subscription' ? schema.getSubscriptionType() : schema.getQueryType();
  return Math.max(1, cost(op.selectionSet, root ?? undefined, new Set()));
}
