/**
 * The hosted-mode SDK: a typed client of the Switchboard service, built on openapi-fetch with
 * path types generated from the service's own OpenAPI document (generated/openapi.ts).
 *
 * The configuration is the spec's: the caller's customer name, an optional organization id, and
 * a client id and secret. `connector('intercom').execute('contacts', 'get', {...})` is typed
 * exactly like library mode's `connect('intercom', ...)`, so switching modes is a one-line change.
 */
import { hostedConnector } from './hosted-connector.ts';
import type {
  AccessRules,
  AuditEventList,
  AuditEventsQuery,
  Connector,
  CheckResult,
  CreateConnectorInput,
  HostedConnector,
  Permissions,
  RevokedAll,
  TokenList,
} from './hosted-types.ts';
import { HostedSession, problemError, unwrap, type HostedClientOptions } from './hosted-session.ts';
import type { ConnectorType } from './library.ts';

export type { HostedClientOptions } from './hosted-session.ts';
export type {
  AccessRules,
  AuditEvent,
  AuditEventList,
  AuditEventsQuery,
  ChangeEntry,
  ChangesResponse,
  CheckResult,
  Connector,
  CreateConnectorInput,
  HostedConnector,
  HostedProxyRequest,
  HostedProxyResponse,
  Permissions,
  RevokedAll,
  SearchFilter,
  SearchParams,
  SearchResponse,
  TokenList,
} from './hosted-types.ts';

type Api = HostedSession['api'];

/** Connectors: create, list, get, update, check, delete. */
function connectorsApi(api: Api, options: HostedClientOptions) {
  return {
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
}

/** The service-side OAuth flow. */
function oauthApi(api: Api, options: HostedClientOptions) {
  return {
    /** Start the service-side OAuth flow; send the user to consent_url. */
    initiate(input: { connector_type: ConnectorType | (string & {}); redirect_url: string; customer_name?: string }) {
      return unwrap(
        api.POST('/api/v1/integrations/connectors/oauth/initiate', {
          body: { customer_name: input.customer_name ?? options.customerName, connector_type: input.connector_type, redirect_url: input.redirect_url },
        }),
      );
    },
  };
}

/** Connect UI links. */
function connectApi(api: Api, options: HostedClientOptions) {
  return {
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
}

/** The organization's audit log. */
function auditApi(api: Api) {
  return {
    /** One page of the organization's audit log, newest first (control-plane actions: who, what, which resource, when; never secrets). */
    list(query: AuditEventsQuery = {}): Promise<AuditEventList> {
      return unwrap(api.GET('/api/v1/audit-events', { params: { query } }));
    },
  };
}

/** The application's tokens. */
function tokensApi(session: HostedSession) {
  const { api } = session;
  return {
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
      session.forgetToken();
      return out;
    },
  };
}

/** The allow-lists in force. */
function permissionsApi(api: Api) {
  return {
    /** The allow-lists in force for this client: its application's and, for a scoped token, the token's own (null: none). */
    get(): Promise<Permissions> {
      return unwrap(api.GET('/api/v1/account/permissions'));
    },
    /** Set (or with null remove) the application's allow-list of connector types, entities and actions. */
    set(rules: AccessRules | null): Promise<Permissions> {
      return unwrap(api.PUT('/api/v1/account/permissions', { body: { permissions: rules } }));
    },
  };
}

/** Create a client of a Switchboard service. */
export function createClient(options: HostedClientOptions) {
  const session = new HostedSession(options);
  const { api } = session;
  const connectors = connectorsApi(api, options);
  /** This customer's connector by id, or by type (exactly one of that type must exist). */
  const connector = <T extends ConnectorType>(idOrType: T | (string & {})): HostedConnector<T> =>
    hostedConnector<T>(session, idOrType, (q) => connectors.list(q));
  return {
    connectors,
    oauth: oauthApi(api, options),
    connect: connectApi(api, options),
    connector,
    audit: auditApi(api),
    tokens: tokensApi(session),
    permissions: permissionsApi(api),
    accessToken: () => session.accessToken(),
  };
}

export type HostedClient = ReturnType<typeof createClient>;
