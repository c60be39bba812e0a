/** docs/proxy.md's per-connector table is made from the manifests; when this fails, run `npm run docs:tables`. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { proxyTable } from '../../scripts/proxy-table.ts';
import { connectorRegistry } from '../../src/manifest/index.ts';

const doc = readFileSync(new URL('../../docs/proxy.md', import.meta.url), 'utf8');
const between = (name: string): string => doc.split(`<!-- ${name}:start -->`)[1]?.split(`<!-- ${name}:end -->`)[0]?.trim() ?? '';

describe('docs/proxy.md', () => {
  it("lists every connector's base URL, extra hosts and forwarded headers as its manifest declares them", () => {
    expect(between('proxy')).toBe(proxyTable());
    for (const type of connectorRegistry().keys()) expect(between('proxy')).toContain(`| \`${type}\` |`);
    expect(between('proxy')).toContain('`https://uploads.github.com`');
  });
});
