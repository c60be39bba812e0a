/**
 * How syncs write on SQLite on the main thread (syncWrites in src/service/data/hosted-data.ts, used by
 * `switchboard sync` and on an in-memory database): a page in parts, one part at a time across
 * all syncs, each after a turn of the event loop, so an execute arriving meanwhile is answered
 * between two parts instead of after every queued sync's whole page (issue 25's fleet bench).
 * The service on a SQLite file writes in the record writer's worker instead (last test here;
 * test/search/record-writer.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { startGranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import {
  POSTGRES_SYNC_WRITE_SLOTS,
  SQLITE_SYNC_CHECKPOINT_MS,
  SQLITE_SYNC_WRITE_RECORDS,
  syncPageWriteSlots,
  syncWrites,
  type SyncCheckpoints,
} from '../../src/service/data/hosted-data.ts';
import type { RecordSink } from '../../src/sync/index.ts';
import { startHarness } from './helpers.ts';

const def = { primaryKey: 'id', fields: { id: 'string' as const } };
const records = (prefix: string, n: number): Record<string, unknown>[] => Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}` }));

function recordingSink(log: string[], during?: (label: string) => void): RecordSink {
  return {
    async upsert(connectorId, _entity, _def, list) {
      const label = `${connectorId}:${String(list[0]!['id'])}+${list.length}`;
      log.push(label);
      during?.(label);
    },
    async deleteMissing(connectorId) {
      log.push(`${connectorId}:deleteMissing`);
      return 0;
    },
    async deleteRecords() {
      return 0;
    },
    async deleteConnector() {
      return 0;
    },
    async count() {
      return 0;
    },
  };
}

describe('syncWrites on SQLite', () => {
  it('writes a page in parts of SQLITE_SYNC_WRITE_RECORDS, in order, every record once', async () => {
    const log: string[] = [];
    const sink = syncWrites(recordingSink(log), 'sqlite');
    await sink.upsert('a', 'notes', def, records('n', 2 * SQLITE_SYNC_WRITE_RECORDS + 5), 'run');
    expect(log).toEqual([
      `a:n0+${SQLITE_SYNC_WRITE_RECORDS}`,
      `a:n${SQLITE_SYNC_WRITE_RECORDS}+${SQLITE_SYNC_WRITE_RECORDS}`,
      `a:n${2 * SQLITE_SYNC_WRITE_RECORDS}+5`,
    ]);
  });

  it('lets two syncs take turns, with a turn of the event loop before every part once the slice is spent (here 0 ms)', async () => {
    const log: string[] = [];
    // A request arriving while a part is written (a macrotask queued during it) is served before the next part.
    const sink = syncWrites(
      recordingSink(log, (label) => setImmediate(() => log.push(`request after ${label}`))),
      'sqlite',
      0,
    );
    const n = 2 * SQLITE_SYNC_WRITE_RECORDS;
    const both = Promise.all([sink.upsert('a', 'notes', def, records('a', n), 'run'), sink.upsert('b', 'notes', def, records('b', n), 'run')]);
    setImmediate(() => log.push('request before'));
    await both;
    const a1 = `a:a0+${SQLITE_SYNC_WRITE_RECORDS}`;
    const b1 = `b:b0+${SQLITE_SYNC_WRITE_RECORDS}`;
    const a2 = `a:a${SQLITE_SYNC_WRITE_RECORDS}+${SQLITE_SYNC_WRITE_RECORDS}`;
    const b2 = `b:b${SQLITE_SYNC_WRITE_RECORDS}+${SQLITE_SYNC_WRITE_RECORDS}`;
    expect(log).toEqual(['request before', a1, `request after ${a1}`, b1, `request after ${b1}`, a2, `request after ${a2}`, b2]);
  });

  it('queues deletion passes behind the writes before them', async () => {
    const log: string[] = [];
    const sink = syncWrites(recordingSink(log), 'sqlite', 0);
    await Promise.all([sink.upsert('a', 'notes', def, records('a', SQLITE_SYNC_WRITE_RECORDS + 1), 'run'), sink.deleteMissing('b', 'notes', 'run')]);
    expect(log).toEqual([`a:a0+${SQLITE_SYNC_WRITE_RECORDS}`, 'b:deleteMissing', `a:a${SQLITE_SYNC_WRITE_RECORDS}+1`]);
  });

  it('runs writes back to back within a slice: a request waits at most one slice', async () => {
    const log: string[] = [];
    const sink = syncWrites(recordingSink(log), 'sqlite', 60_000);
    const write = sink.upsert('a', 'notes', def, records('a', 3 * SQLITE_SYNC_WRITE_RECORDS), 'run');
    setImmediate(() => log.push('request'));
    await write;
    expect(log.indexOf('request')).toBe(-1);
    await new Promise((r) => setImmediate(r));
    expect(log.at(-1)).toBe('request');
  });

  it('waits, before a write, for a WAL checkpoint when none ran for SQLITE_SYNC_CHECKPOINT_MS; the event loop runs meanwhile', async () => {
    const log: string[] = [];
    let sinceLast = 0;
    const checkpoints: SyncCheckpoints = {
      get sinceLast() {
        return sinceLast;
      },
      async checkpoint() {
        log.push('checkpoint');
        // A request arriving during the checkpoint is served before the next write.
        await new Promise((r) => setImmediate(r));
        log.push('checkpoint done');
        sinceLast = 0;
      },
    };
    const sink = syncWrites(
      recordingSink(log, (label) => {
        if (label.startsWith('b:')) setImmediate(() => log.push(`request after ${label}`));
      }),
      'sqlite',
      60_000,
      checkpoints,
    );
    const n = 2 * SQLITE_SYNC_WRITE_RECORDS;
    await sink.upsert('a', 'notes', def, records('a', n), 'run');
    expect(log).toEqual([`a:a0+${SQLITE_SYNC_WRITE_RECORDS}`, `a:a${SQLITE_SYNC_WRITE_RECORDS}+${SQLITE_SYNC_WRITE_RECORDS}`]);
    log.length = 0;
    sinceLast = SQLITE_SYNC_CHECKPOINT_MS;
    const b = sink.upsert('b', 'notes', def, records('b', n), 'run');
    setImmediate(() => log.push('request'));
    await b;
    const b1 = `b:b0+${SQLITE_SYNC_WRITE_RECORDS}`;
    const b2 = `b:b${SQLITE_SYNC_WRITE_RECORDS}+${SQLITE_SYNC_WRITE_RECORDS}`;
    expect(log).toEqual(['checkpoint', 'request', 'checkpoint done', b1, b2]);
  });

  it('the hosted service on a SQLite file writes its syncs\u2019 records in the record writer\u2019s worker, not through syncWrites', async () => {
    const sim = await startGranolaSimulator({ size: 12, rateLimit: false });
    const h = await startHarness('sqlite', { config: { syncScheduler: true, upstreamThrottle: false, connectorTypes: { granola: { baseUrl: sim.url } } } });
    try {
      const checkpointer = h.service.ctx.database.checkpointer!;
      // syncWrites would find a checkpoint due before every part and ask the main connection's
      // checkpointer for it; the worker's connection checkpoints by itself.
      Object.defineProperty(checkpointer, 'sinceLast', { get: () => Number.POSITIVE_INFINITY });
      const checkpoint = checkpointer.checkpoint.bind(checkpointer);
      const asked: unknown[] = [];
      checkpointer.checkpoint = async () => {
        const r = await checkpoint();
        asked.push(r);
        return r;
      };
      const token = await h.token(await h.createApp('org-wal'));
      const created = await h.request('POST', '/api/v1/integrations/connectors', {
        token,
        body: { customer_name: 'c1', connector_type: 'granola', name: 'g', credentials: { api_key: sim.apiKey } },
      });
      expect(created.status, created.text).toBe(201);
      // Poll until the first sync is done (a poll, not a sleep with a meaning).
      for (;;) {
        const r = await h.request('GET', `/api/v1/integrations/connectors/${created.body.id}/sync`, { token });
        if (r.body?.status !== 'running' && r.body?.last_finished_at !== null) {
          expect(r.body.entities.notes.records).toBe(12);
          break;
        }
        await new Promise((res) => setTimeout(res, 20));
      }
      expect(asked).toEqual([]);
      // What the worker wrote, the main connection reads.
      const found = await h.request('POST', `/api/v1/integrations/connectors/${created.body.id}/execute`, {
        token,
        body: { entity: 'notes', action: 'search', params: { query: {}, limit: 100 } },
      });
      expect(found.status, found.text).toBe(200);
      expect(found.body.data).toHaveLength(12);
      expect([...h.service.ctx.database.writeGate!]).toEqual([0, 0, 0]);
    } finally {
      await h.close();
      await sim.close();
    }
  });

  it('leaves PostgreSQL’s sink as it is: the writes are the server’s work', () => {
    const sink = recordingSink([]);
    expect(syncWrites(sink, 'postgres')).toBe(sink);
  });
});

describe('sync page writes at once per instance', () => {
  it("PostgreSQL: fewer than the pool's 10 connections, so requests keep some; SQLite: no limit (its writes take turns)", () => {
    expect(syncPageWriteSlots('postgres')).toBe(POSTGRES_SYNC_WRITE_SLOTS);
    expect(POSTGRES_SYNC_WRITE_SLOTS).toBeLessThan(10);
    expect(syncPageWriteSlots('sqlite')).toBeUndefined();
  });
});
