/**
 * The sidecar: what an OpenAPI description cannot say about its API, declared in a short YAML
 * file next to the connector (connectors/<type>/simulator.yaml) and read by the generic
 * simulator. Every key is optional; without a sidecar the simulator infers what it can.
 *
 *   error:          the vendor's error body, a JSON tree whose strings may hold {{status}},
 *                   {{code}}, {{message}}, {{field}} and {{request_id}}; `codes` renames the
 *                   simulator's codes (missing, invalid, unknown, unauthorized, invalid_token,
 *                   not_found, method_not_allowed, rate_limited) to the vendor's; `status` answers
 *                   a code with another HTTP status (200–599), `default` for the codes it does not
 *                   name (GitHub: missing and invalid are 422; Slack: 200 with ok: false, 429 kept).
 *   auth:           tokens: the credentials accepted (default: any present credential); header:
 *                   the header carrying them; params: parameters that carry the credential in the
 *                   description (Slack's `token`), which the Authorization header stands for;
 *                   bearer: every operation needs an Authorization token although the
 *                   description declares no security (GitHub's declares none).
 *   rate_limit:     limit per window_seconds, the header names it sends, reset as unix|unix_ms|seconds;
 *                   a 429 carries Retry-After (the seconds until the window ends);
 *                   exceeded_headers: fixed headers of the 429 (Stripe-Should-Retry: "true"); an
 *                   empty value removes one the simulator sends (Retry-After).
 *   pagination:     cursor_param, limit_param, default_limit, max_limit (a silent cap), and
 *                   dotted paths in list responses: next_cursor (the next cursor; on the last page
 *                   last_cursor if given, Slack's "", else null at the cursor's "next" holder or
 *                   the cursor itself), next_url (the next page's URL, null on the last), has_more
 *                   (true but on the last page), done (true on the last page: Zendesk's end_of_stream).
 *   records:        how many records to seed per resource (default 5).
 *   resources:      per resource (the collection's last path segment): id_field, records;
 *                   lookup (other fields an item path's id may name, kept unique: Jira's key);
 *                   lists (more operations that list it: Jira's GET /search/jql for issue);
 *                   get ({operation, id_query}: a get by a query parameter, Jira's
 *                   GET /user?accountId=); timestamps ({created, updated}: a dotted field, or
 *                   several, set on create and update; unix: as Unix seconds); unique ({fields, message}:
 *                   fields no two records share, a write repeating one is 409 conflict, store-rules.ts);
 *                   upsert (a create naming an existing record by this field updates it); soft_delete ({field, value, at, param}:
 *                   DELETE sets field to value (default true) and `at` to the time; get, update,
 *                   lists and searches then ignore the record and exports still show it; `param`
 *                   is the query param that lists or gets only marked records, default a boolean
 *                   flag's name: HubSpot's archived=true); created_by
 *                   ([{operation, field, echo}]: a field of that operation's body creates a record
 *                   of this resource under the written record, echoed at the dotted path echo of
 *                   the answer: a Zendesk ticket update's comment); key: for an item path with
 *                   several ids (/repos/{owner}/{repo}), the record field (dotted) each path param
 *                   names ({owner: owner.login, repo: name}); template: the record seeded and
 *                   created records start from instead of a sample of the schema, its strings may
 *                   be {{n}} (the record's ordinal), {{id}} and {{now}} (Unix seconds; the seed's
 *                   fixed time for seeded records), other placeholders left to the caller; seed:
 *                   fields merged over the template for seeded records only ({{n}} filled),
 *                   or a list of them, one per seeded record (records defaults to its length);
 *                   fields: seeded fields drawn from `pools`. A resource no item path implies is
 *                   declared here by its get, or by its lists (the records are the items of the
 *                   first list's array, listed per parent). For an RPC-style API
 *                   (/conversations.list): the operations that list, get, create, update and
 *                   delete it (get as an operation key or keys), the param naming the record
 *                   (id_param), the response property holding one record (record), a parent
 *                   (parent: {param, resource}) and request fields written elsewhere in the
 *                   record (writes: {topic: topic.value}). On a nested collection's resource
 *                   (/contacts/{contact_id}/notes), parent: {param, resource, append} makes the
 *                   parent's existence a condition and append references each created record
 *                   in the parent ({to, item, count}, store-rules.ts).
 *   filters:        per list query param: the record `field` it compares (dotted; default its
 *                   own name), `match` equals (default), since (field >= value), before (field <=
 *                   value), after (field > value), until (field < value) — numbers when both are
 *                   numeric (Slack's ts), else ISO times — and `any`: values that match every
 *                   record (state=all).
 *   unknown_query:  reject (400) or ignore (default) query parameters the description lacks.
 *   not_found:      the 404 for a record that does not exist (or a path id the description's
 *                   type rules out), by path parameter name, with `default` for the rest.
 *   parameters:     per parameter name, the code and message of a 400 it causes.
 *   operations:     per operation ("POST /tags"): bad_request, the code and message of any 400
 *                   it answers; pagination, its own (an export's); since ({param, field}: records
 *                   whose field is at or after the param's Unix seconds, oldest first). An
 *                   operation with its own pagination or since also shows soft-deleted records.
 *                   no_content_unless (an update): 204 without a body unless this query param
 *                   is true (Jira's edit: returnIssue=true answers the issue, else 204).
 *   oauth:          a simulated authorization-code flow (oauth.ts): its two paths, token response,
 *                   refresh tokens (rotated, or kept with keep_refresh_token), expires_in,
 *                   and `endpoints`: more JSON answers about a grant (Atlassian's
 *                   accessible-resources), empty for a consent given with sim_grant=none.
 *   jwt_tokens:     tokens minted from an app's JWT (jwt-tokens.ts; a GitHub App's installation
 *                   tokens): the minting `operation`, public_keys by issuer (more from the
 *                   simulator's jwtKeys option), fingerprints a key must have, max_lifetime_seconds
 *                   of a JWT, ttl_seconds of a token, token_prefix, the response and its status.
 *                   Minted tokens are accepted on the other operations until they expire.
 *   search:         per operation ("POST /contacts/search"), a search over a resource (rules.ts):
 *                   a filter tree (Intercom) or structured filter groups (filter_groups: HubSpot's
 *                   filterGroups), the body paths of the filters, sort (one field or a list of
 *                   keys) and page, a free-text query, the operator symbols and their meanings,
 *                   the symbols allowed per value type, the response template. Soft-deleted
 *                   records of the simulator's own store are never found.
 *   scroll:         per operation, a one-at-a-time server-side cursor over a whole resource
 *                   (rules.ts): its parameter, page size, idle expiry, its two errors, the response.
 *   pages:          per list operation, its page from a response template (rules.ts): stored or
 *                   newest-first order (reversed by a query value), the page-size, page-number
 *                   and cursor parameters, an offset cursor or a keyset cursor of a declared form,
 *                   a cap on offset paging.
 *   pools:          named lists of values; `resources.<name>.fields` draws seeded record fields
 *                   from them (`{pool: name}`), from a list given in place (`{one_of: [...]}`),
 *                   or from the ids of another resource's seeded records (`{ids_of: resource}`).
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
 *                   over snapshots (cursor_pages), field values derived by templates (fields;
 *                   ids of a resource's records name them), list fields and their arguments
 *                   (lists: graphql-lists.ts), the concrete types of interface values (types);
 *                   rate_limit.sliding
 *                   makes the request limit a sliding window; rate_limit.bucket (OpenAPI simulator)
 *                   a token bucket of `limit` requests refilled evenly over window_seconds;
 *                   rate_limit.per_credential: requests refused for their credentials spend nothing.
 *
 * Keys of the error body whose template renders to "" are left out.
 */
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { parse as parseYaml } from 'yaml';
import type { JwtTokensConfig } from './jwt-tokens.ts';
import type { OAuthConfig } from './oauth.ts';
import type { ParentAppend, UniqueRule } from './store-rules.ts';
import { OPERATOR_MEANINGS, type ListRule, type ScrollRule, type SearchRule } from './rules.ts';

