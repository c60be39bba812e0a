/**
 * JSON Schema of connector manifest format v1, read from its data file manifest.schema.json
 * beside this module (copied into dist/ by scripts/build.mjs). That file is the single definition
 * of the format: the loader validates every manifest against it, and codegen turns it into the
 * `Manifest` TypeScript types in generated/manifest.ts.
 */
import { readFileSync } from 'node:fs';

/** A JSON Schema document, as read from its file. */
export type JsonSchemaDocument = Record<string, unknown>;

export const MANIFEST_SCHEMA: JsonSchemaDocument = JSON.parse(readFileSync(new URL('./manifest.schema.json', import.meta.url), 'utf8')) as JsonSchemaDocument;
