/**
 * Okta's quirks, end to end: connectors/okta/connector.yaml run by the interpreter over real HTTP
 * against the generic simulator serving Okta's own description (converted and trimmed from
 * @okta/openapi) with its sidecar, no Okta code. What every connector shares is the conformance
 * suite's; here: the org's own host from the credentials, `Authorization: SSWS <token>` and the
 * check (/users/me), Okta's errorSummary, lists paged through the Link header, the changes since a
 * time as `search=lastUpdated gt "..."`, deprovisioned users removed by the sync, and a user added
 * to a group (204: the membership from the call).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { failure } from '../helpers/errors.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/okta';
const manifest = getConnector('okta');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { subdomain: string; okta_domain: string; api_token: string };

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 4, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const okta = (credentials: Rec = CREDENTIALS) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => okta().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;

describe('okta', () => {
  it("calls the org's own host, named by the credentials", async () => {
    const urls: string[] = [];
    const fetchImpl = (async (input: string | URL | Request) => {
      urls.push(String(input instanceof Request ? input.url : input));
      return new Response('{"id":"00u1f96ECLNVOKVMUSEA","profile":{"login":"maya@acme.example"}}', {
        status: 200,
        headers: { 'content-type': 'application/json' },
      });
    }) as typeof fetch;
    const rt = new ConnectorRuntime(manifest, { ...CREDENTIALS, okta_domain: 'oktapreview' }, { fetch: fetchImpl, limiter: null });
    expect((await rt.check()).info).toEqual({ user_id: '00u1f96ECLNVOKVMUSEA', login: 'maya@acme.example' });
    expect(urls).toEqual(['https://acme.oktapreview.com/api/v1/users/me']);
  });

  it('sends the API token as SSWS; the check names the token’s user; a bad token is upstream_credentials_rejected with errorSummary', async () => {
    const checked = await okta().check();
    expect(checked).toMatchObject({ ok: true, checked: true, info: { user_id: expect.stringMatching(/^00u/) } });
    expect(sim.requests.at(-1)).toMatchObject({ method: 'GET', path: '/api/v1/users/me' });
    expect(sim.requests.at(-1)!.headers['authorization']).toBe(`SSWS ${CREDENTIALS.api_token}`);
    const err = await failure(okta({ ...CREDENTIALS, api_token: '00notatoken' }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toMatch(/Invalid token provided/);
  });

  it('pages users through the Link header, and reads the changes since a time with search=lastUpdated gt', async () => {
    const ids: unknown[] = [];
    for await (const page of okta().pages('users', { limit: 3 })) {
      ids.push(...page.data.map((u) => u['id']));
      expect(String(page.meta['link'] ?? '')).toMatch(/rel="next"|^$/);
    }
    expect(new Set(ids).size).toBe(8);
    expect(sim.requests.filter((r) => r.path === '/api/v1/users').length).toBe(3);
    const changes = okta().pageSteps('users', { updated_since: '2026-01-03T00:00:00.000Z', limit: 200 }, undefined, 'changes');
    await changes.next();
    expect(Object.fromEntries(sim.requests.at(-1)!.query)).toMatchObject({ search: 'lastUpdated gt "2026-01-03T00:00:00.000Z"', limit: '200' });
    expect(manifest.entities.get('users')!.def.sync!.deleted_when).toBe("{{eq record.status 'DEPROVISIONED'}}");
  });

  it('adds a user to a group (204 without a body): the record is the membership, from the call; the group lists it', async () => {
    const group = ((await run('groups', 'list', { limit: 1 })).data as Rec[])[0]!;
    const user = ((await run('users', 'list', { limit: 1 })).data as Rec[])[0]!;
    const added = await run('group_members', 'create', { group_id: group['id'], user_id: user['id'] });
    expect(added.data).toEqual({ id: user['id'], group_id: group['id'] });
    expect(sim.requests.at(-1)).toMatchObject({ method: 'PUT', path: `/api/v1/groups/${String(group['id'])}/users/${String(user['id'])}` });
    const members = (await run('group_members', 'list', { group_id: group['id'], limit: 1000 })).data as Rec[];
    expect(members.map((m) => m['id'])).toContain(user['id']);
  });
});
