/**
 * The sidecar: what an OpenAPI description cannot say about its API, declared in a short YAML
 * file next to the connector (connectors/<type>/simulator.yaml) and read by the generic
 * simulator. Every key is optional; without a sidecar the simulator infers what it can.
 *
 *   error:          the vendor's error body, a JSON tree whose strings may hold {{status}},
 *                   {{code}}, {{message}}, {{field}} and {{request_id}}; `codes` renames the
 *                   simulator's codes (missing, invalid, unknown, unauthorized, not_found,
 *                   method_not_allowed, rate_limited) to the vendor's.
 *   auth:           tokens: the credentials accepted (default: any present credential).
 *   rate_limit:     limit per window_seconds, the header names it sends, reset as unix|unix_ms|seconds.
 *   pagination:     cursor_param, limit_param, default_limit, max_limit (a silent cap), and
 *                   dotted paths in list responses: next_cursor (the next cursor), next_url (the
 *                   next page's URL, null on the last), has_more (true but on the last page),
 *                   done (true on the last page: Zendesk's end_of_stream).
 *   records:        how many records to seed per resource (default 5).
 *   resources:      per resource (the collection's last path segment): id_field, records;
 *                   lookup (other fields an item path's id may name, kept unique: Jira's key);
 *                   lists (more operations that list it: Jira's GET /search/jql for issue);
 *                   get ({operation, id_query}: a get by a query parameter, Jira's
 *                   GET /user?accountId=); timestamps ({created, updated}: dotted fields set
 *                   on create and update); soft_delete ({field, value}: DELETE marks the record,
 *                   which get, update and lists then ignore and exports still show); created_by
 *                   ([{operation, field, echo}]: a field of that operation's body creates a record
 *                   of this resource under the written record, echoed at the dotted path echo of
 *                   the answer: a Zendesk ticket update's comment). A resource no item path
 *                   implies is declared here by its get, or by its lists (the records are the
 *                   items of the first list's array, listed per parent).
 *                   HubSpot's keys beside them: template (the record new and seeded records
 *                   start from instead of a sample of the schema; strings may hold {{n}}, {{id}},
 *                   {{now}}), seed (merged over the template for seeded records only);
 *                   soft_delete also {at, param} (the time of the delete; the query param that
 *                   lists or gets only soft-deleted records, default a boolean flag's name);
 *                   timestamps may name several fields each.
 *   searches:       per operation ("POST /crm/v3/objects/contacts/search"), a search over a
 *                   resource's records with a structured filter body (groups of conditions),
 *                   sorts and a body cursor.
 *   unknown_query:  reject (400) or ignore (default) query parameters the description lacks.
 *   not_found:      the 404 for a record that does not exist (or a path id the description's
 *                   type rules out), by path parameter name, with `default` for the rest.
 *   parameters:     per parameter name, the code and message of a 400 it causes.
 *   operations:     per operation ("POST /tags"): bad_request, the code and message of any 400
 *                   it answers; pagination, its own (an export's); since ({param, field}: records
 *                   whose field is at or after the param's Unix seconds, oldest first). An
 *                   operation with its own pagination or since also shows soft-deleted records.
 *   oauth:          a simulated authorization-code flow (oauth.ts): its two paths, token response,
 *                   refresh tokens (rotated, or kept with keep_refresh_token), expires_in.
 *   sandbox:        credentials: the sample credentials `switchboard sandbox` prints for the
 *                   connector, by the manifest's credential field names (the simulator must
 *                   accept them: list the token under auth.tokens too when tokens are checked).
 *   graphql:        for the GraphQL simulator (graphql-simulator.ts) only: the endpoint path, the
 *                   HTTP status of each error code, the shape of one entry of `errors`, the record
 *                   fields `filter` arguments may compare, the ordering and archived arguments.
 *                   auth.header names the credential header (default Authorization; a scheme word
 *                   such as Bearer before the token is optional there).
 *
 * Keys of the error body whose template renders to "" are left out.
 */
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { parse as parseYaml } from 'yaml';
import type { OAuthConfig } from './oauth.ts';

export interface ErrorOverride {
  code: string;
  message: string;
}

export interface ResourceSidecar {
  id_field?: string;
  records?: number;
  lookup?: string[];
  lists?: string[];
  get?: { operation: string; id_query: string };
  /** Dotted record fields set to the time on create (created and updated) and on update (updated); one field or several. */
  timestamps?: { created?: string | string[]; updated?: string | string[] };
  /** The mark of a deleted record: `field` set to `value` (default true), `at` to the time; `param` asks lists and gets for marked records. */
  soft_delete?: { field: string; value?: string | number | boolean | null; at?: string; param?: string };
  template?: Record<string, unknown>;
  seed?: Record<string, unknown>;
  created_by?: { operation: string; field: string; echo?: string }[];
}

export interface Pagination {
  cursor_param?: string;
  limit_param?: string;
  default_limit?: number;
  max_limit?: number;
  next_cursor?: string;
  next_url?: string;
  has_more?: string;
  done?: string;
}

