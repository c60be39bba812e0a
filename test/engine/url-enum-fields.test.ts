/**
 * A credential field with an `enum` as a base URL or OAuth URL variable: a data centre's domain
 * suffix (`com`, `eu`, `com.au`), which may hold dots because the manifest lists every value; a
 * value outside the list is refused before anything is sent, and the loader refuses enum values
 * that are not host labels.
 */
import { describe, expect, it } from 'vitest';
import { oauthUrl } from '../../src/auth/index.ts';
import { ConnectorRuntime } from '../../src/index.ts';
import { loadManifestText } from '../../src/manifest/index.ts';
import { failure } from '../helpers/errors.ts';
import { mutate, problems } from '../helpers/manifest.ts';

type Rec = Record<string, any>;

/** Granola's manifest on a host named by the credentials' data centre. */
const withDataCentre = (values: string[]): string =>
  mutate((m: Rec) => {
    m.base_url = { default: 'https://api.example.{{credentials.dc}}' };
    m.auth[0].fields.dc = { type: 'string', enum: values, description: 'The data centre: com, eu or com.au' };
  });

function recorder() {
  const sent: string[] = [];
  const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
    sent.push(new Request(input, init).url);
    return new Response(JSON.stringify({ notes: [], cursor: null, hasMore: false }), { status: 200, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { sent, fetchImpl };
}

const runtime = (dc: string, fetchImpl: typeof fetch) =>
  new ConnectorRuntime(loadManifestText(withDataCentre(['com', 'eu', 'com.au']), 'test.yaml'), { api_key: 'grn_test', dc } as never, {
    fetch: fetchImpl,
    limiter: null,
  });

describe('a URL variable from a credential field with an enum', () => {
  it('may be any listed value, dots included', async () => {
    for (const dc of ['com.au', 'eu']) {
      const { sent, fetchImpl } = recorder();
      await runtime(dc, fetchImpl).execute('notes' as never, 'list' as never, {} as never);
      expect(sent).toEqual([`https://api.example.${dc}/v1/notes`]);
    }
  });

  it('refuses a value outside the list before anything is sent', async () => {
    for (const dc of ['evil.com', 'com.au.evil', 'jp']) {
      const { sent, fetchImpl } = recorder();
      const e = await failure(Promise.resolve().then(() => runtime(dc, fetchImpl).execute('notes' as never, 'list' as never, {} as never)));
      expect(e.code).toBe('invalid_credentials');
      expect(sent).toEqual([]);
    }
  });

  it('fills OAuth URLs the same way', () => {
    const variant = { name: 'oauth', fields: { dc: { type: 'string' as const, enum: ['com', 'com.au'] as [string, ...string[]] } } };
    expect(oauthUrl(variant, 'https://accounts.example.{{credentials.dc}}/oauth/v2/token', { dc: 'com.au' })).toBe(
      'https://accounts.example.com.au/oauth/v2/token',
    );
    expect(() => oauthUrl(variant, 'https://accounts.example.{{credentials.dc}}/oauth/v2/token', { dc: 'evil.com' })).toThrow(/credentials\.dc/);
    // Without an enum, a dot is still refused.
    expect(() => oauthUrl({ name: 'oauth', fields: { dc: { type: 'string' } } }, 'https://a.example.{{credentials.dc}}/t', { dc: 'com.au' })).toThrow();
  });

  it('the loader refuses enum values that are not host labels', () => {
    expect(problems(withDataCentre(['com', 'evil.com/x'])).join('\n')).toContain(
      'each of its enum values must be host labels joined by dots, not "evil.com/x"',
    );
    expect(problems(withDataCentre(['com', 'com.au']))).toEqual([]);
  });
});
