/**
 * The execute endpoint's `search` action: a query over the records the sync engine stored for
 * this connector (src/search), never a call to the upstream API.
 */
import type { LoadedManifest } from '../../manifest/index.ts';
import { searchDefOf } from '../../search/index.ts';
import type { ConnectorRow } from '../../store/index.ts';
import type { ServiceContext } from '../context.ts';

export interface SearchRequest {
  connector: ConnectorRow;
  manifest: LoadedManifest;
  entity: string;
  params: unknown;
}

/**
 * Run `search` on an entity with search fields; bad queries throw SwitchboardError 400
 * (invalid_search_query / invalid_cursor) naming the field and the valid choices.
 */
export async function runSearch(ctx: Pick<ServiceContext, 'records'>, req: SearchRequest): Promise<unknown> {
  // executeAction checked that the entity exists and has search fields.
  const def = searchDefOf(req.manifest.entities.get(req.entity)!.def)!;
  return ctx.records.search(req.connector.id, req.entity, def, req.params);
}
