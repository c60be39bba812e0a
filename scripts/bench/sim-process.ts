/**
 * Runs upstream simulators in their own process for benchmarks, so the benchmark process's CPU
 * time is the client's alone. Prints {connectors: {type: {base_url, credentials}}} on stdout,
 * then serves until killed. Granola's rate limit is off (the benchmark measures the engine,
 * not Granola's 5 requests/s). Env: SIM_SIZE (records per simulator).
 */
import { existsSync } from 'node:fs';
import { startGranolaSimulator } from '../../connectors/granola/simulator/index.ts';

const size = process.env['SIM_SIZE'] !== undefined ? Number(process.env['SIM_SIZE']) : undefined;
const connectors: Record<string, { base_url: string; credentials: Record<string, string> }> = {};
const granola = await startGranolaSimulator({ ...(size ? { size } : {}), rateLimit: false });
connectors['granola'] = { base_url: granola.url, credentials: { api_key: granola.apiKey } };
const intercomModule = new URL('../../connectors/intercom/simulator/index.ts', import.meta.url);
if (existsSync(intercomModule)) {
  const { startIntercomSimulator } = (await import(intercomModule.href)) as {
    startIntercomSimulator: (o: { size?: number }) => Promise<{ url: string; accessToken: string }>;
  };
  const ic = await startIntercomSimulator(size ? { size } : {});
  connectors['intercom'] = { base_url: ic.url, credentials: { access_token: ic.accessToken } };
}
process.stdout.write(JSON.stringify({ connectors }) + '\n');
