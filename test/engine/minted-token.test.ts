/**
 * minted_bearer auth variants in the interpreter: the JWT is signed with the credential's RSA key
 * (a throwaway key generated here), the token is minted once and cached in memory, minted again
 * shortly before it expires (an injected clock) and once after a 401, concurrent calls share one
 * mint, and a bad key fails before anything is sent. The upstream is a fetch written here.
 */
import { generateKeyPairSync, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConnectorRuntime } from '../../src/engine/index.ts';
import { loadManifestText } from '../../src/manifest/index.ts';
import { failure } from '../helpers/errors.ts';

const MANIFEST = `
manifest_version: 1
type: mintdemo
title: Mint demo
kind: other
base_url: { default: https://api.example.com }
auth:
  - name: app
    type: minted_bearer
    fields:
      app_id: { type: string, pattern: "[0-9]+" }
      installation_id: { type: string, pattern: "[0-9]+" }
      private_key: { type: string, secret: true, multiline: true }
    jwt:
      private_key: "{{credentials.private_key}}"
      claims: { iss: "{{credentials.app_id}}" }
    mint:
      request: { method: POST, path: "/app/installations/{{credentials.installation_id}}/access_tokens" }
      token: "{{body.token}}"
      expires_at: "{{body.expires_at}}"
      renew_before_seconds: 60
entities:
  items:
    primary_key: id
    record: { type: object, properties: { id: { type: integer } } }
    actions:
      list:
        request: { method: GET, path: /items }
        response: { records: "{{body.items}}" }
`;
const manifest = loadManifestText(MANIFEST, 'mintdemo.yaml');
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const credentials = { app_id: '42', installation_id: '7', private_key: PEM };

/** An upstream that mints tokens valid `ttlMs` on the shared clock and accepts only the newest unless told otherwise. */
function upstream(clock: { now: number }, ttlMs = 3_600_000) {
  const log: { method: string; path: string; authorization: string }[] = [];
  const valid = new Set<string>();
  let n = 0;
  let refuseJwt = false;
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    const authorization = new Headers(init?.headers).get('authorization') ?? '';
    log.push({ method: init?.method ?? 'GET', path: url.pathname, authorization });
    if (url.pathname === '/app/installations/7/access_tokens') {
      const [h, p, s] = authorization.replace(/^Bearer /, '').split('.') as [string, string, string];
      const ok = verify('sha256', Buffer.from(`${h}.${p}`), publicKey, Buffer.from(s, 'base64url'));
      if (!ok || refuseJwt) return Response.json({ message: 'A JSON web token could not be decoded' }, { status: 401 });
      const token = `tok_${++n}`;
      valid.add(token);
      return Response.json({ token, expires_at: new Date(clock.now + ttlMs).toISOString() }, { status: 201 });
    }
    if (!valid.has(authorization.replace(/^Bearer /, ''))) return Response.json({ message: 'Bad credentials' }, { status: 401 });
    return Response.json({ items: [{ id: 1 }] });
  };
  return { fetch, log, valid, refuse: () => (refuseJwt = true), mints: () => log.filter((l) => l.path.endsWith('/access_tokens')) };
}

const runtime = (up: ReturnType<typeof upstream>, clock: { now: number }, creds: Record<string, unknown> = credentials) =>
  new ConnectorRuntime(manifest, creds, { fetch: up.fetch as never, now: () => clock.now, retry: { baseDelayMs: 1, maxAttempts: 2 } });

