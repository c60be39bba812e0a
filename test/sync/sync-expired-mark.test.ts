/**
 * A change feed keyed by a mark the upstream can expire (a mailbox history id, a sync token):
 * `incremental.resync_on` starts the entity's pass over in full when the upstream refuses the
 * mark, and `hydrate.missing: delete` deletes from search a record the feed names but whose get
 * answers 404 (deleted since). The upstream is a stand-in fetch over an in-memory list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FetchLike } from '../../src/http/index.ts';
import { loadManifestText } from '../../src/manifest/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { SyncEngine } from '../../src/sync/index.ts';
import { json, openFeedSync, storedItems } from './sync-helpers.ts';

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
  let store: RecordStore;
  const up = new Upstream();
  let engine: SyncEngine;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, engine, close } = await openFeedSync(manifest, up.fetch));
  });
  afterAll(() => close());

  const stored = (): Promise<string[]> => storedItems(store, def, 'title');

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

const TOKEN_MANIFEST = `
manifest_version: 1
type: tokened
title: Tokened
kind: test
base_url: { default: https://feed.example.com }
auth:
  - { name: token, type: bearer, fields: { token: { type: string, secret: true } }, token: "{{credentials.token}}" }
list_meta:
  next_sync_token: { type: [string, "null"] }
entities:
  events:
    primary_key: id
    record: { type: object, required: [id], properties: { id: { type: string }, status: { type: string }, title: { type: string } } }
    actions:
      list:
        params: { page_token: { type: string }, sync_token: { type: string } }
        request: { method: GET, path: /events, query: { pageToken: "{{params.page_token}}", syncToken: "{{params.sync_token}}" } }
        response: { records: "{{flatten body.items}}", meta: { next_sync_token: "{{default body.nextSyncToken null}}" } }
        pagination: { type: cursor, param: page_token, next: "{{body.nextPageToken}}" }
    sync:
      incremental: { mode: token, param: sync_token, token: next_sync_token, resync_on: [410] }
      deleted_when: "{{eq record.status 'cancelled'}}"
    search:
      fields: { id: string, title: string }
`;

/** A calendar: events in pages of two, the sync token on the last page; tokens before `valid` are 410 Gone. */
class Calendar {
  events = new Map<string, { id: string; status: string; title: string; seq: number }>();
  seq = 0;
  valid = 0;
  calls: string[] = [];
  put(id: string, title: string, status = 'confirmed'): void {
    this.events.set(id, { id, status, title, seq: ++this.seq });
  }
  fetch: FetchLike = async (input) => {
    const url = new URL(String(input));
    this.calls.push(url.search);
    const token = url.searchParams.get('syncToken');
    if (token !== null && Number(token.slice(4)) < this.valid)
      return json(410, { error: { code: 410, message: 'Sync token is no longer valid, a full sync is required.' } });
    const since = token === null ? 0 : Number(token.slice(4));
    // A full list leaves out cancelled events; a token's list has them.
    const all = [...this.events.values()].filter((e) => e.seq > since && (token !== null || e.status !== 'cancelled'));
    const start = Number(url.searchParams.get('pageToken') ?? 0);
    const page = all.slice(start, start + 2).map(({ id, status, title }) => ({ id, status, title }));
    const last = start + 2 >= all.length;
    return json(200, { items: page, ...(last ? { nextSyncToken: `tok-${this.seq}` } : { nextPageToken: String(start + 2) }) });
  };
}

