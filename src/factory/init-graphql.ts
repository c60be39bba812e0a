/**
 * `switchboard init <type> --from-graphql <sdl> --endpoint <url>`: a manifest scaffolded from a
 * GraphQL schema (SDL), read with graphql-js:
 *
 * - entities from root query fields that return a list of an object type (`boards: [Board]`) or a
 *   Relay connection (`projects(first, after): ProjectConnection` with edges/nodes and pageInfo);
 * - get from a root field returning one of that type with an id argument (`project(id: ID!)`), else
 *   from the list field filtered by `ids` (`first` of the answer, not_found_when it is empty);
 * - create/update from mutations named create<Type>/<type>Create/add<Type> and update<Type>/
 *   <type>Update/edit<Type> (a payload object holding the type is unwrapped);
 * - params from the field arguments (a single `input` object is spread into params and put back
 *   in the variables); selections of every scalar field, and `{ id }` of object fields; deprecated
 *   fields, arguments and input fields are left out (the contract test refuses them);
 * - pagination from pageInfo (endCursor/hasNextPage with first/after), else page or offset args;
 * - incremental sync from a filter argument comparing an updatedAt-like field with gt
 *   (`updated_since` → `filter: {updatedAt: {gt}}`), and removals of archived records when the
 *   list takes includeArchived and the node has archivedAt.
 *
 * Every query is sent as a document with variables (values are never spliced into query text).
 */
