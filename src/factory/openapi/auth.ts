/** Security schemes → auth variants (bearer, basic, API key header or query, OAuth 2 authorization code); retry headers. */
import { safeName, shortText } from '../scaffold.ts';
import { isObj, type Obj, type Operation, type PathItem } from './document.ts';
import type { Notes } from './notes.ts';

/** The auth variants, token variants first (what a sandbox or a first exec uses). */
export function scaffoldAuth(doc: Obj, { guess, report }: Notes, operations: Operation[] = []): Obj[] {
  const schemes = isObj(doc['components']) && isObj(doc['components']['securitySchemes']) ? (doc['components']['securitySchemes'] as Record<string, Obj>) : {};
  const auth: Obj[] = [];
  // API keys in the query (an application key and a user token) make one variant that sends them all.
  const queryKeys = Object.entries(schemes).filter(([, s]) => s['type'] === 'apiKey' && s['in'] === 'query' && typeof s['name'] === 'string');
  if (queryKeys.length > 0) {
    const fields = Object.fromEntries(queryKeys.map(([n]) => [safeName(n), { type: 'string', secret: true }]));
    const query = Object.fromEntries(queryKeys.map(([n, s]) => [String(s['name']), `{{credentials.${safeName(n)}}}`]));
    auth.push({ name: safeName(queryKeys.map(([n]) => n).join('_')), type: 'api_key', fields, query });
    if (queryKeys.length > 1) guess(['auth', 0, 'query'], `the query API keys ${queryKeys.map(([n]) => n).join(', ')}: sent together on every request`);
  }
  for (const [schemeName, s] of Object.entries(schemes)) {
    if (queryKeys.some(([n]) => n === schemeName)) continue;
    const name = safeName(schemeName);
    const description = shortText(s['description']);
    const base = { name, title: schemeName, ...(description ? { description } : {}) };
    const scheme = typeof s['scheme'] === 'string' ? s['scheme'].toLowerCase() : '';
    if (s['type'] === 'http' && scheme === 'bearer') {
      auth.push({ ...base, type: 'bearer', fields: { token: { type: 'string', secret: true, description: 'Bearer token' } }, token: '{{credentials.token}}' });
    } else if (s['type'] === 'http' && scheme === 'basic') {
      auth.push({
        ...base,
        type: 'basic',
        fields: {
          username: { type: 'string', description: 'The user name (an email address for many APIs)' },
          password: { type: 'string', secret: true, description: 'The password or API token' },
        },
        username: '{{credentials.username}}',
        password: '{{credentials.password}}',
      });
      guess(['auth', auth.length - 1, 'fields'], 'HTTP basic: name the two fields as the vendor does (email and API token, ...)');
    } else if (s['type'] === 'apiKey' && s['in'] === 'header' && typeof s['name'] === 'string' && /^[A-Za-z0-9-]+$/.test(s['name'])) {
      auth.push({ ...base, type: 'api_key', fields: { api_key: { type: 'string', secret: true } }, header: s['name'], value: '{{credentials.api_key}}' });
    } else if (s['type'] === 'oauth2' && isObj(s['flows']) && isObj(s['flows']['authorizationCode'])) {
      const flow = s['flows']['authorizationCode'];
      const listed = Object.keys(isObj(flow['scopes']) ? flow['scopes'] : {});
      const needed = scopesNeeded(doc, operations, schemeName, listed);
      const scopes = needed ?? listed;
      // A refresh URL, or a scope asking for refresh tokens, says tokens expire and refresh.
      const offline = listed.find((sc) => /^offline(_access)?$/i.test(sc));
      const refreshes = typeof flow['refreshUrl'] === 'string' || offline !== undefined;
      auth.push({
        ...base,
        type: 'oauth2',
        fields: {
          access_token: { type: 'string', secret: true },
          ...(refreshes
            ? {
                refresh_token: { type: 'string', secret: true, required: false },
                expires_at: { type: 'integer', required: false, description: 'Unix seconds' },
              }
            : {}),
        },
        authorize_url: String(flow['authorizationUrl']),
        token_url: String(flow['tokenUrl']),
        ...(scopes.length > 0 ? { scopes } : {}),
        token_request_auth: 'client_secret_post',
        refreshes,
        expires: refreshes,
      });
      const i = auth.length - 1;
      if (needed !== undefined)
        guess(['auth', i, 'scopes'], `the scopes the scaffolded operations' security requirements name (${needed.length} of the ${listed.length} listed)`);
      else if (scopes.length > 0)
        guess(
          ['auth', i, 'scopes'],
          'every scope the description lists (no scaffolded operation names the ones it needs): keep only the ones the connector needs',
        );
      guess(['auth', i, 'token_request_auth'], 'how the token endpoint takes the client secret (client_secret_post or client_secret_basic)');
      guess(
        ['auth', i, 'refreshes'],
        typeof flow['refreshUrl'] === 'string'
          ? 'the flow has a refreshUrl: tokens assumed to refresh and expire'
          : refreshes
            ? `the ${String(offline)} scope asks for refresh tokens: tokens assumed to refresh and expire`
            : 'no refreshUrl and no offline_access scope: tokens assumed not to refresh',
      );
    } else {
      report.push(
        `auth scheme ${schemeName} (${String(s['type'])}${scheme ? ` ${scheme}` : ''}${s['in'] ? ` in ${String(s['in'])}` : ''}): not expressible as a manifest auth variant`,
      );
    }
  }
  if (auth.length === 0) {
    auth.push({ name: 'api_key', type: 'bearer', fields: { token: { type: 'string', secret: true } }, token: '{{credentials.token}}' });
    guess(['auth', 0], 'no usable security scheme in the description: a bearer token is assumed');
  }
  return [...auth.filter((a) => a['type'] !== 'oauth2'), ...auth.filter((a) => a['type'] === 'oauth2')];
}

