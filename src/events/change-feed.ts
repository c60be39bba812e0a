/**
 * The change feed: GET /api/v1/integrations/connectors/{connector_id}/records?entity=E&modified_after=CURSOR&limit=N
 * — the records of one synced entity changed after a cursor, oldest change first, each with
 * `_metadata` {action, first_seen_at, last_modified_at, deleted_at, cursor} (see
 * src/search/changes.ts for how the log is kept). Shared by the HTTP route, the SDK and MCP.
 */
import { SwitchboardError } from '../errors/index.ts';
import type { LoadedManifest } from '../manifest/index.ts';
import type { RecordStore } from '../search/index.ts';
import type { ChangeEntry } from '../search/changes.ts';

/** A page of the feed as the API answers it: each record with its `_metadata` beside its fields. */
export interface ChangeFeedPage {
  data: (Record<string, unknown> & { _metadata: ChangeEntry['_metadata'] })[];
  next_cursor: string | null;
  has_more: boolean;
}

/** The entities with a change feed: those the sync engine keeps in the store (`sync` in the manifest). */
export function feedEntities(manifest: LoadedManifest): string[] {
  return [...manifest.entities.values()]
    .filter((e) => e.def.sync !== undefined)
    .map((e) => e.name)
    .sort();
}

/**
 * A page of a connector's change feed; 400 unknown_entity for an entity that is not synced, 400
 * invalid_cursor for a cursor the feed never gave (foreign, or past its last). Errors name the
 * inputs as `<prefix><name>`: `query:` over HTTP (the docs' convention for query parameters), `/`
 * for MCP's tool arguments.
 */
export async function changeFeed(
  records: RecordStore,
  manifest: LoadedManifest,
  connectorId: string,
  q: { entity: string; modified_after?: string | undefined; limit?: number | undefined },
  prefix: 'query:' | '/' = 'query:',
): Promise<ChangeFeedPage> {
  const valid = feedEntities(manifest);
  if (!valid.includes(q.entity)) {
    throw new SwitchboardError(
      'unknown_entity',
      `"${q.entity}" is not a synced entity of connector type ${manifest.type}; the change feed has: ${valid.join(', ')}`,
      {
        errors: [{ path: `${prefix}entity`, message: `must be one of: ${valid.join(', ')}` }],
      },
    );
  }
  try {
    const page = await records.changes(connectorId, q.entity, {
      ...(q.modified_after !== undefined ? { cursor: q.modified_after } : {}),
      ...(q.limit !== undefined ? { limit: q.limit } : {}),
    });
    return { data: page.data.map((e) => ({ ...e.record, _metadata: e._metadata })), next_cursor: page.next_cursor, has_more: page.has_more };
  } catch (e) {
    if (e instanceof SwitchboardError && e.code === 'invalid_cursor')
      throw new SwitchboardError('invalid_cursor', e.message, {
        errors: [{ path: `${prefix}modified_after`, message: 'must be a _metadata.cursor (or next_cursor) this feed returned' }],
      });
    throw e;
  }
}
