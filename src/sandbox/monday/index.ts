/**
 * Monday.com simulator: `POST /v2` GraphQL (parsed, validated and executed with graphql-js
 * against monday's own 2026-10 SDL, vendored in schema-2026-10.graphql), personal-token and OAuth
 * auth, API versions (a version monday no longer serves is answered as the current one), the
 * per-minute complexity budget and request limit with monday's error shapes, and the OAuth
 * authorize/token endpoints — on top of the shared simulator plumbing (fault injection, request log).
 *
 * Usage: `const sim = await startMondaySimulator(); connect('monday', { credentials: { api_key:
 * sim.apiKey }, baseUrl: sim.url })`.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { buildSchema, execute, getOperationAST, GraphQLError, parse, validate, type DocumentNode } from 'graphql';
import { oauthServer } from '../../simulator/oauth.ts';
import { parseJson, startSimulator, type SimRequest, type SimResponse, type Simulator } from '../../simulator/sim-server.ts';
import { ComplexityBudget, queryCost, type ComplexityOptions } from './complexity.ts';
import { seedState, type MondayState } from './data.ts';
import { MondayApiError, parseErrorEntry, validationErrorEntry, variableErrorEntry, type ErrorEntry } from './errors.ts';
import { attachResolvers, CursorStore, type ResolverContext } from './resolvers.ts';
import { MONDAY_SDL } from './schema.ts';
import { SERVED_VERSIONS } from './versions.ts';

export type { MondayState } from './data.ts';
export { ComplexityBudget } from './complexity.ts';
export { SERVED_VERSIONS } from './versions.ts';

export interface MondaySimulatorOptions {
  /** Loopback port; default any free port. */
  port?: number | undefined;
  /** Interface to listen on; default 127.0.0.1. */
  host?: string | undefined;
  /** PRNG seed for the account's data; default 1. */
  seed?: number;
  /** Total items across the boards (1..100000); default 300. */
  size?: number;
  /** Complexity budget; default 10M points per 60 s, 5M per query (personal token, paid plan). */
  complexity?: ComplexityOptions;
  /**
   * HTTP status of a complexity-exhausted answer. Monday reports it as an application error in
   * the body (error-handling: "200 – OK for application-level errors"); 429 is available for
   * testing clients against a transport-level limit.
   */
  complexityHttpStatus?: number;
  /** Version used when a request sends no, a malformed or a no-longer-served API-Version; default 2026-10. */
  defaultApiVersion?: string;
  /**
   * Requests per minute per account (docs/rate-limits, "Minute limit": 1,000 on the lowest plans,
   * 5,000 on Enterprise); default 5,000. Over it, HTTP 429 RATE_LIMIT_EXCEEDED with retry_in_seconds.
   */
  requestsPerMinute?: number;
}


export interface MondaySimulator extends Simulator {
  /** A valid personal API token (sent as `Authorization: <token>`). */
  apiKey: string;
  /** The OAuth app the simulator accepts; set `deny` to make authorize answer access_denied. */
  oauth: { clientId: string; clientSecret: string; deny: boolean; scope: string };
  /** Every access token currently accepted (the personal token plus OAuth-issued ones). */
  tokens: Set<string>;
  /** The account's data (replaced by resetData). */
  readonly state: MondayState;
  /** The complexity budget; change `budget` / `windowSeconds` at runtime, or reset(). */
  complexity: ComplexityBudget;
  /** items_page cursor snapshots (ttlMs is 60 minutes). */
  cursors: CursorStore;
  /** The per-minute request limit; change `limit` at runtime. */
  minuteLimit: { limit: number; used(): number };
  /** Simulated time: cursor expiry and complexity windows use Date.now() + offsetMs. */
  clock: { offsetMs: number; now(): number; advance(ms: number): void };
  /** Re-seed the data, cursors and complexity budget (faults and the request log are kept). */
  resetData(): void;
}

const SCHEMA = buildSchema(MONDAY_SDL);
attachResolvers(SCHEMA);

const json = (status: number, body: unknown, headers: Record<string, string> = {}): SimResponse => ({ status, json: body, headers });

