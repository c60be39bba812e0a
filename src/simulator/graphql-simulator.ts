/**
 * The generic GraphQL simulator: any GraphQL schema (SDL) becomes a stateful local fake of its API.
 *
 * - Every request is a POST of `{query, variables, operationName}` to the endpoint path; the
 *   document is parsed and validated against the schema, the variables coerced to their declared
 *   types (graphql-js), and refusals answer GraphQL's `{errors: [...]}` with the status the
 *   sidecar gives each error code.
 * - Resources are the object types that root query fields list (`issues: IssueConnection`,
 *   `boards: [Board]`): each is seeded with deterministic records (values from the field types and
 *   names, ids from a PRNG seeded by `seed` and the type name), related records linked by their
 *   object-typed fields (`Issue.team` names a seeded Team).
 * - Root fields: a Relay connection (`first`/`after`, `nodes`, `edges { node cursor }`,
 *   `pageInfo { hasNextPage endCursor }`) or a list of a resource; one record by `id`; one record
 *   with no required argument (`viewer`) is the first record of its type. Connection fields of a
 *   record (`Team.issues`) list the records pointing back at it.
 * - Mutations named `<type>Create`/`create<Type>`, `<type>Update`, `<type>Delete`/`<type>Archive`
 *   and `<type>Unarchive` (and the `create_`/`update_` spellings) change the store: the input
 *   object's fields set the record's fields of the same name, `<field>Id` links a related record,
 *   `createdAt`/`updatedAt` are kept; a payload type returns the record in its field of the
 *   record's type, with `success: true`.
 * - The sidecar (sidecar.ts) adds what a schema cannot say: accepted tokens and the credential
 *   header, rate limits and their headers, error codes and statuses, page sizes, the record fields
 *   `filter` arguments compare, ordering, archived records, an OAuth flow.
 */
import { randomUUID } from 'node:crypto';
import {
  buildSchema,
  defaultTypeResolver,
  execute,
  getOperationAST,
  getNamedType,
  getNullableType,
  GraphQLError,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  parse,
  validate,
  type DocumentNode,
  type GraphQLField,
  type GraphQLFieldResolver,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';
import { existsSync, readFileSync } from 'node:fs';
import { ComplexityBudget, queryCost } from './graphql-complexity.ts';
import { checkDeclared, graphqlLists } from './graphql-lists.ts';
import { parseErrorEntry, validationErrorEntry, variableErrorEntry } from './graphql-ruby.ts';
import { oauthServer, type OAuthClient } from './core/oauth.ts';
import { fill as fillTemplate } from './rules.ts';
import { loadSidecar, seedCount, seedOf, type GraphqlSidecar, type Sidecar } from './sidecar.ts';
import { mixSeed, parseJson, seededRandom, startSimulator, type SimRequest, type SimResponse, type Simulator } from './sim-server.ts';

type Rec = Record<string, unknown>;
export type RateLimit = NonNullable<Sidecar['rate_limit']>;

export interface GraphqlSimulatorOptions {
  /** The schema: SDL text, a file holding it, or a built schema. */
  schema: GraphQLSchema | string;
  sidecar?: Sidecar | string | undefined;
  port?: number | undefined;
  host?: string | undefined;
  /** PRNG seed: the same seed always yields the same records. Default 1. */
  seed?: number | undefined;
  /** Tokens accepted (overrides the sidecar's auth.tokens). */
  tokens?: Iterable<string> | undefined;
  /** Rate limit (overrides the sidecar's); false disables it. */
  rateLimit?: RateLimit | false | undefined;
  /** The OAuth client of the sidecar's oauth flow; default sim_client / sim_secret. */
  oauthClient?: { clientId?: string | undefined; clientSecret?: string | undefined } | undefined;
  /** Most records a resource keeps; a create beyond is refused. Default 100 000. */
  maxRecords?: number | undefined;
  /**
   * Code for behaviour no declaration captures, by "Type.field": it replaces the generic
   * resolution of that field and gets the GraphqlContext. Throw an Error with `extensions` for an
   * error of the field in the vendor's shape.
   */
  resolvers?: Record<string, GraphQLFieldResolver<unknown, GraphqlContext>> | undefined;
  /** The concrete type name of a value of an interface or union, by the abstract type's name. */
  typeResolvers?: Record<string, (value: unknown) => string> | undefined;
  /** Variables of the sidecar's graphql.envelope and error templates, read per answer. */
  vars?: (() => Record<string, string | number>) | undefined;
}

/** What code-given resolvers get as context. */
export interface GraphqlContext {
  /** The API version the request asked for (graphql.versions), else undefined. */
  version: string | undefined;
  /** The simulated time (Date.now() + clock.offsetMs). */
  now: () => number;
  /** This query's cost and the budget around it, when graphql.complexity is declared. */
  complexity: { before: number; after: number; query: number; reset_in_x_seconds: number } | undefined;
  /**
   * A page of cursor pagination (graphql.cursor_pages): without a cursor, `rows` are kept as a
   * snapshot and its first `limit` answered; with one, the page after it (rows are then unused).
   */
  cursorPage(rows: Rec[], limit: number, cursor?: string | null): { cursor: string | null; rows: Rec[] };
}

/** The records of one object type. Object-typed fields hold `{__ref: id}` of the related record. */
export interface GraphqlResource {
  type: GraphQLObjectType;
  records: Map<string, Rec>;
  /** Records created through the API so far (the PRNG stream of new ids). */
  created: number;
}

export interface GraphqlSimulator extends Simulator {
  schema: GraphQLSchema;
  sidecar: Sidecar;
  /** By object type name. */
  resources: Map<string, GraphqlResource>;
  seed: number;
  /** The tokens accepted when the sidecar lists any (add or delete to grant or revoke). */
  tokens: Set<string>;
  oauth: OAuthClient;
  setRateLimit(limit: RateLimit | false): void;
  resetRateLimit(): void;
  /** Simulated time for rate-limit and budget windows (and code's context.now): advance() to skip ahead. */
  clock: { offsetMs: number; now(): number; advance(ms: number): void };
  /** The query-cost budget (graphql.complexity), mutable at runtime. */
  complexity: ComplexityBudget | undefined;
  /** Forget every cursor_pages snapshot. */
  clearCursors(): void;
  /** Seed every resource again, as when the simulator started (each table's Map is kept, cleared and refilled). */
  reseed(): void;
}

const clone = <T>(v: T): T => structuredClone(v);
const COMPARATORS = new Set(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'null', 'contains', 'containsIgnoreCase', 'startsWith', 'endsWith', 'eqIgnoreCase']);

