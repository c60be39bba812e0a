/**
 * The fleet bench's probe client, in a process of its own (scripts/bench/fleet.ts): a customer's
 * call comes from elsewhere, so the latency measured is the service's, not the bench process's
 * own event loop, which runs the instances and their syncs.
 *
 * Takes {apis, targets: [{connector, noteIds}], seconds} over IPC; answers {latencies} (ms per
 * call, all targets together): each target connector does one `notes get` every 400 ms (2.5
 * calls/s, half its 5/s budget, so its latency and not its throttle is measured), the targets'
 * calls spread evenly over the 400 ms, round-robin over the instances.
 */
import { execute, type Api } from './fleet-client.ts';

interface Run {
  apis: Api[];
  targets: { connector: string; noteIds: string[] }[];
  seconds: number;
}

const PERIOD_MS = 400;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

process.on('message', (m: Run) => {
  void (async () => {
    const out: number[] = [];
    const end = performance.now() + m.seconds * 1000;
    await Promise.all(
      m.targets.map(async (target, i) => {
        await sleep((i * PERIOD_MS) / m.targets.length);
        for (let k = 0; performance.now() < end; k++) {
          const t = performance.now();
          out.push(await execute(m.apis[(k + i) % m.apis.length]!, target.connector, 'get', { note_id: target.noteIds[k % target.noteIds.length]! }));
          await sleep(Math.max(0, PERIOD_MS - (performance.now() - t)));
        }
      }),
    );
    process.send!({ latencies: out });
  })().catch((e: unknown) => {
    process.send!({ error: e instanceof Error ? e.message : String(e) });
  });
});
