/**
 * Calendly's quirks, end to end: connectors/calendly/connector.yaml run by the interpreter over
 * real HTTP against the generic simulator serving our description of Calendly's API (derive.mjs)
 * with its sidecar, no Calendly code. What every connector shares is the conformance suite's;
 * here: the bearer token and the check (the user and organization URIs), records named by URIs
 * with the uuid that ends them added for gets (users by uuid, `me` for the token's own), lists
 * scoped by the organization's URI and paged by pagination.next_page_token, and Calendly's errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { failure } from '../helpers/errors.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/calendly';
const manifest = getConnector('calendly');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { token: string; organization: string };

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 4, rateLimit: false });
});
afterAll(() => sim.close());

const calendly = (credentials: Rec = CREDENTIALS) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => calendly().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;

describe('calendly', () => {
  it('sends the token as Bearer; the check names the user and the organization; a bad token is upstream_credentials_rejected', async () => {
    const checked = await calendly().check();
    expect(checked.info).toEqual({ user: 'https://api.calendly.com/users/AAAAAAAAAAAAAAAA', organization: CREDENTIALS.organization });
    expect(sim.requests.at(-1)!.headers['authorization']).toBe(`Bearer ${CREDENTIALS.token}`);
    const err = await failure(calendly({ ...CREDENTIALS, token: 'eyJnotatoken' }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toMatch(/access token is invalid/);
  });

  it('gets the token’s own user as me, with the uuid that ends its uri; an unknown uuid is upstream_not_found', async () => {
    const me = await run('users', 'get', { uuid: 'me' });
    expect(me.data).toMatchObject({ uri: 'https://api.calendly.com/users/AAAAAAAAAAAAAAAA', uuid: 'AAAAAAAAAAAAAAAA', name: 'Maya Okafor' });
    expect((await failure(run('users', 'get', { uuid: 'ZZZZZZZZZZZZZZZZ' }))).code).toBe('upstream_not_found');
  });

  it("lists an organization's scheduled events page by page (next_page_token), each read back by its uuid; a list needs a scope", async () => {
    const uris: unknown[] = [];
    for await (const page of calendly().pages('scheduled_events', { organization: CREDENTIALS.organization, count: 2 })) {
      uris.push(...page.data.map((e) => e['uri']));
      expect(sim.requests.at(-1)!.query.get('organization')).toBe(CREDENTIALS.organization);
    }
    expect(uris).toHaveLength(5);
    const first = (await run('scheduled_events', 'list', { organization: CREDENTIALS.organization, count: 1 })).data[0] as Rec;
    expect(first['uri']).toBe(`https://api.calendly.com/scheduled_events/${String(first['uuid'])}`);
    expect((await run('scheduled_events', 'get', { uuid: first['uuid'] })).data['uri']).toBe(first['uri']);
    const invitees = (await run('invitees', 'list', { event_uuid: first['uuid'] })).data as Rec[];
    expect(invitees.length).toBeGreaterThan(0);
    expect((await failure(run('event_types', 'list', {}))).code).toBe('invalid_params');
  });
});
