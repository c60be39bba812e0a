/** The interpreter's public types: envelopes, runtime and call options, and the shapes of one call. */
import type { Credentials, OAuthClient } from '../auth/index.ts';
import type { SwitchboardError } from '../errors/index.ts';
import type { BucketRef, FetchLike, RetryPolicy, Throttle } from '../http/index.ts';
import type { ResponseHeaders, UpstreamResponse } from '../http/upstream-transport.ts';
import type { TemplateContext } from '../templates/index.ts';
import type { Readable } from 'node:stream';

/** The result envelope: list → data array + meta; get/create/update → data object. */
export interface ListEnvelope<R = Record<string, unknown>, M = Record<string, unknown>> {
  data: R[];
  meta: M;
}
export interface RecordEnvelope<R = Record<string, unknown>> {
  data: R;
}
export type Envelope = ListEnvelope | RecordEnvelope;

export interface RuntimeOptions {
  /** Upstream base URL; default the manifest's (or its region's). */
  baseUrl?: string;
  /** Region name from the manifest's base_url.regions. */
  region?: string;
  /** Values for the manifest's config settings. */
  config?: Record<string, unknown>;
  /** Auth variant name; default: chosen from the credentials' shape. */
  authVariant?: string;
  /** Transport; default the shared undici transport (http/upstream-transport.ts). A transport's own fetch is used through its lean `send`; any other FetchLike through an adapter that bounds its body. */
  fetch?: FetchLike;
  /** Per-attempt timeout in ms; default the manifest's http.timeout_ms or 30000. */
  timeoutMs?: number;
  /** Overall deadline of one call across throttle waits, attempts and retry delays, in ms; default 60000. */
  deadlineMs?: number;
  /** Largest upstream response body (decoded), in bytes; default the manifest's http.max_response_bytes, else the transport's default (50 MiB). */
  maxResponseBytes?: number;
  /** Retry policy overrides (tests shorten delays). */
  retry?: Partial<RetryPolicy>;
  /** Throttle shared by every call of this instance; default one built from the manifest's rate_limit. */
  limiter?: Throttle | null;
  /** OAuth app used to refresh tokens when the credentials do not carry client_id/client_secret. */
  oauthClient?: OAuthClient;
  /** Called with the full new credentials after an OAuth refresh, so the caller can store them. */
  onTokenRefresh?: (credentials: Credentials) => void | Promise<void>;
  /**
   * Coordinates OAuth refreshes beyond this runtime (hosted: one refresh per connector across
   * instances, with backoff; src/service/refresh-coordinator.ts). Given the credentials the runtime
   * holds, the refresh itself (token request, follow-ups, onTokenRefresh) and the time left, it
   * answers the credentials to use from now on: the refresh's, or newer ones stored by another
   * instance meanwhile; or throws.
   */
  refreshCoordinator?: (held: Credentials, refresh: () => Promise<Credentials>, timeoutMs: number) => Promise<Credentials>;
  /** Random source for backoff jitter. */
  random?: () => number;
  /** Clock in ms since the epoch, for minted tokens (JWT times, expiry); default Date.now. */
  now?: () => number;
}

/** Per-call options of execute() and pageSteps(). */
export interface CallOptions {
  /** Aborts the call (e.g. the hosted caller disconnected): a throttle wait is left, a request in flight aborted. */
  signal?: AbortSignal | undefined;
  /**
   * Longest wait for a throttle slot, in ms: a call whose slot is further away is refused at once
   * (429 upstream_rate_limited while the upstream has paused the connector with a Retry-After,
   * else upstream_queue_full; both with retry_after_ms) instead of holding its caller. Default:
   * the call's deadline (a background sync waits its turn).
   */
  maxThrottleWaitMs?: number | undefined;
}

/** What a passing credential check reports; `checked` is false when the manifest declares no check. */
export interface CheckResult {
  ok: true;
  connector_type: string;
  checked: boolean;
  /** The check's info values (e.g. Intercom's app id and region); null where absent. */
  info: Record<string, unknown>;
}

/** Counters of the last call, for tests, logs and benchmarks. */
export interface CallStats {
  attempts: number;
  retries: number;
  waitedMs: number;
}

/** The `call` root of request templates: facts about one logical call, the same across its retries. */
export interface CallContext {
  /** A random UUID (v4) per call: Stripe's Idempotency-Key. */
  id: string;
}

export interface Rendered {
  url: string;
  init: RequestInit & { method: string; headers: Record<string, string> };
}

/**
 * One logical call as call() runs it: how each attempt's request is rendered (with the call's id
 * and, for a token mint, its own Authorization) and how an answer is read (a result, or the error
 * it means, which call() may retry).
 */
export interface CallPlan {
  retrySafe: boolean;
  /** The rate-limit bucket the call takes its tokens from, when the manifest keeps several (rate-buckets.ts). */
  bucket?: BucketRef | undefined;
  render(call: CallContext, authorization: string | undefined): { url: URL; init: Rendered['init'] };
  interpret(res: UpstreamResponse): RawResult | SwitchboardError;
  maxResponseBytes?: number | undefined;
  /** Answers with these statuses come as a stream (UpstreamRequest.stream; the lean transport only): the proxy's 2xx. */
  stream?: ((status: number) => boolean) | undefined;
}

export interface RawResult {
  status: number;
  headers: ResponseHeaders;
  body: unknown;
  ctx: TemplateContext;
  /** A 2xx answer without a body, to an action with response.on_empty: read the record back. */
  empty?: true;
  /** An answer without a body whose status the action's response.empty_on lists: no records, or no such record. */
  nothing?: true;
  /** The body as a stream (CallPlan.stream): the proxy's. */
  stream?: Readable;
}
