/**
 * POST /mcp on the service, driven by the official MCP SDK client over Streamable HTTP: bearer
 * authentication and organization/customer scope, describe, execute on each connector type,
 * validation errors, search over synced Intercom contacts with the output budget and cursor,
 * read-only mode, and no credential in any tool output or log line. SQLite always, PostgreSQL
 * when configured.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { startIntercomSimulator, type IntercomSimulator } from '../../connectors/intercom/simulator/index.ts';
import { startMondaySimulator, type MondaySimulator } from '../../connectors/monday/simulator/index.ts';
import { describeEachDialect, openApiErrors, startHarness, type Harness } from '../service/helpers.ts';
import { callTool, structured } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const INTERCOM_TOKEN = 'sk_mcp_hosted_intercom_token_91c2';

describeEachDialect('POST /mcp on %s', (dialect) => {
  let granola: GranolaSimulator;
  let intercom: IntercomSimulator;
  let monday: MondaySimulator;
  let h: Harness;
  let token: string;
  const ids: Record<string, string> = {};
  const clients: Client[] = [];
  const outputs: string[] = [];

  async function connect(query = ''): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(`${h.url}/mcp${query}`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
    const client = new Client({ name: 'switchboard-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  const call = (client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> => callTool(client, outputs, name, args);

  let client: Client;

  beforeAll(async () => {
    [granola, intercom, monday] = await Promise.all([
      startGranolaSimulator({ size: 20, rateLimit: false }),
      startIntercomSimulator({ size: 60, rateLimit: false, accessToken: INTERCOM_TOKEN }),
      startMondaySimulator({ size: 20 }),
    ]);
    h = await startHarness(dialect, {
      config: {
        syncScheduler: true,
        upstreamThrottle: false,
        connectorTypes: { granola: { baseUrl: granola.url }, intercom: { baseUrl: intercom.url }, monday: { baseUrl: monday.url } },
      },
    });
    token = await h.token(await h.createApp('org-mcp'));
    for (const [type, customer, credentials] of [
      ['granola', 'acme', { api_key: granola.apiKey }],
      ['intercom', 'acme', { access_token: INTERCOM_TOKEN }],
      ['monday', 'globex', { api_key: monday.apiKey }],
    ] as const) {
      const r = await h.request('POST', CONNECTORS, {
        token,
        body: { customer_name: customer, connector_type: type, name: `${type} of ${customer}`, credentials },
      });
      expect(r.status, r.text).toBe(201);
      ids[type] = r.body.id as string;
    }
    // The Intercom connector's first sync (started on create) must be done before searching: poll with a deadline.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await h.request('GET', `${CONNECTORS}/${ids['intercom']}/sync`, { token });
      if (r.body?.status === 'idle' && r.body?.last_finished_at !== null) break;
      if (r.body?.status === 'failed' || Date.now() > deadline) throw new Error(`intercom sync did not finish: ${r.text}`);
      await new Promise((res) => setTimeout(res, 50));
    }
    client = await connect();
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await h?.close();
    await Promise.all([granola?.close(), intercom?.close(), monday?.close()]);
  });

  it('needs the bearer token; GET is 405; both documented in the OpenAPI document', async () => {
    const anonymous = await h.request('POST', '/mcp', { body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe('unauthorized');
    expect(openApiErrors('POST', '/mcp', anonymous)).toEqual([]);
    const get = await h.request('GET', '/mcp', { token });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(openApiErrors('GET', '/mcp', get)).toEqual([]);
  });

  it("lists the four tools and the organization's connectors; ?customer_name= narrows them", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['list_connectors', 'describe', 'execute', 'search', 'changes']);
    expect(tools.find((t) => t.name === 'execute')?.annotations?.readOnlyHint).toBe(false);
    expect(tools.find((t) => t.name === 'execute')?.description).toContain(`${ids['intercom']}: Intercom (intercom of acme)`);
    const all = await call(client, 'list_connectors');
    expect(
      structured(all)
        .data.map((d: { id: string; type: string; customer_name: string }) => [d.type, d.id, d.customer_name])
        .sort(),
    ).toEqual(
      [
        ['granola', ids['granola'], 'acme'],
        ['intercom', ids['intercom'], 'acme'],
        ['monday', ids['monday'], 'globex'],
      ].sort(),
    );
    const acme = await connect('?customer_name=acme');
    const scoped = await call(acme, 'list_connectors');
    expect(
      structured(scoped)
        .data.map((d: { type: string }) => d.type)
        .sort(),
    ).toEqual(['granola', 'intercom']);
    const outside = await call(acme, 'execute', { connector: ids['monday'], entity: 'boards', action: 'list' });
    expect(outside.isError).toBe(true);
    expect(structured(outside).error.code).toBe('connector_not_found');
  });

  it('describes Intercom contacts and runs execute on each connector type (a Monday item created)', async () => {
    const d = await call(client, 'describe', { connector: ids['intercom'], entity: 'contacts' });
    expect(structured(d).entity.search_fields.find((f: { name: string }) => f.name === 'email').operators).toContain('eq');
    expect(structured(d).entity.actions.map((a: { name: string }) => a.name)).toEqual(['list', 'get', 'create', 'update', 'search']);

    const notes = await call(client, 'execute', {
      connector: ids['granola'],
      entity: 'notes',
      action: 'list',
      params: { page_size: 3 },
      fields: ['id', 'title'],
    });
    expect(notes.isError, JSON.stringify(notes.content)).toBeFalsy();
    expect(structured(notes).data).toHaveLength(3);
    const contacts = await call(client, 'execute', { connector: ids['intercom'], entity: 'contacts', action: 'list', params: { per_page: 2 } });
    expect(structured(contacts).data).toHaveLength(2);
    const boards = await call(client, 'execute', { connector: ids['monday'], entity: 'boards', action: 'list', fields: ['id'] });
    const created = await call(client, 'execute', {
      connector: ids['monday'],
      entity: 'items',
      action: 'create',
      params: { board_id: structured(boards).data[0].id, item_name: 'From the hosted MCP' },
    });
    expect(created.isError, JSON.stringify(created.content)).toBeFalsy();
    expect(structured(created).data.name).toBe('From the hosted MCP');
  });

  it('invalid params and bad queries are tool errors with our code and paths', async () => {
    const r = await call(client, 'execute', { connector: ids['granola'], entity: 'notes', action: 'get', params: {} });
    expect(r.isError).toBe(true);
    expect(structured(r).error).toMatchObject({ code: 'invalid_params', errors: [{ path: '/params/note_id', message: 'is required' }] });
    const q = await call(client, 'search', { connector: ids['intercom'], entity: 'contacts', query: { filter: { near: { email: 'x' } } } });
    expect(q.isError).toBe(true);
    expect(structured(q).error.code).toBe('invalid_search_query');
    expect(structured(q).error.errors[0].path).toContain('/query/filter');
  });

  it('searches synced contacts; a page over the budget is cut and the cursor continues right after it', async () => {
    const full = await call(client, 'search', { connector: ids['intercom'], entity: 'contacts', query: { sort: [{ email: 'asc' }] }, fields: ['id', 'email'] });
    expect(full.isError, JSON.stringify(full.content)).toBeFalsy();
    const all = structured(full).data as { id: string; email: string }[];
    expect(all.length).toBe(60);
    const target = all[17]!;
    const one = await call(client, 'search', {
      connector: ids['intercom'],
      entity: 'contacts',
      query: { filter: { eq: { email: target.email } } },
      fields: ['id', 'email'],
    });
    expect(structured(one).data).toEqual([target]);
    // Airbyte's name of search, through execute; params null is "no params" there too.
    for (const action of ['context_store_search', 'search']) {
      const viaExecute = await call(client, 'execute', {
        connector: ids['intercom'],
        entity: 'contacts',
        action,
        params: { query: { filter: { eq: { email: target.email } } } },
        fields: ['id', 'email'],
      });
      expect(viaExecute.isError, JSON.stringify(viaExecute.content)).toBeFalsy();
      expect(structured(viaExecute).data).toEqual([target]);
    }
    const nullParams = await call(client, 'execute', { connector: ids['granola'], entity: 'notes', action: 'list', params: null });
    expect(nullParams.isError, JSON.stringify(nullParams.content)).toBeFalsy();

    const small = await connect('?max_output_bytes=6000');
    const seen: string[] = [];
    let cursor: string | undefined;
    let cut = 0;
    for (let pages = 0; pages < 100; pages++) {
      const r = await call(small, 'search', {
        connector: ids['intercom'],
        entity: 'contacts',
        query: { sort: [{ email: 'asc' }] },
        ...(cursor ? { cursor } : {}),
      });
      expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
      const value = structured(r);
      expect(Buffer.byteLength(JSON.stringify(value))).toBeLessThanOrEqual(6000);
      if (value.truncated !== undefined) {
        cut++;
        expect(value.truncated.records_returned).toBe(value.data.length);
        expect(value.truncated.records_omitted).toBeGreaterThan(0);
        expect(value.truncated.next).toContain('cursor');
      }
      seen.push(...value.data.map((d: { id: string }) => d.id));
      cursor = value.meta.cursor ?? undefined;
      if (cursor === undefined) break;
    }
    expect(cut).toBeGreaterThan(0);
    expect(seen).toEqual(all.map((c) => c.id));
  });

  it('an execute list over ?max_output_bytes= comes back cut at a record boundary, with a notice', async () => {
    const small = await connect('?max_output_bytes=2048');
    const r = await call(small, 'execute', { connector: ids['granola'], entity: 'notes', action: 'list', params: { page_size: 20 } });
    expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
    const value = structured(r);
    expect(Buffer.byteLength(JSON.stringify(value))).toBeLessThanOrEqual(2048);
    expect(value.truncated).toMatchObject({ budget_bytes: 2048, records_returned: value.data.length, records_omitted: 20 - value.data.length });
    expect(value.data.length).toBeGreaterThan(0);
    expect((r.content[0] as { text: string }).text).toContain(`cut to ${String(value.data.length)} to fit 2048 bytes`);
  });

  it('?read_only=true refuses create with a read_only tool error and still lists and searches', async () => {
    const ro = await connect('?read_only=true');
    const { tools } = await ro.listTools();
    expect(tools.find((t) => t.name === 'execute')?.annotations?.readOnlyHint).toBe(true);
    const before = monday.requests.length;
    const refused = await call(ro, 'execute', { connector: ids['monday'], entity: 'items', action: 'create', params: { board_id: '1', item_name: 'x' } });
    expect(refused.isError).toBe(true);
    expect(structured(refused).error.code).toBe('read_only');
    expect(monday.requests.length).toBe(before);
    const listed = await call(ro, 'list_connectors');
    expect(
      structured(listed)
        .data.find((d: { type: string }) => d.type === 'monday')
        .entities.find((e: { name: string }) => e.name === 'items').actions,
    ).not.toContain('create');
    const found = await call(ro, 'search', { connector: ids['intercom'], entity: 'contacts', query: {}, limit: 1, fields: ['id'] });
    expect(structured(found).data).toHaveLength(1);
  });

  it('no credential appears in any tool output or log line', () => {
    expect(outputs.length).toBeGreaterThan(10);
    const text = outputs.join('\n') + h.logs.join('\n');
    expect(h.logs.join('\n')).toContain('mcp tool call');
    for (const secret of [granola.apiKey, INTERCOM_TOKEN, monday.apiKey, token]) expect(text).not.toContain(secret);
  });
});