import { readFileSync } from 'node:fs';
import {
  buildSchema,
  getNamedType,
  getNullableType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';
import { SwitchboardError } from '../errors/index.ts';
import { safeName, shortText, withType, type Guess, type Scaffold } from './scaffold.ts';

type Obj = Record<string, unknown>;

export interface GraphqlInitOptions {
  type: string;
  entities?: string[] | undefined;
  descriptionPath: string;
  source: string;
  /** The GraphQL endpoint, e.g. https://api.example.com/graphql. */
  endpoint: string;
}

/** JSON Schema of a GraphQL input type (one level of input objects kept). */
function inputSchema(t: GraphQLInputType, depth = 1): Obj {
  const inner = getNullableType(t);
  if (isListType(inner)) return { type: 'array', items: inputSchema(inner.ofType as GraphQLInputType, depth) };
  if (isEnumType(inner)) return { type: 'string', enum: inner.getValues().map((v) => v.name) };
  if (isInputObjectType(inner)) {
    if (depth === 0) return { type: 'object' };
    return { type: 'object', properties: Object.fromEntries(Object.values(inner.getFields()).map((f) => [f.name, inputSchema(f.type, depth - 1)])) };
  }
  if (isScalarType(inner)) {
    switch (inner.name) {
      case 'Int':
        return { type: 'integer' };
      case 'Float':
        return { type: 'number' };
      case 'Boolean':
        return { type: 'boolean' };
      case 'String':
      case 'ID':
        return { type: 'string' };
      default:
        return /json/i.test(inner.name) ? {} : { type: 'string', description: `GraphQL ${inner.name}` };
    }
  }
  return {};
}

/** JSON Schema of a GraphQL output field for the record (nullable unless non-null). */
function outputSchema(t: GraphQLOutputType): Obj {
  const nullable = !isNonNullType(t);
  const inner = getNullableType(t);
  const withNull = (s: Obj): Obj => (nullable && typeof s['type'] === 'string' ? { ...s, type: [s['type'], 'null'], ...(Array.isArray(s['enum']) ? { enum: [...(s['enum'] as unknown[]), null] } : {}) } : s);
  if (isListType(inner)) return withNull({ type: 'array' });
  if (isObjectType(inner)) return withNull({ type: 'object' });
  if (isEnumType(inner)) return withNull({ type: 'string', enum: inner.getValues().map((v) => v.name) });
  if (isScalarType(inner)) {
    const s = inputSchema(inner);
    return s['type'] === undefined ? {} : withNull({ type: s['type'] });
  }
  return {};
}

/** A field's arguments none of which is required (what a selection may include unasked). */
const noRequiredArgs = (f: GraphQLField<unknown, unknown>): boolean => f.args.every((a) => !isNonNullType(a.type) || a.defaultValue !== undefined);

/** The selection of a record: every scalar/enum field, and `{ id }` (or `{ __typename }`) of object fields. */
function selection(t: GraphQLObjectType): string {
  const parts: string[] = [];
  for (const f of Object.values(t.getFields())) {
    if (!noRequiredArgs(f) || f.deprecationReason) continue;
    const named = getNamedType(f.type);
    if (isScalarType(named) || isEnumType(named)) parts.push(f.name);
    else if (isObjectType(named) && named.getFields()['id'] !== undefined) parts.push(`${f.name} { id }`);
  }
  return parts.join(' ');
}

/** What a root field returns: a list of T, a Relay connection of T, or one T. */
function shapeOf(f: GraphQLField<unknown, unknown>): { kind: 'list' | 'connection' | 'one'; node: GraphQLObjectType; nodes?: 'edges' | 'nodes' } | undefined {
  const inner = getNullableType(f.type);
  if (isListType(inner)) {
    const node = getNamedType(inner);
    return isObjectType(node) ? { kind: 'list', node } : undefined;
  }
  if (!isObjectType(inner)) return undefined;
  const fields = inner.getFields();
  if (fields['pageInfo'] !== undefined) {
    const nodesField = fields['nodes'];
    if (nodesField !== undefined && isObjectType(getNamedType(nodesField.type))) return { kind: 'connection', node: getNamedType(nodesField.type) as GraphQLObjectType, nodes: 'nodes' };
    const edges = fields['edges'];
    const edge = edges !== undefined ? getNamedType(edges.type) : undefined;
    const node = edge !== undefined && isObjectType(edge) ? edge.getFields()['node'] : undefined;
    if (node !== undefined && isObjectType(getNamedType(node.type))) return { kind: 'connection', node: getNamedType(node.type) as GraphQLObjectType, nodes: 'edges' };
  }
  return { kind: 'one', node: inner };
}

interface Built {
  params: Obj;
  /** `$a: Type, ...` */
  declarations: string;
  /** `a: $a, ...` */
  args: string;
  variables: Obj;
}

/** Params, variable declarations, field arguments and variables of a field; a lone `input` object is spread. */
function argumentsOf(field: GraphQLField<unknown, unknown>, guess: (path: (string | number)[], m: string) => void, at: (string | number)[]): Built {
  const params: Obj = {};
  const variables: Obj = {};
  const decl: string[] = [];
  const args: string[] = [];
  for (const a of field.args as GraphQLArgument[]) {
    if (a.deprecationReason && !isNonNullType(a.type)) continue;
    decl.push(`$${a.name}: ${String(a.type)}`);
    args.push(`${a.name}: $${a.name}`);
    const inner = getNullableType(a.type);
    if (isInputObjectType(inner) && (a.name === 'input' || a.name === 'data' || field.args.length === 1)) {
      const spread: Obj = {};
      for (const f of Object.values(inner.getFields())) {
        // Deprecated input fields are left out: the vendor is retiring them.
        if (f.deprecationReason) continue;
        const name = safeName(f.name);
        params[name] = { ...withType(inputSchema(f.type)), ...(isNonNullType(f.type) && f.defaultValue === undefined ? { required: true } : {}), ...(shortText(f.description) ? { description: shortText(f.description) } : {}) };
        spread[f.name] = `{{params.${name}}}`;
      }
      variables[a.name] = spread;
      guess([...at, 'params'], `the fields of the ${a.name} argument (${inner.name}) are params; the variables put them back in ${a.name}`);
      continue;
    }
    const name = safeName(a.name);
    params[name] = { ...withType(inputSchema(a.type)), ...(isNonNullType(a.type) && a.defaultValue === undefined ? { required: true } : {}), ...(shortText(a.description) ? { description: shortText(a.description) } : {}) };
    variables[a.name] = `{{params.${name}}}`;
  }
  return { params, declarations: decl.join(', '), args: args.join(', '), variables };
}

const query = (op: 'query' | 'mutation', b: Built, field: string, body: string): string =>
  `${op}${b.declarations ? ` (${b.declarations})` : ''} { ${field}${b.args ? `(${b.args})` : ''} ${body} }`;

const norm = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '');

