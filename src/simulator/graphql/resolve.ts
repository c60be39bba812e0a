/**
 * Resolving GraphQL fields: code a caller gives by "Type.field", the sidecar's declared fields and
 * lists (lists.ts), root lists and gets of a resource (by id or any key field), `node(id:)`, cursor
 * pages, mutations, connections of a record (the records pointing back at it) and one of them by
 * a key, related records, and fillers for the rest.
 */
import {
  getNamedType,
  getNullableType,
  isAbstractType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLField,
  type GraphQLFieldResolver,
  type GraphQLObjectType,
  type GraphQLOutputType,
} from 'graphql';
import { seedRandom } from '../core/store.ts';
import type { RowFilters } from './filters.ts';
import { findByKeys, keyArgs, keyText, pointingBack } from './keys.ts';
import { checkDeclared, graphqlLists } from './lists.ts';
import type { Mutate } from './mutations.ts';
import type { GraphqlPages } from './pages.ts';
import type { GraphqlStore } from './records.ts';
import { connectionNode, fill, listNode } from './schema-types.ts';
import type { GraphqlContext, GraphqlCtx, GraphqlResource, Rec } from './types.ts';

export interface ResolverParts {
  store: GraphqlStore;
  filters: RowFilters;
  pages: GraphqlPages;
  mutate: Mutate;
}

