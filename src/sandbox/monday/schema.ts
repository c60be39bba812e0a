/**
 * The schema the simulator executes: monday's own SDL for API version 2026-10, reduced by
 * scripts/extract-monday-schema.ts to the root fields the connector and simulator use and every
 * type reachable from them (copied whole, @deprecated included). A query that validates here
 * validates against api.monday.com/v2 at 2026-10 for those root fields, and the other way round.
 * Fields the simulator has no data for are still in the schema; asking for one that is non-null
 * fails execution loudly instead of passing with invented values.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONNECTORS_DIR } from '../../manifest/connectors-dir.ts';

/** The monday API version the vendored schema describes. */
export const SCHEMA_VERSION = '2026-10';

/** The vendored SDL (connectors/monday/schema-2026-10.graphql, the manifest's vendor_description). */
export const MONDAY_SDL = readFileSync(join(CONNECTORS_DIR, 'monday', 'schema-2026-10.graphql'), 'utf8');
