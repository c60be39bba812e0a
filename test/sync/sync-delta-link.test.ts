/**
 * `incremental.mode: link`: a change feed (Graph's delta) whose full pass is the feed itself with
 * no mark (sync.action: changes), paged by next-page URLs and ended by a link (@odata.deltaLink)
 * that the next run requests as is; records the feed marks deleted leave search, a link the
 * upstream refuses as expired (410) starts the pass over in full, and a link to another host is
 * never followed. The upstream is a stand-in fetch over an in-memory drive.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FetchLike } from '../../src/http/index.ts';
import { loadManifestText } from '../../src/manifest/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { SyncEngine } from '../../src/sync/index.ts';
import { json, openFeedSync, storedItems } from './sync-helpers.ts';

const MANIFEST = `
manifest_version: 1
type: linked
title: Linked
kind: test
base_url: { default: https://feed.example.com/v1 }
auth:
  - { name: token, type: bearer, fields: { token: { type: string, secret: true } }, token: "{{credentials.token}}" }
list_meta:
  delta_link: { type: [string, "null"] }
entities:
  items:
    primary_key: id
    record: { type: object, required: [id], properties: { id: { type: string }, name: { type: string }, deleted: { type: [object, "null"] } } }
    actions:
      changes:
        params: { top: { type: integer } }
        request: { method: GET, path: /items/delta, query: { $top: "{{params.top}}" } }
        response: { records: "{{body.value}}", meta: { delta_link: "{{default (get body '@odata.deltaLink') null}}" } }
        pagination: { type: next_url, next: "{{get body '@odata.nextLink'}}" }
    sync:
      action: changes
      params: { top: 2 }
      incremental: { mode: link, action: changes, token: delta_link, resync_on: [410] }
      deleted_when: "{{record.deleted}}"
    search:
      fields: { id: string, name: string }
`;

/** A drive whose delta pages two changes at a time; a token names the change it follows; tokens before `valid` are 410 Gone. */
class Drive {
  items = new Map<string, { id: string; name: string; seq: number; deleted?: boolean }>();
  seq = 0;
  valid = 0;
  host = 'https://feed.example.com';
  calls: string[] = [];
  put(id: string, name: string): void {
    this.items.set(id, { id, name, seq: ++this.seq });
  }
  remove(id: string): void {
    const item = this.items.get(id);
    if (item !== undefined) this.items.set(id, { ...item, deleted: true, seq: ++this.seq });
  }
  fetch: FetchLike = async (input) => {
    const url = new URL(String(input));
    this.calls.push(`${url.pathname}${url.search}`);
    const token = url.searchParams.get('token');
    const since = token === null ? 0 : Number(token);
    if (token !== null && since < this.valid) return json(410, { error: { code: 'resyncRequired', message: 'Resync required.' } });
    // A pass without a token lists what exists; with one, every change since, deletions included.
    const all = [...this.items.values()].filter((i) => i.seq > since && (token !== null || i.deleted !== true)).sort((a, b) => a.seq - b.seq);
    const page = all.slice(0, 2);
    const more = all.length > 2;
    const at = more ? page.at(-1)!.seq : this.seq;
    const link = `${this.host}/v1/items/delta?token=${String(at)}`;
    return json(200, {
      value: page.map(({ id, name, deleted }) => ({ id, name, ...(deleted === true ? { deleted: { state: 'deleted' } } : {}) })),
      ...(more ? { '@odata.nextLink': link } : { '@odata.deltaLink': link }),
    });
  };
}

describe('sync: incremental mode link (a delta link followed as is)', () => {
  const manifest = loadManifestText(MANIFEST, 'linked.yaml');
  const def = { primaryKey: 'id', fields: { id: 'string', name: 'string' } as Record<string, 'string'> };
  let store: RecordStore;
  const drive = new Drive();
  let engine: SyncEngine;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, engine, close } = await openFeedSync(manifest, drive.fetch));
  });
  afterAll(() => close());

  const stored = (): Promise<string[]> => storedItems(store, def, 'name');

  it('pages the feed in full, then follows the last link; deleted items leave search; an expired link lists in full', async () => {
    drive.put('a', 'A');
    drive.put('b', 'B');
    drive.put('c', 'C');
    await engine.register('c');
    expect((await engine.runOnce('c')).full).toBe(true);
    expect(drive.calls).toEqual(['/v1/items/delta?%24top=2', '/v1/items/delta?token=2']);
    expect(await stored()).toEqual(['a:A', 'b:B', 'c:C']);

    // The next run requests the delta link as given: b renamed, c deleted, d added.
    drive.put('b', 'B2');
    drive.remove('c');
    drive.put('d', 'D');
    drive.calls = [];
    const inc = await engine.runOnce('c');
    expect(inc.full).toBe(false);
    expect(drive.calls).toEqual(['/v1/items/delta?token=3', '/v1/items/delta?token=5']);
    expect(inc.entities['items']).toMatchObject({ deleted: 1 });
    expect(await stored()).toEqual(['a:A', 'b:B2', 'd:D']);

    // Nothing changed: one request, the same link back, which stays the mark.
    drive.calls = [];
    await engine.runOnce('c');
    expect(drive.calls).toEqual(['/v1/items/delta?token=6']);

    // The link expired upstream (410): the pass starts over without a token and drops what it did not see.
    drive.items.delete('a');
    drive.valid = 100;
    drive.calls = [];
    const again = await engine.runOnce('c');
    expect(drive.calls).toEqual(['/v1/items/delta?token=6', '/v1/items/delta?%24top=2']);
    expect(again.entities['items']).toMatchObject({ deleted: 1 });
    expect(await stored()).toEqual(['b:B2', 'd:D']);
  });

  it('refuses a link to another host', async () => {
    drive.valid = 0;
    drive.host = 'https://elsewhere.example.com';
    await engine.register('x');
    await engine.runOnce('x');
    drive.calls = [];
    await expect(engine.runOnce('x')).rejects.toThrow(/another host/);
    expect(drive.calls).toEqual([]);
  });

  it('is refused by the loader without a next-URL pagination or a list_meta field for the link', () => {
    const broken = MANIFEST.replace('pagination: { type: next_url, next: "{{get body \'@odata.nextLink\'}}" }', '').replace('token: delta_link', 'token: nope');
    expect(() => loadManifestText(broken, 'linked.yaml')).toThrow(/needs next_url or link_header pagination[\s\S]*"nope" is not a list_meta field/);
  });
});
