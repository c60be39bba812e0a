/**
 * Search benchmark: N synthetic Intercom-like contacts (default 1,000,000) loaded through
 * RecordStore.upsert into SQLite (a temp file) and PostgreSQL (SWITCHBOARD_BENCH_POSTGRES_URL or
 * SWITCHBOARD_TEST_POSTGRES_URL, when reachable; a scratch schema dropped afterwards). For each
 * query kind it reports min / p50 / p95 latency of RecordStore.search, of the strongest
 * hand-written query for the same page (scripts/bench/search-baselines.ts: a typed table with
 * B-trees and FTS5 on SQLite, B-trees, pg_trgm and full-text GIN on PostgreSQL, interleaved run
 * by run, each run's ids checked equal) and of a full scan in JavaScript (searchInMemory over the
 * same documents; the contacts and query kinds are in scripts/bench/search-data.ts), the storage
 * per record against the record's JSON size, and one verdict line
 * per goal (issue 25: PostgreSQL within 1.5× of the hand-written PostgreSQL query, storage
 * judged only against a regression of the figure docs/search.md records, the JavaScript-scan
 * goals judged at the 1,000,000 records they are set for and listed below that). SQLite's goals (against the hand-written query and the scan, all run in
 * this thread) are judged on CPU time per query, wall time shown beside it; PostgreSQL's on wall
 * time, since its work happens in the server.
 *
 *   npm run bench:search -- [--records N] [--runs N] [--warmup N] [--scan-runs N] [--batch N] [--dialects sqlite,postgres] [--sequential]
 *
 * SEARCH_BENCH_KEEP=1 keeps PostgreSQL's two scratch schemas (their names are printed) to EXPLAIN
 * their queries afterwards; drop them by hand.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { sql } from 'kysely';
import pg from 'pg';
import { migrate, openDatabase, type Database } from '../../src/store/database.ts';
import { parseSearchParams, projectDocument, RecordStore, searchInMemory, searchMigrations, type RefDoc } from '../../src/search/index.ts';
import { postgresBaseline, sqliteBaseline, type Baseline, type HandRow } from './search-baselines.ts';
import { benchQueries, contact, DEF, handRow } from './search-data.ts';

const { values: args } = parseArgs({
  strict: false,
  options: {
    records: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '40' },
    'scan-runs': { type: 'string', default: '5' },
    warmup: { type: 'string', default: '500' },
    batch: { type: 'string', default: '5000' },
    dialects: { type: 'string', default: 'sqlite,postgres' },
    sequential: { type: 'boolean', default: false },
  },
});
const RECORDS = isMainThread ? Number(args.records) : (workerData as { records: number }).records;
const RUNS = Number(args.runs);
const SCAN_RUNS = Number(args['scan-runs']);
const WARMUP = Number(args.warmup);
const BATCH = isMainThread ? Number(args.batch) : (workerData as { batch: number }).batch;
const DIALECTS = String(args.dialects).split(',');
const SEQUENTIAL = args.sequential === true;
const POSTGRES_URL = process.env['SWITCHBOARD_BENCH_POSTGRES_URL'] ?? process.env['SWITCHBOARD_TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
const CONNECTOR = 'bench-intercom';
const ENTITY = 'contacts';

const QUERIES = benchQueries(RECORDS);

function* handRows(): Generator<HandRow> {
  for (let i = 0; i < RECORDS; i++) yield handRow(i);
}

function percentile(samples: number[], p: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

const fmt = (ms: number): string => (ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0));

async function load(store: RecordStore, label: string): Promise<number> {
  const started = performance.now();
  let last = started;
  for (let i = 0; i < RECORDS; i += BATCH) {
    const batch: Record<string, unknown>[] = [];
    for (let j = i; j < Math.min(RECORDS, i + BATCH); j++) batch.push(contact(j));
    await store.upsert(CONNECTOR, ENTITY, DEF, batch, 'bench-run');
    if (performance.now() - last > 10_000) {
      last = performance.now();
      const done = Math.min(RECORDS, i + BATCH);
      const line = `  ${label}: ${done.toLocaleString()} records, ${Math.round(done / ((last - started) / 1000)).toLocaleString()}/s\n`;
      // A worker's own stderr reaches the terminal late; the main thread prints its progress.
      if (isMainThread) process.stderr.write(line);
      else parentPort!.postMessage({ progress: line });
    }
  }
  return (performance.now() - started) / 1000;
}

interface Stats {
  min: number;
  p50: number;
  p95: number;
}

interface Row {
  dialect: string;
  query: string;
  ours: Stats;
  hand?: Stats;
  scan: Stats;
  /** CPU time of this process per query (SQLite and the JavaScript scan run here, in this thread; for PostgreSQL only the client's share). */
  cpu: { ours: Stats; hand?: Stats; scan: Stats };
  hits: number;
  /** Every measured run returned the same first page as the hand-written query (and the probe as the JavaScript scan). */
  same: boolean;
  /** Per value of a query that cycles through values of different costs (see QUERIES): its label, our p50 and the hand-written one's (ms). */
  perValue?: { label: string; ours: number; hand?: number }[];
}

