/**
 * The hosted service's configuration, read from the environment once at start. Every variable
 * is listed in CONFIG_VARIABLES (the README/docs table is written from the same facts).
 */
import { join, resolve } from 'node:path';
import { connectBrandFromEnv, type ConnectBrand } from './connect/connect-brand.ts';

/** The deployment's OAuth app for one connector type (the service-side OAuth flow uses it). */
export interface OAuthAppConfig {
  clientId: string;
  clientSecret: string;
  /** Default: the manifest's authorize_url. */
  authorizeUrl?: string;
  /** Default: the manifest's token_url. */
  tokenUrl?: string;
  /** Where the variant's follow_up requests go instead of their own origin, path kept (the sandbox's simulator); default their own URL. */
  followUpBaseUrl?: string;
}

/** Per connector type settings. */
export interface ConnectorTypeConfig {
  /** Upstream base URL; default the manifest's. */
  baseUrl?: string;
  oauth?: OAuthAppConfig;
  /** Secret the vendor signs its webhook deliveries with, when the manifest's webhooks.signature.secret is webhook_secret. */
  webhookSecret?: string;
}

export interface ServiceConfig {
  /** `postgres://...` or a SQLite path / `sqlite:<path>`; default ./data/switchboard.db. */
  databaseUrl?: string;
  /** Key ring for credentials at rest (see src/store/encryption.ts). */
  encryptionKey?: string;
  /** Public base URL of this service (OAuth callback); default http://<host>:<port> as listened. */
  publicUrl?: string;
  port: number;
  host: string;
  /** Largest request body accepted; default 1 MiB. */
  bodyLimitBytes: number;
  /** Lifetime of access tokens; default 3600 s. */
  tokenTtlSeconds: number;
  /** Requests per minute per organization (per instance); 0 disables. Default 600. */
  rateLimitPerMinute: number;
  /** Throttle upstream calls to each manifest's rate_limit (one limiter per connector); default true. */
  upstreamThrottle: boolean;
  /** Seconds between scheduled syncs of a connector. */
  syncIntervalSeconds: number;
  /** Run the sync scheduler in this instance (syncs start on create, on schedule, on demand). */
  syncScheduler: boolean;
  /** Fetch, hydrate and store the syncs' pages in the sync worker thread, not the thread serving requests (see hosted-data.ts). */
  syncInWorker: boolean;
  /** Lifetime of an OAuth state (initiate → callback); default 600 s. */
  oauthStateTtlSeconds: number;
  /** Lifetime of a pending OAuth secret (callback → create); default 900 s. */
  oauthSecretTtlSeconds: number;
  /** pino level; default info. */
  logLevel: string;
  /** Lifetime of a Connect UI session; default 1800 s. */
  connectSessionTtlSeconds: number;
  /** CSP frame-ancestors sources allowed to embed the Connect UI; default none (no framing). */
  connectFrameAncestors: string[];
  /** The operator's name, logo and accent colour on the Connect UI; default none (Switchboard's look). */
  connectBrand?: ConnectBrand;
  /** Overall deadline of one upstream call across throttle wait, attempts and retries; default 60000 ms. */
  upstreamDeadlineMs: number;
  /** Largest upstream response body (raw and decoded) unless a manifest sets http.max_response_bytes; default 50 MiB. */
  upstreamMaxResponseBytes: number;
  /** Largest vendor answer the pass-through proxy hands back; default 10 MiB. */
  proxyMaxResponseBytes: number;
  /** Process-wide budget of upstream bytes in flight (received and decoded), shared by every connector and tenant; default 128 MiB. */
  upstreamMemoryBytes: number;
  /** Calls that may wait for one connector's upstream throttle at once; default 100. */
  upstreamQueueLimit: number;
  /** Longest an API call (execute, MCP) waits for its connector's throttle before 429 with Retry-After; default 5000 ms. Syncs wait up to the deadline. */
  upstreamMaxWaitMs: number;
  /** Let connectors reach link-local and cloud metadata addresses; default false. */
  egressAllowLinkLocal: boolean;
  /** Longest time to receive a whole request (headers and body); default 30000 ms. Once received, a request has until its answer deadline (answerTimeoutMs). */
  requestTimeoutMs: number;
  /** Idle keep-alive connections are closed after this; default 5000 ms. */
  keepAliveTimeoutMs: number;
  /** On shutdown, how long requests in flight may still finish before their connections are closed; default 10000 ms. */
  shutdownGraceMs: number;
  /** SQLite: how often the database file is checked to be still there and its disk not full (fatal otherwise); 0 disables. Default 5000 ms. */
  dataDirCheckMs: number;
  /** This instance's name, unique and stable across its restarts (sync leases); default the host name and PID namespace. */
  instanceId?: string;
  /** Token endpoint requests per minute per client id and per source address; 0 disables. Default 30. */
  tokenRateLimitPerMinute: number;
  /** Byte budget of one MCP execute or search result (POST /mcp); default 20000. */
  mcpMaxOutputBytes: number;
  /** Offer the MCP proxy tool on POST /mcp (docs/proxy.md); default false. */
  mcpProxy: boolean;
  /** How long a token's principal and an execute's connector row are reused before being read again (lookup-cache.ts); 0 disables. Default 1000 ms. */
  lookupCacheMs: number;
  /** Redis URL for limits shared across instances (wins over PostgreSQL). */
  redisUrl?: string;
  /** Per connector type (keys are manifest types). */
  connectorTypes: Record<string, ConnectorTypeConfig>;
  /** Events (src/events, src/webhooks): tombstone retention of the change feed, outgoing webhook delivery, vendor delivery queue. */
  tombstoneRetentionDays: number;
  eventsDelivery: boolean;
  webhookQueueLimit: number;
  /** Let tenant webhook endpoints be loopback, private, CGNAT or unique-local addresses (development, tests); default false. */
  webhookAllowPrivateAddresses: boolean;
  /** Webhook endpoints one organization may register; default 20. */
  webhookEndpointsPerOrganization: number;
  /** Largest vendor webhook body read before its signature is checked. */
  webhookBodyLimitBytes: number;
  /** Observability (docs/operations.md): GET /metrics on its own port, and/or on the service's port behind a token; metrics are off when neither is set. */
  metricsPort?: number;
  metricsHost: string;
  metricsToken?: string;
  /** OpenTelemetry traces: on when the standard OTEL_* variables name an exporter (tracingConfigured). */
  tracing: boolean;
  /** Audit log (audit-log.ts): how long its events are kept. */
  auditRetentionDays: number;
}

