/**
 * The generic interpreter: runs any action of any manifest.
 * validate params → pick auth variant → render request → throttle → fetch (timeout, retries)
 * → map errors → extract records and meta. `pages()` iterates a list across every page.
 */
import { randomUUID } from 'node:crypto';
import type { OAuth2Auth } from '../../generated/manifest.ts';
import { selectAuthVariant, refreshAccessToken, runFollowUps, type Credentials, type OAuthClient } from '../auth/index.ts';
import { mintedExpiry, rsaPrivateKey, signJwtRs256 } from '../auth/minted.ts';
import { SwitchboardError, type ErrorDetail } from '../errors/index.ts';
import { createUpstreamTransport, ResponseHeaders, sendOverFetch, type UpstreamFetch, type UpstreamResponse, type UpstreamSend, type UpstreamTransport } from '../http/upstream-transport.ts';
import { checkBaseUrl, renderBaseUrl } from './base-url.ts';
import { anchored } from '../manifest/schemas.ts';
import { formEncode } from '../http/form-body.ts';
import { applyErrorRules, upstreamErrorEntries } from './error-rules.ts';
import { readBackParams } from './read-back.ts';
import { proxyExchange, type ProxyRequest, type ProxyResponse } from './proxy-exchange.ts';
import { backoffDelayMs, DEFAULT_RETRY, RateLimiter, serverRetryDelayMs, sleep, ThrottleRefused, type FetchLike, type RetryPolicy, type Throttle } from '../http/index.ts';
import { LIST_ACTIONS, renderTree, SYNC_ONLY_ACTIONS, type ActionName, type CompiledAction, type CompiledAuthVariant, type LoadedManifest } from '../manifest/index.ts';
import { nextPage, PageTracker, type NextPage } from '../pagination/index.ts';
import { PathValueError, truthy, type TemplateContext } from '../templates/index.ts';
import { observing } from '../observe/hooks.ts';
import { observedCall, type CallTrack } from './observed-call.ts';

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
   * instances, with backoff; src/service/connectors/refresh-coordinator.ts). Given the credentials the runtime
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
  render(call: CallContext, authorization: string | undefined): { url: URL; init: Rendered['init'] };
  interpret(res: UpstreamResponse): RawResult | SwitchboardError;
  maxResponseBytes?: number | undefined;
}

export interface RawResult {
  status: number;
  headers: ResponseHeaders;
  body: unknown;
  ctx: TemplateContext;
  /** A 2xx answer without a body, to an action with response.on_empty: read the record back. */
  empty?: true;
}

const LINE_BREAK = /[\r\n]/;

/** Set a rendered request header (an empty value leaves it out); a line break in it is refused. */
function setHeader(headers: Record<string, string>, name: string, value: unknown): void {
  if (value === undefined || value === null || value === '') return;
  const s = String(value);
  if (LINE_BREAK.test(s)) {
    throw new SwitchboardError('invalid_header_value', `The value of header ${name} contains a line break`, { errors: [{ path: `/headers/${name}`, message: 'contains CR or LF' }] });
  }
  headers[name.toLowerCase()] = s;
}

const RESPONSE_HEADERS = Symbol('response headers');

/** The `headers` of a response's template context: a plain object, made only when a template reads it. */
function headersGetter(this: { [RESPONSE_HEADERS]: ResponseHeaders }): Record<string, string> {
  return this[RESPONSE_HEADERS].object();
}

/**
 * The default transport, shared by every runtime in the process: undici's dispatcher over one
 * keep-alive pool (see http/upstream-transport.ts), created on first use.
 */
let sharedTransport: UpstreamTransport | undefined;
const shared = (): UpstreamTransport => (sharedTransport ??= createUpstreamTransport());
const defaultFetch: FetchLike = (input, init) => shared().fetch(input, init);
const defaultSend: UpstreamSend = (url, req) => shared().send(url, req);

/** True for errors that mean the upstream took too long (our timer, or undici's timeouts). */
function isTimeout(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return true;
  const code = (e.cause as { code?: unknown } | undefined)?.code;
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
}

/**
 * The client-side throttle for a manifest's rate limit, with a safety margin: a token granted
 * here reaches the upstream a little later (connection set-up, queuing), and the upstream's
 * bucket runs on its own clock, so Switchboard keeps 5% under the sustained rate and 10% under
 * the burst rather than racing the limit.
 */
export function limiterFor(rate: { requests: number; window_ms: number; burst?: number }, maxQueue?: number): RateLimiter {
  const burst = rate.burst ?? rate.requests;
  return new RateLimiter(rate.requests * 0.95, rate.window_ms, Math.max(1, Math.floor(burst * 0.9)), maxQueue);
}

function describeParamsErrors(action: CompiledAction): ErrorDetail[] {
  return (action.validateParams.errors ?? []).map((e) => {
    if (e.keyword === 'additionalProperties') {
      const known = Object.keys(action.def.params ?? {});
      return { path: `/${String(e.params['additionalProperty'])}`, message: `unknown param; valid params: ${known.join(', ') || 'none'}` };
    }
    if (e.keyword === 'required') return { path: `/${String(e.params['missingProperty'])}`, message: 'is required' };
    if (e.keyword === 'enum') return { path: e.instancePath, message: `must be one of: ${(e.params['allowedValues'] as unknown[]).join(', ')}` };
    return { path: e.instancePath || '/', message: e.message ?? 'is invalid' };
  });
}