describe('sync: incremental by a sync token (mode token)', () => {
  const manifest = loadManifestText(TOKEN_MANIFEST, 'tokened.yaml');
  const def = { primaryKey: 'id', fields: { id: 'string', title: 'string' } as Record<string, 'string'> };
  let store: RecordStore;
  const cal = new Calendar();
  let engine: SyncEngine;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, engine, close } = await openFeedSync(manifest, cal.fetch));
  });
  afterAll(() => close());

  const stored = (): Promise<string[]> => storedItems(store, def, 'title', 't', 'events');

  it("keeps the last page's token, sends it next run, applies cancellations, and lists in full when it is gone (410)", async () => {
    for (const id of ['a', 'b', 'c']) cal.put(id, id.toUpperCase());
    await engine.register('t');
    await engine.runOnce('t');
    expect(cal.calls).toEqual(['', '?pageToken=2']);
    expect(await stored()).toEqual(['a:A', 'b:B', 'c:C']);

    cal.put('b', 'B2');
    cal.put('c', 'C', 'cancelled');
    cal.calls = [];
    const inc = await engine.runOnce('t');
    expect(cal.calls).toEqual(['?syncToken=tok-3']);
    expect(inc.entities['events']).toMatchObject({ deleted: 1 });
    expect(await stored()).toEqual(['a:A', 'b:B2']);

    // The next token is the last page's, not a record's: nothing changed, the same token again.
    cal.calls = [];
    await engine.runOnce('t');
    expect(cal.calls).toEqual(['?syncToken=tok-5']);

    cal.events.delete('a');
    cal.put('d', 'D');
    cal.valid = 100;
    cal.calls = [];
    await engine.runOnce('t');
    expect(cal.calls).toEqual(['?syncToken=tok-5', '']);
    expect(await stored()).toEqual(['b:B2', 'd:D']);
    cal.valid = 0;
    cal.calls = [];
    await engine.runOnce('t');
    expect(cal.calls).toEqual(['?syncToken=tok-6']);
  });

  it('refuses mode token without a list_meta token field; with for_each a token is kept per parent (sync-parent-marks.test.ts)', () => {
    expect(() => loadManifestText(TOKEN_MANIFEST.replace('token: next_sync_token,', 'token: nope,'), 'x.yaml')).toThrow(/"nope" is not a list_meta field/);
    expect(() =>
      loadManifestText(
        TOKEN_MANIFEST.replace('      deleted_when:', '      for_each: { entity: events, param: page_token, value: "{{record.id}}" }\n      deleted_when:'),
        'x.yaml',
      ),
    ).not.toThrow(/token/);
  });
});

const START_MANIFEST = `
manifest_version: 1
type: drivish
title: Drivish
kind: test
base_url: { default: https://feed.example.com }
auth:
  - { name: token, type: bearer, fields: { token: { type: string, secret: true } }, token: "{{credentials.token}}" }
list_meta:
  new_start_page_token: { type: [string, "null"] }
entities:
  start_page_token:
    primary_key: startPageToken
    record: { type: object, required: [startPageToken], properties: { startPageToken: { type: string } } }
    actions:
      get:
        request: { method: GET, path: /changes/startPageToken }
        response: { record: "{{body}}" }
  files:
    primary_key: id
    record: { type: object, required: [id], properties: { id: { type: string }, name: { type: string } } }
    actions:
      list:
        request: { method: GET, path: /files }
        response: { records: "{{flatten body.files}}", meta: { new_start_page_token: "{{null}}" } }
      changes:
        params: { page_token: { type: string, required: true } }
        request: { method: GET, path: /changes, query: { pageToken: "{{params.page_token}}" } }
        response:
          records: "{{flatten body.changes}}"
          meta: { new_start_page_token: "{{default body.newStartPageToken null}}" }
          map: { id: "{{record.fileId}}", name: "{{record.file.name}}" }
        pagination: { type: cursor, param: page_token, next: "{{body.nextPageToken}}" }
    sync:
      incremental: { mode: token, action: changes, param: page_token, token: new_start_page_token, start: { entity: start_page_token, token: "{{record.startPageToken}}" } }
      deleted_when: "{{record.removed}}"
    search:
      fields: { id: string, name: string }
`;

describe('sync: mode token started from a token endpoint (incremental.start)', () => {
  const manifest = loadManifestText(START_MANIFEST, 'drivish.yaml');
  let engine: SyncEngine;
  let close: () => Promise<void>;
  const calls: string[] = [];
  let log: { fileId: string; removed: boolean; file?: { name: string } }[] = [];
  const fetchImpl: FetchLike = async (input) => {
    const url = new URL(String(input));
    calls.push(`${url.pathname}${url.search}`);
    if (url.pathname === '/changes/startPageToken') return json(200, { startPageToken: String(log.length) });
    if (url.pathname === '/files') return json(200, { files: [{ id: 'f1', name: 'One' }] });
    const from = Number(url.searchParams.get('pageToken'));
    return json(200, { changes: log.slice(from), newStartPageToken: String(log.length) });
  };

  beforeAll(async () => {
    ({ engine, close } = await openFeedSync(manifest, fetchImpl));
  });
  afterAll(() => close());

  it('asks for the start token before the full pass, then reads the changes from it', async () => {
    log = [{ fileId: 'f0', removed: false, file: { name: 'Old' } }];
    await engine.register('d');
    await engine.runOnce('d');
    expect(calls.splice(0)).toEqual(['/changes/startPageToken', '/files']);
    log.push({ fileId: 'f1', removed: true }, { fileId: 'f2', removed: false, file: { name: 'Two' } });
    const inc = await engine.runOnce('d');
    expect(calls.splice(0)).toEqual(['/changes?pageToken=1']);
    expect(inc.entities['files']).toMatchObject({ deleted: 1, added: 1 });
    await engine.runOnce('d');
    expect(calls.splice(0)).toEqual(['/changes?pageToken=3']);
  });
});
