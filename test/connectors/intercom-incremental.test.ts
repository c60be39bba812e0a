/**
 * Intercom's sync-only actions through the interpreter against the simulator — contacts.changes
 * and conversations.changes (the search endpoints, updated_at > since) and companies.scroll (the
 * Scroll API) — with their requests checked against the official 2.14 description, the
 * simulator's search and scroll rules, and incremental sync end to end: after 1% of contacts
 * change, an incremental run sends under 5% of a full run's requests and stores the changes.
 */
import type { ValidateFunction } from 'ajv';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConnectorRuntime, getConnector } from '../../src/index.ts';
import { createAjv } from '../../src/manifest/index.ts';
import { INTERCOM_DESCRIPTION, startIntercomSimulator, type IntercomSimulator } from '../../connectors/intercom/simulator/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { failure } from '../helpers/errors.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import type { MigrationGroup } from '../../src/store/database.ts';

type Rec = Record<string, unknown>;
const manifest = getConnector('intercom');
const ajv = createAjv();
const validators = new Map<string, ValidateFunction>();
for (const [name, entity] of manifest.entities) validators.set(name, ajv.compile(entity.def.record));

let sim: IntercomSimulator;
beforeAll(async () => {
  sim = await startIntercomSimulator({ seed: 7, size: 400 });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());
/** Companies per scroll page, as the sidecar's scroll rule declares it. */
const scrollPageSize = (): number => sim.sidecar.scroll?.['GET /companies/scroll']?.page_size as number;

const runtime = () => new ConnectorRuntime(manifest, { access_token: sim.accessToken }, { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5 } });

async function collect(entity: string, action: 'changes' | 'scroll', params: Rec): Promise<Rec[]> {
  const out: Rec[] = [];
  for await (const { page } of runtime().pageSteps(entity, params, undefined, action)) out.push(...page.data);
  return out;
}

/** Every request the simulator got for a path is valid for its operation in the official description. */
function conformsToDescription(path: string, op: string): void {
  const reqs = sim.requests.filter((r) => r.path === path);
  expect(reqs.length).toBeGreaterThan(0);
  const operation = INTERCOM_DESCRIPTION.operations.find((o) => o.key === op);
  expect(operation, op).toBeDefined();
  for (const r of reqs) {
    // The query and (for a POST) the JSON body, checked as the simulator checks them, unknown query parameters refused.
    const checked = INTERCOM_DESCRIPTION.checkRequest(
      operation!,
      { pathParams: {}, query: r.query, headers: {}, rawBody: r.method === 'POST' ? r.rawBody : '' },
      { skipAuth: true, unknownQuery: 'reject' },
    );
    expect('status' in checked ? checked : null, `${op} query ${r.query.toString()} body ${r.rawBody}`).toBeNull();
    if (r.method === 'POST') expect(r.rawBody.trim()).not.toBe('');
  }
}

