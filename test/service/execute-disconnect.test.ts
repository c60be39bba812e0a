/**
 * A caller that disconnects during an execute: the service aborts the upstream call it was
 * making for it (the per-connection signal of execute-routes.ts), and a later request on a
 * kept-alive connection is not affected by the earlier ones.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { startHarness, type Harness } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';

async function until(what: string, check: () => boolean, deadlineMs = 10_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('execute when the caller disconnects', () => {
  let sim: GranolaSimulator;
  let hanging: Server;
  const held: IncomingMessage[] = [];
  let h: Harness;
  let token: string;
  let connectorId: string;

  beforeAll(async () => {
    sim = await startGranolaSimulator({ size: 3 });
    // Answers nothing: the upstream call stays in flight until someone aborts it.
    hanging = createServer((req) => void held.push(req));
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    const port = (hanging.address() as AddressInfo).port;
    h = await startHarness('sqlite', { config: { connectorTypes: { granola: { baseUrl: `http://127.0.0.1:${port}` } }, upstreamThrottle: false } });
    const app = await h.createApp('disconnect');
    token = await h.token(app);
    const r = await h.request('POST', `${CONNECTORS}?check=false`, {
      token,
      body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { api_key: sim.apiKey } },
    });
    expect(r.status, r.text).toBe(201);
    connectorId = (r.body as { id: string }).id;
  });
  afterAll(async () => {
    await h?.close();
    hanging?.closeAllConnections();
    await new Promise((r) => hanging?.close(r));
    await sim?.close();
  });

  it('aborts the upstream call of a caller that went away', async () => {
    const body = JSON.stringify({ entity: 'notes', action: 'get', params: { note_id: 'not_10000000000000' } });
    const req = httpRequest(`${h.url}${CONNECTORS}/${connectorId}/execute`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    req.on('error', () => {});
    req.end(body);
    await until('the upstream call', () => held.length === 1);
    const upstream = held[0] as IncomingMessage;
    let upstreamClosed = false;
    upstream.socket.once('close', () => (upstreamClosed = true));
    req.destroy();
    await until('the upstream call to be aborted', () => upstreamClosed);
    // Logged as what it is, a caller that went away, not as a failure of the service.
    await until('the request to be logged', () => h.logs.some((l) => l.includes('client_disconnected')));
    expect(h.logs.filter((l) => (JSON.parse(l) as { level: number }).level >= 50)).toEqual([]);
  });

  it('requests on one kept-alive connection each run to completion', async () => {
    const okH = await startHarness('sqlite', { config: { connectorTypes: { granola: { baseUrl: sim.url } }, upstreamThrottle: false } });
    try {
      const app = await okH.createApp('keep-alive');
      const t = await okH.token(app);
      const created = await okH.request('POST', CONNECTORS, {
        token: t,
        body: { customer_name: 'c', connector_type: 'granola', name: 'g', credentials: { api_key: sim.apiKey } },
      });
      const id = (created.body as { id: string }).id;
      // fetch keeps the connection alive between these sequential requests.
      for (const noteId of sim.ids()) {
        const r = await okH.request('POST', `${CONNECTORS}/${id}/execute`, { token: t, body: { entity: 'notes', action: 'get', params: { note_id: noteId } } });
        expect(r.status, r.text).toBe(200);
        expect((r.body as { data: { id: string } }).data.id).toBe(noteId);
      }
    } finally {
      await okH.close();
    }
  });
});
