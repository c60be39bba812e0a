/**
 * One entity scaffolded from a root query field, or a field of the object one returns: its list (with pagination), incremental sync and
 * removals, get, create and update from mutations, and its record schema.
 */
import { getNamedType, isEnumType, isInterfaceType, isNonNullType, isObjectType, isScalarType, type GraphQLField, type GraphQLObjectType } from 'graphql';
import { safeName, shortText } from '../scaffold.ts';
import { argumentsOf, incrementalFilter, noRequiredArgs, norm, outputSchema, query, reached, selection, shapeOf, type Built, type Obj } from './schema.ts';

type Path = (string | number)[];
type Shape = NonNullable<ReturnType<typeof shapeOf>>;
type Field = GraphQLField<unknown, unknown>;

/**
 * Where an entity's records are listed: a root field (`projects`), or a field of the object a root
 * field returns (`viewer { repositories }`, `repository(owner, name) { issues }`).
 */
export interface EntitySource {
  name: string;
  parent?: Field | undefined;
  field: Field;
  shape: Shape;
}

/** What every entity of the scaffold shares. */
export interface EntityScope {
  guess: (path: Path, message: string) => void;
  report: string[];
  /** The request path: the endpoint's. */
  path: string;
  queryType: GraphQLObjectType;
  mutationType: GraphQLObjectType | null | undefined;
}

/** The entity's manifest section, keyed by its name. */
export function scaffoldEntity(source: EntitySource, scope: EntityScope): [string, Obj] {
  const { name, field, shape } = source;
  const at = ['entities', name];
  const node = shape.node;
  const sel = selection(node);
  const actions: Obj = {};
  const { list, lb } = listAction(source, at, sel, scope);
  actions['list'] = list;
  const sync = incrementalSync(field, node, name, at, list, lb, scope);
  getAction(source, at, sel, actions, scope);
  mutationActions(node, name, at, sel, actions, scope);
  const { properties, primaryKey } = recordOf(node, at, scope);
  return [
    name,
    {
      title: node.name,
      primary_key: primaryKey,
      record: { type: 'object', required: [primaryKey], properties },
      actions,
      ...(sync !== undefined ? { sync } : {}),
    },
  ];
}

