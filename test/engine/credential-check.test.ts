/**
 * The manifest's credential check, run through the interpreter against each simulator: a right
 * key passes and reports the account facts the manifest declares, a wrong key is
 * upstream_credentials_rejected with the upstream's own message, a dead host is
 * upstream_unavailable. Plus the loader's validation of check declarations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/index.ts';
import { loadManifestText, ManifestError } from '../../src/manifest/index.ts';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { startIntercomSimulator, type IntercomSimulator } from '../../connectors/intercom/simulator/index.ts';
import { startMondaySimulator, type MondaySimulator } from '../../connectors/monday/simulator/index.ts';
import { failure } from '../helpers/errors.ts';

let granola: GranolaSimulator;
let intercom: IntercomSimulator;
let monday: MondaySimulator;
beforeAll(async () => {
  [granola, intercom, monday] = await Promise.all([
    startGranolaSimulator({ size: 20 }),
    startIntercomSimulator({ size: 20 }),
    startMondaySimulator({ size: 20 }),
  ]);
});
afterAll(() => Promise.all([granola.close(), intercom.close(), monday.close()]));

const fast = { maxAttempts: 2, baseDelayMs: 1 };

describe('connect().check()', () => {
  it('granola: a one-note list proves the key; one request, page_size 1', async () => {
    granola.reset();
    const r = await connect('granola', { credentials: { api_key: granola.apiKey }, baseUrl: granola.url }).check();
    expect(r).toEqual({ ok: true, connector_type: 'granola', checked: true, info: {} });
    expect(granola.requests.map((q) => `${q.method} ${q.path}?${q.query.toString()}`)).toEqual(['GET /v1/notes?page_size=1']);
  });

  it('granola: a wrong key is upstream_credentials_rejected with the upstream message', async () => {
    const e = await failure(connect('granola', { credentials: { api_key: 'grn_wrong' }, baseUrl: granola.url }).check());
    expect(e.code).toBe('upstream_credentials_rejected');
    expect(e.status).toBe(424);
    expect(e.message).toContain('Invalid API key');
  });

  it('intercom: GET /me reports the admin, app id, app name and region', async () => {
    const r = await connect('intercom', { credentials: { access_token: intercom.accessToken }, baseUrl: intercom.url }).check();
    const me = intercom.me() as { id: string; app: { id_code: string; name: string; region: string } };
    expect(r.info).toEqual({ admin_id: me.id, app_id: me.app.id_code, app_name: me.app.name, region: me.app.region });
  });

  it('intercom: a revoked token is upstream_credentials_rejected', async () => {
    const e = await failure(connect('intercom', { credentials: { access_token: 'nope' }, baseUrl: intercom.url }).check());
    expect(e.code).toBe('upstream_credentials_rejected');
    expect(e.message).toMatch(/^intercom: /);
  });

  it('intercom: judged on what the 2.14 contract guarantees: a 2xx with an admin id passes whatever its `type`', async () => {
    // admin_with_app requires no property and does not constrain `type`: a description-valid answer
    // without it (or with another value) is a working token.
    const me = { id: '991267459', name: 'Ciaran Lee', app: { type: 'app', id_code: 'abc123', name: 'MyApp', region: 'EU' } };
    intercom.inject({ path: '/me', status: 200, json: me });
    const r = await connect('intercom', { credentials: { access_token: intercom.accessToken }, baseUrl: intercom.url }).check();
    expect(r.info).toEqual({ admin_id: '991267459', app_id: 'abc123', app_name: 'MyApp', region: 'EU' });
    intercom.inject({ path: '/me', status: 200, json: { ...me, type: 'teammate' } });
    await expect(connect('intercom', { credentials: { access_token: intercom.accessToken }, baseUrl: intercom.url }).check()).resolves.toMatchObject({
      ok: true,
    });
  });

  it('intercom: refusals are judged on their status: 401 and 403 are upstream_credentials_rejected, a 2xx without an admin id fails the check', async () => {
    for (const status of [401, 403]) {
      intercom.inject({ path: '/me', status, json: { type: 'error.list', errors: [{ code: 'unauthorized', message: 'Access Token Invalid' }] } });
      const e = await failure(connect('intercom', { credentials: { access_token: intercom.accessToken }, baseUrl: intercom.url }).check());
      expect([e.code, e.details['upstream_status']]).toEqual(['upstream_credentials_rejected', status]);
    }
    intercom.inject({ path: '/me', status: 200, json: { type: 'admin', name: 'no id' } });
    const e = await failure(connect('intercom', { credentials: { access_token: intercom.accessToken }, baseUrl: intercom.url }).check());
    expect(e.code).toBe('upstream_credentials_rejected');
    expect(e.message).toContain('credential check did not pass');
  });

  it('monday: the me query reports the user and the account', async () => {
    const r = await connect('monday', { credentials: { api_key: monday.apiKey }, baseUrl: monday.url }).check();
    expect(typeof r.info.user_id).toBe('string');
    expect(r.info.account_slug).toBe(monday.state.account.slug);
    expect(r.info.account_id).toBe(monday.state.account.id);
  });

  it('monday: a wrong token is upstream_credentials_rejected (Not Authenticated)', async () => {
    const e = await failure(connect('monday', { credentials: { api_key: 'wrong' }, baseUrl: monday.url }).check());
    expect(e.code).toBe('upstream_credentials_rejected');
    expect(e.message).toContain('Not Authenticated');
  });

  it('an unreachable upstream is upstream_unavailable', async () => {
    const e = await failure(connect('granola', { credentials: { api_key: 'k' }, baseUrl: 'http://127.0.0.1:9', retry: fast }).check());
    expect(e.code).toBe('upstream_unavailable');
    expect(e.status).toBe(503);
  });

  it('a 2xx that fails the success condition is upstream_credentials_rejected', async () => {
    intercom.inject({ path: '/me', status: 200, json: { type: 'error.list', errors: [] } });
    const e = await failure(connect('intercom', { credentials: { access_token: intercom.accessToken }, baseUrl: intercom.url }).check());
    expect(e.code).toBe('upstream_credentials_rejected');
    expect(e.message).toContain('credential check did not pass');
  });
});

const base = `manifest_version: 1
type: demo
title: Demo
kind: demo
base_url: { default: "https://api.example.com" }
auth:
  - { name: key, type: bearer, fields: { key: { type: string, secret: true } }, token: "{{credentials.key}}" }
entities:
  things:
    primary_key: id
    record: { type: object, properties: { id: { type: string } } }
    actions:
      get:
        params: { id: { type: string, required: true } }
        request: { method: GET, path: "/things/{{params.id}}" }
        response: { record: "{{body}}" }
`;

describe('manifest check declarations', () => {
  it.each([
    ['a check without a request', 'check: { success: "{{body.ok}}" }\n', /check: missing required key "request"/],
    ['params in a check request', 'check: { request: { method: GET, path: "/me", query: { x: "{{params.x}}" } } }\n', /"params.x" is not a declared param/],
    [
      'an unknown credential field',
      'check: { request: { method: GET, path: "/me", headers: { X: "{{credentials.nope}}" } } }\n',
      /"credentials.nope" is not a credential field/,
    ],
    ['request roots in success', 'check: { request: { method: GET, path: "/me" }, success: "{{credentials.key}}" }\n', /unknown variable "credentials.key"/],
    ['an unknown key', 'check: { request: { method: GET, path: "/me" }, expect: 1 }\n', /unknown key "expect"/],
  ])('rejects %s', (_name, yaml, want) => {
    let err: unknown;
    try {
      loadManifestText(base + yaml, 'demo.yaml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ManifestError);
    expect((err as ManifestError).message).toMatch(want);
  });

  it('compiles a valid check with info', () => {
    const lm = loadManifestText(base + 'check:\n  request: { method: GET, path: /me }\n  success: "{{body.id}}"\n  info: { id: "{{body.id}}" }\n', 'demo.yaml');
    expect(lm.check?.action.request.method).toBe('GET');
    expect(lm.check?.info.map(([k]) => k)).toEqual(['id']);
  });
});
