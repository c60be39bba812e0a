/**
 * client_credentials auth variants (RFC 6749 §4.4) in the interpreter: the token request carries
 * the grant type, the app's id and secret (HTTP Basic or in the form), the scope and the variant's
 * other form fields, at a token URL naming a credential field; the token is kept in memory,
 * reused, renewed before its expires_in runs out (an injected clock) and once after a 401;
 * concurrent calls share one request; a refusal is upstream_credentials_rejected without the
 * secret. The loader refuses a client secret read from a field that is not secret. The upstream
 * is a fetch written here.
 */
import { describe, expect, it } from 'vitest';
import { ConnectorRuntime } from '../../src/engine/index.ts';
import { loadManifestText, ManifestError } from '../../src/manifest/index.ts';
import { failure } from '../helpers/errors.ts';

const manifestText = (variant: string): string => `
manifest_version: 1
type: grantdemo
title: Grant demo
kind: other
base_url: { default: https://api.example.com/v2 }
auth:
${variant}
entities:
  items:
    primary_key: id
    record: { type: object, properties: { id: { type: integer } } }
    actions:
      list:
        request: { method: GET, path: /items }
        response: { records: "{{body.items}}" }
`;

const BASIC = `
  - name: server_to_server
    type: client_credentials
    fields:
      account_id: { type: string, pattern: "[A-Za-z0-9_-]+" }
      client_id: { type: string }
      client_secret: { type: string, secret: true }
    token_url: https://auth.example.com/oauth/token
    grant_type: account_credentials
    token_request_auth: client_secret_basic
    token_params: { account_id: "{{credentials.account_id}}" }`;

const TENANT = `
  - name: app
    type: client_credentials
    fields:
      tenant: { type: string, pattern: "[A-Za-z0-9.-]+" }
      client_id: { type: string }
      client_secret: { type: string, secret: true }
    token_url: https://login.example.com/{{credentials.tenant}}/oauth2/v2.0/token
    scopes: [https://api.example.com/.default]`;

const SECRET = 's3cr3t-value';

/** A token endpoint issuing tokens valid `ttl` seconds, and an API accepting only issued tokens. */
function upstream(ttl = 3600) {
  const log: { url: string; authorization: string; form: Record<string, string> }[] = [];
  const valid = new Set<string>();
  let n = 0;
  let refuse = false;
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    const authorization = new Headers(init?.headers).get('authorization') ?? '';
    const form = Object.fromEntries(new URLSearchParams(typeof init?.body === 'string' ? init.body : ''));
    log.push({ url: `${url.origin}${url.pathname}`, authorization, form });
    if (url.pathname.endsWith('/token')) {
      if (refuse) return Response.json({ reason: 'Invalid client_id or client_secret', error: 'invalid_client' }, { status: 401 });
      const token = `at_${++n}`;
      valid.add(token);
      return Response.json({ access_token: token, token_type: 'bearer', expires_in: ttl, scope: 'meeting:read' });
    }
    if (!valid.has(authorization.replace(/^Bearer /, ''))) return Response.json({ code: 124, message: 'Invalid access token.' }, { status: 401 });
    return Response.json({ items: [{ id: 1 }] });
  };
  return { fetch, log, valid, tokens: () => log.filter((l) => l.url.endsWith('/token')), refuse: () => (refuse = true) };
}

const runtime = (variant: string, up: ReturnType<typeof upstream>, clock: { now: number }, creds: Record<string, unknown>) =>
  new ConnectorRuntime(loadManifestText(manifestText(variant), 'grantdemo.yaml'), creds, {
    fetch: up.fetch as never,
    now: () => clock.now,
    retry: { baseDelayMs: 1, maxAttempts: 2 },
  });

const zoomish = { account_id: 'acct_1', client_id: 'cid', client_secret: SECRET };

