/**
 * Marks kept per for_each parent (src/sync/parent-marks.ts): an entity synced once per folder
 * through a change feed per folder (Graph's messages delta under each mail folder) keeps one link
 * per folder. Each folder's link is followed on its own, records the feed reports removed leave
 * search, one folder's expired link (410) lists that folder alone in full, a folder no longer
 * listed leaves the state and a new one lists in full; the same in mode token. On both databases.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConnectorRuntime } from '../../src/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { loadManifestText } from '../../src/manifest/index.ts';
import { RecordStore, searchMigrations } from '../../src/search/index.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { MAX_MARK_CHARS, MAX_PARENT_MARKS, nextParentMarks, parentKey } from '../../src/sync/parent-marks.ts';
import { describeEachDialect } from '../helpers/dialects.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

const MANIFEST = `
manifest_version: 1
type: foldered
title: Foldered
kind: test
base_url: { default: https://mail.example.com/v1 }
auth:
  - { name: token, type: bearer, fields: { token: { type: string, secret: true } }, token: "{{credentials.token}}" }
list_meta:
  delta_link: { type: [string, "null"] }
entities:
  folders:
    primary_key: id
    record: { type: object, required: [id], properties: { id: { type: string } } }
    actions:
      list:
        request: { method: GET, path: /folders }
        response: { records: "{{body.value}}", meta: { delta_link: "{{null}}" } }
  messages:
    primary_key: id
    record: { type: object, required: [id], properties: { id: { type: string }, subject: { type: string } } }
    actions:
      changes:
        params: { folder_id: { type: string, required: true }, top: { type: integer } }
        request: { method: GET, path: "/folders/{{params.folder_id}}/messages/delta", query: { $top: "{{params.top}}" } }
        response: { records: "{{body.value}}", meta: { delta_link: "{{default (get body '@odata.deltaLink') null}}" } }
        pagination: { type: next_url, next: "{{get body '@odata.nextLink'}}" }
    sync:
      action: changes
      params: { top: 2 }
      for_each: { entity: folders, param: folder_id, value: "{{record.id}}" }
      incremental: { mode: link, action: changes, token: delta_link, resync_on: [410] }
      deleted_when: "{{get record '@removed'}}"
    search:
      fields: { id: string, subject: string }
`;

interface Message {
  id: string;
  subject: string;
  seq: number;
  removed?: boolean;
}

/** A mailbox: folders of messages, each folder's delta paged two changes at a time; a folder's tokens below its `valid` are 410 Gone. */
class Mailbox {
  folders = new Map<string, { messages: Map<string, Message>; valid: number }>();
  seq = 0;
  calls: string[] = [];
  folder(id: string): void {
    this.folders.set(id, { messages: new Map(), valid: 0 });
  }
  put(folder: string, id: string, subject: string): void {
    this.folders.get(folder)!.messages.set(id, { id, subject, seq: ++this.seq });
  }
  remove(folder: string, id: string): void {
    const m = this.folders.get(folder)!.messages.get(id)!;
    this.folders.get(folder)!.messages.set(id, { ...m, removed: true, seq: ++this.seq });
  }
  fetch: FetchLike = async (input) => {
    const url = new URL(String(input));
    this.calls.push(`${url.pathname}${url.search}`);
    const json = (status: number, body: unknown): Response => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    if (url.pathname === '/v1/folders') return json(200, { value: [...this.folders.keys()].map((id) => ({ id })) });
    const folderId = /^\/v1\/folders\/([^/]+)\/messages\/delta$/.exec(url.pathname)?.[1];
    const folder = folderId === undefined ? undefined : this.folders.get(folderId);
    if (folder === undefined) return json(404, { error: { code: 'ErrorItemNotFound', message: 'Not found.' } });
    const token = url.searchParams.get('token');
    const since = token === null ? 0 : Number(token);
    if (token !== null && since < folder.valid) return json(410, { error: { code: 'syncStateNotFound', message: 'The sync state is not found.' } });
    // Without a token, what the folder holds; with one, every change since, removals as {id, @removed}.
    const all = [...folder.messages.values()].filter((m) => m.seq > since && (token !== null || m.removed !== true)).sort((a, b) => a.seq - b.seq);
    const page = all.slice(0, 2);
    const more = all.length > 2;
    const link = `https://mail.example.com/v1/folders/${folderId!}/messages/delta?token=${String(more ? page.at(-1)!.seq : this.seq)}`;
    return json(200, {
      value: page.map((m) => (m.removed === true ? { id: m.id, '@removed': { reason: 'deleted' } } : { id: m.id, subject: m.subject })),
      ...(more ? { '@odata.nextLink': link } : { '@odata.deltaLink': link }),
    });
  };
}

