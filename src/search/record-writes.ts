/**
 * The record store's writes: upsert (records, their index entries, vocabulary and sort pair
 * rows, in one transaction), the deletions, and the scope and field ids they need.
 */
import { createHash } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import { dropChanges, noteDeletes, noteUpserts, payloadHash, type ChangeCounts } from './changes.ts';
import { KEYLESS_PAIR, type Executor, type PairRow, type TextRow, type ValueRow } from './dialect.ts';
import { indexEntries, projectDocument, recordIdOf, type Doc, type IndexEntries } from './document.ts';
import { wordToken, type FieldRow } from './predicates.ts';
import type { SearchEntityDef } from './query.ts';
import { withinDepth } from './record-depth.ts';
import { inTransaction, type StoreContext } from './store-context.ts';
import { gramTokens, isFuzzyWord, textTrigrams } from './text.ts';
import { addVocabulary } from './vocabulary.ts';

/** Bump when what gets indexed for a document changes: every document is then reindexed on its next upsert. */
const INDEX_VERSION = '2';
/** Records deleted per statement group when deleting many. */
const DELETE_CHUNK = 5000;

interface Prepared {
  id: string;
  recordJson: string;
  doc: Doc;
  hash: string;
}

/** A string as the store keeps it: NUL characters removed, lone surrogates replaced by U+FFFD. */
function storableString(s: string): string {
  const t = s.includes('\u0000') ? s.replaceAll('\u0000', '') : s;
  return (t as unknown as WellFormed).isWellFormed() ? t : (t as unknown as WellFormed).toWellFormed();
}

/** String.prototype.isWellFormed / toWellFormed (Node 20; not in the ES2023 lib this project compiles against). */
interface WellFormed {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/**
 * The record as the store keeps it, on both databases alike: every string (keys included)
 * without NUL characters (PostgreSQL text and json cannot hold them) and with each lone UTF-16
 * surrogate replaced by U+FFFD (PostgreSQL json refuses the escape "\ud800", SQLite would store
 * bytes that are not UTF-8). Upstreams send such strings; one of them must not stop a sync.
 */
function storableDeep(v: unknown): unknown {
  if (typeof v === 'string') return storableString(v);
  if (Array.isArray(v)) return v.map(storableDeep);
  if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [storableString(k), storableDeep(x)]));
  return v;
}

/** True when JSON.stringify's text may hold a NUL or a lone surrogate (it writes both as \u escapes). */
const NEEDS_CLEANING = /\\u(?:0000|d[89a-f])/;

/** The records as the store keeps them, each with its id, JSON, search document and document hash; of a duplicated id, the last copy (in input order). */
function prepareBatch(records: Record<string, unknown>[], def: SearchEntityDef): Prepared[] {
  const byId = new Map<string, Prepared>();
  for (const given of records) {
    const raw = withinDepth(given);
    let recordJson = JSON.stringify(raw);
    let record = raw;
    if (NEEDS_CLEANING.test(recordJson)) {
      record = storableDeep(raw) as Record<string, unknown>;
      recordJson = JSON.stringify(record);
    }
    const id = recordIdOf(record, def);
    const doc = projectDocument(record, def);
    const hash = createHash('sha1').update(INDEX_VERSION).update(JSON.stringify(doc)).digest('base64');
    byId.delete(id); // the last copy of a duplicated id wins, in input order
    byId.set(id, { id, recordJson, doc, hash });
  }
  return [...byId.values()];
}

