/**
 * The interpreter: one connector instance (a manifest, credentials and options) that runs its
 * actions: find and validate, render the request, call (call.ts), read the answer (response.ts),
 * extract records (extract.ts), follow pagination; the credential check and the pass-through proxy.
 */
import { randomUUID } from 'node:crypto';
import { selectAuthVariant, type Credentials } from '../auth/index.ts';
import { SwitchboardError } from '../errors/index.ts';
import type { FetchLike, RetryPolicy, Throttle } from '../http/index.ts';
import type { UpstreamSend } from '../http/upstream-transport.ts';
import { LIST_ACTIONS, type CompiledAction, type CompiledMint, type LoadedManifest } from '../manifest/index.ts';
import { observing } from '../observe/hooks.ts';
import { nextPage, PageTracker, type NextPage } from '../pagination/index.ts';
import { compileTemplate, truthy, type TemplateContext } from '../templates/index.ts';
import { checkBaseUrl, renderBaseUrl } from './base-url.ts';
import { runCall, type CallHost } from './call.ts';
import { RuntimeCredentials } from './credentials.ts';
import { extractList, extractRecord } from './extract.ts';
import { observedCall } from './observed-call.ts';
import { findAction, validateParams } from './params.ts';
import { proxyExchange, type ProxyRequest, type ProxyResponse } from './proxy-exchange.ts';
import { readBackParams } from './read-back.ts';
import { renderRequest, setHeader, type RequestTarget } from './request.ts';
import { interpretResponse } from './response.ts';
import { callBucket } from './rate-buckets.ts';
import { fetchFor, retryPolicy, runtimeConfig, sendFor, throttleOf } from './runtime-setup.ts';
import type { CallContext, CallOptions, CallPlan, CallStats, CheckResult, Envelope, ListEnvelope, RawResult, Rendered, RuntimeOptions } from './types.ts';

/** One connector instance: a manifest, credentials and options. Holds its own rate limiter. */
export class ConnectorRuntime {
  readonly manifest: LoadedManifest;
  /** The credentials, the auth variant in use, OAuth refreshes and minted tokens. */
  private readonly auth: RuntimeCredentials;
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
  private readonly target: RequestTarget;
  private readonly host: CallHost;
  /** Statistics of the most recent HTTP call. */
  lastCall: CallStats = { attempts: 0, retries: 0, waitedMs: 0 };

  constructor(manifest: LoadedManifest, credentials: unknown, options: RuntimeOptions = {}) {
    this.manifest = manifest;
    const variant = selectAuthVariant(manifest, credentials, options.authVariant);
    const held: Credentials = { ...(credentials as Credentials) };
    const m = manifest.manifest;
    const config = runtimeConfig(m, options);
    this.config = config;
    const region = typeof config['region'] === 'string' ? config['region'] : undefined;
    if (region !== undefined && m.base_url.regions?.[region] === undefined && options.baseUrl === undefined) {
      throw new SwitchboardError(
        'invalid_params',
        `Unknown region "${region}" for ${m.type}; regions: ${Object.keys(m.base_url.regions ?? {}).join(', ') || 'none'}`,
      );
    }
    const declared = (region !== undefined ? m.base_url.regions?.[region] : undefined) ?? variant.def.base_url ?? m.base_url.default;
    this.baseUrl = options.baseUrl !== undefined ? checkBaseUrl(options.baseUrl) : renderBaseUrl(manifest, declared, { config, credentials: held });
    this.retry = retryPolicy(m, options);
    this.timeoutMs = options.timeoutMs ?? m.http?.timeout_ms ?? 30_000;
    this.deadlineMs = options.deadlineMs ?? 60_000;
    this.maxResponseBytes = options.maxResponseBytes ?? m.http?.max_response_bytes;
    this.baseOrigin = new URL(this.baseUrl).origin;
    this.fetchImpl = fetchFor(options);
    this.send = sendFor(options, m.type);
    this.limiter = options.limiter !== undefined ? options.limiter : throttleOf(m);
    this.auth = new RuntimeCredentials(manifest, variant, held, config, options, this.fetchImpl);
    this.target = { manifest, baseUrl: this.baseUrl, baseOrigin: this.baseOrigin, explicit: options.baseUrl !== undefined };
    this.host = {
      manifest,
      auth: this.auth,
      send: this.send,
      limiter: this.limiter,
      retry: this.retry,
      timeoutMs: this.timeoutMs,
      deadlineMs: this.deadlineMs,
      maxResponseBytes: this.maxResponseBytes,
      random: options.random,
      mint: (timeoutMs, force) =>
        this.auth.ensureMinted(timeoutMs, force, (mint, jwt, deadlineMs) => this.callMint(mint, jwt, deadlineMs, options.baseUrl !== undefined)),
      setLastCall: (stats) => {
        this.lastCall = stats;
      },
    };
  }

