/**
 * One logical call: throttle, attempts with per-attempt timeouts, OAuth refresh or a fresh minted
 * token after a 401, retries with backoff or the server's delay, all within one deadline; the
 * final error with the call's counts (and a minted token scrubbed from it).
 */
import { randomUUID } from 'node:crypto';
import { SwitchboardError } from '../errors/index.ts';
import { backoffDelayMs, sleep, ThrottleRefused, type RetryPolicy, type Throttle } from '../http/index.ts';
import type { UpstreamSend } from '../http/upstream-transport.ts';
import type { LoadedManifest } from '../manifest/index.ts';
import type { RuntimeCredentials } from './credentials.ts';
import type { CallTrack } from './observed-call.ts';
import { learnedWaitMs } from './rate-buckets.ts';
import type { CallContext, CallOptions, CallPlan, CallStats, RawResult, Rendered } from './types.ts';

/** What a call needs of its runtime. */
export interface CallHost {
  manifest: LoadedManifest;
  auth: RuntimeCredentials;
  send: UpstreamSend;
  limiter: Throttle | null;
  retry: RetryPolicy;
  timeoutMs: number;
  deadlineMs: number;
  maxResponseBytes: number | undefined;
  random: (() => number) | undefined;
  /** Have a minted token ready within `timeoutMs` (`force`: mint a new one). */
  mint(timeoutMs: number, force: boolean): Promise<void>;
  /** Record the statistics of the call under way (the runtime's lastCall). */
  setLastCall(stats: CallStats): void;
}

/** True for errors that mean the upstream took too long (our timer, or undici's timeouts). */
function isTimeout(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return true;
  const code = (e.cause as { code?: unknown } | undefined)?.code;
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
}

/** call() for any plan: the actions' and the proxy's requests (`track`: the upstream call's metrics, when observed). */
export async function runCall(
  host: CallHost,
  plan: CallPlan,
  options: CallOptions,
  authorization: string | undefined,
  deadlineMs: number,
  track?: CallTrack,
): Promise<RawResult> {
  const { auth, retry } = host;
  const signal = options.signal;
  // One deadline for everything the call does, an OAuth refresh or a token mint included.
  const deadline = Date.now() + deadlineMs;
  const refreshWithin = (): Promise<void> => auth.refresh(Math.max(1, Math.min(host.timeoutMs, deadline - Date.now())));
  // A minted_bearer or client_credentials variant's token (not for the mint request itself, which carries the JWT).
  const mints = authorization === undefined && auth.mints;
  const mintWithin = (force = false): Promise<void> => host.mint(Math.max(1, deadline - Date.now()), force);
  if (mints) await mintWithin();
  if (auth.expiresSoon()) await refreshWithin();
  const stats: CallStats = { attempts: 0, retries: 0, waitedMs: 0 };
  host.setLastCall(stats);
  if (track !== undefined) track.stats = stats;
  const maxAttempts = plan.retrySafe ? retry.maxAttempts : 1;
  let refreshed = false;
  // One id per logical call, the same in every attempt: {{call.id}} as an idempotency key.
  const callContext: CallContext = { id: randomUUID() };
  for (;;) {
    const { url, init } = plan.render(callContext, authorization);
    const sentToken = auth.mintedToken;
    const sentAccessToken = auth.credentials['access_token'];
    await awaitSlot(host, plan, options, deadline, stats);
    stats.attempts += 1;
    const attemptMs = Math.max(1, Math.min(host.timeoutMs, deadline - Date.now()));
    const outcome = await sendAttempt(host, plan, url, init, signal, attemptMs, track);
    if (!(outcome instanceof SwitchboardError)) {
      learn(host, plan, outcome);
      return outcome;
    }
    const failure = outcome;
    const serverDelay = typeof failure.details['retry_after_ms'] === 'number' ? failure.details['retry_after_ms'] : undefined;
    // The upstream is out of budget: hold every call of this connector back, but never for
    // longer than maxRetryAfterMs (a hostile or broken Retry-After must not freeze the connector).
    if (failure.code === 'upstream_rate_limited' && serverDelay !== undefined && host.limiter)
      host.limiter.pauseFor(Math.min(serverDelay, retry.maxRetryAfterMs), plan.bucket);
    if (failure.code === 'upstream_credentials_rejected' && !refreshed && mints) {
      // The minted token was revoked or expired early: mint once more (unless another call already did).
      refreshed = true;
      await mintWithin(auth.mintedToken === sentToken);
      host.setLastCall(stats);
      continue;
    }
    if (
      failure.code === 'upstream_credentials_rejected' &&
      !refreshed &&
      auth.oauthVariant() !== undefined &&
      typeof auth.credentials['refresh_token'] === 'string'
    ) {
      refreshed = true;
      // Another call of this runtime refreshed after this one sent its request: use its token (a second refresh would only spend the new refresh token).
      if (auth.credentials['access_token'] === sentAccessToken) await refreshWithin();
      continue;
    }
    const retryable = failure.code === 'upstream_rate_limited' || failure.code === 'upstream_unavailable';
    // A create/update the upstream says it did not run (error rule not_executed) is safe to retry.
    const allowed = failure.details['not_executed'] === true ? retry.maxAttempts : maxAttempts;
    if (!retryable || stats.attempts >= allowed) throw finalize(auth.mintedToken, failure, stats, allowed);
    const delay = serverDelay ?? backoffDelayMs(stats.attempts, retry, host.random);
    if (delay > retry.maxDelayMs || delay > retry.maxRetryAfterMs || Date.now() + delay >= deadline) throw finalize(auth.mintedToken, failure, stats, allowed);
    stats.retries += 1;
    stats.waitedMs += delay;
    await sleep(delay, signal);
  }
}

