import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { mergeManifestParts } from '../../src/manifest/extends.ts';
import { loadManifestFile, ManifestError, formatProblem, manifestFiles } from '../../src/manifest/index.ts';
import { GRANOLA } from '../helpers/manifest.ts';

const root = mkdtempSync(join(tmpdir(), 'sb-extends-'));
const connectors = join(root, 'connectors');
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Granola's manifest split in two: what a vendor's connectors share, and the connector's own part. */
const full = parse(GRANOLA) as Record<string, any>;
const { rate_limit, retry, errors, base_url, auth, ...own } = full;

function write(rel: string, value: unknown): string {
  const file = join(connectors, rel);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, typeof value === 'string' ? value : stringify(value));
  return file;
}

function problems(file: string): string[] {
  try {
    loadManifestFile(file);
  } catch (e) {
    if (e instanceof ManifestError) return e.problems.map(formatProblem);
    throw e;
  }
  return [];
}

describe('manifest extends', () => {
  it('merges shared parts under the manifest: objects by key, auth variants by name, the manifest winning', () => {
    write('_shared/base.yaml', { base_url, errors, retry: { ...retry, max_attempts: 2 } });
    write('_shared/vendor.yaml', {
      extends: 'base.yaml',
      rate_limit: { ...rate_limit, requests: 1 },
      auth: [
        { ...auth[0], token: '{{credentials.api_key}}' },
        { name: 'other', type: 'bearer', fields: { t: { type: 'string', secret: true } }, token: '{{credentials.t}}' },
      ],
    });
    const file = write('notes/connector.yaml', {
      extends: ['../_shared/vendor.yaml'],
      ...own,
      type: 'notes',
      rate_limit: { requests: 7 },
      auth: [{ name: auth[0].name, fields: { api_key: { type: 'string', secret: true, description: 'the key' } } }],
    });
    const m = loadManifestFile(file).manifest as Record<string, any>;
    expect(m['extends']).toBeUndefined();
    expect(m['base_url']).toEqual(base_url);
    expect(m['errors']).toEqual(errors);
    expect(m['retry']).toEqual({ ...retry, max_attempts: 2 });
    expect(m['rate_limit']).toEqual({ ...rate_limit, requests: 7 });
    expect(m['auth'].map((v: { name: string }) => v.name)).toEqual([auth[0].name, 'other']);
    expect(m['auth'][0]).toEqual({ ...auth[0], fields: { api_key: { type: 'string', secret: true, description: 'the key' } } });
    // The connectors directory's registry lists the connector, not the shared folder.
    expect(manifestFiles(connectors)).toEqual([file]);
  });

  it('replaces arrays and scalars, applies a list in order (the later part winning)', () => {
    expect(mergeManifestParts({ a: [1, 2], b: { c: 1, d: 2 }, e: 'x' }, { a: [3], b: { d: 3 }, e: 'y' })).toEqual({ a: [3], b: { c: 1, d: 3 }, e: 'y' });
    write('_shared/one.yaml', { rate_limit: { requests: 1, window_ms: 1000 } });
    write('_shared/two.yaml', { rate_limit: { requests: 2 } });
    const file = write('ordered/connector.yaml', { extends: ['../_shared/one.yaml', '../_shared/two.yaml'], ...full, rate_limit: undefined, type: 'ordered' });
    expect(loadManifestFile(file).manifest.rate_limit).toEqual({ requests: 2, window_ms: 1000 });
  });

  it('refuses a missing part, a cycle, a path outside the connectors directory, and a part setting the type', () => {
    const missing = write('missing/connector.yaml', { extends: '../_shared/nope.yaml', ...full, type: 'missing' });
    expect(problems(missing)).toEqual([expect.stringMatching(/missing\/connector\.yaml:1:\d+ extends: no file .*_shared\/nope\.yaml/)]);

    write('_shared/a.yaml', { extends: 'b.yaml' });
    write('_shared/b.yaml', { extends: ['a.yaml'] });
    const cycle = write('cycle/connector.yaml', { extends: '../_shared/a.yaml', ...full, type: 'cycle' });
    expect(problems(cycle)).toEqual([
      expect.stringMatching(
        /_shared\/b\.yaml:\d+:\d+ extends\.0: "a\.yaml" is a cycle: cycle\/connector\.yaml → _shared\/a\.yaml → _shared\/b\.yaml → _shared\/a\.yaml/,
      ),
    ]);

    writeFileSync(join(root, 'outside.yaml'), stringify({ retry: { max_attempts: 1 } }));
    const outside = write('outside/connector.yaml', { extends: '../../outside.yaml', ...full, type: 'outside' });
    expect(problems(outside)).toEqual([expect.stringContaining('extends: "../../outside.yaml" is outside the connectors directory')]);
    symlinkSync(join(root, 'outside.yaml'), join(connectors, '_shared', 'link.yaml'));
    const linked = write('linked/connector.yaml', { extends: '../_shared/link.yaml', ...full, type: 'linked' });
    expect(problems(linked)).toEqual([expect.stringContaining('is outside the connectors directory')]);

    write('_shared/typed.yaml', { type: 'x', retry: { max_attempts: 1 } });
    const typed = write('typed/connector.yaml', { extends: '../_shared/typed.yaml', ...full, type: 'typed' });
    expect(problems(typed)).toEqual([expect.stringMatching(/_shared\/typed\.yaml:1:7 type: a partial manifest may not set "type"/)]);

    const bad = write('bad/connector.yaml', { extends: [], ...full, type: 'bad' });
    expect(problems(bad)).toEqual([expect.stringContaining('extends: must be a path (relative to this file) or a non-empty list of them')]);
  });

  it('places a problem in a shared value on the shared file and line', () => {
    write('_shared/broken.yaml', 'retry:\n  max_attempts: many\n');
    const file = write('broken/connector.yaml', { extends: '../_shared/broken.yaml', ...full, retry: undefined, type: 'broken' });
    expect(problems(file)).toEqual([expect.stringMatching(/_shared\/broken\.yaml:2:17 retry\.max_attempts: must be integer/)]);
  });
});