/** The index rows of records' entries (values, words and trigrams, sort pair rows) and the fuzzy words they add to the vocabulary. */
function indexRows(
  store: StoreContext,
  entries: ({ rid: number } & IndexEntries)[],
  fieldIds: Map<string, number>,
  pairDefs: PairDef[],
): { valueRows: ValueRow[]; textRows: TextRow[]; pairRows: PairRow[]; vocabulary: Set<string> } {
  const valueRows: ValueRow[] = [];
  const textRows: TextRow[] = [];
  const pairRows: PairRow[] = [];
  const pairFields = new Set<number>();
  for (const d of pairDefs) pairFields.add(d.key_field).add(d.sort_field);
  const pairValues = new Map<number, string | number>();
  const vocabulary = new Set<string>();
  for (const e of entries) {
    for (const v of e.values) valueRows.push([e.rid, fieldIds.get(v.key)!, v.v, v.n, v.low, v.e]);
    if (pairDefs.length > 0) {
      pairValues.clear();
      for (const v of e.values) {
        const id = fieldIds.get(v.key)!;
        if (pairFields.has(id) && !pairValues.has(id)) pairValues.set(id, v.v);
      }
      // Element pairs (negative sort field, elementPairSort) get their rows from a trigger on search_values (schema.ts, 0007).
      for (const d of pairDefs) {
        if (Number(d.sort_field) < 0) continue;
        const kv = Number(d.key_field) === KEYLESS_PAIR ? '' : pairValues.get(d.key_field);
        const sv = pairValues.get(d.sort_field);
        if (typeof kv === 'string' && sv !== undefined) pairRows.push([Number(d.pair_id), kv, sv, e.rid]);
      }
    }
    let grams: string[] = [];
    if (store.dialect.gramTokens) {
      const byField = new Map<number, Set<string>>();
      for (const l of e.likes) {
        const id = fieldIds.get(l.key)!;
        let trigrams = byField.get(id);
        if (trigrams === undefined) byField.set(id, (trigrams = new Set()));
        textTrigrams(l.text, trigrams);
      }
      grams = gramTokens(byField);
    }
    if (e.words.length > 0 || grams.length > 0) textRows.push([e.rid, e.words.map((w) => wordToken(fieldIds.get(w.key)!, w.word)), grams]);
    for (const w of e.words) if (isFuzzyWord(w.word)) vocabulary.add(w.word);
  }
  return { valueRows, textRows, pairRows, vocabulary };
}

/** A sort pair of the scope (search_pair_defs). */
interface PairDef {
  pair_id: number;
  key_field: number;
  sort_field: number;
}

/**
 * Insert or replace records (keyed by the entity's primary key) in one transaction. Records
 * whose search document did not change keep their index entries. `syncRun` marks the records
 * as seen by that sync run, for deleteMissing; without it a record keeps its previous mark.
 * Returns how many records were new (added) and how many had a changed payload (updated).
 */
export async function upsertRecords(
  store: StoreContext,
  connectorId: string,
  entity: string,
  def: SearchEntityDef,
  records: Record<string, unknown>[],
  syncRun?: string,
): Promise<ChangeCounts> {
  let counts: ChangeCounts = { added: 0, updated: 0 };
  if (records.length === 0) return counts;
  const batch = prepareBatch(records, def);
  const now = new Date(store.now()).toISOString();
  let scope: number | undefined;
  try {
    await inTransaction(store, async (trx) => {
      const scopeId = await ensureScope(store, trx, connectorId, entity, now);
      scope = scopeId;
      const existing = new Map<string, { rid: number; hash: string }>();
      const { rows } = await sql<{ rid: number | string; record_id: string; doc_hash: string }>`
        SELECT rid, record_id, doc_hash FROM search_records
        WHERE scope_id = ${scopeId} AND ${store.dialect.inList(
          sql.ref('record_id'),
          batch.map((p) => p.id),
          'text',
        )}`.execute(trx);
      for (const r of rows) existing.set(r.record_id, { rid: Number(r.rid), hash: r.doc_hash });

      const returned = await store.dialect.upsertRecords(
        trx,
        scopeId,
        batch.map((p) => [p.id, p.recordJson, p.hash]),
        now,
        syncRun ?? null,
      );
      counts = await noteUpserts(
        trx,
        store.dialect,
        scopeId,
        batch.map((p) => [p.id, payloadHash(p.recordJson)]),
        now,
      );
      const ridOf = new Map(returned.map((r) => [r.record_id, Number(r.rid)]));
      const inserted = batch.length - existing.size;
      if (inserted > 0) await sql`UPDATE search_scopes SET record_count = record_count + ${inserted} WHERE scope_id = ${scopeId}`.execute(trx);

      const changed = batch.filter((p) => existing.get(p.id)?.hash !== p.hash);
      if (changed.length === 0) return;
      // Read after ensureScope's write: a pair being built (buildPair) holds the scope's row
      // until it commits, so this sees every pair whose rows were filled without this batch.
      const { rows: pairDefs } = await sql<PairDef>`SELECT pair_id, key_field, sort_field FROM search_pair_defs WHERE scope_id = ${scopeId}`.execute(trx);
      await store.dialect.deleteIndex(
        trx,
        changed.flatMap((p) => {
          const e = existing.get(p.id);
          return e ? [e.rid] : [];
        }),
      );

      const entries = changed.map((p) => ({ rid: ridOf.get(p.id)!, ...indexEntries(p.doc, def) }));
      const keys = new Set<string>();
      for (const e of entries) {
        for (const v of e.values) keys.add(v.key);
        for (const a of e.arrays) keys.add(a);
      }
      const fieldIds = await fieldIdsOf(store, trx, scopeId, keys);

      const { valueRows, textRows, pairRows, vocabulary } = indexRows(store, entries, fieldIds, pairDefs);
      await store.dialect.insertValues(trx, valueRows);
      await store.dialect.insertPairs(trx, pairRows);
      await store.dialect.insertText(trx, textRows);
      await addVocabulary(store, trx, scopeId, vocabulary);
    });
  } catch (e) {
    // Ids cached during a rolled-back transaction may not exist: forget this scope's caches.
    if (scope !== undefined) {
      store.fieldCache.delete(scope);
      store.vocabCache.delete(scope);
    }
    throw e;
  }
  return counts;
}