/** One documented environment variable. */
export interface ConfigVariable {
  name: string;
  default: string;
  description: string;
}

/** Every environment variable the service reads. `<TYPE>` is a connector type upper-cased (GRANOLA, INTERCOM, MONDAY). */
export const CONFIG_VARIABLES: readonly ConfigVariable[] = [
  {
    name: 'SWITCHBOARD_DATABASE_URL',
    default: '`switchboard.db` in the data directory (SQLite)',
    description: '`postgres://user:pass@host:5432/db` for PostgreSQL (several instances may share it), or a SQLite file path / `sqlite:<path>`',
  },
  {
    name: 'SWITCHBOARD_DATA_DIR',
    default: "`./data`, or the SQLite database's directory",
    description:
      "Data directory of every command (`--data-dir` overrides): the SQLite database and its key when SWITCHBOARD_DATABASE_URL is not set, and the sandbox's state files (`sandbox-<port>.json`) that `exec`, `check`, `mcp` and `sync` look up",
  },
  {
    name: 'SWITCHBOARD_ENCRYPTION_KEY',
    default: 'SQLite: generated into switchboard.key beside the database file (mode 0600, with a warning); PostgreSQL: required',
    description:
      'AES-256-GCM key ring for credentials at rest: base64 of 32 random bytes, or `id:base64,id2:base64` (the first encrypts, all decrypt; rotation in docs/hosted.md)',
  },
  {
    name: 'SWITCHBOARD_PUBLIC_URL',
    default: '`http://<HOST>:<PORT>` as listened',
    description:
      'Public base URL of the service; the OAuth callback is `<SWITCHBOARD_PUBLIC_URL>/api/v1/integrations/connectors/oauth/callback` and must be registered with each OAuth app',
  },
  {
    name: 'SWITCHBOARD_CONNECTORS_PATH',
    default: 'none',
    description:
      'Extra connector directories, `:`-separated (`;` on Windows), searched before the built-in connectors by every command and by library mode: each holds `<type>/connector.yaml` folders or is one; a type found there shadows a built-in of the same name (`--connectors <dir>` overrides it)',
  },
  { name: 'PORT', default: '3000', description: 'HTTP port (`serve --port` overrides)' },
  { name: 'HOST', default: '127.0.0.1', description: 'Interface to listen on; 0.0.0.0 in containers (`serve --host` overrides)' },
  { name: 'SWITCHBOARD_BODY_LIMIT_BYTES', default: '1048576', description: 'Largest request body; larger bodies get 413 payload_too_large' },
  { name: 'SWITCHBOARD_TOKEN_TTL_SECONDS', default: '3600', description: 'Lifetime of access tokens from POST /api/v1/account/applications/token' },
  {
    name: 'SWITCHBOARD_RATE_LIMIT_PER_MINUTE',
    default: '600',
    description:
      'Requests per minute per organization (a token bucket, burst = the same number: in process with SQLite, shared by every instance with PostgreSQL or Redis); 0 disables',
  },
  {
    name: 'SWITCHBOARD_UPSTREAM_THROTTLE',
    default: 'true',
    description:
      "Throttle calls to each third-party API to its manifest's rate_limit, one limiter per connector (shared by every instance on PostgreSQL or Redis); false disables (benchmarks against unlimited simulators)",
  },
  {
    name: 'SWITCHBOARD_SYNC_INTERVAL_SECONDS',
    default: '3600',
    description: "Time between scheduled syncs of each connector (a connector's first sync starts when it is created; POST .../sync starts one on demand)",
  },
  {
    name: 'SWITCHBOARD_SYNC_SCHEDULER',
    default: 'true',
    description:
      'Run scheduled and on-demand syncs in this instance; with several instances on PostgreSQL each connector is synced by one instance at a time (a lease in sync_state), and any instance takes over a crashed one',
  },
  {
    name: 'SWITCHBOARD_SYNC_IN_WORKER',
    default: 'true',
    description:
      "Fetch, hydrate and store the syncs' pages in a worker thread (the sync worker), not the thread that serves requests; the run's bookkeeping and each connector's throttle stay on the main thread. On a SQLite file or PostgreSQL; OAuth 2 connectors (whose tokens refresh) sync on the main thread. false: every sync on the main thread",
  },
  { name: 'SWITCHBOARD_OAUTH_STATE_TTL_SECONDS', default: '600', description: 'How long a consent_url (its state) stays usable' },
  {
    name: 'SWITCHBOARD_OAUTH_SECRET_TTL_SECONDS',
    default: '900',
    description: 'How long a secret_id from the OAuth callback stays usable for creating a connector',
  },
  {
    name: 'SWITCHBOARD_CONNECT_SESSION_TTL_SECONDS',
    default: '1800',
    description: 'How long a Connect UI link (POST /api/v1/integrations/connect/sessions) stays usable',
  },
  {
    name: 'SWITCHBOARD_CONNECT_FRAME_ANCESTORS',
    default: '(none: the Connect UI cannot be framed)',
    description:
      "Origins allowed to embed the Connect UI in an iframe (CSP frame-ancestors), space-separated, e.g. `https://app.example.com 'self'`; its cookie then becomes SameSite=None; Secure; Partitioned",
  },
  {
    name: 'SWITCHBOARD_CONNECT_BRAND_NAME',
    default: '(none)',
    description: "Your product's name at the top of every Connect UI page and in its title (at most 60 characters)",
  },
  {
    name: 'SWITCHBOARD_CONNECT_LOGO_URL',
    default: '(none)',
    description:
      "Your logo beside that name (and as the page icon): an `https://` URL (the page's CSP allows its origin) or a `data:image/...` URI, at most 16 kB",
  },
  {
    name: 'SWITCHBOARD_CONNECT_ACCENT_COLOR',
    default: '`#1d4ed8`',
    description:
      "Colour of the Connect UI's buttons and links, `#rgb` or `#rrggbb`; must keep white button text readable (contrast at least 4.5:1), or the service refuses to start",
  },
  { name: 'SWITCHBOARD_LOG_LEVEL', default: 'info', description: 'pino log level (fatal, error, warn, info, debug, trace, silent)' },
  {
    name: 'SWITCHBOARD_UPSTREAM_DEADLINE_MS',
    default: '60000',
    description:
      'Overall deadline of one upstream call (throttle wait, every attempt and retry delay); past it the call fails (503 upstream_unavailable, or 429 upstream_queue_full when no throttle slot is free in time)',
  },
  {
    name: 'SWITCHBOARD_UPSTREAM_MAX_RESPONSE_BYTES',
    default: '52428800',
    description:
      'Largest upstream response body, enforced while streaming and on decompressed output (502 upstream_response_too_large); a manifest may set its own with http.max_response_bytes',
  },
  {
    name: 'SWITCHBOARD_PROXY_MAX_RESPONSE_BYTES',
    default: '10485760',
    description:
      'Largest vendor answer the proxy route hands back, raw and decoded: past it 502 upstream_response_too_large before the first bytes, a cut connection after (2xx answers stream through; docs/proxy.md)',
  },
  {
    name: 'SWITCHBOARD_UPSTREAM_MEMORY_BYTES',
    default: '134217728',
    description:
      'Budget of upstream response bytes this process holds at once while reading and decompressing them, shared by every connector and tenant (each call is also capped by SWITCHBOARD_UPSTREAM_MAX_RESPONSE_BYTES); a call that would pass it is refused with 503 upstream_memory_exhausted, nothing kept. Keep it at least the largest response cap',
  },
  {
    name: 'SWITCHBOARD_UPSTREAM_QUEUE_LIMIT',
    default: '100',
    description: "Calls that may wait at once for one connector's upstream throttle; more get 429 upstream_queue_full at once",
  },
  {
    name: 'SWITCHBOARD_UPSTREAM_MAX_WAIT_MS',
    default: '5000',
    description:
      "Longest an execute (REST or MCP) waits for a slot of its connector's upstream throttle; a call that cannot be sent within it answers at once: 429 upstream_rate_limited while the upstream has paused the connector (Retry-After), else 429 upstream_queue_full, both with Retry-After. Syncs wait up to the deadline",
  },
  {
    name: 'SWITCHBOARD_EGRESS_ALLOW_LINK_LOCAL',
    default: 'false',
    description:
      'Allow connectors to reach link-local and cloud metadata addresses (169.254.0.0/16, fe80::/10, 100.100.100.200, fd00:ec2::254); refused with 502 egress_refused otherwise',
  },
  {
    name: 'SWITCHBOARD_REQUEST_TIMEOUT_MS',
    default: '30000',
    description:
      'Longest time to receive a whole request, headers and body (slow clients get 408). A received request is never cut before its answer: a connection may stay quiet for the upstream deadline plus 15 s, or this, whichever is longer',
  },
  { name: 'SWITCHBOARD_KEEP_ALIVE_TIMEOUT_MS', default: '5000', description: 'Idle keep-alive connections are closed after this' },
  {
    name: 'SWITCHBOARD_SHUTDOWN_GRACE_MS',
    default: '10000',
    description:
      'On SIGTERM/SIGINT the sync scheduler stops at once (running syncs are aborted and hand their leases back) and no new request is accepted; requests in flight may finish for this long, then their connections are closed and the process exits. A shutdown not done by then (a worker thread that does not stop) is cut short: the worker threads are terminated and the process exits with status 1',
  },
  {
    name: 'SWITCHBOARD_DATA_DIR_CHECK_MS',
    default: '5000',
    description:
      'SQLite: how often the running service checks that its database file is still the one it opened and that its disk is not full. A file or data directory removed (or replaced), or a full disk, is logged as fatal and the service shuts down with status 1 (never writes on into a deleted file); 0 turns the check off',
  },
  {
    name: 'SWITCHBOARD_INSTANCE_ID',
    default: '(the host name and PID namespace)',
    description:
      "This instance's name in sync leases, unique to it and stable across its restarts (e.g. a StatefulSet pod name): after a crash, the restarted instance releases the leases of its previous life at once, so their runs show as interrupted and resume, instead of reading running (and POST .../sync answering 409) until the lease expires. By default a previous life is recognized when its process no longer exists on this host",
  },
  {
    name: 'SWITCHBOARD_TOKEN_RATE_LIMIT_PER_MINUTE',
    default: '30',
    description: 'Token endpoint requests per minute, counted per client id and per source address (429 token_rate_limited); 0 disables',
  },
  {
    name: 'SWITCHBOARD_MCP_PROXY',
    default: 'false',
    description:
      "Offer the `proxy` tool on POST /mcp: any endpoint under a connector's base URL (GET and HEAD only with ?read_only=true), within the application's proxy access (docs/proxy.md)",
  },
  {
    name: 'SWITCHBOARD_MCP_MAX_OUTPUT_BYTES',
    default: '20000',
    description:
      'Byte budget of one MCP `execute` or `search` result (POST /mcp, and `switchboard mcp` unless --max-output-bytes); a longer list is cut at a record boundary with a notice; at least 1024',
  },
  {
    name: 'SWITCHBOARD_LOOKUP_CACHE_MS',
    default: '1000',
    description:
      "How long an instance reuses a token's principal and an execute's connector row before reading them again: a token deleted (revoked), a grant, or a connector changed by another instance takes effect within this; changes made through the instance itself at once; 0 reads them on every request",
  },
  {
    name: 'SWITCHBOARD_REDIS_URL',
    default: '(none)',
    description:
      "Redis for limits shared by every instance (per-organization limit, token endpoint limit, each connector's upstream throttle); without it they are shared through PostgreSQL when the database is PostgreSQL, and in process with SQLite",
  },
  {
    name: 'SWITCHBOARD_<TYPE>_BASE_URL',
    default: "the manifest's base_url",
    description: 'Upstream base URL of a connector type (a region, a proxy, a simulator)',
  },
  {
    name: 'SWITCHBOARD_<TYPE>_OAUTH_CLIENT_ID',
    default: '(none: OAuth initiate answers 501 oauth_not_configured)',
    description: "Client id of the deployment's OAuth app for that connector type",
  },
  { name: 'SWITCHBOARD_<TYPE>_OAUTH_CLIENT_SECRET', default: '(none)', description: 'Client secret of that OAuth app (required with the client id)' },
  { name: 'SWITCHBOARD_<TYPE>_OAUTH_AUTHORIZE_URL', default: "the manifest's authorize_url", description: 'Consent page URL (regions, simulators)' },
  {
    name: 'SWITCHBOARD_<TYPE>_WEBHOOK_SECRET',
    default: '(none)',
    description:
      "Secret a vendor signs its webhook deliveries with, for connector types whose manifest says `webhooks.signature.secret: webhook_secret` (monday's app signing secret); Intercom's deliveries are signed with the OAuth client secret",
  },
  {
    name: 'SWITCHBOARD_TOMBSTONE_RETENTION_DAYS',
    default: '30',
    description: 'How long deleted records stay in the change feed (GET .../records) as tombstones',
  },
  {
    name: 'SWITCHBOARD_AUDIT_RETENTION_DAYS',
    default: '365',
    description: 'How long the audit log (GET /api/v1/audit-events) keeps its events; older ones are deleted',
  },
  {
    name: 'SWITCHBOARD_EVENTS_DELIVERY',
    default: 'true',
    description: 'Send outgoing webhooks (POST /api/v1/webhook-endpoints) from this instance; several instances share the outbox and each event is sent once',
  },
  {
    name: 'SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE_ADDRESSES',
    default: 'false',
    description:
      'Let webhook endpoints (POST /api/v1/webhook-endpoints) be loopback, private (10/8, 172.16/12, 192.168/16), CGNAT (100.64/10), unique-local (fc00::/7) or other non-public addresses, for development and tests; refused otherwise, at registration (400 webhook_url_refused) and after DNS on every delivery. Link-local and metadata addresses stay refused unless SWITCHBOARD_EGRESS_ALLOW_LINK_LOCAL is also true. Connector base URLs are not affected',
  },
  {
    name: 'SWITCHBOARD_WEBHOOK_ENDPOINTS_PER_ORGANIZATION',
    default: '20',
    description: 'Webhook endpoints one organization may register; one more is 409 webhook_endpoint_limit',
  },
  {
    name: 'SWITCHBOARD_WEBHOOK_QUEUE_LIMIT',
    default: '100',
    description:
      'Vendor webhook requests handled at once by this instance, counted from their arrival (while their bodies are read, before the signature check); more are answered 503 webhook_queue_full with Retry-After so the vendor retries',
  },
  {
    name: 'SWITCHBOARD_WEBHOOK_BODY_LIMIT_BYTES',
    default: '262144',
    description: 'Largest vendor webhook delivery body read before its signature is checked (256 KiB; at least 1024); a larger one is 413 payload_too_large',
  },
  { name: 'SWITCHBOARD_<TYPE>_OAUTH_TOKEN_URL', default: "the manifest's token_url", description: 'Token endpoint URL (regions, simulators)' },
  {
    name: 'SWITCHBOARD_METRICS_PORT',
    default: '(none)',
    description:
      'Serve Prometheus metrics at `GET /metrics` on this port, apart from the API (0: any free port); metrics are off unless this or SWITCHBOARD_METRICS_TOKEN is set (docs/operations.md)',
  },
  { name: 'SWITCHBOARD_METRICS_HOST', default: '127.0.0.1', description: 'Interface the metrics port listens on (0.0.0.0 for a scraper in another container)' },
  {
    name: 'SWITCHBOARD_METRICS_TOKEN',
    default: '(none)',
    description:
      "Serve `GET /metrics` on the API's port too, to callers sending `Authorization: Bearer <token>` (401 unauthorized otherwise); at least 16 characters",
  },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    default: '(none: tracing off, the OpenTelemetry SDK is not loaded)',
    description:
      'OpenTelemetry traces over OTLP/HTTP to this collector (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); the other standard OTEL_* variables apply (OTEL_EXPORTER_OTLP_PROTOCOL http/protobuf or http/json, OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER...); docs/operations.md',
  },
  {
    name: 'OTEL_TRACES_EXPORTER',
    default: '(none)',
    description:
      '`otlp` turns tracing on (default endpoint http://localhost:4318); `none` turns it off whatever else is set; other exporters are refused at start',
  },
];

