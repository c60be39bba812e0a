/**
 * The hosted client's types (hosted.ts): the service's schemas from generated/openapi.ts, and
 * the connector API typed per connector type from generated/ (the same as library mode's).
 */
import type { ConnectorTypes } from '../../generated/index.ts';
import type { components, paths } from '../../generated/openapi.ts';
import type { ConnectorType } from './library.ts';

export type Connector = components['schemas']['Connector'];
/** The outcome of a credential check (POST .../check) and the connector with the status it set. */
export type CheckResult = components['schemas']['CheckResult'];
/** A page of the organization's audit log (GET /api/v1/audit-events). */
export type AuditEventList = components['schemas']['AuditEventList'];
export type AuditEvent = AuditEventList['data'][number];
/** Filters of the audit log; `cursor` is meta.cursor of the previous page. */
export type TokenList = components['schemas']['TokenList'];
export type RevokedAll = components['schemas']['RevokedAll'];
/** The allow-lists in force (GET/PUT /api/v1/account/permissions). */
export type Permissions = components['schemas']['Permissions'];
export type AccessRules = NonNullable<Permissions['application']>;
export type AuditEventsQuery = NonNullable<paths['/api/v1/audit-events']['get']['parameters']['query']>;

// ---------------------------------------------------------------------------------------------
// Types derived from generated/ (the same as library mode's)

type Actions<T extends ConnectorType> = ConnectorTypes[T]['actions'];
type ActionOf<T extends ConnectorType, E extends keyof Actions<T>> = Actions<T>[E];
type Params<T extends ConnectorType, E extends keyof Actions<T>, A extends keyof ActionOf<T, E>> = ActionOf<T, E>[A] extends { params: infer P } ? P : never;
type Result<T extends ConnectorType, E extends keyof Actions<T>, A extends keyof ActionOf<T, E>> = ActionOf<T, E>[A] extends { result: infer R } ? R : never;
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is meant: P accepts the empty object when it has no required keys
type ParamsArg<P> = {} extends P ? [params?: P] : [params: P];

type Searchable<T extends ConnectorType> = ConnectorTypes[T]['search'];
type SearchFieldTypes<T extends ConnectorType, E extends keyof Searchable<T>> = Searchable<T>[E] extends { fields: infer F } ? F : never;
type SearchRecordOf<T extends ConnectorType, E extends keyof Searchable<T>> = Searchable<T>[E] extends { record: infer R } ? R : never;
type ValueOf<K> = K extends 'string' ? string : K extends 'integer' | 'number' ? number : K extends 'boolean' ? boolean : unknown;

/** The search filter grammar, typed by the entity's search fields (one field per condition). */
export type SearchFilter<F> =
  | { eq: { [K in keyof F]?: ValueOf<F[K]> } }
  | { neq: { [K in keyof F]?: ValueOf<F[K]> } }
  | { gt: { [K in keyof F]?: ValueOf<F[K]> } }
  | { gte: { [K in keyof F]?: ValueOf<F[K]> } }
  | { lt: { [K in keyof F]?: ValueOf<F[K]> } }
  | { lte: { [K in keyof F]?: ValueOf<F[K]> } }
  | { in: { [K in keyof F]?: ValueOf<F[K]>[] } }
  | { like: { [K in keyof F]?: string } }
  | { fuzzy: { [K in keyof F]?: string } }
  | { keyword: { [K in keyof F]?: string } }
  | { contains: { [K in keyof F]?: string | number | boolean } }
  | { any: { [K in keyof F]?: SearchFilter<Record<string, unknown>> } }
  | { not: SearchFilter<F> }
  | { and: SearchFilter<F>[] }
  | { or: SearchFilter<F>[] };

export interface SearchParams<F> {
  query: { filter?: SearchFilter<F>; sort?: { [K in keyof F]?: 'asc' | 'desc' }[] };
  /** Default 1000, the maximum. */
  limit?: number;
  /** meta.cursor of the previous page. */
  cursor?: string;
  /** Field paths to return (dotted into object fields). */
  fields?: ((keyof F & string) | `${keyof F & string}.${string}`)[];
}

export interface SearchResponse<R> {
  data: Partial<R>[];
  meta: { has_more: boolean; cursor: string | null; took_ms: number | null; synced_at?: string | null };
}

/** One entry of the change feed: the record as stored (a deletion: its last payload) and what happened to it. */
export type ChangeEntry<R = Record<string, unknown>> = Partial<R> & {
  _metadata: { action: 'added' | 'updated' | 'deleted'; first_seen_at: string; last_modified_at: string; deleted_at: string | null; cursor: string };
};

export interface ChangesResponse<R = Record<string, unknown>> {
  data: ChangeEntry<R>[];
  /** Pass as modified_after next time (null: the feed is empty). */
  next_cursor: string | null;
  has_more: boolean;
}

/** A connector of the hosted service, typed by its connector type. */
export interface HostedConnector<T extends ConnectorType> {
  /** Resolves the connector id (looked up by type for this customer when created by type). */
  id(): Promise<string>;
  execute<E extends keyof Actions<T> & string, A extends keyof ActionOf<T, E> & string>(
    entity: E,
    action: A,
    ...params: ParamsArg<Params<T, E, A>>
  ): Promise<Result<T, E, A>>;
  search<E extends keyof Searchable<T> & string>(entity: E, params: SearchParams<SearchFieldTypes<T, E>>): Promise<SearchResponse<SearchRecordOf<T, E>>>;
  /** The change feed of a synced entity: records added, updated or deleted after `modified_after` (a cursor it returned), oldest first. */
  changes(entity: string, query?: { modified_after?: string | null; limit?: number }): Promise<ChangesResponse>;
  /**
   * Any endpoint under the connector's base URL through the service's proxy (docs/proxy.md):
   * resolves with the vendor's status, headers and body whatever the status; rejects with the
   * SwitchboardError of the service's own refusals (Switchboard-Proxy-Source: switchboard).
   * Not retried by the client: the service already retried what was safe to retry.
   */
  proxy(request: HostedProxyRequest): Promise<HostedProxyResponse>;
}

export interface HostedProxyRequest {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path under the connector's base URL, e.g. /repos/octo/hello/branches. */
  path: string;
  query?: Record<string, string | number | boolean> | string;
  /** Forwarded when on the connector's allow-list (docs/proxy.md), dropped otherwise. */
  headers?: Record<string, string>;
  /** Sent as given; an object is sent as JSON. */
  body?: string | Uint8Array | Record<string, unknown> | unknown[];
}

export interface HostedProxyResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

export interface CreateConnectorInput<T extends ConnectorType> {
  connector_type: T;
  name: string;
  /** Variant A: credentials of one of the type's variants. */
  credentials?: ConnectorTypes[T]['credentials'];
  /** Variant B: the secret_id the OAuth flow redirected back with. */
  server_side_oauth_secret_id?: string;
  /** Default: the client's customerName. */
  customer_name?: string;
}