/**
 * The filter argument of a list field that compares an updatedAt-like scalar field of the node
 * with gt (or gte): `filter: IssueFilter` where IssueFilter.updatedAt is a comparator with gt.
 */
function incrementalFilter(field: GraphQLField<unknown, unknown>, node: GraphQLObjectType): { arg: string; field: string; op: string; and: boolean } | undefined {
  for (const a of field.args) {
    const t = getNamedType(a.type);
    if (!isInputObjectType(t) || a.name === 'input') continue;
    const fields = t.getFields();
    for (const name of ['updatedAt', 'updated_at', 'modifiedAt', 'modified_at', 'lastModified']) {
      const cmp = fields[name];
      const own = node.getFields()[name];
      if (cmp === undefined || own === undefined || !isScalarType(getNamedType(own.type))) continue;
      const ct = getNamedType(cmp.type);
      if (!isInputObjectType(ct)) continue;
      const op = ['gt', 'gte', 'after'].find((o) => ct.getFields()[o] !== undefined);
      if (op !== undefined) return { arg: a.name, field: name, op, and: fields['and'] !== undefined && isListType(getNullableType(fields['and'].type)) };
    }
  }
  return undefined;
}

export async function scaffoldFromGraphql(file: string, o: GraphqlInitOptions): Promise<Scaffold> {
  let schema: GraphQLSchema;
  try {
    schema = buildSchema(readFileSync(file, 'utf8'), { assumeValidSDL: false });
  } catch (e) {
    throw new SwitchboardError('invalid_params', `Cannot read the GraphQL schema ${file}: ${(e as Error).message}`, { details: { file } });
  }
  let endpoint: URL;
  try {
    endpoint = new URL(o.endpoint);
    if (!/^https?:$/.test(endpoint.protocol)) throw new Error('not http');
  } catch {
    throw new SwitchboardError('invalid_params', `--endpoint must be an http(s) URL, e.g. https://api.example.com/graphql; got "${o.endpoint}"`);
  }
  const guesses: Guess[] = [];
  const report: string[] = [];
  const guess = (path: (string | number)[], message: string): void => void guesses.push({ path, message });
  const queryType = schema.getQueryType();
  if (!queryType) throw new SwitchboardError('invalid_params', `${file} has no Query type`);
  const mutationType = schema.getMutationType();
  const path = endpoint.pathname === '' ? '/' : endpoint.pathname;

  // Entities: root fields returning lists or connections of object types.
  const candidates = Object.values(queryType.getFields())
    .map((f) => ({ field: f, shape: shapeOf(f) }))
    .filter((c): c is { field: GraphQLField<unknown, unknown>; shape: NonNullable<ReturnType<typeof shapeOf>> } => c.shape !== undefined && c.shape.kind !== 'one');
  const available = candidates.map((c) => safeName(c.field.name));
  if (o.entities && o.entities.length > 0) {
    const unknown = o.entities.filter((e) => !available.includes(e));
    if (unknown.length > 0) throw new SwitchboardError('invalid_params', `--entities: ${unknown.join(', ')} not found in the schema; entities (root query fields returning lists or connections): ${available.join(', ')}`, { details: { unknown, valid: available } });
  }
  const chosen = o.entities && o.entities.length > 0 ? o.entities.map((e) => candidates.find((c) => safeName(c.field.name) === e)!) : candidates;
  if (chosen.length === 0) throw new SwitchboardError('invalid_params', `No entity found in ${file}: no root query field returns a list or a connection`);

  const entities: Obj = {};
  for (const { field, shape } of chosen) {
    const name = safeName(field.name);
    const at = ['entities', name];
    const node = shape.node;
    const sel = selection(node);
    const actions: Obj = {};

    // list
    const la = [...at, 'actions', 'list'];
    const lb = argumentsOf(field, guess, la);
    const inner = shape.kind === 'connection' ? (shape.nodes === 'nodes' ? `{ nodes { ${sel} } pageInfo { hasNextPage endCursor } }` : `{ edges { node { ${sel} } } pageInfo { hasNextPage endCursor } }`) : `{ ${sel} }`;
    const records = shape.kind === 'connection' ? (shape.nodes === 'nodes' ? `{{body.data.${field.name}.nodes}}` : `{{pluck body.data.${field.name}.edges 'node'}}`) : `{{body.data.${field.name}}}`;
    const list: Obj = {
      description: shortText(field.description) ?? `${node.name} records (${field.name})`,
      ...(Object.keys(lb.params).length > 0 ? { params: lb.params } : {}),
      request: { method: 'POST', path, graphql: { query: query('query', lb, field.name, inner), ...(Object.keys(lb.variables).length > 0 ? { variables: lb.variables } : {}) } },
      response: { records, meta: { next_page: '{{null}}' } },
    };
    const argNames = field.args.map((a) => a.name);
    const limitArg = argNames.find((a) => ['limit', 'first', 'perpage', 'pagesize'].includes(norm(a)));
    if (shape.kind === 'connection' && argNames.includes('after')) {
      const next = `{{body.data.${field.name}.pageInfo.endCursor}}`;
      list['pagination'] = { type: 'graphql_cursor', param: 'after', next, has_more: `{{body.data.${field.name}.pageInfo.hasNextPage}}` };
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
    } else report.push(`${name}.list (${field.name}): no pagination inferred`);
    actions['list'] = list;

    // Incremental sync: a filter argument comparing an updatedAt-like field of the node (Linear's
    // `filter: {updatedAt: {gt}}`) gives an updated_since param and sync.incremental; an
    // includeArchived-like argument with an archivedAt-like field, the removals of archived records.
    let sync: Obj | undefined;
    const since = incrementalFilter(field, node);
    if (since !== undefined && lb.params['updated_since'] === undefined) {
      const filterParam = safeName(since.arg);
      const part = `(when params.updated_since (object '${since.field}' (object '${since.op}' params.updated_since)))`;
      lb.params['updated_since'] = { type: 'string', format: 'date-time', description: `Only records whose ${since.field} is after this time (${since.arg}.${since.field}.${since.op})` };
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
        sync['removals'] = { entity: name, since_param: 'updated_since', params: { [safeName(archivedArg.name)]: true }, when: `{{record.${archivedField.name}}}`, id: `{{record.${node.getFields()['id'] !== undefined ? 'id' : since.field}}}` };
        guess([...at, 'sync', 'removals'], `records archived since the last run (${archivedArg.name}: true, ${archivedField.name} set) are removed from search`);
      }
    }

    // get: a root field returning one node with an id argument, else the list filtered by ids.
    const one = Object.values(queryType.getFields()).find((f) => {
      const s = shapeOf(f);
      return s?.kind === 'one' && s.node === node && f.args.some((a) => ['id', `${norm(node.name)}id`].includes(norm(a.name)));
    });
    const ga = [...at, 'actions', 'get'];
    if (one !== undefined) {
      const gb = argumentsOf(one, guess, ga);
      actions['get'] = {
        description: shortText(one.description) ?? `One ${node.name} (${one.name})`,
        params: gb.params,
        request: { method: 'POST', path, graphql: { query: query('query', gb, one.name, `{ ${sel} }`), variables: gb.variables } },
        response: { record: `{{body.data.${one.name}}}`, not_found_when: `{{not body.data.${one.name}}}` },
      };
    } else {
      const ids = field.args.find((a) => norm(a.name) === 'ids');
      if (ids !== undefined && shape.kind === 'list') {
        actions['get'] = {
          description: `One ${node.name} (${field.name} filtered by ids)`,
          params: { id: { type: 'string', required: true, minLength: 1 } },
          request: { method: 'POST', path, graphql: { query: `query ($ids: ${String(ids.type)}) { ${field.name}(ids: $ids) { ${sel} } }`, variables: { ids: '{{array params.id}}' } } },
          response: { record: `{{first body.data.${field.name}}}`, not_found_when: `{{not (first body.data.${field.name})}}` },
        };
        guess(ga, `get is ${field.name} with ids: [id]`);
      } else report.push(`${name}.get: no root field returns one ${node.name} by id`);
    }

    // create / update from mutations.
    for (const [action, verbs] of [['create', ['create', 'add', 'new']], ['update', ['update', 'edit', 'change']]] as const) {
      const m = mutationType ? Object.values(mutationType.getFields()).find((f) => verbs.some((v) => [`${v}${norm(node.name)}`, `${norm(node.name)}${v}`].includes(norm(f.name)))) : undefined;
      if (m === undefined) {
        report.push(`${name}.${action}: no mutation named ${verbs[0]}${node.name} (or ${node.name.toLowerCase()}${verbs[0].replace(/^./, (c) => c.toUpperCase())})`);
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
        request: { method: 'POST', path, graphql: { query: query('mutation', mb, m.name, body), ...(Object.keys(mb.variables).length > 0 ? { variables: mb.variables } : {}) } },
        response: { record },
      };
      guess([...aa], `the ${m.name} mutation`);
    }

    const properties: Obj = {};
    for (const f of Object.values(node.getFields())) {
      if (!noRequiredArgs(f) || f.deprecationReason) continue;
      const named = getNamedType(f.type);
      if (isScalarType(named) || isEnumType(named) || (isObjectType(named) && named.getFields()['id'] !== undefined)) properties[f.name] = { ...outputSchema(f.type), ...(shortText(f.description) ? { description: shortText(f.description) } : {}) };
    }
    const pk = properties['id'] !== undefined ? 'id' : Object.keys(properties).find((k) => /id$/i.test(k));
    if (pk === undefined) {
      properties['id'] = { type: 'string' };
      guess([...at, 'primary_key'], `${node.name} has no id field: name the field that identifies a record`);
    }
    const primaryKey = pk ?? 'id';
    const pkSchema = properties[primaryKey] as Obj;
    if (Array.isArray(pkSchema['type'])) pkSchema['type'] = (pkSchema['type'] as string[])[0];
    entities[name] = { title: node.name, primary_key: primaryKey, record: { type: 'object', required: [primaryKey], properties }, actions, ...(sync !== undefined ? { sync } : {}) };
  }

  const manifest: Obj = {
    manifest_version: 1,
    type: o.type,
    title: o.type.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase()),
    kind: 'api',
    vendor_description: { path: o.descriptionPath, format: 'graphql', source: o.source },
    base_url: { default: endpoint.origin },
    headers: { Accept: 'application/json' },
    retry: { max_attempts: 4, retry_after_headers: [{ name: 'Retry-After', format: 'seconds' }] },
    auth: [{ name: 'token', type: 'bearer', fields: { token: { type: 'string', secret: true } }, token: '{{credentials.token}}' }],
    errors: {
      message: '{{default body.errors.0.message body.message}}',
      list: { items: '{{body.errors}}', path: "{{join entry.path '/'}}" },
      // GraphQL answers errors in a 200 body.
      in_body: [{ when: '{{body.errors}}', code: 'upstream_error', message: '{{body.errors.0.message}}' }],
    },
    list_meta: { next_page: { type: ['string', 'null'], description: 'Cursor for the next page (after), null on the last page or for page-numbered lists' } },
    entities,
  };
  guess(['title'], 'the product name');
  guess(['kind'], 'what kind of system this is, e.g. work-management, crm, ticketing');
  guess(['auth'], 'a GraphQL schema says nothing about auth: a bearer token is assumed (check the vendor\'s docs: header name, OAuth)');
  guess(['vendor_description', 'source'], 'add the licence the schema is published under (licence:), or do not commit the copy');
  guess(['errors', 'in_body'], 'map the vendor\'s error codes (extensions.code) to upstream_not_found, upstream_rate_limited, ...');
  report.push('auth: not in a GraphQL schema (a bearer token is assumed)');
  report.push('rate limit and error codes: not in a GraphQL schema; add rate_limit and errors.in_body rules from the vendor\'s documentation');
  return {
    type: o.type,
    manifest,
    guesses,
    report,
    header: [`scaffolded by \`switchboard init ${o.type} --from-graphql\` from ${o.source} (endpoint ${o.endpoint}; entities: ${chosen.map((c) => safeName(c.field.name)).join(', ')}).`],
  };
}
