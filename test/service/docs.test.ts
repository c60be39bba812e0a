/**
 * docs/hosted.md stays true: its error-code table and configuration table list exactly what the
 * registry and the configuration loader know (the README links to them). When this fails, regenerate the tables between the
 * markers from errorCodeTable() and CONFIG_VARIABLES (src/service).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, errorCodeTable } from '../../src/service/index.ts';

describe.each(['docs/hosted.md'])('%s', (file) => {
  const doc = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
  const between = (name: string): string => doc.split(`<!-- ${name}:start -->`)[1]?.split(`<!-- ${name}:end -->`)[0]?.trim() ?? '';

  it('has the error-code table of the registry', () => {
    expect(between('error-codes')).toBe(errorCodeTable());
  });

  it('documents every configuration variable with its default', () => {
    const table = between('config');
    for (const v of CONFIG_VARIABLES) expect(table).toContain(`| \`${v.name}\` | ${v.default} | ${v.description} |`);
  });
});
