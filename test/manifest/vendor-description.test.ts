/** manifest.vendor_description: a file beside the manifest, checked at load time. */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { formatProblem, loadManifestFile, ManifestError } from '../../src/manifest/index.ts';

const GRANOLA = parse(readFileSync('connectors/granola/connector.yaml', 'utf8')) as Record<string, unknown>;

/** A connector folder with the Granola manifest plus `vendor_description`, and the files given. */
function folder(vendor: unknown, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'sb-vd-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  writeFileSync(join(dir, 'connector.yaml'), stringify({ ...GRANOLA, vendor_description: vendor }));
  return join(dir, 'connector.yaml');
}

function problems(file: string): string[] {
  try {
    loadManifestFile(file);
    return [];
  } catch (e) {
    if (e instanceof ManifestError) return e.problems.map(formatProblem);
    throw e;
  }
}

describe('vendor_description', () => {
  it('resolves the path against the manifest directory', () => {
    const file = folder(
      { path: 'vendor/openapi.yaml', format: 'openapi', source: 'https://example.com/openapi.yaml', licence: 'Apache-2.0' },
      { 'vendor/openapi.yaml': 'openapi: 3.0.0\n' },
    );
    const m = loadManifestFile(file);
    expect(m.vendorDescription).toEqual({ file: join(file, '..', 'vendor', 'openapi.yaml'), format: 'openapi' });
    expect(m.manifest.vendor_description?.licence).toBe('Apache-2.0');
  });

  it('is optional', () => {
    expect(loadManifestFile(folder(undefined)).vendorDescription).toBeUndefined();
  });

  it.each([
    ['a missing file', { path: 'openapi.yaml', format: 'openapi' }, /vendor_description\.path: no file openapi\.yaml beside the manifest/],
    ['a directory', { path: 'vendor', format: 'openapi' }, /vendor_description\.path: no file vendor beside the manifest/],
    ['a path outside the folder', { path: '../openapi.yaml', format: 'openapi' }, /must be a file inside the manifest's directory/],
    ['an absolute path', { path: '/etc/hosts', format: 'openapi' }, /vendor_description\.path: must match pattern/],
    ['an unknown format', { path: 'vendor/x', format: 'raml' }, /vendor_description\.format: must be one of: "openapi", "graphql"/],
    ['no format', { path: 'vendor/x' }, /missing required key "format"/],
    ['an unknown key', { path: 'vendor/x', format: 'graphql', url: 'x' }, /unknown key "url"/],
  ])('refuses %s, naming the location', (_name, vendor, message) => {
    const file = folder(vendor, { 'vendor/x': 'type Query { a: Int }\n', 'vendor/keep': '' });
    expect(problems(file).join('\n')).toMatch(message);
  });
});
