/**
 * The connector registry: every connectors/<type>/connector.yaml of the package, loaded once
 * per process on first use.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, sep } from 'node:path';
import { SwitchboardError } from '../errors/index.ts';
import type { LoadedManifest } from './compile.ts';
import { CONNECTORS_DIR } from './connectors-dir.ts';
import { loadManifestFile } from './load.ts';

export { CONNECTORS_DIR };

/** Paths of every connectors/<type>/connector.yaml under `dir`, sorted by type. */
export function manifestFiles(dir: string = CONNECTORS_DIR): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => join(dir, d.name, 'connector.yaml'))
    .filter((f) => existsSync(f))
    .sort();
}

let cache: Map<string, LoadedManifest> | undefined;
/** Manifests loaded one at a time by getConnector(), before (or without) the whole registry. */
const single = new Map<string, LoadedManifest>();

/** Every connector manifest, keyed by type. Loaded (and validated) once; throws on a bad manifest. */
export function connectorRegistry(): Map<string, LoadedManifest> {
  if (cache === undefined) {
    const loaded = new Map<string, LoadedManifest>();
    for (const file of manifestFiles()) {
      const type = file.split(sep).at(-2) ?? '';
      const m = single.get(type) ?? loadManifestFile(file);
      loaded.set(m.type, m);
    }
    cache = loaded;
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
  const file = join(CONNECTORS_DIR, type, 'connector.yaml');
  if (cache === undefined && /^[a-z][a-z0-9_]*$/.test(type) && existsSync(file)) {
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
