import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConnectorRuntime, SwitchboardError } from '../../src/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { getConnector } from '../../src/manifest/index.ts';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { startMondaySimulator, type MondaySimulator } from '../../connectors/monday/simulator/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations, type SyncEngineOptions } from '../../src/sync/index.ts';
import { dialectCases, type TestDatabase } from '../search/helpers.ts';

const granola = getConnector('granola');
const notesDef = { primaryKey: 'id', fields: granola.entities.get('notes')!.def.search!.fields as Record<string, 'string'> };

// PostgreSQL shows as skipped, with the reason, when SWITCHBOARD_TEST_POSTGRES_URL is not set.
for (const [name, open, skipped] of dialectCases())
  describe.skipIf(skipped !== undefined)(`sync on ${name}${skipped !== undefined ? ` (${skipped})` : ''}`, () => {
    let tdb: TestDatabase;
    let sim: GranolaSimulator;
    let store: RecordStore;
    const engines: SyncEngine[] = [];

    beforeAll(async () => {
      tdb = await open();
      await migrate(tdb.database, [syncMigrations]);
      store = new RecordStore(tdb.database, { cursorSecret: 'test-secret' });
      sim = await startGranolaSimulator({ size: 45, rateLimit: false });
    });
    afterAll(async () => {
      await sim.close();
      await tdb.close();
    });
    afterEach(async () => {
      for (const e of engines.splice(0)) await e.stop();
    });

    function engine(over: Partial<SyncEngineOptions> = {}, fetchImpl?: FetchLike): SyncEngine {
      const e = new SyncEngine({
        database: tdb.database,
        sink: store,
        runtimeFor: async () => ({
          manifest: granola,
          // No client throttle here: the rate-limit test below runs with Granola's real limits.
          runtime: new ConnectorRuntime(
            granola,
            { api_key: sim.apiKey },
            { baseUrl: sim.url, limiter: null, retry: { baseDelayMs: 5 }, ...(fetchImpl ? { fetch: fetchImpl } : {}) },
          ),
        }),
        hydrateConcurrency: 2,
        ...over,
      });
      engines.push(e);
      return e;
    }

    async function storedIds(connectorId: string): Promise<string[]> {
      const r = await store.search(connectorId, 'notes', notesDef, { query: { sort: [{ id: 'asc' }] }, fields: ['id'] });
      return r.data.map((d) => String(d['id']));
    }

    it('a full sync stores every note, hydrated with its transcript', async () => {
      const e = engine();
      await e.register('c-full');
      const result = await e.runOnce('c-full');
      expect(result.full).toBe(true);
      expect(result.entities['notes']).toEqual({ records: 45, deleted: 0, added: 45, updated: 0 });
      expect(await store.count('c-full', 'notes')).toBe(45);
      const id = sim.ids()[0]!;
      const hit = await store.search('c-full', 'notes', notesDef, { query: { filter: { eq: { id } } } });
      expect(hit.data[0]?.['transcript']).toEqual(sim.note(id, { transcript: true })?.transcript);
      const status = await e.status('c-full', granola);
      expect(status).toMatchObject({ status: 'idle', last_error: null, entities: { notes: { records: 45 } } });
    });

    it('an incremental run asks for recent changes only and picks up an edit', async () => {
      const e = engine({ fullRefreshEvery: 100 });
      await e.register('c-inc');
      await e.runOnce('c-inc');
      const id = sim.ids()[10]!;
      sim.touch(id, { title: 'Renamed meeting' });
      sim.reset();
      const second = await e.runOnce('c-inc');
      expect(second.full).toBe(false);
      const listCalls = sim.requests.filter((r) => r.path === '/v1/notes');
      expect(listCalls[0]?.query.get('updated_after')).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(second.entities['notes']!.records).toBeLessThan(45);
      const hit = await store.search('c-inc', 'notes', notesDef, { query: { filter: { eq: { id } } } });
      expect(hit.data[0]?.['title']).toBe('Renamed meeting');
    });

    it('a full refresh removes notes deleted upstream', async () => {
      const e = engine();
      await e.register('c-del');
      await e.runOnce('c-del');
      const gone = sim.ids()[5]!;
      sim.remove(gone);
      const r = await e.runOnce('c-del', { full: true });
      expect(r.entities['notes']).toEqual({ records: sim.count(), deleted: 1, added: 0, updated: 0 });
      expect(await storedIds('c-del')).not.toContain(gone);
      expect(await store.count('c-del', 'notes')).toBe(sim.count());
    });

    it('a sync killed mid-way resumes from its checkpoint and ends like an uninterrupted one', async () => {
      // Reference: an uninterrupted run.
      const ref = engine();
      await ref.register('c-ref');
      await ref.runOnce('c-ref');

      // Killed after 1 of 2 pages: its lease stays (as when a process dies) until it expires.
      const a = engine({ instanceId: 'instance-a', leaseMs: 300 });
      await a.register('c-kill');
      const controller = new AbortController();
      await expect(a.runOnce('c-kill', { signal: controller.signal, onProgress: (p) => p.pages === 1 && controller.abort() })).rejects.toThrow();
      expect(await store.count('c-kill', 'notes')).toBe(30);

      // Another instance cannot take it while the lease is live...
      const b = engine({ instanceId: 'instance-b' });
      await expect(b.runOnce('c-kill')).rejects.toMatchObject({ code: 'sync_running' });
      // ...and takes it over, from the checkpoint, once the lease has expired.
      // Move the clock past the 300 ms lease instead of sleeping through it (Date only: sockets keep real timers).
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 1000 });
      sim.reset();
      const resumed = await b.runOnce('c-kill').finally(() => vi.useRealTimers());
      expect(resumed.resumed).toBe(true);
      expect(sim.requests.filter((r) => r.path === '/v1/notes')).toHaveLength(1);
      expect(await storedIds('c-kill')).toEqual(await storedIds('c-ref'));
      const one = sim.ids()[40]!;
      const [x, y] = await Promise.all(['c-kill', 'c-ref'].map((c) => store.search(c, 'notes', notesDef, { query: { filter: { eq: { id: one } } } })));
      expect(x!.data).toEqual(y!.data);
    });

    it('only one run at a time per connector', async () => {
      const e1 = engine({ instanceId: 'one' });
      const e2 = engine({ instanceId: 'two' });
      await e1.register('c-once');
      const results = await Promise.allSettled([e1.runOnce('c-once'), e2.runOnce('c-once')]);
      const rejected = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
      expect(rejected).toHaveLength(1);
      expect((rejected[0]!.reason as SwitchboardError).code).toBe('sync_running');
    });

    it('the scheduler runs a registered connector, and removing it deletes its data', async () => {
      const e = engine({ pollMs: 50 });
      e.start();
      await e.register('c-sched');
      const deadline = Date.now() + 60_000; // poll with a generous deadline
      while (Date.now() < deadline && (await e.status('c-sched'))?.last_finished_at == null) await new Promise((r) => setTimeout(r, 50));
      expect(await store.count('c-sched', 'notes')).toBe(sim.count());
      await e.remove('c-sched');
      expect(await store.count('c-sched', 'notes')).toBe(0);
      expect(await e.status('c-sched')).toBeUndefined();
    });

    it('a record with lone surrogates is stored with U+FFFD and does not fail the sync', async () => {
      const upstream = await startGranolaSimulator({ size: 3, rateLimit: false });
      try {
        const [id] = upstream.ids();
        upstream.touch(id!, { title: 'lone \ud800 surrogate', summary_markdown: 'trail \udc00 and pair \ud83d\ude00' });
        const e = new SyncEngine({
          database: tdb.database,
          sink: store,
          runtimeFor: async () => ({
            manifest: granola,
            runtime: new ConnectorRuntime(granola, { api_key: upstream.apiKey }, { baseUrl: upstream.url, limiter: null }),
          }),
        });
        engines.push(e);
        await e.register('c-surrogate');
        const r = await e.runOnce('c-surrogate');
        expect(r.entities['notes']).toEqual({ records: 3, added: 3, updated: 0, deleted: 0 });
        expect(await store.count('c-surrogate', 'notes')).toBe(3);
        expect((await e.status('c-surrogate'))?.last_error).toBeNull();
        const hit = await store.search('c-surrogate', 'notes', notesDef, { query: { filter: { eq: { title: 'lone \ufffd surrogate' } } } });
        expect(hit.data.map((d) => d['id'])).toEqual([id]);
        // A well-formed pair is kept as it came.
        expect(hit.data[0]?.['summary_markdown']).toBe('trail \ufffd and pair \ud83d\ude00');
        // A second run over the same data changes nothing and still succeeds.
        await e.runOnce('c-surrogate', { full: true });
        expect(await store.count('c-surrogate', 'notes')).toBe(3);
      } finally {
        await upstream.close();
      }
    });

    it('stays within the rate limit: zero 429s from a rate-limited upstream', async () => {
      const limited = await startGranolaSimulator({ size: 35 });
      const statuses: number[] = [];
      const counting: FetchLike = async (input, init) => {
        const res = await fetch(input, init);
        statuses.push(res.status);
        return res;
      };
      const e = new SyncEngine({
        database: tdb.database,
        sink: store,
        runtimeFor: async () => ({
          manifest: granola,
          runtime: new ConnectorRuntime(granola, { api_key: limited.apiKey }, { baseUrl: limited.url, fetch: counting }),
        }),
      });
      await e.register('c-limited');
      const r = await e.runOnce('c-limited');
      await limited.close();
      expect(r.entities['notes']!.records).toBe(35);
      expect(statuses.length).toBe(2 + 35);
      expect(statuses.filter((s) => s === 429)).toEqual([]);
    });
  });

