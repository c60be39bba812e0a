/**
 * What the MCP server is built over (server.ts): the instances it exposes, the backend that runs
 * their tools (local or hosted), and the server's options.
 */
import type { Envelope } from '../engine/index.ts';
import type { ProxyRequest, ProxyResponse } from '../engine/proxy-request.ts';
import type { LoadedManifest } from '../manifest/index.ts';

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
  changes?(
    instance: McpInstance,
    entity: string,
    q: { modified_after?: string; limit?: number },
  ): Promise<{ data: unknown[]; next_cursor: string | null; has_more: boolean }>;
  /**
   * Whether the caller's allow-lists let it use this connector (no entity), one of its entities
   * (no action) or one action; absent: everything. tools/list, list_connectors and describe show
   * only what it allows; calls are refused by the backend's own checks either way.
   */
  allows?(instance: McpInstance, entity?: string, action?: string): boolean;
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