/**
 * An answer saying its bucket is spent (rate_limit.headers: remaining 0, refilled after so long):
 * the call's bucket waits that long (at most maxRetryAfterMs) before its next call, instead of
 * running into a 429.
 */
function learn(host: CallHost, plan: CallPlan, res: RawResult): void {
  if (host.limiter === null || host.manifest.manifest.rate_limit?.headers === undefined) return;
  const ms = learnedWaitMs(host.manifest.manifest, res.headers);
  if (ms !== undefined) host.limiter.pauseFor(Math.min(ms, host.retry.maxRetryAfterMs), plan.bucket);
}

/** Wait for a throttle slot, at most until the deadline (or the caller's longest wait); refused: the error saying why. */
async function awaitSlot(host: CallHost, plan: CallPlan, options: CallOptions, deadline: number, stats: CallStats): Promise<void> {
  if (!host.limiter) return;
  const before = Date.now();
  let maxWait = deadline - before;
  try {
    maxWait = Math.min(deadline - before, options.maxThrottleWaitMs ?? Infinity);
    await host.limiter.acquire({ signal: options.signal, maxWaitMs: maxWait, bucket: plan.bucket });
  } catch (e) {
    if (e instanceof ThrottleRefused) throw throttleRefused(host.manifest.type, e, stats, maxWait);
    throw e;
  }
  stats.waitedMs += Date.now() - before;
}

/** One attempt: send the request and read the answer; a transport failure or timeout is upstream_unavailable. */
async function sendAttempt(
  host: CallHost,
  plan: CallPlan,
  url: URL,
  init: Rendered['init'],
  signal: AbortSignal | undefined,
  attemptMs: number,
  track: CallTrack | undefined,
): Promise<RawResult | SwitchboardError> {
  try {
    // The attempt's time limit covers headers and body (one timer, in the transport).
    const res = await host.send(url, {
      method: init.method,
      headers: init.headers,
      body: init.body as string | Uint8Array | undefined,
      signal,
      timeoutMs: attemptMs,
      ...(plan.maxResponseBytes !== undefined
        ? { maxResponseBytes: plan.maxResponseBytes }
        : host.maxResponseBytes !== undefined
          ? { maxResponseBytes: host.maxResponseBytes }
          : {}),
      ...(plan.stream !== undefined ? { stream: plan.stream } : {}),
    });
    if (track !== undefined) {
      track.status = res.status;
      track.bytes += res.body.length;
    }
    return plan.interpret(res);
  } catch (e) {
    if (e instanceof SwitchboardError) throw e;
    if (signal?.aborted === true) throw signal.reason;
    const timedOut = isTimeout(e);
    const waited = attemptMs < host.timeoutMs ? `the call's deadline (${host.deadlineMs} ms)` : `${host.timeoutMs} ms`;
    return new SwitchboardError(
      'upstream_unavailable',
      timedOut ? `${host.manifest.type} did not answer within ${waited}` : `${host.manifest.type} could not be reached: ${(e as Error).message}`,
      { details: { timeout: timedOut }, cause: e },
    );
  }
}

/** The error of a call the throttle would not queue: 429 upstream_queue_full with the wait until a slot. */
function throttleRefused(type: string, e: ThrottleRefused, stats: CallStats, maxWaitMs: number): SwitchboardError {
  if (e.reason === 'paused') {
    return new SwitchboardError(
      'upstream_rate_limited',
      `Not sent: ${type} asked Switchboard to wait before calling it again; this connector's calls are held back for another ${Math.ceil(e.waitMs / 1000)} s`,
      {
        details: { reason: e.reason, retry_after_ms: e.waitMs, attempts: stats.attempts },
      },
    );
  }
  const why =
    e.reason === 'queue_full'
      ? `too many calls are already waiting for ${type}'s rate limit on this connector`
      : `the next ${type} request slot of this connector is ${e.waitMs} ms away, longer than this call may wait (${Math.max(0, maxWaitMs)} ms)`;
  return new SwitchboardError('upstream_queue_full', `Not sent: ${why}`, { details: { reason: e.reason, retry_after_ms: e.waitMs, attempts: stats.attempts } });
}

function finalize(token: string | undefined, e: SwitchboardError, stats: CallStats, maxAttempts: number): SwitchboardError {
  // A minted token is no credential field, so callers cannot scrub it: an upstream that echoes it loses it here.
  const scrub = <T>(v: T): T => (token === undefined || v === undefined ? v : (JSON.parse(JSON.stringify(v).split(token).join('[redacted]')) as T));
  return new SwitchboardError(e.code, token === undefined ? e.message : e.message.split(token).join('[redacted]'), {
    errors: scrub(e.errors),
    details: scrub({ ...e.details, attempts: stats.attempts, max_attempts: maxAttempts }),
    cause: token === undefined ? e.cause : undefined,
  });
}
