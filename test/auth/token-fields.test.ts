/**
 * An oauth2 variant's token_fields: credential fields rendered from the token endpoint's own
 * answer, on the code exchange and on every refresh (a company's API host named in the answer).
 */
import { describe, expect, it } from 'vitest';
import type { OAuth2Auth } from '../../generated/manifest.ts';
import { exchangeAuthorizationCode, refreshAccessToken } from '../../src/auth/index.ts';
import { failure } from '../helpers/errors.ts';

const variant: OAuth2Auth = {
  name: 'oauth',
  type: 'oauth2',
  authorize_url: 'https://auth.example.com/oauth/authorize',
  token_url: 'https://auth.example.com/oauth/token',
  refreshes: true,
  expires: true,
  base_url: 'https://{{credentials.company_domain}}.example.com/api',
  fields: {
    access_token: { type: 'string', secret: true },
    refresh_token: { type: 'string', secret: true },
    expires_at: { type: 'integer' },
    company_domain: { type: 'string', pattern: '[a-z0-9][a-z0-9-]*' },
  },
  token_fields: { company_domain: "{{first (split (url_host body.api_domain) '.')}}" },
};
const client = { clientId: 'cid', clientSecret: 'csecret' };

function answering(body: Record<string, unknown>, status = 200) {
  const seen: string[] = [];
  const fetchImpl = async (_url: string | URL, init: RequestInit = {}): Promise<Response> => {
    seen.push(String(init.body));
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  };
  return { seen, fetchImpl };
}

describe('token_fields', () => {
  it('fills the field from the code exchange and from every refresh', async () => {
    const first = answering({ access_token: 'at1', refresh_token: 'rt1', expires_in: 3600, api_domain: 'https://acme.example.com', token_type: 'Bearer' });
    const t = await exchangeAuthorizationCode(variant, client, 'code-1', 'https://app.example.org/cb', first.fetchImpl);
    expect(t).toMatchObject({ access_token: 'at1', refresh_token: 'rt1', company_domain: 'acme' });
    expect(t).not.toHaveProperty('api_domain');

    const moved = answering({ access_token: 'at2', expires_in: 3600, api_domain: 'https://acme-eu.example.com/' });
    const r = await refreshAccessToken(variant, client, 'rt1', moved.fetchImpl);
    expect(r).toMatchObject({ access_token: 'at2', refresh_token: 'rt1', company_domain: 'acme-eu' });
    expect(moved.seen[0]).toContain('grant_type=refresh_token');
  });

  it.each([
    ['absent', {}],
    ['not a URL', { api_domain: 'acme.example.com' }],
    ['an object', { api_domain: { url: 'https://acme.example.com' } }],
  ])('refuses an answer whose field is %s, without quoting the tokens', async (_name, extra) => {
    const f = answering({ access_token: 'at-SECRET', ...extra });
    const e = await failure(exchangeAuthorizationCode(variant, client, 'code-1', 'https://app.example.org/cb', f.fetchImpl));
    expect(e.code).toBe('upstream_protocol_error');
    expect(e.message).toMatch(/gave no company_domain/);
    expect(JSON.stringify(e)).not.toContain('at-SECRET');
  });
});
