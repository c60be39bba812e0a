/** Limits of the change feed (a leaf module: the OpenAPI document states them without loading the store). */

/** Most entries per change feed page. */
export const MAX_CHANGES_LIMIT = 1000;
