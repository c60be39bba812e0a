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
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { ValidateFunction } from 'ajv';
import type { Envelope } from '../engine/index.ts';
import { SwitchboardError, type ErrorDetail } from '../errors/index.ts';
import { createAjv, paramsSchema, SYNC_ONLY_ACTIONS, type LoadedManifest } from '../manifest/index.ts';
import { describeManifest, READ_ACTIONS, type EntityInfo } from '../manifest/describe.ts';
import { capEnvelope, fieldPaths, projectEnvelope } from './output.ts';
import { proxyTool, proxyToolRequest, proxyToolResult } from './proxy-tool.ts';
import type { ProxyRequest, ProxyResponse } from '../engine/proxy-request.ts';

/** One connector the server exposes: a local instance from the connectors file, or a hosted connector. */
export interface McpInstance {
  /** What tools call it by: the file's `id` locally, the connector id hosted. */
  id: string;
  type: string;
  manifest: LoadedManifest;
  /** The file's description locally; hosted, the connector's name. */
  description?: string;
  /** Hosted only. */
  customer_name?: string;
}

/** Where tools run: library mode in this process, or the hosted service. */
export interface McpBackend {
  mode: 'local' | 'hosted';
  /** Every instance in scope (bounded by the backend). */
  instances(): Promise<McpInstance[]>;
  /** One instance, or connector_not_found. */
  instance(id: string): Promise<McpInstance>;
  /** Run list/get/create/update; errors are SwitchboardErrors with secrets scrubbed and param paths under /params. */
  execute(instance: McpInstance, entity: string, action: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<Envelope>;
  /** Search synced records (hosted), or search_hosted_only (local). */
  search(instance: McpInstance, entity: string, params: Record<string, unknown>): Promise<{ data: unknown[]; meta: Record<string, unknown> }>;
  /** The change feed of a synced entity (hosted); absent locally (the tool then answers search_hosted_only). */
  changes?(instance: McpInstance, entity: string, q: { modified_after?: string; limit?: number }): Promise<{ data: unknown[]; next_cursor: string | null; has_more: boolean }>;
  /** A pass-through proxy call (proxy-tool.ts); errors scrubbed like execute's. */
  proxy?(instance: McpInstance, request: ProxyRequest, signal?: AbortSignal): Promise<ProxyResponse>;
}

export interface McpServerOptions {
  /** Expose list, get and search only; create and update are refused with a read_only tool error. */
  readOnly: boolean;
  /** Byte budget of one result's JSON (output.ts). */
  maxOutputBytes: number;
  /** Instances that also get one tool per action (local mode with few instances); default none. */
  actionTools?: McpInstance[];
  /** Package version, reported to clients. */
  version: string;
  /**
   * Called before each JSON-RPC request runs (every message of a batch; not notifications);
   * throwing a SwitchboardError refuses that request: a tools/call with a tool error, any other
   * method with a -32000 error carrying the code (hosted: the organization's request limit, so
   * every call of a batch counts like a REST request).
   */
  admitRequest?: () => Promise<void>;
  /** Offer the `proxy` tool (proxy-tool.ts) when the backend has one; default off. */
  proxy?: boolean;
  /** One line per tool call: tool, connector, entity, action, outcome code. Never params or results. */
  log?: (entry: Record<string, unknown>) => void;
}

/** Tools of the four generic kinds. */
const TOOL_NAMES = ['list_connectors', 'describe', 'execute', 'search', 'changes'] as const;
/** execute's names of search: ours, and Airbyte's since April 2026. */
const SEARCH_ACTION_NAMES = ['search', 'context_store_search'] as const;

/** What MCP clients accept as a tool name. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** At most this many connectors are named in tool descriptions (list_connectors lists them all). */
const DESCRIBED_INSTANCES = 20;

/** A per-action tool's name: `<id>_<entity>_<action>` (MCP tool names: letters, digits, _ and -; at most 64). */
export function actionToolName(id: string, entity: string, action: string): string {
  return `${id}_${entity}_${action}`;
}

function oneLine(s: string | undefined): string {
  return (s ?? '').replace(/\s+/g, ' ').trim();
}

function instanceLine(i: McpInstance): string {
  const m = i.manifest.manifest;
  return `- ${i.id}: ${m.title}${i.description ? ` (${oneLine(i.description)})` : ''} — ${oneLine(m.description)}`;
}

function connectorsBlurb(instances: McpInstance[]): string {
  if (instances.length === 0) return 'No connectors are available.';
  const shown = instances.slice(0, DESCRIBED_INSTANCES).map(instanceLine).join('\n');
  return `Connectors:\n${shown}${instances.length > DESCRIBED_INSTANCES ? `\n(and ${instances.length - DESCRIBED_INSTANCES} more: see list_connectors)` : ''}`;
}

const FIELDS_SCHEMA = { type: 'array', items: { type: 'string', minLength: 1 }, minItems: 1, description: 'Only these fields of each record (dotted paths allowed, e.g. "owner.email")' };

function inputSchemas(readOnly: boolean): Record<(typeof TOOL_NAMES)[number], Tool['inputSchema']> {
  const connector = { type: 'string', minLength: 1, description: 'Connector id, from list_connectors' };
  return {
    list_connectors: { type: 'object', properties: {}, additionalProperties: false },
    describe: {
      type: 'object',
      properties: { connector, entity: { type: 'string', minLength: 1, description: 'One entity (e.g. contacts); default every entity' } },
      required: ['connector'],
      additionalProperties: false,
    },
    execute: {
      type: 'object',
      properties: {
        connector,
        entity: { type: 'string', minLength: 1, description: 'Entity, e.g. notes, contacts, items' },
        action: {
          type: 'string',
          enum: ['list', 'get', 'create', 'update', ...SEARCH_ACTION_NAMES],
          description: `${readOnly ? 'list or get (this server is read-only: create and update are refused)' : 'list, get, create or update'}; search or context_store_search (Airbyte's name) run the search tool with params as its arguments`,
        },
        params: { type: ['object', 'null'], description: "The action's params; describe gives each action's params JSON Schema (null: none)" },
        fields: FIELDS_SCHEMA,
      },
      required: ['connector', 'entity', 'action'],
      additionalProperties: false,
    },
    search: {
      type: 'object',
      properties: {
        connector,
        entity: { type: 'string', minLength: 1, description: 'An entity with search fields (describe lists them)' },
        query: {
          type: 'object',
          additionalProperties: false,
          properties: {
            filter: { type: 'object', description: '{operator: {field: value}}, e.g. {"eq": {"email": "a@b.c"}}, {"and": [...]}; describe lists each search field\'s operators' },
            sort: { type: 'array', items: { type: 'object', additionalProperties: { type: 'string', enum: ['asc', 'desc'] } }, description: '[{field: "asc" | "desc"}]' },
          },
        },
        limit: { type: 'integer', minimum: 1, maximum: 1000, description: 'Page size (default 1000; the output budget may cut the page, see truncated)' },
        cursor: { type: 'string', minLength: 1, description: 'meta.cursor of the previous result' },
        fields: FIELDS_SCHEMA,
      },
      required: ['connector', 'entity', 'query'],
      additionalProperties: false,
    },
    changes: {
      type: 'object',
      properties: {
        connector,
        entity: { type: 'string', minLength: 1, description: 'A synced entity' },
        modified_after: { type: 'string', minLength: 1, description: 'next_cursor (or a _metadata.cursor) of a previous result: only changes after it' },
        limit: { type: 'integer', minimum: 1, maximum: 1000, description: 'Entries per page (default 100; the output budget may cut the page)' },
      },
      required: ['connector', 'entity'],
      additionalProperties: false,
    },
  };
}

/** A tool error: our code, message and failing paths, as text and as structured content. */
export function toolError(e: unknown): CallToolResult {
  const err = e instanceof SwitchboardError ? e : new SwitchboardError('internal_error', 'Internal error');
  const lines = [`${err.code}: ${err.message}`, ...err.errors.map((x) => `  ${x.path}: ${x.message}`)];
  return { isError: true, content: [{ type: 'text', text: lines.join('\n') }], structuredContent: { error: err.toJSON() } };
}

function ok(summary: string, value: Record<string, unknown>): CallToolResult {
  // Clients that read only `content` still get the JSON (the MCP spec's advice for structured results).
  return { content: [{ type: 'text', text: summary }, { type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

function argErrors(validate: ValidateFunction): ErrorDetail[] {
  return (validate.errors ?? []).map((e) => {
    if (e.keyword === 'required') return { path: `/${String(e.params['missingProperty'])}`, message: 'is required' };
    if (e.keyword === 'additionalProperties') return { path: `${e.instancePath}/${String(e.params['additionalProperty'])}`, message: 'is not a known argument' };
    if (e.keyword === 'enum') return { path: e.instancePath, message: `must be one of: ${(e.params['allowedValues'] as unknown[]).join(', ')}` };
    return { path: e.instancePath || '/', message: e.message ?? 'is invalid' };
  });
}

/** How to see records a cut list left out, and how to reach the next page. */
function listNext(instance: McpInstance, entity: string, params: Record<string, unknown>): (returned: number) => string {
  const action = instance.manifest.entities.get(entity)?.actions.get('list');
  const names = Object.keys(action?.def.params ?? {});
  const p = action?.pagination?.def;
  const sizeParam = (p !== undefined && 'limit_param' in p ? p.limit_param : undefined) ?? ['page_size', 'per_page', 'limit', 'first'].find((n) => names.includes(n));
  const page =
    p === undefined || !('param' in p)
      ? ''
      : p.type === 'page'
        ? ` The next page is params.${p.param} = ${String(Number(params[p.param] ?? p.start ?? 1) + 1)}.`
        : p.type === 'offset'
          ? ` The next page: params.${p.param} + the page size.`
          : ` The next page: pass meta's cursor as params.${p.param}.`;
  return (returned) =>
    `${returned === 0 ? 'Not even one record fits the output budget: ' : 'To see the records left out of this page, call again '}with fewer fields (fields: [...])${sizeParam !== undefined ? ` or a smaller page (params.${sizeParam})` : ''}.${page}`;
}

function recordNext(): string {
  return 'The record is larger than the output budget: call again with fields: [...] naming the fields you need.';
}

/**
 * An entity's description for a model: the JSON Schemas without the CLI's table rows (record
 * fields, param rows) that repeat them. The record schema and the search operators only when one
 * entity is asked for, so a whole connector's description stays small (Intercom's and monday's
 * would be about 60 kB with them, 10–15 kB without).
 */
function forModel(e: EntityInfo, withRecord: boolean): Record<string, unknown> {
  return {
    name: e.name,
    title: e.title,
    description: e.description,
    primary_key: e.primary_key,
    synced: e.synced,
    actions: e.actions.map((a) =>
      a.name === 'search'
        ? { name: a.name, mode: a.mode, description: `${a.description}: use the search tool`, read_only: true }
        : { name: a.name, mode: a.mode, description: a.description, read_only: a.read_only, params_schema: a.params_schema },
    ),
    // One entity: each search field with its type and operators; a whole connector: field → type.
    search_fields: withRecord ? e.search_fields : Object.fromEntries(e.search_fields.map((f) => [f.name, f.type])),
    ...(withRecord ? { record_schema: e.record_schema } : {}),
  };
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
    error: { code: ErrorCode.InvalidParams, message: `Invalid params for ${message.method}: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, data: { errors } },
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
    const answer = (m: JSONRPCMessage, id: JSONRPCRequest['id'] | undefined): void => void transport.send(m, id === undefined ? undefined : { relatedRequestId: id }).catch(() => undefined);
    transport.onmessage = (message, extra) => {
      const refusal = invalidParamsResponse(message);
      if (refusal !== undefined) return answer(refusal, refusal.id);
      if (this.admitRequest === undefined || !isJSONRPCRequest(message)) return deliver?.(message, extra);
      this.admitRequest().then(
        () => deliver?.(message, extra),
        (e: unknown) => {
          this.log?.({ method: message.method, ...(message.method === 'tools/call' ? { tool: (message.params as { name?: unknown } | undefined)?.name } : {}), outcome: e instanceof SwitchboardError ? e.code : 'internal_error' });
          answer(refusedResponse(message, e), message.id);
        },
      );
    };
  }
}

/** Build the server; connect it to a transport (stdio, or one Streamable HTTP request). */
export function createMcpServer(backend: McpBackend, options: McpServerOptions): Server {
  const server = new SwitchboardMcpServer({ name: 'switchboard', version: options.version }, { capabilities: { tools: {} } }, options.admitRequest, options.log);
  const schemas = inputSchemas(options.readOnly);
  const ajv = createAjv();
  const validators = Object.fromEntries(TOOL_NAMES.map((n) => [n, ajv.compile(schemas[n])])) as Record<(typeof TOOL_NAMES)[number], ValidateFunction>;
  const keep = (name: string): boolean => !options.readOnly || READ_ACTIONS.has(name);
  const budget = options.maxOutputBytes;
  const proxyOn = options.proxy === true && backend.proxy !== undefined;

  // Per-action tools: name → what it runs.
  const actionTools = new Map<string, { instance: McpInstance; entity: string; action: string; tool: Tool }>();
  for (const instance of options.actionTools ?? []) {
    const m = instance.manifest;
    for (const e of m.entities.values()) {
      for (const a of e.actions.values()) {
        if (SYNC_ONLY_ACTIONS.has(a.name) || !keep(a.name)) continue;
        const name = actionToolName(instance.id, e.name, a.name);
        // A name MCP clients would refuse (over 64 characters): that action stays reachable through execute.
        if (!TOOL_NAME.test(name)) continue;
        const read = READ_ACTIONS.has(a.name);
        actionTools.set(name, {
          instance,
          entity: e.name,
          action: a.name,
          tool: {
            name,
            title: `${m.manifest.title} ${e.def.title ?? e.name}: ${a.name} (${instance.id})`,
            description: `${a.def.description ?? `${a.name} ${e.name}`} (${m.manifest.title} ${e.def.title ?? e.name}, connector ${instance.id}${instance.description ? `: ${oneLine(instance.description)}` : ''}). Same as execute with connector "${instance.id}", entity "${e.name}", action "${a.name}".`,
            inputSchema: paramsSchema(a.def) as Tool['inputSchema'],
            annotations: { title: `${m.manifest.title} ${e.name} ${a.name}`, readOnlyHint: read, destructiveHint: false, idempotentHint: read, openWorldHint: true },
          },
        });
      }
    }
  }

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const instances = await backend.instances();
    const blurb = connectorsBlurb(instances);
    const hostedOnly = backend.mode === 'local' ? ' Available in hosted mode only: here it returns the search_hosted_only error.' : '';
    const tools: Tool[] = [
      {
        name: 'list_connectors',
        title: 'List connectors',
        description: `The connectors this server exposes: id, type, title, description, and each entity's actions.\n${blurb}`,
        inputSchema: schemas.list_connectors,
        annotations: { title: 'List connectors', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      },
      {
        name: 'describe',
        title: 'Describe a connector',
        description: `A connector's entities (or one entity): each action's params JSON Schema, the record JSON Schema, and the search fields with their types and operators.\n${blurb}`,
        inputSchema: schemas.describe,
        annotations: { title: 'Describe a connector', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      },
      {
        name: 'execute',
        title: 'Run a connector action',
        description:
          `Run one action on a connector's API: list (a page of records), get (one record)${options.readOnly ? '' : ', create or update'}. Params are validated first against the action's params schema (see describe). ` +
          `A list result larger than ${budget} bytes is cut at a record boundary (see truncated in the result).${options.readOnly ? ' This server is read-only: create and update are refused.' : ' create and update change data in the third-party system.'}\n${blurb}`,
        inputSchema: schemas.execute,
        annotations: { title: 'Run a connector action', readOnlyHint: options.readOnly, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      },
      {
        name: 'search',
        title: 'Search synced records',
        description: `Query the records the Switchboard service has synced for a connector entity (filter, sort, cursor paging), without calling the third-party API.${hostedOnly} Results larger than ${budget} bytes are cut at a record boundary; meta.cursor then continues right after the last record returned.\n${blurb}`,
        inputSchema: schemas.search,
        annotations: { title: 'Search synced records', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      },
      ...(backend.changes === undefined ? [] : [{
        name: 'changes',
        title: 'Records changed since a cursor',
        description: `The change feed of a synced connector entity: records added, updated or deleted since modified_after (a cursor from a previous call; none: from the start), oldest first, each with _metadata {action, first_seen_at, last_modified_at, deleted_at, cursor}. Keep meta.next_cursor for the next call.\n${blurb}`,
        inputSchema: schemas.changes,
        annotations: { title: 'Records changed since a cursor', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      } satisfies Tool]),
      ...[...actionTools.values()].map((t) => t.tool),
      ...(proxyOn ? [proxyTool(options.readOnly)] : []),
    ];
    return { tools };
  });

  const runExecute = async (instance: McpInstance, entity: string, action: string, params: Record<string, unknown>, fields: unknown, signal: AbortSignal): Promise<CallToolResult> => {
    if (!READ_ACTIONS.has(action) && options.readOnly) {
      throw new SwitchboardError('read_only', `This MCP server is read-only: ${action} is refused (only list, get and search run)`, { details: { action } });
    }
    const paths = fieldPaths(fields);
    const envelope = projectEnvelope(await backend.execute(instance, entity, action, params, signal), paths);
    const isList = Array.isArray(envelope.data);
    const capped = capEnvelope(envelope, budget, isList ? listNext(instance, entity, params) : recordNext);
    const meta = (envelope.meta ?? {}) as Record<string, unknown>;
    const t = capped.truncated;
    const where = `${instance.id} ${entity} ${action}`;
    const summary = isList
      ? `${where}: ${(envelope.data as unknown[]).length} records on this page${t ? `; cut to ${t.records_returned} to fit ${budget} bytes (${t.records_omitted} left out). ${t.next}` : ''}${meta['has_more'] === true || (meta['cursor'] ?? meta['next_page']) ? ' More pages exist (see meta).' : ''}`
      : `${where}: ${t ? t.next : 'one record'}`;
    return ok(summary, capped.value);
  };

  const runSearch = async (instance: McpInstance, args: Record<string, unknown>): Promise<CallToolResult> => {
    const { connector: _c, entity, ...params } = args as { connector: string; entity: string } & Record<string, unknown>;
    const first = await backend.search(instance, entity, params);
    let capped = capEnvelope(first, budget, () => 'Call search again with fewer fields (fields: [...]).');
    if (capped.truncated !== undefined && capped.truncated.records_returned > 0) {
      // Ask again for exactly the records that fit, so meta.cursor resumes right after the last one returned.
      const kept = capped.truncated.records_returned;
      const again = await backend.search(instance, entity, { ...params, limit: kept });
      const recapped = capEnvelope(again, budget, () => '');
      capped = {
        value: { ...recapped.value, truncated: { ...capped.truncated, next: 'Call search again with cursor set to meta.cursor: it continues right after the last record returned (or ask for fewer fields).' } },
        truncated: capped.truncated,
      };
    }
    const t = capped.truncated;
    const n = (capped.value['data'] as unknown[] | null)?.length ?? 0;
    const meta = (capped.value['meta'] ?? {}) as Record<string, unknown>;
    const summary = `${instance.id} ${entity} search: ${n} records${t ? ` (cut to fit ${budget} bytes; ${t.records_omitted} more matched on this page). ${t.next}` : meta['has_more'] === true ? '; more match: pass meta.cursor as cursor.' : '.'}`;
    return ok(summary, capped.value);
  };

  const runChanges = async (instance: McpInstance, args: Record<string, unknown>): Promise<CallToolResult> => {
    const entity = String(args['entity']);
    if (backend.changes === undefined) throw new SwitchboardError('search_hosted_only', 'The change feed is kept by the hosted service: use the hosted MCP server (POST /mcp)');
    const q = { ...(typeof args['modified_after'] === 'string' ? { modified_after: args['modified_after'] } : {}), ...(typeof args['limit'] === 'number' ? { limit: args['limit'] } : {}) };
    const page = await backend.changes(instance, entity, q);
    let capped = capEnvelope({ data: page.data, meta: { next_cursor: page.next_cursor, has_more: page.has_more } }, budget, () => '');
    const t = capped.truncated;
    if (t !== undefined && t.records_returned > 0) {
      // Ask again for exactly the entries that fit, so next_cursor follows the last one returned.
      const again = await backend.changes(instance, entity, { ...q, limit: t.records_returned });
      capped = capEnvelope({ data: again.data, meta: { next_cursor: again.next_cursor, has_more: again.has_more } }, budget, () => '');
      capped = { value: { ...capped.value, truncated: { ...t, next: 'Call changes again with modified_after set to meta.next_cursor.' } }, truncated: t };
    }
    const n = (capped.value['data'] as unknown[] | null)?.length ?? 0;
    const meta = (capped.value['meta'] ?? {}) as Record<string, unknown>;
    return ok(`${instance.id} ${entity} changes: ${n} entries${t ? ` (cut to fit ${budget} bytes)` : ''}${meta['has_more'] === true ? '; more: pass meta.next_cursor as modified_after.' : '.'}`, capped.value);
  };

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    const entry: Record<string, unknown> = { tool: name };
    try {
      const perAction = actionTools.get(name);
      if (perAction !== undefined) {
        Object.assign(entry, { connector: perAction.instance.id, entity: perAction.entity, action: perAction.action });
        const result = await runExecute(perAction.instance, perAction.entity, perAction.action, args, undefined, extra.signal);
        options.log?.({ ...entry, outcome: 'ok' });
        return result;
      }
      if (name === 'proxy' && proxyOn) {
        const request = proxyToolRequest(args, options.readOnly);
        Object.assign(entry, { connector: args['connector'], method: request.method });
        const answer = await (backend.proxy as NonNullable<McpBackend['proxy']>)(await backend.instance(String(args['connector'])), request, extra.signal);
        options.log?.({ ...entry, outcome: 'ok', status: answer.status });
        return proxyToolResult(answer, budget);
      }
      if (!(TOOL_NAMES as readonly string[]).includes(name)) {
        // A protocol error (the MCP spec's "Unknown tool"), not a tool result.
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool "${name}"; tools: ${[...TOOL_NAMES, ...actionTools.keys()].join(', ')}`, { errors: [{ path: '/params/name', message: 'is not a tool of this server' }] });
      }
      const validate = validators[name as (typeof TOOL_NAMES)[number]];
      if (!validate(args)) {
        const errors = argErrors(validate);
        throw new SwitchboardError('invalid_params', `Invalid arguments for ${name}: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, { errors });
      }
      Object.assign(entry, { connector: args['connector'], entity: args['entity'], action: args['action'] });
      let result: CallToolResult;
      if (name === 'list_connectors') {
        const instances = await backend.instances();
        const data = instances.map((i) => ({
          id: i.id,
          type: i.type,
          title: i.manifest.manifest.title,
          description: i.description ?? '',
          ...(i.customer_name !== undefined ? { customer_name: i.customer_name } : {}),
          entities: [...i.manifest.entities.values()].map((e) => ({
            name: e.name,
            title: e.def.title ?? e.name,
            actions: [...[...e.actions.keys()].filter((a) => !SYNC_ONLY_ACTIONS.has(a) && keep(a)), ...(e.def.search !== undefined ? ['search'] : [])],
          })),
        }));
        const capped = capEnvelope({ data }, budget, () => 'Too many connectors to list within the output budget; hosted, scope the endpoint with ?customer_name=.');
        result = ok(`${data.length} connectors: ${data.map((d) => `${d.id} (${d.type})`).join(', ')}`.slice(0, 1000), capped.value);
      } else {
        const instance = await backend.instance(String(args['connector']));
        if (name === 'describe') {
          const info = describeManifest(instance.manifest, { schemas: true, actions: keep });
          const { credentials: _credentials, base_url: _base, entities, ...rest } = info;
          const head = { connector: instance.id, ...rest, ...(instance.description ? { instance_description: instance.description } : {}) };
          if (args['entity'] !== undefined) {
            const entity = entities.find((e) => e.name === args['entity']);
            if (entity === undefined) {
              const valid = entities.map((e) => e.name);
              throw new SwitchboardError('unknown_entity', `Unknown entity "${String(args['entity'])}" for ${instance.type}. Valid entities: ${valid.join(', ')}`, { errors: [{ path: '/entity', message: `must be one of: ${valid.join(', ')}` }], details: { valid } });
            }
            result = ok(`${instance.id} (${instance.type}) ${entity.name}: actions ${entity.actions.map((a) => a.name).join(', ')}; ${entity.record_fields.length} record fields; ${entity.search_fields.length} search fields`, {
              ...head,
              entity: forModel(entity, true),
            });
          } else {
            result = ok(`${instance.id} (${instance.type}): entities ${entities.map((e) => e.name).join(', ')}; describe one entity for its record schema`, {
              ...head,
              entities: entities.map((e) => forModel(e, false)),
            });
          }
        } else if (name === 'execute' && (SEARCH_ACTION_NAMES as readonly string[]).includes(String(args['action']))) {
          result = await runSearch(instance, { connector: args['connector'], entity: args['entity'], ...((args['params'] ?? {}) as Record<string, unknown>), ...(args['fields'] !== undefined ? { fields: args['fields'] } : {}) });
        } else if (name === 'execute') {
          result = await runExecute(instance, String(args['entity']), String(args['action']), (args['params'] ?? {}) as Record<string, unknown>, args['fields'], extra.signal);
        } else if (name === 'changes') {
          result = await runChanges(instance, args);
        } else {
          result = await runSearch(instance, args);
        }
      }
      options.log?.({ ...entry, outcome: 'ok' });
      return result;
    } catch (e) {
      if (e instanceof McpError) {
        options.log?.({ ...entry, outcome: 'invalid_params' });
        throw e;
      }
      options.log?.({ ...entry, outcome: e instanceof SwitchboardError ? e.code : 'internal_error', ...(e instanceof SwitchboardError ? {} : { err_name: (e as Error)?.name, err_message: (e as Error)?.message }) });
      return toolError(e);
    }
  });
  return server;
}
