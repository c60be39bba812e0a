/**
 * Google Drive's quirks: the fields every request asks for, shared drives on every call, and the
 * sync through the Changes API (the start page token read before a full listing, then the
 * changes since; removed and trashed files leave search). The upstream is a stand-in fetch
 * answering as Drive does (the generic simulator serves the changes as a fixed example).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorRuntime } from '../../src/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { getConnector } from '../../src/manifest/index.ts';
import { RecordStore } from '../../src/search/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { openTestDatabase, type TestDatabase } from '../search/helpers.ts';

const drive = getConnector('google_drive');
const json = (body: unknown): Response => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });

describe('google_drive', () => {
  let tdb: TestDatabase;
  let store: RecordStore;
  let engine: SyncEngine;
  const calls: URL[] = [];
  type Change = { changeType: string; fileId?: string; removed: boolean; file?: Record<string, unknown> };
  const log: Change[] = [];
  const fetchImpl: FetchLike = async (input) => {
    const url = new URL(String(input));
    calls.push(url);
    if (url.pathname.endsWith('/changes/startPageToken')) return json({ kind: 'drive#startPageToken', startPageToken: String(100 + log.length) });
    if (url.pathname.endsWith('/files'))
      return json({
        files: [
          { id: '1Abc', name: 'Q3 budget', mimeType: 'application/vnd.google-apps.spreadsheet', trashed: false },
          { id: '1Def', name: 'Notes', trashed: false },
        ],
      });
    const from = Number(url.searchParams.get('pageToken')) - 100;
    return json({ kind: 'drive#changeList', changes: log.slice(from), newStartPageToken: String(100 + log.length) });
  };
  beforeAll(async () => {
    tdb = await openTestDatabase('sqlite');
    await migrate(tdb.database, [syncMigrations]);
    store = new RecordStore(tdb.database, { cursorSecret: 'test-secret' });
    engine = new SyncEngine({
      database: tdb.database,
      sink: store,
      runtimeFor: async () => ({ manifest: drive, runtime: new ConnectorRuntime(drive, { access_token: 'ya29.t' }, { fetch: fetchImpl, limiter: null }) }),
      fullRefreshEvery: 100,
    });
  });
  afterAll(async () => {
    await engine.stop();
    await tdb.close();
  });
  const stored = async (): Promise<string[]> =>
    (
      await store.search(
        'd',
        'files',
        { primaryKey: 'id', fields: { id: 'string', name: 'string' } },
        { query: { sort: [{ id: 'asc' }] }, fields: ['id', 'name'] },
      )
    ).data.map((d) => `${String(d['id'])}:${String(d['name'])}`);

  it('lists with the fields it reads and shared drives included', async () => {
    calls.length = 0;
    await new ConnectorRuntime(drive, { access_token: 'ya29.t' }, { fetch: fetchImpl, limiter: null }).execute('files', 'list', {
      q: "name contains 'budget'",
    });
    const q = calls[0]!.searchParams;
    expect(q.get('q')).toBe("name contains 'budget'");
    expect(q.get('supportsAllDrives')).toBe('true');
    expect(q.get('includeItemsFromAllDrives')).toBe('true');
    expect(q.get('fields')).toMatch(/^nextPageToken,files\(id,name,mimeType,.*modifiedTime,trashed/);
  });

  it('syncs from the start page token, then through the changes since', async () => {
    await engine.register('d');
    calls.length = 0;
    await engine.runOnce('d');
    expect(calls.map((u) => u.pathname.replace('/drive/v3', ''))).toEqual(['/changes/startPageToken', '/files']);
    expect(calls[1]!.searchParams.get('q')).toBe('trashed = false');
    expect(await stored()).toEqual(['1Abc:Q3 budget', '1Def:Notes']);

    log.push(
      { changeType: 'file', fileId: '1Abc', removed: false, file: { id: '1Abc', name: 'Q3 budget (final)', trashed: false } },
      { changeType: 'file', fileId: '1Def', removed: false, file: { id: '1Def', name: 'Notes', trashed: true } },
      { changeType: 'file', fileId: '1Ghi', removed: false, file: { id: '1Ghi', name: 'Offsite agenda', trashed: false } },
      { changeType: 'drive', removed: false },
    );
    calls.length = 0;
    const inc = await engine.runOnce('d');
    expect(calls.map((u) => `${u.pathname.replace('/drive/v3', '')}?${u.searchParams.get('pageToken')}`)).toEqual(['/changes?100']);
    expect(inc.entities['files']).toMatchObject({ deleted: 1 });
    expect(await stored()).toEqual(['1Abc:Q3 budget (final)', '1Ghi:Offsite agenda']);

    log.push({ changeType: 'file', fileId: '1Ghi', removed: true });
    calls.length = 0;
    await engine.runOnce('d');
    expect(calls.map((u) => u.searchParams.get('pageToken'))).toEqual(['104']);
    expect(await stored()).toEqual(['1Abc:Q3 budget (final)']);
  });
});
