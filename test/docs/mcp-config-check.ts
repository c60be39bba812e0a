/**
 * The README's MCP client configuration, checked as a client would use it: every server of
 * `mcpServers` is started with its command, args and env (the placeholder directory
 * `/absolute/path/to/switchboard/` standing for the current one), from another directory as a
 * client does, through the official SDK's stdio client,
 * which lists the tools and calls list_connectors. Run: node --import tsx mcp-config-check.ts <config.json>
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

interface ServerConfig {
  command: string;
  args?: string[];
  env?: Record<string, string>;
}

const config = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as { mcpServers: Record<string, ServerConfig> };
for (const [name, server] of Object.entries(config.mcpServers)) {
  // `/absolute/path/to/switchboard/` is the checkout (the current directory here); the server
  // itself starts elsewhere, as a client starts it, so only absolute paths can work.
  const here = (a: string): string => a.replace('/absolute/path/to/switchboard/', `${process.cwd()}/`).replace('/absolute/path/to/', `${process.cwd()}/`);
  const args = (server.args ?? []).map(here);
  const env = Object.fromEntries(Object.entries(server.env ?? {}).map(([k, v]) => [k, here(v)]));
  if (server.command === 'npx') throw new Error(`${name}: "npx" works only inside the checkout; name node and bin/switchboard.js by absolute path`);
  const client = new Client({ name: 'readme-config-check', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: server.command,
      args,
      cwd: mkdtempSync(join(tmpdir(), 'mcp-client-')),
      env: { ...getDefaultEnvironment(), ...env },
      stderr: 'ignore',
    }),
  );
  const { tools } = await client.listTools();
  const listed = (await client.callTool({ name: 'list_connectors' })) as CallToolResult;
  if (listed.isError) throw new Error(`${name}: list_connectors failed: ${JSON.stringify(listed.content)}`);
  const ids = (listed.structuredContent as { data: { id: string }[] }).data.map((c) => c.id);
  console.log(`mcp config ok: ${name}, ${tools.length} tools, connectors ${ids.join(', ')}`);
  await client.close();
}
