/**
 * Engine overhead: the same calls made through the interpreter and through the strongest
 * hand-written client — undici's `request` plus JSON.parse (and the record mapping the manifest
 * declares, written by hand) — against the same simulator (in another process), interleaved in
 * one run. Every call's whole result (records and meta) is checked equal on both sides.
 *
 * Cases: a Granola get, Granola lists (one page of 30, the API's largest, and 50 records over two
 * pages of 25 following the cursor), and an Intercom list of 50.
 * Runs `--rounds` rounds of `--iterations` interleaved calls per case (cases take turns within a
 * round, so load on a shared machine falls on all of them). Prints, per case, min and median over
 * the rounds of each side's median wall time per call, of the ratio, and each side's CPU time per
 * call; then one `goal:` verdict per case (goal: median ratio ≤ 1.10×, results equal).
 * Run: npm run bench:engine-overhead [-- --rounds R --iterations N]
 */
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { ConnectorRuntime, connectorRegistry, getConnector } from '../../src/index.ts';
import { fmt, median, startSimProcess } from './lib.ts';

const { values: args } = parseArgs({ strict: false, options: { rounds: { type: 'string', default: '5' }, iterations: { type: 'string', default: '200' } } });
const ROUNDS = Number(args.rounds);
const ITERATIONS = Number(args.iterations);
const WARMUP = 50;
const GOAL = 1.1;

/** GET and parse JSON the way a hand-written client on undici would. */
async function getJson(url: string, headers: Record<string, string>): Promise<unknown> {
  const { statusCode, body } = await request(url, { headers });
  const text = await body.text();
  if (statusCode !== 200) throw new Error(`${url}: ${statusCode}`);
  return JSON.parse(text);
}

interface Case {
  name: string;
  engine: () => Promise<unknown>;
  baseline: () => Promise<unknown>;
}

interface Round {
  engine: number;
  baseline: number;
  engineCpu: number;
  baselineCpu: number;
}

interface Tally {
  rounds: Round[];
  same: boolean;
  /** The first difference seen, for the report. */
  diff?: string;
}

/** Milliseconds of wall and CPU time of one call, and its result. */
async function timed(f: () => Promise<unknown>): Promise<{ wall: number; cpu: number; result: unknown }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await f();
  const wall = performance.now() - t0;
  const u = process.cpuUsage(cpu0);
  return { wall, cpu: (u.user + u.system) / 1000, result };
}

async function round(c: Case, tally: Tally): Promise<void> {
  const e: number[] = [];
  const b: number[] = [];
  let ecpu = 0;
  let bcpu = 0;
  for (let i = 0; i < ITERATIONS; i++) {
    // Alternate which goes first so neither always runs on a warmer connection.
    const engineFirst = i % 2 === 0;
    const first = await timed(engineFirst ? c.engine : c.baseline);
    const second = await timed(engineFirst ? c.baseline : c.engine);
    const [en, ba] = engineFirst ? [first, second] : [second, first];
    e.push(en.wall);
    b.push(ba.wall);
    ecpu += en.cpu;
    bcpu += ba.cpu;
    const je = JSON.stringify(en.result);
    const jb = JSON.stringify(ba.result);
    if (je !== jb && tally.same) {
      tally.same = false;
      tally.diff = `interpreter ${je.slice(0, 200)} vs hand-written ${jb.slice(0, 200)}`;
    }
  }
  tally.rounds.push({ engine: median(e), baseline: median(b), engineCpu: ecpu / ITERATIONS, baselineCpu: bcpu / ITERATIONS });
}

const minMed = (v: number[], f: (x: number) => string): string => `min ${f(Math.min(...v)).padStart(8)} median ${f(median(v)).padStart(8)}`;

