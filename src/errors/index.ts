/**
 * The one error registry: every failure Switchboard reports has a stable code, an HTTP status
 * (used by the hosted service) and a title. Library mode throws the same SwitchboardError.
 */
export const ERROR_CODES = {
  // Caller input
  invalid_params: { status: 400, title: 'The action params are invalid' },
  unknown_connector_type: { status: 400, title: 'Unknown connector type' },
  unknown_entity: { status: 400, title: 'Unknown entity' },
  unknown_action: { status: 400, title: 'Unknown action for this entity' },
  invalid_credentials: { status: 400, title: 'The credentials match no credential variant of this connector type' },
  invalid_header_value: { status: 400, title: 'A header value contains a line break' },
  search_hosted_only: { status: 400, title: 'search is available in hosted mode only' },
  invalid_search_query: { status: 400, title: 'The search query is invalid' },
  invalid_cursor: { status: 400, title: 'The cursor is malformed, altered, or from another query' },
  invalid_base_url: { status: 400, title: 'The base URL must be an absolute http(s) URL, scheme included' },
  invalid_credentials_json: { status: 400, title: 'The credentials are not valid JSON' },
  proxy_path_refused: { status: 400, title: "The proxy path leaves the connector's base URL (absolute URL, //host, dot segments or encoded slashes)" },
  proxy_header_refused: { status: 400, title: 'The proxy does not forward this request header' },
  proxy_host_refused: { status: 400, title: "The proxy host is not one of the connector's declared hosts" },
  proxy_disabled: { status: 403, title: 'The proxy is switched off for this connector type or this application' },
  proxy_method_forbidden: { status: 403, title: 'The proxy is limited to read methods (GET, HEAD) here' },
  // Upstream (the third-party API)
  upstream_credentials_rejected: { status: 424, title: 'The third-party API rejected the credentials' },
  upstream_not_found: { status: 404, title: 'The third-party API has no such record' },
  upstream_rejected: { status: 422, title: 'The third-party API refused the request' },
  upstream_rate_limited: { status: 429, title: 'The third-party API is rate limiting this connector' },
  upstream_unavailable: { status: 503, title: 'The third-party API is unavailable or timed out' },
  upstream_protocol_error: { status: 502, title: 'The third-party API answered with a body Switchboard cannot read' },
  upstream_error: { status: 502, title: 'The third-party API reported an error' },
  pagination_loop: { status: 502, title: 'The third-party API returned the same page cursor twice' },
  oauth_refresh_failed: { status: 424, title: 'Refreshing the OAuth access token failed' },
  oauth_refresh_deferred: {
    status: 503,
    title:
      "The connector's OAuth token needs refreshing, but a recent refresh failed, the hourly refresh limit is reached, or another instance is still refreshing; retry after Retry-After",
  },
  oauth_nothing_granted: {
    status: 424,
    title: "The OAuth grant reaches nothing the connector needs: a follow_up request's answer lacks a credential field (Jira: the user granted no site)",
  },
  upstream_response_too_large: { status: 502, title: 'The third-party API answered with a body larger than Switchboard accepts' },
  upstream_memory_exhausted: { status: 503, title: 'Upstream bodies being read by this instance are at its memory budget; retry shortly' },
  upstream_redirect_refused: { status: 502, title: 'The third-party API redirected to another origin' },
  egress_refused: { status: 502, title: 'The connector tried to reach an address it may not reach' },
  upstream_queue_full: { status: 429, title: "Too many calls are waiting for this connector's upstream rate limit" },
  // Manifests and internals
  manifest_invalid: { status: 500, title: 'A connector manifest is invalid' },
  internal_error: { status: 500, title: 'Internal error' },
  port_in_use: { status: 409, title: 'The port is already in use by another process' },
  sandbox_not_running: { status: 503, title: "These are the sandbox's sample credentials, but the sandbox is not running" },
  sandbox_ambiguous: { status: 409, title: "Several running sandboxes hold these sample credentials; choose one with its simulator's base URL" },
  database_not_found: { status: 404, title: 'No Switchboard database where the command looked (admin creates one only with --create)' },
  // Hosted service (src/service): HTTP layer, accounts, connectors, service-side OAuth
  invalid_request: { status: 400, title: 'The request does not match the endpoint schema' },
  malformed_json: { status: 400, title: 'The request body is not valid JSON' },
  unsupported_media_type: { status: 415, title: 'The request body must be application/json' },
  payload_too_large: { status: 413, title: 'The request body is larger than the service accepts' },
  unauthorized: { status: 401, title: 'A valid bearer access token is required' },
  invalid_client: { status: 401, title: 'Unknown client id or wrong client secret' },
  organization_required: { status: 400, title: 'X-Organization-Id is required: this application can access several organizations' },
  organization_forbidden: { status: 403, title: 'This application cannot access that organization' },
  connector_not_found: { status: 404, title: 'No such connector in this organization' },
  token_not_found: { status: 404, title: 'No live token with this id belongs to this application' },
  customer_forbidden: { status: 403, title: 'This token is limited to one customer and cannot act for another, or use this endpoint' },
  permission_denied: { status: 403, title: "The caller's allow-list (application or scoped token) does not include this connector type, entity or action" },
  token_mint_forbidden: { status: 403, title: "A scoped or widget token cannot mint tokens; ask with the application's own token" },
  route_not_found: { status: 404, title: 'No such endpoint' },
  method_not_allowed: { status: 405, title: 'The endpoint does not accept this method' },
  rate_limited: { status: 429, title: 'Too many requests for this organization' },
  oauth_not_supported: { status: 400, title: 'This connector type has no OAuth credential variant' },
  oauth_not_configured: { status: 501, title: 'This deployment has no OAuth app configured for this connector type' },
  invalid_oauth_credentials: {
    status: 400,
    title: 'A credential field the OAuth flow needs before consent (an account subdomain) is missing, unknown or does not match its pattern',
  },
  invalid_oauth_state: { status: 400, title: 'The OAuth state is unknown, expired or already used' },
  invalid_oauth_secret: { status: 400, title: 'The server-side OAuth secret is unknown, expired, already used or not yours' },
  encryption_key_missing: { status: 500, title: 'The key that encrypted these credentials is not configured' },
  encryption_key_mismatch: { status: 500, title: 'The configured key under this key id is not the key that encrypted these credentials' },
  invalid_characters: { status: 400, title: 'The request contains NUL or other control characters, or invalid Unicode (a lone surrogate)' },
  invalid_json_depth: { status: 400, title: 'The request body is nested too deeply (objects and arrays more than 64 levels deep)' },
  invalid_url: { status: 400, title: 'The request URL is malformed' },
  uri_too_long: { status: 414, title: 'The request URL is too long' },
  headers_too_large: { status: 431, title: 'The request headers are too large' },
  request_timeout: { status: 408, title: 'The request was not received in time' },
  token_rate_limited: { status: 429, title: 'Too many token requests for this client or address' },
  not_ready: { status: 503, title: 'The service is not ready (database unreachable)' },
  connect_session_invalid: { status: 401, title: 'The connect session is unknown, expired, already opened or already used' },
  // MCP server (src/mcp)
  read_only: { status: 403, title: 'This MCP server is read-only: create and update are refused' },
  invalid_connectors_file: { status: 400, title: 'The MCP connectors file is invalid' },
  // CLI: --connectors / SWITCHBOARD_CONNECTORS_PATH
  invalid_connectors_path: { status: 400, title: 'A connectors directory does not exist' },
  // Sync (src/sync)
  sync_running: { status: 409, title: 'A sync of this connector is already running' },
  sync_scheduler_not_running: { status: 503, title: 'No instance of this deployment runs the sync scheduler: a requested sync would never run' },
  // Events (src/events, src/webhooks): vendor webhooks in, webhook endpoints out
  webhook_signature_invalid: { status: 401, title: 'The webhook delivery is unsigned or its signature does not verify' },
  webhook_replayed: { status: 401, title: 'The webhook delivery was seen before or is outside the time window' },
  webhook_queue_full: { status: 503, title: 'Too many webhook deliveries are being processed; retry later' },
  webhook_attribution_pending: {
    status: 503,
    title: 'The connector this webhook delivery is for is not known yet (its credential check has not reported its account); retry later',
  },
  webhook_ingress_url_only: { status: 400, title: "This action points the vendor at a URL: only the service's own webhook URL for the connector is allowed" },
  webhook_handshake_unexpected: {
    status: 409,
    title: 'A webhook subscription handshake came for a connector that is not making a subscription; nothing was stored',
  },
  webhooks_not_configured: { status: 501, title: 'This deployment has no webhook secret for this connector type' },
  webhook_endpoint_not_found: { status: 404, title: 'No such webhook endpoint in this organization' },
  webhook_url_refused: { status: 400, title: 'The webhook URL is an address the egress rules forbid' },
  webhook_url_credentials: { status: 400, title: 'The webhook URL carries credentials (user:password@); the signing secret authenticates deliveries' },
  webhook_endpoint_limit: { status: 409, title: 'The organization has as many webhook endpoints as it may have' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** One validation problem, located by a JSON-pointer-like path. */
export interface ErrorDetail {
  path: string;
  message: string;
}

export interface SwitchboardErrorOptions {
  /** Field-level problems, e.g. every ajv failure with its path. */
  errors?: ErrorDetail[];
  /** Extra machine-readable context (upstream status, upstream body, retry counts...). */
  details?: Record<string, unknown>;
  /** HTTP status override; defaults to the registry's status for the code. */
  status?: number;
  cause?: unknown;
}

/** The single error class thrown by every Switchboard module. */
export class SwitchboardError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly errors: ErrorDetail[];
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message?: string, options: SwitchboardErrorOptions = {}) {
    super(message ?? ERROR_CODES[code].title, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SwitchboardError';
    this.code = code;
    this.status = options.status ?? ERROR_CODES[code].status;
    this.errors = options.errors ?? [];
    this.details = options.details ?? {};
  }

  /** JSON form used by the CLI and (as problem details) by the service. */
  toJSON(): { code: ErrorCode; message: string; errors?: ErrorDetail[]; details?: Record<string, unknown> } {
    return {
      code: this.code,
      message: this.message,
      ...(this.errors.length > 0 ? { errors: this.errors } : {}),
      ...(Object.keys(this.details).length > 0 ? { details: this.details } : {}),
    };
  }
}

/** True when `e` is a SwitchboardError, optionally with the given code. */
export function isSwitchboardError(e: unknown, code?: ErrorCode): e is SwitchboardError {
  return e instanceof SwitchboardError && (code === undefined || e.code === code);
}
