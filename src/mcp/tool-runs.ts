/**
 * What the MCP server's tools run (server.ts dispatches tools/call here): list_connectors,
 * describe, execute (and the per-action tools), search and changes, each result capped to the
 * output budget (output.ts) with a one-line summary.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SwitchboardError } from '../errors/index.ts';
import { SYNC_ONLY_ACTIONS } from '../manifest/index.ts';
import { describeManifest, READ_ACTIONS, type EntityInfo } from '../manifest/describe.ts';
import { capEnvelope, fieldPaths, projectEnvelope } from './output.ts';
import type { McpBackend, McpInstance } from './types.ts';

function ok(summary: string, value: Record<string, unknown>): CallToolResult {
  // Clients that read only `content` still get the JSON (the MCP spec's advice for structured results).
  return {
    content: [
      { type: 'text', text: summary },
      { type: 'text', text: JSON.stringify(value) },
    ],
    structuredContent: value,
  };
}

/** How to see records a cut list left out, and how to reach the next page. */
function listNext(instance: McpInstance, entity: string, params: Record<string, unknown>): (returned: number) => string {
  const action = instance.manifest.entities.get(entity)?.actions.get('list');
  const names = Object.keys(action?.def.params ?? {});
  const p = action?.pagination?.def;
  const sizeParam =
    (p !== undefined && 'limit_param' in p ? p.limit_param : undefined) ?? ['page_size', 'per_page', 'limit', 'first'].find((n) => names.includes(n));
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

/** The tools' runs over one backend, with the server's read-only setting and output budget. */
export class ToolRuns {
  constructor(
    private readonly backend: McpBackend,
    private readonly readOnly: boolean,
    private readonly budget: number,
  ) {}

  /** Whether the caller's allow-lists let it use the connector, entity or action (McpBackend.allows). */
  private allows(instance: McpInstance, entity?: string, action?: string): boolean {
    return this.backend.allows === undefined || this.backend.allows(instance, entity, action);
  }

  /** Whether the server offers this action (a read-only server: list, get and search only). */
  readonly keep = (name: string): boolean => !this.readOnly || READ_ACTIONS.has(name);

  async execute(
    instance: McpInstance,
    entity: string,
    action: string,
    params: Record<string, unknown>,
    fields: unknown,
    signal: AbortSignal,
  ): Promise<CallToolResult> {
    const budget = this.budget;
    if (!READ_ACTIONS.has(action) && this.readOnly) {
      throw new SwitchboardError('read_only', `This MCP server is read-only: ${action} is refused (only list, get and search run)`, { details: { action } });
    }
    const paths = fieldPaths(fields);
    const envelope = projectEnvelope(await this.backend.execute(instance, entity, action, params, signal), paths);
    const isList = Array.isArray(envelope.data);
    const capped = capEnvelope(envelope, budget, isList ? listNext(instance, entity, params) : recordNext);
    const meta = (envelope.meta ?? {}) as Record<string, unknown>;
    const t = capped.truncated;
    const where = `${instance.id} ${entity} ${action}`;
    const summary = isList
      ? `${where}: ${(envelope.data as unknown[]).length} records on this page${t ? `; cut to ${t.records_returned} to fit ${budget} bytes (${t.records_omitted} left out). ${t.next}` : ''}${meta['has_more'] === true || (meta['cursor'] ?? meta['next_page']) ? ' More pages exist (see meta).' : ''}`
      : `${where}: ${t ? t.next : 'one record'}`;
    return ok(summary, capped.value);
  }

  async search(instance: McpInstance, args: Record<string, unknown>): Promise<CallToolResult> {
    const budget = this.budget;
    const { connector: _c, entity, ...params } = args as { connector: string; entity: string } & Record<string, unknown>;
    const first = await this.backend.search(instance, entity, params);
    let capped = capEnvelope(first, budget, () => 'Call search again with fewer fields (fields: [...]).');
    if (capped.truncated !== undefined && capped.truncated.records_returned > 0) {
      // Ask again for exactly the records that fit, so meta.cursor resumes right after the last one returned.
      const kept = capped.truncated.records_returned;
      const again = await this.backend.search(instance, entity, { ...params, limit: kept });
      const recapped = capEnvelope(again, budget, () => '');
      capped = {
        value: {
          ...recapped.value,
          truncated: {
            ...capped.truncated,
            next: 'Call search again with cursor set to meta.cursor: it continues right after the last record returned (or ask for fewer fields).',
          },
        },
        truncated: capped.truncated,
      };
    }
    const t = capped.truncated;
    const n = (capped.value['data'] as unknown[] | null)?.length ?? 0;
    const meta = (capped.value['meta'] ?? {}) as Record<string, unknown>;
    const summary = `${instance.id} ${entity} search: ${n} records${t ? ` (cut to fit ${budget} bytes; ${t.records_omitted} more matched on this page). ${t.next}` : meta['has_more'] === true ? '; more match: pass meta.cursor as cursor.' : '.'}`;
    return ok(summary, capped.value);
  }

  async changes(instance: McpInstance, args: Record<string, unknown>): Promise<CallToolResult> {
    const { backend, budget } = this;
    const entity = String(args['entity']);
    if (backend.changes === undefined)
      throw new SwitchboardError('search_hosted_only', 'The change feed is kept by the hosted service: use the hosted MCP server (POST /mcp)');
    const q = {
      ...(typeof args['modified_after'] === 'string' ? { modified_after: args['modified_after'] } : {}),
      ...(typeof args['limit'] === 'number' ? { limit: args['limit'] } : {}),
    };
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
    return ok(
      `${instance.id} ${entity} changes: ${n} entries${t ? ` (cut to fit ${budget} bytes)` : ''}${meta['has_more'] === true ? '; more: pass meta.next_cursor as modified_after.' : '.'}`,
      capped.value,
    );
  }

  async listConnectors(): Promise<CallToolResult> {
    const instances = await this.backend.instances();
    const data = instances.map((i) => ({
      id: i.id,
      type: i.type,
      title: i.manifest.manifest.title,
      description: i.description ?? '',
      ...(i.customer_name !== undefined ? { customer_name: i.customer_name } : {}),
      entities: [...i.manifest.entities.values()]
        .map((e) => ({
          name: e.name,
          title: e.def.title ?? e.name,
          actions: [
            ...[...e.actions.keys()].filter((a) => !SYNC_ONLY_ACTIONS.has(a) && this.keep(a)),
            ...(e.def.search !== undefined ? ['search'] : []),
          ].filter((a) => this.allows(i, e.name, a)),
        }))
        // An entity the caller's allow-lists leave no action of is not shown.
        .filter((e) => e.actions.length > 0 && this.allows(i, e.name)),
    }));
    const capped = capEnvelope(
      { data },
      this.budget,
      () => 'Too many connectors to list within the output budget; hosted, scope the endpoint with ?customer_name=.',
    );
    return ok(`${data.length} connectors: ${data.map((d) => `${d.id} (${d.type})`).join(', ')}`.slice(0, 1000), capped.value);
  }

  describe(instance: McpInstance, entityName: unknown): CallToolResult {
    const info = describeManifest(instance.manifest, { schemas: true, actions: this.keep });
    const { credentials: _credentials, base_url: _base, entities: all, ...rest } = info;
    // Only the entities and actions the caller's allow-lists let it use.
    const entities = all
      .map((e) => ({ ...e, actions: e.actions.filter((a) => this.allows(instance, e.name, a.name)) }))
      .filter((e) => e.actions.length > 0 && this.allows(instance, e.name));
    const head = { connector: instance.id, ...rest, ...(instance.description ? { instance_description: instance.description } : {}) };
    if (entityName === undefined) {
      return ok(`${instance.id} (${instance.type}): entities ${entities.map((e) => e.name).join(', ')}; describe one entity for its record schema`, {
        ...head,
        entities: entities.map((e) => forModel(e, false)),
      });
    }
    const entity = entities.find((e) => e.name === entityName);
    if (entity === undefined) {
      const valid = entities.map((e) => e.name);
      throw new SwitchboardError('unknown_entity', `Unknown entity "${String(entityName)}" for ${instance.type}. Valid entities: ${valid.join(', ')}`, {
        errors: [{ path: '/entity', message: `must be one of: ${valid.join(', ')}` }],
        details: { valid },
      });
    }
    return ok(
      `${instance.id} (${instance.type}) ${entity.name}: actions ${entity.actions.map((a) => a.name).join(', ')}; ${entity.record_fields.length} record fields; ${entity.search_fields.length} search fields`,
      {
        ...head,
        entity: forModel(entity, true),
      },
    );
  }
}
