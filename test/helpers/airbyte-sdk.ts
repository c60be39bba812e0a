/**
 * An HTTP replay of what Airbyte's agent SDK (Python, hosted mode; airbytehq/airbyte-agent-sdk,
 * `cloud_utils/client.py` and `executor/hosted_executor.py`, May 2026) sends and reads — the same
 * methods, paths, query strings, headers and bodies, and the same parsing of answers and errors —
 * so tests can hold the service to the SDK without a Python interpreter.
 *
 * What it mirrors:
 * - every request carries `X-ADP-Agent-SDK: airbyte-agent-sdk`, and `X-Organization-Id` when an
 *   organization is configured; JSON bodies as httpx's `json=` sends them; httpx's default
 *   `Accept: *\/*` and a python-httpx user agent;
 * - the token is read from `access_token` only and reused for 15 minutes (minus 60 s);
 * - lookup requires `data` to hold exactly one connector and returns `data[0].id`;
 * - execute sends `{entity, action, params}` (params possibly null) and reads `result` (required)
 *   and `connector_metadata` (optional);
 * - errors: 401/403 → authentication, 429 → rate limit with an integer Retry-After, 400/422 →
 *   validation, else HTTP status; the text from `errors[].userPresentableMessage | message | error`
 *   joined with ", ", else a top-level `message` or `error`, else the raw body.
 */

export const SDK_HEADER = 'X-ADP-Agent-SDK';
export const SDK_HEADER_VALUE = 'airbyte-agent-sdk';

export type SdkErrorKind = 'authentication' | 'rate_limit' | 'validation' | 'http' | 'connector_not_found' | 'connector_ambiguity' | 'value';

export class SdkError extends Error {
  constructor(
    readonly kind: SdkErrorKind,
    message: string,
    readonly status?: number,
    readonly retryAfter?: number | null,
  ) {
    super(message);
  }
}

/** One request as sent on the wire (for tests that check the exact shape). */
export interface SentRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** The SDK's `_raise_with_body`: the error text it builds from a failed response. */
export function sdkErrorDetail(text: string): string {
  let detail: string | undefined;
  try {
    const data: unknown = JSON.parse(text);
    if (data !== null && typeof data === 'object' && !Array.isArray(data)) {
      const d = data as Record<string, unknown>;
      const errors = d['errors'];
      if (Array.isArray(errors) && errors.length > 0) {
        detail = errors
          .map((e) => {
            if (e !== null && typeof e === 'object') {
              const o = e as Record<string, unknown>;
              return String(o['userPresentableMessage'] || o['message'] || o['error'] || JSON.stringify(o));
            }
            return String(e);
          })
          .join(', ');
      } else {
        const m = d['message'] || d['error'];
        detail = m ? String(m) : undefined;
      }
    }
  } catch {
    detail = undefined;
  }
  return detail || text;
}

function raiseWithBody(method: string, url: string, status: number, headers: Headers, text: string): void {
  if (status >= 200 && status < 300) return;
  const message = `HTTP ${status} error for ${method} ${url}: ${sdkErrorDetail(text)}`;
  if (status === 401 || status === 403) throw new SdkError('authentication', message, status);
  if (status === 429) {
    const h = headers.get('retry-after');
    const n = h !== null && /^-?\d+$/.test(h.trim()) ? Number(h.trim()) : null;
    throw new SdkError('rate_limit', message, status, n);
  }
  if (status === 400 || status === 422) throw new SdkError('validation', message, status);
  throw new SdkError('http', message, status);
}

export interface SdkClientOptions {
  /** SDK_DEV_ADP_API_HOST (trailing slashes removed, as the SDK does). */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  organizationId?: string;
  /** Called with every request before it is sent. */
  onRequest?: (r: SentRequest) => void;
}

/** Python's urlencode of a params dict (httpx), spaces as %20. */
function query(params: Record<string, string>): string {
  return Object.entries(params)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
}

/** The SDK's AirbyteCloudClient, replayed over fetch. */
export class AirbyteSdkClient {
  private readonly base: string;
  private cachedToken: string | undefined;
  private tokenExpiresAt = 0;

  constructor(private readonly o: SdkClientOptions) {
    this.base = o.baseUrl.replace(/\/+$/, '');
  }

  private buildHeaders(token?: string): Record<string, string> {
    const h: Record<string, string> = { [SDK_HEADER]: SDK_HEADER_VALUE, accept: '*/*', 'user-agent': 'python-httpx/0.28.1' };
    if (token !== undefined) h['Authorization'] = `Bearer ${token}`;
    if (this.o.organizationId) h['X-Organization-Id'] = this.o.organizationId;
    return h;
  }

