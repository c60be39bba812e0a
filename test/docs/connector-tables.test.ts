/**
 * README.md's connector and sandbox tables are made from the manifests and the sandbox
 * (scripts/connector-tables.ts); when this fails, run `npm run docs:tables`.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { connectorTable, sandboxTable } from '../../scripts/connector-tables.ts';
import { connectorRegistry } from '../../src/manifest/index.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const between = (name: string): string => readme.split(`<!-- ${name}:start -->`)[1]?.split(`<!-- ${name}:end -->`)[0]?.trim() ?? '';

describe('README connector tables', () => {
  it('lists every connector of the registry as its manifest describes it', () => {
    expect(between('connectors')).toBe(connectorTable());
    for (const type of connectorRegistry().keys()) expect(between('connectors')).toContain(`| \`${type}\` |`);
  });

  it('lists every simulator the sandbox starts, with its port and sample credentials', async () => {
    expect(between('sandbox')).toBe(await sandboxTable());
  });
});
