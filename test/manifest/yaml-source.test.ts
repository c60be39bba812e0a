/**
 * The loader parses manifests with js-yaml and keeps `yaml` for problem locations and errors
 * (src/manifest/yaml-source.ts): both must read every manifest alike, and what js-yaml refuses or
 * would expand without bound goes through `yaml`, whose errors are the ones reported.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseYaml } from '../../src/manifest/yaml-source.ts';

const value = (text: string): unknown => {
  const r = parseYaml(text);
  if ('errors' in r) throw new Error(r.errors.map((e) => e.message).join('; '));
  return r.source.value;
};

const files = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => /(^_shared\/.*|connector|simulator)\.yaml$/.test(f))
    .map((f) => join(dir, f));

describe('manifest YAML', () => {
  it('reads every manifest, shared part and sidecar as yaml does', () => {
    const all = files('connectors');
    expect(all.length).toBeGreaterThan(70);
    for (const f of all) {
      const text = readFileSync(f, 'utf8');
      expect(value(text), f).toEqual(parse(text, { maxAliasCount: -1 }));
    }
  });

  it('reads the YAML 1.2 core scalars as yaml does', () => {
    const text = [
      'a: [true, True, TRUE, false, null, Null, ~, "", 0o17, 0x1F, 1e3, -.5, .inf, -.Inf, .nan, 012, 1_000, yes, no, on, off, y]',
      'b: { 2024-01-02: 2024-01-02T03:04:05Z, "k": 12:30, <<: {x: 1} }',
      'c: |\n  line one\n  line two\nd: >-\n  folded\n  text\ne: !!str 42',
    ].join('\n');
    expect(value(text)).toEqual(parse(text));
  });

  it('refuses a duplicate key with its place, as yaml words it', () => {
    const r = parseYaml('type: a\nname: b\ntype: c\n');
    expect('errors' in r && r.errors[0]).toMatchObject({ duplicateKey: true, line: 3, column: 1, message: expect.stringMatching(/unique/i) });
  });

  it('refuses a syntax error with its place', () => {
    const r = parseYaml('type: a\nentities: [unclosed\n');
    expect('errors' in r && r.errors[0]).toMatchObject({ duplicateKey: false, line: expect.any(Number), message: expect.any(String) });
  });

  it('refuses aliases that expand without bound (billion laughs) instead of expanding them', () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++)
      levels.push(
        `${'b'.repeat(i)}: &${'b'.repeat(i)} [${Array(10)
          .fill(i === 1 ? '*a' : `*${'b'.repeat(i - 1)}`)
          .join(', ')}]`,
      );
    const r = parseYaml(levels.join('\n'));
    expect('errors' in r && r.errors[0]!.message).toMatch(/alias/i);
  });

  it('parses the located document only when asked, once', () => {
    const r = parseYaml('type: a\nentities: {}\n');
    if ('errors' in r) throw new Error('unexpected');
    const first = r.source.located();
    expect(r.source.located()).toBe(first);
    expect(first.lines.linePos(first.doc.getIn(['entities'], true) ? 8 : 0)).toEqual({ line: 2, col: 1 });
  });
});
