/**
 * Codegen's OpenAPI types (src/codegen/openapi-types.cjs): openapi-typescript's transform without
 * its Redocly lint and bundle passes gives the text the whole of openapiTS() gives for the
 * service's document (which openapiTS() lints here, as codegen no longer does), and a document
 * that lint would refuse is refused with a clear error.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { loadManifestFile, manifestFiles } from '../../src/manifest/index.ts';
import { buildOpenApiDocument } from '../../src/service/openapi.ts';

const require = createRequire(import.meta.url);
const ENTRY = require.resolve('openapi-typescript');
const { openapiTypes } = require('../../src/codegen/openapi-types.cjs') as {
  openapiTypes(entry: string, document: object, options?: object): string;
};
const options = { exportType: false, alphabetize: true };

describe('openapi-types', () => {
  it("gives openapiTS()'s text for the service's document, which openapiTS() lints and bundles without a problem", async () => {
    const manifests = new Map(manifestFiles().map((f) => [loadManifestFile(f).type, loadManifestFile(f)]));
    const document = buildOpenApiDocument(undefined, manifests);
    const { default: openapiTS, astToString } = require(ENTRY) as typeof import('openapi-typescript');
    // silent: false, so a lint warning would show; an error throws.
    const whole = astToString(await openapiTS(structuredClone(document) as never, options));
    expect(openapiTypes(ENTRY, structuredClone(document), options)).toBe(whole);
  }, 60_000);

  const small = (extra: Record<string, unknown> = {}) => ({
    openapi: '3.1.0',
    info: { title: 't', version: '1' },
    paths: {
      '/a': {
        get: {
          operationId: 'getA',
          responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/A' } } } } },
        },
      },
    },
    components: { schemas: { A: { type: 'object', properties: { id: { type: 'string' } } } } },
    ...extra,
  });

  it('turns a small document into its path types', () => {
    const ts = openapiTypes(ENTRY, small(), options);
    expect(ts).toContain('"/a": {');
    expect(ts).toContain('A: {');
  });

  it.each([
    ['not OpenAPI 3.x', { openapi: '2.0' }, /expected OpenAPI 3\.x, got openapi: "2\.0"/],
    [
      'a $ref to nothing',
      { components: { schemas: { A: { $ref: '#/components/schemas/Missing' } } } },
      /#\/components\/schemas\/A: \$ref "#\/components\/schemas\/Missing" points at nothing/,
    ],
    [
      'an operationId twice',
      { paths: { '/a': { get: { operationId: 'x', responses: {} } }, '/b': { post: { operationId: 'x', responses: {} } } } },
      /operationId "x" of POST \/b is also that of GET \/a/,
    ],
  ])('refuses %s', (_what, extra, message) => {
    expect(() => openapiTypes(ENTRY, small(extra), options)).toThrow(message);
  });
});