const stats = (samples: number[]): Stats => ({ min: Math.min(...samples), p50: percentile(samples, 50), p95: percentile(samples, 95) });

async function measure(
  dialect: string,
  store: RecordStore,
  docs: RefDoc[],
  scanCache: Map<string, { wall: Stats; cpu: Stats }>,
  baseline: Baseline | undefined,
): Promise<Row[]> {
  const rows: Row[] = [];
  for (const q of QUERIES) {
    // Warm up, and check the first page against the JavaScript scan.
    const probe = q.params(1);
    const result = await store.search(CONNECTOR, ENTITY, DEF, probe);
    const parsed = parseSearchParams(DEF, probe);
    const expected = searchInMemory(docs, DEF, parsed)
      .slice(0, parsed.limit)
      .map((d) => d.doc['id']);
    let same = JSON.stringify(result.data.map((d) => d['id'])) === JSON.stringify(expected);
    const hand = baseline !== undefined && q.hand !== undefined && baseline.kinds.has(q.hand(1).kind) ? q.hand : undefined;
    if (hand !== undefined) await baseline!.run(hand(1));
    // Untimed runs of both sides with other values (up to --warmup runs or 1 s), so that neither is
    // timed while the JIT still compiles its code path: V8 optimizes the store's JavaScript only
    // after hundreds to thousands of calls, whereas the hand-written side is mostly native code.
    const warm = async (): Promise<void> => {
      const warmStart = performance.now();
      for (let w = 0; w < WARMUP && performance.now() - warmStart < 1000; w++) {
        await store.search(CONNECTOR, ENTITY, DEF, q.params(RUNS + 2 + w));
        if (hand !== undefined) await baseline!.run(hand(RUNS + 2 + w));
      }
    };
    await warm();
    // A sort pair the store learned from these searches (schema.ts, 0004) is built in the
    // background: measured once it is there (and warmed again on its plan), not while it is
    // written. Its build time is what the first searches of this shape wait through instead.
    const settleStart = performance.now();
    await store.settled();
    const settleMs = performance.now() - settleStart;
    if (settleMs > 100) {
      console.log(
        `  ${dialect} ${q.name}: a sort pair learned in the warm-up was built in the background, ${(settleMs / 1000).toFixed(1)} s after it ended; timed once built`,
      );
      await warm();
    }
    const samples: number[] = [];
    const handSamples: number[] = [];
    const cpuSamples: number[] = [];
    const handCpuSamples: number[] = [];
    const cpuMs = (since: NodeJS.CpuUsage): number => {
      const u = process.cpuUsage(since);
      return (u.user + u.system) / 1000;
    };
    for (let k = 0; k < RUNS; k++) {
      // Interleaved, alternating which goes first; each run's pages compared.
      let ours: string[] = [];
      let theirs: string[] = [];
      const runOurs = async (): Promise<void> => {
        const c = process.cpuUsage();
        const t = performance.now();
        const r = await store.search(CONNECTOR, ENTITY, DEF, q.params(k + 2));
        samples.push(performance.now() - t);
        cpuSamples.push(cpuMs(c));
        ours = r.data.map((d) => String(d['id']));
      };
      const runHand = async (): Promise<void> => {
        const c = process.cpuUsage();
        const t = performance.now();
        theirs = await baseline!.run(hand!(k + 2));
        handSamples.push(performance.now() - t);
        handCpuSamples.push(cpuMs(c));
      };
      if (hand === undefined) await runOurs();
      else if (k % 2 === 0) {
        await runOurs();
        await runHand();
      } else {
        await runHand();
        await runOurs();
      }
      if (hand !== undefined && JSON.stringify(ours) !== JSON.stringify(theirs)) {
        if (same) process.stderr.write(`  ${dialect} ${q.name}: run ${k} differs from the hand-written query (${ours.length} vs ${theirs.length} ids)\n`);
        same = false;
      }
    }
    const perValue =
      q.values === undefined
        ? undefined
        : Array.from({ length: q.values.count }, (_, v) => {
            // Run k used variant k + 2; samples and handSamples are in run order.
            const of = (list: number[]): number[] => list.filter((_, k) => (k + 2) % q.values!.count === v);
            return { v, ours: of(samples), hand: of(handSamples) };
          })
            // A value no run used is left out.
            .filter((x) => x.ours.length > 0)
            .map((x) => ({ label: q.values!.label(x.v), ours: percentile(x.ours, 50), ...(hand !== undefined ? { hand: percentile(x.hand, 50) } : {}) }));
    let scan = scanCache.get(q.name);
    if (scan === undefined) {
      const scanSamples: number[] = [];
      const scanCpu: number[] = [];
      for (let k = 0; k < SCAN_RUNS; k++) {
        const p = parseSearchParams(DEF, q.params(k + 2));
        const c = process.cpuUsage();
        const t = performance.now();
        searchInMemory(docs, DEF, p).slice(0, p.limit);
        scanSamples.push(performance.now() - t);
        scanCpu.push(cpuMs(c));
      }
      scan = { wall: stats(scanSamples), cpu: stats(scanCpu) };
      scanCache.set(q.name, scan);
    }
    rows.push({
      dialect,
      query: q.name,
      ours: stats(samples),
      ...(hand !== undefined ? { hand: stats(handSamples) } : {}),
      scan: scan.wall,
      cpu: { ours: stats(cpuSamples), ...(hand !== undefined ? { hand: stats(handCpuSamples) } : {}), scan: scan.cpu },
      hits: expected.length,
      same,
      ...(perValue !== undefined ? { perValue } : {}),
    });
    process.stderr.write(
      `  ${dialect} ${q.name}: p50 ${fmt(percentile(samples, 50))} ms${hand !== undefined ? `, hand-written ${fmt(percentile(handSamples, 50))} ms` : ''}\n`,
    );
  }
  return rows;
}