/**
 * The action's requires_any groups none of whose params was given: the request branches on them
 * (e.g. monday's updates.update edits with body or deletes with state), so without any of them it
 * would be sent incomplete. A param given as null or "" counts as not given, as templates treat it.
 */
function missingGroups(action: CompiledAction, params: Record<string, unknown>): ErrorDetail[] {
  const out: ErrorDetail[] = [];
  for (const group of action.requiresAny) {
    if (group.some((k) => params[k] !== undefined && params[k] !== null && params[k] !== '')) continue;
    out.push({ path: '/', message: `needs at least one of: ${group.join(', ')}` });
  }
  return out;
}

function snippet(text: string): string {
  return text.length > 500 ? `${text.slice(0, 500)}…` : text;
}

/** One connector instance: a manifest, credentials and options. Holds its own rate limiter. */
export class ConnectorRuntime {
  readonly manifest: LoadedManifest;
  private credentials: Credentials;
  private variant: CompiledAuthVariant;
  private readonly fetchImpl: FetchLike;
  /** How requests are sent: the transport's lean send when the fetch carries one, else an adapter over the fetch. */
  private readonly send: UpstreamSend;
  private readonly baseUrl: string;
  private readonly baseOrigin: string;
  private readonly retry: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly deadlineMs: number;
  private readonly maxResponseBytes: number | undefined;
  private readonly limiter: Throttle | null;
  private readonly config: Record<string, unknown>;
  private refreshing: Promise<void> | undefined;
  /** A minted_bearer variant's token: in memory only, never stored or logged; renewed from renewAtMs on. */
  private minted: { token: string; renewAtMs: number } | undefined;
  private minting: Promise<void> | undefined;
  /** Statistics of the most recent HTTP call. */
  lastCall: CallStats = { attempts: 0, retries: 0, waitedMs: 0 };

  constructor(
    manifest: LoadedManifest,
    credentials: unknown,
    private readonly options: RuntimeOptions = {},
  ) {
    this.manifest = manifest;
    this.variant = selectAuthVariant(manifest, credentials, options.authVariant);
    this.credentials = { ...(credentials as Credentials) };
    const m = manifest.manifest;
    const config: Record<string, unknown> = {};
    for (const [k, def] of Object.entries(m.config ?? {})) if (def?.default !== undefined) config[k] = def.default;
    // A value outside a setting's enum is refused rather than sent (e.g. an API version the
    // upstream no longer serves, which monday would silently answer with another version).
    for (const [k, v] of Object.entries(options.config ?? {})) {
      const allowed = m.config?.[k]?.enum;
      if (allowed !== undefined && !allowed.includes(v as never)) {
        const message = `must be one of: ${allowed.map(String).join(', ')}`;
        throw new SwitchboardError('invalid_params', `Invalid config ${k} for ${m.type}: ${message}`, { errors: [{ path: `/config/${k}`, message }] });
      }
    }
    for (const [k, v] of Object.entries(options.config ?? {})) {
      const pattern = m.config?.[k]?.pattern;
      if (pattern !== undefined && (typeof v !== 'string' || !new RegExp(anchored(pattern), 'u').test(v))) {
        const message = `must match ${pattern}`;
        throw new SwitchboardError('invalid_params', `Invalid config ${k} for ${m.type}: ${message}`, { errors: [{ path: `/config/${k}`, message }] });
      }
    }
    Object.assign(config, options.config ?? {});
    if (options.region !== undefined) config['region'] = options.region;
    this.config = config;
    const region = typeof config['region'] === 'string' ? config['region'] : undefined;
    if (region !== undefined && m.base_url.regions?.[region] === undefined && options.baseUrl === undefined) {
      throw new SwitchboardError('invalid_params', `Unknown region "${region}" for ${m.type}; regions: ${Object.keys(m.base_url.regions ?? {}).join(', ') || 'none'}`);
    }
    const declared = (region !== undefined ? m.base_url.regions?.[region] : undefined) ?? this.variant.def.base_url ?? m.base_url.default;
    this.baseUrl = options.baseUrl !== undefined ? checkBaseUrl(options.baseUrl) : renderBaseUrl(manifest, declared, { config, credentials: this.credentials });
    this.retry = {
      ...DEFAULT_RETRY,
      ...(m.retry?.max_attempts !== undefined ? { maxAttempts: m.retry.max_attempts } : {}),
      ...(m.retry?.base_delay_ms !== undefined ? { baseDelayMs: m.retry.base_delay_ms } : {}),
      ...(m.retry?.max_delay_ms !== undefined ? { maxDelayMs: m.retry.max_delay_ms } : {}),
      ...(m.retry?.retry_after_headers !== undefined ? { retryAfterHeaders: m.retry.retry_after_headers } : {}),
      ...(m.retry?.max_retry_after_ms !== undefined ? { maxRetryAfterMs: m.retry.max_retry_after_ms } : {}),
      ...(options.retry ?? {}),
    };
    this.timeoutMs = options.timeoutMs ?? m.http?.timeout_ms ?? 30_000;
    this.deadlineMs = options.deadlineMs ?? 60_000;
    this.maxResponseBytes = options.maxResponseBytes ?? m.http?.max_response_bytes;
    this.baseOrigin = new URL(this.baseUrl).origin;
    this.fetchImpl = options.fetch ?? defaultFetch;
    const lean = (options.fetch as Partial<UpstreamFetch> | undefined)?.send;
    this.send = options.fetch === undefined ? defaultSend : typeof lean === 'function' ? lean : sendOverFetch(options.fetch, m.type);
    this.limiter = options.limiter !== undefined ? options.limiter : m.rate_limit ? limiterFor(m.rate_limit) : null;
  }