export function fieldResolverOf(
  ctx: GraphqlCtx,
  parts: ResolverParts,
): { fieldResolver: GraphQLFieldResolver<unknown, GraphqlContext>; lists: ReturnType<typeof graphqlLists> } {
  const { schema, g, options, seed, resources, queryType, mutationType } = ctx;
  const { fieldError } = ctx.errors;
  const { scalarValue, refFields } = parts.store;
  const { rowsOf } = parts.filters;
  const { connection, plainList, cursorPage } = parts.pages;
  const mutate = parts.mutate;
  const cp = g.cursor_pages ?? {};
  const lists = graphqlLists(g, {
    records: (t) => resources.get(t)?.records,
    declared: (type, field, rec, ctx) => {
      // The code's variables, and the request's: the API version and its kind, the versions served, the query's complexity charge.
      const served = g.versions?.served ?? {};
      const request =
        ctx === undefined
          ? {}
          : {
              version: ctx.version,
              version_kind: served[ctx.version ?? ''],
              versions: Object.entries(served).map(([value, kind]) => ({ value, kind })),
              complexity: ctx.complexity,
            };
      const vars: Rec = { ...(options.vars?.() ?? {}), ...request };
      const t = g.fields?.[`${type.name}.${field}`];
      return t === undefined ? undefined : fill(t, (k) => rec[k] ?? vars[k]);
    },
    invalid: (message) => fieldError('invalid', message),
  });
  checkDeclared(schema, g);
  const resolveRef = (v: unknown, t: GraphQLOutputType): unknown => {
    if (v !== null && typeof v === 'object' && typeof (v as Rec)['__ref'] === 'string')
      return resources.get(getNamedType(t).name)?.records.get((v as Rec)['__ref'] as string) ?? null;
    return v;
  };
  /** A value for a field the stored object does not hold (payload extras, objects that are not resources). */
  const filler = (f: GraphQLField<unknown, unknown>): unknown => {
    if (!isNonNullType(f.type)) return null;
    const inner = getNullableType(f.type);
    if (isListType(inner)) return [];
    const named = getNamedType(f.type);
    if (isObjectType(named)) return {};
    if (f.name === 'success' && named.name === 'Boolean') return true;
    return scalarValue(named.name, f.name, 0, seedRandom(seed, f.name), isEnumType(named) ? named.getValues().map((v) => v.name) : undefined);
  };
  const byKeys = (r: GraphqlResource, rows: Iterable<Rec>, keys: [string, unknown][]): Rec => {
    const rec = findByKeys(r, rows, keys);
    if (rec === undefined)
      throw fieldError('not_found', `${r.type.name} not found: ${keyText(keys)}`, {
        type: r.type.name,
        ...(keys.length === 1 && keys[0]?.[0] === 'id' ? { id: keyText(keys) } : Object.fromEntries(keys)),
      });
    return rec;
  };
  const fieldResolver: GraphQLFieldResolver<unknown, GraphqlContext> = (source, args, ctx, info) => {
    const key = `${info.parentType.name}.${info.fieldName}`;
    const f = info.parentType.getFields()[info.fieldName] as GraphQLField<unknown, unknown>;
    const named = getNamedType(f.type);
    /** A list of records after its declared rule and the generic ids, filter, order and limit/page arguments. */
    const listed = (rows: Rec[]): unknown =>
      (connectionNode(f.type) !== undefined ? connection : plainList)(rowsOf(lists.select(key, named as GraphQLObjectType, rows, args), args), args);
    const coded = options.resolvers?.[key];
    if (coded !== undefined) {
      // Rows the code gives still take the field's declared list rule.
      const out = coded(source, args, ctx, info);
      return g.lists?.[key] !== undefined && Array.isArray(out) ? listed(out as Rec[]) : out;
    }
    if (g.fields?.[key] !== undefined) {
      const value = lists.related(f.type, lists.declared(info.parentType, info.fieldName, (source ?? {}) as Rec, ctx));
      return Array.isArray(value) && isObjectType(named) && resources.has(named.name) ? listed(value as Rec[]) : value;
    }
    if (info.parentType === queryType && info.fieldName === cp.next) {
      const page = cursorPage([], args['limit'] as number, String(args['cursor']));
      const list = Object.values((getNamedType(f.type) as GraphQLObjectType).getFields()).find((x) => isListType(getNullableType(x.type)));
      return { cursor: page.cursor, ...(list !== undefined ? { [list.name]: page.rows } : {}) };
    }
    if (info.parentType === queryType && isAbstractType(named) && typeof args['id'] === 'string') {
      // node(id:): the record of any type implementing the interface (or in the union) with that id.
      const holder = [...resources.values()].find((r) => schema.isSubType(named, r.type) && r.records.has(args['id'] as string));
      if (holder === undefined) throw fieldError('not_found', `${named.name} not found: ${args['id']}`, { type: named.name, id: args['id'] });
      return holder.records.get(args['id']);
    }
    if (info.parentType === queryType) {
      const node = connectionNode(f.type);
      const list = node === undefined ? listNode(f.type) : undefined;
      const r = resources.get((node ?? list ?? getNamedType(f.type)).name);
      if (r === undefined) return filler(f);
      if (node !== undefined || list !== undefined) return listed([...r.records.values()]);
      const keys = keyArgs(f, r.type, args);
      // graphql.missing: null: a nullable lookup of a record that does not exist answers null, no error (Shopify's product(id:)).
      if (keys.length > 0 && g.missing === 'null' && !isNonNullType(f.type)) return findByKeys(r, r.records.values(), keys) ?? null;
      return keys.length > 0 ? byKeys(r, r.records.values(), keys) : ([...r.records.values()][0] ?? null);
    }
    if (mutationType !== undefined && info.parentType === mutationType) return mutate(f, args);
    const src = (source ?? {}) as Rec;
    const declaredRows = isObjectType(named) ? lists.rows(key, named, src, info.fieldName) : undefined;
    if (declaredRows !== undefined) return listed(declaredRows);
    // A connection of a record: the records of the node type that point back at this one.
    const node = connectionNode(f.type);
    const back = (child: GraphqlResource): Rec[] =>
      pointingBack(
        child,
        refFields(child.type).filter((rf) => getNamedType(rf.type).name === info.parentType.name),
        info.parentType.name,
        info.fieldName,
        src['id'],
      );
    if (node !== undefined && !(info.fieldName in src)) {
      const child = resources.get(node.name);
      if (child === undefined || src['id'] === undefined) return connection([], args);
      return connection(rowsOf(back(child), args), args);
    }
    // One record of a parent's by a key (`repository { issue(number:) }`), among those pointing back at it.
    const one = isObjectType(named) && !isListType(getNullableType(f.type)) ? resources.get(named.name) : undefined;
    if (one !== undefined && !(info.fieldName in src) && src['id'] !== undefined) {
      const keys = keyArgs(f, one.type, args);
      if (keys.length > 0) return byKeys(one, back(one), keys);
    }
    if (!(info.fieldName in src)) return filler(f);
    return resolveRef(src[info.fieldName], f.type);
  };
  return { fieldResolver, lists };
}
