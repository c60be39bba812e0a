/** The shapes of a simulator sidecar (simulator.yaml), as sidecar.ts describes them. */
import type { JwtTokensConfig } from '../core/jwt-tokens.ts';
import type { OAuthConfig } from '../core/oauth.ts';
import type { QueryRule } from '../query-language.ts';
import type { ChangedRule, DeletionsRule, ListRule, ScrollRule, SearchRule } from '../rules.ts';
import type { ParentAppend, UniqueRule } from '../store-rules.ts';

export interface ErrorOverride {
  code: string;
  message: string;
}

/**
 * One resource of the sidecar: a vendor's lookup/lists/get-by-query/timestamps, and for an RPC-style
 * API which operation lists, gets, creates, updates or deletes it.
 */
export interface ResourceSidecar {
  id_field?: string;
  /** A real id of the vendor's (e.g. `cus_NffrFeUfNV2Hib`): new ids take its shape when the description gives no example. */
  id_like?: string | number;
  key?: Record<string, string>;
  records?: number;
  lookup?: string[];
  /** Words an item path's id may be instead of an id, each naming the record at that position (1: the first seeded): `{me: 1}`. */
  aliases?: Record<string, number>;
  lists?: string[];
  /**
   * A get by a query parameter ({operation, id_query}), or without id_query by the operation's path
   * parameters, each naming the record field `key` gives (a site by host name and path:
   * /sites/{hostname}:/sites/{site-name}); or an RPC method's operation key(s).
   */
  get?: { operation: string; id_query?: string } | string | string[];
  /** Dotted record fields set to the time on create (created and updated) and on update (updated); one field or several; `unix`: as Unix seconds, not ISO 8601. */
  timestamps?: { created?: string | string[]; updated?: string | string[]; step_seconds?: number; unix?: boolean | 'ms_text'; unix_ms?: boolean };
  /** Fields no two records share (store-rules.ts): a write repeating one answers 409 conflict with this message. */
  unique?: UniqueRule;
  /** A create whose body's value of this field names a record updates that record. */
  upsert?: string;
  /** The mark of a deleted record: `field` set to `value` (default true), `at` to the time; `param` asks lists and gets for marked records. */
  soft_delete?: { field: string; value?: string | number | boolean | null; at?: string; param?: string };
  /** Fields (dotted) whose numbers and booleans written are kept as text: a vendor's `properties`. */
  text_values?: string[];
  /** Record fields a create or update keeps as sent, objects merged key by key, though the record schema reads them in another shape (e.g. property values written as rich text). */
  written_as_sent?: string[];
  /** A create's answer instead of the record: a template filled with the created record's fields (a vendor answering only the new id). */
  created_answer?: unknown;
  /** An update's answer instead of the record, filled the same way (a vendor answering only the outcome and the id). */
  updated_answer?: unknown;
  /** The record seeded and created records start from ({{n}}, {{id}}, {{now}} filled). */
  template?: Record<string, unknown>;
  /** Fields answered only when the query parameter `param` names them (e.g. include=transcript). */
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
  /** The query or body param naming the record (e.g. `channel` of conversations.info); a list: the first the request gives (a get's `path`, a move's `from_path`). */
  id_param?: string | string[];
  /** The response property holding the one record of a get, create or update (e.g. `channel`); a method whose answer has no such property answers the record itself. */
  record?: string;
  /** Records live under a record of another resource, named by this query or body param (RPC) or path param (a nested collection: that record must exist, and `append` references each created record in it). */
  parent?: { param: string; resource: string; append?: ParentAppend };
  /** Request fields written at another path of the record: {topic: topic.value}. */
  writes?: Record<string, string>;
}
/** The RPC declaration of a resource (its operations as keys). */
export type ResourceDeclaration = ResourceSidecar;

export const RESOURCE_ACTIONS = ['list', 'get', 'create', 'update', 'delete'] as const;

/** The operation keys a resource declares for an RPC action ([] for none, and for a vendor's get-by-query object). */
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
  /** What next_cursor holds on the last page (e.g. ""); default: null at its "next" holder. */
  last_cursor?: string | null;
  /** The last page's cursor still names the list's end: a request from it answers what was added since (a folder listing's cursor kept for changes). */
  cursor_at_end?: boolean;
  next_url?: string;
  has_more?: string;
  done?: string;
  /**
   * The list order: `stored` (default), `newest_first` (the last stored record first), or by id,
   * `id_ascending` or `id_descending` (ids compared as numbers, long ones exactly:
   * snowflakes, whose order is their creation time's).
   */
  order?: 'stored' | 'newest_first' | 'id_ascending' | 'id_descending';
}

