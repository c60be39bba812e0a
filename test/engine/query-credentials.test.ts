/**
 * An api_key variant whose credentials go in the query (`auth[].query`): an application key and
 * a user token on every request's URL (actions, checks, the proxy), none in a header; the loader's
 * refusals; and the description checks that take such parameters for credentials, not unknowns.
 */
import { describe, expect, it } from 'vitest';
import { ConnectorRuntime } from '../../src/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { loadManifestText, ManifestError } from '../../src/manifest/index.ts';
import { Description } from '../../src/simulator/index.ts';

const manifest = (auth: string): string => `
manifest_version: 1
type: querykey
title: Query key
kind: test
base_url: { default: "https://api.example.test/1" }
auth:
${auth}
check: { request: { method: GET, path: /members/me } }
entities:
  boards:
    primary_key: id
    record: { type: object, required: [id], properties: { id: { type: string } } }
    actions:
      get:
        params: { id: { type: string, required: true } }
        request: { method: GET, path: "/boards/{{params.id}}", query: { fields: name } }
        response: { record: "{{body}}" }
`;

const queryVariant = `
  - name: key_token
    type: api_key
    fields:
      api_key: { type: string, secret: true }
      token: { type: string, secret: true }
    query: { key: "{{credentials.api_key}}", token: "{{credentials.token}}" }
`;

describe('api_key variants with query credentials', () => {
  const m = loadManifestText(manifest(queryVariant), 'querykey.yaml');
  const credentials = { api_key: 'k1', token: 't1' };

  it('puts the key and the token in the query of every request, and no Authorization header', () => {
    const rt = new ConnectorRuntime(m, credentials, { limiter: null });
    const { url, init } = rt.render(m.entities.get('boards')!.actions.get('get')!, { id: 'b 1' });
    expect(url).toBe('https://api.example.test/1/boards/b%201?fields=name&key=k1&token=t1');
    expect(Object.keys(init.headers)).not.toContain('authorization');
    expect(new URL(rt.render(m.check!.action, {}).url).searchParams.get('token')).toBe('t1');
  });

  it('the proxy sends them too, replacing a caller-given token', async () => {
    const seen: string[] = [];
    const fetch: FetchLike = async (input) => {
      seen.push(String(input));
      return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const rt = new ConnectorRuntime(m, credentials, { limiter: null, fetch });
    await rt.proxy({ method: 'GET', path: '/boards/b1', query: { token: 'other', fields: 'all' } });
    expect(seen).toEqual(['https://api.example.test/1/boards/b1?token=t1&fields=all&key=k1']);
  });

  it('the loader refuses a variant with neither header nor query, a header without value, and a query reading a non-secret field', () => {
    const bad = (auth: string): string => {
      try {
        loadManifestText(manifest(auth), 'querykey.yaml');
        return '';
      } catch (e) {
        return (e as ManifestError).message;
      }
    };
    expect(bad(`  - { name: k, type: api_key, fields: { k: { type: string, secret: true } } }`)).not.toBe('');
    expect(bad(`  - { name: k, type: api_key, fields: { k: { type: string, secret: true } }, header: X-Key }`)).not.toBe('');
    expect(bad(`  - { name: k, type: api_key, fields: { k: { type: string } }, query: { key: "{{credentials.k}}" } }`)).toMatch(
      /"k" is read by the query parameter key, so it must be declared secret: true/,
    );
  });

  it('a description check takes the query API keys of the security requirements for credentials, not unknown parameters', () => {
    const d = new Description({
      openapi: '3.0.0',
      info: { title: 't', version: '1' },
      paths: { '/boards/{id}': { get: { parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: {} } } } },
      components: { securitySchemes: { k: { type: 'apiKey', in: 'query', name: 'key' }, t: { type: 'apiKey', in: 'query', name: 'token' } } },
      security: [{ k: [], t: [] }],
    });
    const matched = d.match('GET', '/boards/b1');
    if (!('op' in matched)) throw new Error(matched.message);
    const check = (q: string): unknown =>
      d.checkRequest(matched.op, { pathParams: matched.pathParams, query: new URLSearchParams(q), headers: {}, rawBody: '' }, { unknownQuery: 'reject' });
    expect(check('key=k&token=t')).not.toHaveProperty('status');
    expect(check('key=k')).toMatchObject({ status: 401 });
    expect(check('key=k&token=t&other=1')).toMatchObject({ status: 400, message: 'unknown query parameter other' });
  });
});