  /** The auth variant in use. */
  get authVariant(): string {
    return this.variant.def.name;
  }

  /**
   * The action definition, or unknown_entity / unknown_action listing the valid ones. Sync-only
   * actions (changes, scroll) are found only with `syncOnly: true` (the sync engine's calls).
   */
  action(entity: string, action: string, syncOnly = false): CompiledAction {
    const e = this.manifest.entities.get(entity);
    if (e === undefined) {
      const valid = [...this.manifest.entities.keys()];
      throw new SwitchboardError('unknown_entity', `Unknown entity "${entity}" for ${this.manifest.type}. Valid entities: ${valid.join(', ')}`, {
        details: { entity, valid },
      });
    }
    if (action === 'search') {
      throw new SwitchboardError('search_hosted_only', 'search is available in hosted mode only: it queries data the Switchboard service has synced, and library mode has no service.');
    }
    const a = e.actions.get(action as ActionName);
    if (a === undefined || (!syncOnly && SYNC_ONLY_ACTIONS.has(a.name))) {
      const valid = [...[...e.actions.keys()].filter((n) => !SYNC_ONLY_ACTIONS.has(n)), ...(e.def.search ? ['search'] : [])];
      throw new SwitchboardError('unknown_action', `Unknown action "${action}" for ${this.manifest.type} ${entity}. Valid actions: ${valid.join(', ')}`, {
        details: { entity, action, valid },
      });
    }
    return a;
  }