/**
 * Full-refresh deletion: remove the entity's records not marked by `syncRun` (records deleted
 * upstream). Returns how many were removed.
 */
export async function deleteMissing(store: StoreContext, connectorId: string, entity: string, syncRun: string): Promise<number> {
  const now = new Date().toISOString();
  return inTransaction(store, async (trx) => {
    const scopeId = await ensureScope(store, trx, connectorId, entity, now);
    return deleteWhere(store, trx, scopeId, sql`SELECT rid FROM search_records WHERE scope_id = ${scopeId} AND (sync_run IS NULL OR sync_run <> ${syncRun})`);
  });
}

/** Remove records by id (records deleted upstream, when the API reports deletions). Returns how many existed. */
export async function deleteRecords(store: StoreContext, connectorId: string, entity: string, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  // Ids as upsert stored them.
  const keys = ids.map(storableString);
  const now = new Date(store.now()).toISOString();
  return inTransaction(store, async (trx) => {
    // A write first (as ensureScope), so the scope's writers take turns (see changes.ts).
    const { rows } = await sql<{
      scope_id: number;
    }>`UPDATE search_scopes SET synced_at = ${now} WHERE connector_id = ${connectorId} AND entity = ${entity} RETURNING scope_id`.execute(trx);
    const scopeId = rows[0]?.scope_id;
    if (scopeId === undefined) return 0;
    return deleteWhere(
      store,
      trx,
      scopeId,
      sql`SELECT rid FROM search_records WHERE scope_id = ${scopeId} AND ${store.dialect.inList(sql.ref('record_id'), keys, 'text')}`,
    );
  });
}

/** Remove everything stored for a connector (all entities, indexes and vocabulary). Returns the records removed. */
export async function deleteConnector(store: StoreContext, connectorId: string): Promise<number> {
  return inTransaction(store, async (trx) => {
    // Locked (PostgreSQL), so that a sort pair being built (buildPair) finishes first or finds the scope gone.
    const { rows } = await sql<{
      scope_id: number;
    }>`SELECT scope_id FROM search_scopes WHERE connector_id = ${connectorId}${store.dialect.name === 'postgres' ? sql` FOR UPDATE` : sql``}`.execute(trx);
    let removed = 0;
    for (const { scope_id: scopeId } of rows) {
      const inScope = sql`SELECT rid FROM search_records WHERE scope_id = ${scopeId}`;
      await store.dialect.deleteIndex(trx, inScope);
      const result = await sql`DELETE FROM search_records WHERE scope_id = ${scopeId}`.execute(trx);
      removed += Number(result.numAffectedRows ?? 0n);
      await sql`DELETE FROM search_fields WHERE scope_id = ${scopeId}`.execute(trx);
      await sql`DELETE FROM search_pair_defs WHERE scope_id = ${scopeId}`.execute(trx);
      await sql`DELETE FROM search_vocab WHERE scope_id = ${scopeId}`.execute(trx);
      await sql`DELETE FROM search_variants WHERE scope_id = ${scopeId}`.execute(trx);
      await sql`DELETE FROM search_scopes WHERE scope_id = ${scopeId}`.execute(trx);
      await dropChanges(trx, scopeId);
      store.fieldCache.delete(scopeId);
      for (const [key, cached] of store.scopeCache) if (cached.scopeId === scopeId) store.scopeCache.delete(key);
      store.vocabCache.delete(scopeId);
    }
    return removed;
  });
}

