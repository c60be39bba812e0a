/**
 * The hosted-mode SDK: a typed client of the Switchboard service, built on openapi-fetch with
 * path types generated from the service's own OpenAPI document (generated/openapi.ts).
 *
 * The configuration is the spec's: the caller's customer name, an optional organization id, and
 * a client id and secret. `connector('intercom').execute('contacts', 'get', {...})` is typed
 * exactly like library mode's `connect('intercom', ...)`, so switching modes is a one-line change.
 */
import createFetchClient from 'openapi-fetch';
import type { ConnectorTypes } from '../../generated/index.ts';
import type { components, paths } from '../../generated/openapi.ts';
import { SwitchboardError, type ErrorCode, type ErrorDetail } from '../errors/index.ts';
import type { FetchLike } from '../http/index.ts';
import { sleep } from '../http/index.ts';
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

export interface HostedClientOptions {
  /** The service's base URL, e.g. https://switchboard.example.com (no /api/v1). */
  baseUrl: string;
  /** Your identifier of the customer this client acts for (used by create, initiate and connector(type)). */
  customerName: string;
  /** Needed when the application can access several organizations. */
  organizationId?: string;
  clientId: string;
  clientSecret: string;
  /** Transport; default the global fetch. */
  fetch?: FetchLike;
  /** Attempts for a request answered 429 (honouring Retry-After); default 3. */
  maxAttempts?: number;
  /** Renew the access token this long before it expires (at most half its lifetime); default 60 s. */
  renewBeforeMs?: number;
}

// ---------------------------------------------------------------------------------------------
// Types derived from generated/ (the same as library mode's)

type Actions<T extends ConnectorType> = ConnectorTypes[T]['actions'];
type ActionOf<T extends ConnectorType, E extends keyof Actions<T>> = Actions<T>[E];
type Params<T extends ConnectorType, E extends keyof Actions<T>, A extends keyof ActionOf<T, E>> = ActionOf<T, E>[A] extends { params: infer P } ? P : never;
type Result<T extends ConnectorType, E extends keyof Actions<T>, A extends keyof ActionOf<T, E>> = ActionOf<T, E>[A] extends { result: infer R } ? R : never;
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
  execute<E extends keyof Actions<T> & string, A extends keyof ActionOf<T, E> & string>(entity: E, action: A, ...params: ParamsArg<Params<T, E, A>>): Promise<Result<T, E, A>>;
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Problem = { code?: string; detail?: string; title?: string; status?: number; errors?: ErrorDetail[] } & Record<string, unknown>;

/**
 * Turn a problem-details body into the SwitchboardError both modes throw. The problem's
 * `details` member becomes the error's `details` as it is (so `e.details.upstream_status` reads
 * the same in library and hosted mode); any other extension member is kept beside it.
 */
function problemError(status: number, body: unknown): SwitchboardError {
  const p = (body !== null && typeof body === 'object' ? body : {}) as Problem;
  const code = (typeof p.code === 'string' ? p.code : status >= 500 ? 'internal_error' : 'invalid_request') as ErrorCode;
  const { type: _t, title: _ti, status: _s, detail, code: _c, errors, instance: _i, details, ...extensions } = p;
  return new SwitchboardError(code, typeof detail === 'string' ? detail : (p.title ?? `HTTP ${status}`), {
    status,
    ...(Array.isArray(errors) ? { errors } : {}),
    details: { ...extensions, ...(details !== null && typeof details === 'object' && !Array.isArray(details) ? (details as Record<string, unknown>) : {}) },
  });
}

/**
 * How long a 429 asks to wait: Retry-After as delay-seconds or an HTTP date (RFC 9110 §10.2.3);
 * undefined when absent or unreadable.
 */