  /** The auth variant in use. */
  get authVariant(): string {
    return this.auth.variant.def.name;
  }

  /**
   * The action definition, or unknown_entity / unknown_action listing the valid ones. Sync-only
   * actions (changes, scroll) are found only with `syncOnly: true` (the sync engine's calls).
   */
  action(entity: string, action: string, syncOnly = false): CompiledAction {
    return findAction(this.manifest, entity, action, syncOnly);
  }

  /** Validate params against the action's schema; every failure with its path. */
  validate(a: CompiledAction, params: unknown): Record<string, unknown> {
    return validateParams(a, params);
  }

  /** Run one action and return its envelope. */
  async execute(entity: string, action: string, params?: unknown, options: CallOptions = {}): Promise<Envelope> {
    const a = this.action(entity, action);
    const p = this.validate(a, params);
    const raw = await this.call(a, p, undefined, options);
    if (raw.empty === true && a.onEmpty !== undefined) {
      if ('record' in a.onEmpty) return { data: extractRecord(this.manifest, { ...a, record: a.onEmpty.record }, raw) };
      return this.execute(entity, a.onEmpty.action, readBackParams(a.onEmpty, raw.ctx), options);
    }
    if (LIST_ACTIONS.has(a.name)) {
      const { records, meta } = extractList(this.manifest, a, raw);
      return { data: records, meta };
    }
    return { data: extractRecord(this.manifest, a, raw) };
  }

  /** Every page of a list, following the manifest's pagination, one request at a time. */
  async *pages(entity: string, params?: unknown, options: CallOptions = {}): AsyncGenerator<ListEnvelope> {
    for await (const step of this.pageSteps(entity, params, undefined, 'list', options)) yield step.page;
  }

