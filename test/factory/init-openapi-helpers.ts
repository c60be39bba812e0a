/** Shared by init-openapi*.test.ts: scaffolding from a description file, and small descriptions of our own. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadManifestText } from '../../src/manifest/index.ts';
import { scaffoldFromOpenApi } from '../../src/factory/init-openapi.ts';
import { renderScaffold } from '../../src/factory/scaffold.ts';

export const ASANA = 'test/fixtures/asana/asana_oas.yaml';
export const OFFSET_TOKEN = 'test/fixtures/factory/offset-token.yaml';
export type Rec = Record<string, any>;

export async function scaffold(file: string, entities?: string[]): Promise<{ yaml: string; m: Rec; report: string[] }> {
  const s = await scaffoldFromOpenApi(file, { type: 'acme', entities, descriptionPath: 'openapi.yaml', source: 'test' });
  const yaml = renderScaffold(s);
  // Loaded where the description copy is, as init writes it.
  const dir = mkdtempSync(join(tmpdir(), 'sb-scaffold-'));
  writeFileSync(join(dir, 'openapi.yaml'), readFileSync(file));
  loadManifestText(yaml, join(dir, 'connector.yaml'));
  return { yaml, m: parse(yaml) as Rec, report: s.report };
}

/** A description file with the given parts over a minimal OpenAPI 3.0 document. */
export function description(parts: Rec): string {
  const dir = mkdtempSync(join(tmpdir(), 'sb-oas-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(
    file,
    JSON.stringify({
      openapi: '3.0.3',
      info: { title: 'Acme', version: '1', license: { name: 'MIT' } },
      servers: [{ url: 'https://api.acme.test/v1' }],
      paths: {},
      ...parts,
    }),
  );
  return file;
}

export const widget = {
  type: 'object',
  properties: { id: { type: 'integer' }, name: { type: 'string', nullable: true }, size: { type: 'integer', minimum: 1 } },
};
export const widgetPaths = (list: Rec, extra: Rec = {}): Rec => ({
  '/widgets': { get: list, ...extra },
  '/widgets/{widget_id}': {
    get: {
      parameters: [{ name: 'widget_id', in: 'path', required: true, schema: { type: 'integer' } }],
      responses: { 200: { description: 'ok', content: { 'application/json': { schema: widget } } } },
    },
  },
});
export const ok = (schema: Rec, headers?: Rec): Rec => ({
  responses: { 200: { description: 'ok', ...(headers ? { headers } : {}), content: { 'application/json': { schema } } } },
});
