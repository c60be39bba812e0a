/**
 * The fleet bench's upstreams, in their own process (so the bench's heap and CPU are the
 * service's): `--limited N` Granola simulators, each with its own API key and Granola's real
 * limit (bursts of 25, 5 requests/s per key), `--size` notes each; and one Granola simulator
 * without a limit (`--idle-size` notes) that the idle connectors of the fleet reach.
 * `--key-prefix` names the limited keys. Prints {limited: [{url, apiKey}], idle: {url, apiKey}} on stdout, then serves until killed.
 */
import { parseArgs } from 'node:util';
import { startGranolaSimulator } from '../../connectors/granola/simulator/index.ts';

const { values } = parseArgs({
  options: {
    limited: { type: 'string', default: '100' },
    size: { type: 'string', default: '200' },
    'idle-size': { type: 'string', default: '5' },
    'key-prefix': { type: 'string', default: 'grn_fleet_limited_' },
  },
});
const limited: { url: string; apiKey: string }[] = [];
for (let i = 0; i < Number(values.limited); i++) {
  const sim = await startGranolaSimulator({ seed: 1000 + i, size: Number(values.size), apiKey: `${values['key-prefix']}${i}` });
  limited.push({ url: sim.url, apiKey: sim.apiKey });
}
const idle = await startGranolaSimulator({ seed: 7, size: Number(values['idle-size']), rateLimit: false, apiKey: 'grn_fleet_idle' });
process.stdout.write(JSON.stringify({ limited, idle: { url: idle.url, apiKey: idle.apiKey } }) + '\n');
