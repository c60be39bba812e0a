/**
 * A manifest's optional `logo`: an https URL or a data:image URI (svg+xml, png, jpeg, gif, webp)
 * of at most 16 kB, nothing else (no javascript:, no http:, nothing that could break out of an
 * HTML attribute); the shipped connectors each carry one, shown by `describe`.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { describeManifest } from '../../src/manifest/describe.ts';
import { formatProblem, getConnector, loadManifestText, ManifestError } from '../../src/manifest/index.ts';

const GRANOLA = readFileSync('connectors/granola/connector.yaml', 'utf8');
const withLogo = (logo: unknown): string => stringify({ ...(parse(GRANOLA) as Record<string, unknown>), logo });

function problems(text: string): string[] {
  try {
    loadManifestText(text, 'test.yaml');
  } catch (e) {
    if (e instanceof ManifestError) return e.problems.map(formatProblem);
    throw e;
  }
  return [];
}

describe('manifest logo', () => {
  it('takes an https URL or a data:image URI', () => {
    for (const ok of ['https://cdn.example.com/granola.svg', 'data:image/png;base64,iVBORw0KGgo=', 'data:image/svg+xml,%3Csvg%20xmlns%3D%22http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%22%2F%3E']) {
      expect(problems(withLogo(ok)), ok).toEqual([]);
    }
  });

  it('refuses anything else, naming the field', () => {
    for (const bad of ['javascript:alert(1)', 'http://cdn.example.com/x.png', 'data:text/html,<script>', 'https://x.example/a b.png', 'https://x.example/"onerror="x', `data:image/png;base64,${'A'.repeat(17_000)}`, 42]) {
      const p = problems(withLogo(bad));
      expect(p.length, String(bad)).toBeGreaterThan(0);
      expect(p.join('\n')).toMatch(/logo/);
    }
  });

  it('every shipped connector has one, and describe reports it', () => {
    for (const type of ['granola', 'intercom', 'monday']) {
      const logo = getConnector(type).manifest.logo;
      expect(logo).toMatch(/^data:image\/svg\+xml;base64,/);
      expect(Buffer.from(logo!.split(',')[1]!, 'base64').toString()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      expect(describeManifest(getConnector(type)).logo).toBe(logo);
    }
  });
});