const sims = await startSimProcess({ SIM_NO_RATE_LIMIT: '1' });
try {
  const cases: Case[] = [];
  const granola = sims.connectors['granola'];
  if (granola) {
    const key = granola.credentials['api_key']!;
    // limiter: null — the benchmark measures the interpreter, not Granola's 5 requests/s throttle.
    const g = new ConnectorRuntime(getConnector('granola'), { api_key: key }, { baseUrl: granola.base_url, limiter: null });
    const headers = { authorization: `Bearer ${key}`, accept: 'application/json' };
    const firstId = ((await g.execute('notes', 'list', { page_size: 1 })).data as { id: string }[])[0]!.id;
    type NotesPage = { notes: unknown[]; cursor: string | null; hasMore: boolean };
    const notesPage = async (query: string): Promise<{ data: unknown[]; meta: { cursor: string | null; has_more: boolean } }> => {
      const body = (await getJson(`${granola.base_url}/v1/notes?${query}`, headers)) as NotesPage;
      return { data: body.notes, meta: { cursor: body.cursor, has_more: body.hasMore } };
    };
    cases.push({
      name: 'granola notes.get',
      engine: () => g.execute('notes', 'get', { note_id: firstId }),
      baseline: async () => ({ data: await getJson(`${granola.base_url}/v1/notes/${encodeURIComponent(firstId)}`, headers) }),
    });
    cases.push({
      name: 'granola notes.list (30 records)',
      engine: () => g.execute('notes', 'list', { page_size: 30 }),
      baseline: () => notesPage('page_size=30'),
    });
    // Granola pages hold at most 30 notes: a list of 50 is two pages of 25, following the cursor.
    cases.push({
      name: 'granola notes, 50 records (2 pages)',
      engine: async () => {
        const out: unknown[] = [];
        for await (const page of g.pages('notes', { page_size: 25 })) {
          out.push(page);
          if (out.length === 2) break;
        }
        return out;
      },
      baseline: async () => {
        const first = await notesPage('page_size=25');
        const second = await notesPage(`page_size=25&cursor=${encodeURIComponent(first.meta.cursor!)}`);
        return [first, second];
      },
    });
  }
  const intercom = sims.connectors['intercom'];
  if (intercom && connectorRegistry().has('intercom')) {
    const token = intercom.credentials['access_token']!;
    const ic = new ConnectorRuntime(getConnector('intercom'), { access_token: token }, { baseUrl: intercom.base_url, limiter: null });
    const headers = { authorization: `Bearer ${token}`, accept: 'application/json', 'intercom-version': '2.14' };
    type Contact = Record<string, unknown> & { avatar?: { image_url?: string | null } | null };
    cases.push({
      name: 'intercom contacts.list (50 records)',
      engine: () => ic.execute('contacts', 'list', { per_page: 50 }),
      baseline: async () => {
        const body = (await getJson(`${intercom.base_url}/contacts?per_page=50`, headers)) as {
          data: Contact[];
          pages?: { next?: { starting_after?: string } };
        };
        // The manifest's response.map: avatar is the image URL.
        const data = body.data.map((r) => ({ ...r, avatar: r.avatar?.image_url ?? null }));
        return { data, meta: { next_page: body.pages?.next?.starting_after ?? null } };
      },
    });
  }
  console.log(
    `engine overhead: ${ROUNDS} rounds of ${ITERATIONS} interleaved calls per case after ${WARMUP} warm-up calls; simulators in a separate process; load average ${(
      await import('node:os')
    )
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const tallies = new Map<Case, Tally>(cases.map((c) => [c, { rounds: [], same: true }]));
  for (const c of cases) for (let i = 0; i < WARMUP; i++) await Promise.all([c.engine(), c.baseline()]);
  for (let r = 0; r < ROUNDS; r++) for (const c of cases) await round(c, tallies.get(c)!);
  const verdicts: string[] = [];
  for (const c of cases) {
    const t = tallies.get(c)!;
    const ratios = t.rounds.map((r) => r.engine / r.baseline);
    const cpuRatios = t.rounds.map((r) => r.engineCpu / r.baselineCpu);
    const ratio = median(ratios);
    console.log(c.name);
    console.log(
      `  interpreter                 wall/call ${minMed(
        t.rounds.map((r) => r.engine),
        fmt,
      )}   CPU/call ${minMed(
        t.rounds.map((r) => r.engineCpu),
        fmt,
      )}`,
    );
    console.log(
      `  undici.request + JSON.parse wall/call ${minMed(
        t.rounds.map((r) => r.baseline),
        fmt,
      )}   CPU/call ${minMed(
        t.rounds.map((r) => r.baselineCpu),
        fmt,
      )}`,
    );
    console.log(
      `  ratio                       wall      ${minMed(ratios, (x) => `${x.toFixed(3)}×`)}   CPU      ${minMed(cpuRatios, (x) => `${x.toFixed(3)}×`)}   results equal: ${t.same ? 'yes' : `NO (${t.diff})`}`,
    );
    const met = ratio <= GOAL && t.same;
    verdicts.push(
      `goal: engine ${c.name} ≤ ${GOAL.toFixed(2)}× a hand-written undici.request client: ${met ? 'met' : 'NOT met'} (median of ${ROUNDS} rounds ${ratio.toFixed(3)}×, CPU ${median(cpuRatios).toFixed(3)}×${t.same ? '' : ', results differ'})`,
    );
    if (!t.same) process.exitCode = 1;
  }
  for (const v of verdicts) console.log(v);
} finally {
  sims.stop();
}
