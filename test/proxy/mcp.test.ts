/** The MCP proxy tool: off unless enabled, GET/HEAD only on a read-only server, the vendor's answer as the result. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localBackend } from '../../src/mcp/local.ts';
import { createMcpServer } from '../../src/mcp/server.ts';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';

describe('the MCP proxy tool', () => {
  let sim: GranolaSimulator;
  let dir: string;
  let file: string;
  beforeAll(async () => {
    sim = await startGranolaSimulator({ size: 5, rateLimit: false });
    dir = mkdtempSync(join(tmpdir(), 'switchboard-mcp-proxy-'));
    file = join(dir, 'c.yaml');
    writeFileSync(file, `connectors:\n  - {id: notes, type: granola, base_url: "${sim.url}", credentials: {api_key: "${sim.apiKey}"}}\n`);
  });
  afterAll(async () => {
    await sim?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const client = async (o: { proxy?: boolean; readOnly?: boolean }): Promise<Client> => {
    const backend = await localBackend(file, {});
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createMcpServer(backend, {
      readOnly: o.readOnly === true,
      maxOutputBytes: 20_000,
      version: 'test',
      ...(o.proxy !== undefined ? { proxy: o.proxy } : {}),
    }).connect(a);
    const c = new Client({ name: 'proxy-test', version: '1' });
    await c.connect(b);
    return c;
  };

  it('is not offered unless enabled', async () => {
    const c = await client({});
    expect((await c.listTools()).tools.map((t) => t.name)).not.toContain('proxy');
    await c.close();
  });

  it("sends a GET with the connector's credentials and returns the vendor's answer", async () => {
    const c = await client({ proxy: true, readOnly: true });
    const tool = (await c.listTools()).tools.find((t) => t.name === 'proxy');
    expect(tool?.inputSchema.properties?.['method']).toMatchObject({ enum: ['GET', 'HEAD'] });
    const r = (await c.callTool({
      name: 'proxy',
      arguments: { connector: 'notes', method: 'GET', path: '/v1/notes', query: { page_size: 2 } },
    })) as CallToolResult;
    expect(r.isError).toBeUndefined();
    const value = r.structuredContent as { status: number; body: { notes: { id: string }[] } };
    expect(value.status).toBe(200);
    expect(value.body.notes.map((n) => n.id)).toEqual(sim.ids().slice(0, 2));
    await c.close();
  });

  it('a read-only server refuses writing methods before sending anything', async () => {
    const c = await client({ proxy: true, readOnly: true });
    const before = sim.count();
    const r = (await c.callTool({
      name: 'proxy',
      arguments: { connector: 'notes', method: 'POST', path: '/v1/notes', body: { title: 'x' } },
    })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect((r.structuredContent as { error: { code: string } }).error.code).toBe('read_only');
    expect(sim.count()).toBe(before);
    await c.close();
  });

  it('a refused path is a tool error', async () => {
    const c = await client({ proxy: true });
    const r = (await c.callTool({ name: 'proxy', arguments: { connector: 'notes', method: 'GET', path: '/../admin' } })) as CallToolResult;
    expect(r.isError).toBe(true);
    expect((r.structuredContent as { error: { code: string } }).error.code).toBe('proxy_path_refused');
    await c.close();
  });
});
