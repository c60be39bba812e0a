/**
 * Attio's quirks, end to end: connectors/attio/connector.yaml run by the interpreter over real HTTP
 * against the generic simulator serving Attio's own description (connectors/attio/openapi.json,
 * trimmed) with its sidecar — no Attio-specific simulator code. What every connector shares (each
 * entity × action) is the shared conformance suite's; here: the bearer API key and the /v2/self
 * check, record queries POSTed with their page in the body (limit/offset, ended by a short page),
 * ids as objects with the record's own lifted beside them, values written as Attio takes them, and
 * the sync: the records created since the last run through the query's created_at filter, entries
 * per list.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector, type ListEnvelope, type RecordEnvelope } from '../../src/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import { failure } from '../helpers/errors.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

type Rec = Record<string, unknown>;

const DIR = 'connectors/attio';
const manifest = getConnector('attio');
const sidecar = loadSidecar(`${DIR}/simulator.yaml`);
const CREDENTIALS = sidecar.sandbox!.credentials as { api_key: string };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let sim: OpenApiSimulator;
beforeAll(async () => {
  sim = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 7, rateLimit: false });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

const attio = (credentials: Rec = CREDENTIALS, upstream = sim) =>
  new ConnectorRuntime(manifest, credentials, { baseUrl: upstream.url, limiter: null, retry: { baseDelayMs: 5, maxDelayMs: 20 } });
const run = (entity: string, action: string, params: Rec = {}) => attio().execute(entity, action, params) as Promise<ListEnvelope & RecordEnvelope>;
const bodies = (path: string): Rec[] => sim.requests.filter((r) => r.method === 'POST' && r.path === path).map((r) => JSON.parse(r.rawBody || '{}') as Rec);

describe('attio', () => {
  it('sends the API key as a bearer token; the check reports the workspace, a refused key is upstream_credentials_rejected', async () => {
    expect(await attio().check()).toMatchObject({ ok: true, checked: true, info: { workspace_id: expect.stringMatching(UUID), workspace_slug: 'northwind' } });
    const sent = sim.requests.at(-1)!;
    expect(sent).toMatchObject({ method: 'GET', path: '/v2/self' });
    expect(sent.headers['authorization']).toBe(`Bearer ${CREDENTIALS.api_key}`);
    const err = await failure(attio({ api_key: 'f'.repeat(64) }).check());
    expect(err.code).toBe('upstream_credentials_rejected');
    expect(err.message).toMatch(/Authentication failed/);
  });

  it('queries people with the page in the POST body, offset advancing by the records received until a short page; each record_id is its id.record_id', async () => {
    const seen: Rec[] = [];
    for await (const page of attio().pages('people', { limit: 2 })) seen.push(...(page.data as Rec[]));
    expect(seen).toHaveLength(6);
    for (const p of seen) {
      expect(p['record_id']).toMatch(UUID);
      expect((p['id'] as Rec)['record_id']).toBe(p['record_id']);
    }
    expect(seen.map((p) => ((p['values'] as Rec)['email_addresses'] as Rec[])[0]!['email_address'])).toContain('ada.okafor@northwind.example');
    expect(bodies('/v2/objects/people/records/query')).toEqual([{ limit: 2 }, { limit: 2, offset: 2 }, { limit: 2, offset: 4 }, { limit: 2, offset: 6 }]);
    const companies = (await run('companies', 'list', { limit: 10 })).data as Rec[];
    expect(companies.map((c) => ((c['values'] as Rec)['name'] as Rec[])[0]!['value'])).toContain('Northwind Traders');
    const people = new Set(seen.map((p) => (p['id'] as Rec)['object_id']));
    expect(people.size).toBe(1);
    expect(companies.every((c) => !people.has((c['id'] as Rec)['object_id']))).toBe(true);
  });

  it('creates a person from values, updates it by record_id and reads it back; an unknown id is upstream_not_found', async () => {
    const values = { name: [{ first_name: 'Grace', last_name: 'Hopper', full_name: 'Grace Hopper' }], email_addresses: ['grace@example.com'] };
    const made = (await run('people', 'create', { values })).data as Rec;
    expect(bodies('/v2/objects/people/records').at(-1)).toEqual({ data: { values } });
    const id = made['record_id'] as string;
    await run('people', 'update', { record_id: id, values: { job_title: ['Rear Admiral'] } });
    const patch = sim.requests.at(-1)!;
    expect(patch).toMatchObject({ method: 'PATCH', path: `/v2/objects/people/records/${id}` });
    const got = (await run('people', 'get', { record_id: id })).data as Rec;
    expect(got['values']).toEqual({ ...values, job_title: ['Rear Admiral'] });
    const missing = await failure(run('people', 'get', { record_id: '00000000-0000-4000-8000-000000000000' }));
    expect(missing.code).toBe('upstream_not_found');
    const refused = await failure(run('people', 'create', { values: { name: 'Grace Hopper' } }));
    expect(refused.code).toBe('invalid_params');
  });

  it('creates a task with the body Attio requires (format, deadline, links and assignees, even empty), and a note on a person', async () => {
    const person = ((await run('people', 'list', { limit: 1 })).data as Rec[])[0]!;
    const task = (
      await run('tasks', 'create', { content: 'Send the proposal', linked_records: [{ target_object: 'people', target_record_id: person['record_id'] }] })
    ).data as Rec;
    expect(task['task_id']).toMatch(UUID);
    expect(bodies('/v2/tasks').at(-1)).toEqual({
      data: {
        content: 'Send the proposal',
        format: 'plaintext',
        deadline_at: null,
        is_completed: false,
        linked_records: [{ target_object: 'people', target_record_id: person['record_id'] }],
        assignees: [],
      },
    });
    const note = (
      await run('notes', 'create', { parent_object: 'people', parent_record_id: person['record_id'], title: 'Intro call', content: 'Met at the fair' })
    ).data as Rec;
    expect(note).toMatchObject({ parent_record_id: person['record_id'], title: 'Intro call' });
    expect(bodies('/v2/notes').at(-1)).toMatchObject({ data: { format: 'plaintext', content: 'Met at the fair' } });
  });
});

describeEachDialect('attio sync on %s', (name) => {
  let tdb: TestDatabase;
  let store: RecordStore;
  let engine: SyncEngine;
  let upstream: OpenApiSimulator;
  beforeAll(async () => {
    upstream = await startOpenApiSimulator({ description: `${DIR}/openapi.json`, sidecar, seed: 7, rateLimit: false });
    tdb = await openTestDatabase(name);
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test' });
    engine = new SyncEngine({
      database: tdb.database,
      sink: store,
      fullRefreshEvery: 10,
      runtimeFor: async () => ({ manifest, runtime: attio(CREDENTIALS, upstream) }),
    });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
    await upstream.close();
  });

  it('reads everything once (entries per list), then only the records created since, by the query filter on created_at', async () => {
    await engine.register('at-1');
    const first = await engine.runOnce('at-1');
    expect(first.full).toBe(true);
    expect(first.entities).toMatchObject({
      people: { records: 6 },
      companies: { records: 6 },
      lists: { records: 2 },
      entries: { records: 8 },
      workspace_members: { records: 3 },
    });
    const entryQueries = upstream.requests.filter((r) => /^\/v2\/lists\/[0-9a-f-]{36}\/entries\/query$/.test(r.path));
    expect(new Set(entryQueries.map((r) => r.path)).size).toBe(2);
    for (const body of entryQueries.map((r) => JSON.parse(r.rawBody || '{}') as Rec))
      expect(body['sorts']).toEqual([{ direction: 'asc', attribute: 'created_at' }]);

    const ada = await attio(CREDENTIALS, upstream).execute('people', 'create', {
      values: { name: [{ first_name: 'Ada', last_name: 'Lovelace', full_name: 'Ada Lovelace' }] },
    });
    upstream.requests.length = 0;
    const second = await engine.runOnce('at-1');
    expect(second.full).toBe(false);
    expect(second.entities['people']).toMatchObject({ records: 1 });
    expect(second.entities['companies']).toMatchObject({ records: 0 });
    const query = upstream.requests.find((r) => r.path === '/v2/objects/people/records/query')!;
    const body = JSON.parse(query.rawBody || '{}') as { filter: { created_at: { $gt: string } }; sorts: unknown };
    expect(body.filter.created_at.$gt).toBe('2026-01-11T00:00:00.000Z');
    expect(body.sorts).toEqual([{ direction: 'asc', attribute: 'created_at' }]);
    expect(await store.count('at-1', 'people')).toBe(7);
    expect((ada.data as Rec)['record_id']).toMatch(UUID);
  }, 60_000);
});