describe('intercom sync-only actions', () => {
  it('contacts.changes: exactly the contacts updated after the point, every page, records valid', async () => {
    const rows = sim.records('contacts');
    const since = Math.max(...rows.map((r) => r['updated_at'] as number)) + 10;
    const touched = [rows[3]!.id, rows[150]!.id, rows[399]!.id] as string[];
    // Edits made upstream, not through the API: updated_at becomes now, after the seeded data's anchor.
    for (const id of touched) sim.updateRecord('contacts', id, { name: `changed ${id}` });
    const got = await collect('contacts', 'changes', { updated_since: since, per_page: 2 });
    expect(got.map((c) => c.id).sort()).toEqual([...touched].sort());
    for (const c of got) {
      expect(c.name).toBe(`changed ${String(c.id)}`);
      expect(validators.get('contacts')!(c), ajv.errorsText(validators.get('contacts')!.errors)).toBe(true);
    }
    // Two pages of 2: the cursor of the first page reached the third contact.
    const searches = sim.requests.filter((r) => r.path === '/contacts/search');
    expect(searches).toHaveLength(2);
    expect(JSON.parse(searches[0]!.rawBody)).toEqual({ query: { field: 'updated_at', operator: '>', value: since - 1 }, pagination: { per_page: 2 } });
    expect(JSON.parse(searches[1]!.rawBody).pagination.starting_after).toEqual(expect.any(String));
    conformsToDescription('/contacts/search', 'POST /contacts/search');
  });

  it('conversations.changes: the conversations updated after the point', async () => {
    const all = sim.records('conversations');
    const times = all.map((c) => c['updated_at'] as number).sort((a, b) => a - b);
    const since = times[times.length - 6]!;
    const want = all.filter((c) => (c['updated_at'] as number) > since - 1).map((c) => c['id']);
    const got = await collect('conversations', 'changes', { updated_since: since, per_page: 150 });
    expect(got.map((c) => c.id).sort()).toEqual([...want].sort());
    for (const c of got) expect(validators.get('conversations')!(c), ajv.errorsText(validators.get('conversations')!.errors)).toBe(true);
    conformsToDescription('/conversations/search', 'POST /conversations/search');
  });

  it('companies.scroll: every company (including those without users), one scroll, ended by an empty page', async () => {
    const got = await collect('companies', 'scroll', {});
    expect(got.map((c) => c.id)).toEqual(sim.records('companies').map((r) => r.id));
    for (const c of got) expect(validators.get('companies')!(c), ajv.errorsText(validators.get('companies')!.errors)).toBe(true);
    const scrolls = sim.requests.filter((r) => r.path === '/companies/scroll');
    expect(scrolls).toHaveLength(Math.ceil(sim.records('companies').length / scrollPageSize()) + 1);
    expect(scrolls[0]!.query.get('scroll_param')).toBeNull();
    expect(new Set(scrolls.slice(1).map((r) => r.query.get('scroll_param'))).size).toBe(1);
    conformsToDescription('/companies/scroll', 'GET /companies/scroll');
  });

  it('the simulator allows one scroll per app, and refuses a finished or unknown scroll_param', async () => {
    const first = await runtime().pageSteps('companies', {}, undefined, 'scroll').next();
    expect(first.value?.page.data.length).toBe(scrollPageSize());
    const second = await failure(collect('companies', 'scroll', {}));
    expect(second.code).toBe('upstream_rejected');
    expect(second.message).toContain('scroll already exists');
    sim.closeScrolls();
    const stale = await failure(collect('companies', 'scroll', { scroll_param: 'not-a-scroll' }));
    expect(stale.message).toContain('scroll_param is invalid');
  });

  it('the simulator refuses operators a date field does not take, as the description says', async () => {
    const r = await fetch(`${sim.url}/contacts/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sim.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: { field: 'updated_at', operator: '>=', value: 5 } }),
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { errors: { code: string }[] }).errors[0]?.code).toBe('bad_request');
  });

  it('sync-only actions are not exposed through execute', async () => {
    const e = await failure(runtime().execute('contacts', 'changes', { updated_since: 1 }));
    expect(e.code).toBe('unknown_action');
    expect(e.details['valid']).toEqual(['list', 'get', 'create', 'update', 'search']);
    expect((await failure(runtime().execute('companies', 'scroll', {}))).code).toBe('unknown_action');
  });
});

// PostgreSQL shows as skipped, with the reason, when SWITCHBOARD_TEST_POSTGRES_URL is not set.
describeEachDialect('intercom incremental sync on %s', (name) => {
  const open = (groups?: MigrationGroup[]): Promise<TestDatabase> => openTestDatabase(name, groups);
  let tdb: TestDatabase;
  let store: RecordStore;
  let requests: { method: string; path: string }[] = [];
  let big: IntercomSimulator;
  const engines: SyncEngine[] = [];

  beforeAll(async () => {
    // Big enough that a full contacts sync takes 21 pages of 150, so 1% of changes is one search page.
    big = await startIntercomSimulator({ seed: 11, size: 3100 });
    tdb = await open();
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test' });
  });
  afterAll(async () => {
    for (const e of engines) await e.stop();
    await tdb.close();
    await big.close();
  });

  /** A sync engine over `upstream`, syncing the given entities of the Intercom manifest (all by default). */
  function engineFor(upstream: IntercomSimulator, only?: string[]): SyncEngine {
    const view = only === undefined ? manifest : { ...manifest, entities: new Map([...manifest.entities].filter(([name]) => only.includes(name))) };
    const e = new SyncEngine({
      database: tdb.database,
      sink: store,
      fullRefreshEvery: 2,
      runtimeFor: async () => ({
        manifest: view,
        runtime: new ConnectorRuntime(
          manifest,
          { access_token: upstream.accessToken },
          {
            baseUrl: upstream.url,
            limiter: null,
            fetch: async (input, init) => {
              requests.push({ method: init?.method ?? 'GET', path: new URL(input).pathname });
              return fetch(input, init);
            },
          },
        ),
      }),
    });
    engines.push(e);
    return e;
  }

  /** Change 1% of the upstream's contacts, after everything synced so far. */
  function changeOnePercent(upstream: IntercomSimulator, salt: string): string[] {
    const rows = upstream.records('contacts');
    const latest = Math.max(...rows.map((r) => r['updated_at'] as number));
    const changed = rows.filter((_, i) => i % 100 === 7).map((r) => r.id as string);
    for (const id of changed) expect(upstream.updateRecord('contacts', id, { name: `${salt} ${id}` })?.updated_at).toBeGreaterThan(latest);
    return changed;
  }

  it('contacts: after 1% change, an incremental run sends under 5% of the requests of a full one and stores the changes', async () => {
    const def = { primaryKey: 'id', fields: manifest.entities.get('contacts')!.def.search!.fields as Record<string, 'string'> };
    const engine = engineFor(big, ['contacts']);
    await engine.register('ic-big');
    requests = [];
    const full = await engine.runOnce('ic-big');
    expect(full).toMatchObject({ full: true, entities: { contacts: { records: 3100, deleted: 0 } } });
    const fullRequests = requests.length;
    expect(fullRequests).toBe(Math.ceil(3100 / 150));
    expect(requests.every((r) => r.path === '/contacts')).toBe(true);

    const changed = changeOnePercent(big, 'renamed');
    expect(changed).toHaveLength(31);
    requests = [];
    const inc = await engine.runOnce('ic-big');
    expect(inc.full).toBe(false);
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /contacts/search']);
    expect(requests.length / fullRequests).toBeLessThan(0.05);
    expect(inc.entities['contacts']?.records).toBeGreaterThanOrEqual(changed.length);
    const hit = await store.search('ic-big', 'contacts', def, { query: { filter: { eq: { id: changed[0]! } } }, fields: ['id', 'name'] });
    expect(hit.data).toEqual([{ id: changed[0], name: `renamed ${changed[0]}` }]);
    expect(await store.count('ic-big', 'contacts')).toBe(3100);
    // Storing 3,100 contacts with their search indexes takes seconds: a guard, not a timing assertion.
  }, 120_000);

  it('the whole connector: search for contacts and conversations, scroll for companies; the periodic full refresh lists again and drops deleted records', async () => {
    const engine = engineFor(sim);
    await engine.register('ic-all');
    requests = [];
    const full = await engine.runOnce('ic-all');
    expect(full.entities['companies']?.records).toBe(sim.records('companies').length);
    expect(requests.some((r) => r.path === '/companies/scroll')).toBe(true);
    expect(requests.some((r) => r.path === '/companies/list')).toBe(false);
    const fullRequests = requests.length;

    changeOnePercent(sim, 'edited');
    const added = sim.addRecord('contacts', { role: 'lead', name: 'short-lived lead' });
    requests = [];
    const inc = await engine.runOnce('ic-all');
    expect(inc.full).toBe(false);
    const paths = requests.map((r) => `${r.method} ${r.path}`);
    expect(paths.filter((p) => p.includes('/contacts'))).toEqual(['POST /contacts/search']);
    expect(paths.filter((p) => p.includes('/conversations'))).toEqual(['POST /conversations/search']);
    expect(requests.length).toBeLessThan(fullRequests);

    expect(await store.count('ic-all', 'contacts')).toBe(sim.resources.get('contacts')!.records.size);
    // The new contact is deleted upstream (popped: nothing refers to it): the incremental run could
    // not see that, the next full refresh (the third run here, fullRefreshEvery: 2) lists again and removes it.
    const gone = { id: [...sim.resources.get('contacts')!.records.keys()].at(-1)! };
    expect(gone.id).toBe(added.id);
    expect(sim.removeRecord('contacts', gone.id)).toBe(true);
    expect((await engine.runOnce('ic-all')).full).toBe(true);
    expect(await store.count('ic-all', 'contacts')).toBe(sim.resources.get('contacts')!.records.size);
    expect(
      (await store.search('ic-all', 'contacts', { primaryKey: 'id', fields: { id: 'string' } }, { query: { filter: { eq: { id: gone.id } } } })).data,
    ).toEqual([]);
  });
});
