/**
 * A change feed keyed by a mark the upstream can expire (a mailbox history id, a sync token):
 * `incremental.resync_on` starts the entity's pass over in full when the upstream refuses the
 * mark, and `hydrate.missing: delete` deletes from search a record the feed names but whose get
 * answers 404 (deleted since). The upstream is a stand-in fetch over an in-memory list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorRuntime } from '../../src/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { loadManifestText } from '../../src/manifest/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

const MANIFEST = `
manifest_version: 1
type: feed
title: Feed
kind: test
base_url: { default: https://feed.example.com }
auth:
  - { name: token, type: bearer, fields: { token: { type: string, secret: true } }, token: "{{credentials.token}}" }
entities:
  items:
    primary_key: id
    record: { type: object, required: [id], properties: { id: { type: string }, version: { type: string }, title: { type: string } } }
    actions:
      list:
        params: { page_token: { type: string } }
        request: { method: GET, path: /items, query: { page_token: "{{params.page_token}}" } }
        response: { records: "{{body.items}}" }
        pagination: { type: cursor, param: page_token, next: "{{body.next}}" }
      get:
        params: { id: { type: string, required: true } }
        request: { method: GET, path: "/items/{{params.id}}" }
        response: { record: "{{body}}" }
      changes:
        params: { since: { type: string, required: true }, page_token: { type: string } }
        request: { method: GET, path: /history, query: { since: "{{params.since}}", page_token: "{{params.page_token}}" } }
        response: { records: "{{flatten (pluck body.history 'items')}}" }
        pagination: { type: cursor, param: page_token, next: "{{body.next}}" }
    sync:
      incremental: { action: changes, param: since, cursor_field: version, format: raw, resync_on: [404] }
      hydrate: { action: get, params: { id: "{{record.id}}" }, missing: delete }
    search:
      fields: { id: string, title: string }
`;

/** The upstream: items with versions; a history of changes after a version, older than `oldest` refused with 404. */
class Upstream {
  items = new Map<string, { id: string; version: string; title: string }>();
  /** Every change: [version, item id]. */
  log: [string, string][] = [];
  oldest = '100';
  calls: string[] = [];
  private v = 100;
  put(id: string, title: string): void {
    const version = String(++this.v);
    this.items.set(id, { id, version, title });
    this.log.push([version, id]);
  }
  remove(id: string): void {
    this.items.delete(id);
    this.log.push([String(++this.v), id]);
  }
  fetch: FetchLike = async (input) => {
    const url = new URL(String(input));
    this.calls.push(`${url.pathname}${url.search}`);
    const json = (status: number, body: unknown): Response => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    if (url.pathname === '/items') return json(200, { items: [...this.items.values()].map(({ id }) => ({ id })) });
    if (url.pathname.startsWith('/items/')) {
      const item = this.items.get(decodeURIComponent(url.pathname.slice('/items/'.length)));
      return item ? json(200, item) : json(404, { error: 'not found' });
    }
    const since = url.searchParams.get('since') ?? '';
    if (since < this.oldest) return json(404, { error: 'history expired' });
    return json(200, { history: this.log.filter(([v]) => v > since).map(([v, id]) => ({ id: v, items: [{ id }] })) });
  };
}

describe('sync: an expired mark and records gone by hydration', () => {
  const manifest = loadManifestText(MANIFEST, 'feed.yaml');
  const def = { primaryKey: 'id', fields: { id: 'string', title: 'string' } as Record<string, 'string'> };
  let tdb: TestDatabase;
  let store: RecordStore;
  const up = new Upstream();
  let engine: SyncEngine;

  beforeAll(async () => {
    tdb = await openTestDatabase('sqlite');
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test-secret' });
    engine = new SyncEngine({
      database: tdb.database,
      sink: store,
      runtimeFor: async () => ({
        manifest,
        runtime: new ConnectorRuntime(manifest, { token: 't' }, { fetch: up.fetch, limiter: null, retry: { baseDelayMs: 1 } }),
      }),
      fullRefreshEvery: 100,
    });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
  });

  const stored = async (): Promise<string[]> =>
    (await store.search('c', 'items', def, { query: { sort: [{ id: 'asc' }] }, fields: ['id', 'title'] })).data.map(
      (d) => `${String(d['id'])}:${String(d['title'])}`,
    );

  it('reads changes after the mark, deletes a changed record that is gone, and lists in full when the mark expired', async () => {
    up.put('a', 'A');
    up.put('b', 'B');
    up.put('c', 'C');
    await engine.register('c');
    expect((await engine.runOnce('c')).full).toBe(true);
    expect(await stored()).toEqual(['a:A', 'b:B', 'c:C']);

    // Incremental: b edited, c deleted (the feed names it, its get answers 404).
    up.put('b', 'B2');
    up.remove('c');
    up.calls = [];
    const inc = await engine.runOnce('c');
    expect(inc.full).toBe(false);
    expect(up.calls[0]).toBe('/history?since=103');
    expect(inc.entities['items']).toMatchObject({ deleted: 1 });
    expect(await stored()).toEqual(['a:A', 'b:B2']);

    // The mark is the newest version stored (b's 104: a deletion leaves nothing to read a version from).
    // The upstream forgets history before 200: the mark is refused, the pass lists everything and drops what is gone.
    up.put('d', 'D');
    up.items.delete('a');
    up.oldest = '200';
    up.calls = [];
    const again = await engine.runOnce('c');
    expect(up.calls.filter((c) => !c.startsWith('/items/'))).toEqual(['/history?since=104', '/items']);
    expect(again.entities['items']).toMatchObject({ deleted: 1 });
    expect(await stored()).toEqual(['b:B2', 'd:D']);

    // The new mark is the full pass's: the next run reads history from it (and fails when the upstream refuses it for another reason).
    up.oldest = '0';
    up.calls = [];
    await engine.runOnce('c');
    expect(up.calls).toEqual(['/history?since=106']);
  });
});