/** The list action from the field, with Relay, page or offset pagination. */
function listAction({ name, parent, field, shape }: EntitySource, at: Path, sel: string, { guess, report, path }: EntityScope): { list: Obj; lb: Built } {
  const node = shape.node;
  const la = [...at, 'actions', 'list'];
  const { built: lb, doc, data } = reached({ parent, field }, guess, la);
  const inner =
    shape.kind === 'connection'
      ? shape.nodes === 'nodes'
        ? `{ nodes { ${sel} } pageInfo { hasNextPage endCursor } }`
        : `{ edges { node { ${sel} } } pageInfo { hasNextPage endCursor } }`
      : `{ ${sel} }`;
  const records =
    shape.kind === 'connection'
      ? shape.nodes === 'nodes'
        ? `{{body.data.${data}.nodes}}`
        : `{{pluck body.data.${data}.edges 'node'}}`
      : `{{body.data.${data}}}`;
  if (parent !== undefined)
    guess(
      [...la, 'params'],
      `the records are ${parent.name}${parent.args.length > 0 ? `(${parent.args.map((a) => a.name).join(', ')})` : ''}.${field.name}: ${parent.name}'s arguments are params`,
    );
  const list: Obj = {
    description: shortText(field.description) ?? `${node.name} records (${parent !== undefined ? `${parent.name}.` : ''}${field.name})`,
    ...(Object.keys(lb.params).length > 0 ? { params: lb.params } : {}),
    request: { method: 'POST', path, graphql: { query: doc(inner), ...(Object.keys(lb.variables).length > 0 ? { variables: lb.variables } : {}) } },
    response: { records, meta: { next_page: '{{null}}' } },
  };
  const argNames = field.args.map((a) => a.name);
  const limitArg = argNames.find((a) => ['limit', 'first', 'perpage', 'pagesize'].includes(norm(a)));
  if (shape.kind === 'connection' && argNames.includes('after')) {
    const next = `{{body.data.${data}.pageInfo.endCursor}}`;
    list['pagination'] = { type: 'graphql_cursor', param: 'after', next, has_more: `{{body.data.${data}.pageInfo.hasNextPage}}` };
    (list['response'] as Obj)['meta'] = { next_page: next };
    guess([...la, 'pagination'], 'Relay pagination: after takes pageInfo.endCursor while hasNextPage');
  } else if (argNames.some((a) => norm(a) === 'page')) {
    const page = argNames.find((a) => norm(a) === 'page')!;
    list['pagination'] = { type: 'page', param: safeName(page), start: 1, ...(limitArg ? { limit_param: safeName(limitArg), default_limit: 25 } : {}) };
    guess([...la, 'pagination'], `page numbers from 1 in ${page}${limitArg ? `; default_limit is a guess: the API's default page size for ${limitArg}` : ''}`);
  } else if (argNames.some((a) => ['offset', 'skip'].includes(norm(a))) && limitArg) {
    const off = argNames.find((a) => ['offset', 'skip'].includes(norm(a)))!;
    list['pagination'] = { type: 'offset', param: safeName(off), limit_param: safeName(limitArg), default_limit: 25 };
    guess([...la, 'pagination'], `offset in ${off}; default_limit is a guess: the API's default for ${limitArg}`);
  } else report.push(`${name}.list (${data}): no pagination inferred`);
  return { list, lb };
}

/**
 * Incremental sync: a filter argument comparing an updatedAt-like field of the node (Linear's
 * `filter: {updatedAt: {gt}}`) gives an updated_since param and sync.incremental; an
 * includeArchived-like argument with an archivedAt-like field, the removals of archived records.
 */
function incrementalSync(
  field: GraphQLField<unknown, unknown>,
  node: GraphQLObjectType,
  name: string,
  at: Path,
  list: Obj,
  lb: Built,
  { guess }: EntityScope,
): Obj | undefined {
  let sync: Obj | undefined;
  const since = incrementalFilter(field, node);
  if (since !== undefined && lb.params['updated_since'] === undefined) {
    const filterParam = safeName(since.arg);
    const part = `(when params.updated_since (object '${since.field}' (object '${since.op}' params.updated_since)))`;
    lb.params['updated_since'] = {
      type: 'string',
      format: 'date-time',
      description: `Only records whose ${since.field} is after this time (${since.arg}.${since.field}.${since.op})`,
    };
    lb.variables[since.arg] =
      lb.params[filterParam] === undefined
        ? `{{${part}}}`
        : since.and
          ? `{{default (when (and params.updated_since params.${filterParam}) (object 'and' (array ${part} params.${filterParam}))) ${part} params.${filterParam}}}`
          : `{{default ${part} params.${filterParam}}}`;
    list['params'] = lb.params;
    ((list['request'] as Obj)['graphql'] as Obj)['variables'] = lb.variables;
    sync = { incremental: { param: 'updated_since', cursor_field: since.field } };
    guess([...at, 'sync'], `incremental sync through ${since.arg}.${since.field}.${since.op}; deletes are found by the periodic full refresh`);
    const archivedArg = field.args.find((a) => /^include_?archived$/i.test(a.name) && getNamedType(a.type).name === 'Boolean');
    const archivedField = Object.values(node.getFields()).find((f) => /^archived_?at$/i.test(f.name) && isScalarType(getNamedType(f.type)));
    if (archivedArg !== undefined && archivedField !== undefined && lb.params[safeName(archivedArg.name)] !== undefined) {
      sync['removals'] = {
        entity: name,
        since_param: 'updated_since',
        params: { [safeName(archivedArg.name)]: true },
        when: `{{record.${archivedField.name}}}`,
        id: `{{record.${node.getFields()['id'] !== undefined ? 'id' : since.field}}}`,
      };
      guess([...at, 'sync', 'removals'], `records archived since the last run (${archivedArg.name}: true, ${archivedField.name} set) are removed from search`);
    }
  }
  return sync;
}

/**
 * get: a root field returning one node with an id argument; else `node(id:)` (a root field returning
 * an interface the node implements, by id); else the parent's field returning one node by a key
 * field (`repository(owner, name) { issue(number) }`); else the list filtered by ids.
 */
function getAction({ name, parent, field, shape }: EntitySource, at: Path, sel: string, actions: Obj, scope: EntityScope): void {
  const { guess, report, path, queryType } = scope;
  const node = shape.node;
  const roots = Object.values(queryType.getFields());
  const byId = (f: Field): boolean => f.args.some((a) => ['id', `${norm(node.name)}id`].includes(norm(a.name)));
  const one = roots.find((f) => shapeOf(f)?.kind === 'one' && shapeOf(f)?.node === node && byId(f));
  const ga = [...at, 'actions', 'get'];
  const getter = (description: string, b: Built, doc: string, data: string, byFragment = false): Obj => ({
    description,
    params: b.params,
    request: { method: 'POST', path, graphql: { query: doc, variables: b.variables } },
    response: { record: `{{body.data.${data}}}`, not_found_when: `{{not body.data.${data}${byFragment ? '.id' : ''}}}` },
  });
  if (one !== undefined) {
    const gb = argumentsOf(one, guess, ga);
    actions['get'] = getter(shortText(one.description) ?? `One ${node.name} (${one.name})`, gb, query('query', gb, one.name, `{ ${sel} }`), one.name);
    return;
  }
  const nodeField = roots.find(
    (f) =>
      f.args.some((a) => a.name === 'id') &&
      f.args.every((a) => a.name === 'id' || !isNonNull(a)) &&
      isInterfaceType(getNamedType(f.type)) &&
      node.getInterfaces().includes(getNamedType(f.type) as never),
  );
  if (nodeField !== undefined) {
    const gb = argumentsOf(nodeField, guess, ga);
    actions['get'] = getter(
      `One ${node.name} by id (${nodeField.name})`,
      gb,
      query('query', gb, nodeField.name, `{ ... on ${node.name} { ${sel} } }`),
      nodeField.name,
      true,
    );
    guess(ga, `get is ${nodeField.name}(id:) with a fragment on ${node.name}; a record of another type answers without an id, so not found`);
    return;
  }
  const keyed =
    parent === undefined
      ? undefined
      : Object.values((getNamedType(parent.type) as GraphQLObjectType).getFields()).find(
          (f) =>
            shapeOf(f)?.kind === 'one' &&
            shapeOf(f)?.node === node &&
            f.args.length > 0 &&
            f.args.filter(isNonNull).every((a) => node.getFields()[a.name] !== undefined),
        );
  if (parent !== undefined && keyed !== undefined) {
    const r = reached({ parent, field: keyed }, guess, ga);
    actions['get'] = getter(shortText(keyed.description) ?? `One ${node.name} (${parent.name}.${keyed.name})`, r.built, r.doc(`{ ${sel} }`), r.data);
    guess(
      ga,
      `get is ${parent.name}.${keyed.name} by ${keyed.args
        .filter(isNonNull)
        .map((a) => a.name)
        .join(', ')}`,
    );
    return;
  }
  const ids = field.args.find((a) => norm(a.name) === 'ids');
  if (ids !== undefined && shape.kind === 'list' && parent === undefined) {
    actions['get'] = {
      description: `One ${node.name} (${field.name} filtered by ids)`,
      params: { id: { type: 'string', required: true, minLength: 1 } },
      request: {
        method: 'POST',
        path,
        graphql: { query: `query ($ids: ${String(ids.type)}) { ${field.name}(ids: $ids) { ${sel} } }`, variables: { ids: '{{array params.id}}' } },
      },
      response: { record: `{{first body.data.${field.name}}}`, not_found_when: `{{not (first body.data.${field.name})}}` },
    };
    guess(ga, `get is ${field.name} with ids: [id]`);
  } else report.push(`${name}.get: no root field returns one ${node.name} by id`);
}

const isNonNull = (a: { type: unknown }): boolean => isNonNullType(a.type as never) && (a as { defaultValue?: unknown }).defaultValue === undefined;

/** create / update from mutations. */
function mutationActions(node: GraphQLObjectType, name: string, at: Path, sel: string, actions: Obj, { guess, report, path, mutationType }: EntityScope): void {
  for (const [action, verbs] of [
    ['create', ['create', 'add', 'new']],
    ['update', ['update', 'edit', 'change']],
  ] as const) {
    const m = mutationType
      ? Object.values(mutationType.getFields()).find((f) => verbs.some((v) => [`${v}${norm(node.name)}`, `${norm(node.name)}${v}`].includes(norm(f.name))))
      : undefined;
    if (m === undefined) {
      report.push(
        `${name}.${action}: no mutation named ${verbs[0]}${node.name} (or ${node.name.toLowerCase()}${verbs[0].replace(/^./, (c) => c.toUpperCase())})`,
      );
      continue;
    }
    const aa = [...at, 'actions', action];
    const mb = argumentsOf(m, guess, aa);
    const ret = getNamedType(m.type);
    let body = `{ ${sel} }`;
    let record = `{{body.data.${m.name}}}`;
    if (isObjectType(ret) && ret !== node) {
      const holder = Object.values(ret.getFields()).find((f) => getNamedType(f.type) === node);
      if (holder) {
        body = `{ ${holder.name} { ${sel} } }`;
        record = `{{body.data.${m.name}.${holder.name}}}`;
        guess([...aa, 'response', 'record'], `the ${ret.name} payload's ${holder.name}`);
      } else report.push(`${name}.${action} (${m.name}): returns ${ret.name}, which holds no ${node.name}`);
    }
    actions[action] = {
      description: shortText(m.description) ?? `${m.name}`,
      ...(Object.keys(mb.params).length > 0 ? { params: mb.params } : {}),
      request: {
        method: 'POST',
        path,
        graphql: { query: query('mutation', mb, m.name, body), ...(Object.keys(mb.variables).length > 0 ? { variables: mb.variables } : {}) },
      },
      response: { record },
    };
    guess([...aa], `the ${m.name} mutation`);
  }
}

/** The record schema: scalar and enum fields, and objects with an id; the primary key. */
function recordOf(node: GraphQLObjectType, at: Path, { guess }: EntityScope): { properties: Obj; primaryKey: string } {
  const properties: Obj = {};
  for (const f of Object.values(node.getFields())) {
    if (!noRequiredArgs(f) || f.deprecationReason) continue;
    const named = getNamedType(f.type);
    if (isScalarType(named) || isEnumType(named) || (isObjectType(named) && named.getFields()['id'] !== undefined))
      properties[f.name] = { ...outputSchema(f.type), ...(shortText(f.description) ? { description: shortText(f.description) } : {}) };
  }
  const pk = properties['id'] !== undefined ? 'id' : Object.keys(properties).find((k) => /id$/i.test(k));
  if (pk === undefined) {
    properties['id'] = { type: 'string' };
    guess([...at, 'primary_key'], `${node.name} has no id field: name the field that identifies a record`);
  }
  const primaryKey = pk ?? 'id';
  const pkSchema = properties[primaryKey] as Obj;
  if (Array.isArray(pkSchema['type'])) pkSchema['type'] = (pkSchema['type'] as string[])[0];
  return { properties, primaryKey };
}