/**
 * The floor under any PostgreSQL query from this process: p50 of a bound `SELECT $1` (one round
 * trip, nothing to read), after warming up. Printed beside the PostgreSQL goals, with the
 * hand-written PostgreSQL query, to show how much of a ratio to in-process SQLite is the client/server boundary.
 */
async function postgresRoundTrip(): Promise<number> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const samples: number[] = [];
    for (let k = 0; k < 300; k++) {
      const t = performance.now();
      await client.query('SELECT $1::integer AS k', [k]);
      if (k >= 100) samples.push(performance.now() - t);
    }
    return percentile(samples, 50);
  } finally {
    await client.end();
  }
}

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

interface Target {
  dialect: 'sqlite' | 'postgres';
  database: Database;
  store: RecordStore;
  /** PostgreSQL: the scratch schema holding the store's tables. */
  schema?: string;
  cleanup: () => Promise<void>;
  loadSeconds?: number;
}

async function openTarget(dialect: 'sqlite' | 'postgres', secret: string): Promise<Target | undefined> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-'));
    const file = join(dir, 'search.db');
    const database = openDatabase(file);
    await migrate(database, [searchMigrations]);
    return {
      dialect,
      database,
      store: new RecordStore(database, { cursorSecret: secret }),
      cleanup: async () => {
        await database.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  if (!(await postgresReachable())) {
    console.log(`postgres: not reachable at ${POSTGRES_URL}, skipped`);
    return undefined;
  }
  const schema = `search_bench_${process.pid}`;
  const admin = openDatabase(POSTGRES_URL, { poolSize: 1 });
  await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`.execute(admin.db).catch(() => undefined);
  await sql`CREATE SCHEMA ${sql.id(schema)}`.execute(admin.db);
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('options', `-c search_path=${schema},public`);
  const database = openDatabase(url.toString(), { poolSize: 4 });
  const cleanup = async (): Promise<void> => {
    await database.close();
    if (process.env['SEARCH_BENCH_KEEP'] === '1') console.log(`postgres: kept schema ${schema}`);
    else await sql`DROP SCHEMA ${sql.id(schema)} CASCADE`.execute(admin.db);
    await admin.close();
  };
  try {
    await migrate(database, [searchMigrations]);
  } catch (e) {
    await cleanup();
    throw e;
  }
  return { dialect, database, schema, store: new RecordStore(database, { cursorSecret: secret }), cleanup };
}

/**
 * Read every table and index of these schemas once (pg_prewarm's 'read' mode), so that both
 * sides are measured with their pages in the OS page cache, as on a server whose memory holds
 * them. Without it, which side's pages the OS still had after the loads decided the ratios: at
 * 1,000,000 contacts (a 4.7 GB store, a 1.1 GB hand-written table) this VM kept 3.9 GB of page
 * cache after the loads, and the same keyword query took 36 or 3.8 ms on the hand-written side.
 */
async function warmOsCache(db: Database['db'], schemas: string[]): Promise<string> {
  try {
    // Installed in the scratch schema (the connection's search_path) unless it already is elsewhere; dropped with it.
    await sql`CREATE EXTENSION IF NOT EXISTS pg_prewarm`.execute(db);
    const { rows: ext } = await sql<{
      schema: string;
    }>`SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_prewarm'`.execute(db);
    const started = performance.now();
    const { rows } = await sql<{ blocks: string }>`SELECT coalesce(sum(${sql.id(ext[0]!.schema, 'pg_prewarm')}(c.oid, 'read')), 0)::text AS blocks
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ANY(${schemas}::text[]) AND c.relkind IN ('r', 'i')`.execute(db);
    const gb = (Number(rows[0]?.blocks ?? 0) * 8192) / 1e9;
    return `${gb.toFixed(2)} GB read into the OS page cache (pg_prewarm) in ${((performance.now() - started) / 1000).toFixed(0)} s`;
  } catch (e) {
    return `not warmed (${(e as Error).message}): the figures depend on what the OS page cache kept after the loads`;
  }
}