  /**
   * Like pages(), but each step also carries the request for the page after it (null on the
   * last page), so a caller can checkpoint and later resume with `from`.
   */
  async *pageSteps(
    entity: string,
    params?: unknown,
    from?: { url?: string },
    action: 'list' | 'changes' | 'scroll' = 'list',
    options: CallOptions = {},
  ): AsyncGenerator<{ page: ListEnvelope; next: NextPage }> {
    const a = this.action(entity, action, true);
    let p = this.validate(a, params);
    let url = from?.url;
    const tracker = new PageTracker();
    for (;;) {
      const raw = await this.call(a, p, url, options);
      const { records, meta } = extractList(this.manifest, a, raw);
      let next: NextPage = null;
      let loop: unknown;
      try {
        next =
          a.pagination === undefined || raw.nothing === true
            ? null
            : nextPage(a.pagination, { params: p, records, ctx: raw.ctx, headers: raw.headers }, tracker);
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
    const c = this.auth.variant.check ?? this.manifest.check;
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

  /**
   * Params a manifest fixes (a sync's `params`, its for_each's and removals'), with each text value
   * that is a template rendered over this connector's credentials and config: a tenant the API
   * cannot discover, given with the credentials (`team_id: "{{credentials.team_id}}"`).
   */
  fixedParams(params: unknown): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries((params ?? {}) as Record<string, unknown>)) {
      out[k] = typeof v === 'string' && v.includes('{{') ? compileTemplate(v).render({ credentials: this.auth.credentials, config: this.config }) : v;
    }
    return out;
  }

  /** The rate-limit bucket of a call of `a` (undefined: not an action's call), when the manifest keeps several. */
  private bucket(a: CompiledAction | undefined, params: Record<string, unknown>): CallPlan['bucket'] {
    return this.limiter === null ? undefined : callBucket(this.manifest, a, { params, credentials: this.auth.credentials, config: this.config });
  }

  private templateContext(params: Record<string, unknown>, call: CallContext): TemplateContext {
    return { params, credentials: this.auth.credentials, config: this.config, call };
  }

  /** Render the HTTP request of an action (exposed for tests and debugging). */
  render(a: CompiledAction, params: Record<string, unknown>, absoluteUrl?: string): Rendered {
    const { url, init } = this.renderRequest(a, params, { id: randomUUID() }, absoluteUrl, undefined);
    return { url: url.toString(), init };
  }

  private renderRequest(
    a: CompiledAction,
    params: Record<string, unknown>,
    call: CallContext,
    absoluteUrl: string | undefined,
    authorization: string | undefined,
  ): { url: URL; init: Rendered['init'] } {
    const ctx = this.templateContext(params, call);
    return renderRequest(this.target, a, ctx, absoluteUrl, (headers, url) => this.auth.apply(headers, ctx, authorization, url));
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
        applyAuth: (headers, call, authorization, url) => this.auth.apply(headers, this.templateContext({}, call), authorization, url),
        call: (plan) => runCall(this.host, { ...plan, bucket: this.bucket(undefined, {}) }, options, undefined, this.deadlineMs),
      },
      request,
    );
  }

  /**
   * A minted_bearer variant's mint request: on mint.base_url when the token endpoint has a host of
   * its own (unless an explicit base URL replaces every host, as in a sandbox), with the JWT as
   * the bearer token, or where the request's templates put {{jwt}} (then no Authorization header).
   */
  private callMint(mint: CompiledMint, jwt: string, deadlineMs: number, explicitBase: boolean): Promise<RawResult> {
    const a = mint.action;
    const own =
      mint.baseUrl !== undefined && !explicitBase
        ? renderBaseUrl(this.manifest, mint.baseUrl, { config: this.config, credentials: this.auth.credentials })
        : undefined;
    const target: RequestTarget = own === undefined ? this.target : { manifest: this.manifest, baseUrl: own, baseOrigin: new URL(own).origin };
    // "" stands for "no Authorization, and no minted token either" in runCall.
    const authorization = mint.jwtInRequest ? '' : `Bearer ${jwt}`;
    const plan: CallPlan = {
      retrySafe: a.retrySafe,
      bucket: this.bucket(undefined, {}),
      render: (call) => {
        const ctx = { ...this.templateContext({}, call), jwt };
        return renderRequest(target, a, ctx, undefined, (headers) => setHeader(headers, 'Authorization', authorization));
      },
      interpret: (res) => interpretResponse(this.manifest, this.retry, a, res, {}),
    };
    return runCall(this.host, plan, {}, authorization, deadlineMs);
  }

  /**
   * Send the action's request with throttling, timeouts, retries and error mapping, all within
   * one deadline (deadlineMs): a throttle slot, a retry delay or a server-requested wait that
   * would end past it fails at once instead of waiting.
   */
  private call(
    a: CompiledAction,
    params: Record<string, unknown>,
    absoluteUrl?: string,
    options: CallOptions = {},
    authorization?: string,
    deadlineMs: number = this.deadlineMs,
  ): Promise<RawResult> {
    const plan: CallPlan = {
      retrySafe: a.retrySafe,
      bucket: this.bucket(a, params),
      render: (call, auth) => this.renderRequest(a, params, call, absoluteUrl, auth),
      interpret: (res) => interpretResponse(this.manifest, this.retry, a, res, params),
    };
    if (!observing) return runCall(this.host, plan, options, authorization, deadlineMs);
    return observedCall(this.manifest.manifest.type, a, this.baseOrigin, (track) => runCall(this.host, plan, options, authorization, deadlineMs, track));
  }
}