  /** Validate params against the action's schema; every failure with its path. */
  validate(a: CompiledAction, params: unknown): Record<string, unknown> {
    const p = params ?? {};
    const errors = a.validateParams(p) ? missingGroups(a, p as Record<string, unknown>) : describeParamsErrors(a);
    if (errors.length > 0) {
      throw new SwitchboardError('invalid_params', `Invalid params for ${a.entity}.${a.name}: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, { errors });
    }
    return p as Record<string, unknown>;
  }

  /** Run one action and return its envelope. */
  async execute(entity: string, action: string, params?: unknown, options: CallOptions = {}): Promise<Envelope> {
    const a = this.action(entity, action);
    const p = this.validate(a, params);
    const raw = await this.call(a, p, undefined, options);
    if (raw.empty === true && a.onEmpty !== undefined) return this.execute(entity, a.onEmpty.action, readBackParams(a.onEmpty, raw.ctx), options);
    if (LIST_ACTIONS.has(a.name)) {
      const { records, meta } = this.extractList(a, raw);
      return { data: records, meta };
    }
    return { data: this.extractRecord(a, raw) };
  }

  /** Every page of a list, following the manifest's pagination, one request at a time. */
  async *pages(entity: string, params?: unknown, options: CallOptions = {}): AsyncGenerator<ListEnvelope> {
    for await (const step of this.pageSteps(entity, params, undefined, 'list', options)) yield step.page;
  }

  /**
   * Like pages(), but each step also carries the request for the page after it (null on the
   * last page), so a caller can checkpoint and later resume with `from`.
   */
  async *pageSteps(entity: string, params?: unknown, from?: { url?: string }, action: 'list' | 'changes' | 'scroll' = 'list', options: CallOptions = {}): AsyncGenerator<{ page: ListEnvelope; next: NextPage }> {
    const a = this.action(entity, action, true);
    let p = this.validate(a, params);
    let url = from?.url;
    const tracker = new PageTracker();
    for (;;) {
      const raw = await this.call(a, p, url, options);
      const { records, meta } = this.extractList(a, raw);
      let next: NextPage = null;
      let loop: unknown;
      try {
        next = a.pagination === undefined ? null : nextPage(a.pagination, { params: p, records, ctx: raw.ctx, headers: raw.headers }, tracker);
      } catch (e) {
        // A repeated cursor: hand over this page's records first, then fail.
        loop = e;
      }
      yield { page: { data: records, meta }, next };
      if (loop !== undefined) throw loop;
      if (next === null) return;
      p = next.params;
      url = next.url;
    }
  }

  /**
   * Prove the credentials work with the manifest's check (one request, not retried on 401/403):
   * the info it declares, or the error (upstream_credentials_rejected when the upstream refuses
   * the credentials or the answer fails the check's success condition).
   */
  async check(): Promise<CheckResult> {
    // The auth variant's own check (GitHub installation tokens cannot read /user), else the manifest's.
    const c = this.variant.check ?? this.manifest.check;
    if (c === undefined) return { ok: true, connector_type: this.manifest.type, checked: false, info: {} };
    const raw = await this.call(c.action, {});
    const ctx = { body: raw.body, status: raw.status, headers: raw.ctx['headers'] };
    if (c.success !== undefined && !truthy(c.success.render(ctx))) {
      throw new SwitchboardError('upstream_credentials_rejected', `${this.manifest.type}: the credential check did not pass (${c.success.source})`, {
        details: { upstream_status: raw.status, upstream_body: raw.body },
      });
    }
    // Every info key any check of the manifest declares (the generated CheckInfo), null unless this one gives it.
    const info: Record<string, unknown> = {};
    for (const other of [this.manifest.check, ...this.manifest.auth.map((v) => v.check)]) for (const [k] of other?.info ?? []) info[k] = null;
    for (const [k, t] of c.info) {
      const v = t.render(ctx);
      info[k] = v === undefined || v === '' ? null : v;
    }
    return { ok: true, connector_type: this.manifest.type, checked: true, info };
  }

  /** Every record of a list across pages (streamed: one page in memory at a time). */
  async *records(entity: string, params?: unknown, options: CallOptions = {}): AsyncGenerator<Record<string, unknown>> {
    for await (const page of this.pages(entity, params, options)) yield* page.data;
  }

  private extractList(a: CompiledAction, raw: RawResult): { records: Record<string, unknown>[]; meta: Record<string, unknown> } {
    const records = a.records?.render(raw.ctx);
    if (!Array.isArray(records)) {
      throw this.protocolError(a, raw, `expected a list of records at ${a.records?.source ?? 'records'}`);
    }
    if (a.map.length > 0) for (let i = 0; i < records.length; i++) records[i] = this.mapRecord(a, records[i] as Record<string, unknown>, raw);
    const meta: Record<string, unknown> = {};
    for (const [k, t] of a.meta) {
      const v = t.render(raw.ctx);
      meta[k] = v === undefined || v === '' ? null : v;
    }
    return { records: records as Record<string, unknown>[], meta };
  }

  private extractRecord(a: CompiledAction, raw: RawResult): Record<string, unknown> {
    if (a.notFoundWhen !== undefined && truthy(a.notFoundWhen.render(raw.ctx))) {
      throw new SwitchboardError('upstream_not_found', `${this.manifest.type} has no such ${a.entity} record`, { details: { upstream_status: raw.status } });
    }
    const rec = a.record?.render(raw.ctx);
    if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) {
      throw this.protocolError(a, raw, `expected a record at ${a.record?.source ?? 'record'}`);
    }
    return a.map.length > 0 ? this.mapRecord(a, rec as Record<string, unknown>, raw) : (rec as Record<string, unknown>);
  }

  /**
   * Apply response.map to one record: each listed field is rewritten from the record. In place:
   * the record was parsed from this response and is ours (copying a large record cost more than
   * the mapping); every template still sees the record as it came, since all are evaluated first.
   */
  private mapRecord(a: CompiledAction, record: Record<string, unknown>, raw: RawResult): Record<string, unknown> {
    if (record === null || typeof record !== 'object') return record;
    const ctx = { record, params: raw.ctx['params'] };
    const map = a.map;
    const values = map.map(([, t]) => t.render(ctx));
    // A field mapped to the record itself gets the record as it came, not a circular one.
    const out = values.includes(record) ? { ...record } : record;
    for (let i = 0; i < map.length; i++) out[map[i]![0]] = values[i] === undefined ? null : values[i];
    return out;
  }

  private protocolError(a: CompiledAction, raw: RawResult, why: string): SwitchboardError {
    return new SwitchboardError('upstream_protocol_error', `${this.manifest.type} answered ${a.entity}.${a.name} with a body Switchboard cannot read: ${why}`, {
      details: { upstream_status: raw.status, upstream_body: typeof raw.body === 'string' ? snippet(raw.body) : raw.body },
    });
  }

  private templateContext(params: Record<string, unknown>, call: CallContext): TemplateContext {
    return { params, credentials: this.credentials, config: this.config, call };
  }

  /** Render the HTTP request of an action (exposed for tests and debugging). */
  render(a: CompiledAction, params: Record<string, unknown>, absoluteUrl?: string): Rendered {
    const { url, init } = this.renderRequest(a, params, { id: randomUUID() }, absoluteUrl);
    return { url: url.toString(), init };
  }

  private renderRequest(a: CompiledAction, params: Record<string, unknown>, call: CallContext, absoluteUrl?: string, authorization?: string): { url: URL; init: Rendered['init'] } {
    const ctx = this.templateContext(params, call);
    let url: URL;
    if (absoluteUrl !== undefined) {
      url = new URL(absoluteUrl, this.baseUrl);
      // Never send credentials to a host the connector was not configured for.
      if (url.origin !== this.baseOrigin) {
        throw new SwitchboardError('upstream_protocol_error', `The upstream pointed the next page at another host (${url.origin})`);
      }
    } else {
      let path: string;
      try {
        path = a.request.path.renderPath(ctx);
      } catch (e) {
        if (e instanceof PathValueError) {
          throw new SwitchboardError('invalid_params', `Invalid params for ${a.entity}.${a.name}: ${e.message}`, {
            errors: [{ path: `/${e.variable.replace(/^params\./, '')}`, message: e.message }],
          });
        }
        throw e;
      }
      url = new URL(this.baseUrl + path);
      // Egress: a rendered path can never move the request to another host ("@evil", "//evil").
      if (url.origin !== this.baseOrigin) {
        throw new SwitchboardError('egress_refused', `The request of ${a.entity}.${a.name} does not stay on ${this.baseOrigin}`);
      }
      for (const [k, t] of a.request.query) {
        const v = t.render(ctx);
        if (v === undefined || v === null || v === '') continue;
        if (Array.isArray(v)) for (const item of v) url.searchParams.append(k, String(item));
        else url.searchParams.set(k, typeof v === 'object' ? JSON.stringify(v) : String(v));
      }
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    for (const [k, t] of this.manifest.headers) setHeader(headers, k, t.render(ctx));
    for (const [k, t] of a.request.headers) setHeader(headers, k, t.render(ctx));
    this.applyAuth(headers, ctx, authorization);
    const init: Rendered['init'] = { method: a.request.method, headers };
    if (a.request.graphql !== undefined) {
      const query = a.request.graphql.query.render(ctx);
      const variables = a.request.graphql.variables ? renderTree(a.request.graphql.variables, ctx) : undefined;
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify({ query, ...(variables !== undefined ? { variables } : {}) });
    } else if (a.request.body !== undefined && a.request.bodyEncoding === 'form') {
      const body = renderTree(a.request.body, ctx) ?? {};
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        throw new SwitchboardError('invalid_params', `Invalid params for ${a.entity}.${a.name}: the form body must be an object, got ${Array.isArray(body) ? 'an array' : typeof body}`, {
          errors: [{ path: '/', message: 'the form body must render an object' }],
        });
      }
      headers['content-type'] = 'application/x-www-form-urlencoded';
      init.body = formEncode(body as Record<string, unknown>);
    } else if (a.request.body !== undefined) {
      headers['content-type'] = 'application/json';
      init.body = JSON.stringify(renderTree(a.request.body, ctx) ?? {});
    }
    return { url, init };
  }

  /** Set the auth variant's header (a minted token, or the variant's rendered value), or the given Authorization (a token mint's JWT). */
  private applyAuth(headers: Record<string, string>, ctx: TemplateContext, authorization: string | undefined): void {
    if (authorization !== undefined) setHeader(headers, 'Authorization', authorization);
    else if (this.variant.mint !== undefined) setHeader(headers, 'Authorization', this.minted === undefined ? undefined : `Bearer ${this.minted.token}`);
    else setHeader(headers, this.variant.header, this.variant.value.render(ctx));
  }

  /**
   * Send any request under the connector's base URL with its auth, throttle, retries and
   * transport (the pass-through proxy, engine/proxy-exchange.ts): the vendor's status, answer
   * headers and body, unchanged, whatever the status. Refused paths, headers and hosts are
   * thrown before anything is sent; errors of Switchboard's own (throttle, timeout, egress) are thrown.
   */
  proxy(request: ProxyRequest, options: CallOptions = {}): Promise<ProxyResponse> {
    return proxyExchange(
      {
        manifest: this.manifest,
        baseUrl: this.baseUrl,
        maxResponseBytes: this.maxResponseBytes,
        retry: this.retry,
        manifestHeaders: (headers) => {
          const ctx = this.templateContext({}, { id: randomUUID() });
          for (const [k, t] of this.manifest.headers) setHeader(headers, k, t.render(ctx));
        },
        applyAuth: (headers, call, authorization) => this.applyAuth(headers, this.templateContext({}, call), authorization),
        call: (plan) => this.callPlan(plan, options),
      },
      request,
    );
  }

  private oauthVariant(): OAuth2Auth | undefined {
    const d = this.variant.def;
    return d.type === 'oauth2' && d.refreshes === true ? d : undefined;
  }

  /** Refresh the OAuth token (once at a time per instance) and report the new credentials; `timeoutMs` bounds the token request (default the per-attempt timeout). */
  private async refresh(timeoutMs: number = this.timeoutMs): Promise<void> {
    const v = this.oauthVariant();
    const rt = this.credentials['refresh_token'];
    if (v === undefined || typeof rt !== 'string') return;
    this.refreshing ??= (async () => {
      const run = async (): Promise<Credentials> => {
        const cid = this.credentials['client_id'];
        const csec = this.credentials['client_secret'];
        const client: OAuthClient | undefined =
          this.options.oauthClient ?? (typeof cid === 'string' && typeof csec === 'string' ? { clientId: cid, clientSecret: csec } : undefined);
        if (client === undefined) throw new SwitchboardError('oauth_refresh_failed', 'The access token needs refreshing but no OAuth client id/secret is configured');
        const tokens = await refreshAccessToken(v, client, rt, this.fetchImpl, timeoutMs, this.credentials);
        const fields = Object.keys(v.fields);
        let updated: Credentials = { ...this.credentials };
        for (const [k, val] of Object.entries(tokens)) if (fields.includes(k) && val !== undefined) updated[k] = val;
        // follow_up requests declared on_refresh: true refill their fields with the new token.
        if (this.variant.followUps?.some((f) => f.onRefresh) === true) {
          updated = await runFollowUps(this.variant, updated, { after: 'refresh', fetchImpl: this.fetchImpl, baseUrl: client.followUpBaseUrl, config: this.config, timeoutMs });
        }
        this.credentials = updated;
        await this.options.onTokenRefresh?.({ ...updated });
        return updated;
      };
      const coordinator = this.options.refreshCoordinator;
      if (coordinator === undefined) await run();
      else this.credentials = await coordinator({ ...this.credentials }, run, timeoutMs);
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /**
   * Have a minted token ready (minted_bearer variants): mint one (once at a time per instance)
   * when there is none or it is due for renewal; `force` drops the current one first (after a 401).
   */
  private async ensureMinted(timeoutMs: number, force = false): Promise<void> {
    const mint = this.variant.mint;
    if (mint === undefined) return;
    const now = (): number => (this.options.now ?? Date.now)();
    if (!force && this.minted !== undefined && now() < this.minted.renewAtMs) return;
    if (force) this.minted = undefined;
    this.minting ??= (async () => {
      const ctx = { credentials: this.credentials, config: this.config };
      const keyField = mint.privateKey.references.find(([root]) => root === 'credentials')?.[1] ?? 'private_key';
      const key = rsaPrivateKey(mint.privateKey.render(ctx), keyField);
      const t = Math.floor(now() / 1000);
      const claims: Record<string, unknown> = {};
      for (const [k, tpl] of mint.claims) {
        const v = tpl.render(ctx);
        if (v !== undefined && v !== null && v !== '') claims[k] = v;
      }
      claims['iat'] = t - mint.backdateSeconds;
      claims['exp'] = t + mint.lifetimeSeconds;
      const jwt = signJwtRs256(key, claims);
      const variant = this.variant.def.name;
      let raw: RawResult;
      try {
        raw = await this.call(mint.action, {}, undefined, {}, `Bearer ${jwt}`, timeoutMs);
      } catch (e) {
        if (e instanceof SwitchboardError && e.code === 'upstream_credentials_rejected') {
          throw new SwitchboardError('upstream_credentials_rejected', `${this.manifest.type} refused the JWT of auth variant ${variant} (check the app id and the private key): ${e.message}`, {
            errors: e.errors,
            details: { ...e.details, auth_variant: variant, stage: 'mint' },
            cause: e,
          });
        }
        throw e;
      }
      const token = mint.token.render(raw.ctx);
      const expiry = mintedExpiry(mint.expiresAt?.render(raw.ctx), mint.expiresIn?.render(raw.ctx), now());
      if (typeof token !== 'string' || token === '' || (expiry !== undefined && !Number.isFinite(expiry))) {
        // The answer is not quoted: it would hold the token.
        const why = typeof token !== 'string' || token === '' ? `no token at ${mint.token.source}` : `an unreadable expiry at ${(mint.expiresAt ?? mint.expiresIn)?.source ?? ''}`;
        throw new SwitchboardError('upstream_protocol_error', `${this.manifest.type} answered the token mint of auth variant ${variant} with ${why}`, { details: { upstream_status: raw.status, stage: 'mint' } });
      }
      this.minted = { token, renewAtMs: expiry === undefined ? Infinity : expiry - mint.renewBeforeSeconds * 1000 };
    })().finally(() => {
      this.minting = undefined;
    });
    return this.minting;
  }

  private expiresSoon(): boolean {
    const exp = this.credentials['expires_at'];
    return this.oauthVariant() !== undefined && typeof exp === 'number' && exp * 1000 - Date.now() < 60_000;
  }

  /**
   * Send the action's request with throttling, timeouts, retries and error mapping, all within
   * one deadline (deadlineMs): a throttle slot, a retry delay or a server-requested wait that
   * would end past it fails at once instead of waiting.
   */
  private call(a: CompiledAction, params: Record<string, unknown>, absoluteUrl?: string, options: CallOptions = {}, authorization?: string, deadlineMs: number = this.deadlineMs): Promise<RawResult> {
    const plan: CallPlan = {
      retrySafe: a.retrySafe,
      render: (call, auth) => this.renderRequest(a, params, call, absoluteUrl, auth),
      interpret: (res) => this.interpret(a, res, params),
    };
    if (!observing) return this.callPlan(plan, options, authorization, deadlineMs);
    return observedCall(this.manifest.manifest.type, a, this.baseOrigin, (track) => this.callPlan(plan, options, authorization, deadlineMs, track));
  }

  /** call() for any plan: the actions' and the proxy's requests (`track`: the upstream call's metrics, when observed). */
  private async callPlan(plan: CallPlan, options: CallOptions = {}, authorization?: string, deadlineMs: number = this.deadlineMs, track?: CallTrack): Promise<RawResult> {
    const signal = options.signal;
    // One deadline for everything the call does, an OAuth refresh or a token mint included.
    const deadline = Date.now() + deadlineMs;
    const refreshWithin = (): Promise<void> => this.refresh(Math.max(1, Math.min(this.timeoutMs, deadline - Date.now())));
    // A minted_bearer variant's token (not for the mint request itself, which carries the JWT).
    const mints = authorization === undefined && this.variant.mint !== undefined;
    const mintWithin = (force = false): Promise<void> => this.ensureMinted(Math.max(1, deadline - Date.now()), force);
    if (mints) await mintWithin();
    if (this.expiresSoon()) await refreshWithin();
    const stats: CallStats = { attempts: 0, retries: 0, waitedMs: 0 };
    this.lastCall = stats;
    if (track !== undefined) track.stats = stats;
    const maxAttempts = plan.retrySafe ? this.retry.maxAttempts : 1;
    let refreshed = false;
    // One id per logical call, the same in every attempt: {{call.id}} as an idempotency key.
    const callContext: CallContext = { id: randomUUID() };
    for (;;) {
      const { url, init } = plan.render(callContext, authorization);
      const sentToken = this.minted?.token;
      const sentAccessToken = this.credentials['access_token'];
      if (this.limiter) {
        const before = Date.now();
        let maxWait = deadline - before;
        try {
          maxWait = Math.min(deadline - before, options.maxThrottleWaitMs ?? Infinity);
          await this.limiter.acquire({ signal, maxWaitMs: maxWait });
        } catch (e) {
          if (e instanceof ThrottleRefused) throw this.throttleRefused(e, stats, maxWait);
          throw e;
        }
        stats.waitedMs += Date.now() - before;
      }
      stats.attempts += 1;
      let failure: SwitchboardError;
      let serverDelay: number | undefined;
      const attemptMs = Math.max(1, Math.min(this.timeoutMs, deadline - Date.now()));
      try {
        // The attempt's time limit covers headers and body (one timer, in the transport).
        const res = await this.send(url, {
          method: init.method,
          headers: init.headers,
          body: init.body as string | Uint8Array | undefined,
          signal,
          timeoutMs: attemptMs,
          ...(plan.maxResponseBytes !== undefined ? { maxResponseBytes: plan.maxResponseBytes } : this.maxResponseBytes !== undefined ? { maxResponseBytes: this.maxResponseBytes } : {}),
        });
        if (track !== undefined) {
          track.status = res.status;
          track.bytes += res.body.length;
        }
        const result = plan.interpret(res);
        if (!(result instanceof SwitchboardError)) return result;
        failure = result;
        serverDelay = typeof failure.details['retry_after_ms'] === 'number' ? failure.details['retry_after_ms'] : undefined;
        // The upstream is out of budget: hold every call of this connector back, but never for
        // longer than maxRetryAfterMs (a hostile or broken Retry-After must not freeze the connector).
        if (failure.code === 'upstream_rate_limited' && serverDelay !== undefined && this.limiter) this.limiter.pauseFor(Math.min(serverDelay, this.retry.maxRetryAfterMs));
      } catch (e) {
        if (e instanceof SwitchboardError) throw e;
        if (signal?.aborted === true) throw signal.reason;
        const timedOut = isTimeout(e);
        const waited = attemptMs < this.timeoutMs ? `the call's deadline (${this.deadlineMs} ms)` : `${this.timeoutMs} ms`;
        failure = new SwitchboardError(
          'upstream_unavailable',
          timedOut ? `${this.manifest.type} did not answer within ${waited}` : `${this.manifest.type} could not be reached: ${(e as Error).message}`,
          { details: { timeout: timedOut }, cause: e },
        );
      }
      if (failure.code === 'upstream_credentials_rejected' && !refreshed && mints) {
        // The minted token was revoked or expired early: mint once more (unless another call already did).
        refreshed = true;
        await mintWithin(this.minted?.token === sentToken);
        this.lastCall = stats;
        continue;
      }
      if (failure.code === 'upstream_credentials_rejected' && !refreshed && this.oauthVariant() !== undefined && typeof this.credentials['refresh_token'] === 'string') {
        refreshed = true;
        // Another call of this runtime refreshed after this one sent its request: use its token (a second refresh would only spend the new refresh token).
        if (this.credentials['access_token'] === sentAccessToken) await refreshWithin();
        continue;
      }
      const retryable = failure.code === 'upstream_rate_limited' || failure.code === 'upstream_unavailable';
      // A create/update the upstream says it did not run (error rule not_executed) is safe to retry.
      const allowed = failure.details['not_executed'] === true ? this.retry.maxAttempts : maxAttempts;
      if (!retryable || stats.attempts >= allowed) throw this.finalize(failure, stats, allowed);
      const delay = serverDelay ?? backoffDelayMs(stats.attempts, this.retry, this.options.random);
      if (delay > this.retry.maxDelayMs || delay > this.retry.maxRetryAfterMs || Date.now() + delay >= deadline) throw this.finalize(failure, stats, allowed);
      stats.retries += 1;
      stats.waitedMs += delay;
      await sleep(delay, signal);
    }
  }

