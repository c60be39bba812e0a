/** The package version, from package.json (one level up from src/, two from dist/src/). */
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@switchboard-oss/switchboard' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not at this level: try the next one
    }
  }
  return 'unknown';
}