export interface Sidecar {
  /**
   * status: HTTP status by simulator code, `default` for the codes it does not name. body: null answers
   * errors without a body; headers: templates (as body's) sent with every error (a vendor's reason header).
   */
  error?: { body?: unknown; headers?: Record<string, string>; codes?: Record<string, string>; status?: Record<string, number> };
  /** Headers on every answer (OpenAPI simulator); values may hold {{request_id}}, a new UUID per answer (a vendor's request-id). */
  response_headers?: Record<string, string>;
  /** basic_user: HTTP basic carries the credential as its user name, whatever the password. */
  auth?: { tokens?: string[]; message?: string; header?: string; params?: string[]; bearer?: boolean; basic_user?: boolean };
  not_found?: Record<string, ErrorOverride>;
  parameters?: Record<string, ErrorOverride>;
  /** `example`: the answer of an operation no resource serves, laid over its sample instead of the description's example (e.g. a token's own user); `item`: see below. */
  operations?: Record<
    string,
    {
      bad_request?: ErrorOverride;
      pagination?: Pagination;
      since?: { param: string; field: string };
      no_content_unless?: string;
      example?: unknown;
      /** A list's item as a template over the record's fields: another API's view of the resource (a file store listing documents). */
      item?: Record<string, unknown>;
      /** Body keys answered with every record of a resource (an answer holding several resources at once: a sync endpoint's). */
      collections?: Record<string, string>;
      /** A list with no records answers `status` without a body (204), or, when a filter of `when_filtered` was given, its status (304 after If-Modified-Since). */
      empty?: { status: number; when_filtered?: Record<string, number> };
    }
  >;
  oauth?: OAuthConfig;
  /** Requests whose path names no operation are served as if they began with this path: the account a connector's base URL holds (`/v2.1/accounts/<id>`). */
  base_path?: string;
  jwt_tokens?: JwtTokensConfig;
  rate_limit?: {
    limit: number;
    window_seconds: number;
    headers?: { limit?: string; remaining?: string; reset?: string; window_ms?: string };
    reset?: 'unix' | 'unix_ms' | 'seconds';
    exceeded_headers?: Record<string, string>;
    sliding?: boolean;
    bucket?: boolean;
    per_credential?: boolean;
  };
  pagination?: Pagination;
  records?: number;
  resources?: Record<string, ResourceSidecar>;
  filters?: Record<string, FilterEntry>;
  search?: Record<string, SearchRule>;
  scroll?: Record<string, ScrollRule>;
  pages?: Record<string, ListRule>;
  /** Per operation, a statement of a SQL-like query language in a query parameter, answered from a resource's records (query-language.ts). */
  query?: Record<string, QueryRule>;
  /** Per operation, the records soft_delete marked in a time window (rules.ts). */
  deletions?: Record<string, DeletionsRule>;
  /** Per operation, the records of several resources changed since a time (a change-data-capture feed, rules.ts). */
  changed?: Record<string, ChangedRule>;
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
  /** graphql-ruby: parse and validation errors worded as graphql-ruby words them (graphql/ruby.ts). */
  dialect?: 'graphql-js' | 'graphql-ruby';
  /** A root lookup by key of a record that does not exist: `error` (default: code not_found beside data null) or `null` (the field answers null, no error, when its type is nullable: Shopify's product(id:)). */
  missing?: 'error' | 'null';
  /** The shape of the ids minted for records (seeded and created): {{type}} the object type's name, {{number}} a 13-digit number (Shopify's gid://shopify/{{type}}/{{number}}); default a UUID. */
  id_template?: string;
  /** One entry of `errors` per simulator code, overriding `error` (same variables, plus {{retry_in_seconds}}, {{complexity}}, {{max_complexity}}). */
  errors?: Record<string, Record<string, unknown>>;
  /** Top-level keys added to every answer after authentication: a template with {{request_id}} and the variables the code gives. */
  envelope?: Record<string, unknown>;
  /** API versions: the request header naming one, those served (value: kind), and the one answered for any other. */
  versions?: { header: string; served: Record<string, string>; default: string };
  /**
   * Cursor pagination over snapshots (e.g. items_page / next_items_page): `next` the root field
   * (cursor, limit) answering the page after a cursor, how long a cursor lives, the largest limit,
   * and the rows a page skips when they have changed since (`{field, values}`).
   */
  cursor_pages?: { next?: string; ttl_seconds?: number; max_limit?: number; skip?: { field: string; values: string[] } };
  /** Field values derived from the record (and the code's variables) by "Type.field": a JSON tree whose "{{name}}" alone is a value, inside text its text; for a field of a resource's type, an id (or ids) names its record(s). */
  fields?: Record<string, unknown>;
  /**
   * List fields by "Type.field" (graphql/lists.ts): `back` references, `order`, fixed `where` values,
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
  /** A query-cost budget (graphql/complexity.ts). */
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
