/**
 * The MCP server over Switchboard's connectors, the same in both modes: local (stdio, library
 * mode, connectors from a YAML file) and hosted (POST /mcp, an organization's stored connectors).
 * Built on the official SDK's low-level Server, so each tool's input schema is a JSON Schema
 * (our manifests' generated ones) rather than a zod translation.
 *
 * Tools: list_connectors, describe, execute, search; locally, with few instances, also one tool
 * per connector action (`<id>_<entity>_<action>`, its params schema as the input schema).
 * Results are structured content (JSON) with a short text summary, capped to a byte budget
 * (output.ts). Failures are tool errors (isError: true) carrying our error code and the failing
 * param paths: { error: { code, message, errors?: [{path, message}], details? } }.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  ListToolsRequestSchema,
  McpError,
  PingRequestSchema,
  type CallToolResult,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { ValidateFunction } from 'ajv';
import { SwitchboardError, type ErrorDetail } from '../errors/index.ts';
import { createAjv } from '../manifest/index.ts';
import { proxyToolRequest, proxyToolResult } from './proxy-tool.ts';
import { ToolRuns } from './tool-runs.ts';
import { actionTools, inputSchemas, listTools, SEARCH_ACTION_NAMES, TOOL_NAMES, type ActionTool, type GenericToolName } from './tools.ts';
import type { McpBackend, McpServerOptions } from './types.ts';

export type { McpBackend, McpInstance, McpServerOptions } from './types.ts';
export { actionToolName } from './tools.ts';

/** A tool error: our code, message and failing paths, as text and as structured content. */
export function toolError(e: unknown): CallToolResult {
  const err = e instanceof SwitchboardError ? e : new SwitchboardError('internal_error', 'Internal error');
  const lines = [`${err.code}: ${err.message}`, ...err.errors.map((x) => `  ${x.path}: ${x.message}`)];
  return { isError: true, content: [{ type: 'text', text: lines.join('\n') }], structuredContent: { error: err.toJSON() } };
}

function argErrors(validate: ValidateFunction): ErrorDetail[] {
  return (validate.errors ?? []).map((e) => {
    if (e.keyword === 'required') return { path: `/${String(e.params['missingProperty'])}`, message: 'is required' };
    if (e.keyword === 'additionalProperties')
      return { path: `${e.instancePath}/${String(e.params['additionalProperty'])}`, message: 'is not a known argument' };
    if (e.keyword === 'enum') return { path: e.instancePath, message: `must be one of: ${(e.params['allowedValues'] as unknown[]).join(', ')}` };
    return { path: e.instancePath || '/', message: e.message ?? 'is invalid' };
  });
}

/** The requests this server answers, with the SDK's schemas of their params. */
const REQUEST_SCHEMAS: Record<string, { safeParse(v: unknown): { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } } }> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'tools/call': CallToolRequestSchema,
};

/**
 * The JSON-RPC answer to a request whose params do not match its method's schema: -32602
 * Invalid params, naming each failing path (`/params/name`) in a sentence and in
 * `data.errors`; undefined when the message is fine (or not a request this server answers).
 * The SDK would let its schema's exception through as -32603 Internal error with the raw
 * validation dump as the message.
 */