function hashString(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h >>> 0;
}

const encodeCursor = (offset: number): string => Buffer.from(JSON.stringify({ o: offset })).toString('base64url');
function decodeCursor(s: string): number | undefined {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as { o?: unknown };
    return Number.isInteger(v.o) && (v.o as number) >= 0 ? (v.o as number) : undefined;
  } catch {
    return undefined;
  }
}

function uuid(rand: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(rand() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Fill a template; keys whose value renders to "" are left out. */
function render(template: unknown, vars: Record<string, string | number>): unknown {
  if (typeof template === 'string') {
    const whole = /^\{\{(\w+)\}\}$/.exec(template);
    if (whole !== null && typeof vars[whole[1] as string] === 'number') return vars[whole[1] as string];
    return template.replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(vars[k] ?? ''));
  }
  if (Array.isArray(template)) return template.map((t) => render(t, vars));
  if (template !== null && typeof template === 'object') {
    return Object.fromEntries(
      Object.entries(template as Rec)
        .map(([k, v]) => [k, render(v, vars)] as const)
        .filter(([, v]) => v !== ''),
    );
  }
  return template;
}

/** A field's value from a template (graphql.fields): "{{name}}" alone is the source's (or a variable's) value as it is; inside text, its text. */
function fill(template: unknown, scope: (name: string) => unknown): unknown {
  if (typeof template === 'string') {
    const whole = /^\{\{(\w+)\}\}$/.exec(template);
    if (whole !== null) return scope(whole[1] as string) ?? null;
    return template.replace(/\{\{(\w+)\}\}/g, (_, k: string) => String(scope(k) ?? ''));
  }
  if (Array.isArray(template)) return template.map((t) => fill(t, scope));
  if (template !== null && typeof template === 'object') return Object.fromEntries(Object.entries(template as Rec).map(([k, v]) => [k, fill(v, scope)]));
  return template;
}

/** The node type of a Relay connection type (nodes or edges.node), else undefined. */
function connectionNode(t: GraphQLOutputType): GraphQLObjectType | undefined {
  const inner = getNullableType(t);
  if (!isObjectType(inner)) return undefined;
  const fields = inner.getFields();
  if (fields['pageInfo'] === undefined) return undefined;
  const nodes = fields['nodes'];
  if (nodes !== undefined && isObjectType(getNamedType(nodes.type))) return getNamedType(nodes.type) as GraphQLObjectType;
  const edge = fields['edges'] !== undefined ? getNamedType(fields['edges'].type) : undefined;
  const node = edge !== undefined && isObjectType(edge) ? edge.getFields()['node'] : undefined;
  return node !== undefined && isObjectType(getNamedType(node.type)) ? (getNamedType(node.type) as GraphQLObjectType) : undefined;
}

/** A list of object type T (`[Board]`), else undefined. */
function listNode(t: GraphQLOutputType): GraphQLObjectType | undefined {
  const inner = getNullableType(t);
  if (!isListType(inner)) return undefined;
  const n = getNamedType(inner);
  return isObjectType(n) ? n : undefined;
}

const isDateScalar = (name: string): boolean => /date|time/i.test(name) && !/duration/i.test(name);
const BASE_TIME = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;

/** Compare two values: dates by time, numbers as numbers, the rest as text. */
function compare(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = String(a);
  const sb = String(b);
  const da = Date.parse(sa);
  const db = Date.parse(sb);
  if (/^\d{4}-\d{2}-\d{2}/.test(sa) && /^\d{4}-\d{2}-\d{2}/.test(sb) && !Number.isNaN(da) && !Number.isNaN(db)) return da - db;
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

/** Start a simulator of a GraphQL schema on a loopback port. */
export async function startGraphqlSimulator(options: GraphqlSimulatorOptions): Promise<GraphqlSimulator> {
  const schema = typeof options.schema === 'string' ? buildSchema(existsSync(options.schema) ? readFileSync(options.schema, 'utf8') : options.schema) : options.schema;
  const sidecar: Sidecar = typeof options.sidecar === 'string' ? loadSidecar(options.sidecar) : (options.sidecar ?? {});
  const g: GraphqlSidecar = sidecar.graphql ?? {};
  const seed = options.seed ?? 1;
  const tokens = new Set(options.tokens ?? sidecar.auth?.tokens ?? []);
  const checkTokens = options.tokens !== undefined || sidecar.auth?.tokens !== undefined;
  let rateLimit: RateLimit | undefined = options.rateLimit === false ? undefined : (options.rateLimit ?? sidecar.rate_limit);
  const oauth: OAuthClient = { clientId: options.oauthClient?.clientId ?? 'sim_client', clientSecret: options.oauthClient?.clientSecret ?? 'sim_secret', deny: false };
  const endpoint = g.path ?? '/graphql';
  const filterArg = g.filter_argument ?? 'filter';
  const orderArg = g.order_by?.argument ?? 'orderBy';
  const orderDir = g.order_by?.direction ?? 'asc';
  const archivedField = g.archived?.field ?? 'archivedAt';
  const archivedArg = g.archived?.argument ?? 'includeArchived';
  const filterable = new Set(g.filters ?? []);
  const clock = {
    offsetMs: 0,
    now: (): number => Date.now() + clock.offsetMs,
    advance: (ms: number): void => {
      clock.offsetMs += ms;
    },
  };
  const complexity = g.complexity === undefined ? undefined : new ComplexityBudget(g.complexity, clock.now);
  const ruby = g.dialect === 'graphql-ruby';
  const queryType = schema.getQueryType();
  if (queryType === null || queryType === undefined) throw new Error('the GraphQL schema has no Query type');
  const mutationType = schema.getMutationType() ?? undefined;

  // ---------------------------------------------------------------- errors
  // Body problems (bad_request) answer as validation problems (invalid) unless the sidecar tells them apart.
  const codeOf = (code: string): string => sidecar.error?.codes?.[code] ?? (code === 'bad_request' && g.errors?.[code] === undefined ? codeOf('invalid') : code);
  const entry = (code: string, message: string, status: number, vars: Record<string, string | number> = {}): Rec =>
    render(g.errors?.[code] ?? g.error ?? { message: '{{message}}', extensions: { code: '{{code}}' } }, { ...vars, message, code: codeOf(code), status }) as Rec;
  const statusOf = (code: string, fallback: number): number => g.status?.[code] ?? (code === 'bad_request' ? g.status?.['invalid'] : undefined) ?? fallback;
  const requestError = (code: string, message: string, fallback = 400, vars: Record<string, string | number> = {}): SimResponse => {
    const status = statusOf(code, fallback);
    const custom = g.messages?.[code];
    return { status, json: { errors: [entry(code, custom === undefined ? message : String(render(custom, vars)), status, vars)] } };
  };
  /** An error of one field, raised while executing: it lands in `errors` beside `data`. */
  const fieldError = (code: string, message: string, vars: Record<string, string> = {}): GraphQLError => {
    const custom = g.messages?.[code];
    const e = entry(code, custom === undefined ? message : String(render(custom, vars)), statusOf(code, 200));
    const ext = (e['extensions'] ?? {}) as Rec;
    const err = new GraphQLError(String(e['message'] ?? message), { extensions: { ...ext } });
    (err as GraphQLError & { simCode?: string }).simCode = code;
    return err;
  };

  // ---------------------------------------------------------------- resources
  const resources = new Map<string, GraphqlResource>();
  for (const f of Object.values(queryType.getFields())) {
    const node = connectionNode(f.type) ?? listNode(f.type);
    if (node !== undefined && node.getFields()['id'] !== undefined && !resources.has(node.name)) resources.set(node.name, { type: node, records: new Map(), created: 0 });
  }
  // A type the sidecar names under resources is one too, though no root field lists it (records code adds, listed by graphql.lists).
  for (const name of Object.keys(sidecar.resources ?? {})) {
    const type = schema.getType(name);
    if (!isObjectType(type) || type.getFields()['id'] === undefined) throw new Error(`invalid simulator sidecar for this schema: resources.${name} names no object type with an id`);
    if (!resources.has(name)) resources.set(name, { type, records: new Map(), created: 0 });
  }

  /** A value for a scalar or enum field of record number i. */
  const scalarValue = (typeName: string, field: string, i: number, rand: () => number, enumValues?: string[]): unknown => {
    if (enumValues !== undefined) return enumValues[0] ?? null;
    switch (typeName) {
      case 'ID':
        return uuid(rand);
      case 'Int':
        return i + 1;
      case 'Float':
        return i + 1;
      case 'Boolean':
        return false;
      case 'String':
        if (/email/i.test(field)) return `user${i + 1}@example.com`;
        if (/url$/i.test(field)) return `https://example.com/${field}/${i + 1}`;
        return `${field} ${i + 1}`;
      default:
        if (/timeless/i.test(typeName)) return new Date(BASE_TIME + i * DAY).toISOString().slice(0, 10);
        if (isDateScalar(typeName)) return new Date(BASE_TIME + i * DAY + (hashString(field) % 24) * 3_600_000).toISOString();
        if (/json/i.test(typeName)) return {};
        return `${field} ${i + 1}`;
    }
  };
  /** A fresh record of a type: non-null scalars and enums sampled, nullable ones null, lists empty. */
  const sampleRecord = (type: GraphQLObjectType, i: number, rand: () => number): Rec => {
    const r: Rec = {};
    for (const f of Object.values(type.getFields())) {
      const named = getNamedType(f.type);
      if (connectionNode(f.type) !== undefined) continue;
      if (isListType(getNullableType(f.type))) {
        r[f.name] = isNonNullType(f.type) ? [] : null;
        continue;
      }
      if (isScalarType(named) || isEnumType(named)) {
        r[f.name] = isNonNullType(f.type) || f.name === 'id' ? scalarValue(named.name, f.name, i, rand, isEnumType(named) ? named.getValues().map((v) => v.name) : undefined) : null;
      }
    }
    return r;
  };
  const refFields = (type: GraphQLObjectType): GraphQLField<unknown, unknown>[] =>
    Object.values(type.getFields()).filter((f) => {
      const n = getNamedType(f.type);
      return isObjectType(n) && !isListType(getNullableType(f.type)) && resources.has(n.name);
    });
  /** A type whose records the sidecar declares (resources.<Type>.template or a seed list): they hold what it says, nothing sampled. */
  const declaredRecords = (r: GraphqlResource): boolean => sidecar.resources?.[r.type.name]?.template !== undefined || Array.isArray(sidecar.resources?.[r.type.name]?.seed);
  const seedRecords = (r: GraphqlResource): void => {
    const rs = sidecar.resources?.[r.type.name];
    const rand = seededRandom(mixSeed(seed, hashString(r.type.name)));
    for (let i = 0; i < seedCount(sidecar, r.type.name); i++) {
      let rec: Rec;
      if (declaredRecords(r)) {
        const vars = { n: i + 1, seed, pools: sidecar.pools ?? {} };
        rec = clone({ ...((fillTemplate(rs?.template ?? {}, vars) ?? {}) as Rec), ...((fillTemplate(seedOf(rs, i) ?? {}, vars) ?? {}) as Rec) });
        rec['id'] ??= scalarValue('ID', 'id', i, rand);
      } else {
        rec = sampleRecord(r.type, i, rand);
        for (const k of ['name', 'title']) if (typeof rec[k] === 'string') rec[k] = `${r.type.name} ${k} ${i + 1}`;
      }
      r.records.set(String(rec['id']), rec);
    }
  };
  for (const r of resources.values()) seedRecords(r);
  /** A scalar `<field>Id` beside an object-typed field (Comment.issueId beside Comment.issue) holds the related record's id. */
  const syncIdField = (r: GraphqlResource, rec: Rec, field: string): void => {
    const idField = r.type.getFields()[`${field}Id`];
    if (idField === undefined || !isScalarType(getNamedType(idField.type))) return;
    const v = rec[field];
    rec[`${field}Id`] = v !== null && typeof v === 'object' && typeof (v as Rec)['__ref'] === 'string' ? (v as Rec)['__ref'] : null;
  };
  // Related records: each object-typed field names a seeded record of its type.
  const relate = (r: GraphqlResource): void => {
    if (declaredRecords(r)) return;
    const rand = seededRandom(mixSeed(seed, hashString(r.type.name), 0x5eed));
    for (const rec of r.records.values()) {
      for (const f of refFields(r.type)) {
        const target = [...(resources.get(getNamedType(f.type).name)?.records.keys() ?? [])];
        rec[f.name] = target.length === 0 ? null : { __ref: target[Math.floor(rand() * target.length)] };
        syncIdField(r, rec, f.name);
      }
    }
  };
  for (const r of resources.values()) relate(r);

  // ---------------------------------------------------------------- lists
  const lists = graphqlLists(g, {
    records: (t) => resources.get(t)?.records,
    declared: (type, field, rec, ctx) => {
      // The code's variables, and the request's: the API version and its kind, the versions served, the query's complexity charge.
      const served = g.versions?.served ?? {};
      const request = ctx === undefined ? {} : { version: ctx.version, version_kind: served[ctx.version ?? ''], versions: Object.entries(served).map(([value, kind]) => ({ value, kind })), complexity: ctx.complexity };
      const vars: Rec = { ...(options.vars?.() ?? {}), ...request };
      const t = g.fields?.[`${type.name}.${field}`];
      return t === undefined ? undefined : fill(t, (k) => rec[k] ?? vars[k]);
    },
    invalid: (message) => fieldError('invalid', message),
  });
  checkDeclared(schema, g);
  const readPath = (rec: Rec, path: string[]): unknown => {
    let v: unknown = rec;
    for (const p of path) {
      if (v === null || typeof v !== 'object') return undefined;
      const o = v as Rec;
      if (o['__ref'] !== undefined && typeof o['__ref'] === 'string') return p === 'id' ? o['__ref'] : undefined;
      v = o[p];
    }
    if (v !== null && typeof v === 'object' && typeof (v as Rec)['__ref'] === 'string') return (v as Rec)['__ref'];
    return v;
  };
  const matchComparator = (value: unknown, cmp: Rec): boolean => {
    for (const [op, want] of Object.entries(cmp)) {
      if (want === undefined || want === null && op !== 'eq' && op !== 'null') continue;
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
  };
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
      if (!filterable.has(path.join('.'))) throw fieldError('invalid', `The simulator does not filter on ${path.join('.')} (declare it in the sidecar's graphql.filters)`);
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
  const pageSize = (args: Rec): number => {
    const pag = sidecar.pagination ?? {};
    let n = typeof args['first'] === 'number' ? args['first'] : typeof args['limit'] === 'number' ? args['limit'] : (pag.default_limit ?? 50);
    if (n < 0) throw fieldError('invalid', 'first must be a positive number');
    if (pag.max_limit !== undefined) n = Math.min(n, pag.max_limit);
    return n;
  };
  const connection = (rows: Rec[], args: Rec): Rec => {
    // Backward pages are not simulated: say so rather than answer the first page.
    for (const a of ['last', 'before']) if (args[a] !== undefined && args[a] !== null) throw fieldError('invalid', `The simulator pages forward only (first/after); ${a} is not simulated`);
    const limit = pageSize(args);
    let offset = 0;
    if (typeof args['after'] === 'string' && args['after'] !== '') {
      const o = decodeCursor(args['after']);
      if (o === undefined) throw fieldError('invalid', 'after is not a cursor this API issued');
      offset = o;
    }
    const page = rows.slice(offset, offset + limit);
    const edges = page.map((node, j) => ({ node, cursor: encodeCursor(offset + j + 1) }));
    return {
      nodes: page,
      edges,
      pageInfo: {
        hasNextPage: offset + page.length < rows.length,
        hasPreviousPage: offset > 0,
        startCursor: page.length > 0 ? encodeCursor(offset + 1) : null,
        endCursor: page.length > 0 ? encodeCursor(offset + page.length) : null,
      },
    };
  };
  const plainList = (rows: Rec[], args: Rec): Rec[] => {
    if (typeof args['limit'] !== 'number') return rows;
    const page = typeof args['page'] === 'number' ? Math.max(1, args['page']) : 1;
    return rows.slice((page - 1) * args['limit'], page * args['limit']);
  };

  // ---------------------------------------------------------------- cursor pages (snapshots)
  const cp = g.cursor_pages ?? {};
  const snapshots = new Map<string, { rows: Rec[]; at: number }>();
  const skipped = (r: Rec): boolean => cp.skip !== undefined && cp.skip.values.includes(String(r[cp.skip.field]));
  const cursorPage: GraphqlContext['cursorPage'] = (rows, limit, cursor) => {
    const max = cp.max_limit ?? Number.MAX_SAFE_INTEGER;
    if (!Number.isInteger(limit) || limit < 1 || limit > max) throw fieldError('invalid', `limit must be between 1 and ${String(max)} (got ${String(limit)})`);
    let token: string = randomUUID();
    let pos = 0;
    let snap = { rows, at: clock.now() };
    if (typeof cursor === 'string' && cursor !== '') {
      const m = /^([\w-]+):(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
      const found = m === null ? undefined : snapshots.get(m[1] as string);
      if (m === null || found === undefined) throw fieldError('invalid_cursor', 'Invalid cursor');
      if (clock.now() - found.at > (cp.ttl_seconds ?? 3600) * 1000) throw fieldError('expired_cursor', `The cursor has expired: cursors are valid for ${String(cp.ttl_seconds ?? 3600)} s after the first request`);
      [token, pos, snap] = [m[1] as string, Number(m[2]), found];
    } else {
      snapshots.set(token, snap);
      if (snapshots.size > 2000) snapshots.delete(snapshots.keys().next().value as string);
    }
    const out: Rec[] = [];
    let i = pos;
    for (; i < snap.rows.length && out.length < limit; i++) if (!skipped(snap.rows[i] as Rec)) out.push(snap.rows[i] as Rec);
    return { cursor: i < snap.rows.length ? Buffer.from(`${token}:${String(i)}`).toString('base64url') : null, rows: out };
  };

  // ---------------------------------------------------------------- mutations
  const now = (): string => new Date().toISOString();
  const resourceOfMutation = (f: GraphQLField<unknown, unknown>): { r: GraphqlResource; holder?: string } | undefined => {
    const ret = getNamedType(f.type);
    if (isObjectType(ret) && resources.has(ret.name)) return { r: resources.get(ret.name) as GraphqlResource };
    if (isObjectType(ret)) {
      for (const pf of Object.values(ret.getFields())) {
        const n = getNamedType(pf.type);
        if (isObjectType(n) && resources.has(n.name) && !isListType(getNullableType(pf.type))) return { r: resources.get(n.name) as GraphqlResource, holder: pf.name };
      }
    }
    const name = f.name.toLowerCase().replace(/_/g, '');
    const type = [...resources.values()].find((r) => name.startsWith(r.type.name.toLowerCase()) || name.endsWith(r.type.name.toLowerCase()));
    return type === undefined ? undefined : { r: type };
  };
  const verbOf = (name: string): 'create' | 'update' | 'delete' | 'archive' | 'unarchive' | undefined => {
    const n = name.toLowerCase().replace(/_/g, '');
    for (const v of ['unarchive', 'create', 'update', 'delete', 'archive'] as const) if (n.startsWith(v) || n.endsWith(v)) return v;
    return undefined;
  };
  /** Copy an input object onto a record: same-named fields, `<field>Id` links a related record. */
  const applyInput = (r: GraphqlResource, rec: Rec, input: Rec): void => {
    const fields = r.type.getFields();
    for (const [k, v] of Object.entries(input)) {
      if (v === undefined || k === 'id') continue;
      const linked = k.endsWith('Id') ? fields[k.slice(0, -2)] : undefined;
      const direct = fields[k];
      const target = linked !== undefined && isObjectType(getNamedType(linked.type)) ? linked : (direct ?? linked);
      if (target === undefined) continue;
      const named = getNamedType(target.type);
      if (isObjectType(named)) {
        if (isListType(getNullableType(target.type)) || connectionNode(target.type) !== undefined) continue;
        const related = resources.get(named.name);
        if (v === null) rec[target.name] = null;
        else if (related !== undefined) {
          if (!related.records.has(String(v))) throw fieldError('not_found', `${named.name} not found: ${String(v)}`, { type: named.name, id: String(v) });
          rec[target.name] = { __ref: String(v) };
        }
        syncIdField(r, rec, target.name);
        continue;
      }
      rec[target.name] = clone(v);
    }
  };
  const payload = (f: GraphQLField<unknown, unknown>, holder: string | undefined, rec: Rec | null): unknown => {
    if (holder === undefined) return rec;
    return { [holder]: rec, success: true, lastSyncId: ++syncId };
  };
  let syncId = 0;
  const mutate = (f: GraphQLField<unknown, unknown>, args: Rec): unknown => {
    const target = resourceOfMutation(f);
    const verb = verbOf(f.name);
    if (target === undefined || verb === undefined) return {};
    const { r, holder } = target;
    const inputArg = f.args.find((a) => isInputObjectType(getNamedType(a.type)) && a.name !== 'filter');
    const input = (inputArg !== undefined ? args[inputArg.name] : undefined) as Rec | undefined;
    const fields = r.type.getFields();
    const timestamp = (rec: Rec, name: string): void => {
      if (fields[name] !== undefined) rec[name] = now();
    };
    if (verb === 'create') {
      if (r.records.size >= (options.maxRecords ?? 100_000)) throw fieldError('invalid', `The simulator keeps at most ${String(options.maxRecords ?? 100_000)} ${r.type.name} records`);
      const rand = seededRandom(mixSeed(seed, hashString(r.type.name), ++r.created));
      const rec = sampleRecord(r.type, r.records.size, rand);
      // Related records the input does not name: none, or the first of its type where one is required.
      for (const rf of refFields(r.type)) {
        const first = isNonNullType(rf.type) ? resources.get(getNamedType(rf.type).name)?.records.keys().next().value : undefined;
        rec[rf.name] = first === undefined ? null : { __ref: first };
        syncIdField(r, rec, rf.name);
      }
      if (typeof input?.['id'] === 'string' && input['id'] !== '') {
        if (r.records.has(input['id'])) throw fieldError('invalid', `${r.type.name} ${input['id']} already exists`);
        rec['id'] = input['id'];
      }
      applyInput(r, rec, input ?? Object.fromEntries(Object.entries(args).filter(([k]) => k !== 'id')));
      timestamp(rec, 'createdAt');
      timestamp(rec, 'updatedAt');
      r.records.set(String(rec['id']), rec);
      return payload(f, holder, rec);
    }
    const id = String(args['id'] ?? input?.['id'] ?? '');
    const rec = r.records.get(id);
    if (rec === undefined) throw fieldError('not_found', `${r.type.name} not found: ${id}`, { type: r.type.name, id });
    if (verb === 'update') {
      applyInput(r, rec, input ?? Object.fromEntries(Object.entries(args).filter(([k]) => k !== 'id')));
      timestamp(rec, 'updatedAt');
    } else if (verb === 'archive' || (verb === 'delete' && fields[archivedField] !== undefined)) {
      rec[archivedField] = now();
      timestamp(rec, 'updatedAt');
    } else if (verb === 'unarchive') {
      rec[archivedField] = null;
      timestamp(rec, 'updatedAt');
    } else r.records.delete(id);
    return payload(f, holder, holder === undefined ? rec : verb === 'delete' && fields[archivedField] === undefined ? null : rec);
  };

  // ---------------------------------------------------------------- resolution
  const resolveRef = (v: unknown, t: GraphQLOutputType): unknown => {
    if (v !== null && typeof v === 'object' && typeof (v as Rec)['__ref'] === 'string') return resources.get(getNamedType(t).name)?.records.get((v as Rec)['__ref'] as string) ?? null;
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
    return scalarValue(named.name, f.name, 0, seededRandom(mixSeed(seed, hashString(f.name))), isEnumType(named) ? named.getValues().map((v) => v.name) : undefined);
  };
  const fieldResolver: GraphQLFieldResolver<unknown, GraphqlContext> = (source, args, ctx, info) => {
    const key = `${info.parentType.name}.${info.fieldName}`;
    const f = info.parentType.getFields()[info.fieldName] as GraphQLField<unknown, unknown>;
    const named = getNamedType(f.type);
    /** A list of records after its declared rule and the generic ids, filter, order and limit/page arguments. */
    const listed = (rows: Rec[]): unknown => (connectionNode(f.type) !== undefined ? connection : plainList)(rowsOf(lists.select(key, named as GraphQLObjectType, rows, args), args), args);
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
    if (info.parentType === queryType) {
      const node = connectionNode(f.type);
      const list = node === undefined ? listNode(f.type) : undefined;
      const r = resources.get((node ?? list ?? getNamedType(f.type)).name);
      if (r === undefined) return filler(f);
      if (node !== undefined || list !== undefined) return listed([...r.records.values()]);
      const idArg = f.args.find((a) => a.name === 'id' || a.name.toLowerCase() === `${r.type.name.toLowerCase()}id`);
      if (idArg !== undefined && args[idArg.name] !== undefined) {
        const rec = r.records.get(String(args[idArg.name]));
        if (rec === undefined) throw fieldError('not_found', `${r.type.name} not found: ${String(args[idArg.name])}`, { type: r.type.name, id: String(args[idArg.name]) });
        return rec;
      }
      return [...r.records.values()][0] ?? null;
    }
    if (mutationType !== undefined && info.parentType === mutationType) return mutate(f, args);
    const src = (source ?? {}) as Rec;
    const declaredRows = isObjectType(named) ? lists.rows(key, named, src, info.fieldName) : undefined;
    if (declaredRows !== undefined) return listed(declaredRows);
    // A connection of a record: the records of the node type that point back at this one.
    const node = connectionNode(f.type);
    if (node !== undefined && !(info.fieldName in src)) {
      const child = resources.get(node.name);
      const parentId = src['id'];
      if (child === undefined || parentId === undefined) return connection([], args);
      const back = refFields(child.type).filter((rf) => getNamedType(rf.type).name === info.parentType.name);
      const stem = info.fieldName.toLowerCase();
      const via = back.find((rf) => stem.includes(rf.name.toLowerCase().replace(/e$/, ''))) ?? back.find((rf) => rf.name.toLowerCase() === info.parentType.name.toLowerCase()) ?? back[0];
      const rows = via === undefined ? [] : [...child.records.values()].filter((rec) => readPath(rec, [via.name]) === parentId);
      return connection(rowsOf(rows, args), args);
    }
    if (!(info.fieldName in src)) return filler(f);
    return resolveRef(src[info.fieldName], f.type);
  };

  // ---------------------------------------------------------------- limits and auth
  let windowStart = -1;
  let used = 0;
  /** Request times in the sliding window (rate_limit.sliding): refused requests are not counted. */
  let times: number[] = [];
  const countRequest = (): { headers: Record<string, string>; exceeded: boolean; retry: number } => {
    const rl = rateLimit;
    if (rl === undefined) return { headers: {}, exceeded: false, retry: 0 };
    const windowMs = rl.window_seconds * 1000;
    const t = clock.now();
    let start = windowStart;
    let exceeded: boolean;
    if (rl.sliding === true) {
      times = times.filter((x) => x > t - windowMs);
      exceeded = times.length >= rl.limit;
      if (!exceeded) times.push(t);
      used = times.length;
      start = times[0] ?? t;
    } else {
      // A window opens with the first request after a reset and the next ones follow it end to end.
      if (windowStart < 0 || t >= windowStart + windowMs) {
        windowStart = windowStart < 0 ? t : windowStart + Math.floor((t - windowStart) / windowMs) * windowMs;
        used = 0;
      }
      start = windowStart;
      used++;
      exceeded = used > rl.limit;
    }
    const names = rl.headers ?? {};
    const headers: Record<string, string> = {};
    const retry = Math.max(1, Math.ceil((start + windowMs - t) / 1000));
    if (names.limit !== undefined) headers[names.limit] = String(rl.limit);
    if (names.remaining !== undefined) headers[names.remaining] = String(Math.max(0, rl.limit - used));
    if (names.reset !== undefined) headers[names.reset] = rl.reset === 'seconds' ? String(retry) : rl.reset === 'unix_ms' ? String(start + windowMs) : String(Math.ceil((start + windowMs) / 1000));
    return { headers, exceeded, retry };
  };
  const authHeader = (sidecar.auth?.header ?? 'authorization').toLowerCase();

  const oauthRoutes = sidecar.oauth === undefined ? undefined : oauthServer(sidecar.oauth, oauth, tokens, undefined, clock.now);
  const budgetHeaders = (): Record<string, string> =>
    complexity === undefined ? {} : Object.fromEntries(Object.entries(g.complexity?.headers ?? {}).map(([k, t]) => [k, String(render(t, { budget: complexity.budget, window_seconds: complexity.windowSeconds, remaining: complexity.remaining(), reset: complexity.resetInSeconds() }))]));

  const handle = async (req: SimRequest): Promise<SimResponse> => {
    const fromOauth = oauthRoutes?.(req);
    if (fromOauth !== undefined) return fromOauth;
    const rl = countRequest();
    let authenticated = false;
    const withHeaders = (r: SimResponse): SimResponse => {
      const json = authenticated && g.envelope !== undefined && r.json !== null && typeof r.json === 'object' ? { ...(r.json as Rec), ...(render(g.envelope, { request_id: randomUUID(), ...(options.vars?.() ?? {}) }) as Rec) } : r.json;
      return { ...r, json, headers: { ...rl.headers, ...(authenticated ? budgetHeaders() : {}), ...(r.headers ?? {}) } };
    };
    if (req.path !== endpoint && req.path !== `${endpoint}/`) return withHeaders(requestError('not_found', `No GraphQL endpoint at ${req.path}; it is ${endpoint}`, 404));
    if (req.method !== 'POST') return withHeaders(requestError('method_not_allowed', `${req.method} is not allowed; POST a JSON {query, variables}`, 405));
    const raw = req.headers[authHeader];
    const presented = /^(?:\w+\s+)?(\S+)\s*$/.exec(String(Array.isArray(raw) ? raw[0] : (raw ?? '')))?.[1];
    if (presented === undefined || (checkTokens && !tokens.has(presented))) {
      return withHeaders(requestError('unauthorized', sidecar.auth?.message ?? (presented === undefined ? 'Authentication required' : 'Invalid credentials'), 401));
    }
    authenticated = true;
    if (rl.exceeded && rateLimit !== undefined) {
      const r = requestError('rate_limited', `Rate limit of ${rateLimit.limit} requests in ${rateLimit.window_seconds}s exceeded`, 429, { retry_in_seconds: rl.retry });
      return withHeaders({ ...r, headers: { 'Retry-After': String(rl.retry) } });
    }
    const body = parseJson(req.rawBody);
    if (body === null || typeof body !== 'object' || typeof (body as Rec)['query'] !== 'string' || ((body as Rec)['query'] as string).trim() === '') {
      return withHeaders(requestError('bad_request', 'The body must be JSON {query, variables?, operationName?} with query a string'));
    }
    const { query, operationName } = body as { query: string; operationName?: unknown };
    // Variables may come as an object or as JSON text.
    let variables = (body as Rec)['variables'];
    if (typeof variables === 'string') variables = variables.trim() === '' ? undefined : (parseJson(variables) ?? 'invalid');
    if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) return withHeaders(requestError('bad_request', 'variables must be an object'));
    const invalid = (entries: Rec[]): SimResponse => withHeaders({ status: statusOf('invalid', 400), json: { errors: entries } });
    let doc: DocumentNode;
    try {
      doc = parse(query);
    } catch (e) {
      if (ruby) return invalid([parseErrorEntry(e as GraphQLError) as unknown as Rec]);
      return withHeaders(requestError('invalid', (e as GraphQLError).message));
    }
    const problems = validate(schema, doc);
    if (problems.length > 0) return invalid(problems.map((p) => (ruby ? (validationErrorEntry(p, doc) as unknown as Rec) : entry('invalid', p.message, statusOf('invalid', 400)))));
    const op = getOperationAST(doc, typeof operationName === 'string' ? operationName : undefined);
    let charged: GraphqlContext['complexity'];
    if (complexity !== undefined && g.complexity !== undefined && op !== null && op !== undefined) {
      const cost = queryCost(schema, doc, op, (variables ?? {}) as Rec, g.complexity);
      if (cost > complexity.maxQuery) {
        const vars = { complexity: cost, max_complexity: complexity.maxQuery };
        return withHeaders(requestError('too_complex', String(render(g.complexity.messages?.too_complex ?? 'Query has complexity of {{complexity}}, which exceeds max complexity of {{max_complexity}}', vars)), 200, vars));
      }
      const c = complexity.charge(cost);
      if (c === null) {
        const retry = complexity.resetInSeconds();
        const r = requestError('complexity_exhausted', g.complexity.messages?.exhausted ?? 'Complexity budget exhausted', 429, { retry_in_seconds: retry });
        return withHeaders({ ...r, headers: { 'Retry-After': String(retry) } });
      }
      charged = { ...c, query: cost, reset_in_x_seconds: complexity.resetInSeconds() };
    }
    const asked = g.versions === undefined ? undefined : String(req.headers[g.versions.header.toLowerCase()] ?? '').trim();
    const contextValue: GraphqlContext = { version: g.versions === undefined ? undefined : g.versions.served[asked as string] !== undefined ? asked : g.versions.default, now: clock.now, complexity: charged, cursorPage };
    const result = await execute({
      schema,
      document: doc,
      variableValues: (variables ?? {}) as Rec,
      operationName: typeof operationName === 'string' ? operationName : undefined,
      fieldResolver,
      typeResolver: (v, c, i, t) => options.typeResolvers?.[t.name]?.(v) ?? lists.typeOf(t.name, v) ?? defaultTypeResolver(v, c, i, t),
      contextValue,
      rootValue: {},
    });
    if (result.data === undefined || result.data === null && result.errors !== undefined && result.errors.every((e) => e.path === undefined)) {
      return invalid((result.errors ?? []).map((e) => (ruby ? (variableErrorEntry(e) as unknown as Rec) : entry('invalid', e.message, statusOf('invalid', 400)))));
    }
    const errors = (result.errors ?? []).map((e) => ({ message: e.message, ...(e.path !== undefined ? { path: e.path } : {}), ...(e.extensions !== undefined && Object.keys(e.extensions).length > 0 ? { extensions: e.extensions } : {}) }));
    const codes = (result.errors ?? []).map((e) => (e.originalError as (Error & { simCode?: string }) | undefined)?.simCode ?? (e as GraphQLError & { simCode?: string }).simCode).filter((c): c is string => c !== undefined);
    const status = codes.length > 0 ? statusOf(codes[0] as string, 200) : 200;
    return withHeaders({ status, json: { data: result.data, ...(errors.length > 0 ? { errors } : {}) } });
  };

  const sim = await startSimulator(handle, { ...(options.port !== undefined ? { port: options.port } : {}), ...(options.host !== undefined ? { host: options.host } : {}) });
  return {
    ...sim,
    schema,
    sidecar,
    resources,
    seed,
    tokens,
    oauth,
    clock,
    complexity,
    clearCursors: () => snapshots.clear(),
    reseed: () => {
      for (const r of resources.values()) {
        r.records.clear();
        r.created = 0;
        seedRecords(r);
      }
      for (const r of resources.values()) relate(r);
    },
    setRateLimit: (limit) => {
      rateLimit = limit === false ? undefined : limit;
      windowStart = -1;
      used = 0;
      times = [];
    },
    resetRateLimit: () => {
      windowStart = -1;
      used = 0;
      times = [];
    },
    reset: () => {
      sim.reset();
      windowStart = -1;
      used = 0;
      times = [];
    },
  };
}
