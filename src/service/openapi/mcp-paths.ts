/**
 * POST /mcp in the OpenAPI document. OpenAPI describes the HTTP exchange (one JSON-RPC message
 * in, its answer out); the MCP tools, their arguments and results are described by the server
 * itself (tools/list) and in README.md ("AI agents: the MCP server").
 */
import { type Schema } from '../http/schemas.ts';
import { McpQuerySchema } from '../http/account-schemas.ts';

const JSON_RPC: Schema = {
  type: 'object',
  required: ['jsonrpc'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'integer'] },
    method: { type: 'string' },
    params: { type: 'object' },
    result: { type: 'object' },
    error: { type: 'object' },
  },
  additionalProperties: true,
};

const DESCRIPTION = [
  'The Model Context Protocol server over Streamable HTTP, stateless: POST one JSON-RPC message (initialize, tools/list, tools/call, ...)',
  "with `Accept: application/json, text/event-stream`; the answer is JSON. Use an MCP client (e.g. the official SDK's StreamableHTTPClientTransport) with the bearer token in its request headers.",
  'Tools: `list_connectors`, `describe` {connector, entity?}, `execute` {connector, entity, action, params?, fields?} and `search` {connector, entity, query, limit?, cursor?, fields?};',
  '`connector` is the connector id. Results are structured content with a short text summary; execute and search results are cut to SWITCHBOARD_MCP_MAX_OUTPUT_BYTES at a record boundary (`truncated` says how many records were left out and how to get them).',
  'Tool failures are tool results with `isError: true` and `structuredContent.error` = {code, message, errors?: [{path, message}]} (codes from the table above); only failures of the HTTP request itself (authentication, rate limit) are problem details.',
].join(' ');

export function mcpOpenApiPaths(h: {
  json: (s: Schema) => Schema;
  problems: (...s: number[]) => Record<string, Schema>;
  orgHeader: Schema;
  authed: number[];
}): Record<string, Schema> {
  const queryParams = Object.entries((McpQuerySchema['properties'] ?? {}) as Record<string, Schema>).map(([name, s]) => ({
    name,
    in: 'query',
    required: false,
    description: s['description'],
    schema: s,
  }));
  const notAllowed = (method: string): Schema => ({
    operationId: `mcp${method}`,
    summary: `Not supported: the MCP server is stateless (no SSE stream, no session); 405 with Allow: POST`,
    parameters: [h.orgHeader],
    responses: { ...h.problems(...h.authed, 405) },
  });
  return {
    '/mcp': {
      post: {
        operationId: 'mcp',
        summary: "MCP server (Streamable HTTP) over the organization's connectors: list_connectors, describe, execute, search",
        description: DESCRIPTION,
        parameters: [...queryParams, h.orgHeader],
        requestBody: { required: true, content: h.json(JSON_RPC) },
        responses: {
          200: { description: 'The JSON-RPC response', content: h.json(JSON_RPC) },
          202: { description: 'A notification or response was accepted (no body)' },
          ...h.problems(...h.authed),
        },
      },
      get: notAllowed('Get'),
      delete: notAllowed('Delete'),
    },
  };
}