export interface ErrorOverride {
  code: string;
  message: string;
}

/**
 * One resource of the sidecar: Jira's lookup/lists/get-by-query/timestamps, and for an RPC-style
 * API which operation lists, gets, creates, updates or deletes it.
 */
export interface ResourceSidecar {
  id_field?: string;
  /** A real id of the vendor's (Stripe's `cus_NffrFeUfNV2Hib`): new ids take its shape when the description gives no example. */
  id_like?: string | number;
  key?: Record<string, string>;
  records?: number;
  lookup?: string[];
  lists?: string[];
  /** A get by a query parameter ({operation, id_query}), or an RPC method's operation key(s). */
  get?: { operation: string; id_query: string } | string | string[];
  /** Dotted record fields set to the time on create (created and updated) and on update (updated); one field or several; `unix`: as Unix seconds, not ISO 8601. */
  timestamps?: { created?: string | string[]; updated?: string | string[]; step_seconds?: number; unix?: boolean };
  /** Fields no two records share (store-rules.ts): a write repeating one answers 409 conflict with this message. */
  unique?: UniqueRule;
  /** A create whose body's value of this field names a record updates that record. */
  upsert?: string;
  /** The mark of a deleted record: `field` set to `value` (default true), `at` to the time; `param` asks lists and gets for marked records. */
  soft_delete?: { field: string; value?: string | number | boolean | null; at?: string; param?: string };
  /** Fields (dotted) whose numbers and booleans written are kept as text: HubSpot's `properties`. */
  text_values?: string[];
  /** Record fields a create or update keeps as sent, objects merged key by key, though the record schema reads them in another shape (Notion's page properties and parent). */
  written_as_sent?: string[];
  /** The record seeded and created records start from ({{n}}, {{id}}, {{now}} filled). */
  template?: Record<string, unknown>;
  /** Fields answered only when the query parameter `param` names them (Granola's include=transcript). */
  include?: { param: string; fields: string[] };
  /** Fields merged over the template for seeded records only; a list gives each seeded record its own (and their number). */
  seed?: Record<string, unknown> | Record<string, unknown>[];
  created_by?: { operation: string; field: string; echo?: string }[];
  /** Seeded values by dotted path, drawn from a pool or a list given in place. */
  fields?: Record<string, FieldRule>;
  list?: string | string[];
  create?: string | string[];
  update?: string | string[];
  delete?: string | string[];
  /** The query or body param naming the record (Slack's `channel` of conversations.info). */
  id_param?: string;
  /** The response property holding the one record of a get, create or update (Slack's `channel`). */
  record?: string;
  /** Records live under a record of another resource, named by this query or body param (RPC) or path param (a nested collection: that record must exist, and `append` references each created record in it). */
  parent?: { param: string; resource: string; append?: ParentAppend };
  /** Request fields written at another path of the record: {topic: topic.value}. */
  writes?: Record<string, string>;
}
/** The RPC declaration of a resource (its operations as keys). */
export type ResourceDeclaration = ResourceSidecar;