/** Start the Monday simulator on a loopback port. */
export async function startMondaySimulator(options: MondaySimulatorOptions = {}): Promise<MondaySimulator> {
  const seed = options.seed ?? 1;
  const size = options.size ?? 300;
  const defaultVersion = options.defaultApiVersion ?? '2026-10';
  const clock = {
    offsetMs: 0,
    now(): number {
      return Date.now() + clock.offsetMs;
    },
    advance(ms: number): void {
      clock.offsetMs += ms;
    },
  };
  const now = (): number => clock.now();
  let state = seedState({ seed, size });
  let cursors = new CursorStore(now);
  const complexity = new ComplexityBudget(options.complexity ?? {}, now);
  // Monday personal tokens are JWTs; an opaque token of the same look is enough here. The token
  // and the OAuth app derive from the seed, so the sandbox's sample credentials survive restarts.
  const derived = (label: string, bytes: number): Buffer => createHash('sha256').update(`monday-sim:${label}:${String(seed)}`).digest().subarray(0, bytes);
  const apiKey = `eyJhbGciOiJIUzI1NiJ9.sim-${String(seed)}.${derived('api-key', 18).toString('base64url')}`;
  const tokens = new Set<string>([apiKey]);
  const oauth = { clientId: `sim_client_${derived('client-id', 6).toString('hex')}`, clientSecret: derived('client-secret', 16).toString('hex'), deny: false, scope: 'me:read boards:read boards:write users:read teams:read tags:read updates:read updates:write workspaces:read' };
  const meId = (): string => (state.users[0] as { id: string }).id;

  const accountId = (): number => Number(state.account.id);

  const rateHeaders = (): Record<string, string> => ({
    // Monday: "Every response includes RateLimit-Policy and RateLimit headers" (rate-limits#rate-limit-headers).
    // The values use the IETF RateLimit draft syntax those header names come from.
    'RateLimit-Policy': `"complexity";q=${String(complexity.budget)};w=${String(complexity.windowSeconds)}`,
    RateLimit: `"complexity";r=${String(complexity.remaining())};t=${String(complexity.resetInSeconds())}`,
  });

  const versionOf = (req: SimRequest): string => {
    const h = req.headers['api-version'];
    const v = Array.isArray(h) ? h[0] : h;
    const asked = typeof v === 'string' ? v.trim() : '';
    return SERVED_VERSIONS[asked] !== undefined ? asked : defaultVersion;
  };

  // Minute limit: a sliding 60 s window of request times (docs/rate-limits).
  const minuteLimit = {
    limit: options.requestsPerMinute ?? 5000,
    times: [] as number[],
    used(): number {
      const cut = now() - 60_000;
      while (minuteLimit.times.length > 0 && (minuteLimit.times[0] as number) <= cut) minuteLimit.times.shift();
      return minuteLimit.times.length;
    },
  };

  function minuteLimitExceeded(): SimResponse {
    const oldest = minuteLimit.times[0] ?? now();
    const retry = Math.max(1, Math.ceil((oldest + 60_000 - now()) / 1000));
    // docs/rate-limits "Minute limit": HTTP 429, code RATE_LIMIT_EXCEEDED, retry_in_seconds, Retry-After.
    const entry: ErrorEntry = { message: 'Rate limit exceeded for the account, please retry after some time', extensions: { code: 'RATE_LIMIT_EXCEEDED', status_code: 429, retry_in_seconds: retry } };
    return json(429, envelope({}, [entry]), { ...rateHeaders(), 'Retry-After': String(retry) });
  }

  const envelope = (body: Record<string, unknown>, errors: ErrorEntry[]): Record<string, unknown> => {
    const out: Record<string, unknown> = { ...body };
    if (errors.length > 0) out['errors'] = errors;
    out['extensions'] = { request_id: randomUUID() };
    out['account_id'] = accountId();
    return out;
  };

  function unauthenticated(): SimResponse {
    // Invalid or missing token: HTTP 401 (error-handling, "Unauthorized: HTTP status code 401").
    // Since 2025-01 (unified error format) the message comes as an `errors` object.
    return json(401, { errors: [{ message: 'Not Authenticated', extensions: { code: 'UNAUTHENTICATED', status_code: 401 } }] });
  }

  function badRequest(message: string): SimResponse {
    // "Bad Request — HTTP status code: 400 — No query string was present" (error codes page).
    return json(400, { errors: [{ message, extensions: { code: 'BAD_REQUEST', status_code: 400 } }], account_id: accountId() });
  }

  function complexityExhausted(): SimResponse {
    const retry = complexity.resetInSeconds();
    const status = options.complexityHttpStatus ?? 200;
    const headers = { ...rateHeaders(), 'Retry-After': String(retry) };
    // Every served version has the 2025-07+ shape: code and retry_in_seconds only (changelog
    // "Breaking change: Updated complexity budget exhausted error").
    const extensions: Record<string, unknown> = { code: 'COMPLEXITY_BUDGET_EXHAUSTED', retry_in_seconds: retry };
    return json(status, envelope({}, [{ message: 'Complexity budget exhausted', extensions }]), headers);
  }

  async function graphql(req: SimRequest): Promise<SimResponse> {
    const version = versionOf(req);
    const auth = req.headers['authorization'];
    // Monday takes the raw token (authentication docs: `Authorization: <token>`) and also
    // tolerates a "Bearer " prefix.
    const token = typeof auth === 'string' ? auth.replace(/^Bearer\s+/i, '').trim() : '';
    if (!tokens.has(token)) return unauthenticated();
    if (minuteLimit.used() >= minuteLimit.limit) return minuteLimitExceeded();
    minuteLimit.times.push(now());

    const body = parseJson(req.rawBody) as { query?: unknown; variables?: unknown; operationName?: unknown } | undefined;
    if (body === undefined || body === null || typeof body !== 'object' || typeof body.query !== 'string' || body.query.trim() === '') {
      return badRequest('No query string was present');
    }
    let variables: Record<string, unknown> = {};
    if (typeof body.variables === 'string' && body.variables.trim() !== '') {
      const parsed = parseJson(body.variables);
      if (parsed === undefined || typeof parsed !== 'object' || parsed === null) return badRequest('Variables are invalid JSON');
      variables = parsed as Record<string, unknown>;
    } else if (body.variables !== null && body.variables !== undefined && typeof body.variables === 'object' && !Array.isArray(body.variables)) {
      variables = body.variables as Record<string, unknown>;
    }
    const operationName = typeof body.operationName === 'string' ? body.operationName : undefined;

    // Parse and validation errors: 200 with `errors` (error codes page: "Parse error on... HTTP
    // status code: 200").
    let doc: DocumentNode;
    try {
      doc = parse(body.query);
    } catch (e) {
      const entry = e instanceof GraphQLError ? parseErrorEntry(e) : { message: String(e) };
      return json(200, envelope({}, [entry]), rateHeaders());
    }
    const invalid = validate(SCHEMA, doc);
    if (invalid.length > 0) return json(200, envelope({}, invalid.map((e) => validationErrorEntry(e, doc))), rateHeaders());
    const op = getOperationAST(doc, operationName);
    if (op === null || op === undefined) {
      return json(200, envelope({}, [{ message: operationName ? `Operation "${operationName}" not found` : 'An operation name is required', extensions: { code: 'operationNotFound' } }]), rateHeaders());
    }

    const cost = queryCost(doc, op, variables, {
      users: state.users.length,
      teams: state.teams.length,
      tags: state.tags.length,
      columns: 10,
      groups: 3,
    });
    if (cost > complexity.maxQuery) {
      // graphql-ruby's max_complexity wording; Monday caps one query at 5,000,000 points.
      return json(200, envelope({}, [{ message: `Query has complexity of ${String(cost)}, which exceeds max complexity of ${String(complexity.maxQuery)}`, extensions: { code: 'maxComplexityExceeded', complexity: cost, max_complexity: complexity.maxQuery } }]), rateHeaders());
    }
    const charged = complexity.charge(cost);
    if (charged === null) return complexityExhausted();

    const ctx: ResolverContext = {
      state,
      cursors,
      now,
      meId: meId(),
      version,
      complexity: { before: charged.before, after: charged.after, query: cost, reset_in_x_seconds: complexity.resetInSeconds() },
    };
    const result = await execute({ schema: SCHEMA, document: doc, variableValues: variables, contextValue: ctx, ...(operationName ? { operationName } : {}) });
    const errors = (result.errors ?? []).map((e): ErrorEntry => {
      const orig = e.originalError;
      const base = { message: e.message, ...(e.locations ? { locations: [...e.locations] } : {}), ...(e.path ? { path: [...e.path] } : {}) };
      if (orig instanceof MondayApiError) return { ...base, extensions: { code: orig.code, status_code: orig.statusCode, error_data: orig.errorData } };
      if (e.path === undefined) return variableErrorEntry(e);
      // A resolver bug: Monday answers a generic internal error; keep the detail for debugging.
      return { ...base, message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR', status_code: 500, error_data: { detail: e.message } } };
    });
    const out = result.data === undefined ? {} : { data: result.data };
    return json(200, envelope(out, errors), rateHeaders());
  }

  // OAuth (apps/docs/oauth): the generic authorization-code server; monday's access tokens do not
  // expire (valid until the app is uninstalled): no expires_in, no refresh_token.
  const oauthRoutes = oauthServer({ authorize_path: '/oauth2/authorize', token_path: '/oauth2/token', default_scope: oauth.scope, token_prefix: 'eyJhbGciOiJIUzI1NiJ9.oauth.' }, oauth, tokens, undefined, now);

  const sim = await startSimulator(
    (req) => {
      if (req.path === '/v2' || req.path === '/v2/') {
        if (req.method !== 'POST') return json(405, { error_message: 'Only POST is supported', status_code: 405 });
        return graphql(req);
      }
      return oauthRoutes(req) ?? json(404, { error_message: 'Not Found', status_code: 404 });
    },
    { ...(options.port !== undefined ? { port: options.port } : {}), ...(options.host !== undefined ? { host: options.host } : {}) },
  );

  return {
    ...sim,
    apiKey,
    oauth,
    tokens,
    get state() {
      return state;
    },
    complexity,
    minuteLimit,
    get cursors() {
      return cursors;
    },
    clock,
    resetData() {
      state = seedState({ seed, size });
      cursors = new CursorStore(now);
      complexity.reset();
      minuteLimit.times.length = 0;
    },
  };
}