  /** The error of a call the throttle would not queue: 429 upstream_queue_full with the wait until a slot. */
  private throttleRefused(e: ThrottleRefused, stats: CallStats, maxWaitMs: number): SwitchboardError {
    if (e.reason === 'paused') {
      return new SwitchboardError('upstream_rate_limited', `Not sent: ${this.manifest.type} asked Switchboard to wait before calling it again; this connector's calls are held back for another ${Math.ceil(e.waitMs / 1000)} s`, {
        details: { reason: e.reason, retry_after_ms: e.waitMs, attempts: stats.attempts },
      });
    }
    const why =
      e.reason === 'queue_full'
        ? `too many calls are already waiting for ${this.manifest.type}'s rate limit on this connector`
        : `the next ${this.manifest.type} request slot of this connector is ${e.waitMs} ms away, longer than this call may wait (${Math.max(0, maxWaitMs)} ms)`;
    return new SwitchboardError('upstream_queue_full', `Not sent: ${why}`, { details: { reason: e.reason, retry_after_ms: e.waitMs, attempts: stats.attempts } });
  }

  private finalize(e: SwitchboardError, stats: CallStats, maxAttempts: number): SwitchboardError {
    // A minted token is no credential field, so callers cannot scrub it: an upstream that echoes it loses it here.
    const token = this.minted?.token;
    const scrub = <T>(v: T): T => (token === undefined || v === undefined ? v : (JSON.parse(JSON.stringify(v).split(token).join('[redacted]')) as T));
    return new SwitchboardError(e.code, token === undefined ? e.message : e.message.split(token).join('[redacted]'), {
      errors: scrub(e.errors),
      details: scrub({ ...e.details, attempts: stats.attempts, max_attempts: maxAttempts }),
      cause: token === undefined ? e.cause : undefined,
    });
  }