function retryAfterMs(header: string | null, now: number): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Create a client of a Switchboard service. */
export function createClient(options: HostedClientOptions) {
  const baseFetch: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
  const maxAttempts = options.maxAttempts ?? 3;
  const renewBefore = options.renewBeforeMs ?? 60_000;
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  let token: { value: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;

  /**
   * A cached access token, renewed before it expires (one request at a time): `renewBeforeMs`
   * ahead, or half-way through its lifetime for tokens shorter-lived than twice that, so a short
   * token lifetime does not mean a token request per call.
   */
  async function accessToken(force = false): Promise<string> {
    if (!force && token && token.renewAt > Date.now()) return token.value;
    pending ??= (async () => {
      // Relative to the base URL's path too, as openapi-fetch resolves every other endpoint (a service behind a path prefix).
      const res = await baseFetch(`${baseUrl}/api/v1/account/applications/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ client_id: options.clientId, client_secret: options.clientSecret }),
      });
      const body: unknown = await res.json().catch(() => undefined);
      if (!res.ok) throw problemError(res.status, body);
      const t = body as components['schemas']['TokenResponse'];
      const lifetimeMs = t.expires_in * 1000;
      token = { value: t.access_token, renewAt: Date.now() + lifetimeMs - Math.min(renewBefore, lifetimeMs / 2) };
      return t.access_token;
    })().finally(() => {
      pending = undefined;
    });
    return pending;
  }

  /** The transport under openapi-fetch: bearer token, organization header, 401 renewal, 429 retries. */
  const authedFetch = async (request: Request): Promise<Response> => {
    let renewed = false;
    for (let attempt = 1; ; attempt++) {
      const req = request.clone();
      req.headers.set('authorization', `Bearer ${await accessToken()}`);
      if (options.organizationId !== undefined) req.headers.set('x-organization-id', options.organizationId);
      const res = await baseFetch(req.url, { method: req.method, headers: req.headers, ...(req.body ? { body: await req.text() } : {}) });
      if (res.status === 401 && !renewed) {
        renewed = true;
        token = undefined;
        continue;
      }
      if (res.status === 429 && attempt < maxAttempts) {
        // Without a readable Retry-After, back off one more second per attempt.
        await sleep(Math.min(retryAfterMs(res.headers.get('retry-after'), Date.now()) ?? 1000 * attempt, 30_000));
        continue;
      }
      return res;
    }
  };

  const api = createFetchClient<paths>({ baseUrl, fetch: authedFetch });

  async function unwrap<D>(p: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
    const { data, error, response } = await p;
    if (error !== undefined || !response.ok) throw problemError(response.status, error);
    return data as D;
  }

  const connectors = {
    /**
     * Create a connector: with credentials (variant A) or an OAuth secret id (variant B). The
     * service checks the credentials first (upstream_credentials_rejected / upstream_unavailable
     * on failure, nothing stored); `{ check: false }` skips that.
     */
    create<T extends ConnectorType>(input: CreateConnectorInput<T>, opts: { check?: boolean } = {}): Promise<Connector> {
      return unwrap(
        api.POST('/api/v1/integrations/connectors', {
          params: { query: opts.check === false ? { check: false } : {} },
          // Credentials are free-form objects in the OpenAPI document; their shape is typed here instead.
          body: {
            customer_name: input.customer_name ?? options.customerName,
            connector_type: input.connector_type,
            name: input.name,
            ...(input.credentials ? { credentials: input.credentials } : {}),
            ...(input.server_side_oauth_secret_id ? { server_side_oauth_secret_id: input.server_side_oauth_secret_id } : {}),
          } as never,
        }),
      );
    },
    /** One page of this customer's connectors (filter by type; customer_name defaults to the client's). */
    list(query: { connector_type?: string; customer_name?: string; status?: Connector['status']; limit?: number; cursor?: string } = {}) {
      return unwrap(api.GET('/api/v1/integrations/connectors', { params: { query: { customer_name: options.customerName, ...query } } }));
    },
    get(id: string): Promise<Connector> {
      return unwrap(api.GET('/api/v1/integrations/connectors/{connector_id}', { params: { path: { connector_id: id } } }));
    },
    /** Rename and/or replace credentials (checked like on create unless `{ check: false }`; new credentials make it active again). */
    update(id: string, patch: { name?: string; credentials?: Record<string, unknown> }, opts: { check?: boolean } = {}): Promise<Connector> {
      return unwrap(
        api.PATCH('/api/v1/integrations/connectors/{connector_id}', {
          params: { path: { connector_id: id }, query: opts.check === false ? { check: false } : {} },
          body: patch as never,
        }),
      );
    },
    /** Run the credential check with the stored credentials; sets status active, auth_failed or error. Resolves either way (see ok). */
    check(id: string): Promise<CheckResult> {
      return unwrap(api.POST('/api/v1/integrations/connectors/{connector_id}/check', { params: { path: { connector_id: id } } }));
    },
    async delete(id: string): Promise<void> {
      const { error, response } = await api.DELETE('/api/v1/integrations/connectors/{connector_id}', { params: { path: { connector_id: id } } });
      if (error !== undefined || !response.ok) throw problemError(response.status, error);
    },
  };

  const oauth = {
    /** Start the service-side OAuth flow; send the user to consent_url. */
    initiate(input: { connector_type: ConnectorType | (string & {}); redirect_url: string; customer_name?: string }) {
      return unwrap(
        api.POST('/api/v1/integrations/connectors/oauth/initiate', {
          body: { customer_name: input.customer_name ?? options.customerName, connector_type: input.connector_type, redirect_url: input.redirect_url },
        }),
      );
    },
  };

  const connect = {
    /**
     * A Connect UI link for this customer (or `customer_name`): open `url` in a browser, a popup
     * or a redirect; it works for 30 minutes by default and offers `allowed_connector_types`
     * (default every type). The page redirects to `redirect_url?connector_id=...` when done and,
     * in a popup, posts {type: 'switchboard:connected', connector_id} to window.opener.
     */
    createSession(input: { allowed_connector_types?: (ConnectorType | (string & {}))[]; redirect_url?: string; customer_name?: string } = {}) {
      return unwrap(
        api.POST('/api/v1/integrations/connect/sessions', {
          body: {
            customer_name: input.customer_name ?? options.customerName,
            ...(input.allowed_connector_types !== undefined ? { allowed_connector_types: input.allowed_connector_types } : {}),
            ...(input.redirect_url !== undefined ? { redirect_url: input.redirect_url } : {}),
          },
        }),
      );
    },
  };

  /** This customer's connector by id, or by type (exactly one of that type must exist). */
  function connector<T extends ConnectorType>(idOrType: T | (string & {})): HostedConnector<T> {
    let resolved: Promise<string> | undefined = UUID.test(idOrType) ? Promise.resolve(idOrType) : undefined;
    const id = (): Promise<string> => {
      resolved ??= (async () => {
        const page = await connectors.list({ connector_type: idOrType, limit: 2 });
        if (page.data.length === 0) {
          throw new SwitchboardError('connector_not_found', `Customer "${options.customerName}" has no ${idOrType} connector; create one first`);
        }
        if (page.data.length > 1) {
          throw new SwitchboardError('invalid_request', `Customer "${options.customerName}" has several ${idOrType} connectors; pass a connector id instead`, {
            details: { connector_ids: page.data.map((c) => c.id) },
          });
        }
        return page.data[0]!.id;
      })().catch((e: unknown) => {
        resolved = undefined;
        throw e;
      });
      return resolved;
    };
    const run = async (entity: string, action: string, params: unknown): Promise<unknown> =>
      unwrap(
        api.POST('/api/v1/integrations/connectors/{connector_id}/execute', {
          params: { path: { connector_id: await id() } },
          body: { entity, action, ...(params !== undefined ? { params } : {}) } as never,
        }),
      );
    const proxy = async (r: HostedProxyRequest): Promise<HostedProxyResponse> => {
      const query = typeof r.query === 'string' ? r.query.replace(/^\?/, '') : new URLSearchParams(Object.entries(r.query ?? {}).map(([k, v]): [string, string] => [k, String(v)])).toString();
      const url = `${baseUrl}/api/v1/integrations/connectors/${encodeURIComponent(await id())}/proxy/${r.path.replace(/^\//, '')}${query !== '' ? `${r.path.includes('?') ? '&' : '?'}${query}` : ''}`;
      const json = r.body !== undefined && typeof r.body !== 'string' && !(r.body instanceof Uint8Array);
      const body = json ? JSON.stringify(r.body) : (r.body as string | Uint8Array | undefined);
      for (let renewed = false; ; renewed = true) {
        const headers = new Headers(r.headers);
        if (json && !headers.has('content-type')) headers.set('content-type', 'application/json');
        headers.set('authorization', `Bearer ${await accessToken()}`);
        if (options.organizationId !== undefined) headers.set('x-organization-id', options.organizationId);
        const res = await baseFetch(url, { method: r.method, headers, ...(body !== undefined ? { body } : {}) });
        const ours = res.headers.get('switchboard-proxy-source') !== 'upstream';
        if (ours && res.status === 401 && !renewed) {
          token = undefined;
          continue;
        }
        const bytes = new Uint8Array(await res.arrayBuffer());
        if (ours && res.status >= 400) {
          let problem: unknown;
          try {
            problem = JSON.parse(new TextDecoder().decode(bytes));
          } catch {
            problem = undefined;
          }
          throw problemError(res.status, problem);
        }
        return { status: res.status, headers: Object.fromEntries(res.headers.entries()), body: bytes };
      }
    };
    return {
      id,
      proxy,
      execute: (entity, action, ...params) => run(entity, action, params[0]) as never,
      search: (entity, params) => run(entity, 'search', params) as never,
      changes: async (entity, query = {}) =>
        unwrap(
          api.GET('/api/v1/integrations/connectors/{connector_id}/records', {
            params: { path: { connector_id: await id() }, query: { entity, ...(query.modified_after != null ? { modified_after: query.modified_after } : {}), ...(query.limit !== undefined ? { limit: query.limit } : {}) } },
          }),
        ) as Promise<ChangesResponse>,
    };
  }

  const audit = {
    /** One page of the organization's audit log, newest first (control-plane actions: who, what, which resource, when; never secrets). */
    list(query: AuditEventsQuery = {}): Promise<AuditEventList> {
      return unwrap(api.GET('/api/v1/audit-events', { params: { query } }));
    },
  };

  const tokens = {
    /** The application's live tokens (access tokens and Connect sessions) by id, never their values. */
    list(): Promise<TokenList> {
      return unwrap(api.GET('/api/v1/account/tokens'));
    },
    /** Revoke one token by id (token_not_found when the application has no live token with it). */
    async revoke(id: string): Promise<void> {
      const { error, response } = await api.DELETE('/api/v1/account/tokens/{token_id}', { params: { path: { token_id: id } } });
      if (error !== undefined || !response.ok) throw problemError(response.status, error);
    },
    /** Revoke every token of the application, this client's own included (it gets a new one on its next call), and expire its Connect sessions. */
    async revokeAll(): Promise<RevokedAll> {
      const out = await unwrap(api.DELETE('/api/v1/account/tokens'));
      token = undefined;
      return out;
    },
  };

  const permissions = {
    /** The allow-lists in force for this client: its application's and, for a scoped token, the token's own (null: none). */
    get(): Promise<Permissions> {
      return unwrap(api.GET('/api/v1/account/permissions'));
    },
    /** Set (or with null remove) the application's allow-list of connector types, entities and actions. */
    set(rules: AccessRules | null): Promise<Permissions> {
      return unwrap(api.PUT('/api/v1/account/permissions', { body: { permissions: rules } }));
    },
  };

  return { connectors, oauth, connect, connector, audit, tokens, permissions, accessToken: () => accessToken() };
}

export type HostedClient = ReturnType<typeof createClient>;
