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
 *                   next_cursor (dotted path of the next cursor in list responses).
 *   records:        how many records to seed per resource (default 5).
 *   resources:      per resource (the collection's last path segment): id_field, records;
 *                   lookup (other fields an item path's id may name, kept unique: Jira's key);
 *                   lists (more operations that list it: Jira's GET /search/jql for issue);
 *                   get ({operation, id_query}: a get by a query parameter, Jira's
 *                   GET /user?accountId=); timestamps ({created, updated}: dotted fields set
 *                   on create and update). A resource no item path implies is declared here
 *                   by its get.
 *   unknown_query:  reject (400) or ignore (default) query parameters the description lacks.
 *   not_found:      the 404 for a record that does not exist (or a path id the description's
 *                   type rules out), by path parameter name, with `default` for the rest.
 *   parameters:     per parameter name, the code and message of a 400 it causes.
 *   operations:     per operation ("POST /tags"), the code and message of any 400 it answers.
 *   oauth:          a simulated authorization-code flow (oauth.ts): its two paths, token response.
 *   sandbox:        credentials: the sample credentials `switchboard sandbox` prints for the
 *                   connector, by the manifest's credential field names (the simulator must
 *                   accept them: list the token under auth.tokens too when tokens are checked).
 *   graphql:        for the GraphQL simulator (graphql-simulator.ts) only: the endpoint path, the
 *                   HTTP status of each error code, the shape of one entry of `errors`, the record
 *                   fields `filter` arguments may compare, the ordering and archived arguments.
 *                   auth.header names the credential header (default Authorization; a scheme word
 *                   such as Bearer before the token is optional there). Also: the error dialect
 *                   (graphql-ruby wording), error entries per code, an envelope of top-level keys,
 *                   API versions by header, a query-cost budget (complexity), cursor pagination
 *                   over snapshots (cursor_pages), field values derived by templates (fields);
 *                   rate_limit.sliding
 *                   makes the request limit a sliding window.
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
  timestamps?: { created?: string; updated?: string };
}

export interface Sidecar {
  error?: { body?: unknown; codes?: Record<string, string> };
  auth?: { tokens?: string[]; message?: string; header?: string };
  not_found?: Record<string, ErrorOverride>;
  parameters?: Record<string, ErrorOverride>;
  operations?: Record<string, { bad_request?: ErrorOverride }>;
  oauth?: OAuthConfig;
  rate_limit?: { limit: number; window_seconds: number; headers?: { limit?: string; remaining?: string; reset?: string }; reset?: 'unix' | 'unix_ms' | 'seconds'; sliding?: boolean };
  pagination?: { cursor_param?: string; limit_param?: string; default_limit?: number; max_limit?: number; next_cursor?: string };
  records?: number;
  resources?: Record<string, ResourceSidecar>;
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
  /** graphql-ruby: parse and validation errors worded as graphql-ruby words them (graphql-ruby.ts). */
  dialect?: 'graphql-js' | 'graphql-ruby';
  /** One entry of `errors` per simulator code, overriding `error` (same variables, plus {{retry_in_seconds}}, {{complexity}}, {{max_complexity}}). */
  errors?: Record<string, Record<string, unknown>>;
  /** Top-level keys added to every answer after authentication: a template with {{request_id}} and the variables the code gives. */
  envelope?: Record<string, unknown>;
  /** API versions: the request header naming one, those served (value: kind), and the one answered for any other. */
  versions?: { header: string; served: Record<string, string>; default: string };
  /**
   * Cursor pagination over snapshots (monday's items_page / next_items_page): `next` the root field
   * (cursor, limit) answering the page after a cursor, how long a cursor lives, the largest limit,
   * and the rows a page skips when they have changed since (`{field, values}`).
   */
  cursor_pages?: { next?: string; ttl_seconds?: number; max_limit?: number; skip?: { field: string; values: string[] } };
  /** Field values derived from the record (and the code's variables) by "Type.field": a JSON tree whose "{{name}}" alone is a value, inside text its text. */
  fields?: Record<string, unknown>;
  /** A query-cost budget (graphql-complexity.ts). */
  complexity?: {
    budget: number;
    window_seconds: number;
    max_query?: number;
    list_size?: number;
    sizes?: Record<string, number>;
    /** HTTP status of an exhausted budget; default 200 (an error beside no data). */
    status?: number;
    /** Headers on every answer: templates with {{budget}}, {{window_seconds}}, {{remaining}}, {{reset}}. */
    headers?: Record<string, string>;
    messages?: { exhausted?: string; too_complex?: string };
  };
}

