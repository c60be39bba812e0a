/**
 * runFollowUps: an oauth2 variant's follow_up requests (Jira's accessible-resources → cloud_id),
 * against answers made here: which site is chosen, where the request goes, what each failure is
 * called, and that no error message carries the token.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { runFollowUps } from '../../src/auth/index.ts';
import { getConnector, loadManifestText, type CompiledAuthVariant } from '../../src/manifest/index.ts';
import { failure } from '../helpers/errors.ts';

const TOKEN = 'tok-VERY-SECRET-1';
const RESOURCES = 'https://api.atlassian.com/oauth/token/accessible-resources';
const jiraOAuth = getConnector('jira').auth.find((v) => v.def.name === 'oauth') as CompiledAuthVariant;
const site = (id: string, name: string) => ({
  id,
  url: `https://${name}.atlassian.net`,
  name,
  scopes: ['read:jira-work'],
  avatarUrl: 'https://avatars.example.com/a.png',
});

/** A fetch answering `answer` and recording what it was asked. */
function fake(answer: () => Response | Promise<Response>) {
  const seen: { url: string; init: RequestInit }[] = [];
  const fetchImpl = async (url: string | URL, init: RequestInit = {}): Promise<Response> => {
    seen.push({ url: String(url), init });
    return answer();
  };
  return { seen, fetchImpl };
}
const json =
  (body: unknown, status = 200) =>
  () =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('runFollowUps (Jira: cloud_id from accessible-resources)', () => {
  it('takes the first site when the grant reaches several, sending the new token to the manifest URL (or the same path on baseUrl)', async () => {
    const f = fake(json([site('c-first', 'acme'), site('c-second', 'other')]));
    const out = await runFollowUps(jiraOAuth, { access_token: TOKEN, expires_at: 1 }, { after: 'exchange', fetchImpl: f.fetchImpl });
    expect(out).toEqual({ access_token: TOKEN, expires_at: 1, cloud_id: 'c-first' });
    expect(f.seen).toHaveLength(1);
    expect(f.seen[0]?.url).toBe(RESOURCES);
    expect(f.seen[0]?.init).toMatchObject({ method: 'GET', redirect: 'manual', headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' } });

    const onSim = fake(json([site('c-sim', 'sandbox')]));
    expect(
      (await runFollowUps(jiraOAuth, { access_token: TOKEN }, { after: 'exchange', fetchImpl: onSim.fetchImpl, baseUrl: 'http://127.0.0.1:4010/' }))[
        'cloud_id'
      ],
    ).toBe('c-sim');
    expect(onSim.seen[0]?.url).toBe('http://127.0.0.1:4010/oauth/token/accessible-resources');
  });

  it.each([
    ['no site granted ([])', json([]), 'oauth_nothing_granted', /granted this app access to no Jira site/],
    ['a site without an id', json([{ name: 'acme' }]), 'oauth_nothing_granted', /no Jira site/],
    ['an object instead of a list', json({ id: 'x' }), 'oauth_nothing_granted', /no Jira site/],
    ['an id that is not a value', json([{ id: { nested: true } }]), 'upstream_protocol_error', /answered an object where cloud_id should be a value/],
    ['401', json({ code: 401, message: 'Unauthorized' }, 401), 'upstream_credentials_rejected', /refused the new access token \(HTTP 401\)/],
    ['500', json({}, 500), 'upstream_unavailable', /answered HTTP 500/],
    [
      'a redirect (not followed)',
      () => new Response(null, { status: 302, headers: { location: 'https://elsewhere.example/' } }),
      'upstream_error',
      /answered HTTP 302/,
    ],
    ['HTML', () => new Response(`<html>${TOKEN}</html>`, { status: 200 }), 'upstream_protocol_error', /did not answer JSON/],
    ['a body over the size limit', json([site('c-1', 'a'.repeat(2000))]), 'upstream_response_too_large', /./],
    [
      'a connection failure',
      () => Promise.reject(new TypeError('fetch failed')),
      'upstream_unavailable',
      /could not be reached after the OAuth code exchange: fetch failed/,
    ],
  ])('fails on %s with its code, the token in no message', async (_name, answer, code, message) => {
    const f = fake(answer);
    const e = await failure(runFollowUps(jiraOAuth, { access_token: TOKEN }, { after: 'exchange', fetchImpl: f.fetchImpl, maxBytes: 1000 }));
    expect(e.code).toBe(code);
    expect(e.message).toMatch(message);
    expect(JSON.stringify({ m: e.message, d: e.details, x: e.errors })).not.toContain(TOKEN);
  });

  it('runs after a refresh only when the follow_up says on_refresh: true', async () => {
    const f = fake(json([site('c-1', 'acme')]));
    expect(await runFollowUps(jiraOAuth, { access_token: TOKEN, cloud_id: 'kept' }, { after: 'refresh', fetchImpl: f.fetchImpl })).toEqual({
      access_token: TOKEN,
      cloud_id: 'kept',
    });
    expect(f.seen).toHaveLength(0);

    const m = parse(readFileSync('connectors/jira/connector.yaml', 'utf8')) as Record<string, any>;
    m.auth[1].follow_up[0].on_refresh = true;
    const everyRefresh = loadManifestText(stringify(m), 'connectors/jira/connector.yaml').auth.find((v) => v.def.name === 'oauth') as CompiledAuthVariant;
    expect((await runFollowUps(everyRefresh, { access_token: TOKEN, cloud_id: 'old' }, { after: 'refresh', fetchImpl: f.fetchImpl }))['cloud_id']).toBe('c-1');
    expect(f.seen).toHaveLength(1);
  });

  it('does nothing for a variant without follow_up', async () => {
    const f = fake(json([]));
    const linear = getConnector('linear').auth.find((v) => v.def.type === 'oauth2') as CompiledAuthVariant;
    expect(await runFollowUps(linear, { access_token: TOKEN }, { after: 'exchange', fetchImpl: f.fetchImpl })).toEqual({ access_token: TOKEN });
    expect(f.seen).toHaveLength(0);
  });
});
