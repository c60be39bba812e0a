/**
 * POST /mcp against hostile JSON-RPC (issue 21, items 4 and 9), on SQLite (in-process limits)
 * and PostgreSQL (limits shared through the database):
 * - every request of a JSON-RPC batch counts against the organization's request limit like a
 *   REST request (a batch of 100 executes used to make 100 upstream calls past a limit of 10);
 * - a request with invalid params answers -32602 Invalid params naming the path, not -32603
 *   with the schema library's raw dump.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect, startHarness, type Harness } from '../service/helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const LIMIT = 10;

interface RpcResponse {
  id: number;
  result?: { isError?: boolean; structuredContent?: { error?: { code: string; details?: Record<string, unknown> } } };
  error?: { code: number; message: string; data?: { errors: { path: string }[] } };
}

describeEachDialect('POST /mcp batches and params on %s', (dialect) => {
  let upstream: Server;
  let upstreamCalls = 0;
  let h: Harness;

  beforeAll(async () => {
    upstream = createServer((_req, res) => {
      upstreamCalls += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"notes":[{"id":"not_1","title":"t"}],"hasMore":false,"cursor":null}');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    h = await startHarness(dialect, { config: { rateLimitPerMinute: LIMIT, upstreamThrottle: false, connectorTypes: { granola: { baseUrl: url } } } });
  });
  afterAll(async () => {
    await h?.close();
    upstream?.closeAllConnections();
    await new Promise<void>((r) => upstream?.close(() => r()));
  });

  /** A fresh organization (its own limit) with one Granola connector. */
  async function organization(name: string): Promise<{ token: string; connectorId: string }> {
    const token = await h.token(await h.createApp(name));
    const r = await h.request('POST', `${CONNECTORS}?check=false`, {
      token,
      body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { api_key: 'grn_key' } },
    });
    expect(r.status, r.text).toBe(201);
    return { token, connectorId: r.body.id as string };
  }

  const post = (token: string, body: unknown) => h.request('POST', '/mcp', { token, body, headers: { accept: 'application/json, text/event-stream' } });

  const executes = (connectorId: string, n: number, from = 0) =>
    Array.from({ length: n }, (_, i) => ({
      jsonrpc: '2.0',
      id: from + i,
      method: 'tools/call',
      params: { name: 'execute', arguments: { connector: connectorId, entity: 'notes', action: 'list', params: {} } },
    }));

  /** Tool calls that ran, and those refused as rate_limited, over every response. */
  function tally(responses: RpcResponse[]): { ran: number; limited: number } {
    let ran = 0;
    let limited = 0;
    for (const r of responses) {
      const code = r.result?.structuredContent?.error?.code;
      if (r.result !== undefined && r.result.isError !== true) ran += 1;
      else if (code === 'rate_limited') {
        limited += 1;
        expect(r.result?.structuredContent?.error?.details).toMatchObject({ limit_per_minute: LIMIT, retry_after_seconds: expect.any(Number) });
      } else throw new Error(`unexpected response ${JSON.stringify(r)}`);
    }
    return { ran, limited };
  }

  it('a batch of 100 executes: the calls past the limit are refused as rate_limited and never reach the upstream', async () => {
    const { token, connectorId } = await organization('batch-org');
    const before = upstreamCalls;
    const r = await post(token, executes(connectorId, 100));
    expect(r.status, r.text).toBe(200);
    const { ran, limited } = tally(r.body as RpcResponse[]);
    expect(ran + limited).toBe(100);
    // The limit is 10 a minute (a bucket refilling one every 6 s): far fewer than 100 can run.
    expect(ran).toBeGreaterThanOrEqual(1);
    expect(ran).toBeLessThan(50);
    expect(upstreamCalls - before).toBe(ran);
    // Spent: a plain request now gets 429.
    const next = await h.request('GET', CONNECTORS, { token });
    expect([next.status, next.body.code]).toEqual([429, 'rate_limited']);
  });

  it('other methods in a batch count too: 100 tools/list, those past the limit refused with -32000 rate_limited', async () => {
    const { token } = await organization('list-org');
    const r = await post(
      token,
      Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/list', params: {} })),
    );
    expect(r.status, r.text).toBe(200);
    const replies = r.body as RpcResponse[];
    const listed = replies.filter((x) => x.result !== undefined).length;
    const refused = replies.filter((x) => x.error?.code === -32000 && (x.error.data as unknown as { code: string }).code === 'rate_limited').length;
    expect(listed + refused).toBe(100);
    expect(listed).toBeGreaterThanOrEqual(1);
    expect(listed).toBeLessThan(50);
  });

  it('four batches in parallel share one limit', async () => {
    const { token, connectorId } = await organization('parallel-org');
    const before = upstreamCalls;
    const replies = await Promise.all([0, 1, 2, 3].map((i) => post(token, executes(connectorId, 50, i * 50))));
    let ran = 0;
    for (const r of replies) {
      if (r.status === 429) {
        expect(r.body.code).toBe('rate_limited');
        continue;
      }
      expect(r.status, r.text).toBe(200);
      ran += tally(r.body as RpcResponse[]).ran;
    }
    expect(ran).toBeGreaterThanOrEqual(1);
    expect(ran).toBeLessThan(100);
    expect(upstreamCalls - before).toBe(ran);
  });

  it('invalid params answer -32602 with the failing path, in a batch and alone', async () => {
    const { token } = await organization('params-org');
    const r = await post(token, [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { arguments: {} } },
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { cursor: 5 } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } },
    ]);
    expect(r.status, r.text).toBe(200);
    const byId = new Map((r.body as RpcResponse[]).map((x) => [x.id, x]));
    for (const [id, path] of [
      [1, '/params/name'],
      [2, '/params/cursor'],
      [3, '/params/name'],
    ] as const) {
      const e = byId.get(id)?.error;
      expect([id, e?.code]).toEqual([id, -32602]);
      expect(e?.data?.errors.map((x) => x.path)).toContain(path);
      expect(e?.message).not.toContain('"expected"');
    }
    const one = await post(token, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'execute', arguments: 'x' } });
    expect([one.status, one.body.error?.code]).toEqual([200, -32602]);
    expect(h.logs.filter((l) => l.includes('"level":50'))).toEqual([]);
  });
});
