/** How the sandbox starts this connector's simulator and the credentials it accepts (src/simulator/sandbox-hooks.ts). */
import { prop, type SandboxHook } from '../../../src/simulator/sandbox-hooks.ts';
import { startMondaySimulator } from './index.ts';

export const sandbox: SandboxHook = {
  start: (options) => startMondaySimulator(options),
  credentials: (sim) => ({ api_key: prop(sim, 'apiKey') }),
};
