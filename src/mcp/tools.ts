/**
 * The MCP server's tools as clients see them (tools/list): the generic tools' input schemas and
 * descriptions, and the per-action tools of local instances.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { paramsSchema, SYNC_ONLY_ACTIONS } from '../manifest/index.ts';
import { READ_ACTIONS } from '../manifest/describe.ts';
import { proxyTool } from './proxy-tool.ts';
import type { McpBackend, McpInstance } from './types.ts';

/** Tools of the four generic kinds. */
export const TOOL_NAMES = ['list_connectors', 'describe', 'execute', 'search', 'changes'] as const;
/** execute's names of search: ours, and Airbyte's since April 2026. */
export const SEARCH_ACTION_NAMES = ['search', 'context_store_search'] as const;

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

const FIELDS_SCHEMA = {
  type: 'array',
  items: { type: 'string', minLength: 1 },
  minItems: 1,
  description: 'Only these fields of each record (dotted paths allowed, e.g. "owner.email")',
};

export function inputSchemas(readOnly: boolean): Record<(typeof TOOL_NAMES)[number], Tool['inputSchema']> {
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
            filter: {
              type: 'object',
              description: '{operator: {field: value}}, e.g. {"eq": {"email": "a@b.c"}}, {"and": [...]}; describe lists each search field\'s operators',
            },
            sort: {
              type: 'array',
              items: { type: 'object', additionalProperties: { type: 'string', enum: ['asc', 'desc'] } },
              description: '[{field: "asc" | "desc"}]',
            },
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

export type GenericToolName = (typeof TOOL_NAMES)[number];

/** A per-action tool: what it runs, and how clients see it. */
export interface ActionTool {
  instance: McpInstance;
  entity: string;
  action: string;
  tool: Tool;
}

/** Per-action tools: name → what it runs (`keep` says which actions the server offers). */
export function actionTools(instances: McpInstance[], keep: (action: string) => boolean): Map<string, ActionTool> {
  const tools = new Map<string, ActionTool>();
  for (const instance of instances) {
    const m = instance.manifest;
    for (const e of m.entities.values()) {
      for (const a of e.actions.values()) {
        if (SYNC_ONLY_ACTIONS.has(a.name) || !keep(a.name)) continue;
        const name = actionToolName(instance.id, e.name, a.name);
        // A name MCP clients would refuse (over 64 characters): that action stays reachable through execute.
        if (!TOOL_NAME.test(name)) continue;
        const read = READ_ACTIONS.has(a.name);
        tools.set(name, {
          instance,
          entity: e.name,
          action: a.name,
          tool: {
            name,
            title: `${m.manifest.title} ${e.def.title ?? e.name}: ${a.name} (${instance.id})`,
            description: `${a.def.description ?? `${a.name} ${e.name}`} (${m.manifest.title} ${e.def.title ?? e.name}, connector ${instance.id}${instance.description ? `: ${oneLine(instance.description)}` : ''}). Same as execute with connector "${instance.id}", entity "${e.name}", action "${a.name}".`,
            inputSchema: paramsSchema(a.def) as Tool['inputSchema'],
            annotations: {
              title: `${m.manifest.title} ${e.name} ${a.name}`,
              readOnlyHint: read,
              destructiveHint: false,
              idempotentHint: read,
              openWorldHint: true,
            },
          },
        });
      }
    }
  }
  return tools;
}

/** The answer to tools/list: the generic tools (their descriptions naming the connectors), the per-action tools, and proxy when offered. */
export async function listTools(
  backend: McpBackend,
  o: { readOnly: boolean; budget: number; schemas: Record<GenericToolName, Tool['inputSchema']>; actionTools: Map<string, ActionTool>; proxyOn: boolean },
): Promise<{ tools: Tool[] }> {
  const instances = await backend.instances();
  const blurb = connectorsBlurb(instances);
  const hostedOnly = backend.mode === 'local' ? ' Available in hosted mode only: here it returns the search_hosted_only error.' : '';
  const { readOnly, budget, schemas } = o;
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
        `Run one action on a connector's API: list (a page of records), get (one record)${readOnly ? '' : ', create or update'}. Params are validated first against the action's params schema (see describe). ` +
        `A list result larger than ${budget} bytes is cut at a record boundary (see truncated in the result).${readOnly ? ' This server is read-only: create and update are refused.' : ' create and update change data in the third-party system.'}\n${blurb}`,
      inputSchema: schemas.execute,
      annotations: { title: 'Run a connector action', readOnlyHint: readOnly, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    {
      name: 'search',
      title: 'Search synced records',
      description: `Query the records the Switchboard service has synced for a connector entity (filter, sort, cursor paging), without calling the third-party API.${hostedOnly} Results larger than ${budget} bytes are cut at a record boundary; meta.cursor then continues right after the last record returned.\n${blurb}`,
      inputSchema: schemas.search,
      annotations: { title: 'Search synced records', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    ...(backend.changes === undefined
      ? []
      : [
          {
            name: 'changes',
            title: 'Records changed since a cursor',
            description: `The change feed of a synced connector entity: records added, updated or deleted since modified_after (a cursor from a previous call; none: from the start), oldest first, each with _metadata {action, first_seen_at, last_modified_at, deleted_at, cursor}. Keep meta.next_cursor for the next call.\n${blurb}`,
            inputSchema: schemas.changes,
            annotations: { title: 'Records changed since a cursor', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
          } satisfies Tool,
        ]),
    ...[...o.actionTools.values()].map((t) => t.tool),
    ...(o.proxyOn ? [proxyTool(readOnly)] : []),
  ];
  return { tools };
}
