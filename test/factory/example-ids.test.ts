/**
 * Issue 40, class 5: examples holding a `"$id"` key (as real vendors' do) must not make the
 * simulator's ajv refuse the whole description; init scaffolds it too, and a property named
 * `example` is still a schema that validates.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Description, loadDescriptionSync, startOpenApiSimulator } from '../../src/simulator/index.ts';
import { runSwitchboard } from '../helpers/process.ts';

const FILE = 'test/fixtures/factory/example-ids.yaml';

describe('a description whose examples hold "$id" keys', () => {
  let sim: Awaited<ReturnType<typeof startOpenApiSimulator>>;
  beforeAll(async () => {
    sim = await startOpenApiSimulator({ description: new Description(loadDescriptionSync(FILE)), seed: 1 });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('is served: create, get and list work, and bodies are still checked', async () => {
    const url = `${sim.url}/v1/documents`;
    const headers = { authorization: 'Bearer t', 'content-type': 'application/json' };
    const made = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ title: 'Kept' }) });
    expect(made.status).toBe(201);
    const doc = (await made.json()) as { id: string; title: string };
    expect(doc.title).toBe('Kept');
    expect(((await (await fetch(`${url}/${doc.id}`, { headers })).json()) as { title: string }).title).toBe('Kept');
    expect(((await (await fetch(url, { headers })).json()) as { id: string }[]).map((d) => d.id)).toContain(doc.id);
    // The schemas are unchanged: a wrong type is refused.
    expect((await fetch(url, { method: 'POST', headers, body: JSON.stringify({ title: 42 }) })).status).toBe(400);
  });

  it('the original document keeps its examples (only the copy ajv reads loses the $id keys)', () => {
    const d = new Description(loadDescriptionSync(FILE));
    expect((d.at('#/components/schemas/Document/example') as Record<string, unknown>)['$id']).toBe('https://schema.documents.test/doc');
  });

  it('init scaffolds it', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sb-example-ids-')), 'connectors');
    const r = await runSwitchboard(['init', 'docs', '--from-openapi', FILE, '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/1 entity: documents \[list, get, create\]/);
  }, 60_000);
});