/** Whether the standard OTEL_* variables ask for traces: OTEL_TRACES_EXPORTER=otlp, or an OTLP endpoint set and the exporter not `none`. */
export function tracingConfigured(env: Env): boolean {
  const exporter = env['OTEL_TRACES_EXPORTER']?.trim().toLowerCase();
  if (exporter === 'none' || env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true') return false;
  if (exporter !== undefined && exporter !== '') {
    if (
      exporter
        .split(',')
        .map((e) => e.trim())
        .includes('otlp')
    )
      return true;
    throw new Error(`OTEL_TRACES_EXPORTER: only otlp (OTLP over HTTP) or none is supported, got "${env['OTEL_TRACES_EXPORTER'] ?? ''}"`);
  }
  return Boolean(env['OTEL_EXPORTER_OTLP_ENDPOINT']?.trim() || env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']?.trim());
}

function metricsTokenVar(env: Env): string | undefined {
  const raw = env['SWITCHBOARD_METRICS_TOKEN']?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 16 || !/^[A-Za-z0-9._~+/=-]+$/.test(raw))
    throw new Error('SWITCHBOARD_METRICS_TOKEN must be at least 16 characters of A-Z a-z 0-9 . _ ~ + / = -');
  return raw;
}

type Env = Record<string, string | undefined>;

function intVar(env: Env, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer ≥ ${min}, got "${raw}"`);
  return n;
}

function boolVar(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new Error(`${name} must be true or false, got "${env[name] ?? ''}"`);
}

function urlVar(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  try {
    const u = new URL(raw);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new Error(`${name} must be an http(s) URL with its scheme (e.g. http://127.0.0.1:4010), got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

const FRAME_SOURCE = /^(?:'self'|https?:\/\/(?:\*\.)?[A-Za-z0-9.-]+(?::\d+)?)$/;

function frameAncestorsVar(env: Env, name: string): string[] {
  const list = (env[name] ?? '').split(/[\s,]+/).filter((s) => s !== '');
  for (const s of list) if (!FRAME_SOURCE.test(s)) throw new Error(`${name}: "${s}" is not an origin (https://host[:port], https://*.host) or 'self'`);
  return list;
}

/** Env var prefix of a connector type: SWITCHBOARD_<TYPE>_. */
export function typeEnvPrefix(type: string): string {
  return `SWITCHBOARD_${type.toUpperCase()}_`;
}

/** Settings of one connector type from the environment. */
export function connectorTypeConfigFromEnv(type: string, env: Env): ConnectorTypeConfig {
  const p = typeEnvPrefix(type);
  const baseUrl = urlVar(env, `${p}BASE_URL`);
  const clientId = env[`${p}OAUTH_CLIENT_ID`]?.trim() || undefined;
  const clientSecret = env[`${p}OAUTH_CLIENT_SECRET`]?.trim() || undefined;
  if ((clientId === undefined) !== (clientSecret === undefined)) {
    throw new Error(`${p}OAUTH_CLIENT_ID and ${p}OAUTH_CLIENT_SECRET must be set together`);
  }
  const authorizeUrl = urlVar(env, `${p}OAUTH_AUTHORIZE_URL`);
  const tokenUrl = urlVar(env, `${p}OAUTH_TOKEN_URL`);
  const cfg: ConnectorTypeConfig = {};
  if (baseUrl !== undefined) cfg.baseUrl = baseUrl;
  const webhookSecret = env[`${p}WEBHOOK_SECRET`]?.trim() || undefined;
  if (webhookSecret !== undefined) cfg.webhookSecret = webhookSecret;
  if (clientId !== undefined && clientSecret !== undefined) {
    cfg.oauth = { clientId, clientSecret, ...(authorizeUrl !== undefined ? { authorizeUrl } : {}), ...(tokenUrl !== undefined ? { tokenUrl } : {}) };
  }
  return cfg;
}

/**
 * The database: SWITCHBOARD_DATABASE_URL, else `switchboard.db` in SWITCHBOARD_DATA_DIR (made
 * absolute), else undefined (the embedded default, ./data/switchboard.db).
 */
export function databaseUrlFromEnv(env: Env): string | undefined {
  const url = env['SWITCHBOARD_DATABASE_URL']?.trim();
  if (url) return url;
  const dir = env['SWITCHBOARD_DATA_DIR']?.trim();
  return dir ? join(resolve(dir), 'switchboard.db') : undefined;
}

/** The service configuration from the environment, for the given connector types. Throws on malformed values. */
export function loadServiceConfig(env: Env, connectorTypes: Iterable<string>): ServiceConfig {
  const types: Record<string, ConnectorTypeConfig> = {};
  for (const t of connectorTypes) types[t] = connectorTypeConfigFromEnv(t, env);
  const databaseUrl = databaseUrlFromEnv(env);
  const encryptionKey = env['SWITCHBOARD_ENCRYPTION_KEY']?.trim() || undefined;
  const publicUrl = urlVar(env, 'SWITCHBOARD_PUBLIC_URL');
  const redisUrl = env['SWITCHBOARD_REDIS_URL']?.trim() || undefined;
  return {
    ...(databaseUrl !== undefined ? { databaseUrl } : {}),
    ...(encryptionKey !== undefined ? { encryptionKey } : {}),
    ...(publicUrl !== undefined ? { publicUrl } : {}),
    ...(redisUrl !== undefined ? { redisUrl } : {}),
    port: intVar(env, 'PORT', 3000, 0),
    host: env['HOST']?.trim() || '127.0.0.1',
    bodyLimitBytes: intVar(env, 'SWITCHBOARD_BODY_LIMIT_BYTES', 1024 * 1024, 1),
    tokenTtlSeconds: intVar(env, 'SWITCHBOARD_TOKEN_TTL_SECONDS', 3600, 1),
    rateLimitPerMinute: intVar(env, 'SWITCHBOARD_RATE_LIMIT_PER_MINUTE', 600, 0),
    upstreamThrottle: boolVar(env, 'SWITCHBOARD_UPSTREAM_THROTTLE', true),
    syncIntervalSeconds: intVar(env, 'SWITCHBOARD_SYNC_INTERVAL_SECONDS', 3600, 1),
    syncScheduler: boolVar(env, 'SWITCHBOARD_SYNC_SCHEDULER', true),
    syncInWorker: boolVar(env, 'SWITCHBOARD_SYNC_IN_WORKER', true),
    oauthStateTtlSeconds: intVar(env, 'SWITCHBOARD_OAUTH_STATE_TTL_SECONDS', 600, 1),
    oauthSecretTtlSeconds: intVar(env, 'SWITCHBOARD_OAUTH_SECRET_TTL_SECONDS', 900, 1),
    logLevel: env['SWITCHBOARD_LOG_LEVEL']?.trim() || 'info',
    connectSessionTtlSeconds: intVar(env, 'SWITCHBOARD_CONNECT_SESSION_TTL_SECONDS', 1800, 1),
    connectFrameAncestors: frameAncestorsVar(env, 'SWITCHBOARD_CONNECT_FRAME_ANCESTORS'),
    connectBrand: connectBrandFromEnv(env),
    upstreamDeadlineMs: intVar(env, 'SWITCHBOARD_UPSTREAM_DEADLINE_MS', 60_000, 1),
    upstreamMaxResponseBytes: intVar(env, 'SWITCHBOARD_UPSTREAM_MAX_RESPONSE_BYTES', 50 * 1024 * 1024, 1),
    proxyMaxResponseBytes: intVar(env, 'SWITCHBOARD_PROXY_MAX_RESPONSE_BYTES', 10 * 1024 * 1024, 1),
    upstreamMemoryBytes: intVar(env, 'SWITCHBOARD_UPSTREAM_MEMORY_BYTES', 128 * 1024 * 1024, 1),
    upstreamQueueLimit: intVar(env, 'SWITCHBOARD_UPSTREAM_QUEUE_LIMIT', 100, 0),
    upstreamMaxWaitMs: intVar(env, 'SWITCHBOARD_UPSTREAM_MAX_WAIT_MS', 5_000, 0),
    egressAllowLinkLocal: boolVar(env, 'SWITCHBOARD_EGRESS_ALLOW_LINK_LOCAL', false),
    requestTimeoutMs: intVar(env, 'SWITCHBOARD_REQUEST_TIMEOUT_MS', 30_000, 1),
    keepAliveTimeoutMs: intVar(env, 'SWITCHBOARD_KEEP_ALIVE_TIMEOUT_MS', 5_000, 1),
    shutdownGraceMs: intVar(env, 'SWITCHBOARD_SHUTDOWN_GRACE_MS', 10_000, 0),
    dataDirCheckMs: intVar(env, 'SWITCHBOARD_DATA_DIR_CHECK_MS', 5000, 0),
    ...(env['SWITCHBOARD_INSTANCE_ID']?.trim() ? { instanceId: env['SWITCHBOARD_INSTANCE_ID'].trim() } : {}),
    tokenRateLimitPerMinute: intVar(env, 'SWITCHBOARD_TOKEN_RATE_LIMIT_PER_MINUTE', 30, 0),
    mcpMaxOutputBytes: intVar(env, 'SWITCHBOARD_MCP_MAX_OUTPUT_BYTES', 20_000, 1024),
    mcpProxy: boolVar(env, 'SWITCHBOARD_MCP_PROXY', false),
    lookupCacheMs: intVar(env, 'SWITCHBOARD_LOOKUP_CACHE_MS', 1000, 0),
    connectorTypes: types,
    tombstoneRetentionDays: intVar(env, 'SWITCHBOARD_TOMBSTONE_RETENTION_DAYS', 30, 1),
    auditRetentionDays: intVar(env, 'SWITCHBOARD_AUDIT_RETENTION_DAYS', 365, 1),
    eventsDelivery: boolVar(env, 'SWITCHBOARD_EVENTS_DELIVERY', true),
    webhookQueueLimit: intVar(env, 'SWITCHBOARD_WEBHOOK_QUEUE_LIMIT', 100, 1),
    webhookAllowPrivateAddresses: boolVar(env, 'SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE_ADDRESSES', false),
    webhookEndpointsPerOrganization: intVar(env, 'SWITCHBOARD_WEBHOOK_ENDPOINTS_PER_ORGANIZATION', 20, 1),
    webhookBodyLimitBytes: intVar(env, 'SWITCHBOARD_WEBHOOK_BODY_LIMIT_BYTES', 256 * 1024, 1024),
    ...(env['SWITCHBOARD_METRICS_PORT']?.trim() ? { metricsPort: intVar(env, 'SWITCHBOARD_METRICS_PORT', 0, 0) } : {}),
    metricsHost: env['SWITCHBOARD_METRICS_HOST']?.trim() || '127.0.0.1',
    ...(metricsTokenVar(env) !== undefined ? { metricsToken: metricsTokenVar(env)! } : {}),
    tracing: tracingConfigured(env),
  };
}

/** Time the server leaves a request to be answered after the upstream deadline (logging, storing, writing). */
export const ANSWER_MARGIN_MS = 15_000;

/**
 * How long a connection may stay quiet (the server's socket timeout): longer than the longest
 * deadline the service serves (an upstream call, OAuth refresh included), so a request is never
 * cut without an answer, and never shorter than the time to receive a request.
 */
export function answerTimeoutMs(c: Pick<ServiceConfig, 'requestTimeoutMs' | 'upstreamDeadlineMs'>): number {
  return Math.max(c.requestTimeoutMs, c.upstreamDeadlineMs + ANSWER_MARGIN_MS);
}

/** Defaults for tests and embedding: every value as if the environment were empty. */
export function defaultServiceConfig(overrides: Partial<ServiceConfig> = {}): ServiceConfig {
  return { ...loadServiceConfig({}, []), ...overrides };
}
