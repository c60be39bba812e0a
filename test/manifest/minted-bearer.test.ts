/** The loader's checks of minted_bearer auth variants and of the multiline field flag. */
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { loadManifestText } from '../../src/manifest/index.ts';

const BASE = {
  manifest_version: 1,
  type: 'mintdemo',
  title: 'Mint demo',
  kind: 'other',
  base_url: { default: 'https://api.example.com' },
  auth: [
    {
      name: 'app',
      type: 'minted_bearer',
      fields: {
        app_id: { type: 'string', pattern: '[0-9]+' },
        installation_id: { type: 'string', pattern: '[0-9]+' },
        private_key: { type: 'string', secret: true, multiline: true },
      },
      jwt: { private_key: '{{credentials.private_key}}', claims: { iss: '{{credentials.app_id}}' } },
      mint: {
        request: { method: 'POST', path: '/app/installations/{{credentials.installation_id}}/access_tokens' },
        token: '{{body.token}}',
        expires_at: '{{body.expires_at}}',
      },
    },
  ],
  entities: {
    items: {
      primary_key: 'id',
      record: { type: 'object', properties: { id: { type: 'integer' } } },
      actions: { list: { request: { method: 'GET', path: '/items' }, response: { records: '{{body.items}}' } } },
    },
  },
};

type Variant = Record<string, any>;
const problems = (edit: (v: Variant) => void): string[] => {
  const m = parse(stringify(BASE)) as typeof BASE;
  edit(m.auth[0] as Variant);
  try {
    loadManifestText(stringify(m), 'test.yaml');
    return [];
  } catch (e) {
    return ((e as { errors?: { path: string; message: string }[] }).errors ?? []).map((x) => `${x.path.replace(/^.*#/, '')}: ${x.message}`);
  }
};

describe('manifest loader: minted_bearer', () => {
  it('loads a valid variant with its mint compiled', () => {
    expect(problems(() => undefined)).toEqual([]);
    const m = loadManifestText(stringify(BASE), 'test.yaml');
    expect(m.auth[0]?.mint).toMatchObject({ backdateSeconds: 60, lifetimeSeconds: 540, renewBeforeSeconds: 60 });
  });

  it('the private key must be read from secret fields', () => {
    expect(problems((v) => delete v.fields.private_key.secret)).toEqual([
      'auth.0.fields.private_key: "private_key" is read by jwt.private_key, so it must be declared secret: true (never logged or returned)',
    ]);
  });

  it("iat and exp are the interpreter's", () => {
    expect(problems((v) => (v.jwt.claims.exp = '{{credentials.app_id}}'))).toEqual([
      'auth.0.jwt.claims.exp: exp is set by the interpreter (jwt.backdate_seconds, jwt.lifetime_seconds); remove it',
    ]);
  });

  it('a credential in the mint path needs a pattern and may not be secret', () => {
    expect(problems((v) => delete v.fields.installation_id.pattern)).toEqual([
      'auth.0.mint.request.path: credentials.installation_id is part of the path, so its field needs a pattern (e.g. pattern: "[0-9]+")',
    ]);
    expect(problems((v) => (v.mint.request.path = '/x/{{credentials.private_key}}'))).toEqual([
      'auth.0.mint.request.path: credentials.private_key is secret, and a path is not: use a non-secret field',
    ]);
    expect(problems((v) => (v.mint.request.path = '/x/{{credentials.nope}}'))).toEqual(
      expect.arrayContaining([expect.stringContaining('auth.0.mint.request.path')]),
    );
  });

  it('token templates read the answer; expires_at and expires_in exclude each other', () => {
    expect(problems((v) => (v.mint.token = '{{credentials.app_id}}'))).toEqual([
      expect.stringMatching(/^auth\.0\.mint\.token: unknown variable "credentials\.app_id"/),
    ]);
    expect(problems((v) => (v.mint.expires_in = '{{body.expires_in}}'))).toEqual(['auth.0.mint: give expires_at or expires_in, not both']);
  });

  it('the schema bounds the JWT lifetime and the algorithm', () => {
    expect(problems((v) => (v.jwt.lifetime_seconds = 7200)).join()).toContain('lifetime_seconds');
    expect(problems((v) => (v.jwt.algorithm = 'HS256')).join()).toContain('algorithm');
  });

  it('a multiline field cannot be sent in a header', () => {
    expect(problems((v) => Object.assign(v, { type: 'bearer', token: '{{credentials.private_key}}', jwt: undefined, mint: undefined }))).toEqual([
      'auth.0.token: "private_key" is multiline, and a header value cannot hold line breaks',
    ]);
  });

  it('multiline is only for string fields', () => {
    expect(problems((v) => (v.fields.app_id = { type: 'integer', multiline: true }))).toEqual([
      'auth.0.fields.app_id.multiline: multiline is for string fields; "app_id" is integer',
    ]);
  });
});
