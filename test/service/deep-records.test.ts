/**
 * Deep values in upstream records (issue 37, item 3): a record nested 5,000 levels in an
 * upstream list does not fail the sync, on the main thread or in the sync worker; the store
 * keeps it repaired (levels below MAX_RECORD_DEPTH cut, as NUL and lone surrogates are
 * repaired) and every other record as it came. SQLite always, PostgreSQL when configured.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startGranolaSimulator, type GranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { MAX_RECORD_DEPTH } from '../../src/search/record-depth.ts';
import { describeEachDialect, startHarness, type Harness } from './helpers.ts';

const CONNECTORS = '/api/v1/integrations/connectors';
const LEVELS = 5000;

/** A proxy to the simulator that adds `deep` (nested LEVELS objects) to the note `target` in every JSON answer. */
async function deepeningProxy(upstream: string, target: string): Promise<{ url: string; close(): Promise<void> }> {
  const deep = `${'{"d":'.repeat(LEVELS)}1${'}'.repeat(LEVELS)}`;
  const server: Server = createServer((req, res) => {
    void (async () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'connection') headers[k] = v;
      const r = await fetch(upstream + (req.url ?? '/'), { method: req.method ?? 'GET', headers });
      let text = await r.text();
      text = text.replaceAll(`"id":"${target}"`, `"id":"${target}","deep":${deep}`);
      const out: Record<string, string> = {};
      r.headers.forEach((v, k) => {
        if (k !== 'content-encoding' && k !== 'content-length' && k !== 'transfer-encoding' && k !== 'connection') out[k] = v;
      });
      res.writeHead(r.status, out).end(text);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function depthOf(v: unknown): number {
  let n = 0;
  let x = v;
  while (x !== null && typeof x === 'object') {
    n++;
    x = (x as { d?: unknown }).d;
  }
  return n;
}

describeEachDialect('deep upstream records on %s', (dialect) => {
  let sim: GranolaSimulator;
  let proxy: Awaited<ReturnType<typeof deepeningProxy>>;
  let target: string;
  const harnesses: Harness[] = [];

  beforeAll(async () => {
    sim = await startGranolaSimulator({ size: 5, rateLimit: false });
    target = sim.ids()[2]!;
    proxy = await deepeningProxy(sim.url, target);
  });
  afterEach(async () => {
    await Promise.all(harnesses.splice(0).map((h) => h.close()));
  });
  afterAll(async () => {
    await proxy?.close();
    await sim?.close();
  });

  for (const syncInWorker of [false, true]) {
    it(`a record nested ${LEVELS} levels does not fail the sync (${syncInWorker ? 'in the sync worker' : 'on the main thread'})`, async () => {
      const h = await startHarness(dialect, { config: { syncInWorker, connectorTypes: { granola: { baseUrl: proxy.url } } } });
      harnesses.push(h);
      const token = await h.token(await h.createApp('org-deep'));
      const r = await h.request('POST', CONNECTORS, {
        token,
        body: { customer_name: 'c1', connector_type: 'granola', name: 'g', credentials: { api_key: sim.apiKey } },
      });
      expect(r.status, r.text).toBe(201);
      const id = r.body.id as string;
      const result = await h.service.ctx.sync.runOnce(id, { full: true });
      expect(result.entities['notes']).toMatchObject({ records: 5, added: 5 });
      const status = await h.request('GET', `${CONNECTORS}/${id}/sync`, { token });
      expect(status.body).toMatchObject({ last_error: null });
      const stored = (await h.service.ctx.records.getRecord(id, 'notes', target)) as Record<string, unknown>;
      expect(stored).toMatchObject({ id: target });
      // Cut below the limit (the record itself is level 1).
      expect(depthOf(stored['deep'])).toBe(MAX_RECORD_DEPTH - 1);
      const other = (await h.service.ctx.records.getRecord(id, 'notes', sim.ids()[0]!)) as Record<string, unknown>;
      expect(other['deep']).toBeUndefined();
    });
  }
});
