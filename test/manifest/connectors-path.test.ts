/** The registry's search path: setConnectorsPath / SWITCHBOARD_CONNECTORS_PATH, precedence and shadowing, in library mode. */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { connect, connectorRegistry, getConnector, setConnectorsPath } from '../../src/index.ts';
import { connectorsPath, manifestFiles } from '../../src/manifest/index.ts';
import { startGranolaSimulator } from '../../connectors/granola/simulator/index.ts';

// Granola's manifest without its vendor description (openapi.yaml stays in connectors/granola).
const { vendor_description: _vd, ...GRANOLA } = parse(readFileSync('connectors/granola/connector.yaml', 'utf8')) as Record<string, unknown>;

/** A connectors directory with Granola's manifest under each given folder name, as type `type` and title `title`. */
function connectorsDir(entries: { folder: string; type: string; title: string }[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'sb-path-'));
  for (const e of entries) {
    mkdirSync(join(dir, e.folder));
    writeFileSync(join(dir, e.folder, 'connector.yaml'), stringify({ ...GRANOLA, type: e.type, title: e.title }));
  }
  return dir;
}

afterEach(() => {
  setConnectorsPath(undefined);
  delete process.env['SWITCHBOARD_CONNECTORS_PATH'];
});

describe('connector search path', () => {
  it('adds outside connectors to the built-in ones; connect() runs them', async () => {
    setConnectorsPath([connectorsDir([{ folder: 'notes2', type: 'notes2', title: 'Notes two' }])]);
    // The built-in connectors (every folder of connectors/ with a manifest) and the outside one, by type.
    const builtIn = readdirSync('connectors').filter((d) => existsSync(join('connectors', d, 'connector.yaml')));
    expect(builtIn).toEqual(expect.arrayContaining(['granola', 'hubspot', 'intercom', 'jira', 'linear', 'monday', 'slack']));
    expect([...connectorRegistry().keys()]).toEqual([...builtIn, 'notes2'].sort());
    const sim = await startGranolaSimulator({ size: 3, rateLimit: false });
    try {
      // An outside type has no types in the package's generated/ (codegen --connectors writes its own).
      const untyped = connect as unknown as (type: string, o: object) => { execute: (e: string, a: string, p: object) => Promise<{ data: unknown[] }> };
      const c = untyped('notes2', { credentials: { api_key: sim.apiKey }, baseUrl: sim.url });
      expect((await c.execute('notes', 'list', {})).data).toHaveLength(3);
    } finally {
      await sim.close();
    }
  });

  it('an earlier directory shadows a later one and the built-in type of the same name', () => {
    const first = connectorsDir([{ folder: 'granola', type: 'granola', title: 'Granola (patched)' }]);
    const second = connectorsDir([
      { folder: 'granola', type: 'granola', title: 'Granola (other)' },
      { folder: 'x', type: 'granola', title: 'Granola (x)' },
    ]);
    setConnectorsPath([first, second]);
    expect(getConnector('granola').manifest.title).toBe('Granola (patched)');
    expect(connectorRegistry().get('granola')?.manifest.title).toBe('Granola (patched)');
    expect(manifestFiles().filter((f) => f.endsWith(join('granola', 'connector.yaml')))).toEqual([join(first, 'granola', 'connector.yaml')]);
  });

  it('reads SWITCHBOARD_CONNECTORS_PATH (a PATH-like list) when no path is set', () => {
    const a = connectorsDir([{ folder: 'aa', type: 'aa', title: 'A' }]);
    const b = connectorsDir([{ folder: 'bb', type: 'bb', title: 'B' }]);
    process.env['SWITCHBOARD_CONNECTORS_PATH'] = `${a}:${b}`;
    setConnectorsPath(undefined);
    expect(connectorsPath()).toEqual([a, b]);
    expect(getConnector('bb').manifest.title).toBe('B');
    process.env['SWITCHBOARD_CONNECTORS_PATH'] = join(a, 'missing');
    expect(() => connectorsPath()).toThrow(/SWITCHBOARD_CONNECTORS_PATH: .*missing does not exist/);
  });

  it('refuses a directory that does not exist, naming where it came from', () => {
    expect(() => setConnectorsPath([join(tmpdir(), 'sb-no-such-dir-xyz')])).toThrow(/--connectors: .*sb-no-such-dir-xyz is not a directory/);
    expect(getConnector('granola').manifest.title).toBe('Granola');
  });
});
