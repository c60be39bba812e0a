/**
 * Sync throughput against a rate-limited upstream: syncs N Granola notes (each hydrated through
 * get, as the manifest says) from the Granola simulator enforcing Granola's real limit (bursts of
 * 25, 5 requests/s), and compares records/s with the ceiling that limit allows for the same
 * requests in the same run. Counts the 429s the upstream sent.
 * Run: npm run bench:sync [-- --records N] [-- --postgres URL]
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConnectorRuntime, getConnector } from '../../src/index.ts';
import type { FetchLike } from '../../src/http/index.ts';
import { startGranolaSimulator } from '../../connectors/granola/simulator/index.ts';
import { RecordStore, searchMigrations } from '../../src/search/index.ts';
import { migrate, openDatabase } from '../../src/store/database.ts';
import { SyncEngine, syncMigrations } from '../../src/sync/index.ts';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const N = Number(arg('--records') ?? 150);
const BURST = 25;
const PER_SECOND = 5;

const file = join(tmpdir(), `switchboard-bench-sync-${process.pid}.db`);
const database = openDatabase(arg('--postgres') ?? file);
await migrate(database, [searchMigrations, syncMigrations]);
const sim = await startGranolaSimulator({ size: N, rateLimit: { burst: BURST, perSecond: PER_SECOND } });
const granola = getConnector('granola');
let requests = 0;
let throttled = 0;
const counting: FetchLike = async (input, init) => {
  const res = await fetch(input, init);
  requests++;
  if (res.status === 429) throttled++;
  return res;
};
const engine = new SyncEngine({
  database,
  sink: new RecordStore(database, { cursorSecret: 'bench' }),
  runtimeFor: async () => ({ manifest: granola, runtime: new ConnectorRuntime(granola, { api_key: sim.apiKey }, { baseUrl: sim.url, fetch: counting }) }),
});
await engine.register('bench');
const started = performance.now();
let last = 0;
const result = await engine.runOnce('bench', {
  onProgress: (p) => {
    if (process.stderr.isTTY && p.records - last >= 10) {
      last = p.records;
      process.stderr.write(`\r${p.entity}: ${p.records}/${N}`);
    }
  },
});
const seconds = (performance.now() - started) / 1000;
if (process.stderr.isTTY) process.stderr.write('\n');
await sim.close();
await database.close();
rmSync(file, { force: true });
rmSync(`${file}-wal`, { force: true });
rmSync(`${file}-shm`, { force: true });

const records = result.entities['notes']!.records;
// The fastest any client could go: the burst at once, then PER_SECOND for every other request.
const ceilingSeconds = Math.max(0, requests - throttled - BURST) / PER_SECOND;
const rate = records / seconds;
const ceiling = records / ceilingSeconds;
console.log(`sync ${records} Granola notes (list + get per note): ${requests} requests in ${seconds.toFixed(1)} s`);
console.log(
  `throughput ${rate.toFixed(2)} records/s; ceiling under 25 burst + 5/s: ${ceiling.toFixed(2)} records/s; ratio ${(rate / ceiling).toFixed(3)}; 429s: ${throttled}`,
);
