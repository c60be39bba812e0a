/** Shared by the sync tests over a stand-in upstream (sync-delta-link, sync-expired-mark): the engine on SQLite, answers, stored records. */
import { ConnectorRuntime } from '../../src/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import type { LoadedManifest } from '../../src/manifest/index.ts';
import { RecordStore, type SearchEntityDef } from '../../src/search/index.ts';
import { migrate } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';
import { openTestDatabase } from '../search/helpers.ts';

/** A JSON answer of the stand-in upstream. */
export const json = (status: number, body: unknown): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/**
 * A sync engine running `manifest` over `fetch` (no limiter, quick retries, a full refresh only
 * every 100 runs) into a search store, on a fresh SQLite database with the sync tables; close()
 * stops the engine and closes the database.
 */
export async function openFeedSync(
  manifest: LoadedManifest,
  fetch: FetchLike,
): Promise<{ store: RecordStore; engine: SyncEngine; close: () => Promise<void> }> {
  const tdb = await openTestDatabase('sqlite');
  await migrate(tdb.database, [syncMigrations]);
  const store = new RecordStore(tdb.database, { cursorSecret: 'test-secret' });
  const engine = new SyncEngine({
    database: tdb.database,
    sink: store,
    runtimeFor: async () => ({ manifest, runtime: new ConnectorRuntime(manifest, { token: 't' }, { fetch, limiter: null, retry: { baseDelayMs: 1 } }) }),
    fullRefreshEvery: 100,
  });
  const close = async (): Promise<void> => {
    await engine.stop();
    await tdb.close();
  };
  return { store, engine, close };
}

/** A connector's records of an entity in search (c's items unless named), sorted by id, as `id:<field>` strings. */
export async function storedItems(store: RecordStore, def: SearchEntityDef, field: string, connector = 'c', entity = 'items'): Promise<string[]> {
  const { data } = await store.search(connector, entity, def, { query: { sort: [{ id: 'asc' }] }, fields: ['id', field] });
  return data.map((d) => `${String(d['id'])}:${String(d[field])}`);
}