export interface Sidecar {
  error?: { body?: unknown; codes?: Record<string, string> };
  auth?: { tokens?: string[]; message?: string; header?: string };
  not_found?: Record<string, ErrorOverride>;
  parameters?: Record<string, ErrorOverride>;
  operations?: Record<string, { bad_request?: ErrorOverride; pagination?: Pagination; since?: { param: string; field: string } }>;
  oauth?: OAuthConfig;
  rate_limit?: { limit: number; window_seconds: number; headers?: { limit?: string; remaining?: string; reset?: string; window_ms?: string }; reset?: 'unix' | 'unix_ms' | 'seconds' };
  pagination?: Pagination;
  records?: number;
  resources?: Record<string, ResourceSidecar>;
  searches?: Record<string, SearchSidecar>;
  unknown_query?: 'reject' | 'ignore';
  sandbox?: { credentials?: Record<string, string> };
  graphql?: GraphqlSidecar;
}

/** What a GraphQL schema cannot say about its API (the `graphql` key of a sidecar). */
export interface GraphqlSidecar {
  /** The endpoint's path; default /graphql. */
  path?: string;
  /** HTTP status per simulator error code (invalid, unauthorized, rate_limited, not_found...); default 400 before execution, 200 for errors of fields. */
  status?: Record<string, number>;
  /** The message of an error of a field, by code: a template with {{type}} and {{id}} (not_found: "Entity not found: {{type}}"). */
  messages?: Record<string, string>;
  /** One entry of `errors`: a JSON tree whose strings may hold {{message}}, {{code}}, {{status}}; default {message, extensions: {code}}. */
  error?: Record<string, unknown>;
  /** Record fields (dotted for a related record's field: team.id) that `filter` arguments may compare; other filter fields are refused. */
  filters?: string[];
  /** The name of the filter argument; default filter. */
  filter_argument?: string;
  /** The argument whose enum value names the record field lists are sorted by (default orderBy), and the direction (default asc). */
  order_by?: { argument?: string; direction?: 'asc' | 'desc' };
  /** Archived records: the record field holding when (default archivedAt) and the argument that includes them (default includeArchived). */
  archived?: { field?: string; argument?: string };
}

/**
 * A search operation: `groups` (a body field) lists groups of which any may match, each holding
 * `conditions` that must all match; a condition names a record field (`field`, looked up under
 * `fields_at` in the record), an `operator` (the vendor's names, mapped by `operators` onto eq,
 * neq, lt, lte, gt, gte, between, in, not_in, exists, not_exists, contains, not_contains), a
 * `value`, `values` (in, not_in) and `high_value` (between). `sort` names the body field of sort
 * keys (strings, `-` first for descending, or objects with `field` and `direction`, `descending`
 * naming the descending value). `cursor` and `limit` name body fields; the answer is the
 * operation's response with the page in its array property and the next cursor where the schema
 * has room for it.
 */
export interface SearchSidecar {
  resource: string;
  fields_at?: string;
  groups?: string;
  conditions?: string;
  field?: string;
  operator?: string;
  value?: string;
  values?: string;
  high_value?: string;
  operators?: Record<string, SearchOperator>;
  query?: string;
  sort?: { by: string; field?: string; direction?: string; descending?: string };
  cursor?: string;
  limit?: string;
  default_limit?: number;
  max_limit?: number;
}

export const SEARCH_OPERATORS = ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'between', 'in', 'not_in', 'exists', 'not_exists', 'contains', 'not_contains'] as const;
export type SearchOperator = (typeof SEARCH_OPERATORS)[number];

const fieldOrFields = { anyOf: [{ type: 'string', minLength: 1 }, { type: 'array', items: { type: 'string', minLength: 1 } }] } as const;

const override = { type: 'object', additionalProperties: false, required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } } as const;

