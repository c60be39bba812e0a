/** The MCP server's pieces without a process: the connectors file and the output budget. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { isSwitchboardError } from '../../src/errors/index.ts';
import { localBackend, parseConnectorsFile } from '../../src/mcp/local.ts';
import { createMcpServer } from '../../src/mcp/server.ts';
import { capEnvelope, fieldPaths, maxOutputBytesArg, projectEnvelope } from '../../src/mcp/output.ts';

function failure(f: () => unknown): { code: string; message: string; errors: { path: string; message: string }[] } {
  try {
    f();
  } catch (e) {
    if (isSwitchboardError(e)) return { code: e.code, message: e.message, errors: e.errors };
    throw e;
  }
  throw new Error('expected a failure');
}

describe('connectors file', () => {
  const file = 'c.yaml';
  it('substitutes ${VAR} from the environment and keeps the optional keys', () => {
    const text =
      'connectors:\n  - id: g\n    type: granola\n    description: Notes of ${TEAM}\n    base_url: http://127.0.0.1:4010\n    credentials:\n      api_key: ${KEY}\n';
    expect(parseConnectorsFile(text, file, { KEY: 'grn_x', TEAM: 'ops' })).toEqual([
      { id: 'g', type: 'granola', description: 'Notes of ops', base_url: 'http://127.0.0.1:4010', credentials: { api_key: 'grn_x' } },
    ]);
  });

  it('names every missing variable with its connector, and the paths', () => {
    const text =
      'connectors:\n  - id: a\n    type: granola\n    credentials: { api_key: "${A_KEY}" }\n  - id: b\n    type: intercom\n    credentials: { access_token: "${B_TOKEN}" }\n';
    const f = failure(() => parseConnectorsFile(text, file, { A_KEY: '' }));
    expect(f.code).toBe('invalid_connectors_file');
    expect(f.message).toContain('A_KEY (connector a), B_TOKEN (connector b)');
    expect(f.errors.map((e) => e.path)).toEqual(['/connectors/0/credentials/api_key', '/connectors/1/credentials/access_token']);
  });

  it.each([
    ['no connectors list', 'other: 1\n', '/connectors'],
    ['an unknown key', 'connectors:\n  - id: a\n    type: granola\n    token: x\n    credentials: {}\n', '/connectors/0/token'],
    ['an id unfit for tool names', 'connectors:\n  - id: "my notes"\n    type: granola\n    credentials: {}\n', '/connectors/0/id'],
    ['a repeated id', 'connectors:\n  - { id: a, type: granola, credentials: {} }\n  - { id: a, type: granola, credentials: {} }\n', '/connectors/1/id'],
    ['no credentials mapping', 'connectors:\n  - { id: a, type: granola }\n', '/connectors/0/credentials'],
    ['no type', 'connectors:\n  - { id: a, credentials: {} }\n', '/connectors/0/type'],
  ])('refuses %s, with the path', (_n, text, path) => {
    const f = failure(() => parseConnectorsFile(text, file, {}));
    expect(f.code).toBe('invalid_connectors_file');
    expect(f.message.startsWith(`${file}: `)).toBe(true);
    expect(f.errors[0]?.path).toBe(path);
  });

  it('refuses text that is not YAML', () => {
    expect(failure(() => parseConnectorsFile('connectors: [\n', file, {})).message).toContain('is not valid YAML');
  });
});

describe('output budget', () => {
  const records = Array.from({ length: 10 }, (_, i) => ({ id: `r${i}`, text: 'x'.repeat(200) }));
  const bytes = (v: unknown): number => Buffer.byteLength(JSON.stringify(v));

  it('leaves a result within the budget untouched', () => {
    const envelope = { data: records, meta: { cursor: 'c1' } };
    expect(capEnvelope(envelope, bytes(envelope), () => 'next')).toEqual({ value: envelope });
  });

  it('cuts a list at a record boundary, within the budget, saying what was left out', () => {
    const envelope = { data: records, meta: { cursor: 'c1' } };
    const { value, truncated } = capEnvelope(envelope, 1500, (n) => `after ${n}`);
    expect(bytes(value)).toBeLessThanOrEqual(1500);
    expect(value['data']).toEqual(records.slice(0, truncated!.records_returned));
    expect(truncated).toEqual({ budget_bytes: 1500, records_returned: 3, records_omitted: 7, next: 'after 3' });
    expect(value['meta']).toEqual({ cursor: 'c1' });
  });

  it('leaves out a single record larger than the budget whole', () => {
    const { value, truncated } = capEnvelope({ data: { id: 'big', text: 'y'.repeat(5000) } }, 1024, () => 'use fields');
    expect(value).toEqual({ data: null, truncated: { budget_bytes: 1024, records_returned: 0, records_omitted: 1, next: 'use fields' } });
    expect(truncated?.records_omitted).toBe(1);
  });

  it('projects fields of list records and of a single record', () => {
    const paths = fieldPaths(['id', 'owner.email']);
    const list = projectEnvelope({ data: [{ id: 1, x: 2, owner: { email: 'a@b.c', name: 'A' } }], meta: {} }, paths);
    expect(list).toEqual({ data: [{ id: 1, owner: { email: 'a@b.c' } }], meta: {} });
    expect(projectEnvelope({ data: { id: 1, x: 2 } }, fieldPaths(['x']))).toEqual({ data: { x: 2 } });
    expect(failure(() => fieldPaths([])).errors).toEqual([{ path: '/fields', message: 'must be a non-empty array of non-empty strings' }]);
  });

  it('takes a budget of at least 1024 bytes, naming where a bad one came from', () => {
    expect(maxOutputBytesArg(undefined, '--max-output-bytes')).toBe(20_000);
    expect(maxOutputBytesArg('4096', '--max-output-bytes')).toBe(4096);
    expect(failure(() => maxOutputBytesArg('100', '$SWITCHBOARD_MCP_MAX_OUTPUT_BYTES')).message).toContain(
      '$SWITCHBOARD_MCP_MAX_OUTPUT_BYTES must be an integer of at least 1024',
    );
  });
});

describe('tool list', () => {
  it('per-action tools have valid MCP names; without them only the four tools remain', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-mcp-units-'));
    try {
      const file = join(dir, 'c.yaml');
      // Nothing is requested upstream here: listing tools needs the manifests only.
      writeFileSync(
        file,
        'connectors:\n  - {id: notes, type: granola, base_url: "http://127.0.0.1:9", credentials: {api_key: k}}\n  - {id: crm, type: intercom, base_url: "http://127.0.0.1:9", credentials: {access_token: t}}\n',
      );
      const backend = await localBackend(file, {});
      const names = async (actionTools: typeof backend.list): Promise<string[]> => {
        const [a, b] = InMemoryTransport.createLinkedPair();
        await createMcpServer(backend, { readOnly: false, maxOutputBytes: 20_000, actionTools, version: 'test' }).connect(a);
        const client = new Client({ name: 'units', version: '1' });
        await client.connect(b);
        const { tools } = await client.listTools();
        await client.close();
        return tools.map((t) => t.name);
      };
      const all = await names(backend.list);
      expect(all.length).toBe(4 + 2 + 21);
      for (const n of all) expect(n).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
      expect(all).toContain('crm_internal_articles_create');
      expect(await names([])).toEqual(['list_connectors', 'describe', 'execute', 'search']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
