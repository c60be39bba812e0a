/**
 * The hosted client's transport (hosted.ts): the cached access token, the bearer and
 * organization headers, renewal after a 401, 429 retries honouring Retry-After, and problem
 * details turned into the SwitchboardError both modes throw.
 */
import createFetchClient, { type Client } from 'openapi-fetch';
import type { components, paths } from '../../generated/openapi.ts';
import { SwitchboardError, type ErrorCode, type ErrorDetail } from '../errors/index.ts';
import type { FetchLike } from '../http/index.ts';
import { sleep } from '../http/index.ts';

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

type Problem = { code?: string; detail?: string; title?: string; status?: number; errors?: ErrorDetail[] } & Record<string, unknown>;

/**
 * Turn a problem-details body into the SwitchboardError both modes throw. The problem's
 * `details` member becomes the error's `details` as it is (so `e.details.upstream_status` reads
 * the same in library and hosted mode); any other extension member is kept beside it.
 */
export function problemError(status: number, body: unknown): SwitchboardError {
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

/** The data of an openapi-fetch answer, or its problem as a SwitchboardError. */
export async function unwrap<D>(p: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
  const { data, error, response } = await p;
  if (error !== undefined || !response.ok) throw problemError(response.status, error);
  return data as D;
}

/** One client's connection to the service: its token, its transport and the typed API over them. */
export class HostedSession {
  readonly baseFetch: FetchLike;
  readonly baseUrl: string;
  readonly api: Client<paths>;
  private readonly maxAttempts: number;
  private readonly renewBefore: number;
  private token: { value: string; renewAt: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(readonly options: HostedClientOptions) {
    this.baseFetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.maxAttempts = options.maxAttempts ?? 3;
    this.renewBefore = options.renewBeforeMs ?? 60_000;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.api = createFetchClient<paths>({ baseUrl: this.baseUrl, fetch: this.authedFetch });
  }

  /** Drop the cached token: the next request gets a new one. */
  forgetToken(): void {
    this.token = undefined;
  }

  /**
   * A cached access token, renewed before it expires (one request at a time): `renewBeforeMs`
   * ahead, or half-way through its lifetime for tokens shorter-lived than twice that, so a short
   * token lifetime does not mean a token request per call.
   */
  async accessToken(force = false): Promise<string> {
    if (!force && this.token && this.token.renewAt > Date.now()) return this.token.value;
    this.pending ??= this.requestToken().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async requestToken(): Promise<string> {
    // Relative to the base URL's path too, as openapi-fetch resolves every other endpoint (a service behind a path prefix).
    const res = await this.baseFetch(`${this.baseUrl}/api/v1/account/applications/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ client_id: this.options.clientId, client_secret: this.options.clientSecret }),
    });
    const body: unknown = await res.json().catch(() => undefined);
    if (!res.ok) throw problemError(res.status, body);
    const t = body as components['schemas']['TokenResponse'];
    const lifetimeMs = t.expires_in * 1000;
    this.token = { value: t.access_token, renewAt: Date.now() + lifetimeMs - Math.min(this.renewBefore, lifetimeMs / 2) };
    return t.access_token;
  }

  /** The bearer token and organization header on `headers`. */
  async authorize(headers: Headers): Promise<void> {
    headers.set('authorization', `Bearer ${await this.accessToken()}`);
    if (this.options.organizationId !== undefined) headers.set('x-organization-id', this.options.organizationId);
  }

  /** The transport under openapi-fetch: bearer token, organization header, 401 renewal, 429 retries. */
  private readonly authedFetch = async (request: Request): Promise<Response> => {
    let renewed = false;
    for (let attempt = 1; ; attempt++) {
      const req = request.clone();
      await this.authorize(req.headers);
      const res = await this.baseFetch(req.url, { method: req.method, headers: req.headers, ...(req.body ? { body: await req.text() } : {}) });
      if (res.status === 401 && !renewed) {
        renewed = true;
        this.token = undefined;
        continue;
      }
      if (res.status === 429 && attempt < this.maxAttempts) {
        // Without a readable Retry-After, back off one more second per attempt.
        await sleep(Math.min(retryAfterMs(res.headers.get('retry-after'), Date.now()) ?? 1000 * attempt, 30_000));
        continue;
      }
      return res;
    }
  };
}