describe('monday items: fan-out over boards, incremental by newest-first order', () => {
  let tdb: TestDatabase;
  let store: RecordStore;
  let sim: MondaySimulator;
  const monday = getConnector('monday');
  const engine = (over: Partial<SyncEngineOptions> = {}): SyncEngine =>
    new SyncEngine({
      database: tdb.database,
      sink: store,
      runtimeFor: async () => ({ manifest: monday, runtime: new ConnectorRuntime(monday, { api_key: sim.apiKey }, { baseUrl: sim.url, limiter: null }) }),
      ...over,
    });

  beforeAll(async () => {
    tdb = await dialectCases()[0]![1]();
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 's' });
    sim = await startMondaySimulator({ size: 3000 });
  });
  afterAll(async () => {
    await sim.close();
    await tdb.close();
  });

  it("syncs every board, then every board's items across items_page cursors", async () => {
    sim.reset();
    const e = engine();
    await e.register('m1');
    const r = await e.runOnce('m1');
    const active = [...sim.state.items.values()].filter((i) => i.state === 'active').length;
    expect(r.entities['items']!.records).toBe(active);
    expect(await store.count('m1', 'items')).toBe(active);
    expect(r.entities['boards']!.records).toBe(sim.state.boards.length);
    // More than one page per board was needed (limit 500).
    expect(sim.requests.filter((q) => q.rawBody.includes('next_items_page')).length).toBeGreaterThan(0);
  });

  it('an incremental run stops at the first item older than the last run, and picks up the change', async () => {
    const e = engine({ fullRefreshEvery: 100 });
    await e.register('m-inc');
    sim.reset();
    const first = await e.runOnce('m-inc');
    expect(first.full).toBe(true);
    expect(sim.requests.filter((q) => q.rawBody.includes('next_items_page')).length).toBeGreaterThan(0);

    const item = [...sim.state.items.values()].find((i) => i.state === 'active')!;
    item.name = 'Renamed after the first sync';
    item.updated_at = new Date(Date.now() + 60_000).toISOString();
    sim.reset();
    const second = await e.runOnce('m-inc');
    expect(second.full).toBe(false);
    // Each board's first page (newest first) already reaches older items: no further pages.
    expect(sim.requests.filter((q) => q.rawBody.includes('next_items_page'))).toHaveLength(0);
    expect(second.entities['items']!.records).toBeLessThan(first.entities['items']!.records);
    const def = { primaryKey: 'id', fields: monday.entities.get('items')!.def.search!.fields as Record<string, 'string'> };
    const hit = await store.search('m-inc', 'items', def, { query: { filter: { eq: { id: item.id } } }, fields: ['id', 'name'] });
    expect(hit.data).toEqual([{ id: item.id, name: 'Renamed after the first sync' }]);
    expect(await store.count('m-inc', 'items')).toBe(first.entities['items']!.records);
  });

  it('full then incremental sync of an account with an archived, a deleted and a new item: search shows exactly the live items', async () => {
    // Fresh data: the test above moved an item's updated_at into the future.
    sim.resetData();
    const e = engine({ fullRefreshEvery: 100 });
    await e.register('m-live');
    const first = await e.runOnce('m-live');
    expect(first.full).toBe(true);
    const def = { primaryKey: 'id', fields: monday.entities.get('items')!.def.search!.fields as Record<string, 'string'> };
    const storedIds = async (): Promise<string[]> => {
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.search('m-live', 'items', def, {
          query: { sort: [{ id: 'asc' }] },
          fields: ['id'],
          limit: 1000,
          ...(cursor ? { cursor } : {}),
        });
        ids.push(...page.data.map((d) => String(d['id'])));
        cursor = (page.meta as { cursor?: string | null }).cursor ?? undefined;
      } while (cursor);
      return ids;
    };
    const liveIds = () =>
      [...sim.state.items.values()]
        .filter((i) => i.state === 'active')
        .map((i) => i.id)
        .sort();
    expect(await storedIds()).toEqual(liveIds());

    // Through the connector, as a user would: archive one item, delete another, create one.
    const rt = new ConnectorRuntime(monday, { api_key: sim.apiKey }, { baseUrl: sim.url, limiter: null });
    const [a, b] = [...sim.state.items.values()].filter((i) => i.state === 'active' && i.board_id === sim.state.boards[1]!.id);
    await rt.execute('items', 'update', { id: a!.id, board_id: a!.board_id, state: 'archived' });
    await rt.execute('items', 'update', { id: b!.id, board_id: b!.board_id, state: 'deleted' });
    const created = (await rt.execute('items', 'create', { board_id: sim.state.boards[2]!.id, item_name: 'Created between syncs' })) as {
      data: { id: string };
    };

    sim.reset();
    const second = await e.runOnce('m-live');
    expect(second.full).toBe(false);
    expect(second.entities['items']!.deleted).toBe(2);
    // The removals came from each board's activity log since the last run.
    expect(sim.requests.filter((q) => q.rawBody.includes('activity_logs')).length).toBe(sim.state.boards.length);
    const stored = await storedIds();
    expect(stored).toEqual(liveIds());
    expect(stored).toContain(created.data.id);
    expect(stored).not.toContain(a!.id);
    expect(stored).not.toContain(b!.id);
  });

  it('teams and tags are synced, so search on them finds records; updates run incrementally with from_date', async () => {
    sim.resetData();
    const e = engine({ fullRefreshEvery: 100 });
    await e.register('m-more');
    const first = await e.runOnce('m-more');
    expect(first.entities['teams']!.records).toBe(sim.state.teams.length);
    expect(first.entities['tags']!.records).toBe(sim.state.tags.length);
    const teamDef = { primaryKey: 'id', fields: monday.entities.get('teams')!.def.search!.fields as Record<string, 'string'> };
    const hit = await store.search('m-more', 'teams', teamDef, { query: { filter: { eq: { name: 'Design' } } }, fields: ['id', 'name'] });
    expect(hit.data).toEqual([{ id: sim.state.teams.find((t) => t.name === 'Design')!.id, name: 'Design' }]);
    expect(await store.count('m-more', 'tags')).toBe(sim.state.tags.length);
    expect(first.entities['updates']!.records).toBe(sim.state.updates.length);

    const rt = new ConnectorRuntime(monday, { api_key: sim.apiKey }, { baseUrl: sim.url, limiter: null });
    const item = [...sim.state.items.values()].find((i) => i.state === 'active')!;
    const posted = (await rt.execute('updates', 'create', { item_id: item.id, body: 'Posted between syncs' })) as { data: { id: string } };
    sim.reset();
    const second = await e.runOnce('m-more');
    expect(second.full).toBe(false);
    // Only updates created since the last run's newest were asked for.
    const updateCalls = sim.requests
      .map((q) => JSON.parse(q.rawBody) as { query: string; variables?: Record<string, unknown> })
      .filter((q) => q.query.includes('updates(limit: $limit, page: $page, from_date: $from_date'));
    expect(updateCalls.length).toBeGreaterThan(0);
    expect(typeof updateCalls[0]!.variables?.['from_date']).toBe('string');
    expect(second.entities['updates']!.records).toBeLessThan(first.entities['updates']!.records);
    expect(second.entities['updates']!.records).toBeGreaterThanOrEqual(1);
    const updDef = { primaryKey: 'id', fields: monday.entities.get('updates')!.def.search!.fields as Record<string, 'string'> };
    const found = await store.search('m-more', 'updates', updDef, { query: { filter: { eq: { id: posted.data.id } } }, fields: ['id', 'text_body'] });
    expect(found.data).toEqual([{ id: posted.data.id, text_body: 'Posted between syncs' }]);
    expect(await store.count('m-more', 'updates')).toBe(sim.state.updates.length);
  });
});
