/**
 * The execute endpoint's `search` action, delegated to src/search (built separately).
 *
 * Until src/search/index.ts exists and exports RecordStore, search answers 501 search_not_ready
 * so callers get a clear, documented problem instead of a 500.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SwitchboardError } from '../errors/index.ts';
import type { LoadedManifest } from '../manifest/index.ts';
import type { ConnectorRow, Database, ServiceTables } from '../store/index.ts';

export interface SearchRequest {
  database: Database<ServiceTables>;
  connector: ConnectorRow;
  manifest: LoadedManifest;
  entity: string;
  params: unknown;
}

const SEARCH_MODULE = new URL('../search/index.ts', import.meta.url);

/** True when the search module is present in this checkout and exports RecordStore. */
export async function searchModuleAvailable(): Promise<boolean> {
  if (!existsSync(fileURLToPath(SEARCH_MODULE))) return false;
  const mod = (await import(SEARCH_MODULE.href)) as Record<string, unknown>;
  return typeof mod['RecordStore'] === 'function';
}

/**
 * ===== LEAD: WIRE SEARCH HERE =====
 * Run the `search` action of `req.entity` over the records synced for `req.connector` and return
 * the spec's response ({data, meta: {has_more, cursor, took_ms}}). The entity is known to have
 * search fields; params are not validated yet (the search module owns the grammar). Throw
 * SwitchboardError for bad queries (400 with errors[]) so they map to problem details.
 */
export async function runSearch(req: SearchRequest): Promise<unknown> {
  if (!(await searchModuleAvailable())) {
    throw new SwitchboardError('search_not_ready', `search on ${req.manifest.type} ${req.entity} needs the sync and search module, which this build of the service does not include yet`);
  }
  throw new SwitchboardError('search_not_ready', 'The search module is present but not wired into the service yet (src/service/search-bridge.ts runSearch)');
}