describe('minted_bearer: minting, caching and renewing the token', () => {
  it('signs an RS256 JWT (iss from the template, iat 60 s back, exp 540 s ahead), mints once and reuses the token', async () => {
    const clock = { now: Date.UTC(2026, 10, 24, 7, 0, 0) };
    const up = upstream(clock);
    const rt = runtime(up, clock);
    await rt.execute('items', 'list', {});
    await rt.execute('items', 'list', {});
    expect(up.log.map((l) => `${l.method} ${l.path}`)).toEqual(['POST /app/installations/7/access_tokens', 'GET /items', 'GET /items']);
    const claims = JSON.parse(Buffer.from(up.log[0]!.authorization.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const t = clock.now / 1000;
    expect(claims).toEqual({ iss: '42', iat: t - 60, exp: t + 540 });
    expect(up.log[1]!.authorization).toBe('Bearer tok_1');
    expect(up.log[2]!.authorization).toBe('Bearer tok_1');
  });

  it('mints again once the token is within renew_before_seconds of its expiry, not before', async () => {
    const clock = { now: Date.UTC(2026, 10, 24, 7, 0, 0) };
    const up = upstream(clock);
    const rt = runtime(up, clock);
    await rt.execute('items', 'list', {});
    clock.now += 3_600_000 - 61_000; // 61 s before expiry: still used
    await rt.execute('items', 'list', {});
    expect(up.mints()).toHaveLength(1);
    clock.now += 2_000; // 59 s before expiry: renewed first
    await rt.execute('items', 'list', {});
    expect(up.mints()).toHaveLength(2);
    expect(up.log.at(-1)!.authorization).toBe('Bearer tok_2');
  });

  it('after a 401 with the cached token, mints once more and repeats the call; a second 401 is the error', async () => {
    const clock = { now: Date.UTC(2026, 10, 24, 7, 0, 0) };
    const up = upstream(clock);
    const rt = runtime(up, clock);
    await rt.execute('items', 'list', {});
    up.valid.clear(); // revoked upstream
    expect((await rt.execute('items', 'list', {})).data).toEqual([{ id: 1 }]);
    expect(up.mints()).toHaveLength(2);
    expect(up.log.slice(-3).map((l) => l.authorization)).toEqual(['Bearer tok_1', expect.stringMatching(/^Bearer ey/), 'Bearer tok_2']);
    // Every minted token refused: one re-mint, then upstream_credentials_rejected.
    const always = upstream(clock);
    const rt2 = runtime(always, clock);
    const orig = always.valid.add.bind(always.valid);
    always.valid.add = (v: string) => (orig(`never-${v}`), always.valid);
    const e = await failure(rt2.execute('items', 'list', {}));
    expect(e.code).toBe('upstream_credentials_rejected');
    expect(always.mints()).toHaveLength(2);
  });

  it('reads the key as a textarea or a JSON string may give it: CRLF line breaks, padding, escaped \\n', async () => {
    for (const key of [PEM.replace(/\n/g, '\r\n'), `  ${PEM}\n\n`, PEM.replace(/\n/g, '\\n')]) {
      const clock = { now: Date.now() };
      const up = upstream(clock);
      expect((await runtime(up, clock, { ...credentials, private_key: key }).execute('items', 'list', {})).data).toEqual([{ id: 1 }]);
    }
  });

  it('concurrent calls share one mint', async () => {
    const clock = { now: Date.UTC(2026, 10, 24, 7, 0, 0) };
    const up = upstream(clock);
    const rt = runtime(up, clock);
    await Promise.all([1, 2, 3, 4].map(() => rt.execute('items', 'list', {})));
    expect(up.mints()).toHaveLength(1);
  });

  it('a refused JWT is upstream_credentials_rejected from the mint; the token is never sent', async () => {
    const clock = { now: Date.UTC(2026, 10, 24, 7, 0, 0) };
    const up = upstream(clock);
    up.refuse();
    const e = await failure(runtime(up, clock).execute('items', 'list', {}));
    expect(e.code).toBe('upstream_credentials_rejected');
    expect(e.details).toMatchObject({ stage: 'mint', upstream_status: 401, auth_variant: 'app' });
    expect(up.log.map((l) => l.path)).toEqual(['/app/installations/7/access_tokens']);
  });

  it('a key that is not a PEM, or not RSA, is invalid_credentials before anything is sent', async () => {
    const clock = { now: Date.now() };
    const up = upstream(clock);
    const e = await failure(
      runtime(up, clock, { ...credentials, private_key: '-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----' }).execute('items', 'list', {}),
    );
    expect(e.code).toBe('invalid_credentials');
    expect(e.errors).toEqual([{ path: '/private_key', message: 'is not a PEM private key' }]);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const e2 = await failure(runtime(up, clock, { ...credentials, private_key: ec }).execute('items', 'list', {}));
    expect(e2.code).toBe('invalid_credentials');
    expect(e2.message).toContain('RSA');
    expect(up.log).toHaveLength(0);
  });

  it('an upstream that echoes the minted token in an error loses it: the error says [redacted]', async () => {
    const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      if (String(input).endsWith('/access_tokens')) return Response.json({ token: 'tok_echoed', expires_at: '2099-01-01T00:00:00Z' }, { status: 201 });
      const authorization = new Headers(init?.headers).get('authorization');
      return Response.json({ message: `bad request with ${String(authorization)}` }, { status: 400 });
    };
    const e = await failure(new ConnectorRuntime(manifest, credentials, { fetch: fetch as never }).execute('items', 'list', {}));
    expect(e.code).toBe('upstream_rejected');
    expect(JSON.stringify(e.details)).toContain('Bearer [redacted]');
    expect(JSON.stringify({ m: e.message, d: e.details, e: e.errors })).not.toContain('tok_echoed');
  });

  it('an answer without a token is upstream_protocol_error that does not quote the body', async () => {
    const fetch = async (): Promise<Response> => Response.json({ tokne: 'leaked_value' }, { status: 201 });
    const e = await failure(new ConnectorRuntime(manifest, credentials, { fetch: fetch as never }).execute('items', 'list', {}));
    expect(e.code).toBe('upstream_protocol_error');
    expect(e.message).toContain('no token at {{body.token}}');
    expect(JSON.stringify(e)).not.toContain('leaked_value');
  });
});

describe('minted_bearer: an OAuth JWT bearer grant (RFC 7523) on a token host of its own', () => {
  const GRANT = `
manifest_version: 1
type: grantdemo
title: Grant demo
kind: other
base_url: { default: "https://{{credentials.server}}.api.example.net/v2" }
auth:
  - name: jwt
    type: minted_bearer
    fields:
      client_id: { type: string }
      user_id: { type: string }
      server: { type: string, pattern: "[a-z0-9]+" }
      auth_server: { type: string, pattern: "account|account-d" }
      private_key: { type: string, secret: true, multiline: true }
    jwt:
      private_key: "{{credentials.private_key}}"
      claims: { iss: "{{credentials.client_id}}", sub: "{{credentials.user_id}}", aud: "{{credentials.auth_server}}.example.com", scope: signature impersonation }
      lifetime_seconds: 3600
    mint:
      base_url: "https://{{credentials.auth_server}}.example.com"
      request:
        method: POST
        path: /oauth/token
        body_encoding: form
        body: { grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: "{{jwt}}" }
      token: "{{body.access_token}}"
      expires_in: "{{body.expires_in}}"
entities:
  items:
    primary_key: id
    record: { type: object, properties: { id: { type: integer } } }
    actions:
      list:
        request: { method: GET, path: /items }
        response: { records: "{{body.items}}" }
`;
  const grant = loadManifestText(GRANT, 'grantdemo.yaml');
  const creds = { client_id: 'ik-1', user_id: 'u-1', server: 'na3', auth_server: 'account-d', private_key: PEM };

  it('posts the JWT as the form assertion to mint.base_url (no Authorization there), then calls the API with the token', async () => {
    const log: { url: string; authorization: string | null; body: string }[] = [];
    const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      log.push({ url: String(input), authorization: new Headers(init?.headers).get('authorization'), body: String(init?.body ?? '') });
      if (String(input).endsWith('/oauth/token')) return Response.json({ access_token: 'at_1', token_type: 'Bearer', expires_in: 3600 });
      return Response.json({ items: [{ id: 1 }] });
    };
    const rt = new ConnectorRuntime(grant, creds, { fetch: fetch as never, limiter: null });
    expect((await rt.execute('items', 'list', {})).data).toEqual([{ id: 1 }]);
    expect(log.map((l) => l.url)).toEqual(['https://account-d.example.com/oauth/token', 'https://na3.api.example.net/v2/items']);
    expect(log[0]!.authorization).toBeNull();
    const form = new URLSearchParams(log[0]!.body);
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const [h, p, s] = form.get('assertion')!.split('.') as [string, string, string];
    expect(verify('sha256', Buffer.from(`${h}.${p}`), publicKey, Buffer.from(s, 'base64url'))).toBe(true);
    expect(JSON.parse(Buffer.from(p, 'base64url').toString('utf8'))).toMatchObject({
      iss: 'ik-1',
      sub: 'u-1',
      aud: 'account-d.example.com',
      scope: 'signature impersonation',
    });
    expect(log[1]!.authorization).toBe('Bearer at_1');
  });

  it('an explicit base URL (a sandbox) takes the mint too; a token host outside the field pattern matches no variant', async () => {
    const urls: string[] = [];
    const fetch = async (input: string | URL | Request): Promise<Response> => {
      urls.push(String(input));
      return String(input).endsWith('/oauth/token') ? Response.json({ access_token: 'at_2', expires_in: 3600 }) : Response.json({ items: [] });
    };
    await new ConnectorRuntime(grant, creds, { fetch: fetch as never, limiter: null, baseUrl: 'http://127.0.0.1:9' }).execute('items', 'list', {});
    expect(urls).toEqual(['http://127.0.0.1:9/oauth/token', 'http://127.0.0.1:9/items']);
    expect(() => new ConnectorRuntime(grant, { ...creds, auth_server: 'evil.com' }, { fetch: fetch as never, limiter: null })).toThrow(
      /match no credential variant/,
    );
  });

  it('{{jwt}} is only for the mint request', () => {
    expect(() => loadManifestText(GRANT.replace('token: "{{body.access_token}}"', 'token: "{{jwt}}"'), 'grantdemo.yaml')).toThrow(/jwt/);
  });
});
