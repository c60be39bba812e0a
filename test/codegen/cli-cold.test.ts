/**
 * `switchboard codegen` with nothing cached (src/cli/manifest-commands.ts): the generators load in
 * worker threads and each connector's schemas go to one as soon as its manifest has loaded. The
 * output is the same as ever, and a manifest that fails to load still ends the run at once (the
 * work already started is dropped, nothing keeps the process alive).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { runSwitchboard } from '../helpers/process.ts';

const scratch = mkdtempSync(join(tmpdir(), 'sb-codegen-cold-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('codegen with an empty cache', () => {
  it('--check finds generated/ current, and fills the cache (an entry per connector, the manifest and OpenAPI types)', async () => {
    const cache = join(scratch, 'cache');
    const r = await runSwitchboard(['codegen', '--check'], { SWITCHBOARD_CODEGEN_CACHE_DIR: cache });
    expect(r.stdout).toMatch(/generated\/ is current/);
    expect(r.code).toBe(0);
    const connectors = readdirSync('generated', { withFileTypes: true }).filter((d) => d.isDirectory()).length;
    expect(readdirSync(cache).filter((f) => f.endsWith('.txt'))).toHaveLength(connectors + 2);
  }, 120_000);

  it('stops at once, with the problem, when a manifest does not load', async () => {
    const dir = join(scratch, 'connectors');
    const { vendor_description: _vd, ...m } = parse(readFileSync('connectors/granola/connector.yaml', 'utf8')) as Record<string, unknown>;
    mkdirSync(join(dir, 'good_notes'), { recursive: true });
    writeFileSync(join(dir, 'good_notes', 'connector.yaml'), stringify({ ...m, type: 'good_notes', title: 'Good notes' }));
    mkdirSync(join(dir, 'bad_notes'), { recursive: true });
    writeFileSync(join(dir, 'bad_notes', 'connector.yaml'), 'manifest_version: 1\ntype: bad_notes\ntitle: x\n');
    const r = await runSwitchboard(['codegen', '--check', '--connectors', dir], { SWITCHBOARD_CODEGEN_CACHE_DIR: join(scratch, 'cache-bad') });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/bad_notes\/connector\.yaml.*missing required key "entities"/);
  }, 120_000);
});
