/**
 * Codegen's output cache: the TypeScript that json-schema-to-typescript (all of one connector's
 * schemas in one entry) and openapi-typescript produce for an input, kept between runs under node_modules/.cache/switchboard-codegen
 * (or SWITCHBOARD_CODEGEN_CACHE_DIR), keyed by a hash of the input, the generator's options and
 * the generators' versions; SWITCHBOARD_CODEGEN_CACHE=0 turns it off. A repeated
 * `codegen` or `codegen --check` then neither loads those libraries (and the TypeScript
 * compiler openapi-typescript prints with) nor runs them. Entries are only ever added; a
 * missing or unwritable cache directory just means generating again.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { CONNECTORS_DIR } from '../manifest/index.ts';

/** Bump when the way outputs are produced changes without the inputs changing. */
const CACHE_VERSION = '1';
// Under the package root (found beside connectors/), from src/ and from the built dist/src/ alike;
// SWITCHBOARD_CODEGEN_CACHE_DIR puts it elsewhere (the benchmark times codegen with an empty one).
const cacheDir = (): string => process.env['SWITCHBOARD_CODEGEN_CACHE_DIR'] || join(CONNECTORS_DIR, '..', 'node_modules', '.cache', 'switchboard-codegen');

let versions: string | undefined;

/** The installed generators' versions: an upgrade gives new keys. */
function generatorVersions(): string {
  if (versions === undefined) {
    const require = createRequire(import.meta.url);
    const version = (pkg: string): string => {
      try {
        return (JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { version: string }).version;
      } catch {
        return 'unknown';
      }
    };
    versions = ['json-schema-to-typescript', 'openapi-typescript', 'typescript'].map((p) => `${p}@${version(p)}`).join(',');
  }
  return versions;
}

/** Whether the cache is off, or has no entry at all (a fresh checkout): then every output will be produced. */
export function cacheLooksEmpty(dir = cacheDir()): boolean {
  if (process.env['SWITCHBOARD_CODEGEN_CACHE'] === '0') return true;
  try {
    return readdirSync(dir).length === 0;
  } catch {
    return true;
  }
}

/** The output for `input` from the cache, or `produce()`d and stored. */
export async function cachedOutput(kind: string, input: unknown, produce: () => Promise<string>, dir = cacheDir()): Promise<string> {
  if (process.env['SWITCHBOARD_CODEGEN_CACHE'] === '0') return produce();
  const key = createHash('sha256')
    .update(JSON.stringify([CACHE_VERSION, generatorVersions(), kind, input]))
    .digest('hex');
  const file = join(dir, `${key}.txt`);
  try {
    return readFileSync(file, 'utf8');
  } catch {
    // Not cached yet.
  }
  const out = await produce();
  try {
    mkdirSync(dir, { recursive: true });
    // Written whole, then renamed: a concurrent reader never sees half an entry.
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, out);
    renameSync(tmp, file);
  } catch {
    // A read-only install: generate every time.
  }
  return out;
}