/**
 * Load the SQLite file in a worker thread: better-sqlite3 blocks its thread while a statement
 * runs, which would starve the PostgreSQL load's I/O on a shared event loop.
 */
function loadSqliteInWorker(file: string): Promise<number> {
  return new Promise((resolve, reject) => {
    // Workers do not inherit the TypeScript loader: register tsx, then import this module.
    const entry = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(import.meta.url)}); })`;
    const worker = new Worker(entry, { eval: true, workerData: { file, records: RECORDS, batch: BATCH } });
    worker.on('message', (m: number | { progress: string }) => (typeof m === 'number' ? resolve(m) : process.stderr.write(m.progress)));
    worker.once('error', reject);
    worker.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`sqlite loader exited with ${code}`))));
  });
}

async function workerMain(): Promise<void> {
  const { file } = workerData as { file: string };
  const database = openDatabase(file);
  const seconds = await load(new RecordStore(database, { cursorSecret: 'unused' }), 'sqlite');
  await sql`ANALYZE`.execute(database.db);
  await database.close();
  parentPort!.postMessage(seconds);
}

async function sizeOf(t: Target): Promise<number> {
  if (t.dialect === 'sqlite') {
    // What the database holds, not what still sits in the write-ahead log.
    await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(t.database.db);
    const file = t.database.file!;
    return statSync(file).size + (statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0);
  }
  const { rows } = await sql<{
    bytes: string;
  }>`SELECT sum(pg_total_relation_size(c.oid))::text AS bytes FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'`.execute(
    t.database.db,
  );
  return Number(rows[0]?.bytes ?? 0);
}

/** The size the full-size goals are set for. */
const FULL_SIZE = 1_000_000;

/**
 * Storage per record as docs/search.md records it (its table "Storage per record, recorded"),
 * at the recorded size nearest to `records`: the reference the bench fails on when exceeded by
 * more than 20 %.
 */