  /** A rate limit from an error rule without a wait of its own still honours the retry_after_headers (Retry-After, X-RateLimit-Reset...). */
  private withServerDelay(ruled: SwitchboardError, headers: ResponseHeaders): SwitchboardError {
    const delay = ruled.code === 'upstream_rate_limited' && ruled.details['retry_after_ms'] === undefined ? serverRetryDelayMs(headers, this.retry) : undefined;
    if (delay !== undefined) ruled.details['retry_after_ms'] = delay;
    return ruled;
  }

  /** Turn an HTTP response into a result or the error it means (not thrown, so call() can retry). */
  private interpret(a: CompiledAction, res: UpstreamResponse, params: Record<string, unknown>): RawResult | SwitchboardError {
    const text = res.body.toString('utf8');
    const headers = new ResponseHeaders(res.headers);
    let body: unknown = text;
    let isJson = false;
    if (text.trim() !== '') {
      try {
        body = JSON.parse(text) as unknown;
        isJson = true;
      } catch {
        isJson = false;
      }
    }
    const ctx: TemplateContext = { body, status: res.status, params, [RESPONSE_HEADERS]: headers };
    // Response headers as a plain object only when a template reads them.
    Object.defineProperty(ctx, 'headers', { enumerable: true, get: headersGetter });
    const upstreamBody = isJson ? body : snippet(text);
    const base = { upstream_status: res.status, upstream_body: upstreamBody };
    if (res.status >= 200 && res.status < 300) {
      if (a.onEmpty !== undefined && text.trim() === '') return { status: res.status, headers, body: undefined, ctx, empty: true };
      if (!isJson) {
        return new SwitchboardError('upstream_protocol_error', `${this.manifest.type} answered ${a.entity}.${a.name} with ${text.trim() === '' ? 'an empty body' : 'a body that is not JSON'}`, {
          details: { ...base, content_type: headers.get('content-type') },
        });
      }
      const ruled = applyErrorRules(this.manifest, this.manifest.bodyErrors, ctx, base);
      if (ruled !== undefined) return this.withServerDelay(ruled, headers);
      return { status: res.status, headers, body, ctx };
    }
    const ruled = applyErrorRules(this.manifest, this.manifest.statusErrors, ctx, base);
    if (ruled !== undefined) return this.withServerDelay(ruled, headers);
    const upstreamMessage = this.manifest.errorMessage?.render(ctx);
    const msg = typeof upstreamMessage === 'string' && upstreamMessage !== '' ? upstreamMessage : undefined;
    const say = (fallback: string): string => `${this.manifest.type}: ${msg ?? fallback}`;
    const errors = upstreamErrorEntries(this.manifest, ctx);
    const s = res.status;
    if (s === 401 || s === 403) return new SwitchboardError('upstream_credentials_rejected', say(`credentials rejected (HTTP ${s})`), { errors, details: base });
    if (s === 404) return new SwitchboardError('upstream_not_found', say('not found'), { errors, details: base });
    if (s === 429) {
      const delay = serverRetryDelayMs(headers, this.retry);
      return new SwitchboardError('upstream_rate_limited', say('rate limited'), { errors, details: { ...base, ...(delay !== undefined ? { retry_after_ms: delay } : {}) } });
    }
    if (s >= 500) return new SwitchboardError('upstream_unavailable', say(`HTTP ${s}`), { errors, details: base });
    return new SwitchboardError('upstream_rejected', say(`the request was refused (HTTP ${s})`), { errors, details: base });
  }
}
