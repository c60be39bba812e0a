/** What the MCP tests share: one tool call through the SDK client, recorded for the secrets check. */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** Call a tool; its whole result (text and structured content) is appended to `outputs`. */
export async function callTool(client: Client, outputs: string[], name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  outputs.push(JSON.stringify(r));
  return r;
}

/** A result's structured content, for assertions. */
export const structured = (r: CallToolResult): any => r.structuredContent;
