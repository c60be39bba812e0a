/**
 * The connector registry: every connectors/<type>/connector.yaml of the package, loaded once
 * per process on first use.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, delimiter, dirname, join, resolve } from 'node:path';
import { SwitchboardError } from '../errors/index.ts';
import type { LoadedManifest } from './compile.ts';
import { CONNECTORS_DIR } from './connectors-dir.ts';
import { loadManifestFile } from './load.ts';

export { CONNECTORS_DIR };

/** Environment variable listing extra connector directories, separated like PATH (`:`; `;` on Windows). */
export const CONNECTORS_PATH_ENV = 'SWITCHBOARD_CONNECTORS_PATH';

/** Directories set by `--connectors` (setConnectorsPath); when unset, $SWITCHBOARD_CONNECTORS_PATH. */
let explicitPath: string[] | undefined;

/**
 * Where connector manifests are looked for besides the package's own connectors/: the
 * `--connectors` directories of the CLI (or `setConnectorsPath` in a host program), else
 * $SWITCHBOARD_CONNECTORS_PATH. Each directory holds `<type>/connector.yaml` folders, or is one
 * such folder itself. A type found in an earlier directory shadows the same type further on,
 * including a built-in one. Resets the loaded registry. Throws invalid_connectors_path, naming
 * where the directory came from, when one does not exist.
 */
export function setConnectorsPath(dirs: readonly string[] | undefined, from = '--connectors'): void {
  const list = dirs === undefined ? undefined : dirs.filter((d) => d !== '').map((d) => resolve(d));
  for (const dir of list ?? []) {
    let ok: boolean;
    try {
      ok = statSync(dir).isDirectory();
    } catch {
      ok = false;
    }
    if (!ok) {
      throw new SwitchboardError(
        'invalid_connectors_path',
        `${from}: ${dir} is not a directory. Give a directory of <type>/connector.yaml folders (e.g. the --out of switchboard init), or one such folder`,
        {
          details: { path: dir, from },
        },
      );
    }
  }
  explicitPath = list;
  cache = undefined;
  single.clear();
}

/** The extra connector directories in effect (not the package's own), in precedence order. */
export function connectorsPath(env: NodeJS.ProcessEnv = process.env): string[] {
  if (explicitPath !== undefined) return explicitPath;
  const raw = env[CONNECTORS_PATH_ENV];
  if (raw === undefined || raw.trim() === '') return [];
  const dirs = raw
    .split(delimiter)
    .filter((d) => d.trim() !== '')
    .map((d) => resolve(d.trim()));
  for (const dir of dirs)
    if (!existsSync(dir))
      throw new SwitchboardError('invalid_connectors_path', `$${CONNECTORS_PATH_ENV}: ${dir} does not exist`, {
        details: { path: dir, from: `$${CONNECTORS_PATH_ENV}` },
      });
  return dirs;
}

/** The connector.yaml files directly under `dir`'s subfolders, or `dir`'s own when it is a connector folder. */
function filesIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const own = join(dir, 'connector.yaml');
  if (existsSync(own)) return [own];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => join(dir, d.name, 'connector.yaml'))
    .filter((f) => existsSync(f));
}

/** The folder name a manifest file is found under: its type, for lookups before loading. */
const folderType = (file: string): string => basename(dirname(file));

/** Every connector.yaml of the search path in precedence order: connectorsPath(), then the package's connectors/. */
function searchFiles(): string[] {
  return [...connectorsPath(), CONNECTORS_DIR].flatMap((d) => filesIn(d));
}

/**
 * Paths of every connector.yaml under `dir`, sorted by folder name; without `dir`, of the whole
 * search path, one file per folder name (the first found: a folder in a --connectors directory
 * shadows a built-in of the same name).
 */
export function manifestFiles(dir?: string): string[] {
  const byType = new Map<string, string>();
  for (const f of dir !== undefined ? filesIn(dir) : searchFiles()) if (!byType.has(folderType(f))) byType.set(folderType(f), f);
  return [...byType.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, f]) => f);
}

let cache: Map<string, LoadedManifest> | undefined;
/** Manifests loaded one at a time by getConnector(), before (or without) the whole registry. */
const single = new Map<string, LoadedManifest>();

/** Every connector manifest, keyed by type. Loaded (and validated) once; throws on a bad manifest. */
export function connectorRegistry(): Map<string, LoadedManifest> {
  if (cache === undefined) {
    const loaded = new Map<string, LoadedManifest>();
    const files = manifestFiles();
    // In precedence order, so the first manifest of a type wins, whatever its folder is called.
    for (const file of searchFiles().filter((f) => files.includes(f))) {
      const m = [...single.values()].find((s) => s.file === file) ?? loadManifestFile(file);
      if (!loaded.has(m.type)) loaded.set(m.type, m);
    }
    cache = new Map([...loaded.entries()].sort(([a], [b]) => a.localeCompare(b)));
  }
  return cache;
}

/**
 * The manifest of one connector type, or an unknown_connector_type error listing the known ones.
 * Loads only that type's file when the registry is not loaded yet (the CLI's `exec` compiles
 * one manifest, not all of them).
 */
export function getConnector(type: string): LoadedManifest {
  const known = cache?.get(type) ?? single.get(type);
  if (known !== undefined) return known;
  const file = /^[a-z][a-z0-9_]*$/.test(type) ? searchFiles().find((f) => folderType(f) === type) : undefined;
  if (cache === undefined && file !== undefined) {
    const m = loadManifestFile(file);
    if (m.type === type) {
      single.set(type, m);
      return m;
    }
  }
  const m = connectorRegistry().get(type);
  if (m === undefined) {
    const valid = [...connectorRegistry().keys()];
    throw new SwitchboardError('unknown_connector_type', `Unknown connector type "${type}". Known types: ${valid.join(', ')}`, {
      details: { connector_type: type, valid },
    });
  }
  return m;
}