export function invalidParamsResponse(message: JSONRPCMessage): JSONRPCErrorResponse | undefined {
  if (!isJSONRPCRequest(message)) return undefined;
  const schema = REQUEST_SCHEMAS[message.method];
  if (schema === undefined) return undefined;
  const r = schema.safeParse(message);
  if (r.success) return undefined;
  const errors: ErrorDetail[] = (r.error?.issues ?? []).map((i) => ({ path: `/${i.path.map(String).join('/')}`, message: i.message }));
  return {
    jsonrpc: '2.0',
    id: message.id,
    error: {
      code: ErrorCode.InvalidParams,
      message: `Invalid params for ${message.method}: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
      data: { errors },
    },
  };
}

/** The answer to a request refused by McpServerOptions.admitRequest: a tool error for tools/call, else a JSON-RPC server error with our code. */
function refusedResponse(message: JSONRPCRequest, e: unknown): JSONRPCMessage {
  const err = e instanceof SwitchboardError ? e : new SwitchboardError('internal_error', 'Internal error');
  if (message.method === 'tools/call') return { jsonrpc: '2.0', id: message.id, result: toolError(err) };
  return { jsonrpc: '2.0', id: message.id, error: { code: -32000, message: `${err.code}: ${err.message}`, data: err.toJSON() } };
}

/**
 * The SDK's Server on any transport (stdio and Streamable HTTP alike), with two checks before
 * a request reaches its handler: invalid params answer -32602 (invalidParamsResponse), and
 * each request is admitted by `admitRequest` when given.
 */
class SwitchboardMcpServer extends Server {
  constructor(
    info: ConstructorParameters<typeof Server>[0],
    options: ConstructorParameters<typeof Server>[1],
    private readonly admitRequest: (() => Promise<void>) | undefined,
    private readonly log: McpServerOptions['log'],
  ) {
    super(info, options);
  }

  override async connect(transport: Transport): Promise<void> {
    await super.connect(transport);
    const deliver = transport.onmessage;
    const answer = (m: JSONRPCMessage, id: JSONRPCRequest['id'] | undefined): void =>
      void transport.send(m, id === undefined ? undefined : { relatedRequestId: id }).catch(() => undefined);
    transport.onmessage = (message, extra) => {
      const refusal = invalidParamsResponse(message);
      if (refusal !== undefined) return answer(refusal, refusal.id);
      if (this.admitRequest === undefined || !isJSONRPCRequest(message)) return deliver?.(message, extra);
      this.admitRequest().then(
        () => deliver?.(message, extra),
        (e: unknown) => {
          this.log?.({
            method: message.method,
            ...(message.method === 'tools/call' ? { tool: (message.params as { name?: unknown } | undefined)?.name } : {}),
            outcome: e instanceof SwitchboardError ? e.code : 'internal_error',
          });
          answer(refusedResponse(message, e), message.id);
        },
      );
    };
  }
}

/** What tools/call needs besides the request: the backend, the tools' runs, and the compiled argument schemas. */
interface CallContext {
  backend: McpBackend;
  options: McpServerOptions;
  runs: ToolRuns;
  validators: Record<GenericToolName, ValidateFunction>;
  actionTools: Map<string, ActionTool>;
  proxyOn: boolean;
}

/** One generic tool's run, once its arguments are valid. */
async function runGeneric(c: CallContext, name: GenericToolName, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
  if (name === 'list_connectors') return c.runs.listConnectors();
  const instance = await c.backend.instance(String(args['connector']));
  if (name === 'describe') return c.runs.describe(instance, args['entity']);
  if (name === 'execute' && (SEARCH_ACTION_NAMES as readonly string[]).includes(String(args['action']))) {
    return c.runs.search(instance, {
      connector: args['connector'],
      entity: args['entity'],
      ...((args['params'] ?? {}) as Record<string, unknown>),
      ...(args['fields'] !== undefined ? { fields: args['fields'] } : {}),
    });
  }
  if (name === 'execute')
    return c.runs.execute(instance, String(args['entity']), String(args['action']), (args['params'] ?? {}) as Record<string, unknown>, args['fields'], signal);
  if (name === 'changes') return c.runs.changes(instance, args);
  return c.runs.search(instance, args);
}

/** tools/call: a per-action tool, the proxy tool, or a generic tool; one log line per call. */
async function callTool(c: CallContext, name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
  const { options } = c;
  const entry: Record<string, unknown> = { tool: name };
  try {
    const perAction = c.actionTools.get(name);
    if (perAction !== undefined) {
      Object.assign(entry, { connector: perAction.instance.id, entity: perAction.entity, action: perAction.action });
      const result = await c.runs.execute(perAction.instance, perAction.entity, perAction.action, args, undefined, signal);
      options.log?.({ ...entry, outcome: 'ok' });
      return result;
    }
    if (name === 'proxy' && c.proxyOn) {
      const request = proxyToolRequest(args, options.readOnly);
      Object.assign(entry, { connector: args['connector'], method: request.method });
      const answer = await (c.backend.proxy as NonNullable<McpBackend['proxy']>)(await c.backend.instance(String(args['connector'])), request, signal);
      options.log?.({ ...entry, outcome: 'ok', status: answer.status });
      return proxyToolResult(answer, options.maxOutputBytes);
    }
    if (!(TOOL_NAMES as readonly string[]).includes(name)) {
      // A protocol error (the MCP spec's "Unknown tool"), not a tool result.
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${name}"; tools: ${[...TOOL_NAMES, ...c.actionTools.keys()].join(', ')}`, {
        errors: [{ path: '/params/name', message: 'is not a tool of this server' }],
      });
    }
    const validate = c.validators[name as GenericToolName];
    if (!validate(args)) {
      const errors = argErrors(validate);
      throw new SwitchboardError('invalid_params', `Invalid arguments for ${name}: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, { errors });
    }
    Object.assign(entry, { connector: args['connector'], entity: args['entity'], action: args['action'] });
    const result = await runGeneric(c, name as GenericToolName, args, signal);
    options.log?.({ ...entry, outcome: 'ok' });
    return result;
  } catch (e) {
    if (e instanceof McpError) {
      options.log?.({ ...entry, outcome: 'invalid_params' });
      throw e;
    }
    options.log?.({
      ...entry,
      outcome: e instanceof SwitchboardError ? e.code : 'internal_error',
      ...(e instanceof SwitchboardError ? {} : { err_name: (e as Error)?.name, err_message: (e as Error)?.message }),
    });
    return toolError(e);
  }
}

/** Build the server; connect it to a transport (stdio, or one Streamable HTTP request). */
export function createMcpServer(backend: McpBackend, options: McpServerOptions): Server {
  const server = new SwitchboardMcpServer(
    { name: 'switchboard', version: options.version },
    { capabilities: { tools: {} } },
    options.admitRequest,
    options.log,
  );
  const schemas = inputSchemas(options.readOnly);
  const ajv = createAjv();
  const validators = Object.fromEntries(TOOL_NAMES.map((n) => [n, ajv.compile(schemas[n])])) as Record<GenericToolName, ValidateFunction>;
  const runs = new ToolRuns(backend, options.readOnly, options.maxOutputBytes);
  const proxyOn = options.proxy === true && backend.proxy !== undefined;
  const tools = actionTools(options.actionTools ?? [], runs.keep);
  server.setRequestHandler(ListToolsRequestSchema, async () =>
    listTools(backend, { readOnly: options.readOnly, budget: options.maxOutputBytes, schemas, actionTools: tools, proxyOn }),
  );
  const c: CallContext = { backend, options, runs, validators, actionTools: tools, proxyOn };
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) =>
    callTool(c, request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>, extra.signal),
  );
  return server;
}
