/**
 * Library mode ("open source execution"): the caller holds the credentials and runs connectors
 * in its own process. `connect()` is typed from generated/: params and results per entity and
 * action, credentials per connector type.
 */
import type { ConnectorTypes } from '../../generated/index.ts';
import type { Credentials } from '../auth/index.ts';
import { ConnectorRuntime, type CheckResult, type RuntimeOptions } from '../engine/index.ts';
import type { ProxyRequest, ProxyResponse } from '../engine/proxy-exchange.ts';
import { SwitchboardError } from '../errors/index.ts';
import type { FetchLike } from '../http/index.ts';
import { getConnector } from '../manifest/index.ts';

export type ConnectorType = keyof ConnectorTypes;
type Actions<T extends ConnectorType> = ConnectorTypes[T]['actions'];
type ListEntities<T extends ConnectorType> = { [E in keyof Actions<T>]: 'list' extends keyof Actions<T>[E] ? E : never }[keyof Actions<T>];
type ActionOf<T extends ConnectorType, E extends keyof Actions<T>> = Actions<T>[E];
type Params<T extends ConnectorType, E extends keyof Actions<T>, A extends keyof ActionOf<T, E>> = ActionOf<T, E>[A] extends { params: infer P } ? P : never;
type Result<T extends ConnectorType, E extends keyof Actions<T>, A extends keyof ActionOf<T, E>> = ActionOf<T, E>[A] extends { result: infer R } ? R : never;
type ListRecord<T extends ConnectorType, E extends keyof Actions<T>> = ActionOf<T, E> extends { list: { result: { data: (infer R)[] } } } ? R : never;
type ListPage<T extends ConnectorType, E extends keyof Actions<T>> = ActionOf<T, E> extends { list: { result: infer R } } ? R : never;
/** An object with no required keys accepts `undefined` for params. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- `{}` is meant: P accepts the empty object when it has no required keys
type ParamsArg<P> = {} extends P ? [params?: P] : [params: P];

export interface ConnectOptions<T extends ConnectorType> {
  /** Credentials of one of the connector type's variants. */
  credentials: ConnectorTypes[T]['credentials'];
  /** Upstream base URL (regions, proxies, simulators); default the manifest's. */
  baseUrl?: string;
  /** Region from the manifest's base_url.regions (e.g. "eu" for Intercom). */
  region?: string;
  /** Values for the manifest's config settings (e.g. Monday's api_version). */
  config?: Record<string, unknown>;
  /** Transport; default Node's fetch (undici). */
  fetch?: FetchLike;
  /** Per-attempt timeout in ms; default 30000. */
  timeoutMs?: number;
  /** OAuth app for refreshing tokens when the credentials don't carry client_id/client_secret. */
  oauthClient?: { clientId: string; clientSecret: string; tokenUrl?: string };
  /** Receives the new credentials after an OAuth token refresh. */
  onTokenRefresh?: (credentials: ConnectorTypes[T]['credentials']) => void | Promise<void>;
  /** Retry overrides, e.g. { maxAttempts: 1 } to fail fast. */
  retry?: RuntimeOptions['retry'];
}

/** A connector in library mode. */
export interface Connector<T extends ConnectorType> {
  readonly type: T;
  /** Name of the auth variant chosen from the credentials. */
  readonly authVariant: string;
  /** Run one action; list → {data, meta}, get/create/update → {data}. */
  execute<E extends keyof Actions<T> & string, A extends keyof ActionOf<T, E> & string>(
    entity: E,
    action: A,
    ...params: ParamsArg<Params<T, E, A>>
  ): Promise<Result<T, E, A>>;
  /** Every record of a list across all pages, streamed. */
  records<E extends ListEntities<T> & string>(entity: E, ...params: ParamsArg<Params<T, E, 'list' & keyof ActionOf<T, E>>>): AsyncGenerator<ListRecord<T, E>>;
  /** Every page of a list. */
  pages<E extends ListEntities<T> & string>(entity: E, ...params: ParamsArg<Params<T, E, 'list' & keyof ActionOf<T, E>>>): AsyncGenerator<ListPage<T, E>>;
  /** Always fails with search_hosted_only: search runs over data synced by the hosted service. */
  search(entity: string, params?: unknown): Promise<never>;
  /**
   * Prove the credentials work with the manifest's check (one cheap request): resolves with the
   * account facts the check reports, or rejects with the SwitchboardError (e.g.
   * upstream_credentials_rejected, upstream_unavailable).
   */
  check(): Promise<CheckResult & { info: ConnectorTypes[T]['check'] }>;
  /**
   * Any endpoint of the vendor's API with the connector's auth, throttle and retries (docs/proxy.md):
   * `{ method, path, query, headers, body }`, path under the base URL. Resolves with the vendor's
   * status, answer headers and body (bytes, unchanged) whatever the status; rejects with
   * proxy_path_refused, proxy_header_refused or proxy_host_refused before sending anything.
   */
  proxy(request: ProxyRequest): Promise<ProxyResponse>;
}

/** Connect to a third-party account with credentials held by the caller. */
export function connect<T extends ConnectorType>(type: T, options: ConnectOptions<T>): Connector<T> {
  const runtime = new ConnectorRuntime(getConnector(type), options.credentials, {
    ...(options.baseUrl !== undefined ? { baseUrl: options.baseUrl } : {}),
    ...(options.region !== undefined ? { region: options.region } : {}),
    ...(options.config !== undefined ? { config: options.config } : {}),
    ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.oauthClient !== undefined ? { oauthClient: options.oauthClient } : {}),
    ...(options.retry !== undefined ? { retry: options.retry } : {}),
    ...(options.onTokenRefresh !== undefined ? { onTokenRefresh: options.onTokenRefresh as unknown as (c: Credentials) => void | Promise<void> } : {}),
  });
  return {
    type,
    authVariant: runtime.authVariant,
    execute: (entity, action, ...params) => runtime.execute(entity, action, params[0]) as never,
    records: (entity, ...params) => runtime.records(entity, params[0]) as never,
    pages: (entity, ...params) => runtime.pages(entity, params[0]) as never,
    check: () => runtime.check() as Promise<CheckResult & { info: ConnectorTypes[T]['check'] }>,
    proxy: (request) => runtime.proxy(request),
    search: async (entity) => {
      runtime.action(entity, 'search');
      throw new SwitchboardError('search_hosted_only');
    },
  };
}