describeEachDialect('sync: marks kept per for_each parent (%s)', (dialect) => {
  const manifest = loadManifestText(MANIFEST, 'foldered.yaml');
  const def = { primaryKey: 'id', fields: { id: 'string', subject: 'string' } as Record<string, 'string'> };
  let tdb: TestDatabase;
  let store: RecordStore;
  const box = new Mailbox();
  let engine: SyncEngine;

  beforeAll(async () => {
    tdb = await openTestDatabase(dialect, [searchMigrations, syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test-secret' });
    engine = new SyncEngine({
      database: tdb.database,
      sink: store,
      runtimeFor: async () => ({
        manifest,
        runtime: new ConnectorRuntime(manifest, { token: 't' }, { fetch: box.fetch, limiter: null, retry: { baseDelayMs: 1 } }),
      }),
      fullRefreshEvery: 100,
    });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
  });

  const stored = async (): Promise<string[]> =>
    (await store.search('c', 'messages', def, { query: { sort: [{ id: 'asc' }] }, fields: ['id', 'subject'] })).data.map(
      (d) => `${String(d['id'])}:${String(d['subject'])}`,
    );
  /** The links kept, by folder id. */
  const links = async (): Promise<Record<string, string>> => {
    const row = await tdb.database.db
      .selectFrom('sync_entities' as never)
      .select('high_water' as never)
      .where('connector_id' as never, '=', 'c' as never)
      .where('entity' as never, '=', 'messages' as never)
      .executeTakeFirstOrThrow();
    const parents = (JSON.parse(String((row as { high_water: string }).high_water)) as { parents: Record<string, string> }).parents;
    return Object.fromEntries(Object.entries(parents).map(([k, v]) => [(JSON.parse(k) as [string, string][])[0]![1], new URL(v).search]));
  };

  it('follows each folder’s own link; removals leave search; an expired link relists its folder alone; gone folders leave the state', async () => {
    box.folder('archive');
    box.folder('inbox');
    box.put('inbox', 'm1', 'One');
    box.put('inbox', 'm2', 'Two');
    box.put('inbox', 'm3', 'Three');
    box.put('archive', 'a1', 'Old');
    await engine.register('c');
    expect((await engine.runOnce('c')).full).toBe(true);
    expect(box.calls).toEqual([
      '/v1/folders',
      '/v1/folders/archive/messages/delta?%24top=2',
      '/v1/folders/inbox/messages/delta?%24top=2',
      '/v1/folders/inbox/messages/delta?token=2',
    ]);
    expect(await stored()).toEqual(['a1:Old', 'm1:One', 'm2:Two', 'm3:Three']);
    expect(await links()).toEqual({ archive: '?token=4', inbox: '?token=4' });

    // Each folder's link is requested as given: m2 removed and m4 added in the inbox, the archive unchanged.
    box.remove('inbox', 'm2');
    box.put('inbox', 'm4', 'Four');
    box.calls = [];
    const inc = await engine.runOnce('c');
    expect(inc.full).toBe(false);
    expect(box.calls).toEqual(['/v1/folders', '/v1/folders/archive/messages/delta?token=4', '/v1/folders/inbox/messages/delta?token=4']);
    expect(inc.entities['messages']).toMatchObject({ deleted: 1 });
    expect(await stored()).toEqual(['a1:Old', 'm1:One', 'm3:Three', 'm4:Four']);
    expect(await links()).toEqual({ archive: '?token=6', inbox: '?token=6' });

    // The archive's link expired (410): the archive alone lists in full, the inbox follows its link.
    box.folders.get('archive')!.valid = 100;
    box.put('archive', 'a2', 'Older');
    box.put('inbox', 'm5', 'Five');
    box.calls = [];
    await engine.runOnce('c');
    expect(box.calls).toEqual([
      '/v1/folders',
      '/v1/folders/archive/messages/delta?token=6',
      '/v1/folders/archive/messages/delta?%24top=2',
      '/v1/folders/inbox/messages/delta?token=6',
    ]);
    expect(await stored()).toEqual(['a1:Old', 'a2:Older', 'm1:One', 'm3:Three', 'm4:Four', 'm5:Five']);
    expect(await links()).toEqual({ archive: '?token=8', inbox: '?token=8' });

    // The archive is gone and a new folder appears: its link leaves the state, the new folder lists in full.
    box.folders.delete('archive');
    box.folders.get('inbox')!.valid = 0;
    box.folder('projects');
    box.put('projects', 'p1', 'Plan');
    box.calls = [];
    await engine.runOnce('c');
    expect(box.calls).toEqual(['/v1/folders', '/v1/folders/inbox/messages/delta?token=8', '/v1/folders/projects/messages/delta?%24top=2']);
    expect(await links()).toEqual({ inbox: '?token=9', projects: '?token=9' });

    // A full run lists every folder without a link and drops what it did not see (the archive's messages).
    box.calls = [];
    expect((await engine.runOnce('c', { full: true })).entities['messages']).toMatchObject({ deleted: 2 });
    expect(box.calls).toEqual([
      '/v1/folders',
      '/v1/folders/inbox/messages/delta?%24top=2',
      '/v1/folders/inbox/messages/delta?token=3',
      '/v1/folders/inbox/messages/delta?token=6',
      '/v1/folders/projects/messages/delta?%24top=2',
    ]);
    expect(await stored()).toEqual(['m1:One', 'm3:Three', 'm4:Four', 'm5:Five', 'p1:Plan']);
  });
});

it('keeps at most MAX_PARENT_MARKS parents and marks of at most MAX_MARK_CHARS characters', () => {
  const parents = Array.from({ length: MAX_PARENT_MARKS + 5 }, (_, i) => ({ folder_id: `f${String(i)}` }));
  const run: Record<string, string | null> = Object.fromEntries(parents.map((p) => [parentKey(p), `https://x.example/d?t=${p.folder_id}`]));
  run[parentKey(parents[1]!)] = `https://x.example/${'x'.repeat(MAX_MARK_CHARS)}`;
  run[parentKey(parents[2]!)] = null;
  const next = nextParentMarks(
    { [parentKey(parents[2]!)]: 'https://x.example/old', [parentKey({ folder_id: 'gone' })]: 'https://x.example/gone' },
    run,
    parents,
  );
  expect(Object.keys(next.parents)).toHaveLength(MAX_PARENT_MARKS);
  expect(next.parents[parentKey(parents[MAX_PARENT_MARKS + 1]!)]).toBeDefined();
  expect(next.parents[parentKey(parents[MAX_PARENT_MARKS + 2]!)]).toBeUndefined();
  expect(next.parents[parentKey(parents[0]!)]).toBe('https://x.example/d?t=f0');
  expect(next.parents[parentKey(parents[1]!)]).toBeUndefined();
  expect(next.parents[parentKey(parents[2]!)]).toBeUndefined();
  expect(next.parents[parentKey({ folder_id: 'gone' })]).toBeUndefined();
  // The key is the parent's params, in any order.
  expect(parentKey({ b: 1, a: 2 })).toBe(parentKey({ a: 2, b: 1 }));
});

it('is refused by the loader with incremental.start and for_each', () => {
  const tokenMode = MANIFEST.replace(
    'incremental: { mode: link, action: changes, token: delta_link, resync_on: [410] }',
    'incremental: { mode: token, action: changes, param: top, token: delta_link, start: { entity: folders, token: "{{record.id}}" } }',
  );
  expect(() => loadManifestText(tokenMode, 'foldered.yaml')).toThrow(/cannot start a token per for_each parent/);
});

it('keeps a token per parent in mode token: each parent sends its own in the param', async () => {
  const TOKENS = `
manifest_version: 1
type: tokened
title: Tokened
kind: test
base_url: { default: https://cal.example.com/v1 }
auth:
  - { name: token, type: bearer, fields: { token: { type: string, secret: true } }, token: "{{credentials.token}}" }
list_meta:
  next_sync_token: { type: [string, "null"] }
entities:
  calendars:
    primary_key: id
    record: { type: object, required: [id], properties: { id: { type: string } } }
    actions:
      list:
        request: { method: GET, path: /calendars }
        response: { records: "{{body.items}}", meta: { next_sync_token: "{{null}}" } }
  events:
    primary_key: id
    record: { type: object, required: [id], properties: { id: { type: string } } }
    actions:
      list:
        params: { calendar_id: { type: string, required: true }, sync_token: { type: string } }
        request: { method: GET, path: "/calendars/{{params.calendar_id}}/events", query: { syncToken: "{{params.sync_token}}" } }
        response: { records: "{{body.items}}", meta: { next_sync_token: "{{default body.nextSyncToken null}}" } }
    sync:
      for_each: { entity: calendars, param: calendar_id, value: "{{record.id}}" }
      incremental: { mode: token, param: sync_token, token: next_sync_token, resync_on: [410] }
    search:
      fields: { id: string }
`;
  const m = loadManifestText(TOKENS, 'tokened.yaml');
  const calls: string[] = [];
  let round = 0;
  const fetchImpl: FetchLike = async (input) => {
    const url = new URL(String(input));
    const json = (body: unknown): Response => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
    if (url.pathname === '/v1/calendars') return json({ items: [{ id: 'work' }, { id: 'home' }] });
    calls.push(`${url.pathname}${url.search}`);
    const cal = url.pathname.split('/')[3]!;
    return json({ items: [{ id: `${cal}-${String(round)}` }], nextSyncToken: `${cal}-t${String(round)}` });
  };
  const tdb = await openTestDatabase('sqlite', [searchMigrations, syncMigrations]);
  const engine = new SyncEngine({
    database: tdb.database,
    sink: new RecordStore(tdb.database, { cursorSecret: 'test-secret' }),
    runtimeFor: async () => ({ manifest: m, runtime: new ConnectorRuntime(m, { token: 't' }, { fetch: fetchImpl, limiter: null, retry: { baseDelayMs: 1 } }) }),
    fullRefreshEvery: 100,
  });
  try {
    await engine.register('c');
    await engine.runOnce('c');
    expect(calls).toEqual(['/v1/calendars/work/events', '/v1/calendars/home/events']);
    round = 1;
    calls.length = 0;
    await engine.runOnce('c');
    expect(calls).toEqual(['/v1/calendars/work/events?syncToken=work-t0', '/v1/calendars/home/events?syncToken=home-t0']);
  } finally {
    await engine.stop();
    await tdb.close();
  }
});
