/**
 * BambooHR's quirks, end to end: connectors/bamboohr/connector.yaml run by the interpreter over
 * real HTTP against the generic simulator serving our extract of BambooHR's API
 * (connectors/bamboohr/openapi.yaml) with its sidecar — no BambooHR-specific simulator code. What
 * every connector shares is the conformance suite's; here: the API key as the basic user name with
 * the password "x" and employee 0 as the check, Accept: application/json on every request, a new
 * employee's id read from the Location header of a 201 without a body, errors without a body whose
 * reason is the X-BambooHR-Error-Message header, throttling as a 503 with Retry-After, time-off
 * requests by date range (a get through the list's id filter, a status change read back), and the
 * employees' sync through a custom report, then its lastChanged filter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/bamboohr';
const manifest = getConnector('bamboohr');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { company_domain: string; api_key: string };

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar, seed: 7, rateLimit: false });
});
afterAll(() => sim.close());

const bamboo = (credentials: Rec = CREDENTIALS, upstream = sim, maxAttempts = 4) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: upstream.url, limiter: null, retry: { maxAttempts, baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => bamboo().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;

describe('bamboohr', () => {
  it('sends the API key as the basic user name with the password x, asks for JSON, and checks with employee 0', async () => {
    const checked = await bamboo().check();
    expect(checked).toMatchObject({ ok: true, checked: true, info: { employee_id: expect.stringMatching(/^\d+$/), name: 'Charlotte Abbott' } });
    const sent = sim.requests.at(-1)!;
    expect(sent).toMatchObject({ method: 'GET', path: '/employees/0' });
    expect(sent.query.get('fields')).toBe('firstName,lastName,workEmail');
    expect(sent.headers['authorization']).toBe(`Basic ${Buffer.from(`${CREDENTIALS.api_key}:x`).toString('base64')}`);
    expect(sent.headers['accept']).toBe('application/json');
    const err = await failure(bamboo({ ...CREDENTIALS, api_key: 'deadbeef' }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toMatch(/Invalid API key or access token/);
  });

  it("adds an employee (201, no body) and reads it back by the id in Location; an unknown id's reason comes from the header", async () => {
    const created = (await run('employees', 'create', { first_name: 'Ada', last_name: 'Lovelace', job_title: 'Analyst' })).data as Rec;
    const post = sim.requests.find((r) => r.method === 'POST' && r.path === '/employees')!;
    expect(JSON.parse(post.rawBody.toString())).toEqual({ firstName: 'Ada', lastName: 'Lovelace', jobTitle: 'Analyst' });
    expect(created).toMatchObject({ firstName: 'Ada', lastName: 'Lovelace', jobTitle: 'Analyst' });
    expect(created['id']).toMatch(/^\d{3}$/);
    const readBack = sim.requests.at(-1)!;
    expect(readBack).toMatchObject({ method: 'GET', path: `/employees/${String(created['id'])}` });
    expect(readBack.query.get('fields')).toContain('firstName,lastName');
    const updated = (await run('employees', 'update', { id: created['id'], department: 'Finance' })).data as Rec;
    expect(updated).toMatchObject({ id: created['id'], department: 'Finance' });
    const missing = await failure(run('employees', 'get', { id: '999999', fields: ['firstName'] }));
    expect(missing.code).toBe('upstream_not_found');
    expect(missing.message).toMatch(/Employee not found/);
  });

  it('a 503 with Retry-After is a rate limit: retried, and reported as upstream_rate_limited when it persists', async () => {
    sim.inject({ path: '/employees/directory', status: 503, headers: { 'retry-after': '0' }, text: '' });
    const before = sim.requests.length;
    const listed = await run('employees', 'list');
    expect((listed.data as Rec[]).map((e) => e['displayName'])).toContain('Charlotte Abbott');
    expect(sim.requests.slice(before).map((r) => r.path)).toEqual(['/employees/directory', '/employees/directory']);
    sim.inject({ path: '/employees/directory', status: 503, headers: { 'retry-after': '0', 'x-bamboohr-error-message': 'Too many requests' }, text: '' });
    const err = await failure(bamboo(CREDENTIALS, sim, 1).execute('employees', 'list', {}));
    expect(err.code).toBe('upstream_rate_limited');
    expect(err.message).toMatch(/Too many requests/);
  });

  it("lists time-off requests overlapping a range, gets one through the list's id filter, and approves one", async () => {
    const feb = (await run('time_off_requests', 'list', { start: '2026-02-01', end: '2026-03-31' })).data as Rec[];
    expect(feb.map((r) => r['start'])).toEqual(['2026-02-02', '2026-03-16']);
    for (const r of feb) expect(r['id']).toMatch(/^\d{4}$/);
    const pending = feb.find((r) => (r['status'] as Rec)['status'] === 'requested')!;
    const got = (await run('time_off_requests', 'get', { id: pending['id'] })).data as Rec;
    expect(got).toMatchObject({ id: pending['id'], start: '2026-02-02' });
    expect(Object.fromEntries(sim.requests.at(-1)!.query)).toEqual({ id: pending['id'], start: '2000-01-01', end: '2099-12-31' });
    const approved = (await run('time_off_requests', 'update', { id: pending['id'], status: 'approved', note: 'Enjoy' })).data as Rec;
    const put = sim.requests.find((r) => r.method === 'PUT')!;
    expect(put.path).toBe(`/time_off/requests/${String(pending['id'])}/status`);
    expect(JSON.parse(put.rawBody.toString())).toEqual({ status: 'approved', note: 'Enjoy' });
    expect(approved).toMatchObject({ id: pending['id'], status: { status: 'approved' } });
    const none = await failure(run('time_off_requests', 'get', { id: '9' }));
    expect(none.code).toBe('upstream_not_found');
  });
});

describeEachDialect('bamboohr sync on %s', (name) => {
  let tdb: TestDatabase;
  let engine: SyncEngine;
  let upstream: OpenApiSimulator;
  beforeAll(async () => {
    upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.yaml`, sidecar, seed: 7, rateLimit: false });
    tdb = await openTestDatabase(name);
    await migrate(tdb.database, [syncMigrations]);
    engine = new SyncEngine({
      database: tdb.database,
      sink: new RecordStore(tdb.database, { cursorSecret: 'test' }),
      fullRefreshEvery: 10,
      runtimeFor: async () => ({ manifest, runtime: bamboo(CREDENTIALS, upstream) }),
    });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
    await upstream.close();
  });

  it('reads every employee through a custom report, then only those changed since through its lastChanged filter', async () => {
    await engine.register('bh-1');
    const first = await engine.runOnce('bh-1');
    expect(first.full).toBe(true);
    expect(first.entities).toMatchObject({ employees: { records: 8 }, time_off_requests: { records: 6 } });
    const report = upstream.requests.find((r) => r.path === '/reports/custom')!;
    expect(report.method).toBe('POST');
    expect(report.query.get('format')).toBe('JSON');
    const body = JSON.parse(report.rawBody.toString()) as Rec;
    expect(body['fields']).toContain('lastChanged');
    expect(body['filters']).toBeUndefined();
    expect(upstream.requests.filter((r) => r.path === '/employees/directory')).toHaveLength(0);

    upstream.requests.length = 0;
    const second = await engine.runOnce('bh-1');
    expect(second.full).toBe(false);
    const incremental = upstream.requests.filter((r) => r.path === '/reports/custom');
    expect(incremental).toHaveLength(1);
    const filters = (JSON.parse(incremental[0]!.rawBody.toString()) as Rec)['filters'] as Rec;
    expect(filters).toEqual({ lastChanged: { includeNull: 'no', value: expect.stringMatching(/^2026-01-08T00:00:00/) } });
    expect(second.entities).toMatchObject({ employees: { records: 1 } });
  }, 60_000);
});
