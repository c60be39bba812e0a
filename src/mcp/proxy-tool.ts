/**
 * The MCP `proxy` tool (docs/proxy.md): any endpoint under a connector's base URL, with its
 * credentials, throttle and retries. Off unless the operator enables it (`switchboard mcp
 * --proxy`); a read-only server lets GET and HEAD through only. The answer's body is returned
 * as text (parsed JSON when the vendor answered JSON), cut to the output budget.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { PROXY_METHODS, READ_METHODS, type ProxyRequest, type ProxyResponse } from '../engine/proxy-request.ts';
import { SwitchboardError } from '../errors/index.ts';

/** The tool as tools/list shows it. */
export function proxyTool(readOnly: boolean): Tool {
  const methods = readOnly ? [...READ_METHODS] : [...PROXY_METHODS];
  return {
    name: 'proxy',
    title: "Call any endpoint of a connector's API",
    description:
      `Send ${methods.join(', ')} to any path under a connector's base URL with the connector's credentials (for endpoints no action models; prefer execute where one does). ` +
      "Answers {status, headers, body} as the vendor sent them. Paths must stay under the base URL (no '..', '//host' or absolute URLs)." +
      (readOnly ? ' This server is read-only: GET and HEAD only.' : ' Writing methods change data in the third-party system.'),
    inputSchema: {
      type: 'object',
      required: ['connector', 'method', 'path'],
      additionalProperties: false,
      properties: {
        connector: { type: 'string', description: 'Connector id (see list_connectors)' },
        method: { type: 'string', enum: methods },
        path: { type: 'string', minLength: 1, description: "Path under the connector's base URL, e.g. /repos/octo/hello/branches" },
        query: { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
        headers: { type: 'object', additionalProperties: { type: 'string' }, description: "Only headers on the connector's allow-list (docs/proxy.md)" },
        body: { description: 'Request body; an object or array is sent as JSON' },
      },
    },
    annotations: { title: "Call a connector's API", readOnlyHint: readOnly, destructiveHint: !readOnly, idempotentHint: false, openWorldHint: true },
  };
}

/** Check the arguments (and the read-only limit) into a proxy request. */
export function proxyToolRequest(args: Record<string, unknown>, readOnly: boolean): ProxyRequest {
  const method = typeof args['method'] === 'string' ? args['method'].toUpperCase() : '';
  if (typeof args['path'] !== 'string' || args['path'] === '' || !(PROXY_METHODS as readonly string[]).includes(method)) {
    throw new SwitchboardError('invalid_params', `proxy needs method (${PROXY_METHODS.join(', ')}) and path`, {
      errors: [{ path: '/', message: 'method and path are required' }],
    });
  }
  if (readOnly && !READ_METHODS.has(method)) {
    throw new SwitchboardError('read_only', `This MCP server is read-only: the proxy sends GET and HEAD only, not ${method}`, { details: { method } });
  }
  const body = args['body'];
  return {
    method,
    path: args['path'],
    ...(args['query'] !== undefined ? { query: args['query'] as Record<string, string> } : {}),
    ...(args['headers'] !== undefined ? { headers: args['headers'] as Record<string, string> } : {}),
    ...(body !== undefined && body !== null ? { body: typeof body === 'string' ? body : (body as Record<string, unknown>) } : {}),
  };
}

/** The tool's result: status, headers and the body (JSON parsed, else text), cut to `budget` bytes. */
export function proxyToolResult(answer: ProxyResponse, budget: number): CallToolResult {
  const text = answer.body.toString('utf8');
  const cut = answer.body.length > budget;
  let body: unknown = cut ? answer.body.subarray(0, budget).toString('utf8') : text;
  if (!cut && /json/i.test(answer.headers['content-type'] ?? '')) {
    try {
      body = JSON.parse(text) as unknown;
    } catch {
      body = text;
    }
  }
  const value = { status: answer.status, headers: answer.headers, body, ...(cut ? { truncated: { bytes: answer.body.length, returned: budget } } : {}) };
  return {
    content: [
      { type: 'text', text: `HTTP ${answer.status}${cut ? ` (body cut to ${budget} of ${answer.body.length} bytes)` : ''}` },
      { type: 'text', text: JSON.stringify(value) },
    ],
    structuredContent: value,
    ...(answer.status >= 400 ? { isError: true } : {}),
  };
}