export const RESOURCE_ACTIONS = ['list', 'get', 'create', 'update', 'delete'] as const;

/** The operation keys a resource declares for an RPC action ([] for none, and for Jira's get-by-query object). */
export function declaredOperations(r: ResourceSidecar, action: (typeof RESOURCE_ACTIONS)[number]): string[] {
  const v = r[action];
  return typeof v === 'string' ? [v] : Array.isArray(v) ? v : [];
}

export interface Pagination {
  cursor_param?: string;
  limit_param?: string;
  default_limit?: number;
  max_limit?: number;
  next_cursor?: string;
  /** What next_cursor holds on the last page (Slack's ""); default: null at its "next" holder. */
  last_cursor?: string | null;
  next_url?: string;
  has_more?: string;
  done?: string;
  /** The list order: `stored` (default) or `newest_first` (the last stored record first). */
  order?: 'stored' | 'newest_first';
}

export interface Sidecar {
  /** status: HTTP status by simulator code, `default` for the codes it does not name. */
  error?: { body?: unknown; codes?: Record<string, string>; status?: Record<string, number> };
  auth?: { tokens?: string[]; message?: string; header?: string; params?: string[]; bearer?: boolean };
  not_found?: Record<string, ErrorOverride>;
  parameters?: Record<string, ErrorOverride>;
  /** `example`: the answer of an operation no resource serves, laid over its sample instead of the description's example (Notion's GET /users/me). */
  operations?: Record<string, { bad_request?: ErrorOverride; pagination?: Pagination; since?: { param: string; field: string }; no_content_unless?: string; example?: unknown }>;
  oauth?: OAuthConfig;
  jwt_tokens?: JwtTokensConfig;
  rate_limit?: { limit: number; window_seconds: number; headers?: { limit?: string; remaining?: string; reset?: string; window_ms?: string }; reset?: 'unix' | 'unix_ms' | 'seconds'; exceeded_headers?: Record<string, string>; sliding?: boolean; bucket?: boolean; per_credential?: boolean };
  pagination?: Pagination;
  records?: number;
  resources?: Record<string, ResourceSidecar>;
  filters?: Record<string, FilterEntry>;
  search?: Record<string, SearchRule>;
  scroll?: Record<string, ScrollRule>;
  pages?: Record<string, ListRule>;
  pools?: Record<string, unknown[]>;
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
  /** Field values derived from the record (and the code's variables) by "Type.field": a JSON tree whose "{{name}}" alone is a value, inside text its text; for a field of a resource's type, an id (or ids) names its record(s). */
  fields?: Record<string, unknown>;
  /**
   * List fields by "Type.field" (graphql-lists.ts): `back` references, `order`, fixed `where` values,
   * `filters` by argument (top-level filters entries, plus `values` and `default` conditions),
   * `lookup` (arguments naming records, which lift the filters' defaults), `sort` by argument value.
   */
  lists?: Record<
    string,
    {
      back?: string;
      order?: 'stored' | 'newest_first';
      where?: Record<string, unknown>;
      lookup?: string[];
      filters?: Record<string, FilterEntry & { values?: Record<string, Record<string, unknown>>; default?: Record<string, unknown> }>;
      sort?: Record<string, Record<string, string>>;
    }
  >;
  /** The concrete type of an interface's or union's value by one of its fields: {field, values: {value: Type}, default}. */
  types?: Record<string, { field: string; values: Record<string, string>; default?: string }>;
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

/** How a list's query parameter (or a GraphQL list's argument) filters: the record field, the comparison, values matching every record. */
export interface FilterEntry {
  field?: string;
  /** contains (a case-insensitive substring) and equals_ignore_case: GraphQL lists only. */
  match?: 'equals' | 'since' | 'before' | 'after' | 'until' | 'contains' | 'equals_ignore_case';
  any?: string[];
}

/** A seeded field's value: drawn from a named pool or from a list given in place. */
export type FieldRule = { pool: string } | { one_of: unknown[] } | { ids_of: string };

const fieldOrFields = { anyOf: [{ type: 'string', minLength: 1 }, { type: 'array', items: { type: 'string', minLength: 1 } }] } as const;

/** A filters entry; `contains`, `equals_ignore_case`, `values` and `default` only for GraphQL lists (graphql.lists.*.filters). */
const filterEntry = (matches: string[], more: Record<string, unknown> = {}) =>
  ({ type: 'object', additionalProperties: false, properties: { field: { type: 'string', minLength: 1 }, match: { enum: matches }, any: { type: 'array', items: { type: 'string' } }, ...more } }) as const;
const conditions = { type: 'object', minProperties: 1 } as const;
const MATCHES = ['equals', 'since', 'before', 'after', 'until'];

const typeField = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*\\.[A-Za-z_][A-Za-z0-9_]*$' } as const;

const override = { type: 'object', additionalProperties: false, required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } } as const;

