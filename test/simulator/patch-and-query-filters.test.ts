/**
 * The generic simulator on our own test/fixtures/factory/patch-filters.yaml: an update sent as JSON
 * Patch operations writes (and removes) the paths they name and appends to an array on `add`; a
 * list rule's `filters` keep the records the query asks for (a time, a comma-separated list of
 * ids); a seed naming an id fills the template's other fields with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';

type Rec = Record<string, any>;
const fixture = (name: string): string => new URL(`../fixtures/factory/${name}`, import.meta.url).pathname;

describe('JSON Patch updates and query filters of list rules', () => {
  let sim: OpenApiSimulator;
  const call = async (path: string, init?: RequestInit): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${sim.url}${path}`, { ...init, headers: { 'content-type': 'application/json' } });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
  };
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: fixture('patch-filters.yaml'), sidecar: fixture('patch-filters-sidecar.yaml'), seed: 3 });
  });
  afterAll(() => sim.close());

  it('applies replace, add (appending to an array) and remove operations, answering 204; a seeded id fills the template', async () => {
    expect((await call('/surveys/aB3dE6')).body.self).toEqual({ href: 'https://api.example.test/surveys/aB3dE6' });
    const ops = [
      { op: 'replace', path: '/title', value: 'Renamed' },
      { op: 'replace', path: '/settings/is_public', value: false },
      { op: 'add', path: '/owners', value: { email: 'ben@example.com' } },
      { op: 'remove', path: '/settings/language' },
    ];
    const patched = await call('/surveys/aB3dE6', { method: 'PATCH', body: JSON.stringify(ops) });
    expect(patched).toEqual({ status: 204, body: undefined });
    const got = (await call('/surveys/aB3dE6')).body as Rec;
    expect(got).toMatchObject({
      id: 'aB3dE6',
      title: 'Renamed',
      settings: { is_public: false },
      owners: [{ email: 'ada@example.com' }, { email: 'ben@example.com' }],
    });
    expect(got['settings']).not.toHaveProperty('language');
  });

  it('keeps the records a list rule’s filters ask for: since a time, and any of a comma-separated list', async () => {
    const all = (await call('/surveys/aB3dE6/entries')).body.items as Rec[];
    expect(all.length).toBeGreaterThan(1);
    const times = all.map((e) => String(e['submitted_at']));
    expect([...times].sort().reverse()).toEqual(times);
    const since = times[1]!;
    const recent = (await call(`/surveys/aB3dE6/entries?since=${encodeURIComponent(since)}`)).body as Rec;
    expect(recent.items.map((e: Rec) => e['submitted_at'])).toEqual(times.slice(0, 2));
    expect(recent.total_items).toBe(2);
    const two = [all[0]!['entry_id'], all.at(-1)!['entry_id']];
    expect(((await call(`/surveys/aB3dE6/entries?ids=${two.join(',')}`)).body.items as Rec[]).map((e) => e['entry_id'])).toEqual(two);
    expect((await call('/surveys/aB3dE6/entries?ids=00000000000000000000000000000000')).body.items).toEqual([]);
  });
});