const SIDECAR_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  definitions: {
    pagination: {
      type: 'object',
      additionalProperties: false,
      properties: {
        cursor_param: { type: 'string' },
        limit_param: { type: 'string' },
        default_limit: { type: 'integer', minimum: 1 },
        max_limit: { type: 'integer', minimum: 1 },
        next_cursor: { type: 'string' },
        next_url: { type: 'string' },
        has_more: { type: 'string' },
        done: { type: 'string' },
      },
    },
  },
  properties: {
    error: { type: 'object', additionalProperties: false, properties: { body: {}, codes: { type: 'object', additionalProperties: { type: 'string' } } } },
    auth: { type: 'object', additionalProperties: false, properties: { tokens: { type: 'array', items: { type: 'string', minLength: 1 } }, message: { type: 'string' }, header: { type: 'string', pattern: '^[A-Za-z0-9-]+$' } } },
    not_found: { type: 'object', additionalProperties: override },
    parameters: { type: 'object', additionalProperties: override },
    operations: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: {
          bad_request: override,
          pagination: { $ref: '#/definitions/pagination' },
          since: { type: 'object', additionalProperties: false, required: ['param', 'field'], properties: { param: { type: 'string' }, field: { type: 'string' } } },
        },
      },
    },
    oauth: {
      type: 'object',
      additionalProperties: false,
      required: ['authorize_path', 'token_path'],
      properties: {
        authorize_path: { type: 'string', pattern: '^/' },
        token_path: { type: 'string', pattern: '^/' },
        token_response: { type: 'object' },
        deny_description: { type: 'boolean' },
        default_scope: { type: 'string' },
        token_prefix: { type: 'string' },
        expires_in: { type: 'integer', minimum: 1 },
        refresh_tokens: { type: 'boolean' },
        keep_refresh_token: { type: 'boolean' },
      },
    },
    rate_limit: {
      type: 'object',
      additionalProperties: false,
      required: ['limit', 'window_seconds'],
      properties: {
        limit: { type: 'integer', minimum: 1 },
        window_seconds: { type: 'number', exclusiveMinimum: 0 },
        headers: { type: 'object', additionalProperties: false, properties: { limit: { type: 'string' }, remaining: { type: 'string' }, reset: { type: 'string' }, window_ms: { type: 'string' } } },
        reset: { enum: ['unix', 'unix_ms', 'seconds'] },
      },
    },
    pagination: { $ref: '#/definitions/pagination' },
    records: { type: 'integer', minimum: 0, maximum: 10_000 },
    resources: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: {
          id_field: { type: 'string' },
          records: { type: 'integer', minimum: 0, maximum: 10_000 },
          lookup: { type: 'array', items: { type: 'string', minLength: 1 } },
          lists: { type: 'array', items: { type: 'string', pattern: '^(GET|POST) /' } },
          get: { type: 'object', additionalProperties: false, required: ['operation', 'id_query'], properties: { operation: { type: 'string', pattern: '^GET /' }, id_query: { type: 'string', minLength: 1 } } },
          timestamps: { type: 'object', additionalProperties: false, properties: { created: fieldOrFields, updated: fieldOrFields } },
          soft_delete: {
            type: 'object',
            additionalProperties: false,
            required: ['field'],
            properties: { field: { type: 'string' }, value: { type: ['string', 'number', 'boolean', 'null'] }, at: { type: 'string' }, param: { type: 'string' } },
          },
          created_by: {
            type: 'array',
            items: { type: 'object', additionalProperties: false, required: ['operation', 'field'], properties: { operation: { type: 'string', pattern: '^[A-Z]+ /' }, field: { type: 'string' }, echo: { type: 'string' } } },
          },
          template: { type: 'object' },
          seed: { type: 'object' },
        },
      },
    },
    searches: {
      type: 'object',
      propertyNames: { pattern: '^(GET|POST|PUT|PATCH|DELETE) /' },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['resource'],
        properties: {
          resource: { type: 'string' },
          fields_at: { type: 'string' },
          groups: { type: 'string' },
          conditions: { type: 'string' },
          field: { type: 'string' },
          operator: { type: 'string' },
          value: { type: 'string' },
          values: { type: 'string' },
          high_value: { type: 'string' },
          operators: { type: 'object', additionalProperties: { enum: [...SEARCH_OPERATORS] } },
          query: { type: 'string' },
          sort: { type: 'object', additionalProperties: false, required: ['by'], properties: { by: { type: 'string' }, field: { type: 'string' }, direction: { type: 'string' }, descending: { type: 'string' } } },
          cursor: { type: 'string' },
          limit: { type: 'string' },
          default_limit: { type: 'integer', minimum: 1 },
          max_limit: { type: 'integer', minimum: 1 },
        },
      },
    },
    unknown_query: { enum: ['reject', 'ignore'] },
    graphql: {
      type: 'object',
      additionalProperties: false,
      properties: {
        path: { type: 'string', pattern: '^/' },
        status: { type: 'object', additionalProperties: { type: 'integer', minimum: 200, maximum: 599 } },
        error: { type: 'object' },
        messages: { type: 'object', additionalProperties: { type: 'string' } },
        filters: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$' } },
        filter_argument: { type: 'string' },
        order_by: { type: 'object', additionalProperties: false, properties: { argument: { type: 'string' }, direction: { enum: ['asc', 'desc'] } } },
        archived: { type: 'object', additionalProperties: false, properties: { field: { type: 'string' }, argument: { type: 'string' } } },
      },
    },
    sandbox: {
      type: 'object',
      additionalProperties: false,
      properties: { credentials: { type: 'object', additionalProperties: { type: 'string', minLength: 1 } } },
    },
  },
} as const;

const validate = new Ajv({ strict: false, allErrors: true }).compile<Sidecar>(SIDECAR_SCHEMA);

/** Parse and check a sidecar; throws with every problem named. */
export function parseSidecar(text: string, source = 'sidecar'): Sidecar {
  const value = (parseYaml(text) ?? {}) as unknown;
  if (!validate(value)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty: string }).additionalProperty)})` : ''}`);
    throw new Error(`${source}: invalid simulator sidecar: ${problems.join('; ')}`);
  }
  return value;
}

export function loadSidecar(file: string): Sidecar {
  return parseSidecar(readFileSync(file, 'utf8'), file);
}
