/**
 * SendGrid's quirks, end to end: connectors/sendgrid/connector.yaml run by the interpreter over
 * real HTTP against the generic simulator serving SendGrid's own description (trimmed from
 * sendgrid-oai) with its sidecar, no SendGrid code. What every connector shares is the conformance
 * suite's; here: the API key as a Bearer token and the check, the mail send answered 202 without a
 * body (the record is the X-Message-Id header), the contact upsert answered 202 {job_id} and its
 * import job read back, contacts searched in SGQL and changed since a time, lists paged by the
 * next-page URL in _metadata.next, and SendGrid's {errors: [{field, message}]}.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { failure } from '../helpers/errors.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/sendgrid';
const manifest = getConnector('sendgrid');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { api_key: string };

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 4, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const sendgrid = (credentials: Rec = CREDENTIALS) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => sendgrid().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;

describe('sendgrid', () => {
  it('sends the API key as a Bearer token to GET /scopes; a bad key is upstream_credentials_rejected with SendGrid’s message', async () => {
    expect(await sendgrid().check()).toMatchObject({ ok: true, checked: true });
    expect(sim.requests.at(-1)).toMatchObject({ method: 'GET', path: '/scopes' });
    expect(sim.requests.at(-1)!.headers['authorization']).toBe(`Bearer ${CREDENTIALS.api_key}`);
    const err = await failure(sendgrid({ api_key: 'SG.abc.def' }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toMatch(/authorization grant is invalid/);
  });

  it('a mail send is answered 202 without a body: the record is the message id SendGrid answered in X-Message-Id', async () => {
    const sent = await run('mail', 'create', {
      personalizations: [{ to: [{ email: 'maya.okafor@example.com' }], dynamic_template_data: { first_name: 'Maya' } }],
      from: { email: 'orders@acme-outdoor.example', name: 'Acme Outdoor' },
      template_id: 'd-f43daeeaef504760851f727007e0b5d0',
    });
    expect(sent.data).toEqual({ message_id: 'W3HLrGuoQ1a3_5S3yjn2lA', status: 202 });
    expect(sim.requests.at(-1)).toMatchObject({ method: 'POST', path: '/mail/send' });
    // Neither content nor a template: refused before anything is sent.
    const before = sim.requests.length;
    const err = await failure(run('mail', 'create', { personalizations: [{ to: [{ email: 'a@example.com' }] }], from: { email: 'b@example.com' } }));
    expect(err.code).toBe('invalid_params');
    expect(sim.requests.length).toBe(before);
  });

  it('an upsert answers the import job’s id, and the job is read back with its counts', async () => {
    const job = await run('contact_imports', 'create', { contacts: [{ email: 'ada@example.com', first_name: 'Ada' }], list_ids: [] });
    expect(sim.requests.at(-1)).toMatchObject({ method: 'PUT', path: '/marketing/contacts' });
    expect(job.data).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), job_type: 'upsert' });
    const read = await run('contact_imports', 'get', { id: job.data['id'] });
    expect(read.data).toMatchObject({ id: job.data['id'], status: 'completed', results: { requested_count: 1 } });
  });

  it('contacts are searched in SGQL, and the changes since a time are a search on updated_at', async () => {
    const found = await run('contacts', 'list', { query: "email LIKE 'maya%'" });
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ query: "email LIKE 'maya%'" });
    expect((found.data as Rec[]).length).toBeGreaterThan(0);
    expect(found.meta).toEqual({ next_page: null });
    const changes = sendgrid().pageSteps('contacts', { updated_since: '2026-01-02T00:00:00Z' }, undefined, 'changes');
    expect(((await changes.next()).value as { page: ListEnvelope }).page.data.length).toBeGreaterThan(0);
    expect(sim.requests.at(-1)).toMatchObject({ method: 'POST', path: '/marketing/contacts/search' });
    expect(JSON.parse(sim.requests.at(-1)!.rawBody)).toEqual({ query: "updated_at > TIMESTAMP '2026-01-02T00:00:00Z'" });
  });

  it('lists page by the next-page URL in _metadata.next, to the last page', async () => {
    const ids: unknown[] = [];
    for await (const page of sendgrid().pages('lists', { page_size: 3 })) {
      ids.push(...page.data.map((r) => r['id']));
      if (page.meta['next_page'] !== null) expect(String(page.meta['next_page'])).toMatch(/page_token=/);
    }
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(4);
  });
});
