/** Manifest `aliases` and `airbyte_definition_id`: loader validation and the kind index built from them. */
import { describe, expect, it } from 'vitest';
import { connectorRegistry, kindIndex, loadManifestText, type LoadedManifest } from '../../src/manifest/index.ts';
import { GRANOLA, mutate as withChange, problems } from '../helpers/manifest.ts';

describe('aliases and airbyte_definition_id', () => {
  it("the shipped manifests carry Airbyte's display names and definition ids", () => {
    const kinds = kindIndex(connectorRegistry());
    expect(kinds.byName('Monday')).toBe('monday');
    expect(kinds.byName('  granola ')).toBe('granola');
    expect(kinds.byName('INTERCOM')).toBe('intercom');
    expect(kinds.byName('monday.com')).toBe('monday');
    expect(kinds.byName('HubSpot CRM')).toBe('hubspot');
    expect(kinds.byName('no such app')).toBeUndefined();
    expect(kinds.byDefinitionId('9023923c-002f-4131-9554-3ebdf56540a4')).toBe('granola');
    expect(kinds.byDefinitionId('D8313939-3782-41B0-BE29-B3CA20D8DD3A')).toBe('intercom');
    expect(kinds.byDefinitionId('80a54ea2-9959-4040-aac1-eee42423ec9b')).toBe('monday');
    expect(kinds.byDefinitionId('36c891d9-4bd9-43ac-bad2-10e12756272c')).toBe('hubspot');
    expect(kinds.byDefinitionId('00000000-0000-0000-0000-000000000000')).toBeUndefined();
  });

  it.each([
    ['a definition id that is not a UUID', (m: Record<string, any>) => (m.airbyte_definition_id = 'granola-1'), /airbyte_definition_id/],
    ['an empty alias', (m: Record<string, any>) => (m.aliases = ['']), /aliases\.0/],
    ['a blank alias', (m: Record<string, any>) => (m.aliases = ['   ']), /aliases\.0/],
    ['aliases that differ only in case', (m: Record<string, any>) => (m.aliases = ['Granola', 'GRANOLA']), /aliases\.1.*repeats another alias/],
    ['aliases that is not a list', (m: Record<string, any>) => (m.aliases = 'Granola'), /aliases/],
  ])('the loader refuses %s', (_n, change, expected) => {
    expect(problems(withChange(change)).join('\n')).toMatch(expected);
  });

  it('two manifests claiming one alias or one definition id cannot form a registry', () => {
    const granola = loadManifestText(GRANOLA, 'granola.yaml');
    const twin = (change: (m: Record<string, any>) => void): LoadedManifest =>
      loadManifestText(
        withChange((m) => {
          m.type = 'granola_two';
          change(m);
        }),
        'twin.yaml',
      );
    expect(() =>
      kindIndex(
        new Map([
          ['granola', granola],
          ['granola_two', twin((m) => (m.aliases = ['granola']))],
        ]),
      ),
    ).toThrow(/both claim the name "granola"/);
    expect(() =>
      kindIndex(
        new Map([
          ['granola', granola],
          ['granola_two', twin((m) => (m.aliases = ['Other']))],
        ]),
      ),
    ).toThrow(/both claim the airbyte_definition_id/);
    const distinct = twin((m) => {
      m.aliases = ['Other'];
      m.airbyte_definition_id = '11111111-2222-3333-4444-555555555555';
    });
    expect(
      kindIndex(
        new Map([
          ['granola', granola],
          ['granola_two', distinct],
        ]),
      ).byName('other'),
    ).toBe('granola_two');
  });
});
