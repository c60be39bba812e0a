/**
 * Klaviyo's quirks, end to end: connectors/klaviyo/connector.yaml run by the interpreter over real
 * HTTP against the generic simulator serving our description (derived from the official
 * klaviyo-api client) with its sidecar, no Klaviyo code. What every connector shares is the
 * conformance suite's; here: `Authorization: Klaviyo-API-Key <key>` and the `revision` header on
 * every request, JSON:API write bodies with their fixed type (and an update's id), an event
 * created with 202 and no body (its record is the event sent), cursor pages behind links.next,
 * the changes since a time as `filter=greater-than(updated,…)` with the change time on the record's
 * top level, and the JSON:API errors.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { failure } from '../helpers/errors.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/klaviyo';
const manifest = getConnector('klaviyo');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { api_key: string };

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 4, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const klaviyo = (credentials: Rec = CREDENTIALS) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => klaviyo().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;
const lastBody = (): Rec => JSON.parse(sim.requests.at(-1)!.rawBody) as Rec;

describe('klaviyo', () => {
  it('sends Klaviyo-API-Key and the revision on every request; the check names the account; a bad key is refused with the JSON:API detail', async () => {
    const checked = await klaviyo().check();
    expect(checked).toMatchObject({ ok: true, checked: true, info: { account_id: expect.any(String) } });
    const req = sim.requests.at(-1)!;
    expect(req).toMatchObject({ method: 'GET', path: '/api/accounts' });
    expect(req.headers['authorization']).toBe(`Klaviyo-API-Key ${CREDENTIALS.api_key}`);
    expect(req.headers['revision']).toBe('2026-07-15');
    const err = await failure(klaviyo({ api_key: 'pk_notakey' }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toMatch(/Incorrect authentication credentials/);
  });

  it('writes JSON:API documents: a create with its type, an update with its type and id; the change time is on the record', async () => {
    const made = await run('profiles', 'create', { attributes: { email: 'ada@example.com', first_name: 'Ada' } });
    expect(lastBody()).toEqual({ data: { type: 'profile', attributes: { email: 'ada@example.com', first_name: 'Ada' } } });
    expect(made.data).toMatchObject({ type: 'profile', attributes: { email: 'ada@example.com' } });
    expect(made.data['updated']).toBe((made.data['attributes'] as Rec)['updated']);
    await run('profiles', 'update', { id: made.data['id'], attributes: { last_name: 'Lovelace' } });
    expect(lastBody()).toEqual({ data: { type: 'profile', id: made.data['id'], attributes: { last_name: 'Lovelace' } } });
  });

  it('an event is accepted with 202 and no body: the record is the event sent, named by its unique_id', async () => {
    const attributes = {
      properties: { OrderId: '1005', value: 64 },
      metric: { data: { type: 'metric', attributes: { name: 'Placed Order' } } },
      profile: { data: { type: 'profile', attributes: { email: 'maya.okafor@example.com' } } },
      unique_id: 'order-1005',
    };
    const sent = await run('events', 'create', { attributes });
    expect(sim.requests.at(-1)).toMatchObject({ method: 'POST', path: '/api/events' });
    expect(sent.data).toEqual({ type: 'event', id: 'order-1005', attributes });
  });

  it('pages by links.next, and reads the profiles changed since a time with a greater-than filter', async () => {
    const ids: unknown[] = [];
    for await (const page of klaviyo().pages('profiles', { page_size: 4 })) ids.push(...page.data.map((p) => p['id']));
    expect(ids.length).toBeGreaterThanOrEqual(6);
    expect(new Set(ids).size).toBe(ids.length);
    const steps = klaviyo().pageSteps('profiles', { updated_since: '2026-01-02T00:00:00Z', page_size: 100 }, undefined, 'changes');
    await steps.next();
    expect(Object.fromEntries(sim.requests.at(-1)!.query)).toMatchObject({ filter: 'greater-than(updated,2026-01-02T00:00:00Z)', sort: 'updated' });
  });
});
