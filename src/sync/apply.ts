/**
 * Applying changes to the record store: records upserted and records deleted, whether they come
 * from a sync page or from a vendor's webhook delivery. The one place that turns an entity's
 * manifest into the store's search definition.
 */
import type { CompiledEntity } from '../manifest/index.ts';
import type { RecordSink, SinkEntityDef } from './types.ts';

export function searchDef(e: CompiledEntity): SinkEntityDef {
  return {
    primaryKey: e.def.primary_key,
    fields: (e.def.search?.fields ?? {}) as SinkEntityDef['fields'],
    ...(e.def.search?.sources ? { sources: e.def.search.sources as Record<string, string> } : {}),
  };
}

export class ChangeApplier {
  constructor(private readonly sink: RecordSink) {}

  /** Store records of an entity; `syncRun` marks them seen by that run (deletion detection). */
  async upsert(connectorId: string, entity: CompiledEntity, records: Record<string, unknown>[], syncRun?: string): Promise<void> {
    if (records.length === 0) return;
    await this.sink.upsert(connectorId, entity.name, searchDef(entity), records, syncRun);
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
