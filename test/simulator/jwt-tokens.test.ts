/**
 * The sidecar's jwt_tokens on a small description of our own: the minting operation verifies the
 * app's JWT (RS256 signature with the public key declared for its iss, in the sidecar or the
 * jwtKeys option, optionally pinned by fingerprint; iat, exp, lifetime) and answers a token the
 * other operations then accept until it expires (an injected clock). Keys are generated here.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signJwtRs256 } from '../../src/auth/minted.ts';
import { Description, parseSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { keyFingerprint } from '../../src/simulator/core/jwt-tokens.ts';

const one = {
  description: 'ok',
  content: { 'application/json': { schema: { type: 'object', properties: { token: { type: 'string' }, id: { type: 'integer' } } } } },
};
const doc = {
  openapi: '3.0.3',
  info: { title: 'Apps', version: '1' },
  paths: {
    '/app/installations/{installation_id}/access_tokens': {
      post: { parameters: [{ name: 'installation_id', in: 'path', required: true, schema: { type: 'integer' } }], responses: { '201': one } },
    },
    '/things': {
      get: {
        responses: {
          '200': {
            description: 'ok',
            content: { 'application/json': { schema: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' } } } } } },
          },
        },
      },
    },
  },
};
const declared = generateKeyPairSync('rsa', { modulusLength: 2048 });
const registered = generateKeyPairSync('rsa', { modulusLength: 2048 });
const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
const clock = { now: Date.UTC(2026, 10, 24, 7, 0, 0) };
const t = (): number => Math.floor(clock.now / 1000);

let sim: OpenApiSimulator;
beforeAll(async () => {
  const pem = declared.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  sim = await startOpenApiSimulator({
    description: new Description(doc as never),
    now: () => clock.now,
    jwtKeys: { '2': registered.publicKey },
    sidecar: parseSidecar(`
error: { body: { message: "{{message}}" } }
auth: { bearer: true, tokens: [static] }
jwt_tokens:
  operation: POST /app/installations/{installation_id}/access_tokens
  public_keys:
    "1": |
${pem
  .trim()
  .split('\n')
  .map((l) => `      ${l}`)
  .join('\n')}
  ttl_seconds: 600
  token_prefix: ghs_
  response: { token: "{{token}}", expires_at: "{{expires_at}}", lifetime: "{{expires_in}}" }
`),
  });
});
afterAll(() => sim.close());

async function call(method: string, path: string, authorization?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(sim.url + path, { method, headers: authorization !== undefined ? { authorization } : {} });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
const jwt = (key = declared.privateKey, claims: Record<string, unknown> = {}) =>
  `Bearer ${signJwtRs256(key, { iss: '1', iat: t() - 60, exp: t() + 540, ...claims })}`;
const mint = (authorization: string) => call('POST', '/app/installations/5/access_tokens', authorization);

describe('the sidecar: jwt_tokens', () => {
  it('mints a token for a valid JWT (sidecar key or jwtKeys), which the other operations accept until it expires', async () => {
    const minted = await mint(jwt());
    expect(minted.status).toBe(201);
    expect(minted.body).toEqual({
      token: expect.stringMatching(/^ghs_/),
      expires_at: new Date(clock.now + 600_000).toISOString().replace('.000Z', 'Z'),
      lifetime: 600,
    });
    const token = minted.body.token as string;
    expect((await call('GET', '/things', `Bearer ${token}`)).status).toBe(200);
    expect((await mint(jwt(registered.privateKey, { iss: 2 }))).status).toBe(201);
    // The JWT itself is no token for the API.
    expect((await call('GET', '/things', jwt())).status).toBe(401);
    clock.now += 600_000;
    expect((await call('GET', '/things', `Bearer ${token}`)).status).toBe(401);
    expect((await call('GET', '/things', 'Bearer static')).status).toBe(200);
  });

  it('refuses a JWT signed by another key, of an unknown issuer, expired, too long-lived, from the future, or not RS256', async () => {
    const refused = async (authorization: string, message: RegExp): Promise<void> => {
      const r = await mint(authorization);
      expect(r.status).toBe(401);
      expect(String(r.body.message)).toMatch(message);
    };
    await refused(jwt(stranger.privateKey), /signature does not verify/);
    await refused(jwt(declared.privateKey, { iss: '3' }), /No app with issuer 3/);
    await refused(jwt(declared.privateKey, { iat: t() - 700, exp: t() - 10 }), /too far in the past/);
    await refused(jwt(declared.privateKey, { exp: t() + 3600 }), /too far in the future/);
    await refused(jwt(declared.privateKey, { iat: t() + 600 }), /in the past/);
    const [, p, s] = jwt().slice(7).split('.');
    await refused(`Bearer ${Buffer.from('{"alg":"none"}').toString('base64url')}.${p}.${s}`, /RS256/);
    await refused('Bearer static', /could not be decoded/);
  });

  it('fingerprints pin the keys accepted', async () => {
    const pinned = await startOpenApiSimulator({
      description: new Description(doc as never),
      jwtKeys: { '1': declared.publicKey, '2': registered.publicKey },
      sidecar: parseSidecar(`
auth: { bearer: true, tokens: [] }
jwt_tokens: { operation: "POST /app/installations/{installation_id}/access_tokens", fingerprints: ["${keyFingerprint(declared.publicKey)}"] }
`),
    });
    try {
      const post = (authorization: string) =>
        fetch(`${pinned.url}/app/installations/5/access_tokens`, { method: 'POST', headers: { authorization } }).then((r) => r.status);
      const now = Math.floor(Date.now() / 1000);
      expect(await post(`Bearer ${signJwtRs256(declared.privateKey, { iss: '1', iat: now - 60, exp: now + 500 })}`)).toBe(201);
      expect(await post(`Bearer ${signJwtRs256(registered.privateKey, { iss: '2', iat: now - 60, exp: now + 500 })}`)).toBe(401);
    } finally {
      await pinned.close();
    }
  });

  it('the sidecar schema refuses a jwt_tokens without its operation or path', () => {
    expect(() => parseSidecar('jwt_tokens: { ttl_seconds: 5 }')).toThrow(/jwt_tokens must have required property 'operation'/);
  });

  it('path: an OAuth token endpoint outside the description takes the JWT bearer grant (RFC 7523) as its form assertion', async () => {
    const grant = await startOpenApiSimulator({
      description: new Description(doc as never),
      jwtKeys: { 'ik-1': declared.publicKey },
      sidecar: parseSidecar(`
auth: { bearer: true, tokens: [] }
jwt_tokens: { path: /oauth/token, max_lifetime_seconds: 3600, status: 200, response: { access_token: "{{token}}", token_type: Bearer, expires_in: "{{expires_in}}" } }
`),
    });
    try {
      const post = (form: Record<string, string>) =>
        fetch(`${grant.url}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(form),
        });
      const now = Math.floor(Date.now() / 1000);
      const assertion = signJwtRs256(declared.privateKey, { iss: 'ik-1', sub: 'u', iat: now - 60, exp: now + 3600 });
      const res = await post({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { access_token: string; expires_in: number };
      expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
      expect((await fetch(`${grant.url}/things`, { headers: { authorization: `Bearer ${body.access_token}` } })).status).toBe(200);
      expect((await post({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: assertion.slice(0, -4) })).status).toBe(401);
      expect((await post({ grant_type: 'client_credentials', assertion })).status).toBe(400);
    } finally {
      await grant.close();
    }
  });
});