/**
 * The scopes the operations' security requirements (their own, else the description's) name for
 * the scheme, in the order the flow lists them, with the offline scope when it is listed; undefined
 * when none names any.
 */
function scopesNeeded(doc: Obj, operations: Operation[], scheme: string, listed: string[]): string[] | undefined {
  const global = Array.isArray(doc['security']) ? (doc['security'] as Record<string, string[]>[]) : undefined;
  const needed = new Set<string>();
  for (const op of operations) {
    for (const requirement of op.security ?? global ?? []) {
      const named = isObj(requirement) ? requirement[scheme] : undefined;
      if (Array.isArray(named)) for (const sc of named) needed.add(String(sc));
    }
  }
  if (needed.size === 0) return undefined;
  for (const sc of listed) if (/^offline(_access)?$/i.test(sc)) needed.add(sc);
  return [...listed.filter((sc) => needed.has(sc)), ...[...needed].filter((sc) => !listed.includes(sc))];
}

/** Rate-limit and retry headers declared on any response: the manifest's retry settings. */
export function scaffoldRetry(doc: Obj, { guess, report }: Notes): Obj {
  const responseHeaders = new Set<string>();
  for (const item of Object.values(doc['paths'] as Record<string, PathItem>)) {
    for (const op of [item.get, item.post, item.put, item.patch, item.delete]) {
      for (const r of Object.values(op?.responses ?? {})) for (const h of Object.keys(r?.headers ?? {})) responseHeaders.add(h);
    }
  }
  const retryHeaders: Obj[] = [];
  const header = (n: string): string | undefined => [...responseHeaders].find((h) => h.toLowerCase() === n);
  for (const n of ['x-ratelimit-reset', 'x-rate-limit-reset', 'ratelimit-reset']) {
    const h = header(n);
    if (h) retryHeaders.push({ name: h, format: n === 'ratelimit-reset' ? 'seconds' : 'unix_seconds' });
  }
  const retryAfter = header('retry-after');
  if (retryAfter) retryHeaders.push({ name: retryAfter, format: 'seconds' });
  const retry = { max_attempts: 4, retry_after_headers: retryHeaders.length > 0 ? retryHeaders : [{ name: 'Retry-After', format: 'seconds' }] };
  if (retryHeaders.length === 0)
    guess(['retry', 'retry_after_headers'], 'no retry header is declared in the description; Retry-After (seconds) is the HTTP standard');
  else if (retryHeaders.some((h) => h['format'] === 'unix_seconds'))
    guess(['retry', 'retry_after_headers'], 'a reset header may carry Unix seconds or seconds to wait: check which');
  const limitHeader = [...responseHeaders].find((h) => /rate-?limit-limit|ratelimit$/i.test(h));
  report.push(
    `rate limit: requests per window ${limitHeader ? `(the description declares ${limitHeader}, not the window)` : '(not in the description)'}; add rate_limit from the vendor's documentation`,
  );
  return retry;
}
