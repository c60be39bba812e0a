/**
 * The change feed over HTTP, the SDK and the hosted MCP `changes` tool: a first sync's records
 * are `added`, a sync that sees one changed note reports only it as `updated` (unchanged notes
 * are no change), a note removed upstream is `deleted` after a full refresh, and bad input is a
 * documented 400/404 that changes nothing. SQLite always, PostgreSQL when configured.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient } from '../../src/client/hosted.ts';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { describeEachDialect, openApiErrors, startHosted, type Harness, type Reply } from '../service/helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const RECORDS = '/api/v1/integrations/connectors/{connector_id}/records';

describeEachDialect('change feed on %s', (dialect) => {
  let sim: GranolaSimulator;
  let h: Harness;
  let token: string;
  let id: string;
  let app: Awaited<ReturnType<Harness['createApp']>>;
  const feed = (query: string, t = token): Promise<Reply> => h.request('GET', `${CONNECTORS}/${id}/records?${query}`, { token: t });

  beforeAll(async () => {
    sim = await startGranolaSimulator({ size: 12, rateLimit: false });
    ({ h, app, token } = await startHosted(dialect, { org: 'org-feed', upstreams: { granola: sim.url } }));
    const r = await h.request('POST', CONNECTORS, {
      token,
      body: { customer_name: 'c1', connector_type: 'granola', name: 'g', credentials: { api_key: sim.apiKey } },
    });
    expect(r.status, r.text).toBe(201);
    id = r.body.id;
    await h.service.ctx.sync.runOnce(id, { full: true });
  });
  afterAll(async () => {
    await h?.close();
    await sim?.close();
  });

  let cursor: string;

  it('a first sync: every note added, in order, paged by cursor', async () => {
    const first = await feed('entity=notes&limit=5');
    expect(first.status, first.text).toBe(200);
    expect(openApiErrors('GET', RECORDS, first)).toEqual([]);
    expect(first.body.has_more).toBe(true);
    expect(first.body.data).toHaveLength(5);
    const all: { id: string; _metadata: { action: string; cursor: string } }[] = [...first.body.data];
    let next = first.body.next_cursor as string;
    for (;;) {
      const page = await feed(`entity=notes&limit=5&modified_after=${next}`);
      all.push(...page.body.data);
      next = page.body.next_cursor;
      if (!page.body.has_more) break;
    }
    expect(all.map((d) => d.id).sort()).toEqual(sim.ids().sort());
    expect(new Set(all.map((d) => d._metadata.action))).toEqual(new Set(['added']));
    cursor = next;
  });

  it('an incremental sync that sees one changed note: only it, as updated; a full refresh after a removal: deleted', async () => {
    const changed = sim.ids()[2]!;
    sim.touch(changed, { title: 'Renamed in the feed test' });
    await h.service.ctx.sync.runOnce(id, { full: true });
    const r = await feed(`entity=notes&modified_after=${cursor}`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.map((d: { id: string; _metadata: { action: string } }) => [d.id, d._metadata.action])).toEqual([[changed, 'updated']]);
    expect(r.body.data[0].title).toBe('Renamed in the feed test');
    cursor = r.body.next_cursor;

    const removed = sim.ids()[5]!;
    sim.remove(removed);
    await h.service.ctx.sync.runOnce(id, { full: true });
    const d = await feed(`entity=notes&modified_after=${cursor}`);
    expect(d.body.data).toEqual([
      expect.objectContaining({ id: removed, _metadata: expect.objectContaining({ action: 'deleted', deleted_at: expect.any(String) }) }),
    ]);
    expect(openApiErrors('GET', RECORDS, d)).toEqual([]);
  });

  it('the SDK reads the same feed', async () => {
    const client = createClient({ baseUrl: h.url, customerName: 'c1', clientId: app.client_id, clientSecret: app.client_secret });
    const page = await client.connector(id).changes('notes', { modified_after: cursor });
    expect(page.data.map((e) => e._metadata.action)).toEqual(['deleted']);
    await expect(client.connector(id).changes('notes', { modified_after: 'nope' })).rejects.toMatchObject({ code: 'invalid_cursor' });
  });

  it('the hosted MCP changes tool reads the same feed', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${h.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
    const mcp = new Client({ name: 'switchboard-test', version: '1.0.0' });
    await mcp.connect(transport);
    try {
      const tools = await mcp.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('changes');
      const r = (await mcp.callTool({ name: 'changes', arguments: { connector: id, entity: 'notes', modified_after: cursor } })) as CallToolResult;
      expect(r.isError ?? false).toBe(false);
      const s = r.structuredContent as { data: { _metadata: { action: string } }[]; meta: { next_cursor: string; has_more: boolean } };
      expect(s.data.map((e) => e._metadata.action)).toEqual(['deleted']);
      expect(s.meta.has_more).toBe(false);
      const bad = (await mcp.callTool({ name: 'changes', arguments: { connector: id, entity: 'meetings' } })) as CallToolResult;
      expect(bad.isError).toBe(true);
      expect((bad.structuredContent as { error: { code: string } }).error.code).toBe('unknown_entity');
    } finally {
      await mcp.close();
    }
  });

  it.each([
    ['an entity that is not synced', 'entity=meetings', 400, 'unknown_entity', 'query:entity'],
    ['no entity', 'limit=5', 400, 'invalid_request', undefined],
    ['a cursor it never gave', 'entity=notes&modified_after=abc', 400, 'invalid_cursor', 'query:modified_after'],
    ['a cursor past every one it gave (issue 37 item 11)', 'entity=notes&modified_after=999999999', 400, 'invalid_cursor', 'query:modified_after'],
    ['a limit above the maximum', 'entity=notes&limit=5000', 400, 'invalid_request', 'query:limit'],
  ])('%s is a %d %s problem', async (_n, query, status, code, path?: string) => {
    const before = await h.snapshot();
    const r = await feed(query);
    expect(r.status, r.text).toBe(status);
    expect(r.body.code).toBe(code);
    if (path !== undefined) expect(r.body.errors.map((e: { path: string }) => e.path)).toEqual([path]);
    expect(openApiErrors('GET', RECORDS, r)).toEqual([]);
    expect(await h.snapshot()).toBe(before);
  });

  it("another organization's connector is 404 connector_not_found", async () => {
    const other = await h.token(await h.createApp('org-other'));
    const r = await feed('entity=notes', other);
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('connector_not_found');
  });
});
