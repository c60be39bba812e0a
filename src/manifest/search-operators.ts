/**
 * The search vocabulary a manifest's search fields declare: the field types, and the operators
 * each type accepts. The manifest describes them (describe.ts); the search planner (src/search)
 * enforces them.
 */

/** The type of a search field. */
export type SearchType = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array';

/**
 * Operators each search type accepts on the field itself. Ordering needs one ordered value
 * (never an array, object or boolean); like/keyword/fuzzy need text; contains and any need an
 * array. A path inside an object or array field has no declared type: see PATH_OPERATORS.
 */
export const OPERATORS_BY_TYPE: Record<SearchType, readonly string[]> = {
  string: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'like', 'keyword', 'fuzzy'],
  integer: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in'],
  number: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in'],
  boolean: ['eq', 'neq'],
  object: ['eq', 'neq', 'in', 'like', 'keyword', 'fuzzy'],
  array: ['eq', 'neq', 'in', 'like', 'keyword', 'fuzzy', 'contains', 'any'],
};
