/** What the manifest tests share: the Granola manifest, changed one way, and the loader's problems with a text. */
import { readFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { formatProblem, loadManifestText, ManifestError } from '../../src/manifest/index.ts';

/** Granola's manifest without its vendor description: tests load it from elsewhere, where no openapi.yaml lies beside it. */
export const GRANOLA = readFileSync('connectors/granola/connector.yaml', 'utf8').replace(/^vendor_description:\n(?: {2}.*\n)+/m, '');
if (GRANOLA.includes('vendor_description')) throw new Error('test/helpers/manifest.ts: the Granola manifest kept its vendor_description');

/** The Granola manifest with one change applied to its parsed form. */
export function mutate(change: (m: Record<string, any>) => void): string {
  const m = parse(GRANOLA) as Record<string, any>;
  change(m);
  return stringify(m);
}

/**
 * The loader's problems with a manifest text, formatted ([] when it loads). `file` is where it is
 * loaded as: a manifest naming a vendor_description needs its own directory (the file is beside it).
 */
export function problems(text: string, file = 'test.yaml'): string[] {
  try {
    loadManifestText(text, file);
  } catch (e) {
    if (e instanceof ManifestError) return e.problems.map(formatProblem);
    throw e;
  }
  return [];
}
