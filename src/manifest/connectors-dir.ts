/**
 * Where the package's connectors/ folder is: beside the package.json above this module, which is
 * two levels up from src/manifest/ and three from the built dist/src/manifest/. A module of its
 * own so that simulators reading vendored descriptions do not load the manifest loader.
 */
import { existsSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CONNECTORS_DIR = packageRootOf(fileURLToPath(import.meta.url));

function packageRootOf(file: string): string {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'connectors'))) return join(dir, 'connectors') + sep;
  }
  return fileURLToPath(new URL('../../connectors/', import.meta.url));
}