  /** Send one request; answers the parsed JSON body (2xx) or throws the SDK's error. */
  async send(
    method: string,
    path: string,
    o: { token?: string; json?: unknown; params?: Record<string, string> } = {},
  ): Promise<{ status: number; body: unknown; text: string; headers: Headers }> {
    const url = `${this.base}${path}${o.params !== undefined ? `?${query(o.params)}` : ''}`;
    const headers = this.buildHeaders(o.token);
    let body: string | undefined;
    if (o.json !== undefined) {
      // httpx's json= (0.28: compact separators, UTF-8).
      body = JSON.stringify(o.json);
      headers['Content-Type'] = 'application/json';
    }
    this.o.onRequest?.({ method, url, headers, ...(body !== undefined ? { body } : {}) });
    const res = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    raiseWithBody(method, url, res.status, res.headers, text);
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text), text, headers: res.headers };
  }

  /** Forget the cached token (as a new client would). */
  resetToken(): void {
    this.cachedToken = undefined;
    this.tokenExpiresAt = 0;
  }

  async getBearerToken(): Promise<string> {
    if (this.cachedToken !== undefined && Date.now() < this.tokenExpiresAt) return this.cachedToken;
    const r = await this.send('POST', '/api/v1/account/applications/token', { json: { client_id: this.o.clientId, client_secret: this.o.clientSecret } });
    const token = (r.body as Record<string, unknown>)['access_token'];
    if (typeof token !== 'string') throw new SdkError('http', 'KeyError: access_token');
    this.cachedToken = token;
    this.tokenExpiresAt = Date.now() + (15 * 60 - 60) * 1000;
    return token;
  }

  async getConnectorId(workspaceName: string, definitionId: string): Promise<string> {
    const token = await this.getBearerToken();
    const r = await this.send('GET', '/api/v1/integrations/connectors', { token, params: { workspace_name: workspaceName, definition_id: definitionId } });
    const connectors = (r.body as { data: { id: string }[] }).data;
    if (connectors.length === 0)
      throw new SdkError('connector_not_found', `No connector found for workspace_name '${workspaceName}' and connector definition '${definitionId}'.`);
    if (connectors.length > 1) throw new SdkError('connector_ambiguity', `Expected exactly 1, found ${connectors.length}.`);
    return (connectors[0] as { id: string }).id;
  }

  /** The create call of older SDK versions (still in Airbyte's docs). */
  async createConnector(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const token = await this.getBearerToken();
    return (await this.send('POST', '/api/v1/integrations/connectors', { token, json: body })).body as Record<string, unknown>;
  }

  /** execute_connector + HostedExecutor._parse_execution_result. */
  async execute(
    connectorId: string,
    entity: string,
    action: string,
    params: Record<string, unknown> | null,
  ): Promise<{ data: unknown; meta: unknown; raw: Record<string, unknown> }> {
    const token = await this.getBearerToken();
    const r = await this.send('POST', `/api/v1/integrations/connectors/${connectorId}/execute`, { token, json: { entity, action, params } });
    const raw = r.body as Record<string, unknown>;
    if (!('result' in raw)) throw new SdkError('http', "KeyError: 'result'");
    return { data: raw['result'], meta: raw['connector_metadata'] ?? null, raw };
  }

  async listWorkspaceConnectors(workspaceName: string): Promise<Record<string, unknown>[]> {
    const token = await this.getBearerToken();
    return (
      (await this.send('GET', '/api/v1/integrations/connectors', { token, params: { workspace_name: workspaceName } })).body as {
        data: Record<string, unknown>[];
      }
    ).data;
  }

  async deleteConnector(connectorId: string): Promise<void> {
    const token = await this.getBearerToken();
    await this.send('DELETE', `/api/v1/integrations/connectors/${connectorId}`, { token });
  }

  async resolveWorkspaceId(workspaceName: string): Promise<string> {
    const token = await this.getBearerToken();
    const r = await this.send('GET', '/api/v1/workspaces', { token, params: { name_contains: workspaceName } });
    const matches = (r.body as { data: { id: string; name: string }[] }).data.filter((w) => w.name === workspaceName);
    if (matches.length === 0) throw new SdkError('value', `No workspace found with name '${workspaceName}'`);
    if (matches.length > 1) throw new SdkError('value', `Multiple workspaces found with name '${workspaceName}'`);
    return String((matches[0] as { id: string }).id);
  }
}
