/**
 * Applying changes to the record store: records upserted and records deleted, whether they come
 * from a sync page or from a vendor's webhook delivery. The one place that turns an entity's
 * manifest into the store's search definition.
 */
import type { CompiledEntity } from '../manifest/index.ts';
import type { RecordSink, RecordsChanged, SinkEntityDef, UpsertCounts } from './types.ts';

export function searchDef(e: CompiledEntity): SinkEntityDef {
  return {
    primaryKey: e.def.primary_key,
    fields: (e.def.search?.fields ?? {}) as SinkEntityDef['fields'],
    ...(e.def.search?.sources ? { sources: e.def.search.sources as Record<string, string> } : {}),
  };
}

/**
 * Writes changes to the record store. A sync run reports what it changed once per entity when
 * the entity is done (run.ts); a webhook delivery reports each change as it is applied (see
 * applyDelivery), through `onChanged`.
 */
export class ChangeApplier {
  constructor(
    private readonly sink: RecordSink,
    private readonly onChanged?: (change: RecordsChanged) => void | Promise<void>,
  ) {}

  /** Store records of an entity; `syncRun` marks them seen by that run (deletion detection). */
  async upsert(connectorId: string, entity: CompiledEntity, records: Record<string, unknown>[], syncRun?: string): Promise<UpsertCounts> {
    if (records.length === 0) return { added: 0, updated: 0 };
    const counts = await this.sink.upsert(connectorId, entity.name, searchDef(entity), records, syncRun);
    return counts ?? { added: 0, updated: 0 };
  }

  /** A vendor webhook delivery's changes to one entity: upserts, then deletions; reported through onChanged when anything changed. */
  async applyDelivery(
    connectorId: string,
    entity: CompiledEntity,
    deliveryId: string,
    upserts: Record<string, unknown>[],
    deletions: string[],
  ): Promise<RecordsChanged> {
    const { added, updated } = await this.upsert(connectorId, entity, upserts);
    const deleted = await this.delete(connectorId, entity, deletions);
    const change: RecordsChanged = { connector_id: connectorId, entity: entity.name, added, updated, deleted, source: { webhook: deliveryId } };
    if (added + updated + deleted > 0) await this.onChanged?.(change);
    return change;
  }

  /** A sync run's changes to one entity, reported when the entity is done. */
  async reportRun(change: RecordsChanged): Promise<void> {
    if (change.added + change.updated + change.deleted > 0) await this.onChanged?.(change);
  }

  /** Delete records of an entity by id; returns how many were stored. */
  async delete(connectorId: string, entity: CompiledEntity, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    return this.sink.deleteRecords(connectorId, entity.name, ids);
  }

  /** Full refresh: delete the entity's records the run did not see. */
  async deleteMissing(connectorId: string, entity: CompiledEntity, syncRun: string): Promise<number> {
    return this.sink.deleteMissing(connectorId, entity.name, syncRun);
  }
}