function recordedStorage(records: number, dialect: 'sqlite' | 'postgres'): { records: number; bytes: number } | undefined {
  const text = readFileSync(new URL('../../docs/search.md', import.meta.url), 'utf8');
  const num = (x: string): number => Number(x.replace(/[,\s]/g, ''));
  const rows = [...text.matchAll(/^\| ([\d,]+) records \| ([\d,]+) B \| ([\d,]+) B \|/gm)].map((m) => ({
    records: num(m[1]!),
    sqlite: num(m[2]!),
    postgres: num(m[3]!),
  }));
  if (rows.length === 0) return undefined;
  const nearest = rows.reduce((a, b) => (Math.abs(Math.log(b.records / records)) < Math.abs(Math.log(a.records / records)) ? b : a));
  return { records: nearest.records, bytes: nearest[dialect] };
}

async function main(): Promise<void> {
  console.log(
    `search benchmark: ${RECORDS.toLocaleString()} contacts, ${RUNS} runs per query (JavaScript scan: ${SCAN_RUNS} runs), batches of ${BATCH}, ${SEQUENTIAL ? 'sequential' : 'concurrent'} loads`,
  );
  const t = performance.now();
  const docs: RefDoc[] = [];
  let jsonBytes = 0;
  for (let i = 0; i < RECORDS; i++) {
    const c = contact(i);
    jsonBytes += Buffer.byteLength(JSON.stringify(c));
    docs.push({ rid: i + 1, doc: projectDocument(c, DEF) });
  }
  const jsonPerRecord = jsonBytes / RECORDS;
  console.log(`generated documents in ${((performance.now() - t) / 1000).toFixed(1)} s; record JSON ${jsonPerRecord.toFixed(0)} B on average`);

  const secret = 'bench-cursor-secret';
  const targets: Target[] = [];
  for (const d of ['sqlite', 'postgres'] as const) {
    if (!DIALECTS.includes(d)) continue;
    const target = await openTarget(d, secret);
    if (target !== undefined) targets.push(target);
  }
  const results: Row[] = [];
  let roundTrip: number | undefined;
  const storage = new Map<string, number>();
  const scanCache = new Map<string, { wall: Stats; cpu: Stats }>();
  const handDir = mkdtempSync(join(tmpdir(), 'switchboard-bench-hand-'));
  try {
    const loadOne = async (target: Target): Promise<void> => {
      if (target.dialect === 'sqlite') {
        target.loadSeconds = await loadSqliteInWorker(target.database.file!);
        return;
      }
      target.loadSeconds = await load(target.store, target.dialect);
      // Statistics and visibility map as autovacuum (PostgreSQL) or `PRAGMA optimize` (SQLite)
      // would leave them; index-only scans need the visibility map.
      await sql`${sql.raw(target.dialect === 'postgres' ? 'VACUUM ANALYZE' : 'ANALYZE')}`.execute(target.database.db);
    };
    // SQLite works in this process and PostgreSQL in its server, so loading both at once
    // overlaps them; --sequential loads one after the other for clean per-dialect rates.
    if (SEQUENTIAL) for (const target of targets) await loadOne(target);
    else await Promise.all(targets.map(loadOne));
    for (const target of targets) {
      const secs = target.loadSeconds!;
      const bytes = await sizeOf(target);
      storage.set(target.dialect, bytes / RECORDS);
      console.log(
        `${target.dialect}: loaded in ${secs.toFixed(0)} s (${Math.round(RECORDS / secs).toLocaleString()} records/s${SEQUENTIAL || targets.length === 1 ? '' : ', while the other dialect loaded too'}), ${(bytes / 1e9).toFixed(2)} GB, ${(bytes / RECORDS).toFixed(0)} B per record`,
      );
      if (target.dialect === 'postgres') {
        // PostgreSQL reads pages outside its own buffer pool through read() from the OS page
        // cache, or from disk once the OS has dropped them; SQLite maps its file (mmap_size). When
        // the store outgrows shared_buffers, PostgreSQL's figures depend on it: printed to read them by.
        const { rows } = await sql<{ shared_buffers: string }>`SHOW shared_buffers`.execute(target.database.db);
        console.log(`postgres: shared_buffers ${rows[0]?.shared_buffers ?? '?'} for a store of ${(bytes / 1e9).toFixed(2)} GB`);
      }
    }
    for (const target of targets) {
      const started = performance.now();
      const baseline = target.dialect === 'sqlite' ? sqliteBaseline(join(handDir, 'hand.db'), handRows()) : await postgresBaseline(POSTGRES_URL, handRows());
      console.log(`${target.dialect}: hand-written baseline loaded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
      // Both loads leave PostgreSQL's shared buffers full of dirty pages, which the first queries
      // would otherwise write out themselves as they evict them: a CHECKPOINT first, as the
      // checkpointer would have done by then (SQLite's WAL is checkpointed above, in sizeOf).
      if (target.dialect === 'postgres')
        await sql`CHECKPOINT`.execute(target.database.db).catch((e: Error) => console.log(`postgres: CHECKPOINT failed (${e.message}); measuring without it`));
      if (target.dialect === 'postgres') console.log(`postgres: ${await warmOsCache(target.database.db, [target.schema!, baseline.schema!])}`);
      try {
        results.push(...(await measure(target.dialect, target.store, docs, scanCache, baseline)));
      } finally {
        await baseline.close();
      }
      if (target.dialect === 'postgres') roundTrip = await postgresRoundTrip();
    }
  } finally {
    for (const target of targets) await target.cleanup();
    rmSync(handDir, { recursive: true, force: true });
  }

  const ms = (x: Stats | undefined, k: keyof Stats): string => (x === undefined ? '—' : fmt(x[k]));
  console.log('');
  console.log(
    `| dialect | query | hits (first page) | min ms | p50 ms | p95 ms | hand-written min / p50 / p95 ms | vs hand-written (p50) | JS scan p50 ms | speed-up vs scan (p50) | CPU p50 ms: ours / hand-written / scan | same pages |`,
  );
  console.log(`|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|`);
  for (const r of results) {
    console.log(
      `| ${r.dialect} | ${r.query} | ${r.hits} | ${ms(r.ours, 'min')} | ${ms(r.ours, 'p50')} | ${ms(r.ours, 'p95')} | ${r.hand === undefined ? '—' : `${ms(r.hand, 'min')} / ${ms(r.hand, 'p50')} / ${ms(r.hand, 'p95')}`} | ${r.hand === undefined ? '—' : `${(r.ours.p50 / r.hand.p50).toFixed(2)}×`} | ${fmt(r.scan.p50)} | ${(r.scan.p50 / r.ours.p50).toFixed(0)}× | ${ms(r.cpu.ours, 'p50')} / ${ms(r.cpu.hand, 'p50')} / ${ms(r.cpu.scan, 'p50')} | ${r.same ? 'yes' : 'NO'} |`,
    );
  }

  for (const r of results.filter((x) => x.perValue !== undefined)) {
    const each = r.perValue!.map((v) => `${v.label} ${fmt(v.ours)}${v.hand === undefined ? '' : ` / ${fmt(v.hand)} (${(v.ours / v.hand).toFixed(2)}×)`}`);
    console.log(
      `${r.dialect} ${r.query}, p50 per value (ours${r.hand === undefined ? '' : ' / hand-written'}, ms; the row's p50 lies between values): ${each.join(', ')}`,
    );
  }

  // One verdict line per goal (issue 25's anchors), each judged at the size it is set for.
  console.log('');
  const verdict = (goal: string, ok: boolean | undefined, detail: string): void =>
    console.log(`goal: ${goal}: ${ok === undefined ? 'not measured' : ok ? 'met' : 'NOT met'} (${detail})`);
  /** A goal set for 1,000,000 records, measured at a smaller size: listed with its figure, not judged. */
  const listed = (goal: string, detail: string): void =>
    console.log(`goal: ${goal}: judged at --records ${FULL_SIZE} (at ${RECORDS.toLocaleString()} records: ${detail}, for information)`);
  const full = RECORDS >= FULL_SIZE;
  const of = (d: string): Row[] => results.filter((r) => r.dialect === d);
  const sqliteRows = of('sqlite');
  const pgRows = of('postgres');
  const size = `${RECORDS.toLocaleString()} records`;
  // SQLite, the hand-written SQLite query and the JavaScript scan all run synchronously in this
  // thread, so their CPU time is the work each does; wall time adds waiting for a core, which on
  // a shared machine says more about the neighbours than about the query. Judged on CPU p50,
  // wall p50 shown beside it.
  const both = (a: Row, ours: Stats, other: Stats, otherCpu: Stats): string =>
    `CPU ${fmt(a.cpu.ours.p50)} vs ${fmt(otherCpu.p50)} ms p50, ${(a.cpu.ours.p50 / otherCpu.p50).toFixed(2)}×; wall ${fmt(ours.p50)} vs ${fmt(other.p50)} ms, ${(ours.p50 / other.p50).toFixed(2)}×`;
  // SQLite within 2× of hand-written SQLite: set for every size (met at 20,000 and at 1,000,000 but for eq).
  for (const r of sqliteRows.filter((x) => x.hand !== undefined)) {
    verdict(`SQLite ${r.query} within 2× of hand-written at ${size}`, r.cpu.ours.p50 <= 2 * r.cpu.hand!.p50, both(r, r.ours, r.hand!, r.cpu.hand!));
  }
  // ≥ 100× a JavaScript scan: set for 1,000,000 records (the scan grows with N, an index lookup does not).
  for (const r of sqliteRows) {
    const goal = `SQLite ${r.query} ≥ 100× a JavaScript scan`;
    const detail = `${(r.cpu.scan.p50 / r.cpu.ours.p50).toFixed(0)}× by CPU, ${(r.scan.p50 / r.ours.p50).toFixed(0)}× by wall`;
    if (full) verdict(`${goal} at ${size}`, r.cpu.scan.p50 / r.cpu.ours.p50 >= 100, detail);
    else listed(goal, detail);
  }
  // PostgreSQL against the strongest hand-written PostgreSQL query for the same first page, at
  // every size (20,000 and 1,000,000); p95 reported, and the ratio to SQLite for information.
  for (const p of pgRows) {
    const r = sqliteRows.find((x) => x.query === p.query);
    const sqliteInfo =
      r === undefined ? '' : `; SQLite p50 ${fmt(r.ours.p50)} ms, PostgreSQL ${(p.ours.p50 / r.ours.p50).toFixed(2)}× SQLite (for information)`;
    const floor = `; round trip ${roundTrip === undefined ? '—' : fmt(roundTrip)} ms`;
    verdict(
      `PostgreSQL ${p.query} p50 within 1.5× of hand-written PostgreSQL at ${size}`,
      p.hand === undefined ? undefined : p.ours.p50 <= 1.5 * p.hand.p50,
      p.hand === undefined
        ? 'no hand-written PostgreSQL query'
        : `${fmt(p.ours.p50)} vs ${fmt(p.hand.p50)} ms p50, ${(p.ours.p50 / p.hand.p50).toFixed(2)}×; p95 ${fmt(p.ours.p95)} vs ${fmt(p.hand.p95)} ms${sqliteInfo}${floor}`,
    );
  }
  if (pgRows.length === 0)
    for (const r of sqliteRows) verdict(`PostgreSQL ${r.query} p50 within 1.5× of hand-written PostgreSQL at ${size}`, undefined, 'PostgreSQL not run');
  // Storage per record: printed beside the JSON size; a goal only against regression (> 20 % above the figure docs/search.md records).
  for (const [dialect, label] of [
    ['sqlite', 'SQLite'],
    ['postgres', 'PostgreSQL'],
  ] as const) {
    const bytes = storage.get(dialect);
    const recorded = recordedStorage(RECORDS, dialect);
    const goal = `${label} storage per record within 20 % of the figure in docs/search.md`;
    if (bytes === undefined) verdict(goal, undefined, 'not run');
    else if (recorded === undefined) verdict(goal, undefined, 'no figure recorded in docs/search.md');
    else
      verdict(
        goal,
        bytes <= 1.2 * recorded.bytes,
        `${bytes.toFixed(0)} B per record vs ${recorded.bytes.toLocaleString()} B recorded at ${recorded.records.toLocaleString()} records, ${((bytes / recorded.bytes - 1) * 100).toFixed(1)} %; record JSON ${jsonPerRecord.toFixed(0)} B, ${(bytes / jsonPerRecord).toFixed(2)}×`,
      );
  }
  verdict(
    'results equal on both sides',
    results.every((r) => r.same),
    `${
      results
        .filter((r) => !r.same)
        .map((r) => `${r.dialect} ${r.query}`)
        .join(', ') || 'every query, every run'
    }`,
  );
  if (results.some((r) => !r.same)) process.exitCode = 1;
}

// Importable (for profiling the data generator) without running the benchmark.
if (!isMainThread && (workerData as { file?: string } | null)?.file !== undefined) await workerMain();
else if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
