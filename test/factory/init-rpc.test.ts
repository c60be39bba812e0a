/**
 * init on an RPC-style description (methods as paths, /boards.list, in the shapes of Slack's Web
 * API: test/fixtures/factory/rpc.yaml): entities from the methods' verbs, or as a simulator
 * sidecar's `resources` declare them (--sidecar, test/fixtures/factory/rpc-sidecar.yaml), with
 * form-encoded bodies, the credential parameter left to the auth variant and the sidecar's cursor;
 * the scaffold then runs unedited against the generic simulator of the same description and sidecar.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConnectorRuntime, type ListEnvelope, type RecordEnvelope } from '../../src/engine/index.ts';
import { scaffoldFromOpenApi } from '../../src/factory/init-openapi.ts';
import { renderScaffold } from '../../src/factory/scaffold.ts';
import { loadManifestText, type LoadedManifest } from '../../src/manifest/index.ts';
import { loadSidecar, startOpenApiSimulator, type OpenApiSimulator } from '../../src/simulator/index.ts';
import { runSwitchboard } from '../helpers/process.ts';

type Rec = Record<string, any>;
const RPC = 'test/fixtures/factory/rpc.yaml';
const SIDECAR = 'test/fixtures/factory/rpc-sidecar.yaml';

async function scaffold(withSidecar: boolean): Promise<{ m: Rec; loaded: LoadedManifest; report: string[] }> {
  const s = await scaffoldFromOpenApi(RPC, {
    type: 'boards',
    descriptionPath: 'openapi.yaml',
    source: 'test',
    ...(withSidecar ? { sidecar: loadSidecar(SIDECAR) } : {}),
  });
  const yaml = renderScaffold(s);
  const dir = mkdtempSync(join(tmpdir(), 'sb-rpc-'));
  writeFileSync(join(dir, 'openapi.yaml'), readFileSync(RPC));
  return { m: parse(yaml) as Rec, loaded: loadManifestText(yaml, join(dir, 'connector.yaml')), report: s.report };
}

describe('init on RPC-style methods', () => {
  it('without a sidecar: entities from the methods’ verbs (list, info → get, create)', async () => {
    const { m } = await scaffold(false);
    expect(Object.keys(m.entities.boards.actions)).toEqual(['list', 'get', 'create']);
    expect(m.entities.boards.actions.get.request).toMatchObject({ method: 'GET', path: '/boards.info', query: { board: '{{params.board}}' } });
    // The token query parameter is the description's, as no sidecar says the header stands for it.
    expect(m.entities.boards.actions.list.params.token).toMatchObject({ type: 'string', required: true });
    // A form body: its fields are params, sent as application/x-www-form-urlencoded.
    expect(m.entities.boards.actions.create.request).toMatchObject({
      method: 'POST',
      path: '/boards.create',
      body: { name: '{{params.name}}', private: '{{params.private}}' },
      body_encoding: 'form',
    });
    expect(m.entities.boards.actions.create.params.name).toMatchObject({ type: 'string', required: true });
    // notes.history and notes.post name no verb init knows: no notes entity without the sidecar.
    expect(m.entities.notes).toBeUndefined();
  });

  it('with the sidecar: its resources, record properties, id fields, credential params and cursor', async () => {
    const { m } = await scaffold(true);
    expect(Object.keys(m.entities)).toEqual(['boards', 'notes']);
    expect(Object.keys(m.entities.boards.actions)).toEqual(['list', 'get', 'create', 'update']);
    expect(m.entities.boards.actions.update.request).toMatchObject({ path: '/boards.setTopic', body_encoding: 'form' });
    expect(m.entities.boards.actions.get.response).toEqual({ record: '{{body.board}}' });
    expect(m.entities.boards.actions.list.params.token).toBeUndefined();
    expect(m.entities.boards.actions.list.pagination).toEqual({ type: 'cursor', param: 'cursor', next: '{{body.meta.next_cursor}}' });
    expect(m.entities.notes.primary_key).toBe('ts');
    expect(Object.keys(m.entities.notes.actions)).toEqual(['list', 'create']);
    expect(m.entities.notes.actions.create.response).toEqual({ record: '{{body.note}}' });
  });

  describe('the scaffold runs unedited against the simulator of the same description and sidecar', () => {
    let sim: OpenApiSimulator;
    beforeAll(async () => {
      sim = await startOpenApiSimulator({ description: RPC, sidecar: SIDECAR, seed: 5 });
    });
    afterAll(() => sim.close());

    it('lists every page, gets, creates (form body) and updates', async () => {
      const { loaded } = await scaffold(true);
      const rt = new ConnectorRuntime(loaded, { token: 'tok-1' }, { baseUrl: sim.url, limiter: null });
      const all: unknown[] = [];
      for await (const page of rt.pages('boards', { limit: 2 })) all.push(...page.data);
      expect(all).toHaveLength(5);
      const created = (await rt.execute('boards', 'create', { name: 'ops' })) as RecordEnvelope;
      expect(created.data).toMatchObject({ name: 'ops' });
      const id = created.data.id as string;
      expect(((await rt.execute('boards', 'get', { board: id })) as RecordEnvelope).data).toMatchObject({ id, name: 'ops' });
      expect(((await rt.execute('boards', 'update', { board: id, topic: 'Ship it' })) as RecordEnvelope).data).toMatchObject({
        id,
        topic: { value: 'Ship it' },
      });
      const board = String([...sim.resources.get('boards')!.records.values()][0]!.record.id);
      await rt.execute('notes', 'create', { board, text: 'hello' });
      const notes = (await rt.execute('notes', 'list', { board })) as ListEnvelope;
      expect(notes.data.map((n) => (n as Rec).text)).toContain('hello');
    });
  });

  it('switchboard init --sidecar copies the sidecar beside the manifest; a bad sidecar is refused by name', async () => {
    const out = mkdtempSync(join(tmpdir(), 'sb-rpc-init-'));
    const init = await runSwitchboard(['init', 'boards', '--from-openapi', RPC, '--sidecar', SIDECAR, '--out', out]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toMatch(/boards \[list, get, create, update\]; notes \[list, create\]/);
    expect(readFileSync(join(out, 'boards', 'simulator.yaml'), 'utf8')).toBe(readFileSync(SIDECAR, 'utf8'));
    const bad = join(out, 'bad.yaml');
    writeFileSync(bad, 'resources: { boards: { list: "GET /boards.all" } }\n');
    const refused = await runSwitchboard(['init', 'other', '--from-openapi', RPC, '--sidecar', bad, '--out', out]);
    expect(refused.code).not.toBe(0);
    expect(refused.stdout + refused.stderr).toMatch(/resources\.boards\.list: the description has no operation GET \/boards\.all/);
  });
});