const override = { type: 'object', additionalProperties: false, required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } } as const;

const SIDECAR_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    error: { type: 'object', additionalProperties: false, properties: { body: {}, codes: { type: 'object', additionalProperties: { type: 'string' } } } },
    auth: { type: 'object', additionalProperties: false, properties: { tokens: { type: 'array', items: { type: 'string', minLength: 1 } }, message: { type: 'string' }, header: { type: 'string', pattern: '^[A-Za-z0-9-]+$' } } },
    not_found: { type: 'object', additionalProperties: override },
    parameters: { type: 'object', additionalProperties: override },
    operations: { type: 'object', additionalProperties: { type: 'object', additionalProperties: false, properties: { bad_request: override } } },
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
        refresh_tokens: { type: 'boolean' },
      },
    },
    rate_limit: {
      type: 'object',
      additionalProperties: false,
      required: ['limit', 'window_seconds'],
      properties: {
        limit: { type: 'integer', minimum: 1 },
        window_seconds: { type: 'number', exclusiveMinimum: 0 },
        headers: { type: 'object', additionalProperties: false, properties: { limit: { type: 'string' }, remaining: { type: 'string' }, reset: { type: 'string' } } },
        reset: { enum: ['unix', 'unix_ms', 'seconds'] },
        sliding: { type: 'boolean' },
      },
    },
    pagination: {
      type: 'object',
      additionalProperties: false,
      properties: {
        cursor_param: { type: 'string' },
        limit_param: { type: 'string' },
        default_limit: { type: 'integer', minimum: 1 },
        max_limit: { type: 'integer', minimum: 1 },
        next_cursor: { type: 'string' },
      },
    },
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
          timestamps: { type: 'object', additionalProperties: false, properties: { created: { type: 'string', minLength: 1 }, updated: { type: 'string', minLength: 1 } } },
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
        dialect: { enum: ['graphql-js', 'graphql-ruby'] },
        errors: { type: 'object', additionalProperties: { type: 'object' } },
        envelope: { type: 'object' },
        versions: {
          type: 'object',
          additionalProperties: false,
          required: ['header', 'served', 'default'],
          properties: { header: { type: 'string', pattern: '^[A-Za-z0-9-]+$' }, served: { type: 'object', additionalProperties: { type: 'string' } }, default: { type: 'string' } },
        },
        fields: { type: 'object', propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*\\.[A-Za-z_][A-Za-z0-9_]*$' } },
        cursor_pages: {
          type: 'object',
          additionalProperties: false,
          properties: {
            next: { type: 'string' },
            ttl_seconds: { type: 'number', exclusiveMinimum: 0 },
            max_limit: { type: 'integer', minimum: 1 },
            skip: { type: 'object', additionalProperties: false, required: ['field', 'values'], properties: { field: { type: 'string' }, values: { type: 'array', items: { type: 'string' } } } },
          },
        },
        complexity: {
          type: 'object',
          additionalProperties: false,
          required: ['budget', 'window_seconds'],
          properties: {
            budget: { type: 'integer', minimum: 1 },
            window_seconds: { type: 'number', exclusiveMinimum: 0 },
            max_query: { type: 'integer', minimum: 1 },
            list_size: { type: 'integer', minimum: 0 },
            sizes: { type: 'object', additionalProperties: { type: 'integer', minimum: 0 } },
            status: { type: 'integer', minimum: 200, maximum: 599 },
            headers: { type: 'object', additionalProperties: { type: 'string' } },
            messages: { type: 'object', additionalProperties: false, properties: { exhausted: { type: 'string' }, too_complex: { type: 'string' } } },
          },
        },
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