async function scopeIdOf(db: Executor, connectorId: string, entity: string): Promise<number | undefined> {
  const { rows } = await sql<{ scope_id: number }>`SELECT scope_id FROM search_scopes WHERE connector_id = ${connectorId} AND entity = ${entity}`.execute(db);
  return rows[0]?.scope_id;
}

/** The scope's id, created if needed, with synced_at set. A write first, so SQLite takes the write lock at once. */
async function ensureScope(store: StoreContext, db: Executor, connectorId: string, entity: string, now: string): Promise<number> {
  const touched = await sql<{
    scope_id: number;
  }>`UPDATE search_scopes SET synced_at = ${now} WHERE connector_id = ${connectorId} AND entity = ${entity} RETURNING scope_id`.execute(db);
  if (touched.rows[0] !== undefined) return touched.rows[0].scope_id;
  await sql`INSERT INTO search_scopes (connector_id, entity, synced_at) VALUES (${connectorId}, ${entity}, ${now}) ON CONFLICT (connector_id, entity) DO UPDATE SET synced_at = excluded.synced_at`.execute(
    db,
  );
  const id = await scopeIdOf(db, connectorId, entity);
  if (id === undefined) throw new Error('search scope vanished during its creation');
  return id;
}

async function fieldIdsOf(store: StoreContext, db: Executor, scopeId: number, keys: Set<string>): Promise<Map<string, number>> {
  let cache = store.fieldCache.get(scopeId);
  const missing = (c: Map<string, number> | undefined): string[] => [...keys].filter((k) => c?.get(k) === undefined);
  if (missing(cache).length > 0) {
    const absent = missing(cache);
    await store.dialect.insertFields(
      db,
      scopeId,
      absent.map((k) => [k.slice(2), k[0]!]),
    );
    const { rows } = await sql<FieldRow>`SELECT field_id, path, kind FROM search_fields WHERE scope_id = ${scopeId}`.execute(db);
    cache = new Map(rows.map((r) => [`${r.kind}:${r.path}`, r.field_id]));
    store.fieldCache.set(scopeId, cache);
  }
  return cache!;
}

/** Delete the records a rid subquery selects, with their index entries, leaving tombstones in the change log; returns how many. */
async function deleteWhere(store: StoreContext, db: Executor, scopeId: number, ridQuery: RawBuilder<unknown>): Promise<number> {
  const { rows } = await sql<{ rid: number | string }>`${ridQuery}`.execute(db);
  const rids = rows.map((r) => Number(r.rid));
  const now = new Date(store.now()).toISOString();
  const pruneBefore = new Date(store.now() - store.tombstoneMs).toISOString();
  if (rids.length === 0) await noteDeletes(db, store.dialect, scopeId, [], now, pruneBefore);
  for (let i = 0; i < rids.length; i += DELETE_CHUNK) {
    const chunk = rids.slice(i, i + DELETE_CHUNK);
    const { rows: gone } = await sql<{
      record_id: string;
      record: unknown;
    }>`SELECT record_id, record FROM search_records WHERE ${store.dialect.inList(sql.ref('rid'), chunk, 'bigint')}`.execute(db);
    await noteDeletes(
      db,
      store.dialect,
      scopeId,
      gone.map((g) => [g.record_id, typeof g.record === 'string' ? g.record : JSON.stringify(g.record)]),
      now,
      pruneBefore,
    );
    await store.dialect.deleteIndex(db, chunk);
    await sql`DELETE FROM search_records WHERE ${store.dialect.inList(sql.ref('rid'), chunk, 'bigint')}`.execute(db);
  }
  if (rids.length > 0) await sql`UPDATE search_scopes SET record_count = record_count - ${rids.length} WHERE scope_id = ${scopeId}`.execute(db);
  return rids.length;
}
