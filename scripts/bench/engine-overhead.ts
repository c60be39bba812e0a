/**
 * Engine overhead: the same list and get calls made through the interpreter and through the
 * strongest hand-written client — undici's `request` (the interpreter's own transport) plus
 * JSON.parse — against the same simulator (in another process), interleaved in one run, each
 * call's records checked equal. Prints min and median wall time per call for both, the ratio,
 * the interpreter's CPU time per call, and a verdict per case (goal: ≤ 1.10×).
 * Run: npm run bench:engine-overhead [-- --iterations N]
 */
import { request } from 'undici';
import { ConnectorRuntime, connectorRegistry, getConnector } from '../../src/index.ts';
import { fmt, median, startSimProcess } from './lib.ts';

/** GET and parse JSON the way a hand-written client on undici would. */
async function getJson(url: string, headers: Record<string, string>): Promise<unknown> {
  const { statusCode, body } = await request(url, { headers });
  const text = await body.text();
  if (statusCode !== 200) throw new Error(`${url}: ${statusCode}`);
  return JSON.parse(text);
}

/** Record ids of a result, to check both sides returned the same records. */
function ids(result: unknown): string {
  const data = (result as { data?: unknown }).data ?? result;
  return JSON.stringify(Array.isArray(data) ? data.map((r) => (r as { id?: unknown }).id) : (data as { id?: unknown }).id);
}

const iterArg = process.argv.indexOf('--iterations');
const ITERATIONS = iterArg > 0 ? Number(process.argv[iterArg + 1]) : 400;
const WARMUP = 50;

interface Case {
  name: string;
  engine: () => Promise<unknown>;
  baseline: () => Promise<unknown>;
}

async function measure(c: Case): Promise<void> {
  for (let i = 0; i < WARMUP; i++) {
    await c.engine();
    await c.baseline();
  }
  const e: number[] = [];
  const b: number[] = [];
  let cpu = 0;
  let same = true;
  for (let i = 0; i < ITERATIONS; i++) {
    // Alternate which goes first so neither always runs on a warmer connection.
    const order = i % 2 === 0 ? (['engine', 'baseline'] as const) : (['baseline', 'engine'] as const);
    const results: Record<string, unknown> = {};
    for (const which of order) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      results[which] = await (which === 'engine' ? c.engine() : c.baseline());
      const dt = performance.now() - t0;
      if (which === 'engine') {
        const u = process.cpuUsage(cpu0);
        cpu += (u.user + u.system) / 1000;
        e.push(dt);
      } else b.push(dt);
    }
    if (ids(results['engine']) !== ids(results['baseline'])) same = false;
  }
  const me = median(e);
  const mb = median(b);
  console.log(
    `${c.name.padEnd(34)} interpreter min ${fmt(Math.min(...e)).padStart(9)} median ${fmt(me).padStart(9)}  undici.request+JSON.parse min ${fmt(Math.min(...b)).padStart(9)} median ${fmt(mb).padStart(9)}  ratio ${(me / mb).toFixed(3)}  interpreter CPU/call ${fmt(cpu / ITERATIONS)}  same records: ${same ? 'yes' : 'NO'}`,
  );
  verdicts.push(`goal: engine ${c.name} ≤ 1.10× a hand-written undici.request client: ${me <= 1.1 * mb && same ? 'met' : 'NOT met'} (median ${(me / mb).toFixed(3)}×${same ? '' : ', records differ'})`);
  if (!same) process.exitCode = 1;
}

const verdicts: string[] = [];

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
    cases.push({
      name: 'granola notes.get',
      engine: () => g.execute('notes', 'get', { note_id: firstId }),
      baseline: () => getJson(`${granola.base_url}/v1/notes/${encodeURIComponent(firstId)}`, headers),
    });
    cases.push({
      name: 'granola notes.list (30 records)',
      engine: () => g.execute('notes', 'list', { page_size: 30 }),
      baseline: async () => {
        const body = (await getJson(`${granola.base_url}/v1/notes?page_size=30`, headers)) as { notes: unknown[]; cursor: unknown; hasMore: unknown };
        return { data: body.notes, meta: { cursor: body.cursor, has_more: body.hasMore } };
      },
    });
  }
  const intercom = sims.connectors['intercom'];
  if (intercom && connectorRegistry().has('intercom')) {
    const token = intercom.credentials['access_token']!;
    const ic = new ConnectorRuntime(getConnector('intercom'), { access_token: token }, { baseUrl: intercom.base_url, limiter: null });
    const headers = { authorization: `Bearer ${token}`, accept: 'application/json', 'intercom-version': '2.14' };
    cases.push({
      name: 'intercom contacts.list (50 records)',
      engine: () => ic.execute('contacts', 'list', { per_page: 50 }),
      baseline: async () => {
        const body = (await getJson(`${intercom.base_url}/contacts?per_page=50`, headers)) as { data: unknown[]; pages?: { next?: { starting_after?: string } } };
        return { data: body.data, meta: { next_page: body.pages?.next?.starting_after ?? null } };
      },
    });
  }
  console.log(`engine overhead: ${ITERATIONS} interleaved calls per case after ${WARMUP} warm-up calls; simulators in a separate process`);
  for (const c of cases) await measure(c);
  for (const v of verdicts) console.log(v);
} finally {
  sims.stop();
}