/** An operation ("GET /conversations.list"), or several. */
const operationKey = { type: 'string', pattern: '^(GET|PUT|POST|DELETE|PATCH) /' } as const;
const operations = { anyOf: [operationKey, { type: 'array', minItems: 1, items: operationKey }] } as const;

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
        last_cursor: { type: ['string', 'null'] },
        next_url: { type: 'string' },
        has_more: { type: 'string' },
        done: { type: 'string' },
        order: { enum: ['stored', 'newest_first'] },
      },
    },
  },
  properties: {
    error: {
      type: 'object',
      additionalProperties: false,
      properties: {
        body: {},
        codes: { type: 'object', additionalProperties: { type: 'string' } },
        status: { type: 'object', additionalProperties: { type: 'integer', minimum: 200, maximum: 599 } },
      },
    },
    auth: {
      type: 'object',
      additionalProperties: false,
      properties: {
        tokens: { type: 'array', items: { type: 'string', minLength: 1 } },
        message: { type: 'string' },
        header: { type: 'string', pattern: '^[A-Za-z0-9-]+$' },
        params: { type: 'array', items: { type: 'string', minLength: 1 } },
        bearer: { type: 'boolean' },
      },
    },
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
          no_content_unless: { type: 'string', minLength: 1 },
          example: { type: 'object' },
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
        endpoints: {
          type: 'array',
          items: { type: 'object', additionalProperties: false, required: ['path', 'json'], properties: { path: { type: 'string', pattern: '^/' }, method: { enum: ['GET', 'POST'] }, json: {} } },
        },
      },
    },
    jwt_tokens: {
      type: 'object',
      additionalProperties: false,
      required: ['operation'],
      properties: {
        operation: { type: 'string', pattern: '^[A-Z]+ /' },
        public_keys: { type: 'object', additionalProperties: { type: 'string', pattern: '-----BEGIN (RSA )?PUBLIC KEY-----' } },
        fingerprints: { type: 'array', items: { type: 'string', minLength: 1 } },
        max_lifetime_seconds: { type: 'integer', minimum: 1 },
        ttl_seconds: { type: 'integer', minimum: 1 },
        token_prefix: { type: 'string' },
        response: { type: 'object' },
        status: { type: 'integer', minimum: 200, maximum: 299 },
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
        exceeded_headers: { type: 'object', additionalProperties: { type: 'string' } },
        sliding: { type: 'boolean' },
        bucket: { type: 'boolean' },
        per_credential: { type: 'boolean' },
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
          id_like: { type: ['string', 'integer'] },
          records: { type: 'integer', minimum: 0, maximum: 10_000 },
          key: { type: 'object', additionalProperties: { type: 'string', minLength: 1 } },
          template: { type: 'object' },
          fields: { type: 'object', additionalProperties: { oneOf: [{ type: 'object', additionalProperties: false, required: ['pool'], properties: { pool: { type: 'string' } } }, { type: 'object', additionalProperties: false, required: ['one_of'], properties: { one_of: { type: 'array', minItems: 1 } } }, { type: 'object', additionalProperties: false, required: ['ids_of'], properties: { ids_of: { type: 'string' } } }] } },
          lookup: { type: 'array', items: { type: 'string', minLength: 1 } },
          lists: { type: 'array', items: { type: 'string', pattern: '^(GET|POST) /' } },
          get: {
            anyOf: [
              { type: 'object', additionalProperties: false, required: ['operation', 'id_query'], properties: { operation: { type: 'string', pattern: '^GET /' }, id_query: { type: 'string', minLength: 1 } } },
              operationKey,
              { type: 'array', minItems: 1, items: operationKey },
            ],
          },
          timestamps: { type: 'object', additionalProperties: false, properties: { created: fieldOrFields, updated: fieldOrFields, step_seconds: { type: 'integer', minimum: 1 }, unix: { type: 'boolean' } } },
          unique: { type: 'object', additionalProperties: false, required: ['fields'], properties: { fields: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } }, message: { type: 'string' } } },
          upsert: { type: 'string', minLength: 1 },
          include: { type: 'object', additionalProperties: false, required: ['param', 'fields'], properties: { param: { type: 'string', minLength: 1 }, fields: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } } } },
          ...Object.fromEntries(['list', 'create', 'update', 'delete'].map((a) => [a, operations])),
          id_param: { type: 'string' },
          record: { type: 'string' },
          parent: {
            type: 'object',
            additionalProperties: false,
            required: ['param', 'resource'],
            properties: {
              param: { type: 'string' },
              resource: { type: 'string' },
              append: { type: 'object', additionalProperties: false, required: ['to', 'item'], properties: { to: { type: 'string', minLength: 1 }, item: {}, count: { type: 'string', minLength: 1 } } },
            },
          },
          writes: { type: 'object', additionalProperties: { type: 'string', minLength: 1 } },
          soft_delete: {
            type: 'object',
            additionalProperties: false,
            required: ['field'],
            properties: { field: { type: 'string' }, value: { type: ['string', 'number', 'boolean', 'null'] }, at: { type: 'string' }, param: { type: 'string' } },
          },
          text_values: { type: 'array', items: { type: 'string', minLength: 1 } },
          written_as_sent: { type: 'array', items: { type: 'string', minLength: 1 } },
          created_by: {
            type: 'array',
            items: { type: 'object', additionalProperties: false, required: ['operation', 'field'], properties: { operation: { type: 'string', pattern: '^[A-Z]+ /' }, field: { type: 'string' }, echo: { type: 'string' } } },
          },
          seed: { anyOf: [{ type: 'object' }, { type: 'array', minItems: 1, items: { type: 'object' } }] },
        },
      },
    },
    filters: { type: 'object', additionalProperties: filterEntry(MATCHES) },
    search: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['resource', 'operators', 'response'],
        properties: {
          resource: { type: 'string' },
          query: { type: 'string' },
          unfiltered: { type: 'boolean' },
          path_fields: { type: 'object', additionalProperties: { type: 'string' } },
          filter_groups: { type: 'object', additionalProperties: false, required: ['groups', 'filters'], properties: { groups: { type: 'string' }, filters: { type: 'string' } } },
          fields_at: { type: 'string' },
          text: { type: 'string' },
          keys: { type: 'object', additionalProperties: false, properties: { field: { type: 'string' }, operator: { type: 'string' }, value: { type: 'string' }, values: { type: 'string' }, high_value: { type: 'string' } } },
          groups: { type: 'object', additionalProperties: { enum: ['all', 'any'] } },
          operators: { type: 'object', minProperties: 1, additionalProperties: { enum: OPERATOR_MEANINGS } },
          allowed: { type: 'object', additionalProperties: false, properties: Object.fromEntries(['string', 'number', 'boolean', 'date'].map((t) => [t, { type: 'array', items: { type: 'string' } }])) },
          date_fields: { type: 'string' },
          sort: { type: 'object', additionalProperties: false, required: ['field'], properties: { field: { type: 'string' }, order: { type: 'string' }, descending: { type: 'array', items: { type: 'string' } }, list: { type: 'string' } } },
          pagination: { type: 'object', additionalProperties: false, properties: { per_page: { type: 'string' }, cursor: { type: 'string' }, default: { type: 'integer', minimum: 1 }, max: { type: 'integer', minimum: 1 }, over_max: { enum: ['reject', 'clamp'] } } },
          response: {},
        },
      },
    },
    scroll: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['resource', 'param', 'page_size', 'idle_seconds', 'busy', 'expired', 'response'],
        properties: { resource: { type: 'string' }, param: { type: 'string' }, page_size: { type: 'integer', minimum: 1 }, idle_seconds: { type: 'number', exclusiveMinimum: 0 }, busy: override, expired: override, response: {} },
      },
    },
    pages: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['resource', 'response'],
        properties: {
          resource: { type: 'string' },
          order: { enum: ['stored', 'newest_first'] },
          per_page: { type: 'string' },
          cursor: { type: 'string' },
          default: { type: 'integer', minimum: 1 },
          page: { type: 'string' },
          max_offset: { type: 'object', additionalProperties: false, required: ['limit', 'code', 'message'], properties: { limit: { type: 'integer', minimum: 1 }, code: { type: 'string' }, message: { type: 'string' } } },
          reverse: { type: 'object', additionalProperties: false, required: ['param', 'value'], properties: { param: { type: 'string' }, value: { type: 'string' } } },
          cursor_form: { type: 'array', minItems: 1 },
          id_field: { type: 'string' },
          path_fields: { type: 'object', additionalProperties: { type: 'string' } },
          response: {},
        },
      },
    },
    pools: { type: 'object', additionalProperties: { type: 'array', minItems: 1 } },
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
        fields: { type: 'object', propertyNames: typeField },
        lists: {
          type: 'object',
          propertyNames: typeField,
          additionalProperties: {
            type: 'object',
            additionalProperties: false,
            properties: {
              back: { type: 'string', minLength: 1 },
              order: { enum: ['stored', 'newest_first'] },
              where: { type: 'object' },
              lookup: { type: 'array', items: { type: 'string' } },
              filters: { type: 'object', additionalProperties: filterEntry([...MATCHES, 'contains', 'equals_ignore_case'], { values: { type: 'object', additionalProperties: conditions }, default: conditions }) },
              sort: { type: 'object', additionalProperties: { type: 'object', additionalProperties: { type: 'string', pattern: '^-?[A-Za-z_][A-Za-z0-9_.]*$' } } },
            },
          },
        },
        types: {
          type: 'object',
          additionalProperties: { type: 'object', additionalProperties: false, required: ['field', 'values'], properties: { field: { type: 'string' }, values: { type: 'object', additionalProperties: { type: 'string' } }, default: { type: 'string' } } },
        },
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
  const value = (parseYaml(text, { merge: true }) ?? {}) as unknown;
  if (!validate(value)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}${e.keyword === 'additionalProperties' ? ` (${String((e.params as { additionalProperty: string }).additionalProperty)})` : ''}`);
    throw new Error(`${source}: invalid simulator sidecar: ${problems.join('; ')}`);
  }
  // What the schema cannot check: names that must refer to something declared.
  const problems: string[] = [];
  for (const [key, rule] of Object.entries(value.search ?? {})) {
    for (const [type, symbols] of Object.entries(rule.allowed ?? {})) for (const sym of symbols) if (rule.operators[sym] === undefined) problems.push(`/search/${key}/allowed/${type} names ${sym}, which operators does not declare`);
    if (rule.date_fields !== undefined) {
      try {
        new RegExp(rule.date_fields);
      } catch {
        problems.push(`/search/${key}/date_fields is not a regular expression`);
      }
    }
  }
  for (const [name, r] of Object.entries(value.resources ?? {})) {
    for (const [field, f] of Object.entries(r.fields ?? {})) if ('pool' in f && value.pools?.[f.pool] === undefined) problems.push(`/resources/${name}/fields/${field} draws from pool ${f.pool}, which pools does not declare`);
  }
  if (problems.length > 0) throw new Error(`${source}: invalid simulator sidecar: ${problems.join('; ')}`);
  return value;
}

/** How many records a resource is seeded with: its `records`, else its `seed` list's length, else the sidecar's `records`, else 5. */
export function seedCount(sidecar: Sidecar, resource: string): number {
  const rs = sidecar.resources?.[resource];
  return rs?.records ?? (Array.isArray(rs?.seed) ? rs.seed.length : undefined) ?? sidecar.records ?? 5;
}

/** The `seed` fields of seeded record i (0-based): the seed object, or the list's i-th entry. */
export function seedOf(rs: ResourceSidecar | undefined, i: number): Record<string, unknown> | undefined {
  return Array.isArray(rs?.seed) ? (rs.seed[i] ?? {}) : rs?.seed;
}

export function loadSidecar(file: string): Sidecar {
  return parseSidecar(readFileSync(file, 'utf8'), file);
}
