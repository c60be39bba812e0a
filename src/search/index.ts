/**
 * Search over synced records: the record store the sync engine writes to, the `search` action's
 * query language compiled to parameterized SQL for SQLite and PostgreSQL, and its in-memory
 * reference semantics. docs/search.md documents the query language and the index design.
 */
export { searchMigrations } from './schema.ts';
export { RecordStore, type RecordStoreOptions, type SearchResult } from './record-store.ts';
export {
  parseSearchParams,
  DEFAULT_LIMIT,
  MAX_LIMIT,
  MAX_DEPTH,
  MAX_CONDITIONS,
  MAX_IN_VALUES,
  MAX_SORT_KEYS,
  OPERATORS,
  OPERATORS_BY_TYPE,
  type SearchEntityDef,
  type SearchType,
  type SearchQuery,
  type Filter,
  type SortKey,
  type FieldRef,
} from './query.ts';
export { projectDocument, projectFields, type Doc } from './document.ts';
export { matches, searchInMemory, type RefDoc } from './reference.ts';
export { searchDefOf } from './entity-def.ts';