describe('client_credentials: the app gets its own token', () => {
  it('sends the grant with Basic client auth and the token_params, then uses the token as a bearer until it is due', async () => {
    const clock = { now: Date.UTC(2026, 10, 29, 10, 0, 0) };
    const up = upstream();
    const rt = runtime(BASIC, up, clock, zoomish);
    await rt.execute('items', 'list', {});
    await rt.execute('items', 'list', {});
    expect(up.log.map((l) => l.url)).toEqual(['https://auth.example.com/oauth/token', 'https://api.example.com/v2/items', 'https://api.example.com/v2/items']);
    expect(up.log[0]!.authorization).toBe(`Basic ${Buffer.from(`cid:${SECRET}`).toString('base64')}`);
    expect(up.log[0]!.form).toEqual({ grant_type: 'account_credentials', account_id: 'acct_1' });
    expect(up.log[1]!.authorization).toBe('Bearer at_1');
    expect(up.log[2]!.authorization).toBe('Bearer at_1');
    clock.now += (3600 - 61) * 1000; // 61 s before expiry: still used
    await rt.execute('items', 'list', {});
    expect(up.tokens()).toHaveLength(1);
    clock.now += 2000; // within renew_before_seconds (60): a new token first
    await rt.execute('items', 'list', {});
    expect(up.tokens()).toHaveLength(2);
    expect(up.log.at(-1)!.authorization).toBe('Bearer at_2');
  });

  it('posts the client in the form with the scope, at the tenant named by a credential; a 401 gets one new token', async () => {
    const clock = { now: Date.UTC(2026, 10, 29, 10, 0, 0) };
    const up = upstream();
    const rt = runtime(TENANT, up, clock, { tenant: 'contoso-tenant', client_id: 'app-id', client_secret: SECRET });
    await rt.execute('items', 'list', {});
    expect(up.log[0]!.url).toBe('https://login.example.com/contoso-tenant/oauth2/v2.0/token');
    expect(up.log[0]!.authorization).toBe('');
    expect(up.log[0]!.form).toEqual({
      grant_type: 'client_credentials',
      scope: 'https://api.example.com/.default',
      client_id: 'app-id',
      client_secret: SECRET,
    });
    up.valid.clear(); // revoked upstream
    expect((await rt.execute('items', 'list', {})).data).toEqual([{ id: 1 }]);
    expect(up.tokens()).toHaveLength(2);
    expect(up.log.at(-1)!.authorization).toBe('Bearer at_2');
  });

  it('concurrent calls share one token request; a tenant that is no URL segment is refused before anything is sent', async () => {
    const clock = { now: Date.now() };
    const up = upstream();
    const rt = runtime(BASIC, up, clock, zoomish);
    await Promise.all([1, 2, 3].map(() => rt.execute('items', 'list', {})));
    expect(up.tokens()).toHaveLength(1);
    const up2 = upstream();
    // The pattern allows dots; a URL variable never may (one host label or path segment, whatever the pattern says).
    const e = await failure(runtime(TENANT, up2, clock, { tenant: 'a..b', client_id: 'c', client_secret: SECRET }).execute('items', 'list', {}));
    expect(e.code).toBe('invalid_credentials');
    expect(up2.log).toHaveLength(0);
  });

  it('a refused client is upstream_credentials_rejected naming the variant, without the secret; the API is never called', async () => {
    const clock = { now: Date.now() };
    const up = upstream();
    up.refuse();
    const e = await failure(runtime(BASIC, up, clock, zoomish).execute('items', 'list', {}));
    expect(e.code).toBe('upstream_credentials_rejected');
    expect(e.message).toContain('server_to_server');
    expect(JSON.stringify(e.toJSON?.() ?? e)).not.toContain(SECRET);
    expect(up.log.every((l) => l.url.endsWith('/token'))).toBe(true);
  });

  it('the loader refuses a client secret from a field that is not secret, and token_params that the variant sets itself', () => {
    const problems = (variant: string): string[] => {
      try {
        loadManifestText(manifestText(variant), 'grantdemo.yaml');
      } catch (e) {
        if (e instanceof ManifestError) return e.problems.map((p) => `${p.location}: ${p.message}`);
        throw e;
      }
      return [];
    };
    expect(problems(BASIC)).toEqual([]);
    expect(problems(BASIC.replace('client_secret: { type: string, secret: true }', 'client_secret: { type: string }'))).toEqual([
      'auth.0.fields.client_secret: "client_secret" is read by client_secret, so it must be declared secret: true (never logged or returned)',
    ]);
    expect(problems(BASIC.replace('token_params: {', 'token_params: { grant_type: x,'))).toEqual([
      "auth.0.token_params.grant_type: grant_type is set by the variant's own keys; remove it",
    ]);
  });
});
